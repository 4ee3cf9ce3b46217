"""``Laplace(loc, scale)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from .distribution import LocationScale
from .utils import _finfo

__all__ = ["Laplace"]


class Laplace(LocationScale):
    """Laplace distribution with location ``loc`` and scale ``scale``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Laplace
    >>> Laplace(0.0, 1.0).cdf(torch.tensor(0.0))
    tensor(0.5000)
    """

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Any:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = float(_finfo(self.loc).eps)
        with rg.no_grad():
            u = rg.empty(tuple(shape), dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * rg.log1p(-u.abs())

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -rg.log(2 * self.scale) - rg.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * rg.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * (term).sign() * rg.log1p(-2 * term.abs())

    def entropy(self) -> Any:
        return 1 + rg.log(2 * self.scale)
