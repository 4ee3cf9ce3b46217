"""Convolution, pooling, unfold/fold and interpolation ops.

Everything is vectorised: sliding windows are a strided view of the (padded) input (im2col without
a Python loop), copied a chunk of the batch at a time (about 1 MB, so the copy stays in cache)
and contracted with the weight by one batched ``matmul`` per chunk. The adjoint, col2im, adds each
kernel offset's slab into the output: a loop over the ``prod(kernel)`` offsets (9 for a 3x3 kernel),
each step a whole-array add; measured about 6x faster than a single ``np.bincount`` scatter.

Backward rules are written in these ops, so every gradient is differentiable again:

- ``convolution`` (``ConvolutionBackward0``): the input gradient is a transposed convolution of the
  output gradient with the weight (and a transposed convolution's is a convolution); the weight
  gradient is ``convolution_backward_weight``, a bilinear op whose own rules are convolutions.
- Linear maps come in pairs whose rules call each other: ``im2col``/``col2im`` (unfold/fold),
  ``avg_pool2d`` and its adjoint, ``adaptive_avg_pool2d`` and its adjoint, and one pair per
  interpolation mode (separable per-axis taps; the adjoint sums taps with ``np.add.reduceat``).
- Max pools return indices; their backward scatters the gradient there (``plane_scatter``, paired
  with the gather ``plane_gather`` that is its own backward).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dtype import REDUCED_FLOATS
from ..tensor import Tensor
from .op import Op, apply
from .op import versioned_array as _array
from .saved_attrs import derived

_make = Tensor._make

Pads = Sequence[tuple[int, int]]


# -- NumPy kernels ----------------------------------------------------------------------------


def pad_array(x: np.ndarray, pads: Pads, value: Any = 0) -> np.ndarray:
    """Pad the trailing ``len(pads)`` dims of ``x`` by (before, after) pairs, all >= 0."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = x.ndim - len(pads)
    shape = x.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[lead:], pads, strict=False))
    out = np.full(shape, value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[lead:], pads, strict=False))] = x
    return out


def windows(xp: np.ndarray, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
            out: Sequence[int], kernel_last: bool = False) -> np.ndarray:
    """Read-only strided view of the sliding windows of ``xp`` (N, C, *spatial), no copy:
    (N, C, *kernel, *out), or (N, C, *out, *kernel) with ``kernel_last``."""
    spatial_strides = xp.strides[2:]
    k_strides = tuple(s * d for s, d in zip(spatial_strides, dilation, strict=False))
    o_strides = tuple(s * t for s, t in zip(spatial_strides, stride, strict=False))
    if kernel_last:
        shape = xp.shape[:2] + tuple(out) + tuple(kernel)
        strides = xp.strides[:2] + o_strides + k_strides
    else:
        shape = xp.shape[:2] + tuple(kernel) + tuple(out)
        strides = xp.strides[:2] + k_strides + o_strides
    return as_strided(xp, shape, strides, writeable=False)


def _window_pads(size: Sequence[int], kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
                 pads: Pads, out: Sequence[int]) -> list[tuple[int, int]]:
    """Padding that makes every one of ``out`` windows fit (extends the far side if needed)."""
    return [(lo, max(hi, (o - 1) * s + d * (k - 1) + 1 - n - lo) if o else hi)
            for n, k, s, d, (lo, hi), o in zip(size, kernel, stride, dilation, pads, out, strict=False)]


def im2col_windows(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pads: Pads,
                   dilation: Sequence[int], out: Sequence[int] | None = None, value: Any = 0,
                   kernel_last: bool = False) -> np.ndarray:
    """The windows of ``x`` (N, C, *spatial) padded by ``pads``; ``out`` windows per dim (default:
    as many as fit)."""
    if out is None:
        out = [(n + lo + hi - d * (k - 1) - 1) // s + 1
               for n, k, s, d, (lo, hi) in zip(x.shape[2:], kernel, stride, dilation, pads, strict=False)]
    xp = pad_array(x, _window_pads(x.shape[2:], kernel, stride, dilation, pads, out), value)
    return windows(xp, kernel, stride, dilation, out, kernel_last)


def col2im(cols: np.ndarray, size: Sequence[int], kernel: Sequence[int], stride: Sequence[int], pads: Pads,
           dilation: Sequence[int]) -> np.ndarray:
    """Adjoint of ``im2col_windows``: (N, C, *kernel, *out) -> (N, C, *size), overlaps summed."""
    nd = len(kernel)
    out = cols.shape[2 + nd:]
    full = tuple(max(n + lo + hi, (o - 1) * s + d * (k - 1) + 1)
                 for n, k, s, d, (lo, hi), o in zip(size, kernel, stride, dilation, pads, out, strict=False))
    buf = np.zeros(cols.shape[:2] + full, dtype=cols.dtype)
    col2im_add(buf, cols, stride, dilation)
    crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, pads, strict=False))
    return np.ascontiguousarray(buf[(slice(None), slice(None)) + crop])


def col2im_add(buf: np.ndarray, cols: np.ndarray, stride: Sequence[int], dilation: Sequence[int]) -> None:
    """Add ``cols`` (N, C, *kernel, *out) into the padded ``buf`` (N, C, *full) in place: one
    whole-slab add per kernel offset."""
    nd = (cols.ndim - 2) // 2
    kernel, out = cols.shape[2:2 + nd], cols.shape[2 + nd:]
    if not cols.size:
        return
    for offset in np.ndindex(*kernel):
        region = tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                       for i, d, o, s in zip(offset, dilation, out, stride, strict=False))
        buf[(slice(None), slice(None)) + region] += cols[(slice(None), slice(None)) + offset]


# The convolution kernels walk the batch in chunks whose im2col buffer stays about this size: the
# window copy then lands in cache and its buffer is reused, where one whole-batch im2col (tens of
# MB for a 3x3 conv of 32 channels) costs page faults and a trip through memory before the GEMM.
_CHUNK_BYTES = 1 << 20


