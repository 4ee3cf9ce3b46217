"""Pooling layers: max, average and adaptive pooling in one and two dimensions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _single

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d",
    "MaxPool1d", "MaxPool2d",
]


def _set_window(module: Module, kernel_size: Any, stride: Any, padding: Any,
                expand: Callable[[Any], Any] = lambda x: x) -> None:
    """A pool's ``kernel_size``, ``stride`` (``kernel_size`` when None, as in PyTorch) and ``padding``,
    each passed through ``expand``."""
    module.kernel_size = expand(kernel_size)
    module.stride = expand(stride if stride is not None else kernel_size)
    module.padding = expand(padding)


class _WindowPoolNd(Module):
    """A pool whose ``repr`` starts with its window, ``kernel_size``, ``stride`` and ``padding`` (set by
    ``_set_window``): the base of the max and average pools and of max_unpool."""

    kernel_size: Any
    stride: Any
    padding: Any

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxPoolNd(_WindowPoolNd):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding)
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L) input (``return_indices`` also gives the argmax).

    >>> import retrograd as rg
    >>> rg.nn.MaxPool1d(2)(rg.tensor([[1.0, 3.0, 2.0, 0.0]])).tolist()
    [[3.0, 2.0]]
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(_WindowPoolNd):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        # (AvgPool2d's and AvgPool3d's arguments; AvgPool1d has its own: no divisor_override)
        super().__init__()
        _set_window(self, kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over (N, C, L) or (C, L) input.

    >>> import retrograd as rg
    >>> rg.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        Module.__init__(self)  # (not _AvgPoolNd's: a 1-D pool has no divisor_override)
        _set_window(self, kernel_size, stride, padding, _single)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.AvgPool2d(2)(rg.arange(16.0).reshape(1, 4, 4)).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePoolNd(Module):
    """What the adaptive max and average pools share: ``output_size``, the only thing their repr shows."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveMaxPool1d(2)(rg.tensor([[1.0, 3.0, 2.0, 0.0]])).tolist()
    [[3.0, 2.0]]
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) input to ``output_size`` (``None`` keeps a dim).

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveMaxPool2d((1, None))(rg.zeros(1, 2, 5, 3)).shape
    torch.Size([1, 2, 1, 3])
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    pass


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveAvgPool1d(1)(rg.tensor([[1.0, 3.0]])).tolist()
    [[2.0]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) or (C, H, W) input to ``output_size`` (``None`` keeps a dim).

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveAvgPool2d(1)(rg.ones(2, 3, 4, 4)).shape
    torch.Size([2, 3, 1, 1])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)
