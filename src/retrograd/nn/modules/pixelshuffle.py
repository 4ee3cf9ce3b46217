"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle", "PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)``.

    >>> import retrograd as rg
    >>> rg.nn.PixelShuffle(2)(rg.zeros(1, 8, 3, 3)).shape
    torch.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse of ``PixelShuffle``.

    >>> import retrograd as rg
    >>> rg.nn.PixelUnshuffle(2)(rg.zeros(1, 2, 6, 6)).shape
    torch.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Split the channels into ``groups`` and interleave them.

    >>> import retrograd as rg
    >>> rg.nn.ChannelShuffle(2)(rg.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
