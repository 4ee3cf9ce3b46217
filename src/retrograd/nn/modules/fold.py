"""``Unfold`` (im2col: sliding blocks to columns) and ``Fold`` (col2im: columns summed back)."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum (N, C * prod(kernel_size), L) columns into an (N, C, *output_size) tensor.

    >>> import retrograd as rg
    >>> rg.nn.Fold((3, 3), 2)(rg.ones(1, 4, 4)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding blocks of (N, C, H, W) input as (N, C * prod(kernel_size), L) columns.

    >>> import retrograd as rg
    >>> rg.nn.Unfold(2)(rg.ones(1, 3, 4, 4)).shape
    torch.Size([1, 12, 9])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
