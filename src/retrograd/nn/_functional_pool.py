"""``nn.functional``'s 3-D pools, power-average (LP) pools and max_unpool: the 2-D pools' window
arithmetic generalised to three spatial dims (``ops/conv.py``), with PyTorch's argument checks.
Re-exported by ``nn/functional.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import conv as _C
from ..ops import shape as _S
from ..ops.op import apply
from ..tensor import Tensor
from ._functional_conv import (
    _adaptive_max_pool,
    _adaptive_size,
    _avg_pool,
    _check_adaptive,
    _dims_str,
    _not_implemented,
    _pool_out,
    _pool_window,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

__all__ = [
    "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "avg_pool3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "max_pool3d", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
    "max_unpool3d",
]

def _pool3d_setup(x: Tensor, fn: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                  ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    kernel, stride_t, padding_t, dilation_t = _pool_window(fn, 3, kernel_size, stride, padding, dilation)
    shape = tuple(x.shape)
    if len(shape) not in (4, 5) or any(s == 0 for s in shape[-4:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if fn == "avg_pool3d" and any(n < k for n, k in zip(shape[-3:], kernel, strict=False)) and not any(padding_t):
        raise RuntimeError(f"input image (T: {shape[-3]} H: {shape[-2]} W: {shape[-1]}) smaller than kernel size "
                           f"(kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    out = tuple(_pool_out(n, k, p, s, d, ceil_mode)
                for n, k, p, s, d in zip(shape[-3:], kernel, padding_t, stride_t, dilation_t, strict=False))
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kernel[0]} kH: {kernel[1]} "
                           f"kW: {kernel[2]}")
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(str(s) for s in shape[-4:])}). Calculated output size: "
                           f"({shape[-4]}x{'x'.join(str(o) for o in out)}). Output size is too small")
    return kernel, stride_t, padding_t, dilation_t, out


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-D max pooling returning ``(values, indices)``, the indices flat over D * H * W (PyTorch
    returns both whatever ``return_indices`` says).

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.nn.functional.max_pool3d_with_indices(rg.arange(8.0).reshape(1, 2, 2, 2), 2)]
    [[[[[7.0]]]], [[[[7]]]]]
    """
    kernel, stride_t, padding_t, dilation_t, out = _pool3d_setup(
        input, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode)
    if input._data.dtype.kind == "b":
        raise _not_implemented("max_pool3d", input)
    return apply(_C.max_pool3d, (input, kernel, stride_t, padding_t, dilation_t, out))


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) input (``-inf`` padding).

    >>> import retrograd as rg
    >>> rg.nn.functional.max_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    values, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.avg_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), 2).tolist()
    [[[[3.5]]]]
    """
    return _avg_pool(input, "avg_pool3d", _pool3d_setup, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to a fixed ``output_size``.

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_avg_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), (2, 1, 1)).tolist()
    [[[[1.5]], [[5.5]]]]
    """
    out = _adaptive_size(output_size, input.shape, "adaptive_avg_pool3d", 3)
    if out == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)  # PyTorch's shortcut (MeanBackward1)
    _check_adaptive(input, "adaptive_avg_pool3d", 3)
    if input._data.dtype.kind not in "fV":
        raise _not_implemented("adaptive_avg_pool3d", input)
    return apply(_C.adaptive_avg_pool3d, (input, out))  # type: ignore[no-any-return]


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Adaptive 3-D max pooling returning ``(values, indices)`` (flat over D * H * W).

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.nn.functional.adaptive_max_pool3d_with_indices(rg.arange(8.0).reshape(1, 2, 2, 2), 1)]
    [[[[[7.0]]]], [[[[7]]]]]
    """
    return _adaptive_max_pool(input, output_size, 3)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Adaptive 3-D max pooling to a fixed ``output_size``.

    >>> import retrograd as rg
    >>> rg.nn.functional.adaptive_max_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), 1).tolist()
    [[[[7.0]]]]
    """
    values, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


# -- power-average pools: PyTorch's composite (avg_pool of x ** p, rescaled, to the 1/p) ------------


