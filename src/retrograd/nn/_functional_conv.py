"""Convolutions, pooling, unfold/fold and interpolation for ``retrograd.nn.functional``.

Signatures, defaults, output shapes, ``grad_fn`` names and error messages follow PyTorch; the ops
themselves (vectorised im2col + matmul, and their backward rules) are in ``retrograd.ops.conv``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..ops import conv as _C
from ..ops.op import apply
from ..tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "fold", "interpolate", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "unfold", "upsample", "upsample_bilinear",
    "upsample_nearest",
]


def _dims_str(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _expand(value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    return values * n if len(values) == 1 else values


def _type_name(a: np.ndarray) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}.get(a.dtype.name, a.dtype.name)


def _not_implemented(kernel: str, x: Tensor) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(x._data.dtype)}\'')


# -- convolution ------------------------------------------------------------------------------


def _check_conv(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...], padding: tuple[int, ...],
                dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...], groups: int) -> None:
    """PyTorch's convolution argument checks, in its order and with its messages (x is batched)."""
    xd, wd = x._data, weight._data
    k = wd.ndim - 2
    for name, values in (("stride", stride), ("padding", padding), ("dilation", dilation)) + (
            (("output_padding", output_padding),) if transposed else ()):
        if len(values) != k:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {k} values to match the convolution "
                f"dimensions, but got {name}={_dims_str(values)}"
            )
    if bias is not None and bias._data.dtype != xd.dtype:
        raise RuntimeError(f"Input type ({_type_name(xd)}) and bias type ({_type_name(bias._data)}) should be the same")
    if xd.dtype != wd.dtype:
        if xd.dtype == np.float64 or xd.dtype.kind not in "fV":
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(xd.dtype)} but found {scalar_type_name(wd.dtype)}")
        raise RuntimeError(
            f"Input type (torch.{scalar_type_name(xd.dtype)}Tensor) and weight type "
            f"(torch.{scalar_type_name(wd.dtype)}Tensor) should be the same or input should be a MKLDNN tensor and "
            "weight is a dense tensor"
        )
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if xd.ndim != wd.ndim:
        raise RuntimeError(
            f"Expected {wd.ndim}-dimensional input for {wd.ndim}-dimensional weight {_dims_str(wd.shape)}, but got "
            f"{xd.ndim}-dimensional input of size {_dims_str(xd.shape)} instead"
        )
    if wd.shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size "
            f"{_dims_str(wd.shape)} instead"
        )
    if wd.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size [{_dims_str(wd.shape)}] instead"
        )
    if not transposed:
        if xd.shape[1] != wd.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_dims_str(wd.shape)}, expected input{_dims_str(xd.shape)} to "
                f"have {wd.shape[1] * groups} channels, but got {xd.shape[1]} channels instead"
            )
        if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != wd.shape[0]):
            raise RuntimeError(
                f"Given weight of size {_dims_str(wd.shape)}, expected bias to be 1-dimensional with {wd.shape[0]} "
                f"elements, but got bias of size {_dims_str(bias._data.shape)} instead"
            )
        padded = [n + 2 * p for n, p in zip(xd.shape[2:], padding, strict=False)]
        effective = [d * (s - 1) + 1 for s, d in zip(wd.shape[2:], dilation, strict=False)]
        if any(e > n for e, n in zip(effective, padded, strict=False)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(str(n) for n in padded)}). Kernel size: "
                f"({' x '.join(str(e) for e in effective)}). Kernel size can't be greater than actual input size"
            )
    else:
        if xd.shape[1] != wd.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_dims_str(wd.shape)}, expected input{_dims_str(xd.shape)} to "
                f"have {wd.shape[0]} channels, but got {xd.shape[1]} channels instead"
            )
        if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != wd.shape[1] * groups):
            raise RuntimeError(
                f"Given transposed=1, weight of size {_dims_str(wd.shape)}, expected bias to be 1-dimensional with "
                f"{wd.shape[1] * groups} elements, but got bias of size {_dims_str(bias._data.shape)} instead"
            )
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=False)):
            names = ("depth", "height", "width")[-k:] if k <= 3 else tuple(str(i) for i in range(k))
            parts = ([f"output_padding_{n}: {v}" for n, v in zip(names, output_padding, strict=False)]
                     + [f"stride_{n}: {v}" for n, v in zip(names, stride, strict=False)]
                     + [f"dilation_{n}: {v}" for n, v in zip(names, dilation, strict=False)])
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               + " ".join(parts))
        size = [(n - 1) * s - 2 * p + d * (kk - 1) + op + 1 for n, s, p, d, kk, op in
                zip(xd.shape[2:], stride, padding, dilation, wd.shape[2:], output_padding, strict=False)]
        if any(n < 1 for n in size):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(str(n) for n in xd.shape[2:])}). "
                               f"Calculated output size per channel: ({' x '.join(str(n) for n in size)}). "
                               "Output size is too small")
    if wd.shape[0] == 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight of size "
            f"{_dims_str(wd.shape)} instead"
        )


