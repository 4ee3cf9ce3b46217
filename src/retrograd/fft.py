"""``retrograd.fft``: PyTorch's ``torch.fft`` (discrete Fourier transforms and their helpers).

Composed as PyTorch composes them, so the ``grad_fn`` chain matches: an input resized to ``n``
(``s``) is sliced or zero-padded first, real inputs of the complex transforms are made complex
(``fftn``) or go through ``_fft_r2c`` (``fft``), and the inverse transforms of real inputs end in a
conjugation. The transforms' gradients are their adjoints (``ops/fft.py``). ``norm`` is
``"backward"`` (the default: the inverse transforms scale by 1/n), ``"ortho"`` (both by 1/sqrt(n))
or ``"forward"`` (the forward ones by 1/n). float32 inputs give complex64, float64 complex128,
integers the default dtype's complex type.

>>> import retrograd as rg
>>> rg.fft.fft(rg.tensor([1., 2., 3., 4.]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtype
from .ops import fft as _ops
from .ops.nn import constant_pad_nd as _constant_pad_nd
from .ops.op import apply
from .ops.reduce import normalize_dim
from .ops.shape import roll as _roll
from .tensor import Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]


def _normalization(norm: str | None, forward: bool) -> int:
    """PyTorch's enum for a ``norm`` string: 0 none, 1 by 1/sqrt(n), 2 by 1/n."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "ortho":
        return 1
    if norm == "forward":
        return 2 if forward else 0
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Any, require_complex: bool, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    kind = x._data.dtype.kind
    if kind in "biu":
        x = x.to(_dtype.get_default_dtype())
    elif x._data.dtype == np.float16:
        raise RuntimeError("Unsupported dtype Half")
    if require_complex and x._data.dtype.kind != "c":
        x = x.to(_dtype.complex128 if x._data.dtype == np.float64 else _dtype.complex64)
    return x


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """Slice or zero-pad ``x`` to ``sizes`` along ``dims`` (PyTorch: slices, then one pad)."""
    pad = [0] * (2 * x.dim())
    padded = False
    for d, n in zip(dims, sizes):
        have = x._data.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            pad[2 * (x.dim() - 1 - d) + 1] = n - have
            padded = True
    if padded:
        while len(pad) > 2 and pad[-1] == 0 and pad[-2] == 0:
            pad = pad[:-2]
        x = apply(_constant_pad_nd, (x, tuple(pad), 0))
    return x


def _one_dim(x: Tensor, n: int | None, dim: int) -> tuple[int, int]:
    d = normalize_dim(dim, x.dim())
    size = x._data.shape[d] if n is None else n
    _check_points(size)
    return d, size


def _dims_and_sizes(x: Tensor, s: Sequence[int] | None, dim: Any) -> tuple[tuple[int, ...], list[int]]:
    ndim = x.dim()
    if dim is not None:
        dims_in = [dim] if isinstance(dim, builtins.int) else list(dim)
        dims = tuple(normalize_dim(d, ndim) for d in dims_in)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        dims = tuple(range(ndim - len(s), ndim))
    else:
        dims = tuple(range(ndim))
    sizes = [x._data.shape[d] if s is None or s[k] == -1 else builtins.int(s[k]) for k, d in enumerate(dims)]
    for n in sizes:
        _check_points(n)
    return dims, sizes


def _real_only(name: str, x: Tensor, real: str = "real") -> None:
    if x._data.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a {real} input tensor, but got {_dtype.scalar_type_name(x._data.dtype)}")