def _lp(out: Tensor, norm_type: float, count: int) -> Tensor:
    return ((out.sign() * out.abs().relu()) * count) ** (1.0 / norm_type)


def _prod(values: Any, nd: int) -> int:
    if isinstance(values, (int, np.integer)):
        return int(values) ** nd
    items = [int(v) for v in values]
    return int(np.prod(items)) if len(items) == nd else int(items[0]) ** nd


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """1-D power-average pooling: ``(sum over the window of x ** p) ** (1/p)``.

    >>> import retrograd as rg
    >>> rg.nn.functional.lp_pool1d(rg.tensor([[3.0, 4.0]]), 2, 2).tolist()
    [[5.0]]
    """
    if norm_type == float("inf"):
        return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    if norm_type == -float("inf"):
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    out = avg_pool1d(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _prod(kernel_size, 1))


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling.

    >>> import retrograd as rg
    >>> rg.nn.functional.lp_pool2d(rg.tensor([[[3.0, 4.0]]]), 1, (1, 2)).tolist()
    [[[7.0]]]
    """
    if norm_type == float("inf"):
        return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    if norm_type == -float("inf"):
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    out = avg_pool2d(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _prod(kernel_size, 2))


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling.

    >>> import retrograd as rg
    >>> rg.nn.functional.lp_pool3d(rg.ones(1, 2, 2, 2), 2, 2).tolist()
    [[[[2.8284270763397217]]]]
    """
    if norm_type == float("inf"):
        return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    if norm_type == -float("inf"):
        return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    out = avg_pool3d(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _prod(kernel_size, 3))


# -- max_unpool ---------------------------------------------------------------------------------


def _tuple_n(value: Any, nd: int) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * nd
    items = tuple(int(v) for v in value)
    return items * nd if len(items) == 1 else items


def _unpool_output_size(x: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
                        output_size: Any) -> tuple[int, ...]:
    nd = len(kernel)
    default = [(x.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        sizes = [int(s) for s in output_size]
        if len(sizes) == nd + 2:
            sizes = sizes[2:]
        if len(sizes) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(sizes)}'")
        for d in range(nd):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < sizes[d] < high:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {low} and '
                                 f"{high})")
        ret = sizes
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return tuple(ret)


def _max_unpool(nd: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
                output_size: Any) -> Tensor:
    kernel = _tuple_n(kernel_size, nd)
    stride_t = kernel if stride is None else _tuple_n(stride, nd)
    padding_t = _tuple_n(padding, nd)
    size = _unpool_output_size(input, kernel, stride_t, padding_t, output_size)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    if indices._data.dtype != np.int64:
        from .._dtype import scalar_type_name

        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_type_name(indices._data.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({_dims_str(input.shape)}) "
                           f"but got indices tensor with shape: {_dims_str(indices.shape)}")
    op = _C.max_unpool2d if nd == 2 else _C.max_unpool3d
    return apply(op, (input, _S.versioned_index(indices), size))  # type: ignore[no-any-return]


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool1d``: each value written at its index, zeros elsewhere.

    >>> import retrograd as rg
    >>> rg.nn.functional.max_unpool1d(rg.tensor([[3.0]]), rg.tensor([[1]]), 2).tolist()
    [[0.0, 3.0]]
    """
    kernel = _tuple_n(kernel_size, 1)
    stride_t = kernel if stride is None else _tuple_n(stride, 1)
    padding_t = _tuple_n(padding, 1)
    size = _unpool_output_size(input, kernel, stride_t, padding_t, output_size)
    # (PyTorch's graph: a 2-D unpool of height 1)
    return max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), kernel + (1,), stride_t + (1,),
                        padding_t + (0,), size + (1,)).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool2d`` over (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.max_unpool2d(rg.tensor([[[3.0]]]), rg.tensor([[[2]]]), 2).tolist()
    [[[0.0, 0.0], [3.0, 0.0]]]
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool3d`` over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.max_unpool3d(rg.tensor([[[[3.0]]]]), rg.tensor([[[[7]]]]), 2).flatten().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0]
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
