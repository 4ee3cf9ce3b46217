"""In-place forms whose out-of-place op has hand-written forms (``eq``/``ne``) or one shared
``NotImplemented`` node (``floor_divide``/``heaviside``), so the op table's ``variants`` cannot
derive them: ``eq_``, ``ne_``/``not_equal_``, ``floor_divide_``, ``heaviside_``.

As PyTorch: ``x.eq_(y)`` writes 1/0 in ``x``'s dtype and records ``EqBackward0`` (a number) or
``EqBackward1`` (a tensor) with zero gradients; ``floor_divide_``/``heaviside_`` record a
``NotImplemented`` node that refuses backward with the in-place op's name.

Loaded on first use (``retrograd.ops.__getattr__``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, _operand
from .elementwise import _floor_divide, _heaviside, _quiet, _zeros_like
from .inplace import apply_inplace
from .op import Op


def _comparison(name: str, fn: Any, node: str) -> tuple[Op, Op]:
    def forward(x: np.ndarray, other: Any) -> np.ndarray:
        return np.asarray(fn(x, other)).astype(x.dtype)

    return (Op(name, forward, node=f"{node}Backward0", params=("other",), grads=(_zeros_like,), jvp="transpose"),
            Op(name, forward, node=f"{node}Backward1", inputs=("self", "other"), grads=(_zeros_like, _zeros_like),
               jvp="transpose"))


eq_scalar_inplace, eq_inplace = _comparison("eq", np.equal, "Eq")
ne_scalar_inplace, ne_inplace = _comparison("ne", np.not_equal, "Ne")


def _refuses(name: str) -> Any:
    def rule(grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return rule


floor_divide_inplace = Op("floor_divide_", _quiet(_floor_divide), node="NotImplemented", inputs=("self", "other"),
                          dtype="promote", grads=(_refuses("floor_divide_"), _refuses("floor_divide_")),
                          jvp="transpose")
floor_divide_scalar_inplace = Op("floor_divide_", _quiet(_floor_divide), node="NotImplemented", params=("other",),
                                 dtype="promote+params", grads=(_refuses("floor_divide_"),), jvp="transpose")
heaviside_inplace = Op("heaviside_", _heaviside, node="NotImplemented", inputs=("self", "values"),
                       grads=(_refuses("heaviside_"), _refuses("heaviside_")), jvp="transpose")


def _invalid(name: str, other: Any) -> TypeError:
    kind = type(other).__name__
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({kind}), but expected one of:\n"
        f" * (Tensor other)\n      didn't match because some of the arguments have invalid types: (!{kind}!)\n"
        f" * (Number other)\n      didn't match because some of the arguments have invalid types: (!{kind}!)\n")


def _compare_(name: str, pair: tuple[Op, Op], self: Tensor, other: Any) -> Tensor:
    if isinstance(other, Tensor):
        return apply_inplace(pair[1], (self, other))
    value = _operand(other)
    if value is NotImplemented or isinstance(value, Tensor):  # (a NumPy array is no Number)
        raise _invalid(name, other)
    return apply_inplace(pair[0], (self, value))


def eq_(self: Tensor, other: Any) -> Tensor:
    """``self = (self == other)`` in place, as 1/0 in ``self``'s dtype.

    >>> import retrograd as rg
    >>> rg.tensor([1.0, 2.0]).eq_(2)
    tensor([0., 1.])
    """
    return _compare_("eq_", (eq_scalar_inplace, eq_inplace), self, other)


def ne_(self: Tensor, other: Any) -> Tensor:
    """``self = (self != other)`` in place, as 1/0 in ``self``'s dtype.

    >>> import retrograd as rg
    >>> rg.tensor([1.0, 2.0]).ne_(2)
    tensor([1., 0.])
    """
    return _compare_("ne_", (ne_scalar_inplace, ne_inplace), self, other)


def not_equal_(self: Tensor, other: Any) -> Tensor:
    """``ne_`` under another name.

    >>> import retrograd as rg
    >>> rg.tensor([1, 2]).not_equal_(rg.tensor([1, 3]))
    tensor([0, 1])
    """
    return _compare_("not_equal_", (ne_scalar_inplace, ne_inplace), self, other)


def floor_divide_(self: Tensor, other: Any) -> Tensor:
    """``self //= other`` (rounding toward minus infinity) in place.

    >>> import retrograd as rg
    >>> rg.tensor([5, -3]).floor_divide_(2)
    tensor([ 2, -2])
    """
    if not isinstance(other, Tensor):
        value = _operand(other)
        if value is NotImplemented or isinstance(value, Tensor):
            raise _invalid("floor_divide_", other)
        return apply_inplace(floor_divide_scalar_inplace, (self, value))
    return apply_inplace(floor_divide_inplace, (self, other))


def heaviside_(self: Tensor, values: Any) -> Tensor:
    """The Heaviside step of ``self`` in place (``values`` where ``self`` is 0).

    >>> import retrograd as rg
    >>> rg.tensor([-1.0, 0.0, 2.0]).heaviside_(rg.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside_(): argument 'values' (position 1) must be Tensor, not {type(values).__name__}")
    return apply_inplace(heaviside_inplace, (self, values))
