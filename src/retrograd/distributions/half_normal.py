"""``HalfNormal(scale)``."""
from __future__ import annotations

import math
from typing import Any

from ._half import HalfOfSymmetric
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(HalfOfSymmetric):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import HalfNormal
    >>> HalfNormal(torch.tensor(1.0)).cdf(torch.tensor(0.0))
    tensor(0.)
    """

    symmetric = Normal

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / math.pi)
