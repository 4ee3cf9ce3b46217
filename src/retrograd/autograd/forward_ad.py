"""``retrograd.autograd.forward_ad``: forward-mode AD with dual tensors, as ``torch.autograd.forward_ad``.

Inside a ``dual_level()``, ``make_dual(primal, tangent)`` makes a tensor that carries a tangent;
every differentiable op then computes its output's tangent (the Jacobian-vector product) in the
same forward pass, from the JVP rules of the op table (``ops/forward.py``), and
``unpack_dual(out)`` reads it back.

>>> import retrograd as rg
>>> import retrograd.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 0.0]))
...     fwAD.unpack_dual((x * x).sum()).tangent
tensor(2.)

The tangent lives on the tensor as ``_fw_grad = (level, tangent)``; a tangent whose level is no
longer the current one is not seen, so leaving a level forgets every tangent made in it without
walking them. Only one level at a time, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from . import graph

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]


class _Level:
    """One entered dual level (a fresh object each time: tangents of an old level are not seen)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


# The current level, or None: the op call paths read ``DUAL[0]`` once per op (the only cost of
# forward AD while no level is active).
DUAL: list[_Level | None] = [None]


# Whether the tangents computed now need no graph of their own (``[True]`` inside a ``func.grad``
# nested in ``func.jvp`` whose results are detached anyway: torch.func computes such tangents
# below the grad level, where nothing records them). The JVP rules then run with grad mode off.
UNTRACKED_TANGENTS: list[bool] = [False]


@contextmanager
def untracked_tangents(on: bool = True) -> Iterator[None]:
    """Compute tangents without recording a graph for them while ``on`` (restored on exit).

    >>> import retrograd as rg
    >>> from retrograd.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level(), untracked_tangents():
    ...     x = fwAD.make_dual(rg.ones(2, requires_grad=True) * 1, rg.ones(2))
    ...     y = x * x
    ...     y.requires_grad, fwAD.unpack_dual(y).tangent.requires_grad
    (True, False)
    """
    before = UNTRACKED_TANGENTS[0]
    UNTRACKED_TANGENTS[0] = on or before
    try:
        yield
    finally:
        UNTRACKED_TANGENTS[0] = before


def current_level() -> _Level | None:
    """The active dual level object, or None."""
    return DUAL[0]


@contextmanager
def suspended() -> Iterator[None]:
    """Run ops without propagating tangents (JVP rules work on primals, as PyTorch's formulas do)."""
    level = DUAL[0]
    DUAL[0] = None
    try:
        yield
    finally:
        DUAL[0] = level


def tangent_of(tensor: Any, level: _Level | None = None) -> Any:
    """``tensor``'s tangent at ``level`` (default: the current one), or None."""
    fw = tensor._fw_grad
    if fw is None:
        return None
    if level is None:
        level = DUAL[0]
    return fw[1] if fw[0] is level and level is not None else None


def set_tangent(tensor: Any, tangent: Any, level: _Level) -> None:
    tensor._fw_grad = (level, tangent)


def enter_dual_level() -> int:
    """Enter a new forward-AD level; returns its index (0). Nesting is refused, as in PyTorch.

    >>> from retrograd.autograd import forward_ad as fwAD
    >>> fwAD.enter_dual_level()
    0
    >>> fwAD.exit_dual_level()
    """
    if DUAL[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    DUAL[0] = _Level(0)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level: every tangent made in it is forgotten.

    >>> from retrograd.autograd import forward_ad as fwAD
    >>> fwAD.exit_dual_level()
    Traceback (most recent call last):
    RuntimeError: Dual level must be a positive number.
    """
    current = -1 if DUAL[0] is None else DUAL[0].index
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    DUAL[0] = None


class dual_level:  # noqa: N801 - PyTorch's name
    """Context manager for forward AD: ``with dual_level(): ...`` (as ``torch.autograd.forward_ad``).

    >>> import retrograd as rg
    >>> from retrograd.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level() as level:
    ...     level
    0
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Any
    tangent: Any


def _level_for(level: int | None, what: str) -> _Level | None:
    current = DUAL[0]
    if level is None or (current is not None and level == current.index):
        return current
    raise RuntimeError(f"Invalid level given to {what}")


def _dtype_name(tensor: Any) -> str:
    from .._dtype import from_numpy_dtype

    return str(from_numpy_dtype(tensor._data.dtype))


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """A view of ``tensor`` that carries ``tangent`` at the current dual level.

    >>> import retrograd as rg
    >>> from retrograd.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     fwAD.unpack_dual(fwAD.make_dual(rg.ones(2), rg.tensor([3.0, 4.0])).exp()).tangent
    tensor([ 8.1548, 10.8731])
    """
    Tensor = graph._Tensor or graph._tensor_class()
    if type(tensor) is not Tensor or type(tangent) is not Tensor:  # (plain tensors: the checks below only)
        if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
            raise TypeError("make_dual(): argument 'tensor' and 'tangent' must be Tensor")
        for t in (tensor, tangent):  # a tensor kind that cannot carry a tangent (vmap's batched tensors)
            refuse = getattr(type(t), "refuse_forward_ad", None)
            if refuse is not None:
                refuse()
    lvl = DUAL[0]
    if lvl is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    if level is not None:
        lvl = _level_for(level, "_make_dual")
        assert lvl is not None
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {_dtype_name(tensor)}")
    if tangent._data.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {_dtype_name(tangent)}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {list(tensor._data.shape)} while the given forward "
            f"gradient is of size {list(tangent._data.shape)}."
        )
    DUAL[0] = None  # (``suspended()``, inline: it is a tenth of a call's cost)
    try:
        out = tensor.view(tensor._data.shape)  # PyTorch's dual is a view of the primal (ViewBackward0)
    finally:
        DUAL[0] = lvl
    out._fw_grad = (lvl, tangent)  # (``set_tangent``, inline)
    return out


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; outside a level, ``(tensor, None)``.

    >>> import retrograd as rg
    >>> from retrograd.autograd import forward_ad as fwAD
    >>> fwAD.unpack_dual(rg.ones(1))
    UnpackedDualTensor(primal=tensor([1.]), tangent=None)
    """
    active = DUAL[0]
    fw = tensor._fw_grad  # (``tangent_of``, inline)
    if fw is None or active is None or fw[0] is not active:
        return UnpackedDualTensor(tensor, None)
    if level is not None:
        _level_for(level, "_fw_primal")  # (raises for another level than the current one)
    tangent = fw[1]
    DUAL[0] = None  # (``suspended()``, inline)
    try:
        primal = tensor.view(tensor._data.shape)
    finally:
        DUAL[0] = active
    return UnpackedDualTensor(primal, tangent)
