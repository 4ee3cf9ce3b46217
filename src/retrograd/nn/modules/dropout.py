"""``Dropout``."""

from __future__ import annotations

import numpy as np

from ... import factories
from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (training only);
    used until ``functional.dropout`` exists. The mask comes from retrograd's default generator."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    keep = factories.default_generator.rng.random(input.shape) >= p
    scale = np.float64(0.0) if p == 1.0 else np.float64(1.0 / (1.0 - p))
    mask = Tensor._make((keep * scale).astype(input._data.dtype))
    return input.mul_(mask) if inplace else input * mask


class Dropout(Module):
    """During training, zeroes elements with probability ``p`` and scales the rest by 1/(1-p);
    the identity in eval mode.

    >>> import retrograd as rg
    >>> d = rg.nn.Dropout(0.5).eval()
    >>> d(rg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        dropout = getattr(F, "dropout", _dropout)
        return dropout(input, self.p, self.training, self.inplace)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
