"""``grid_sampler_2d`` / ``grid_sampler_3d``: sampling an (N, C, *spatial) input at the normalised
coordinates of a grid (``F.grid_sample``), bilinear/trilinear, nearest or bicubic, with zeros,
border or reflection padding.

Every mode is one sum over a fixed set of taps: ``out[n, c, p] = sum_t W[n, t, p] *
input[n, c, I[n, t, p]]``, where the flat spatial indices ``I`` (and which taps fall outside the
input) are piecewise constant in the grid and the weights ``W`` are products, over the spatial
axes, of polynomials in the fractional part ``f`` of each source coordinate. The source coordinate
is piecewise affine in the grid (unnormalising, clipping and reflecting only scale, shift or flip
it), so ``f = slope * g + const`` with ``slope`` fixed by the forward: PyTorch's
``*_set_grad`` convention, including a zero slope where a clipped coordinate sits on the border.

The backward rules are written in retrograd's ops on that decomposition (a gather/scatter pair
for the taps, arithmetic for the weights), so gradients of any order follow."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np

from ..tensor import Tensor
from .op import Op, apply

_make = Tensor._make

# PyTorch's bicubic convolution constant (``get_cubic_upsampling_coefficients``).
_A = -0.75


def _cubic1(x: Any) -> Any:
    return ((_A + 2) * x - (_A + 3)) * x * x + 1


def _cubic2(x: Any) -> Any:
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A


def _cubic1_d(x: Any) -> Any:
    return (3 * (_A + 2) * x - 2 * (_A + 3)) * x


def _cubic2_d(x: Any) -> Any:
    return (3 * _A * x - 10 * _A) * x + 8 * _A


# Per-axis tap weights as polynomials in the fraction ``f`` (arrays or tensors alike), and their
# derivatives in ``f``; ``None`` is the constant 1 of nearest sampling.
def _weights(mode: int, f: Any) -> list[Any]:
    if mode == 0:
        return [1 - f, f]
    if mode == 1:
        return [None]
    return [_cubic2(f + 1), _cubic1(f), _cubic1(1 - f), _cubic2(2 - f)]


def _weight_derivatives(mode: int, f: Any) -> list[Any]:
    if mode == 0:
        return [-1.0, 1.0]
    return [_cubic2_d(f + 1), _cubic1_d(f), -_cubic1_d(1 - f), -_cubic2_d(2 - f)]


def _unnormalize(g: np.ndarray, size: int, align_corners: bool) -> tuple[np.ndarray, float]:
    if align_corners:
        return (g + 1) / 2 * (size - 1), (size - 1) / 2
    return ((g + 1) * size - 1) / 2, size / 2


def _clip(s: np.ndarray, slope: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    # (the border counts as outside for the slope, as in PyTorch's clip_coordinates_set_grad)
    slope = np.where((s <= 0) | (s >= size - 1), 0, slope)
    return np.clip(s, 0, size - 1), slope


def _reflect(s: np.ndarray, slope: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    if twice_low == twice_high:
        return np.zeros_like(s), np.zeros_like(slope)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = s - low
    sign = np.where(x < 0, -1.0, 1.0)
    x = np.abs(x)
    extra = np.fmod(x, span)
    odd = np.floor(x / span) % 2 == 1
    return np.where(odd, span - extra + low, extra + low), slope * np.where(odd, -sign, sign)


def _pad(s: np.ndarray, slope: np.ndarray, size: int, padding_mode: int,
         align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """A source coordinate mapped into the input by the padding mode, with its slope."""
    if padding_mode == 2:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        s, slope = _reflect(s, slope, *twice)
    if padding_mode:
        s, slope = _clip(s, slope, size)
    return s, slope


def _index(s: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer positions (inf/nan and far-out values made -1) and whether each lies in [0, size)."""
    inside = np.isfinite(s) & (s > -2) & (s < size + 1)
    index = np.where(inside, s, -1).astype(np.int64)
    return index, (index >= 0) & (index < size)


