"""``Exponential(rate)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential distribution with rate ``rate``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Exponential
    >>> Exponential(torch.tensor(2.0)).mean
    tensor(0.5000)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    rate: Any

    def __init__(self, rate: Any, validate_args: Any = None) -> None:
        self._set_parameters(validate_args, rate=rate)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return self._expanded(Exponential, batch_shape, _instance, expand=("rate",))

    @property
    def mean(self) -> Any:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Any:
        return rg.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with rg.no_grad():
            e = rg.empty(tuple(shape), dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - rg.exp(-self.rate * value)

    def icdf(self, value: Any) -> Any:
        return -rg.log1p(-value) / self.rate

    def entropy(self) -> Any:
        return 1.0 - rg.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (-self.rate,)

    def _log_normalizer(self, x: Any) -> Any:
        return -rg.log(-x)
