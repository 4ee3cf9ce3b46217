"""The discrete Fourier transforms under PyTorch's three node names (``retrograd.fft`` composes
them as PyTorch does): ``_fft_c2c`` (complex to complex), ``_fft_r2c`` (real to complex, the full
spectrum or its one-sided half) and ``_fft_c2r`` (a one-sided half back to a real signal).

Each takes ``normalization`` as PyTorch's enum (0 none, 1 by 1/sqrt(n), 2 by 1/n), whatever the
direction, so a transform's adjoint is the transform the other way with the same scale:
``c2c``'s is ``c2c`` reversed; ``r2c``'s pads the half spectrum back with zeros, then takes the real
part of the reversed ``c2c``; ``c2r``'s is ``r2c`` with the bins that stand for two doubled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .op import Op

_COMPLEX_OF: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}

# NumPy's ``norm=`` strings that give each scale, for a forward (-i) and a backward (+i) transform.
_NUMPY_NORM: dict[bool, tuple[Any, ...]] = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}

_fft_c2c: Op
_fft_r2c: Op
_fft_c2r: Op


def _c2c(x: np.ndarray, dims: tuple[int, ...], normalization: int, forward: bool) -> np.ndarray:
    transform = np.fft.fftn if forward else np.fft.ifftn
    return np.asarray(transform(x, axes=dims, norm=_NUMPY_NORM[forward][normalization]), dtype=x.dtype)


def _r2c(x: np.ndarray, dims: tuple[int, ...], normalization: int, onesided: bool) -> np.ndarray:
    norm = _NUMPY_NORM[True][normalization]
    out = np.fft.rfftn(x, axes=dims, norm=norm) if onesided else np.fft.fftn(x, axes=dims, norm=norm)
    return np.asarray(out, dtype=_COMPLEX_OF[x.dtype])


def _c2r(x: np.ndarray, dims: tuple[int, ...], normalization: int, last_dim_size: int) -> np.ndarray:
    sizes = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    out = np.fft.irfftn(x, s=sizes, axes=dims, norm=_NUMPY_NORM[False][normalization])
    return np.asarray(out, dtype=x.real.dtype)


def _r2c_grad(grad: Any, self_shape: tuple[int, ...], dims: tuple[int, ...], normalization: int,
              onesided: bool) -> Any:
    if onesided:  # the half spectrum is the full one's first bins: its adjoint pads with zeros
        last = dims[-1]
        missing = self_shape[last] - grad.shape[last]
        if missing > 0:  # (constant_pad_nd's order: last dim (left, right), then the one before...)
            grad = _pad(grad, tuple([0, 0] * (grad.dim() - 1 - last) + [0, missing]))
    return _fft_c2c(grad, dims, normalization, False).real


def _pad(grad: Any, pad: tuple[int, ...]) -> Any:
    from .nn import constant_pad_nd
    from .op import apply

    return apply(constant_pad_nd, (grad, pad, 0))


def _c2r_grad(grad: Any, self_shape: tuple[int, ...], dims: tuple[int, ...], normalization: int) -> Any:
    half = _fft_r2c(grad, dims, normalization, True)
    last = dims[-1]
    doubled = grad.shape[last] - half.shape[last]  # the bins other than 0 (and n/2) stand for two
    if doubled > 0:
        scale = np.ones(half.shape[last], half._data.real.dtype)
        scale[1:1 + doubled] = 2
        half = half * _column(scale, half.dim(), last)
    return half


def _column(values: np.ndarray, ndim: int, dim: int) -> Any:
    from ..tensor import Tensor

    shape = [1] * ndim
    shape[dim] = values.size
    return Tensor._make(values.reshape(shape))


_fft_c2c = Op("_fft_c2c", _c2c, node="FftC2CBackward0", params=("dim", "normalization", "forward"),
              grads=(lambda grad, dim, normalization, forward: _fft_c2c(grad, dim, normalization, not forward),),
              jvp="linear")
_fft_r2c = Op("_fft_r2c", _r2c, node="FftR2CBackward0", params=("dim", "normalization", "onesided"),
              grads=(lambda grad, self_shape, dim, normalization, onesided:
                     _r2c_grad(grad, self_shape, dim, normalization, onesided),), jvp="linear")
_fft_c2r = Op("_fft_c2r", _c2r, node="FftC2RBackward0", params=("dim", "normalization", "last_dim_size"),
              grads=(lambda grad, self_shape, dim, normalization: _c2r_grad(grad, self_shape, dim, normalization),),
              jvp="linear")
