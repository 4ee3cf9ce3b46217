"""Complex tensors: the views between a complex tensor and its real pairs (``view_as_real``,
``view_as_complex``; ``real``/``imag`` are selects of the former, as in PyTorch), conjugation,
and the constructors from real parts (``complex``, ``polar``).

Gradients follow PyTorch's convention: the gradient of a real loss with respect to a complex
input is the conjugate Wirtinger derivative ``dL/dx + i dL/dy``, so a linear map's rule is its
adjoint (conjugate transpose) and a holomorphic ``f``'s rule is ``grad * conj(f'(z))``.

``conj`` is materialised: NumPy has no conjugate bit, so ``conj()`` returns a conjugated copy
(``is_conj()`` is always False and ``resolve_conj()`` returns the tensor itself, which keeps the
two consistent); PyTorch's returns a lazy view that writes through to its input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..tensor import Tensor
from .op import Op, apply
from .shape import select

_REAL_OF: dict[np.dtype, np.dtype] = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _view_as_real(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    # A view (..., 2) of the same memory: the pairs of each complex number.
    return x[..., None].view(_REAL_OF[x.dtype])


def _view_as_complex(x: np.ndarray) -> np.ndarray:
    if x.dtype not in _COMPLEX_OF:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {scalar_type_name(x.dtype)}")
    if x.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = x.itemsize
    if x.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s, n in zip(x.strides[:-1], x.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    offset = x.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset % (2 * item):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return x.view(_COMPLEX_OF[x.dtype])[..., 0]


view_as_complex: Op
view_as_real = Op("view_as_real", _view_as_real, node="ViewAsRealBackward0", view=True,
                  grads=(lambda grad: view_as_complex(grad.contiguous()),), jvp="linear")
view_as_complex = Op("view_as_complex", _view_as_complex, node="ViewAsComplexBackward0", view=True,
                     grads=(lambda grad: view_as_real(grad),), jvp="linear")


def _conj(x: np.ndarray) -> np.ndarray:
    return np.conjugate(x)


conj_physical: Op
conj: Op
conj_physical = Op("conj_physical", _conj, node="ConjPhysicalBackward0", grads=(lambda grad: conj_physical(grad),),
                   jvp="linear")
conj = Op("conj", _conj, node="ConjBackward0", grads=(lambda grad: conj(grad),), jvp="linear")


def _check_real_pair(kernel: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype not in _COMPLEX_OF or b.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a.dtype)} but got scalar type "
                           f"{scalar_type_name(b.dtype)} for second argument")


def _complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    _check_real_pair("complex", real, imag)
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape), _COMPLEX_OF[real.dtype])
    out.real, out.imag = real, imag
    return out


def _polar(magnitude: np.ndarray, angle: np.ndarray) -> np.ndarray:
    _check_real_pair("polar", magnitude, angle)
    out = np.empty(np.broadcast_shapes(magnitude.shape, angle.shape), _COMPLEX_OF[magnitude.dtype])
    out.real, out.imag = magnitude * np.cos(angle), magnitude * np.sin(angle)
    return out


def _polar_grads(grad: Any, abs: Any, angle: Any, result: Any, needs: Any) -> tuple[Any, Any]:  # noqa: A002
    # result = abs * e^{i angle}: d/d abs is e^{i angle}, d/d angle is i * result (both real inputs)
    unit = complex_op(angle.cos(), angle.sin())
    return (real(grad * unit.conj()) if needs[0] else None,
            real(grad * (result * 1j).conj()) if needs[1] else None)


complex_op = Op("complex", _complex, node="ComplexBackward0", inputs=("real", "imag"),
                grads=(lambda grad: real(grad), lambda grad: imag(grad)), jvp="transpose")
polar = Op("polar", _polar, node="PolarBackward0", inputs=("abs", "angle"), grads=_polar_grads, jvp="transpose")


def real(x: Tensor) -> Tensor:
    """The real part: a view that can be written through (the tensor itself for a real tensor).

    >>> import retrograd as rg
    >>> real(rg.tensor([1 + 2j]))
    tensor([1.])
    """
    if x._data.dtype.kind != "c":
        return x
    return select(apply(view_as_real, (x,)), -1, 0)  # type: ignore[no-any-return]


def imag(x: Tensor) -> Tensor:
    """The imaginary part: a view that can be written through (complex tensors only).

    >>> import retrograd as rg
    >>> imag(rg.tensor([1 + 2j]))
    tensor([2.])
    """
    if x._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(apply(view_as_real, (x,)), -1, 1)  # type: ignore[no-any-return]
