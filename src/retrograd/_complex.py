"""The ``retrograd.*`` functions of complex tensors (``ops/complex.py`` has the ops): the views
``view_as_real``/``view_as_complex``/``real``/``imag``, conjugation, and the constructors
``complex``/``polar``. ``conj`` materialises (see ``ops/complex.py``)."""

from __future__ import annotations

from typing import Any

from .ops import complex as _ops
from .ops.op import apply
from .tensor import Tensor


def _tensor(name: str, value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}")
    return value


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A real view ``(..., 2)`` of a complex tensor, sharing its memory.

    >>> import retrograd as rg
    >>> view_as_real(rg.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    return apply(_ops.view_as_real, (_tensor("view_as_real", input),))  # type: ignore[no-any-return]


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """A complex view of a float tensor whose last dimension holds (real, imaginary) pairs.

    >>> import retrograd as rg
    >>> view_as_complex(rg.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    return apply(_ops.view_as_complex, (_tensor("view_as_complex", input),))  # type: ignore[no-any-return]


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real part, a view (the tensor itself when it is real).

    >>> import retrograd as rg
    >>> real(rg.tensor([1 + 2j]))
    tensor([1.])
    """
    return _ops.real(_tensor("real", input))


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary part, a view (complex tensors only).

    >>> import retrograd as rg
    >>> imag(rg.tensor([1 + 2j]))
    tensor([2.])
    """
    return _ops.imag(_tensor("imag", input))


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate; a conjugated copy, not PyTorch's lazy view (no conjugate bit).

    >>> import retrograd as rg
    >>> conj(rg.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return _tensor("conj", input).conj()


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate, computed (the tensor itself when it is real).

    >>> import retrograd as rg
    >>> conj_physical(rg.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    return _tensor("conj_physical", input).conj_physical()


def conj_physical_(input: Tensor) -> Tensor:  # noqa: A002
    """Conjugate in place.

    >>> import retrograd as rg
    >>> conj_physical_(rg.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    return _tensor("conj_physical_", input).conj_physical_()


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor itself: no tensor carries a conjugate bit.

    >>> import retrograd as rg
    >>> t = rg.tensor([1j]); resolve_conj(t) is t
    True
    """
    return _tensor("resolve_conj", input).resolve_conj()


def is_conj(input: Tensor) -> bool:  # noqa: A002
    """Always False: ``conj`` materialises.

    >>> import retrograd as rg
    >>> is_conj(rg.tensor([1j]).conj())
    False
    """
    return _tensor("is_conj", input).is_conj()


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor itself: no tensor carries a negative bit.

    >>> import retrograd as rg
    >>> t = rg.tensor([1.]); resolve_neg(t) is t
    True
    """
    return _tensor("resolve_neg", input).resolve_neg()


def is_neg(input: Tensor) -> bool:  # noqa: A002
    """Always False: no tensor carries a negative bit.

    >>> import retrograd as rg
    >>> is_neg(rg.tensor([1.]))
    False
    """
    return _tensor("is_neg", input).is_neg()


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """Whether the tensor's dtype is complex.

    >>> import retrograd as rg
    >>> is_complex(rg.tensor([1j])), is_complex(rg.tensor([1.]))
    (True, False)
    """
    return _tensor("is_complex", input).is_complex()


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """The complex tensor ``real + i imag`` (both float or both double).

    >>> import retrograd as rg
    >>> complex(rg.tensor([1.]), rg.tensor([2.]))
    tensor([1.+2.j])
    """
    return apply(_ops.complex_op, (_tensor("complex", real), _tensor("complex", imag)))  # type: ignore[no-any-return]


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``.

    >>> import retrograd as rg
    >>> polar(rg.tensor([2.]), rg.tensor([0.]))
    tensor([2.+0.j])
    """
    return apply(_ops.polar, (_tensor("polar", abs), _tensor("polar", angle)))  # type: ignore[no-any-return]


__all__ = ["complex", "conj", "conj_physical", "conj_physical_", "imag", "is_complex", "is_conj", "is_neg", "polar",
           "real", "resolve_conj", "resolve_neg", "view_as_complex", "view_as_real"]