def _axis_taps(g: np.ndarray, size: int, mode: int, padding_mode: int,
               align_corners: bool) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """One spatial axis: each tap's index and validity, the fraction f and d f / d grid."""
    s, scale = _unnormalize(g, size, align_corners)
    slope = np.full_like(s, scale)
    if mode != 2:  # bilinear, nearest: the coordinate itself is padded
        s, slope = _pad(s, slope, size, padding_mode, align_corners)
    if mode == 1:
        index, valid = _index(np.rint(s), size)
        return [index], [valid], np.zeros_like(s), slope
    base = np.floor(s)
    frac = s - base
    if mode == 0:
        taps = [base, base + 1]
    else:  # bicubic pads each of its four taps instead (PyTorch's get_value_bounded)
        taps = [_pad(base + k, slope, size, padding_mode, align_corners)[0] for k in (-1, 0, 1, 2)]
    indices, valids = zip(*(_index(t, size) for t in taps), strict=True)
    return list(indices), list(valids), frac, slope


def _plan(grid: np.ndarray, spatial: Sequence[int], mode: int, padding_mode: int,
          align_corners: bool) -> tuple[np.ndarray, np.ndarray, list[Any], list[Any], list[tuple[int, ...]]]:
    """The taps' flat indices (N, T, P) and validity, per axis (D, H, W order) the fraction and
    slope (N, P), and each tap's per-axis tap numbers."""
    nd = len(spatial)
    n = grid.shape[0]
    flat = grid.reshape(n, int(np.prod(grid.shape[1:-1])), nd)
    axes = [_axis_taps(flat[..., nd - 1 - a], spatial[a], mode, padding_mode, align_corners) for a in range(nd)]
    strides = [int(np.prod(spatial[a + 1:])) for a in range(nd)]
    combos = list(product(*(range(len(ax[0])) for ax in axes)))
    index = np.stack([sum(axes[a][0][k[a]] * strides[a] for a in range(nd)) for k in combos], axis=1)
    valid = np.stack([np.logical_and.reduce([axes[a][1][k[a]] for a in range(nd)]) for k in combos], axis=1)
    index = np.where(valid, index, 0)
    return index, valid, [ax[2] for ax in axes], [ax[3] for ax in axes], combos


def _tap_weights(mode: int, fracs: list[Any], valid: Any, combos: list[tuple[int, ...]],
                 stack: Any) -> Any:
    """(N, T, P) weights: the product of the axes' weights, zero for taps outside the input."""
    per_axis = [_weights(mode, f) for f in fracs]
    columns = []
    for k in combos:
        w: Any = None
        for a, tap in enumerate(k):
            factor = per_axis[a][tap]
            if factor is not None:
                w = factor if w is None else w * factor
        columns.append(w)
    if columns[0] is None:  # nearest: the weight is validity alone
        return valid
    return stack(columns) * valid


def _grid_sampler(x: np.ndarray, grid: np.ndarray, mode: int, padding_mode: int,
                  align_corners: bool) -> np.ndarray:
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    out_spatial = grid.shape[1:-1]
    index, valid, fracs, _, combos = _plan(grid, spatial, mode, padding_mode, align_corners)
    weights = _tap_weights(mode, fracs, valid, combos, lambda cols: np.stack(cols, axis=1)).astype(x.dtype)
    taps, points = index.shape[1:]
    values = np.take_along_axis(x.reshape(n, c, int(np.prod(spatial))), index.reshape(n, 1, taps * points), axis=2)
    values = values.reshape(n, c, taps, points)
    out = np.einsum("nctp,ntp->ncp", values, weights)
    return out.reshape((n, c) + tuple(out_spatial))


# -- the taps' gather and its adjoint, a scatter (each one's backward is the other) ----------------


