"""Dropout layers: ``Dropout``, channel-wise ``Dropout1d/2d/3d``, ``AlphaDropout`` and
``FeatureAlphaDropout``. Active only in training mode; masks come from retrograd's generator."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """During training, zeroes elements with probability ``p`` and scales the rest by 1/(1-p);
    the identity in eval mode.

    >>> import retrograd as rg
    >>> d = rg.nn.Dropout(0.5).eval()
    >>> d(rg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) input.

    >>> import retrograd as rg
    >>> rg.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) input.

    >>> import retrograd as rg
    >>> out = rg.nn.Dropout2d(0.5)(rg.ones(1, 8, 2, 2))
    >>> sorted(set(out.sum((2, 3)).flatten().tolist())) in ([0.0, 8.0], [8.0], [0.0])
    True
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.Dropout3d().eval()(rg.ones(1, 1, 1, 1, 1)).item()
    1.0
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's zero mean and unit variance (dropped values go to SELU's
    negative saturation, then an affine correction).

    >>> import retrograd as rg
    >>> rg.nn.AlphaDropout(0.2).eval()(rg.ones(2)).tolist()
    [1.0, 1.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels.

    >>> import retrograd as rg
    >>> rg.nn.FeatureAlphaDropout(0.2).eval()(rg.ones(1, 2, 2)).shape
    torch.Size([1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)
