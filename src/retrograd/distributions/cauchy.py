"""``Cauchy(loc, scale)``."""
from __future__ import annotations

import math
from typing import Any

import retrograd as rg

from .distribution import LocationScale

__all__ = ["Cauchy"]


class Cauchy(LocationScale):
    """Cauchy (Lorentz) distribution with median ``loc`` and half-width ``scale``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Cauchy
    >>> Cauchy(0.0, 1.0).cdf(torch.tensor(1.0))
    tensor(0.7500)
    """

    @property
    def mean(self) -> Any:
        return rg.full(tuple(self._extended_shape()), float("nan"), dtype=self.loc.dtype)

    @property
    def variance(self) -> Any:
        return rg.full(tuple(self._extended_shape()), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with rg.no_grad():
            eps = rg.empty(tuple(shape), dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return rg.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Any:
        return rg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Any:
        return math.log(4 * math.pi) + self.scale.log()
