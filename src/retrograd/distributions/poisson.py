"""``Poisson(rate)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson distribution with rate ``rate``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Poisson
    >>> Poisson(torch.tensor(2.0)).log_prob(torch.tensor(0.0))
    tensor(-2.)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    rate: Any

    def __init__(self, rate: Any, validate_args: Any = None) -> None:
        self._set_parameters(validate_args, rate=rate)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expanded(Poisson, batch_shape, _instance, expand=("rate",))

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return self.rate.floor()

    @property
    def variance(self) -> Any:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with rg.no_grad():
            return rg.poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (rg.log(self.rate),)

    def _log_normalizer(self, x: Any) -> Any:
        return rg.exp(x)