def _c2c_or_r2c(x: Tensor, dims: tuple[int, ...], norm: str | None, forward: bool) -> Tensor:
    if x._data.dtype.kind == "c":
        return _ops._fft_c2c(x, dims, _normalization(norm, forward), forward)  # type: ignore[no-any-return]
    out = _ops._fft_r2c(x, dims, _normalization(norm, forward), False)
    return out if forward else out.conj()  # (a real signal's inverse transform is the conjugate)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The one-dimensional discrete Fourier transform.

    >>> import retrograd as rg
    >>> fft(rg.tensor([1., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    x = _promote(input, False, "fft")
    d, size = _one_dim(x, n, dim)
    return _c2c_or_r2c(_resize(x, (d,), (size,)), (d,), norm, True)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The one-dimensional inverse discrete Fourier transform.

    >>> import retrograd as rg
    >>> ifft(rg.tensor([4 + 0j, 0j, 0j, 0j]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    x = _promote(input, False, "ifft")
    d, size = _one_dim(x, n, dim)
    return _c2c_or_r2c(_resize(x, (d,), (size,)), (d,), norm, False)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequencies.

    >>> import retrograd as rg
    >>> rfft(rg.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    x = _promote(input, False, "rfft")
    _real_only("rfft", x)
    d, size = _one_dim(x, n, dim)
    return _ops._fft_r2c(_resize(x, (d,), (size,)), (d,), _normalization(norm, True), True)  # type: ignore[no-any-return]


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``).

    >>> import retrograd as rg
    >>> irfft(rg.tensor([10+0j, -2+2j, -2+0j]))
    tensor([1., 2., 3., 4.])
    """
    x = _promote(input, True, "irfft")
    d = normalize_dim(dim, x.dim())
    last = 2 * (x._data.shape[d] - 1) if n is None else n
    _check_points(last)
    x = _resize(x, (d,), (last // 2 + 1,))
    return _ops._fft_c2r(x, (d,), _normalization(norm, False), last)  # type: ignore[no-any-return]


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum.

    >>> import retrograd as rg
    >>> hfft(rg.tensor([1+0j, 0j, 0j]))
    tensor([1., 1., 1., 1.])
    """
    x = _promote(input, True, "hfft")
    d = normalize_dim(dim, x.dim())
    last = 2 * (x._data.shape[d] - 1) if n is None else n
    _check_points(last)
    x = _resize(x, (d,), (last // 2 + 1,)).conj()
    return _ops._fft_c2r(x, (d,), _normalization(norm, True), last)  # type: ignore[no-any-return]


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of ``hfft``: the first half of a real signal's inverse transform.

    >>> import retrograd as rg
    >>> ihfft(rg.tensor([1., 1., 1., 1.])).real
    tensor([1., 0., 0.])
    """
    x = _promote(input, False, "ihfft")
    _real_only("ihfft", x)
    d, size = _one_dim(x, n, dim)
    out = _ops._fft_r2c(_resize(x, (d,), (size,)), (d,), _normalization(norm, False), True)
    return out.conj()  # type: ignore[no-any-return]


def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The N-dimensional discrete Fourier transform (over all dims unless ``s``/``dim`` say).

    >>> import retrograd as rg
    >>> fftn(rg.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    x = _promote(input, True, "fftn")
    dims, sizes = _dims_and_sizes(x, s, dim)
    return _ops._fft_c2c(_resize(x, dims, sizes), dims, _normalization(norm, True), True)  # type: ignore[no-any-return]


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The N-dimensional inverse discrete Fourier transform.

    >>> import retrograd as rg
    >>> ifftn(rg.tensor([[4., 0.], [0., 0.]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    x = _promote(input, True, "ifftn")
    dims, sizes = _dims_and_sizes(x, s, dim)
    return _ops._fft_c2c(_resize(x, dims, sizes), dims, _normalization(norm, False), False)  # type: ignore[no-any-return]


def fft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """``fftn`` over the last two dims.

    >>> import retrograd as rg
    >>> fft2(rg.ones(1, 2)).shape
    torch.Size([1, 2])
    """
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """``ifftn`` over the last two dims.

    >>> import retrograd as rg
    >>> ifft2(rg.ones(1, 2)).shape
    torch.Size([1, 2])
    """
    return ifftn(input, s, dim, norm)


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The N-dimensional transform of a real signal, one-sided in the last transformed dim.

    >>> import retrograd as rg
    >>> rfftn(rg.ones(2, 4)).shape
    torch.Size([2, 3])
    """
    x = _promote(input, False, "rfftn")
    _real_only("rfftn", x, "real-valued")
    dims, sizes = _dims_and_sizes(x, s, dim)
    return _ops._fft_r2c(_resize(x, dims, sizes), dims, _normalization(norm, True), True)  # type: ignore[no-any-return]


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of ``rfftn``: a real signal (last transformed dim ``2 * (m - 1)`` unless ``s`` says).

    >>> import retrograd as rg
    >>> irfftn(rfftn(rg.ones(2, 4))).shape
    torch.Size([2, 4])
    """
    x = _promote(input, True, "irfftn")
    dims, sizes = _dims_and_sizes(x, s, dim)
    last = sizes[-1] if s is not None and s[-1] != -1 else 2 * (x._data.shape[dims[-1]] - 1)
    _check_points(last)
    sizes[-1] = last // 2 + 1
    return _ops._fft_c2r(_resize(x, dims, sizes), dims, _normalization(norm, False), last)  # type: ignore[no-any-return]


def rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """``rfftn`` over the last two dims.

    >>> import retrograd as rg
    >>> rfft2(rg.ones(2, 4)).shape
    torch.Size([2, 3])
    """
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """``irfftn`` over the last two dims.

    >>> import retrograd as rg
    >>> irfft2(rfft2(rg.ones(2, 4))).shape
    torch.Size([2, 4])
    """
    return irfftn(input, s, dim, norm)


def _frequencies(values: np.ndarray, scale: float, dtype: Any, requires_grad: bool) -> Tensor:
    np_dtype = _dtype.get_default_dtype().np if dtype is None else _dtype.to_dtype(dtype).np
    out = values.astype(np_dtype) * np.asarray(scale, np_dtype)  # (PyTorch multiplies in the dtype)
    t = Tensor._make(np.asarray(out, np_dtype))
    return t.requires_grad_(requires_grad) if requires_grad else t


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
            **kwargs: Any) -> Tensor:
    """The sample frequencies of ``fft``'s bins, for a signal of ``n`` samples ``d`` apart.

    >>> fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    values = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _frequencies(values, 1.0 / (n * d), dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
             **kwargs: Any) -> Tensor:
    """The sample frequencies of ``rfft``'s bins.

    >>> rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    return _frequencies(np.arange(n // 2 + 1), 1.0 / (n * d), dtype, requires_grad)


def _shift(x: Tensor, dim: Any, inverse: bool) -> Tensor:
    dims = tuple(range(x.dim())) if dim is None else (
        (normalize_dim(dim, x.dim()),) if isinstance(dim, builtins.int) else tuple(normalize_dim(d, x.dim()) for d in dim))
    shifts = tuple((x._data.shape[d] + 1) // 2 if inverse else x._data.shape[d] // 2 for d in dims)
    return _roll(x, shifts, dims)  # type: ignore[no-any-return]


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Move the zero frequency to the centre (a roll by half of each dim).

    >>> import retrograd as rg
    >>> fftshift(fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of ``fftshift``.

    >>> import retrograd as rg
    >>> ifftshift(fftshift(fftfreq(5)))
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
    """
    return _shift(input, dim, True)
