"""Probability distributions with PyTorch's ``torch.distributions`` API.

>>> import retrograd as torch
>>> from retrograd.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0))
tensor(0.)
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential",
    "Gamma", "Independent", "Laplace", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl",
]