def _conv_nd(nd: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
             dilation: Any, groups: int, transposed: bool = False, output_padding: Any = 0) -> Tensor:
    name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: "
            f"{_dims_str(input.shape)}"
        )
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    stride_t, dilation_t = _expand(stride, nd), _expand(dilation, nd)
    out_pad = _expand(output_padding, nd)
    pad_extra: list[tuple[int, int]] | None = None
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            padding_t = (0,) * nd
        elif padding == "same":
            k = weight.dim() - 2
            if len(stride_t) == k and any(s != 1 for s in stride_t):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            dil = dilation_t if len(dilation_t) == k else (dilation_t * k)[:k]
            totals = [d * (s - 1) for d, s in zip(dil, weight.shape[2:], strict=False)]
            padding_t = tuple(t // 2 for t in totals)
            if any(t % 2 for t in totals):
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                    "copy of the input be created", UserWarning, stacklevel=3)
                pad_extra = [(0, t - 2 * (t // 2)) for t in totals]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding_t = _expand(padding, nd)
    _check_conv(x, weight, bias, stride_t, padding_t, dilation_t, transposed, out_pad, groups)
    if pad_extra is not None:
        x = apply(_C.constant_pad, (x, tuple(pad_extra)))
    out = apply(_C.convolution, (x, weight, bias, stride_t, padding_t, dilation_t, transposed,
                                 out_pad if transposed else (0,) * nd, groups))
    return out if batched else out.squeeze(0)  # type: ignore[no-any-return]


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) input; ``padding`` may be
    ``'same'`` or ``'valid'``.

    >>> import retrograd as rg
    >>> rg.nn.functional.conv1d(rg.ones(1, 1, 4), rg.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.conv2d(rg.ones(1, 1, 3, 3), rg.ones(1, 1, 2, 2), padding=1).shape
    torch.Size([1, 1, 4, 4])
    """
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.conv3d(rg.ones(1, 1, 2, 2, 2), rg.ones(1, 1, 2, 2, 2)).item()
    8.0
    """
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 1-D convolution (the input-gradient of conv1d); weight is (C_in, C_out / groups, k).

    >>> import retrograd as rg
    >>> rg.nn.functional.conv_transpose1d(rg.ones(1, 1, 2), rg.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 2-D convolution ("deconvolution"); weight is (C_in, C_out / groups, kH, kW).

    >>> import retrograd as rg
    >>> rg.nn.functional.conv_transpose2d(rg.ones(1, 1, 2, 2), rg.ones(1, 1, 3, 3), stride=2).shape
    torch.Size([1, 1, 5, 5])
    """
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 3-D convolution; weight is (C_in, C_out / groups, kD, kH, kW).

    >>> import retrograd as rg
    >>> rg.nn.functional.conv_transpose3d(rg.ones(1, 1, 1, 1, 1), rg.ones(1, 2, 2, 2, 2)).shape
    torch.Size([1, 2, 2, 2, 2])
    """
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


# -- pooling ----------------------------------------------------------------------------------


def _pool_ints(value: Any, fn: str, name: str, n: int, omitted: bool = False) -> tuple[int, ...]:
    """A pool's ``kernel_size``/``stride``/``padding``/``dilation`` as ``n`` ints, with ATen's wording
    for a tuple of the wrong length (the 2-D and 3-D pools word it alike, ``avg_pool3d`` apart)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        ints = f"a tuple of {'two' if n == 2 else 'three'} ints"
        if fn == "avg_pool3d":
            raise RuntimeError(f"{fn}: {name} must be{' omitted,' if omitted else ''} a single int, or {ints}")
        if name == "dilation":
            raise RuntimeError(f"{fn}: dilation must be either a single int, or {ints}")
        raise RuntimeError(f"{fn}: {name} must either be{' omitted,' if omitted else ''} a single int, or {ints}")
    return values


def _pool_window(fn: str, n: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(kernel, stride, padding, dilation)`` of an ``n``-D pool; an omitted stride is the kernel."""
    kernel = _pool_ints(kernel_size, fn, "kernel_size", n)
    stride_t = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _pool_ints(stride, fn, "stride", n, omitted=True)
    return kernel, stride_t, _pool_ints(padding, fn, "padding", n), _pool_ints(dilation, fn, "dilation", n)


def _pool_out(n: int, k: int, p: int, s: int, d: int, ceil_mode: bool) -> int:
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > ((k - 1) * d + 1) // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation={d}")
    span = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool2d_setup(x: Tensor, fn: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                  ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    kernel, stride_t, padding_t, dilation_t = _pool_window(fn, 2, kernel_size, stride, padding, dilation)
    shape = tuple(x.shape)
    if fn == "max_pool2d" and (len(shape) not in (3, 4)):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if fn == "avg_pool2d" and len(shape) < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                         "but got -3)")
    out = (_pool_out(shape[-2], kernel[0], padding_t[0], stride_t[0], dilation_t[0], ceil_mode),
           _pool_out(shape[-1], kernel[1], padding_t[1], stride_t[1], dilation_t[1], ceil_mode))
    if kernel[0] <= 0 or kernel[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if stride_t[0] <= 0 or stride_t[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride_t[0]} dW: {stride_t[1]}")
    if dilation_t[0] <= 0 or dilation_t[1] <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {dilation_t[0]} dilationW: {dilation_t[1]}")
    if len(shape) not in (3, 4) or any(s == 0 for s in shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{_dims_str(shape)}")
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(
            f"Given input size: ({shape[-3]}x{shape[-2]}x{shape[-1]}). Calculated output size: "
            f"({shape[-3]}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, stride_t, padding_t, dilation_t, out


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """2-D max pooling that also returns the flat (H * W) index of each maximum."""
    kernel, stride_t, padding_t, dilation_t, out = _pool2d_setup(
        input, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode)
    if input._data.dtype.kind == "b":
        raise _not_implemented("max_pool2d", input)
    values, indices = apply(_C.max_pool2d, (input, kernel, stride_t, padding_t, dilation_t, out))
    return (values, indices) if return_indices else values


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-D max pooling over (N, C, H, W) or (C, H, W) input (``-inf`` padding).

    >>> import retrograd as rg
    >>> rg.nn.functional.max_pool2d(rg.arange(16.0).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _check_1d(x: Tensor, fn: str) -> None:
    if x.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.dim()}-dimensional tensor for argument #1 'self' "
                           f"(while checking arguments for {fn})")


def _single(value: Any, fn: str, name: str) -> int:
    if isinstance(value, (int, np.integer)):
        return int(value)
    values = tuple(value)
    if len(values) != 1:
        if fn == "max_pool1d":
            raise RuntimeError(f"max_pool1d() {name} must be an int, list of ints or tuple of ints of size 1 but got "
                               f"size {len(values)}")
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(values)})")
    return int(values[0])


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """1-D max pooling with indices; computed as a 2-D pool of height 1 (PyTorch's graph)."""
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{_dims_str(input.shape)}")
    k = _single(kernel_size, "max_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _single(stride, "max_pool1d", "stride")
    p = _single(padding, "max_pool1d", "padding")
    d = _single(dilation, "max_pool1d", "dilation")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(input.shape[-1], k, p, s, d, ceil_mode)
    if out < 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    values, indices = max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, True)
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2)) if return_indices else values


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over (N, C, L) or (C, L) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.max_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[3.0, 2.0]]
    """
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """2-D average pooling over (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.avg_pool2d(rg.arange(16.0).reshape(1, 4, 4), 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    return _avg_pool(input, "avg_pool2d", _pool2d_setup, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


# The CPU kernel a dtype error names where it is not the function's own name
_ATEN_KERNEL = {"avg_pool3d": "avg_pool3d_out_frame", "adaptive_max_pool3d": "adaptive_max_pool3d_cpu"}


def _avg_pool(input: Tensor, fn: str, setup: Callable[..., tuple[tuple[int, ...], ...]],  # noqa: A002
              kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
              divisor_override: int | None) -> Tensor:
    """``avg_pool2d``/``avg_pool3d`` (``fn``, its window read by ``setup``): ATen's checks in its
    order, then the op of the same name."""
    kernel, stride_t, padding_t, _, out = setup(input, fn, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input._data.dtype.kind == "b":
        raise _not_implemented(_ATEN_KERNEL.get(fn, fn), input)
    cfg = (kernel, stride_t, padding_t, ceil_mode, count_include_pad, divisor_override, out)
    return apply(getattr(_C, fn), (input, cfg))  # type: ignore[no-any-return]


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over (N, C, L) or (C, L) input (a 2-D pool of height 1).

    >>> import retrograd as rg
    >>> rg.nn.functional.avg_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[2.0, 1.0]]
    """
    _check_1d(input, "avg_pool1d")
    k = _single(kernel_size, "avg_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _single(stride, "avg_pool1d", "stride")
    p = _single(padding, "avg_pool1d", "padding")
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


def _adaptive_size(output_size: Any, shape: Sequence[int], fn: str, nd: int = 2) -> tuple[int, ...]:
    """The ``nd`` output sizes of an adaptive pool (an int for all, None keeping the input's)."""
    if isinstance(output_size, (int, np.integer)):
        sizes: list[Any] = [int(output_size)] * nd
    else:
        sizes = list(output_size)
        if len(sizes) != nd:
            if fn == "adaptive_max_pool3d":
                raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
            raise RuntimeError(f"{fn}: output_size must be {nd}")
    return tuple(int(shape[i - nd]) if v is None else int(v) for i, v in enumerate(sizes))


def _check_adaptive(x: Tensor, fn: str, nd: int = 2) -> None:
    """An adaptive pool's input: ``nd`` spatial dims after a channel dim (and an optional batch), none empty."""
    shape = tuple(x.shape)
    if len(shape) not in (nd + 1, nd + 2):
        sep = ": " if fn.startswith("adaptive_max") else " "
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}{_dims_str(shape)}")
    for i in range(len(shape) - nd, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {_dims_str(shape)} with dimension {i} being empty")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average pooling to a fixed ``output_size`` (windows ``[floor(i*H/o), ceil((i+1)*H/o))``).

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_avg_pool2d(rg.arange(16.0).reshape(1, 4, 4), (2, 1)).tolist()
    [[[3.5], [11.5]]]
    """
    out = _adaptive_size(output_size, input.shape, "adaptive_avg_pool2d")
    if out == (1, 1):
        return input.mean((-1, -2), keepdim=True)  # PyTorch's shortcut (MeanBackward1)
    if any(o < 0 for o in out):
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{out[0]}, {out[1]}}}")
    _check_adaptive(input, "adaptive_avg_pool2d")
    if input._data.dtype.kind not in "fV":
        raise _not_implemented("adaptive_avg_pool2d", input)
    return apply(_C.adaptive_avg_pool2d, (input, out))  # type: ignore[no-any-return]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """1-D adaptive average pooling over (N, C, L) or (C, L) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_avg_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[2.0, 1.0]]
    """
    _check_1d(input, "adaptive_avg_pool1d")
    size = _single(output_size, "adaptive_avg_pool1d", "output_size")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:  # noqa: A002
    """Adaptive 2-D max pooling with the flat (H * W) index of each maximum."""
    values, indices = _adaptive_max_pool(input, output_size, 2)
    return (values, indices) if return_indices else values


def _adaptive_max_pool(input: Tensor, output_size: Any, nd: int) -> Any:  # noqa: A002
    """``(values, indices)`` of ``adaptive_max_pool{nd}d``: ATen's checks in its order, then the op."""
    fn = f"adaptive_max_pool{nd}d"
    out = _adaptive_size(output_size, input.shape, fn, nd)
    _check_adaptive(input, fn, nd)
    negative = [o for o in out if o < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: "
                           f"{_dims_str(tuple(input.shape[:-nd]) + out)}")
    if input._data.dtype.kind not in "fV":
        raise _not_implemented(_ATEN_KERNEL.get(fn, fn), input)
    return apply(getattr(_C, fn), (input, out))


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Adaptive 2-D max pooling to a fixed ``output_size``.

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_max_pool2d(rg.arange(16.0).reshape(1, 4, 4), 1).tolist()
    [[[15.0]]]
    """
    return adaptive_max_pool2d_with_indices(input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:  # noqa: A002
    """Adaptive 1-D max pooling with indices (a 2-D pool of height 1)."""
    _check_1d(input, "adaptive_max_pool1d")
    size = _single(output_size, "adaptive_max_pool1d", "output_size")
    values, indices = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, size), True)
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2)) if return_indices else values


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Adaptive 1-D max pooling over (N, C, L) or (C, L) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_max_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[3.0, 2.0]]
    """
    return adaptive_max_pool1d_with_indices(input, output_size, return_indices)


# -- unfold / fold ----------------------------------------------------------------------------


def _im2col_params(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[tuple[int, ...], ...]:
    kernel, dil, pad, st = (_expand(v, 2) for v in (kernel_size, dilation, padding, stride))
    if kernel[0] <= 0 or kernel[1] <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} kernel_width: {kernel[1]}")
    if st[0] <= 0 or st[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {st[0]} stride_width: {st[1]}")
    if dil[0] <= 0 or dil[1] <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {dil[0]} dilation_width: {dil[1]}")
    if pad[0] < 0 or pad[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {pad[0]} pad_width: {pad[1]}")
    return kernel, dil, pad, st


def _blocks(size: Sequence[int], kernel: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
            stride: Sequence[int]) -> list[int]:
    # C division (towards zero), as PyTorch's message shows for sizes too small
    return [int((n + 2 * p - d * (k - 1) - 1) / s) + 1
            for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=False)]


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:  # noqa: A002
    """im2col: sliding blocks of (N, C, H, W) as columns (N, C * kH * kW, L).

    >>> import retrograd as rg
    >>> rg.nn.functional.unfold(rg.arange(9.0).reshape(1, 1, 3, 3), 2)[0].tolist()
    [[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]
    """
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(len(shape), 1)}, "
                         f"{max(len(shape), 1) - 1}], but got {len(shape)})")
    cfg = _im2col_params(kernel_size, dilation, padding, stride)
    if len(shape) not in (3, 4) or any(s == 0 for s in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_dims_str(shape)}")
    kernel, dil, pad, st = cfg
    blocks = _blocks(shape[-2:], kernel, dil, pad, st)
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size ({shape[-2]}, {shape[-1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
            f"dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), calculated shape of the array of sliding "
            f"blocks as ({blocks[0]}, {blocks[1]}), but its components must be at least one.")
    if input._data.dtype.kind not in "fV":
        raise _not_implemented("im2col_out_cpu", input)
    return apply(_C.im2col, (input, cfg))  # type: ignore[no-any-return]


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Tensor:
    """col2im: sums columns (N, C * kH * kW, L) back into (N, C, H, W); the adjoint of ``unfold``.

    >>> import retrograd as rg
    >>> rg.nn.functional.fold(rg.ones(1, 4, 4), (3, 3), 2)[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    shape = tuple(input.shape)
    size = _expand(output_size, 2)
    cfg = _im2col_params(kernel_size, dilation, padding, stride)
    kernel, dil, pad, st = cfg
    if len(shape) not in (2, 3) or any(s == 0 for s in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_dims_str(shape)}")
    k = kernel[0] * kernel[1]
    if shape[-2] % k:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={shape[-2]} and kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = _blocks(size, kernel, dil, pad, st)
    if blocks[0] < 1 or blocks[1] < 1 or blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
            f"dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), stride=({st[0]}, {st[1]}), expected size "
            f"of input's dimension 2 to match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={shape[-1]}.")
    if input._data.dtype.kind not in "fV":
        raise _not_implemented("col2im_out_cpu", input)
    image_shape = shape[:-2] + (shape[-2] // k,) + tuple(size)
    return apply(_C.col2im_op, (input, cfg, image_shape))  # type: ignore[no-any-return]


# -- interpolation ----------------------------------------------------------------------------

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _source_scale(n: int, o: int, align_corners: bool, scale: float | None) -> float:
    if align_corners:
        return (n - 1) / (o - 1) if o > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n / o


def _nearest_taps(n: int, o: int, scale: float | None, exact: bool) -> list[tuple[np.ndarray, Any]]:
    # PyTorch computes nearest source indices in single precision.
    factor = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n) / np.float32(o)
    dst = np.arange(o, dtype=np.float32)
    if exact:
        dst = dst + np.float32(0.5)
    index = np.minimum(np.floor(dst * factor).astype(np.int64), n - 1)
    return [(index, None)]


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = -0.75

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1  # type: ignore[no-any-return]

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # type: ignore[no-any-return]

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _linear_taps(n: int, o: int, align_corners: bool, scale: float | None, dtype: np.dtype,
                 cubic: bool) -> list[tuple[np.ndarray, Any]]:
    ratio = np.asarray(_source_scale(n, o, align_corners, scale), dtype=dtype)
    dst = np.arange(o, dtype=dtype)
    if align_corners:
        src = ratio * dst
    else:
        src = ratio * (dst + dtype.type(0.5)) - dtype.type(0.5)
        if not cubic:
            src = np.maximum(src, 0)
    if cubic:
        base = np.floor(src).astype(np.int64)
        t = (src - base).astype(dtype)
        return [(np.clip(base + i, 0, n - 1), w) for i, w in zip(range(-1, 3), _cubic_weights(t), strict=False)]
    low = src.astype(np.int64)
    lam = (src - low).astype(dtype)
    high = low + (low < n - 1)
    return [(low, 1 - lam), (high, lam)]


_SIZE_RANK_ERROR = (
    "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {} "
    "and output size of {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
    "(o1, o2, ...,oK) format.")
_SCALE_RANK_ERROR = (
    "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions "
    "of {} and scale_factor of shape {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
    "scale_factor in (s1, s2, ...,sK) format.")


def _per_spatial_dim(value: Any, cast: Callable[[Any], Any], spatial: tuple[int, ...], rank_error: str) -> list[Any]:
    """``interpolate``'s ``size`` or ``scale_factor``: one number for every spatial dim, or a list or
    tuple of one per dim (else ``rank_error`` filled with the input's spatial dims and ``value``)."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(spatial):
            raise ValueError(rank_error.format(list(spatial), value))
        return [cast(v) for v in value]
    return [cast(value)] * len(spatial)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize (N, C, *spatial) input by ``size`` or ``scale_factor``: modes ``nearest``, ``nearest-exact``,
    ``linear``, ``bilinear``, ``bicubic``, ``trilinear`` (with ``align_corners``) and ``area``.

    >>> import retrograd as rg
    >>> rg.nn.functional.interpolate(rg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    dim = input.dim() - 2
    spatial = tuple(input.shape[2:])
    output_size: list[int] | None = None
    scales: list[float] | None = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        output_size = _per_spatial_dim(size, int, spatial, _SIZE_RANK_ERROR)
    elif scale_factor is not None:
        scales = _per_spatial_dim(scale_factor, float, spatial, _SCALE_RANK_ERROR)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and scales is not None:
        output_size = [math.floor(float(n) * s) for n, s in zip(spatial, scales, strict=False)]
        scales = None
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by retrograd")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if mode in _LINEAR_MODES and mode != "bicubic" and dim + 2 in (3, 4, 5) and _LINEAR_MODES[mode] != dim:
        raise NotImplementedError(f"Got {dim + 2}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    if dim + 2 not in (3, 4, 5) or mode not in ("nearest", "nearest-exact", "area", *_LINEAR_MODES) or (
            mode == "bicubic" and dim != 2):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {dim + 2}D) for the "
                                  f"modes: {_MODES} (got {mode})")
    if output_size is None:
        assert scales is not None
        output_size = [int(n * s) for n, s in zip(spatial, scales, strict=False)]
    if mode == "area":
        if dim == 1:
            return adaptive_avg_pool1d(input, output_size[0])
        if dim == 2:
            return adaptive_avg_pool2d(input, output_size)
        raise NotImplementedError("interpolate(mode='area') of 5-D input is not supported by retrograd")
    if any(n <= 0 for n in spatial) or any(o <= 0 for o in output_size):
        letters = ("D", "H", "W")[-dim:]
        ins = ", ".join(f"{c}: {n}" for c, n in zip(letters, spatial, strict=False))
        outs = ", ".join(f"{c}: {n}" for c, n in zip(letters, output_size, strict=False))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins})"
                           f"{' and' if dim == 1 else ''} output ({outs})")
    dtype = input._data.dtype
    if mode in ("nearest", "nearest-exact"):
        name = "Nearest" if mode == "nearest" else "NearestExact"
        if dtype.kind not in "fV":
            kernel = f"upsample_{mode.replace('-', '_')}{dim}d"
            raise _not_implemented(kernel + ("_channels_last" if dim == 2 else ""), input)
        cfg = tuple(_nearest_taps(n, o, None if scales is None else scales[i], mode == "nearest-exact")
                    for i, (n, o) in enumerate(zip(spatial, output_size, strict=False)))
    else:
        name = mode.capitalize()
        if dtype.kind not in "fV":
            raise _not_implemented(f"upsample_{mode}{dim}d" + ("_channels_last" if dim == 2 else ""), input)
        cfg = tuple(_linear_taps(n, o, bool(align_corners), None if scales is None else scales[i], dtype,
                                 mode == "bicubic")
                    for i, (n, o) in enumerate(zip(spatial, output_size, strict=False)))
    op, _ = _C.interpolation[f"Upsample{name}{dim}DBackward0"]
    cfg = _C.interp_config(cfg, scales, align_corners if mode not in ("nearest", "nearest-exact") else None)
    return apply(op, (input, cfg))  # type: ignore[no-any-return]


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
