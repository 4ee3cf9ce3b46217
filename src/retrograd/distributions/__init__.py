"""Probability distributions with PyTorch's ``torch.distributions`` API.

>>> import retrograd as torch
>>> from retrograd.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0))
tensor(0.)
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403  (the transforms, listed once in transforms.__all__)
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
    "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "Laplace", "LogNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "constraints",
    "kl_divergence", "register_kl", "transforms", *transforms.__all__,
]
