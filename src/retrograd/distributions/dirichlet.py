"""``Dirichlet(concentration)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from ._gamma_sampler import standard_gamma
from .distribution import Distribution
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex with concentration vector ``concentration``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Dirichlet
    >>> Dirichlet(torch.tensor([1.0, 3.0])).mean
    tensor([0.2500, 0.7500])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: Any = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = rg.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        # normalised independent gammas; gradients flow through the implicit gamma gradients
        g = standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return (rg.xlogy(self.concentration - 1.0, value).sum(-1)
                + rg.lgamma(self.concentration.sum(-1)) - rg.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Any:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Any:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(-1, keepdim=True)
        # where every concentration is below 1 the mode is the vertex of the largest one
        vertex = rg.nn.functional.one_hot(mode.argmax(-1), concentrationm1.shape[-1]).to(mode.dtype)
        return rg.where(mask, vertex, mode)

    @property
    def variance(self) -> Any:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Any:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (rg.lgamma(self.concentration).sum(-1) - rg.lgamma(a0) - (k - a0) * rg.digamma(a0)
                - ((self.concentration - 1.0) * rg.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Any:
        return x.lgamma().sum(-1) - rg.lgamma(x.sum(-1))
