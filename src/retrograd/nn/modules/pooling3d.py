"""Pooling layers added to the 1-D and 2-D ones of ``pooling.py``: the 3-D max, average and
adaptive pools, the power-average (LP) pools and max_unpool."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd, _set_window, _WindowPoolNd
from .utils import _pair, _single, _triple

__all__ = [
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
]


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.MaxPool3d(2)(rg.arange(8.0).reshape(1, 2, 2, 2)).tolist()
    [[[[7.0]]]]
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.AvgPool3d(2)(rg.arange(8.0).reshape(1, 2, 2, 2)).tolist()
    [[[[3.5]]]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (``None`` keeps a dim).

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveMaxPool3d((1, None, 1))(rg.zeros(1, 2, 5, 3, 2)).shape
    torch.Size([1, 2, 1, 3, 1])
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to ``output_size``.

    >>> import retrograd as rg
    >>> rg.nn.AdaptiveAvgPool3d(1)(rg.ones(2, 3, 4, 4, 4)).shape
    torch.Size([2, 3, 1, 1, 1])
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool3d(input, self.output_size)


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling: ``(sum over the window of x ** p) ** (1/p)``.

    >>> import retrograd as rg
    >>> rg.nn.LPPool1d(2, 2)(rg.tensor([[3.0, 4.0]])).tolist()
    [[5.0]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling.

    >>> import retrograd as rg
    >>> rg.nn.LPPool2d(1, (1, 2))(rg.tensor([[[3.0, 4.0]]])).tolist()
    [[[7.0]]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling.

    >>> import retrograd as rg
    >>> rg.nn.LPPool3d(1, 2)(rg.ones(1, 2, 2, 2)).tolist()
    [[[[8.0]]]]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(_WindowPoolNd):
    """max_unpool's layers: ``repr`` is the window alone."""


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``.

    >>> import retrograd as rg
    >>> rg.nn.MaxUnpool1d(2)(rg.tensor([[3.0]]), rg.tensor([[1]])).tolist()
    [[0.0, 3.0]]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding, _single)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``.

    >>> import retrograd as rg
    >>> rg.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding, _pair)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d``: ``forward(input, indices, output_size=None)``.

    >>> import retrograd as rg
    >>> rg.nn.MaxUnpool3d((2, 2, 1))
    MaxUnpool3d(kernel_size=(2, 2, 1), stride=(2, 2, 1), padding=(0, 0, 0))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding, _triple)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
