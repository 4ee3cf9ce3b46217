"""``Gamma(concentration, rate)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from ._gamma_sampler import standard_gamma
from .exp_family import ExponentialFamily
from .utils import _finfo

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Gamma
    >>> Gamma(torch.tensor(2.0), torch.tensor(4.0)).mean
    tensor(0.5000)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    concentration: Any
    rate: Any

    def __init__(self, concentration: Any, rate: Any, validate_args: Any = None) -> None:
        self._set_parameters(validate_args, concentration=concentration, rate=rate)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expanded(Gamma, batch_shape, _instance, expand=("concentration", "rate"))

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = float(_finfo(value).tiny)
        return value.clamp(min=tiny) if bool((value.detach() < tiny).any()) else value

    def log_prob(self, value: Any) -> Any:
        value = rg.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (rg.xlogy(self.concentration, self.rate) + rg.xlogy(self.concentration - 1, value)
                - self.rate * value - rg.lgamma(self.concentration))

    def entropy(self) -> Any:
        return (self.concentration - rg.log(self.rate) + rg.lgamma(self.concentration)
                + (1.0 - self.concentration) * rg.digamma(self.concentration))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return rg.igamma(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return rg.lgamma(x + 1) + (x + 1) * rg.log(-y.reciprocal())
