"""``fractional_max_pool2d`` / ``fractional_max_pool3d`` (Graham, "Fractional Max-Pooling"): max
pooling whose window starts are pseudo-random per batch element and plane, drawn from one sample
in [0, 1) per spatial axis (``_random_samples``). The starts follow PyTorch's
``generate_intervals`` in the input's own precision (float32 rounding picks different windows
than float64 would), so the same samples give PyTorch's windows. Values and flat indices like
the other max pools; the backward scatters to the indices (``ops/conv.py``'s plane/volume pairs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import conv as _C
from .op import Op, apply


def _starts(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """(N, C, out) window starts along one axis from (N, C) samples, in the samples' precision."""
    dtype = samples.dtype.type
    seq = np.empty(samples.shape + (out,), np.int64)
    if out > 1:
        alpha = dtype(size - pool) / dtype(out - 1)
        i = np.arange(out - 1).astype(samples.dtype)
        # (truncation toward zero, as C++'s static_cast<int>)
        seq[..., :-1] = (np.trunc((i + samples[..., None]) * alpha).astype(np.int64)
                         - np.trunc(samples * alpha).astype(np.int64)[..., None])
    if out > 0:
        seq[..., -1] = size - pool
    return seq


def _fractional_max_pool(x: np.ndarray, kernel: tuple[int, ...], out: tuple[int, ...],
                         samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    nd = len(kernel)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    n, c = xb.shape[:2]
    size = xb.shape[2:]
    place = _C._flat_strides(size)
    # sample k of a plane serves axis k of (D,) H, W in 3-D, but W then H in 2-D
    axis_sample = [1, 0] if nd == 2 else [0, 1, 2]
    s = samples[:n]
    starts = [_starts(s[..., axis_sample[a]], size[a], out[a], kernel[a]) for a in range(nd)]
    # flat index of each window element: (N, C, *out, *kernel)
    shape = (n, c) + tuple(out) + tuple(kernel)
    flat: Any = np.zeros(shape, np.int64)
    origin: Any = np.zeros((n, c) + tuple(out), np.int64)
    for a in range(nd):
        lead = [1] * nd
        lead[a] = out[a]
        tail = [1] * nd
        tail[a] = kernel[a]
        start = starts[a].reshape((n, c) + tuple(lead))
        origin = origin + start * place[a]
        flat = flat + (start.reshape(start.shape + (1,) * nd)
                       + np.arange(kernel[a]).reshape(tail)) * place[a]
    windows = int(np.prod(kernel))
    flat = flat.reshape((n, c) + tuple(out) + (windows,))
    if windows == 0 or flat.size == 0:
        # an empty window keeps PyTorch's initial -inf and the window's origin
        values = np.full((n, c) + tuple(out), -np.inf, x.dtype)
        indices = origin
    else:
        planes = xb.reshape(n, c, -1) if xb.size else xb.reshape(n, c, int(np.prod(size)))
        gathered = np.take_along_axis(planes, flat.reshape(n, c, -1), axis=2).reshape(flat.shape)
        arg = _C._argmax_last(gathered)
        values = np.take_along_axis(gathered, arg[..., None], axis=-1)[..., 0]
        indices = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    if not batched:
        return values[0], indices[0]
    return values, indices


# Their own scatter/gather pairs, for PyTorch's double-backward node names.
_plane_gather, _plane_scatter = _C.linear_pair("plane_gather", _C._plane_gather, _C._plane_scatter,
                                               "GatherBackward0", "FractionalMaxPool2DBackwardBackward0")
_volume_gather, _volume_scatter = _C.linear_pair("volume_gather", _C._volume_gather, _C._volume_scatter,
                                                 "GatherBackward0", "FractionalMaxPool3DBackwardBackward0")


def _scatter_rule(scatter: Op) -> Any:
    # (``self`` itself, not its shape: PyTorch's node keeps ``_saved_self``)
    def rule(grad: Any, self: Any, result1: Any) -> Any:
        return apply(scatter, (grad[0], result1._data, tuple(self.shape)))

    return rule


fractional_max_pool2d = Op("fractional_max_pool2d", _fractional_max_pool, node="FractionalMaxPool2DBackward0",
                           params=("kernel_size", "output_size", "random_samples"), outputs=2,
                           differentiable_outputs=(True, False), grads=(_scatter_rule(_plane_scatter),),
                           saved=("kernel_size", "output_size", "result1", "self"), jvp="transpose")
fractional_max_pool3d = Op("fractional_max_pool3d", _fractional_max_pool, node="FractionalMaxPool3DBackward0",
                           params=("kernel_size", "output_size", "random_samples"), outputs=2,
                           differentiable_outputs=(True, False), grads=(_scatter_rule(_volume_scatter),),
                           saved=("kernel_size", "output_size", "result1", "self"), jvp="transpose")
