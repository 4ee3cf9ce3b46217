"""``HalfCauchy(scale)``."""
from __future__ import annotations

import math
from typing import Any

import retrograd as rg

from ._half import HalfOfSymmetric
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(HalfOfSymmetric):
    """``|X|`` for ``X ~ Cauchy(0, scale)``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import HalfCauchy
    >>> HalfCauchy(torch.tensor(1.0)).cdf(torch.tensor(1.0))
    tensor(0.5000)
    """

    symmetric = Cauchy

    @property
    def mean(self) -> Any:
        return rg.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance
