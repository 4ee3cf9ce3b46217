"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``.

Weights are ``(out_channels, in_channels // groups, *kernel_size)`` (transposed:
``(in_channels, out_channels // groups, *kernel_size)``), initialised as PyTorch does:
``kaiming_uniform_(a=sqrt(5))`` and a bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...autograd.grad_mode import no_grad
from ...tensor import Size, Tensor
from .. import functional as F
from .module import Module
from .utils import _pair, _reset_kaiming_uniform, _reverse_repeat_tuple, _single, _triple, _weight_and_bias

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}
_NTUPLE = {1: _single, 2: _pair, 3: _triple}  # a ConvNd argument given as an int -> a tuple of _nd ints


class _ConvNd(Module):
    """The shared constructor, initialisation and ``repr`` of the convolution layers."""

    _conv: Callable[..., Tensor]
    _nd: int  # the number of spatial dims; the only thing (with _conv) a ConvNd class sets
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: str | tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    padding_mode: str
    _reversed_padding_repeated_twice: list[int] | tuple[int, ...]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...], stride: tuple[int, ...],
                 padding: str | tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                 output_padding: tuple[int, ...], groups: int, bias: bool, padding_mode: str, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument (last dim first) for the non-'zeros' padding modes
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1), strict=False):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        _weight_and_bias(self, shape, out_channels if bias else None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (a=sqrt(5)); bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        with no_grad():
            _reset_kaiming_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        n = _NTUPLE[self._nd]
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride),
                         padding if isinstance(padding, str) else n(padding), n(dilation), False, n(0), groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:  # noqa: A002
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L) input.

    >>> import retrograd as rg
    >>> rg.nn.Conv1d(2, 4, 3, padding=1)(rg.zeros(5, 2, 7)).shape
    torch.Size([5, 4, 7])
    """

    _conv = staticmethod(F.conv1d)
    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input.

    >>> import retrograd as rg
    >>> m = rg.nn.Conv2d(3, 8, (3, 5), stride=(2, 1), padding=(1, 2))
    >>> m, m.weight.shape
    (Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 1), padding=(1, 2)), torch.Size([8, 3, 3, 5]))
    """

    _conv = staticmethod(F.conv2d)
    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.Conv3d(1, 2, 2)(rg.zeros(1, 1, 3, 3, 3)).shape
    torch.Size([1, 2, 2, 2, 2])
    """

    _conv = staticmethod(F.conv3d)
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = _NTUPLE[self._nd]
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride), n(padding), n(dilation), True,
                         n(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Any, stride: Any, padding: Any,  # noqa: A002
                        kernel_size: Any, num_spatial_dims: int, dilation: Any = None) -> list[int]:
        """The ``output_padding`` that makes the output ``output_size`` (spatial, or with the
        batch and channel dims)."""
        if output_size is None:
            return list(_single(self.output_padding))
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got {len(output_size)})"
            )
        min_sizes: list[int] = []
        max_sizes: list[int] = []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(dim_size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes, strict=True):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {Size(input.size()[2:])})"
                )
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:  # noqa: A002
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        nd = type(self)._nd
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, nd,
                                              self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (the input-gradient of ``Conv1d``); its weight is
    (in_channels, out_channels // groups, kernel_size).

    >>> import retrograd as rg
    >>> m = rg.nn.ConvTranspose1d(2, 3, 3, stride=2)
    >>> m.weight.shape, m(rg.zeros(1, 2, 4)).shape
    (torch.Size([2, 3, 3]), torch.Size([1, 3, 9]))
    """

    _conv = staticmethod(F.conv_transpose1d)
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution; ``forward(input, output_size=...)`` picks the output padding.

    >>> import retrograd as rg
    >>> m = rg.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    >>> m(rg.zeros(1, 2, 4, 4), output_size=[8, 8]).shape
    torch.Size([1, 3, 8, 8])
    """

    _conv = staticmethod(F.conv_transpose2d)
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution.

    >>> import retrograd as rg
    >>> rg.nn.ConvTranspose3d(1, 1, 2)(rg.zeros(1, 1, 2, 2, 2)).shape
    torch.Size([1, 1, 3, 3, 3])
    """

    _conv = staticmethod(F.conv_transpose3d)
    _nd = 3