def _gather(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """x (N, C, S), index (N, K) -> (N, C, K)."""
    return np.take_along_axis(x, index[:, None, :], axis=2)


def _scatter(g: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """Adjoint of ``_gather``: zeros (N, C, size) with g (N, C, K) added at index (N, K)."""
    n, c, _ = g.shape
    target = (np.arange(n)[:, None, None] * (c * size) + np.arange(c)[None, :, None] * size
              + index[:, None, :]).reshape(-1)
    summed = np.bincount(target, weights=g.reshape(-1), minlength=n * c * size)
    return summed.astype(g.dtype, copy=False).reshape(n, c, size)


_scatter_op: Op
tap_gather = Op("grid_sampler_gather", _gather, node="GatherBackward0", params=("index",),
                grads=(lambda grad, index, self_shape: apply(_scatter_op, (grad, index, self_shape[2])),),
                jvp="transpose")
_scatter_op = Op("grid_sampler_scatter", _scatter, node="ScatterAddBackward0", params=("index", "size"),
                 grads=(lambda grad, index: apply(tap_gather, (grad, index)),), jvp="transpose")


# -- the rules ------------------------------------------------------------------------------------


def _fractions(grid: Tensor, fracs: list[np.ndarray], slopes: list[np.ndarray]) -> list[Tensor]:
    """Each axis' fraction as a tensor of ``grid``: the forward's value, d/d grid = the slope."""
    nd = grid.shape[-1]
    flat = grid.reshape(grid.shape[0], int(np.prod(grid.shape[1:-1])), nd)
    out = []
    for a, (f, slope) in enumerate(zip(fracs, slopes, strict=True)):
        g = flat[..., nd - 1 - a]
        out.append((g - g.detach()) * _make(slope.astype(grid._data.dtype)) + _make(f.astype(grid._data.dtype)))
    return out


def _stack(columns: list[Tensor], dim: int = 1) -> Tensor:
    from .shape import stack

    return apply(stack, (*columns, dim))  # type: ignore[no-any-return]


def _input_grad(grad: Tensor, grid: Tensor, input_shape: tuple[int, ...], interpolation_mode: int,
                padding_mode: int, align_corners: bool) -> Tensor:
    n, c = input_shape[:2]
    index, valid, fracs, slopes, combos = _plan(grid._data, input_shape[2:], interpolation_mode, padding_mode,
                                                align_corners)
    valid_t = _make(valid.astype(grid._data.dtype))
    weights = _tap_weights(interpolation_mode, _fractions(grid, fracs, slopes), valid_t, combos, _stack)
    taps, points = index.shape[1:]
    g = grad.reshape(n, c, 1, points) * weights.unsqueeze(1)  # (N, C, T, P)
    size = int(np.prod(input_shape[2:]))
    flat = apply(_scatter_op, (g.reshape(n, c, taps * points), index.reshape(n, taps * points), size))
    return flat.reshape(input_shape)  # type: ignore[no-any-return]


def _grid_grad(grad: Tensor, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
               align_corners: bool) -> Tensor:
    if interpolation_mode == 1:  # nearest: piecewise constant in the grid
        return _make(np.zeros(grid.shape, grid._data.dtype))
    n, c = input.shape[:2]
    index, valid, fracs, slopes, combos = _plan(grid._data, input.shape[2:], interpolation_mode, padding_mode,
                                                align_corners)
    taps, points = index.shape[1:]
    flat = input.reshape(n, c, int(np.prod(input.shape[2:])))
    values = apply(tap_gather, (flat, index.reshape(n, taps * points))).reshape(n, c, taps, points)
    weighted = (grad.reshape(n, c, 1, points) * values).sum(1)  # (N, T, P): d loss / d weight
    dtype = grid._data.dtype
    f = _fractions(grid, fracs, slopes)
    weights = [_weights(interpolation_mode, fa) for fa in f]
    derivatives = [_weight_derivatives(interpolation_mode, fa) for fa in f]
    valid_t = _make(valid.astype(dtype))
    nd = len(f)
    per_axis = []
    for a in range(nd):
        columns = []
        for k in combos:
            w: Any = 1.0
            for b, tap in enumerate(k):
                w = w * (derivatives[b][tap] if b == a else weights[b][tap])
            if not isinstance(w, Tensor):
                w = _make(np.full(f[a].shape, w, dtype))
            columns.append(w)
        dw = _stack(columns) * valid_t  # (N, T, P): d weight / d fraction of axis a
        per_axis.append((weighted * dw).sum(1) * _make(slopes[a].astype(dtype)))
    # the grid's last dim is (x, y[, z]): the axes in reverse
    out = _stack(per_axis[::-1], -1)
    return out.reshape(grid.shape)  # type: ignore[no-any-return]


def _names(nd: int) -> tuple[str, str]:
    return f"grid_sampler_{nd}d", f"GridSampler{nd}DBackward0"


grid_sampler_2d, grid_sampler_3d = (
    Op(_names(nd)[0], _grid_sampler, node=_names(nd)[1], inputs=("input", "grid"),
       params=("interpolation_mode", "padding_mode", "align_corners"), grads=(_input_grad, _grid_grad), jvp="transpose")
    for nd in (2, 3)
)
