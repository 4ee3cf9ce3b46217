"""``Normal(loc, scale)``."""
from __future__ import annotations

import math
from typing import Any

import retrograd as rg

from .distribution import LocationScale
from .exp_family import ExponentialFamily
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(LocationScale, ExponentialFamily):
    """Normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Normal
    >>> Normal(0.0, 1.0).log_prob(torch.tensor(0.0))
    tensor(-0.9189)
    """

    _mean_carrier_measure = 0

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with rg.no_grad():
            return rg.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + rg.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * rg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + 0.5 * math.log(2 * math.pi) + rg.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return -0.25 * x.pow(2) / y + 0.5 * rg.log(-math.pi / y)