def _batch_step(n: int, per_item: int, itemsize: int) -> int:
    """How many of the ``n`` batch items go in one chunk of ``per_item`` elements each."""
    return max(1, min(n, _CHUNK_BYTES // max(1, per_item * itemsize)))


def _in_float32(kernel: Any) -> Any:
    """Run a convolution kernel of float16/bfloat16 arrays in float32 and round once, as PyTorch's
    CPU kernels accumulate (NumPy's bfloat16 matmul would return float32)."""
    def run(x: np.ndarray, w: np.ndarray, *args: Any) -> np.ndarray:
        if x.dtype not in REDUCED_FLOATS:
            return kernel(x, w, *args)  # type: ignore[no-any-return]
        return kernel(x.astype(np.float32), w.astype(np.float32), *args).astype(x.dtype)  # type: ignore[no-any-return]

    run.__name__ = kernel.__name__
    return run


def _sym(padding: Sequence[int]) -> list[tuple[int, int]]:
    return [(p, p) for p in padding]


@_in_float32
def _conv_nd(x: np.ndarray, w: np.ndarray, stride: Sequence[int], padding: Sequence[int],
             dilation: Sequence[int], groups: int, bias: np.ndarray | None = None) -> np.ndarray:
    n, c = x.shape[:2]
    out_channels = w.shape[0]
    kernel = w.shape[2:]
    win = im2col_windows(x, kernel, stride, _sym(padding), dilation)
    out = win.shape[2 + len(kernel):]
    rows, positions = (c // groups) * prod(kernel), prod(out)
    wm = w.reshape(groups, out_channels // groups, rows)
    y = np.empty((n, groups, out_channels // groups, positions), np.result_type(x.dtype, w.dtype))
    step = _batch_step(n, c * prod(kernel) * positions, x.itemsize)
    buf = np.empty((step,) + win.shape[1:], x.dtype)
    for start in range(0, n, step):
        part = buf[:min(step, n - start)]
        np.copyto(part, win[start:start + len(part)])  # the im2col copy, one chunk at a time
        chunk = np.matmul(wm, part.reshape(len(part), groups, rows, positions), out=y[start:start + len(part)])
        if bias is not None:  # added while the chunk is in cache, not in a pass of its own
            chunk += bias.reshape(groups, out_channels // groups, 1)
    return y.reshape((n, out_channels) + out)


@_in_float32
def _conv_transpose_nd(x: np.ndarray, w: np.ndarray, stride: Sequence[int], padding: Sequence[int],
                       dilation: Sequence[int], output_padding: Sequence[int], groups: int) -> np.ndarray:
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    kernel = w.shape[2:]
    group_out = w.shape[1]
    wm = w.reshape(groups, c // groups, group_out * prod(kernel)).transpose(0, 2, 1)
    xs = x.reshape(n, groups, c // groups, prod(spatial))
    size = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1
            for i, s, p, d, k, op in zip(spatial, stride, padding, dilation, kernel, output_padding, strict=False)]
    pads = _sym(padding)
    full = tuple(max(m + lo + hi, (i - 1) * s + d * (k - 1) + 1)
                 for m, k, s, d, (lo, hi), i in zip(size, kernel, stride, dilation, pads, spatial, strict=False))
    dtype = np.result_type(x.dtype, w.dtype)
    if len(kernel) == 2 and tuple(stride) == (1, 1) and np.isfinite(w).all():
        result = _conv_transpose2d_rows(xs.reshape((n, groups, c // groups) + spatial), wm, kernel, dilation,
                                        full, dtype)
        crop = tuple(slice(lo, lo + m) for m, (lo, _) in zip(size, pads, strict=False))
        return np.ascontiguousarray(result[(slice(None), slice(None)) + crop])
    result = np.zeros((n, groups * group_out) + full, dtype)
    step = _batch_step(n, groups * group_out * prod(kernel) * prod(spatial), dtype.itemsize)
    buf = np.empty((step, groups, group_out * prod(kernel), prod(spatial)), dtype)
    for start in range(0, n, step):
        part = buf[:min(step, n - start)]
        np.matmul(wm, xs[start:start + len(part)], out=part)
        col2im_add(result[start:start + len(part)], part.reshape((len(part), groups * group_out) + kernel + spatial),
                   stride, dilation)
    crop = tuple(slice(lo, lo + m) for m, (lo, _) in zip(size, pads, strict=False))
    return np.ascontiguousarray(result[(slice(None), slice(None)) + crop])


def _conv_transpose2d_rows(x: np.ndarray, wm: np.ndarray, kernel: Sequence[int], dilation: Sequence[int],
                           full: Sequence[int], dtype: Any) -> np.ndarray:
    """A stride-1 2-D transposed convolution of ``x`` (N, groups, C / groups, H, W) by ``wm``
    (groups, O / groups * kh * kw, C / groups) into the padded (N, O, *full) buffer.

    Each input plane is widened with zeros to the buffer's full plane (``Fh * Fw``) before the
    matmul, and the matmul's rows are ordered (kernel offset, output channel): every kernel
    offset's slab is then one contiguous run of ``O / groups * Fh * Fw`` values that lands in the
    flattened buffer at one offset (``i * d * Fw + j * d``), across all the group's channels at
    once. col2im is then ``kh * kw`` adds of long contiguous runs: NumPy adds those about twice as
    fast as the same values in rows of a 2-D strided view. The widened positions give exact zeros
    (the caller checks the weight is finite, so no ``0 * inf``); wherever they land they add
    nothing, and what is cut off at a run's end is only such zeros."""
    n, groups, cg, h, w = x.shape
    fh, fw = full
    plane = fh * fw
    taps = prod(kernel)
    group_out = wm.shape[1] // taps
    # (groups, og * taps, cg) rows (og, i, j) -> rows (i, j, og)
    wk = np.ascontiguousarray(wm.reshape(groups, group_out, taps, cg).transpose(0, 2, 1, 3)).reshape(
        groups, taps * group_out, cg)
    starts = [i * dilation[0] * fw + j * dilation[1] for i in range(kernel[0]) for j in range(kernel[1])]
    run = group_out * plane
    result = np.empty((n, groups, run), dtype)
    step = _batch_step(n, groups * taps * run, np.dtype(dtype).itemsize)
    wide = np.zeros((step, groups, cg, fh, fw), x.dtype)
    buf = np.empty((step, groups, taps * run), dtype)
    for start in range(0, n, step):
        count = min(step, n - start)
        wide[:count, ..., :h, :w] = x[start:start + count]
        part = buf[:count]
        np.matmul(wk, wide[:count].reshape(count, groups, cg, plane), out=part.reshape(count, groups, taps * group_out,
                                                                                           plane))
        dest = result[start:start + count]
        dest[...] = part[..., :run]  # the first offset (0, 0) covers the whole plane: no zeros to add to
        for k, at in enumerate(starts[1:], 1):
            np.add(dest[..., at:], part[..., k * run:(k + 1) * run - at], out=dest[..., at:])
    return result.reshape((n, groups * group_out) + tuple(full))


def _convolution(x: np.ndarray, w: np.ndarray, b: Any, stride: tuple[int, ...], padding: tuple[int, ...],
                 dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...],
                 groups: int) -> np.ndarray:
    if transposed:
        y = _conv_transpose_nd(x, w, stride, padding, dilation, output_padding, groups)
    elif b is not None and x.dtype not in REDUCED_FLOATS:  # (a reduced float adds it after rounding)
        return _conv_nd(x, w, stride, padding, dilation, groups, b)  # type: ignore[no-any-return]
    else:
        y = _conv_nd(x, w, stride, padding, dilation, groups)
    if b is not None:
        y += b.reshape((-1,) + (1,) * (y.ndim - 2))
    return y


@_in_float32
def _conv_weight(x: np.ndarray, gy: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...],
                 padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """The weight gradient of ``conv(x, w)`` for output gradient ``gy``: (O, C / groups, *kernel)."""
    n, c = x.shape[:2]
    out_channels = gy.shape[1]
    out = gy.shape[2:]
    win = im2col_windows(x, kernel, stride, _sym(padding), dilation, out)
    rows, positions = (c // groups) * prod(kernel), prod(out)
    g = gy.reshape(n, groups, out_channels // groups, positions)
    gw = np.zeros((groups, out_channels // groups, rows), np.result_type(x.dtype, gy.dtype))
    step = _batch_step(n, c * prod(kernel) * positions, x.itemsize)
    buf = np.empty((step,) + win.shape[1:], x.dtype)
    products = np.empty((step,) + gw.shape, gw.dtype)
    for start in range(0, n, step):
        part = buf[:min(step, n - start)]
        np.copyto(part, win[start:start + len(part)])
        cols = part.reshape(len(part), groups, rows, positions)
        each = np.matmul(g[start:start + len(part)], cols.transpose(0, 1, 3, 2), out=products[:len(part)])
        # (a chunk of one item, as for any layer of 32 channels or more: no reduction to run)
        gw += each[0] if len(part) == 1 else each.sum(axis=0)
    return gw.reshape((out_channels, c // groups) + kernel)


# -- convolution ops --------------------------------------------------------------------------


def input_padding(in_size: Sequence[int], out_size: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                  padding: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """The output_padding that makes a transposed convolution of ``out_size`` give ``in_size``."""
    return tuple(i + 2 * p - d * (k - 1) - 1 - (o - 1) * s
                 for i, o, k, s, p, d in zip(in_size, out_size, kernel, stride, padding, dilation, strict=False))


def _crop_to(t: Tensor, shape: Sequence[int]) -> Tensor:
    if tuple(t.shape[2:]) == tuple(shape[2:]):
        return t
    return t[(slice(None), slice(None)) + tuple(slice(0, s) for s in shape[2:])]


def _conv_input_grad(grad: Tensor, weight: Tensor, self_shape: tuple[int, ...], stride: tuple[int, ...],
                     padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                     output_padding: tuple[int, ...], groups: int) -> Tensor:
    zeros = (0,) * len(stride)
    if transposed:  # output_padding >= stride (allowed below the dilation) leaves rows no input reaches
        return _crop_to(apply(convolution, (grad, weight, None, stride, padding, dilation, False, zeros, groups)),
                        self_shape)
    extra = input_padding(self_shape[2:], grad.shape[2:], weight.shape[2:], stride, padding, dilation)
    return apply(convolution, (grad, weight, None, stride, padding, dilation, True, extra, groups))  # type: ignore[no-any-return]


def _conv_weight_grad(grad: Tensor, self: Tensor, weight_shape: tuple[int, ...], stride: tuple[int, ...],
                      padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                      output_padding: tuple[int, ...], groups: int) -> Tensor:
    kernel = tuple(weight_shape[2:])
    # A transposed convolution is the input-adjoint of the convolution from its output to its input.
    x, gy = (grad, self) if transposed else (self, grad)
    return apply(conv_weight, (x, gy, kernel, stride, padding, dilation, groups))  # type: ignore[no-any-return]


convolution = Op(
    "convolution", _convolution, node="ConvolutionBackward0", inputs=("self", "weight", "bias"),
    params=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
    # PyTorch's names; the bias's shape is known from its edge (a bias that requires no grad reads
    # (0,), as no bias does: the node keeps nothing of it).
    saved={"input": "self", "weight": "weight", "stride": "stride", "padding": "padding", "dilation": "dilation",
           "transposed": "transposed", "output_padding": "output_padding", "groups": "groups",
           "bias_sym_sizes_opt": derived("bias_sym_sizes", lambda shape: (0,) if shape is None else shape)},
    grads=(_conv_input_grad, _conv_weight_grad,
           lambda grad: grad.sum([0] + list(range(2, grad.dim())))),
    jvp="transpose",
)


conv_weight = Op(
    "convolution_backward_weight", _conv_weight, node="ConvolutionBackwardBackward0",
    inputs=("self", "grad_output"), params=("kernel", "stride", "padding", "dilation", "groups"),
    grads=(
        # <conv_weight(x, g), V> = <conv(x, V), g>: bilinear, each rule a convolution.
        lambda grad, grad_output, self_shape, kernel, stride, padding, dilation, groups: apply(
            convolution, (grad_output, grad, None, stride, padding, dilation, True,
                          input_padding(self_shape[2:], grad_output.shape[2:], kernel, stride, padding, dilation),
                          groups)),
        lambda grad, self, grad_output_shape, kernel, stride, padding, dilation, groups: _crop_to(apply(
            convolution, (self, grad, None, stride, padding, dilation, False, (0,) * len(kernel), groups)),
            grad_output_shape),
    ),
    jvp="transpose",
)


def _constant_pad(x: np.ndarray, pads: tuple[tuple[int, int], ...]) -> np.ndarray:
    return pad_array(x, pads)


def _unpad(grad: Tensor, self_shape: tuple[int, ...], pads: tuple[tuple[int, int], ...]) -> Tensor:
    lead = len(self_shape) - len(pads)
    kept = tuple(slice(lo, lo + n) for n, (lo, _) in zip(self_shape[lead:], pads, strict=False))
    return grad[(slice(None),) * lead + kept]


# Zero padding of the trailing dims (what padding='same' adds when it cannot be symmetric).
constant_pad = Op("constant_pad_nd", _constant_pad, node="ConstantPadNdBackward0", params=("pads",),
                  grads=(_unpad,), jvp="transpose")


# -- linear op pairs --------------------------------------------------------------------------


def linear_pair(name: str, forward: Callable[..., np.ndarray], adjoint: Callable[..., np.ndarray], node: str,
                adjoint_node: str, keeps_input: bool = False, saved: dict[str, Any] | None = None,
                adjoint_saved: dict[str, Any] | None = None) -> tuple[Op, Op]:
    """A linear op ``forward(x, cfg)`` and its adjoint ``adjoint(g, cfg, input_shape)``: each one's
    backward rule is the other, so derivatives of any order stay in the pair. ``keeps_input``: the
    node saves its input, as PyTorch's (whose backward kernel reads it; ours, only its shape);
    ``saved``/``adjoint_saved``: the nodes' PyTorch attribute names (``Op``'s ``saved=``)."""
    op: Op
    adj: Op
    def keeping_input(grad: Tensor, self: Tensor, cfg: Any) -> Tensor:
        return apply(adj, (grad, cfg, tuple(self.shape)))  # type: ignore[no-any-return]

    def keeping_shape(grad: Tensor, self_shape: Any, cfg: Any) -> Tensor:
        return apply(adj, (grad, cfg, tuple(self_shape)))  # type: ignore[no-any-return]

    op = Op(name, forward, node=node, params=("cfg",), grads=(keeping_input if keeps_input else keeping_shape,),
            jvp="linear", saved=saved)
    adj = Op(name + "_backward", adjoint, node=adjoint_node, params=("cfg", "shape"),
             grads=(lambda grad, cfg: apply(op, (grad, cfg)),), jvp="linear", saved=adjoint_saved)
    return op, adj


def _batched(fn: Callable[..., np.ndarray], spatial: int) -> Callable[..., np.ndarray]:
    """Run ``fn`` on (N, C, *spatial) arrays; an unbatched (C, *spatial) input gets N = 1."""
    def run(x: np.ndarray, *args: Any) -> np.ndarray:
        if x.ndim == spatial + 1:
            return fn(x[None], *args)[0]  # type: ignore[no-any-return]
        return fn(x, *args)

    return run


def _batched_adjoint(fn: Callable[..., np.ndarray], spatial: int) -> Callable[..., np.ndarray]:
    def run(g: np.ndarray, cfg: Any, shape: tuple[int, ...]) -> np.ndarray:
        if len(shape) == spatial + 1:
            return fn(g[None], cfg, (1,) + tuple(shape))[0]  # type: ignore[no-any-return]
        return fn(g, cfg, shape)

    return run


# unfold / fold: cfg = (kernel, dilation, padding, stride), 2-d.


def _im2col(x: np.ndarray, cfg: Any) -> np.ndarray:
    kernel, dilation, padding, stride = cfg
    cols = im2col_windows(x, kernel, stride, _sym(padding), dilation)
    return cols.reshape(x.shape[0], x.shape[1] * prod(kernel), prod(cols.shape[2 + len(kernel):]))


def _col2im(cols: np.ndarray, cfg: Any, shape: tuple[int, ...]) -> np.ndarray:
    kernel, dilation, padding, stride = cfg
    size = shape[2:]
    out = [(n + 2 * p - d * (k - 1) - 1) // s + 1
           for n, k, s, d, p in zip(size, kernel, stride, dilation, padding, strict=False)]
    blocks = cols.reshape((cols.shape[0], shape[1]) + tuple(kernel) + tuple(out))
    return col2im(blocks, size, kernel, stride, _sym(padding), dilation)


def _cfg_item(index: int) -> Any:
    """A saved attribute that is item ``index`` of the node's ``cfg``."""
    return derived("cfg", lambda cfg: cfg[index])


# PyTorch's names for unfold's and fold's nodes (``self_sym_argsize_minus_1``: the input's last size)
_WINDOW_NAMES = {"kernel_size": _cfg_item(0), "dilation": _cfg_item(1), "padding": _cfg_item(2), "stride": _cfg_item(3)}
im2col, col2im_op = linear_pair(
    "im2col", _batched(_im2col, 2), _batched_adjoint(_col2im, 2), "Im2ColBackward0", "Col2ImBackward0",
    saved={**_WINDOW_NAMES, "self_sym_argsize_minus_1": derived("self_sym_sizes", lambda shape: shape[-1]),
           "self_sym_argsize_minus_2": derived("self_sym_sizes", lambda shape: shape[-2])},
    adjoint_saved=_WINDOW_NAMES)


# avg_pool2d: cfg = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, out).


def _axis_grid(values: np.ndarray, axis: int, nd: int) -> np.ndarray:
    """``values`` laid along ``axis`` of an ``nd``-dim grid (size 1 elsewhere), for broadcasting."""
    return values.reshape((1,) * axis + (-1,) + (1,) * (nd - axis - 1))


def _avg_divisor(size: Sequence[int], cfg: Any) -> np.ndarray:
    """Each window's divisor over the ``len(kernel)`` spatial dims (PyTorch's count_include_pad and
    divisor_override rules), broadcastable against the output."""
    kernel, stride, padding, _, count_include_pad, divisor_override, out = cfg
    if divisor_override:
        return np.asarray(divisor_override)
    nd = len(kernel)
    total: Any = 1
    for axis, (n, k, s, p, o) in enumerate(zip(size, kernel, stride, padding, out, strict=False)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        factor = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        total = total * _axis_grid(factor, axis, nd)
    return np.maximum(total, 1)  # type: ignore[no-any-return]


def _avg_pool(x: np.ndarray, cfg: Any) -> np.ndarray:
    """Average pool of (N, C, *spatial) over ``len(kernel)`` spatial dims (2-D and 3-D)."""
    kernel, stride, padding, _, _, _, out = cfg
    nd = len(kernel)
    win = im2col_windows(x, kernel, stride, _sym(padding), (1,) * nd, out)
    total = win.sum(axis=tuple(range(2, 2 + nd)))
    div = _avg_divisor(x.shape[2:], cfg)
    if x.dtype.kind in "iub":
        return np.trunc(total / div).astype(x.dtype)  # type: ignore[no-any-return]
    return (total / div).astype(x.dtype, copy=False)  # type: ignore[no-any-return]


def _avg_pool_adjoint(g: np.ndarray, cfg: Any, shape: tuple[int, ...]) -> np.ndarray:
    kernel, stride, padding, _, _, _, out = cfg
    nd = len(kernel)
    scaled = (g / _avg_divisor(shape[2:], cfg)).astype(g.dtype, copy=False)
    cols = np.broadcast_to(scaled[(slice(None), slice(None)) + (None,) * nd], g.shape[:2] + tuple(kernel) + tuple(out))
    return col2im(cols, shape[2:], kernel, stride, _sym(padding), (1,) * nd)


# PyTorch's names for the average pools' nodes (its ``stride`` is the argument as given, ``()`` when
# omitted; ours, the stride used)
_AVG_POOL_NAMES = {"self": "self", "kernel_size": _cfg_item(0), "stride": _cfg_item(1), "padding": _cfg_item(2),
                   "ceil_mode": _cfg_item(3), "count_include_pad": _cfg_item(4), "divisor_override": _cfg_item(5)}
avg_pool2d, avg_pool2d_backward = linear_pair("avg_pool2d", _batched(_avg_pool, 2),
                                              _batched_adjoint(_avg_pool_adjoint, 2),
                                              "AvgPool2DBackward0", "AvgPool2DBackwardBackward0", keeps_input=True,
                                              saved=_AVG_POOL_NAMES)


# adaptive_avg_pool2d: cfg = out; separable, so two small averaging matrices.


def adaptive_bounds(n: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive windows: [floor(i n / o), ceil((i + 1) n / o))."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _averaging_matrix(n: int, o: int, dtype: np.dtype) -> np.ndarray:
    start, end = adaptive_bounds(n, o)
    pos = np.arange(n)
    inside = (pos >= start[:, None]) & (pos < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_avg_pool2d(x: np.ndarray, out: tuple[int, int]) -> np.ndarray:
    ph = _averaging_matrix(x.shape[-2], out[0], x.dtype)
    pw = _averaging_matrix(x.shape[-1], out[1], x.dtype)
    return np.matmul(np.matmul(ph, x), pw.T)  # type: ignore[no-any-return]


def _adaptive_avg_pool2d_adjoint(g: np.ndarray, out: tuple[int, int], shape: tuple[int, ...]) -> np.ndarray:
    ph = _averaging_matrix(shape[-2], out[0], g.dtype)
    pw = _averaging_matrix(shape[-1], out[1], g.dtype)
    return np.matmul(np.matmul(ph.T, g), pw)  # type: ignore[no-any-return]


adaptive_avg_pool2d, adaptive_avg_pool2d_backward = linear_pair(
    "adaptive_avg_pool2d", _adaptive_avg_pool2d, _adaptive_avg_pool2d_adjoint,
    "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0", keeps_input=True, saved={"self": "self"})


# -- max pools (values and indices) -------------------------------------------------------------


def _lowest(dtype: np.dtype) -> Any:
    if dtype.kind in "fV":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _argmax_last(flat: np.ndarray) -> np.ndarray:
    """argmax over the last axis; NaN wins, and among NaNs the last one (as PyTorch's scan)."""
    arg = flat.argmax(axis=-1)
    if flat.dtype.kind in "fV":
        nans = np.isnan(flat)
        if nans.any():
            last = flat.shape[-1] - 1 - nans[..., ::-1].argmax(axis=-1)
            arg = np.where(nans.any(axis=-1), last, arg)
    return arg  # type: ignore[no-any-return]


def _first_inside(start: np.ndarray, dilation: int) -> np.ndarray:
    """The first position start + i * dilation (i >= 0) that is not in the left padding."""
    skip = -(-np.maximum(-start, 0) // dilation)  # ceil(max(-start, 0) / dilation)
    return start + skip * dilation  # type: ignore[no-any-return]


def _max_pool2d(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int],
                dilation: tuple[int, int], out: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    batched = x.ndim == 4
    xb = x if batched else x[None]
    n, c, height, width = xb.shape
    if _tiles_fit(xb, kernel, stride, padding, dilation, out):
        values, indices = _max_pool2d_tiles(xb, kernel, out)
        # A NaN in a tile makes its maximum NaN (np.maximum propagates it): then the general scan
        # gives PyTorch's NaN rule. One pass over the pooled values, a quarter of the input's.
        if not np.isnan(values).any():
            return (values, indices) if batched else (values[0], indices[0])
    win = im2col_windows(xb, kernel, stride, _sym(padding), dilation, out, _lowest(x.dtype), kernel_last=True)
    flat = win.reshape(n, c, out[0], out[1], kernel[0] * kernel[1])
    arg = _argmax_last(flat)
    values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    # flat index = window origin + the chosen kernel offset, both in the unpadded H * W plane
    origin = ((np.arange(out[0]) * stride[0] - padding[0])[:, None] * width
              + np.arange(out[1]) * stride[1] - padding[1])
    offsets = (np.arange(kernel[0])[:, None] * (dilation[0] * width) + np.arange(kernel[1]) * dilation[1]).ravel()
    indices = origin + offsets[arg]
    lowest = _lowest(x.dtype)
    if xb.size and (values == lowest).any():
        # Windows whose real elements all equal the padding value: PyTorch keeps the first real one.
        first = [_first_inside(np.arange(o) * st - p, d)
                 for o, st, p, d in zip(out, stride, padding, dilation, strict=False)]
        indices = np.where(values == lowest, first[0][:, None] * width + first[1], indices)
    if not batched:
        return values[0], indices[0]
    return values, indices


def _tiles_fit(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int],
               dilation: tuple[int, int], out: tuple[int, int]) -> bool:
    """The common pool (``max_pool2d(x, k)``): windows that tile the plane without overlap or
    padding, over floats (the caller falls back to the general path when a maximum is NaN; infinities
    compare as any value)."""
    return (tuple(padding) == (0, 0) and tuple(dilation) == (1, 1) and tuple(stride) == tuple(kernel)
            and x.dtype.kind == "f" and x.size != 0 and out[0] * kernel[0] <= x.shape[2]
            and out[1] * kernel[1] <= x.shape[3])


def _max_pool2d_tiles(x: np.ndarray, kernel: tuple[int, int], out: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``_max_pool2d`` over non-overlapping tiles: the maximum over the ``kh * kw`` tile offsets
    and the first offset that holds it (PyTorch's scan keeps the first on ties)."""
    n, c, _, width = x.shape
    (kh, kw), (oh, ow) = kernel, out
    if (kh, kw) == (2, 2):
        return _max_pool2d_tiles_2x2(x, out)
    # One copy puts each tile offset's values in a contiguous slab: (kh * kw, n, c, oh, ow).
    slabs = np.ascontiguousarray(x[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow, kw).transpose(3, 5, 0, 1, 2, 4))
    slabs = slabs.reshape(kh * kw, n, c, oh, ow)
    best = slabs.max(axis=0)
    # The first offset holding the maximum: later offsets first, each earlier one overwriting.
    chosen = np.full(best.shape, kh * kw - 1, np.uint8 if kh * kw < 256 else np.int64)
    equal = np.empty(best.shape, bool)
    for k in range(kh * kw - 2, -1, -1):
        np.equal(slabs[k], best, out=equal)
        np.copyto(chosen, k, where=equal)
    offsets = (np.arange(kh, dtype=np.int64)[:, None] * width + np.arange(kw)).ravel()
    indices = offsets.take(chosen)
    indices += (np.arange(oh, dtype=np.int64) * (kh * width))[:, None] + np.arange(ow, dtype=np.int64) * kw
    return best, indices


def _max_pool2d_tiles_2x2(x: np.ndarray, out: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``_max_pool2d_tiles`` of 2x2 tiles as a tournament on strided views, no copy of the input:
    the winner of each row's pair, then of the two rows; a strict ``>`` keeps the first on ties."""
    oh, ow = out
    width = x.shape[3]
    tiles = x[:, :, :oh * 2, :ow * 2].reshape(x.shape[:2] + (oh, 2, ow, 2))
    top_left, top_right, bottom_left, bottom_right = (tiles[:, :, :, i, :, j] for i in (0, 1) for j in (0, 1))
    top, bottom = np.maximum(top_left, top_right), np.maximum(bottom_left, bottom_right)
    lower = np.greater(bottom, top)
    indices = np.where(lower, np.greater(bottom_right, bottom_left), np.greater(top_right, top_left)).astype(np.int64)
    indices += lower * width
    indices += (np.arange(oh, dtype=np.int64) * (2 * width))[:, None] + np.arange(ow, dtype=np.int64) * 2
    return np.maximum(top, bottom, out=top), indices


def _plane_gather(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """x (…, H, W), index (…, *out) of flat H * W positions -> x at those positions (…, *out)."""
    lead = x.shape[:-2]
    flat = x.reshape(lead + (x.shape[-2] * x.shape[-1],))
    per_plane = prod(index.shape[len(lead):])
    return np.take_along_axis(flat, index.reshape(lead + (per_plane,)), axis=-1).reshape(index.shape)


def _plane_scatter(g: np.ndarray, index: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Adjoint of ``_plane_gather``: zeros of ``shape`` with ``g`` added at ``index`` (repeats summed)."""
    lead = tuple(shape[:-2])
    plane = shape[-2] * shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    per_plane = prod(index.shape[len(lead):])
    flat_index = (np.arange(rows, dtype=np.int64)[:, None] * plane + index.reshape(rows, per_plane)).reshape(-1)
    hit = np.zeros(rows * plane, bool)
    hit[flat_index] = True
    if np.count_nonzero(hit) == flat_index.size:
        # No position repeats (a max pool whose windows do not overlap): the gradient is written
        # in place, in its own dtype, with no sum through float64 bins.
        out = np.zeros(rows * plane, g.dtype)
        out[flat_index] = g.reshape(-1)
        return out.reshape(shape)
    flat_index = (np.arange(rows, dtype=np.int64)[:, None] * plane + index.reshape(rows, per_plane)).reshape(-1)
    summed = np.bincount(flat_index, weights=g.reshape(-1), minlength=rows * plane)
    return summed.astype(g.dtype, copy=False).reshape(shape)


# The max pools' backward: a scatter of the gradient to the argmax positions, paired with its gather.
plane_gather, plane_scatter = linear_pair("plane_gather", _plane_gather, _plane_scatter, "GatherBackward0",
                                          "MaxPool2DWithIndicesBackwardBackward0")


def scatter_to_plane(grad: Tensor, indices: Tensor, self_shape: tuple[int, ...]) -> Tensor:
    """Add ``grad`` (…, *out) into zeros of ``self_shape`` at the flat spatial ``indices``."""
    return apply(plane_scatter, (grad, indices._data, tuple(self_shape)))  # type: ignore[no-any-return]


def _plane_put(g: np.ndarray, index: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``_plane_scatter`` where the ``index`` positions of each plane are known to be distinct (the
    maxima of windows that do not overlap): one write, without the scan for repeats."""
    lead = tuple(shape[:-2])
    plane = shape[-2] * shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    per_plane = prod(index.shape[len(lead):])
    flat_index = (np.arange(rows, dtype=np.int64)[:, None] * plane + index.reshape(rows, per_plane)).reshape(-1)
    out = np.zeros(rows * plane, g.dtype)
    out[flat_index] = g.reshape(-1)
    return out.reshape(shape)


# The same pair for distinct positions: a gather's adjoint at distinct positions is a plain write.
_, plane_put = linear_pair("plane_gather", _plane_gather, _plane_put, "GatherBackward0",
                           "MaxPool2DWithIndicesBackwardBackward0")


def _max_pool2d_grad(grad: Any, result1: Tensor, self: Tensor, kernel: tuple[int, int],
                     stride: tuple[int, int], dilation: tuple[int, int]) -> Tensor:
    # Each maximum's index lies in its own window: windows that do not overlap (max_pool2d(x, k)'s
    # default) give distinct indices.
    apart = all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation, strict=True))
    return apply(plane_put if apart else plane_scatter,  # type: ignore[no-any-return]
                 (grad[0], result1._data, tuple(self.shape)))


# PyTorch's names for the max pools' nodes; the input is saved, as PyTorch's (ours reads its
# shape). Not kept: ``ceil_mode`` (ours is folded into ``out``).
_MAX_POOL_NAMES = {"self": "self", "result1": "result1", "kernel_size": "kernel", "stride": "stride",
                   "padding": "padding", "dilation": "dilation"}
max_pool2d = Op("max_pool2d_with_indices", _max_pool2d, node="MaxPool2DWithIndicesBackward0",
                params=("kernel", "stride", "padding", "dilation", "out"), outputs=2,
                differentiable_outputs=(True, False),
                grads=(_max_pool2d_grad,), saved=_MAX_POOL_NAMES, jvp="transpose")


def adaptive_gather(n: int, o: int) -> np.ndarray:
    """(o, longest window) positions of each adaptive window, the last one repeated as padding."""
    start, end = adaptive_bounds(n, o)
    longest = int((end - start).max()) if o else 0
    return np.minimum(start[:, None] + np.arange(longest), end[:, None] - 1)


def _adaptive_max_pool2d(x: np.ndarray, out: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    height, width = x.shape[-2:]
    if not (out[0] and out[1]):
        return np.empty(x.shape[:-2] + tuple(out), x.dtype), np.empty(x.shape[:-2] + tuple(out), np.int64)
    rows = adaptive_gather(height, out[0])
    cols = adaptive_gather(width, out[1])
    flat_index = rows[:, None, :, None] * width + cols[None, :, None, :]  # (oh, ow, kh, kw)
    flat_index = flat_index.reshape(out[0], out[1], rows.shape[1] * cols.shape[1])
    values = x.reshape(x.shape[:-2] + (-1,))[..., flat_index]  # (..., oh, ow, kh*kw)
    arg = _argmax_last(values)
    best = np.take_along_axis(values, arg[..., None], axis=-1)[..., 0]
    indices = np.take_along_axis(np.broadcast_to(flat_index, values.shape), arg[..., None], axis=-1)[..., 0]
    return best, indices.astype(np.int64)


adaptive_max_pool2d = Op("adaptive_max_pool2d", _adaptive_max_pool2d, node="AdaptiveMaxPool2DBackward0",
                         params=("out",), outputs=2, differentiable_outputs=(True, False),
                         grads=(lambda grad, result1, self: scatter_to_plane(grad[0], result1, tuple(self.shape)),),
                         jvp="transpose")


# -- interpolation: separable per-axis taps ---------------------------------------------------
# cfg = one entry per spatial axis: a list of (index, weight) taps; weight None means 1 (nearest).
# Indices are non-decreasing along the output axis, so the adjoint is a segment sum (reduceat).


def _interp_forward(x: np.ndarray, cfg: Any) -> np.ndarray:
    y = x
    for axis_offset, taps in enumerate(cfg):
        axis = x.ndim - len(cfg) + axis_offset
        shape = [1] * y.ndim
        shape[axis] = -1
        total: np.ndarray | None = None
        for index, weight in taps:
            part = np.take(y, index, axis=axis)
            if weight is not None:
                part = part * weight.astype(y.dtype).reshape(shape)
            total = part if total is None else total + part
        assert total is not None
        y = total
    return y


def _segment_sum(v: np.ndarray, index: np.ndarray, n: int, axis: int) -> np.ndarray:
    uniq, starts = np.unique(index, return_index=True)
    sums = np.add.reduceat(v, starts, axis=axis) if v.shape[axis] else v
    if len(uniq) == n:
        return sums
    shape = list(v.shape)
    shape[axis] = n
    out = np.zeros(shape, dtype=v.dtype)
    key = [slice(None)] * v.ndim
    key[axis] = uniq  # type: ignore[call-overload]
    out[tuple(key)] = sums
    return out


def _interp_adjoint(g: np.ndarray, cfg: Any, shape: tuple[int, ...]) -> np.ndarray:
    y = g
    for axis_offset in reversed(range(len(cfg))):
        taps = cfg[axis_offset]
        axis = g.ndim - len(cfg) + axis_offset
        n = shape[axis]
        bshape = [1] * y.ndim
        bshape[axis] = -1
        total: np.ndarray | None = None
        for index, weight in taps:
            part = y if weight is None else y * weight.astype(y.dtype).reshape(bshape)
            summed = _segment_sum(part, index, n, axis)
            total = summed if total is None else total + summed
        assert total is not None
        y = total
    return y


INTERP_NODES = tuple(
    f"Upsample{mode}{d}DBackward0"
    for mode, dims in (("Nearest", (1, 2, 3)), ("NearestExact", (1, 2, 3)), ("Linear", (1,)), ("Bilinear", (2,)),
                       ("Bicubic", (2,)), ("Trilinear", (3,)))
    for d in dims
)

class InterpConfig(tuple):  # type: ignore[type-arg]
    """An interpolation's ``cfg`` (the taps of each spatial axis) with the arguments it was made
    from, which PyTorch's node keeps: ``scales`` (one per axis, or None for a given size) and
    ``align_corners`` (None for the nearest modes)."""

    scales: tuple[float | None, ...]
    align_corners: bool | None


def interp_config(taps: tuple[Any, ...], scales: Sequence[float] | None, align_corners: bool | None) -> InterpConfig:
    """``taps`` as an interpolation's cfg, with the ``scales`` and ``align_corners`` it was made from."""
    cfg = InterpConfig(taps)
    cfg.scales = tuple(scales) if scales is not None else (None,) * len(taps)
    cfg.align_corners = align_corners
    return cfg


def _scale_reader(axis: int) -> Callable[[Any], float | None]:
    """The scale of spatial ``axis`` that an interpolation's cfg was made with (None: a given size)."""
    def read(cfg: Any) -> float | None:
        scales = getattr(cfg, "scales", None)
        return None if scales is None else scales[axis]  # type: ignore[no-any-return]

    return read


def _interp_names(node: str) -> dict[str, Any]:
    """PyTorch's saved attributes of an interpolation node, read from its cfg (a plain tuple of
    taps, made without ``interp_config``, keeps no scales: they read None)."""
    dims = int(node.split("D")[0][-1])
    axes = ("",) if dims == 1 else ("_d", "_h", "_w")[3 - dims:]
    names: dict[str, Any] = {
        "self_sym_sizes": "self_sym_sizes",
        "output_size": derived("cfg", lambda cfg: tuple(len(taps[0][0]) for taps in cfg))}
    for i, axis in enumerate(axes):
        names[f"scales{axis}"] = derived("cfg", _scale_reader(i))
    if "Nearest" not in node:
        names["align_corners"] = derived("cfg", lambda cfg: getattr(cfg, "align_corners", None))
    return names


interpolation: dict[str, tuple[Op, Op]] = {
    node: linear_pair("upsample", _interp_forward, _interp_adjoint, node,
                      node.replace("Backward0", "BackwardBackward0"), saved=_interp_names(node))
    for node in INTERP_NODES
}


# -- 3-D pools and max_unpool: the 2-D kernels generalised to any number of spatial dims --------


avg_pool3d, avg_pool3d_backward = linear_pair("avg_pool3d", _batched(_avg_pool, 3),
                                              _batched_adjoint(_avg_pool_adjoint, 3),
                                              "AvgPool3DBackward0", "AvgPool3DBackwardBackward0", keeps_input=True,
                                              saved=_AVG_POOL_NAMES)


def _adaptive_avg_pool3d(x: np.ndarray, out: tuple[int, int, int]) -> np.ndarray:
    pd, ph, pw = (_averaging_matrix(n, o, x.dtype) for n, o in zip(x.shape[-3:], out, strict=False))
    return np.einsum("...dhw,ad,bh,cw->...abc", x, pd, ph, pw).astype(x.dtype, copy=False)  # type: ignore[no-any-return]


def _adaptive_avg_pool3d_adjoint(g: np.ndarray, out: tuple[int, int, int], shape: tuple[int, ...]) -> np.ndarray:
    pd, ph, pw = (_averaging_matrix(n, o, g.dtype) for n, o in zip(shape[-3:], out, strict=False))
    return np.einsum("...abc,ad,bh,cw->...dhw", g, pd, ph, pw).astype(g.dtype, copy=False)  # type: ignore[no-any-return]


adaptive_avg_pool3d, adaptive_avg_pool3d_backward = linear_pair(
    "adaptive_avg_pool3d", _adaptive_avg_pool3d, _adaptive_avg_pool3d_adjoint,
    "AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0", keeps_input=True, saved={"self": "self"})


def _flat_strides(size: Sequence[int]) -> list[int]:
    """Row-major element strides of a ``size`` volume."""
    return [prod(size[i + 1:]) for i in range(len(size))]


def _max_pool_nd(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
                 dilation: tuple[int, ...], out: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``_max_pool2d`` for any number of spatial dims: the values and the flat index of each maximum."""
    nd = len(kernel)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    size = xb.shape[2:]
    place = _flat_strides(size)
    win = im2col_windows(xb, kernel, stride, _sym(padding), dilation, out, _lowest(x.dtype), kernel_last=True)
    flat = win.reshape(xb.shape[:2] + tuple(out) + (prod(kernel),))
    arg = _argmax_last(flat)
    values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    origin: Any = 0
    offsets: Any = 0
    for axis in range(nd):
        origin = origin + _axis_grid((np.arange(out[axis]) * stride[axis] - padding[axis]) * place[axis], axis, nd)
        offsets = offsets + _axis_grid(np.arange(kernel[axis]) * (dilation[axis] * place[axis]), axis, nd)
    indices = origin + np.ravel(offsets)[arg]
    lowest = _lowest(x.dtype)
    if xb.size and (values == lowest).any():
        # Windows whose real elements all equal the padding value: PyTorch keeps the first real one.
        first: Any = 0
        for axis in range(nd):
            start = np.arange(out[axis]) * stride[axis] - padding[axis]
            first = first + _axis_grid(_first_inside(start, dilation[axis]) * place[axis], axis, nd)
        indices = np.where(values == lowest, first, indices)
    if not batched:
        return values[0], indices[0]
    return values, indices


def _volume_gather(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``_plane_gather`` over the last three dims (flat D * H * W indices)."""
    return _plane_gather(x.reshape(x.shape[:-3] + (x.shape[-3] * x.shape[-2], x.shape[-1])), index)


def _volume_scatter(g: np.ndarray, index: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    plane = tuple(shape[:-3]) + (shape[-3] * shape[-2], shape[-1])
    return _plane_scatter(g, index, plane).reshape(shape)


volume_gather, volume_scatter = linear_pair("volume_gather", _volume_gather, _volume_scatter, "GatherBackward0",
                                            "MaxPool3DWithIndicesBackwardBackward0")
adaptive_volume_gather, adaptive_volume_scatter = linear_pair(
    "volume_gather", _volume_gather, _volume_scatter, "GatherBackward0", "AdaptiveMaxPool3DBackwardBackward0")


max_pool3d = Op("max_pool3d_with_indices", _max_pool_nd, node="MaxPool3DWithIndicesBackward0",
                params=("kernel", "stride", "padding", "dilation", "out"), outputs=2,
                differentiable_outputs=(True, False),
                grads=(lambda grad, result1, self: apply(volume_scatter, (grad[0], result1._data, tuple(self.shape))),),
                saved=_MAX_POOL_NAMES, jvp="transpose")


def _adaptive_max_pool3d(x: np.ndarray, out: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    size = x.shape[-3:]
    if not all(out):
        return np.empty(x.shape[:-3] + tuple(out), x.dtype), np.empty(x.shape[:-3] + tuple(out), np.int64)
    place = _flat_strides(size)
    gathers = [adaptive_gather(n, o) for n, o in zip(size, out, strict=False)]
    flat_index: Any = 0
    for axis, g in enumerate(gathers):  # (od, oh, ow, kd, kh, kw)
        shape = [1] * 6
        shape[axis], shape[3 + axis] = g.shape
        flat_index = flat_index + (g * place[axis]).reshape(shape)
    flat_index = flat_index.reshape(tuple(out) + (-1,))
    values = x.reshape(x.shape[:-3] + (-1,))[..., flat_index]
    arg = _argmax_last(values)
    best = np.take_along_axis(values, arg[..., None], axis=-1)[..., 0]
    indices = np.take_along_axis(np.broadcast_to(flat_index, values.shape), arg[..., None], axis=-1)[..., 0]
    return best, indices.astype(np.int64)


adaptive_max_pool3d = Op("adaptive_max_pool3d", _adaptive_max_pool3d, node="AdaptiveMaxPool3DBackward0",
                         params=("out",), outputs=2, differentiable_outputs=(True, False),
                         grads=(lambda grad, result1, self: apply(
                             adaptive_volume_scatter, (grad[0], result1._data, tuple(self.shape))),), jvp="transpose")


# max_unpool{2,3}d: zeros of the output size with each value written at its flat index over the
# last ``spatial`` dims; its adjoint (the backward) gathers there.


def _unpool(x: np.ndarray, indices: Any, size: tuple[int, ...]) -> np.ndarray:
    indices = _array(indices)
    lead = x.shape[:x.ndim - len(size)]
    volume = prod(size)
    rows = prod(lead)
    out = np.zeros((rows, volume), x.dtype)
    idx = indices.reshape(rows, -1)
    if idx.size and (idx.min() < 0 or idx.max() >= volume):
        bad = idx[(idx < 0) | (idx >= volume)][0]
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in size)})")
    # (repeated indices: the last write wins, as PyTorch's serial CPU loop)
    out[np.arange(rows)[:, None], idx] = x.reshape(rows, -1)
    return out.reshape(lead + tuple(size))


def _unpool_gather(g: np.ndarray, indices: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    lead = g.shape[:g.ndim - len(size)]
    flat = g.reshape(lead + (-1,))
    return np.take_along_axis(flat, indices.reshape(lead + (-1,)), axis=-1).reshape(indices.shape)


def unpool_backward(grad: Tensor, indices: np.ndarray, output_size: tuple[int, ...]) -> Tensor:
    """The gradient of ``max_unpool``: ``grad`` read at the flat ``indices``."""
    return apply(unpool_gather, (grad, indices, output_size))  # type: ignore[no-any-return]


_unpool_scatter_ops: dict[int, Op] = {}
unpool_gather = Op("max_unpool_gather", _unpool_gather, node="GatherBackward0", params=("indices", "size"),
                   grads=(lambda grad, indices, size: apply(_unpool_scatter_ops[len(size)], (grad, indices, size)),),
                   jvp="transpose")
# The indices are read again by backward: a tensor given there is kept with its version
# (``versioned=``), as PyTorch's.
_unpool_scatter_ops.update({
    nd: Op(f"max_unpool{nd}d", _unpool, node=f"MaxUnpool{nd}DBackward0", params=("indices", "size"),
           grads=(lambda grad, indices, size: unpool_backward(grad, _array(indices), size),), jvp="linear",
           versioned=("indices",))
    for nd in (2, 3)
})
max_unpool2d = _unpool_scatter_ops[2]
max_unpool3d = _unpool_scatter_ops[3]


# -- affine_grid: the base grid of normalised coordinates times each affine matrix ------------------


def affine_base_grid(size: Sequence[int], align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """(prod(spatial), nd + 1) rows (x, y[, z], 1) of the normalised output coordinates, x fastest."""
    spatial = list(size[2:])
    axes = []
    for n in spatial:
        if n <= 1:
            axes.append(np.zeros(max(n, 0), dtype))
        else:
            line = np.linspace(-1.0, 1.0, n, dtype=dtype)
            axes.append(line if align_corners else line * dtype.type((n - 1) / n))
    mesh = np.meshgrid(*axes, indexing="ij")  # (D,) H, W
    columns = [m.reshape(-1) for m in reversed(mesh)]  # x (W) first
    columns.append(np.ones(prod(spatial), dtype))
    return np.stack(columns, axis=-1)


def _affine_grid(theta: np.ndarray, size: tuple[int, ...], align_corners: bool) -> np.ndarray:
    base = affine_base_grid(size, align_corners, theta.dtype)
    out = np.matmul(base, theta.swapaxes(1, 2))  # (N, prod(spatial), nd)
    return out.reshape((size[0],) + tuple(size[2:]) + (len(size) - 2,))  # type: ignore[no-any-return]


def _affine_grid_grad(grad: Tensor, size: tuple[int, ...], align_corners: bool) -> Tensor:
    base = Tensor._make(affine_base_grid(size, align_corners, grad._data.dtype))
    nd = len(size) - 2
    return grad.reshape(size[0], -1, nd).transpose(1, 2) @ base  # type: ignore[no-any-return]


affine_grid_generator = Op("affine_grid_generator", _affine_grid, node="AffineGridGeneratorBackward0",
                           params=("size", "align_corners"), grads=(_affine_grid_grad,), jvp="transpose")
