"""Elementwise ops, one block per topic: shared helpers; arithmetic (add, sub, mul, div, pow, rsub,
maximum, minimum); division with rounding, remainder, fmod; unary math (exp/log family, trig,
hyperbolic, sigmoid, relu, sign, abs, clamp), atan2, hypot, logaddexp; erf, erfc, erfinv; rounding;
clamp with tensor bounds, clamp_min/clamp_max, nan_to_num; lerp, addcmul, addcdiv; comparisons,
logical and bitwise ops, ``where``; copies, casts and fills.

Each entry is one ``Op``: the NumPy forward beside one backward rule per input (see op.py).
Binary ops broadcast; the engine sums each gradient back to its input's shape.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np

from .._dtype import FROM_NUMPY, _promote_pair, get_default_dtype, result_type, scalar_type_name
from .._factory_args import check_fill
from ..autograd.fp_errors import quiet_forward
from ..tensor import Tensor
from .op import (
    INT_SCALAR_END,
    INT_SCALAR_MIN,
    Op,
    array_scalars,
    broadcast_error,
    check_int_scalar,
    scalar_array,
    with_array_rule,
    wrap_int,
)

_make_tensor = Tensor._make  # (a function-level import would cost µs in each backward rule using it)

where: Op  # defined below; rules refer to it
erfinv: Op  # (its rule computes it again)
tanh_backward: Op
sigmoid_backward: Op

# An entry's public forms: ``retrograd.<name>``, ``Tensor.<name>`` and ``Tensor.<name>_`` (bound by
# ops/variants.py).
_ALL_FORMS = ("function", "method", "inplace")


# -- shared helpers ---------------------------------------------------------------------------
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_SQRT_PI = float(np.sqrt(np.pi))
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


def _const(array: np.ndarray) -> Any:
    """A constant (non-differentiable) tensor built from data inside a backward rule."""
    from ..tensor import Tensor

    return Tensor._make(array)


def require_tensor(name: str, value: Any, position: int, argument: str = "other") -> Any:
    """PyTorch's TypeError for a binary op whose ``other`` must be a tensor (no Python numbers)."""
    from ..tensor import Tensor

    if isinstance(value, Tensor):
        return value
    raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not {type(value).__name__}")


def require_int(name: str, value: Any, position: int, argument: str) -> Any:
    """PyTorch's TypeError for an int argument given anything else (a float, a bool)."""
    if type(value) is int or isinstance(value, np.integer):
        return int(value)
    # (PyTorch names the position only for a positional argument; a form's keyword is the common
    # spelling of these, ``mvlgamma(x, p=2)``.)
    raise TypeError(f"{name}(): argument '{argument}' must be int, not {type(value).__name__}")


# A forward that meets inf or nan on ordinary inputs (log(0), 1 / 0, exp(1000)) is declared
# with this wrapper: NumPy's warnings off for that call only, as PyTorch computes them silently.
_quiet = quiet_forward


def _check_int_scalars(*values: Any) -> Any:
    """PyTorch's OverflowError for a Python int number operand outside int64/uint64 (a fill value,
    a bound); returns the first value."""
    for v in values:
        if type(v) is int and not INT_SCALAR_MIN <= v < INT_SCALAR_END:
            check_int_scalar(v)
    return values[0]


def _zeros_like(grad: Any) -> Any:
    """A fresh zero gradient (PyTorch's ``zeros_like(grad)``: no NaN from ``inf * 0``)."""
    return _make_tensor(np.zeros(grad._data.shape, grad._data.dtype))


def _not_implemented_for(kernel: str, dtype: Any) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dtype)}\'')


# -- ops PyTorch has no complex kernel for -----------------------------------------------------
# NumPy refuses most of them with its own TypeError (floor, fmod, atan2...) or computes a complex
# result (sign, round, lgamma, xlogy...); PyTorch raises its own error, named here per op: a
# missing kernel's NotImplementedError (``"fmod_cpu" not implemented for 'ComplexFloat'``) or a
# message of the op's own.
def _kernel(kernel: str) -> Any:
    return lambda dtype: _not_implemented_for(kernel, dtype)


def _message(error: type[Exception], message: str) -> Any:
    return lambda dtype: error(message)


def _complex_operand(values: tuple[Any, ...]) -> Any:
    """The dtype of the first complex array among ``values`` (the forward's operands), or None."""
    for value in values:
        dtype = getattr(value, "dtype", None)
        if dtype is not None and dtype.kind == "c":
            return dtype
    return None


def _real_only(error: Any, forward: Any, operands: int = 1) -> Any:
    """``forward``, refusing complex operands (the first ``operands`` arguments) with ``error(dtype)``,
    PyTorch's error; they are already promoted, so a complex number or tensor among them shows."""
    if operands == 1:
        def checked_unary(x: Any, *params: Any) -> Any:
            if x.dtype.kind == "c":
                raise error(x.dtype)
            return forward(x, *params)

        return checked_unary

    def checked(*args: Any) -> Any:
        dtype = _complex_operand(args[:operands])
        if dtype is not None:
            raise error(dtype)
        return forward(*args)

    return checked


def _dtype_refused(kernel: str, dtype: Any, a: Any, b: Any) -> Exception:
    """PyTorch's error for operands ``a``, ``b`` of a dtype ``kernel`` lacks: shapes that do not
    broadcast are reported first, as PyTorch checks them before the dtype."""
    shapes = [np.shape(a), np.shape(b)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return RuntimeError(broadcast_error(shapes))
    return _not_implemented_for(kernel, dtype)


def _integer_kernel(kernel: str, fn: Any, bools: bool = False) -> Any:
    def forward(a: Any, b: Any) -> Any:
        dtype = np.result_type(a, b)
        if dtype.kind not in ("iub" if bools else "iu"):
            raise _dtype_refused(kernel, dtype, a, b)
        return fn(a, b)

    return forward


# -- arithmetic -------------------------------------------------------------------------------


def _cj(x: Any) -> Any:
    """The complex conjugate of a rule's factor: PyTorch's gradient of a holomorphic ``f`` is
    ``grad * conj(f'(z))``. A real factor (a tensor or a Python number) is returned as it is."""
    data = getattr(x, "_data", None)
    if data is None:  # a number (a tensor first: rules call this on every node)
        return x.conjugate() if type(x) is complex else x
    return x.conj() if data.dtype.kind == "c" else x


def _sgn(z: Any) -> Any:
    """``z / |z|`` (0 at 0) of a complex tensor: ``abs``'s derivative there, as PyTorch's sgn."""
    magnitude = z.abs()
    return where(magnitude == 0, 0.0, z / magnitude)


def _times_alpha(b: Any, alpha: Any) -> Any:
    # A Python number stays one (a NumPy float64 scalar would promote a float32 tensor).
    return b * alpha if type(b) is not np.ndarray else np.multiply(b, alpha)


@array_scalars
def _add(a: Any, b: Any, alpha: Any) -> Any:
    return np.add(a, b) if alpha == 1 else np.add(a, _times_alpha(b, alpha))


BOOL_SUB_ERROR = ("Subtraction, the `-` operator, with two bool tensors is not supported. "
                  "Use the `^` or `logical_xor()` operator instead.")
INTEGRAL_ALPHA_ERROR = "For integral input tensors, argument alpha must not be a floating point number."
BOOL_SUB_ONE_ERROR = ("Subtraction, the `-` operator, with a bool tensor is not supported. "
                      "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


_BOOL = np.dtype(np.bool_)


@array_scalars
def _sub(a: Any, b: Any, alpha: Any) -> Any:
    # ``a`` and ``b`` are already promoted: a bool result means two bool operands.
    if a.dtype is _BOOL:
        raise RuntimeError(BOOL_SUB_ERROR)
    if alpha == 1:
        return np.subtract(a, b)
    if type(alpha) is float and a.dtype.kind in "iu":
        raise RuntimeError(INTEGRAL_ALPHA_ERROR)
    return np.subtract(a, _times_alpha(b, alpha))


def _rsub_scalar(x: Any, other: Any, alpha: Any) -> Any:
    if x.dtype is _BOOL:
        raise RuntimeError(BOOL_SUB_ERROR)
    if type(other) is int and x.dtype.kind in "iu":
        other = wrap_int(other, x.dtype)  # PyTorch wraps the number into the integer dtype
    if alpha == 1:
        return np.subtract(other, x)
    if type(alpha) is float and x.dtype.kind in "iu":
        raise RuntimeError(INTEGRAL_ALPHA_ERROR)
    return np.subtract(other, x * alpha)


def _scaled(grad: Any, alpha: Any) -> Any:
    return grad if alpha == 1 else grad * alpha


add = Op("add", _add, node="AddBackward0", inputs=("self", "other"), params=("alpha",), dtype="promote",
         grads=(lambda grad: grad,
                lambda grad, alpha: _scaled(grad, alpha)),
         variants=_ALL_FORMS, signature="other, *, alpha=1", convert={"other": "scalar"}, operators=("__add__", "__radd__"),
         inplace_ufunc=np.add, jvp="elementwise")  # (lets ``x.add_(y)`` write straight into ``x`` under no_grad)

sub = Op("sub", _sub, node="SubBackward0", inputs=("self", "other"), params=("alpha",), dtype="promote",
         grads=(lambda grad: grad,
                lambda grad, alpha: -_scaled(grad, alpha)),
         variants=_ALL_FORMS, aliases=("subtract", "subtract_"), signature="other, *, alpha=1", convert={"other": "scalar"},
         operators=("__sub__",), inplace_ufunc=np.subtract, jvp="elementwise")

def _check_bool_sub(inputs: Any, params: Any) -> None:
    """PyTorch's refusal of a subtraction with a bool operand, seen before promotion (a Python bool
    counts: PyTorch wraps it as a bool tensor). Same-dtype operands never get here: two bool
    tensors are refused by the forward."""
    a, b = (*inputs, *params)[:2]  # (self, other) of sub and rsub, whether ``other`` is an input or a param
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool or b_bool:
        raise RuntimeError(BOOL_SUB_ERROR if a_bool and b_bool else BOOL_SUB_ONE_ERROR)


def _is_bool(value: Any) -> bool:
    data = getattr(value, "_data", value)
    return type(value) is bool or type(data) is np.ndarray and data.dtype is _BOOL


sub.check_operands = _check_bool_sub

# ``scalar - tensor``: PyTorch records rsub with the scalar as a parameter, so one edge.
rsub = Op("rsub", _rsub_scalar, node="RsubBackward1", params=("other", "alpha"), dtype="promote+params",
          grads=(lambda grad, alpha: -_scaled(grad, alpha),), jvp="elementwise")
rsub.check_operands = _check_bool_sub

def _product_rule_tangent(tangents: Any, grad: Any, other: Any) -> Any:
    # The tangent of a rule ``grad * other`` as mul's elementwise JVP computes it, operands in its
    # order (which NaN a product or sum of two NaNs keeps): d grad * other + d other * grad.
    tangent_grad, tangent_other = tangents
    total = None if tangent_grad is None else np.multiply(tangent_grad, other)
    if tangent_other is not None:
        part = np.multiply(tangent_other, grad)
        total = part if total is None else np.add(total, part)
    return total


mul = Op("mul", np.multiply, node="MulBackward0", inputs=("self", "other"), dtype="promote",
         grads=(with_array_rule(lambda grad, other: grad * _cj(other), lambda grad, other: np.multiply(grad, other),
                                _product_rule_tangent),
                with_array_rule(lambda grad, self: grad * _cj(self), lambda grad, self: np.multiply(grad, self),
                                _product_rule_tangent)),
         variants=_ALL_FORMS, aliases=("multiply", "multiply_"), convert={"other": "scalar"}, operators=("__mul__", "__rmul__"),
         inplace_ufunc=np.multiply, jvp="elementwise")

div = Op("div", _quiet(np.true_divide), node="DivBackward0", inputs=("self", "other"), dtype="float",
         grads=(lambda grad, other: grad / _cj(other),
                lambda grad, self, other: -grad * _cj(self / (other * other))),
         operators=("__truediv__",), jvp="elementwise")

neg = Op("neg", np.negative, node="NegBackward0", grads=(with_array_rule(lambda grad: -grad, lambda grad: np.negative(grad), "multilinear"),),
         variants=_ALL_FORMS, aliases=("negative", "negative_"), operators=("__neg__",), hot=True, jvp="elementwise")

reciprocal = Op("reciprocal", _quiet(np.reciprocal), node="ReciprocalBackward0", dtype="float_unary",
                grads=(lambda grad, result: -grad * _cj(result * result),), variants=_ALL_FORMS, hot=True,
                jvp="elementwise")


_C_INT_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def _check_int_param(value: Any, dtype: np.dtype) -> None:
    """PyTorch's checked conversion of a scalar parameter (an exponent) to an integer dtype."""
    info = np.iinfo(dtype)
    if not -(1 << 63) <= value < 1 << 63:
        raise OverflowError("int too big to convert")
    if not info.min <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_INT_NAMES[dtype.name]} without overflow")


def _pow_scalar(x: Any, exponent: Any) -> Any:
    if type(exponent) is int and not INT_SCALAR_MIN <= exponent < INT_SCALAR_END:
        check_int_scalar(exponent)  # raises
    if x.dtype.kind in "biu":
        if type(exponent) is float:
            x = x.astype(get_default_dtype().np)
        elif exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        elif x.dtype.kind in "iu":
            _check_int_param(exponent, x.dtype)
    elif x.dtype.kind in "fV" and type(exponent) in (int, float) and exponent in _POW_BY_PRODUCTS:
        return _POW_BY_PRODUCTS[exponent](x)
    return np.power(x, exponent)


# PyTorch's pow kernel computes these exponents of a floating tensor by products and roots (so
# ``(-0.0) ** -0.5`` is -inf, from ``1 / sqrt(-0.0)``, and ``x ** 3`` is ``x * x * x``, bit for bit).
_POW_BY_PRODUCTS: dict[float, Any] = {
    0.5: np.sqrt,
    3: lambda x: x * x * x,
    -0.5: lambda x: np.reciprocal(np.sqrt(x)),
    -1: np.reciprocal,
    -2: lambda x: np.reciprocal(x * x),
}


def int_power(base: Any, exponent: Any) -> np.ndarray:
    """PyTorch's integer power with negative exponents: 0, except 1 for base 1 and +-1 for base -1
    (NumPy refuses them). The dtype is NumPy's for the operands, as for ``np.power``."""
    base, exponent = np.asarray(base), np.asarray(exponent)
    negative = exponent < 0
    out = np.power(base, np.where(negative, 0, exponent).astype(exponent.dtype, copy=False))
    odd = exponent % 2 != 0
    special = (base == 1) | (base == -1) & ~odd
    minus = (base == -1) & odd
    return np.where(negative, special.astype(out.dtype) - minus.astype(out.dtype), out)


@array_scalars
def _pow_tensor(x: Any, exponent: Any) -> Any:
    try:
        return np.power(x, exponent)
    except ValueError:  # integers to negative integer powers: PyTorch defines them
        return int_power(x, exponent)


def _pow_scalar_base(exponent: Any, base: Any) -> Any:
    if exponent.dtype.kind in "iu" and type(base) is int:
        # PyTorch wraps the base into the exponent's integer dtype, then runs integer pow.
        return int_power(wrap_int(base, exponent.dtype), exponent)
    return np.power(base, exponent)


def _pow_scalar_grad(grad: Any, self: Any, exponent: Any) -> Any:
    if exponent == 0:
        return _zeros_like(grad)  # PyTorch's zeros_like: no NaN from an inf or NaN gradient
    # PyTorch's ``exponent * self.pow(exponent - 1)``, the exponent a C++ Scalar: its graph under
    # create_graph is PowBackward0 then MulBackward1 (no edge for the number). ``pow`` computes
    # x ** -0.5 and x ** 0.5 by roots, so they keep the sign of -0.0 as PyTorch's kernel does.
    from .nn import mul_scalar  # (ops/nn loads on first use; a backward only)

    return grad * _cj(mul_scalar(pow_scalar(self, exponent - 1), exponent))


def _pow_self_grad(grad: Any, self: Any, exponent: Any) -> Any:
    # PyTorch: 0 where the exponent is 0 (even at x = 0, where e * x**(e-1) would be NaN);
    # ``exponent - 1`` is its Scalar overload (SubBackward1).
    from .nn import sub_scalar

    return where(exponent == 0, 0.0, grad * _cj(exponent * self ** sub_scalar(exponent, 1)))


def _pow_exponent_grad(grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    # d/de x**e = x**e * log(x); PyTorch defines it as 0 where x == 0 and e >= 0 (for e < 0 it
    # is inf * -inf = -inf). A complex exponent counts as ">= 0" when it is real and >= 0 (the
    # complex kernel has no ``>=``).
    if exponent.is_complex():
        nonnegative = (exponent.imag == 0) & (exponent.real >= 0)
    else:
        nonnegative = exponent >= 0
    return grad * _cj(where(nonnegative & (self == 0), 0.0, result * self.log()))


def _pow_scalar_base_grad(grad: Any, exponent: Any, result: Any, base: Any) -> Any:
    if base == 0:
        # As PyTorch: 0 ** e has derivative 0 for e >= 0 (the factor, not the product, is selected).
        return grad * where(exponent >= 0, 0.0, result * -np.inf)
    return grad * _cj(result * (complex(np.log(complex(base))) if type(base) is complex else float(np.log(base))))


# (``retrograd.pow`` takes a number first too: written in _functions.py)
pow_scalar = Op("pow", _quiet(_pow_scalar), node="PowBackward0", params=("exponent",),
                grads=(_pow_scalar_grad,), variants=("method", "inplace"), convert={"exponent": "scalar"},
                jvp="elementwise")

pow_tensor = Op("pow", _quiet(_pow_tensor), node="PowBackward1", inputs=("self", "exponent"), dtype="promote",
                grads=(_pow_self_grad, _pow_exponent_grad), variants=("method", "inplace"), convert={"exponent": "scalar"},
                jvp="elementwise")

# ``scalar ** tensor``: the base is a parameter, the exponent the only input.
pow_scalar_base = Op("pow", _quiet(_pow_scalar_base), node="PowBackward2",
                     inputs=("exponent",), params=("base",), dtype="promote+params",
                     saved={"self": "base", "exponent": "exponent", "result": "result"},
                     grads=(_pow_scalar_base_grad,), jvp="elementwise")


def _rsub_tensor(a: Any, b: Any, alpha: Any) -> Any:
    return _sub(b, a, alpha)


# ``torch.rsub(input, other, alpha)`` = ``other - alpha * input``.
rsub_tensor = Op("rsub", _rsub_tensor, node="RsubBackward0", inputs=("self", "other"), params=("alpha",),
                 dtype="promote",
                 grads=(lambda grad, alpha: -_scaled(grad, alpha),
                        lambda grad: grad), jvp="elementwise")
rsub_tensor.check_operands = _check_bool_sub


def _maximum_grad(grad: Any, self: Any, other: Any) -> Any:
    # Ties split the gradient evenly, as PyTorch does.
    return where(self == other, grad / 2, grad).masked_fill(self < other, 0.0)


def _minimum_grad(grad: Any, self: Any, other: Any) -> Any:
    return where(self == other, grad / 2, grad).masked_fill(self > other, 0.0)


def _real_pairwise(fn: np.ufunc, refuse: Any, input_on_tie: bool = True) -> Any:
    """The forward of a two-tensor op PyTorch has no complex kernel for (maximum/minimum,
    fmax/fmin, clamp_min/clamp_max with a tensor bound): ``refuse(dtype)`` is its error (the
    operands are promoted, so a complex ``b`` made ``a`` complex too). ``input_on_tie``: ``b``
    goes first, since on a tie NumPy returns its second operand and PyTorch its first (-0.0 vs 0.0)."""
    if input_on_tie:
        def forward(a: Any, b: Any) -> Any:
            if a.dtype.kind == "c":
                raise refuse(a.dtype)
            return fn(b, a)
    else:
        def forward(a: Any, b: Any) -> Any:
            if a.dtype.kind == "c":
                raise refuse(a.dtype)
            return fn(a, b)
    return array_scalars(forward)


def _not_for_complex(name: str) -> Any:
    return lambda dtype: RuntimeError(f"{name} not implemented for complex tensors.")


_maximum = _real_pairwise(np.maximum, _not_for_complex("maximum"))
_minimum = _real_pairwise(np.minimum, _not_for_complex("minimum"))


maximum = Op("maximum", _maximum, node="MaximumBackward0", inputs=("self", "other"), dtype="promote",
             grads=(_maximum_grad, lambda grad, self, other: _maximum_grad(grad, other, self)),
             variants=("method",), convert={"other": "tensor"}, jvp="elementwise")
minimum = Op("minimum", _minimum, node="MinimumBackward0", inputs=("self", "other"), dtype="promote",
             grads=(_minimum_grad, lambda grad, self, other: _minimum_grad(grad, other, self)),
             variants=("method",), convert={"other": "tensor"}, jvp="elementwise")


# -- division with rounding, remainder, fmod --------------------------------------------------
def _div_rounding(a: Any, b: Any, rounding_mode: str) -> Any:
    complex_dtype = _complex_operand((a, b))
    if complex_dtype is not None and rounding_mode in ("floor", "trunc"):
        raise _not_implemented_for(f"div_{rounding_mode}_cpu", complex_dtype)
    if rounding_mode == "floor":
        if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
            if np.any(np.asarray(b) == 0):
                raise RuntimeError("ZeroDivisionError")
        # For floats too NumPy's floor division is PyTorch's (both from fmod, as Python's:
        # ``1 // 0.1`` is 9, ``inf // 1`` nan); floor(a / b) is not.
        return np.floor_divide(a, b)
    if rounding_mode == "trunc":
        q = np.true_divide(a, b)
        out = np.trunc(q)
        integral = np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu"
        return np.asarray(out).astype(np.result_type(a, b)) if integral else out
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


# Rounded division is piecewise constant: zero gradient, as in PyTorch.
div_rounding = Op("div", _quiet(_div_rounding), node="DivBackward2", inputs=("self", "other"), params=("rounding_mode",),
                  dtype="promote", grads=(_zeros_like, _zeros_like), jvp="elementwise")


def _div_mode_none(a: Any, b: Any, rounding_mode: None) -> Any:
    return np.true_divide(a, b)


# ``div(x, y, rounding_mode=None)`` spelled out: true division, recorded as PyTorch records it
# (DivBackward2, the rounding_mode overload, not the plain DivBackward0 of ``x / y``).
div_mode_none = Op("div", _quiet(_div_mode_none), node="DivBackward2", inputs=("self", "other"),
                   params=("rounding_mode",), dtype="float", saved=("other", "rounding_mode", "self"),
                   grads=(lambda grad, other: grad / _cj(other),
                          lambda grad, self, other: -grad * _cj(self / (other * other))),
                   jvp="elementwise")


def remainder_float(a: Any, b: Any) -> Any:
    """PyTorch's floating remainder: ``fmod``, moved into the divisor's sign. NumPy's is the same
    but for a zero result, which takes the divisor's sign there and keeps fmod's (the dividend's)
    in PyTorch: ``-0.0 % 1`` and ``-4.0 % 2`` are -0.0."""
    out = np.remainder(a, b)
    zero = out == 0
    if zero.any():
        out = np.where(zero, np.fmod(a, b), out)
    return out


def _check_integer_divisor(a: Any, b: Any) -> None:
    if np.asarray(a).dtype.kind in "iub":
        b_arr = np.asarray(b)
        if b_arr.dtype.kind in "iub" and np.any(b_arr == 0):
            raise RuntimeError("ZeroDivisionError")


def _remainder(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype is _BOOL:
        raise _not_implemented_for("remainder_cpu", _BOOL)
    _check_integer_divisor(a, b)
    with np.errstate(all="ignore"):
        if (a if type(a) is np.ndarray else np.asarray(b)).dtype.kind in "fV":  # (operands already promoted)
            return remainder_float(a, b)
        return np.mod(a, b)


remainder = Op("remainder", _real_only(_kernel("remainder_cpu"), _remainder, 2), node="RemainderBackward1", inputs=("self", "other"), dtype="promote",
               grads=(lambda grad: grad,
                      lambda grad, self, other: -grad * (self / other).floor()),
               variants=("method", "inplace"), convert={"other": "scalar"}, jvp="elementwise")


def _fmod(a: Any, b: Any) -> Any:
    if a.dtype is _BOOL:
        raise _not_implemented_for("fmod_cpu", a.dtype)
    _check_integer_divisor(a, b)
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


# The Scalar and Tensor overloads of one public fmod (ops/variants.py tells them apart).
fmod_scalar = Op("fmod", _real_only(_kernel("fmod_cpu"), lambda x, other: _fmod(x, other)), node="FmodBackward0", params=("other",),
                 dtype="promote+params", grads=(lambda grad: grad,), variants=_ALL_FORMS, convert={"other": "scalar"},
                 jvp="elementwise")
fmod = Op("fmod", _real_only(_kernel("fmod_cpu"), _fmod, 2), node="FmodBackward1", inputs=("self", "other"), dtype="promote",
          grads=(lambda grad: grad,
                 lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc")),
          variants=_ALL_FORMS, convert={"other": "scalar"}, jvp="elementwise")
def _remainder_scalar(x: Any, other: Any) -> Any:
    if type(other) is int and x.dtype.kind in "iu":
        other = wrap_int(other, x.dtype)  # PyTorch wraps the number into the integer dtype
    return _remainder(x, other)


# (``retrograd.remainder`` takes a number first too: written in _functions.py)
remainder_scalar = Op("remainder", _real_only(_kernel("remainder_cpu"), _remainder_scalar), node="RemainderBackward0",
                      params=("other",), dtype="promote+params", grads=(lambda grad: grad,),
                      variants=("method", "inplace"), convert={"other": "scalar"}, jvp="elementwise")


def _remainder_not_implemented(grad: Any) -> Any:
    raise RuntimeError("derivative for aten::remainder is not implemented")


# ``remainder(number, tensor)``: PyTorch records a node that refuses to differentiate.
def _remainder_scalar_self(x: Any, base: Any) -> Any:
    if type(base) is int and x.dtype.kind in "iu":
        base = wrap_int(base, x.dtype)  # PyTorch wraps the number into the integer dtype
    return _remainder(base, x)


remainder_scalar_self = Op("remainder", _real_only(_kernel("remainder_cpu"), _remainder_scalar_self),
                           node="NotImplemented",
                           params=("base",), dtype="promote+params", grads=(_remainder_not_implemented,),
                           jvp="elementwise")


# -- unary math -------------------------------------------------------------------------------
# The hot ones first (exp, log, sqrt, sin, cos, tanh, sigmoid, sign, abs, relu, clamp), then the rest
# (float results: exp/log family, trig, hyperbolic), atan2, hypot, logaddexp.
exp = Op("exp", _quiet(np.exp), node="ExpBackward0", dtype="float_unary",
         grads=(with_array_rule(lambda grad, result: grad * _cj(result), lambda grad, result: np.multiply(grad, result),
                                _product_rule_tangent),),
         variants=_ALL_FORMS, hot=True, jvp="elementwise")
log = Op("log", _quiet(np.log), node="LogBackward0", dtype="float_unary",
         grads=(lambda grad, self: grad / _cj(self),), variants=_ALL_FORMS, hot=True, jvp="elementwise")
sqrt = Op("sqrt", _quiet(np.sqrt), node="SqrtBackward0", dtype="float_unary",
          grads=(lambda grad, result: grad / (2 * _cj(result)),), variants=_ALL_FORMS, hot=True, jvp="elementwise")
sin = Op("sin", np.sin, node="SinBackward0", dtype="float_unary",
         grads=(lambda grad, self: grad * _cj(self.cos()),), variants=_ALL_FORMS, hot=True, jvp="elementwise")
cos = Op("cos", np.cos, node="CosBackward0", dtype="float_unary",
         grads=(lambda grad, self: -grad * _cj(self.sin()),), variants=_ALL_FORMS, hot=True, jvp="elementwise")
# PyTorch's fused backward ops: one op per rule instead of three, each differentiable again.
_ONES = {np.dtype(t): np.ones((), t) for t in (np.float16, np.float32, np.float64)}


def _tanh_backward(grad: Any, out: Any) -> Any:
    # grad * (1 - out²), PyTorch's order: grad - grad * out² would give inf - inf = NaN for an
    # infinite gradient. One buffer for all three steps (less peak memory), and a cached 0-d one
    # (NumPy converts a Python-number operand at several times the cost of a small ufunc).
    scale = np.multiply(out, out)
    if type(grad) is not np.ndarray or type(scale) is not np.ndarray or grad.shape != scale.shape:
        return grad * (1 - scale)
    np.subtract(_ONES.get(scale.dtype, 1), scale, out=scale)
    return np.multiply(grad, scale, out=scale)


# (PyTorch's names for what these nodes keep: ``_saved_grad_output``, ``_saved_output``.)
_GRAD_OUTPUT_SAVED = {"grad_output": "grad", "output": "result"}
tanh_backward = Op("tanh_backward", _tanh_backward, node="TanhBackwardBackward0",
                   inputs=("grad", "result"), dtype="promote", saved=_GRAD_OUTPUT_SAVED,
                   grads=(lambda gg, result: tanh_backward(gg, result),
                          lambda gg, grad, result: gg * grad * -2 * result), jvp="elementwise")
sigmoid_backward = Op("sigmoid_backward", lambda grad, out: grad * (out * (1 - out)),
                      node="SigmoidBackwardBackward0", inputs=("grad", "result"), dtype="promote",
                      saved=_GRAD_OUTPUT_SAVED,
                      grads=(lambda gg, result: sigmoid_backward(gg, result),
                             lambda gg, grad, result: gg * grad * (1 - 2 * result)), jvp="elementwise")

def _tanh_rule_tangent(tangents: Any, grad: Any, result: Any) -> Any:
    # TanhBackward0's rule is ``tanh_backward(grad, result)``; its tangent as that op's elementwise
    # JVP computes it in ops: tanh_backward(d grad, result) + d result * grad * -2 * result.
    tg, tr = tangents
    out = None if tg is None else _tanh_backward(tg, result)
    if tr is not None:
        part = np.multiply(np.multiply(np.multiply(tr, grad), scalar_array(-2, tr.dtype)), result)
        out = part if out is None else np.add(out, part)
    return out


tanh = Op("tanh", np.tanh, node="TanhBackward0", dtype="float_unary",
          grads=(with_array_rule(lambda grad, result: tanh_backward(grad, _cj(result)),
                                 lambda grad, result: _tanh_backward(grad, result), _tanh_rule_tangent),),
          variants=_ALL_FORMS, hot=True,
          jvp="elementwise")


def _sigmoid(x: Any) -> Any:
    if x.dtype.kind == "c":  # (no overflow guard: a complex number has no sign)
        return 1 / (1 + np.exp(-x))
    # exp of a non-positive number only, so no overflow for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid = Op("sigmoid", _sigmoid, node="SigmoidBackward0", dtype="float_unary",
             grads=(lambda grad, result: sigmoid_backward(grad, _cj(result)),), variants=_ALL_FORMS, hot=True,
             jvp="elementwise")


SIGN_COMPLEX = ("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                "Please use torch.sgn instead.")


def _sign(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.kind
    if kind == "b":
        return x.copy()
    if kind == "c":
        raise NotImplementedError(SIGN_COMPLEX)
    out = np.asarray(np.sign(x))
    if kind in "fV":
        out[np.isnan(out)] = 0  # PyTorch: sign(nan) == 0
    return out


sign = Op("sign", _sign, node="SignBackward0", grads=(_zeros_like,), variants=_ALL_FORMS, hot=True, jvp="elementwise")

abs = Op("abs", np.abs, node="AbsBackward0",  # noqa: A001 - PyTorch's name
         grads=(lambda grad, self: grad * (self.sign() if self._data.dtype.kind != "c" else _sgn(self)),),
         variants=_ALL_FORMS, aliases=("absolute", "absolute_"), operators=("__abs__",), hot=True, jvp="elementwise")

def _threshold_backward(grad: Any, out: Any) -> Any:
    # PyTorch's select: grad where not ``out <= 0`` (so a NaN output passes its gradient), +0
    # elsewhere, even for an inf or NaN gradient. Done on the bits, ``grad & mask`` with an
    # all-ones or all-zeros mask per element, it is exact (-0.0 and NaN payloads kept) and 2x
    # faster than np.where, whose per-element branch mispredicts on relu's random mask.
    bits = _SAME_SIZE_UINT.get(grad.dtype.itemsize)
    if bits is None or grad.shape != out.shape or not grad.ndim:  # (0-d: NumPy would give scalars below)
        return np.where(out <= 0, np.zeros(grad.shape, grad.dtype), grad)
    if grad.size > _BLOCK and grad.flags.c_contiguous and out.flags.c_contiguous:
        return _threshold_backward_blocks(grad, out, bits)
    # The 0 and the 1 as 0-d arrays of the operands' dtypes (cached): a Python number costs NumPy
    # a scalar conversion per call, more than the whole comparison of a small activation.
    return _select_bits(grad, _kept_bits(out, bits), bits)


def _kept_bits(out: np.ndarray, bits: Any) -> np.ndarray:
    """``_threshold_backward``'s mask: all ones where ``out <= 0`` is false, zeros elsewhere."""
    zero = _ZERO_OF.get(out.dtype)
    if zero is None:
        zero = _ZERO_OF[out.dtype] = _readonly(np.zeros((), out.dtype))
    mask = np.less_equal(out, zero).astype(bits)
    np.subtract(mask, _ONE_OF[bits], out=mask)  # 1 (zeroed) -> 0, 0 (kept) -> all ones
    return mask


def _select_bits(grad: np.ndarray, mask: np.ndarray, bits: Any) -> np.ndarray:
    result = np.empty(grad.shape, grad.dtype)
    np.bitwise_and(grad.view(bits), mask, out=result.view(bits))
    return result


_SAME_SIZE_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


_ONE_OF = {bits: _readonly(np.ones((), bits)) for bits in _SAME_SIZE_UINT.values()}
_ZERO_OF: dict[Any, np.ndarray] = {}  # out's dtype -> its 0-d zero (``_threshold_backward``)

# Elements per block for relu and its backward on large arrays: the mask and the zeros live in
# small buffers reused block after block (in cache), not in temporaries the size of the
# activation, whose fresh pages cost as much as the arithmetic (the MNIST CNN's 2.4M elements).
_BLOCK = 1 << 16


def _threshold_backward_blocks(grad: np.ndarray, out: np.ndarray, bits: Any) -> np.ndarray:
    """``_threshold_backward``'s bit select on C-contiguous same-shape arrays, a block at a time."""
    result = np.empty(grad.shape, grad.dtype)
    g, o, r = grad.reshape(-1).view(bits), out.reshape(-1), result.reshape(-1).view(bits)
    zeroed, mask = np.empty(_BLOCK, np.bool_), np.empty(_BLOCK, bits)
    n = g.size
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        z, m = zeroed[:stop - start], mask[:stop - start]
        np.less_equal(o[start:stop], 0, out=z)
        np.subtract(z, 1, out=m, dtype=bits)  # True (zeroed) -> 0, False (kept) -> all ones
        np.bitwise_and(g[start:stop], m, out=r[start:stop])
    return result


def _relu_blocks(x: np.ndarray) -> np.ndarray:
    """``_relu`` of a C-contiguous array a block at a time, against one block of zeros."""
    result = np.empty(x.shape, x.dtype)
    flat, r = x.reshape(-1), result.reshape(-1)
    zeros = np.zeros(_BLOCK, x.dtype)
    x_first = x.dtype.char == "e"  # (float16's tie order, as in ``_relu``)
    n = flat.size
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        a, b = flat[start:stop], zeros[:stop - start]
        if x_first:
            np.maximum(a, b, out=r[start:stop])
        else:
            np.maximum(b, a, out=r[start:stop])
    return result


# PyTorch's fused relu backward: grad where the output is not <= 0, in one pass. Its second input
# is named ``self`` (PyTorch's name): ``result`` would mean this op's own output to a rule. Both
# rules take ``self`` so that it is saved whichever input needs a gradient: the generated apply
# unpacks every slot a rule names, even for an input with no edge.
def _threshold_backward_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    # d threshold_backward(g, x) = threshold_backward(dg, x): the mask does not move with x (PyTorch's
    # formula); written out, the elementwise derivation would add a zero term for x's tangent.
    tg = tangents[0]
    return [threshold_backward(tg, inputs[1]) if tg is not None else _zeros_like(outputs[0])]


def _threshold_rule_tangent(tangents: Any, grad: Any, self: Any) -> Any:
    # The tangent of ``threshold_backward(grad, self)`` as its JVP gives it (``_threshold_backward_jvp``):
    # the mask does not move, so zeros where only ``self`` has a tangent.
    tg = tangents[0]
    if tg is None:
        return np.zeros(np.broadcast_shapes(grad.shape, self.shape), grad.dtype)
    return _threshold_backward(tg, self)


def _threshold_rule_pair(tangents: Any, grad: Any, self: Any) -> tuple[Any, Any]:
    # The rule's result and its tangent with the mask made once: the same two selects.
    tg = tangents[0]
    bits = _SAME_SIZE_UINT.get(grad.dtype.itemsize)
    if (tg is None or bits is None or not grad.ndim or grad.shape != self.shape or tg.shape != grad.shape
            or tg.dtype is not grad.dtype or grad.size > _BLOCK):
        return _threshold_backward(grad, self), _threshold_rule_tangent(tangents, grad, self)
    mask = _kept_bits(self, bits)
    return _select_bits(grad, mask, bits), _select_bits(tg, mask, bits)


threshold_backward: Op = Op(
    "threshold_backward", _threshold_backward, node="ThresholdBackwardBackward0", inputs=("grad", "self"),
    dtype="promote",  # (as PyTorch's: an int grad and a float self give a float result)
    grads=(with_array_rule(lambda gg, self: threshold_backward(gg, self), lambda gg, self: _threshold_backward(gg, self),
                           _threshold_rule_tangent, _threshold_rule_pair),
           with_array_rule(lambda gg, self: _zeros_like(gg), lambda gg, self: np.zeros(gg.shape, gg.dtype),
                           lambda tangents, gg, self: None)),  # (a fresh zeros tensor: no tangent)
    jvp=_threshold_backward_jvp)

def _relu(x: Any) -> Any:
    # Against an array of zeros, not a broadcast zero: NumPy's same-shape loop is twice as fast
    # (np.zeros is calloc'd), with the same results (NaN stays NaN).
    # Zeros first: on a tie NumPy returns its second operand, so -0.0 stays -0.0 (as PyTorch).
    # NumPy's float16 loop breaks the tie the other way: there x goes first (else relu(-0.0) is +0.0).
    # A complex input is refused as PyTorch's relu (a clamp) refuses it; NumPy would compare.
    char = x.dtype.char
    if x.size > _BLOCK and x.flags.c_contiguous and char not in "FDG":
        return _relu_blocks(x)
    if char == "e":
        return np.maximum(x, np.zeros(x.shape, x.dtype))
    if char in "FDG":
        raise NotImplementedError("clamp is not supported for complex types")
    return np.maximum(np.zeros(x.shape, x.dtype), x)


relu = Op("relu", _relu, node="ReluBackward0",
          grads=(with_array_rule(lambda grad, result: threshold_backward(grad, result),
                                 lambda grad, result: _threshold_backward(grad, result), _threshold_rule_tangent,
                                 _threshold_rule_pair),),
          variants=_ALL_FORMS, hot=True,
          jvp="elementwise")


CLAMP_COMPLEX = "clamp is not supported for complex types"


def _clamp_promote(x: Any, *bounds: Any) -> Any:
    """A scalar bound of a higher category promotes the tensor (int -> float, bool -> int64);
    PyTorch's error for a complex tensor."""
    kind = x.dtype.kind
    if kind == "c":
        raise NotImplementedError(CLAMP_COMPLEX)
    if kind in "biu" and any(type(b) is float for b in bounds):
        return x.astype(get_default_dtype().np)
    if kind == "b" and any(type(b) is int for b in bounds):
        return x.astype(np.int64)
    return x


def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _check_int_scalars(lo, hi)
    x = _clamp_promote(x, lo, hi)
    out = x
    if lo is not None:
        out = np.maximum(lo, out)  # the input on a tie (-0.0 stays), as PyTorch
    if hi is not None:
        out = np.minimum(hi, out)
    return out.astype(x.dtype, copy=False)


def _clamp_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    # Selected, not multiplied by the mask: ``0 * inf`` would leak NaN into clamped positions.
    if min is not None and max is not None:
        return where((self >= min) & (self <= max), grad, 0.0)
    if min is not None:
        return where(self >= min, grad, 0.0)
    return where(self <= max, grad, 0.0)


# Its Tensor overload (bounds that are tensors) is ``clamp_tensor``, below.
clamp = Op("clamp", _clamp, node="ClampBackward1", params=("min", "max"), grads=(_clamp_grad,),
           variants=_ALL_FORMS, aliases=("clip", "clip_"), signature="min=None, max=None", jvp="elementwise")


# The rest of unary math (float results).
def _float_unary(name: str, fn: Any, node: str, grad: Any, variants: tuple[str, ...] = (),
                 aliases: tuple[str, ...] = ()) -> Op:
    return Op(name, _quiet(fn), node=node, dtype="float_unary", grads=(grad,), variants=variants, aliases=aliases,
              jvp="elementwise")



rsqrt = _float_unary("rsqrt", lambda x: np.reciprocal(np.sqrt(x)), "RsqrtBackward0",
                     lambda grad, result: grad * (result * result * result) * -0.5, variants=_ALL_FORMS)
expm1 = _float_unary("expm1", np.expm1, "Expm1Backward0", lambda grad, result: grad * (result + 1), variants=_ALL_FORMS)
log1p = _float_unary("log1p", np.log1p, "Log1PBackward0", lambda grad, self: grad / (self + 1), variants=_ALL_FORMS)
log2 = _float_unary("log2", np.log2, "Log2Backward0", lambda grad, self: grad / (self * _LN2), variants=_ALL_FORMS)
log10 = _float_unary("log10", np.log10, "Log10Backward0", lambda grad, self: grad / (self * _LN10), variants=_ALL_FORMS)
exp2 = _float_unary("exp2", np.exp2, "Exp2Backward0", lambda grad, result: grad * result * _LN2, variants=_ALL_FORMS)
sinh = _float_unary("sinh", np.sinh, "SinhBackward0", lambda grad, self: grad * self.cosh(), variants=_ALL_FORMS)
cosh = _float_unary("cosh", np.cosh, "CoshBackward0", lambda grad, self: grad * sinh(self), variants=_ALL_FORMS)
tan = _float_unary("tan", np.tan, "TanBackward0", lambda grad, result: grad * (result * result + 1), variants=_ALL_FORMS)
asin = _float_unary("asin", np.arcsin, "AsinBackward0", lambda grad, self: grad * rsqrt(-self * self + 1),
                    _ALL_FORMS, ("arcsin", "arcsin_"))
acos = _float_unary("acos", np.arccos, "AcosBackward0", lambda grad, self: -grad * rsqrt(-self * self + 1),
                    _ALL_FORMS, ("arccos", "arccos_"))
atan = _float_unary("atan", np.arctan, "AtanBackward0", lambda grad, self: grad / (self * self + 1),
                    _ALL_FORMS, ("arctan", "arctan_"))
asinh = _float_unary("asinh", np.arcsinh, "AsinhBackward0", lambda grad, self: grad * rsqrt(self * self + 1),
                     ("function", "method"), ("arcsinh",))
acosh = _float_unary("acosh", np.arccosh, "AcoshBackward0", lambda grad, self: grad * rsqrt(self * self - 1),
                     ("function", "method"), ("arccosh",))
atanh = _float_unary("atanh", np.arctanh, "AtanhBackward0", lambda grad, self: grad / (-self * self + 1),
                     ("function", "method"), ("arctanh",))


def _inplace_not_implemented(name: str) -> Any:
    def rule(grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")

    return rule


# PyTorch records the in-place inverse hyperbolics with their own nodes, which refuse to differentiate.
# Each is its entry's in-place form (``x.asinh_()``, ``x.arcsinh_()``).
asinh_inplace = _float_unary("asinh", np.arcsinh, "AsinhBackward1", _inplace_not_implemented("asinh"),
                             ("inplace",), ("arcsinh_",))
acosh_inplace = _float_unary("acosh", np.arccosh, "AcoshBackward1", _inplace_not_implemented("acosh"),
                             ("inplace",), ("arccosh_",))
atanh_inplace = _float_unary("atanh", np.arctanh, "AtanhBackward1", _inplace_not_implemented("atanh"),
                             ("inplace",), ("arctanh_",))


def _check_float_binary(kernel: str, a: Any, b: Any) -> None:
    dt = np.result_type(a, b) if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) else None
    if dt is not None and dt.kind not in "fcV":
        raise _not_implemented_for(kernel, dt)


def _atan2_grads(grad: Any, self: Any, other: Any) -> tuple[Any, Any]:
    recip = (self * self + other * other).reciprocal()
    recip = recip.masked_fill(_const(np.isinf(recip._data)), 0.0)
    return grad * other * recip, grad * -self * recip


atan2 = Op("atan2", _quiet(_real_only(_kernel("atan2_cpu"), np.arctan2, 2)), node="Atan2Backward0", inputs=("self", "other"), dtype="float",
           grads=_atan2_grads, variants=_ALL_FORMS, aliases=("arctan2", "arctan2_"), convert={"other": "tensor"},
           jvp="elementwise")


def _hypot(a: Any, b: Any) -> Any:
    _check_float_binary("hypot_cpu", a, b)
    return np.hypot(a, b)


hypot = Op("hypot", _real_only(_kernel("hypot_cpu"), _hypot, 2), node="HypotBackward0", inputs=("self", "other"), dtype="promote",
           grads=(lambda grad, self, result: grad * self / result,
                  lambda grad, other, result: grad * other / result),
           variants=_ALL_FORMS, convert={"other": "tensor"}, jvp="elementwise")


def _complex_logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(exp(a) + exp(b))`` of complex arrays (NumPy's logaddexp is real only), as PyTorch's
    kernel: ``hi + log1p(exp(lo - hi))`` with ``hi`` the operand of larger real part; a NaN part
    gives NaN, and equal infinite real parts give ``lo`` (-inf) or ``log(exp(a) + exp(b))`` (+inf)."""
    a, b = np.broadcast_arrays(a, b)
    a_first = a.real >= b.real
    hi, lo = np.where(a_first, a, b), np.where(a_first, b, a)
    with np.errstate(all="ignore"):
        out = hi + np.log1p(np.exp(lo - hi))
        both_infinite = np.isinf(lo.real) & (lo.real == hi.real)
        if both_infinite.any():
            out = np.where(both_infinite & (lo.real < 0), lo, out)
            out = np.where(both_infinite & (lo.real > 0), np.log(np.exp(lo) + np.exp(hi)), out)
    nan = np.isnan(lo.real) | np.isnan(lo.imag)
    if nan.any():
        out = np.where(nan, complex(np.nan, np.nan), out)
    return np.asarray(out, np.result_type(a, b))


def _logaddexp(a: Any, b: Any) -> Any:
    _check_float_binary("logaddexp_cpu", a, b)
    if np.result_type(a, b).kind == "c":
        return _complex_logaddexp(np.asarray(a), np.asarray(b))
    with np.errstate(all="ignore"):
        return np.logaddexp(a, b)


def _logaddexp2(a: Any, b: Any) -> Any:
    _check_float_binary("logaddexp2_cpu", a, b)
    with np.errstate(all="ignore"):
        return np.logaddexp2(a, b)


# grad * sigmoid(self - other): the same as grad / (exp(other - self) + 1), but with a stable
# derivative where the exponential overflows (conjugated for complex operands: holomorphic).
logaddexp = Op("logaddexp", _logaddexp, node="LogaddexpBackward0", inputs=("self", "other"), dtype="promote",
               grads=(lambda grad, self, other: grad * _cj((self - other).sigmoid()),
                      lambda grad, self, other: grad * _cj((other - self).sigmoid())),
               variants=("function", "method"), convert={"other": "tensor"}, jvp="elementwise")
logaddexp2 = Op("logaddexp2", _real_only(_kernel("logaddexp2_cpu"), _logaddexp2, 2), node="Logaddexp2Backward0", inputs=("self", "other"), dtype="promote",
                grads=(lambda grad, self, other: grad / (exp2(other - self) + 1),
                       lambda grad, self, other: grad / (exp2(self - other) + 1)),
                variants=("function", "method"), convert={"other": "tensor"}, jvp="elementwise")


# -- erf, erfc, erfinv (no SciPy) --------------------------------------------------------------
# erf(x) for |x| < 1.25: 2/sqrt(pi) * exp(-x^2) * sum_n (2x^2)^n x / (1*3*...*(2n+1)) (all terms
# positive: no cancellation). For |x| >= 1.25: erfc(x) from its continued fraction
# x + (1/2)/(x + 1/(x + (3/2)/(x + ...))), evaluated bottom-up at a fixed depth (deeper near
# 1.25, where it converges slowest). exp(-x^2) is split as exp(-xh^2) * exp(-(x - xh)(x + xh)) so
# x^2's rounding error does not grow with x. Computed in float64 (relative error below 1e-15
# for erf, and for erfc in its upper tail) and cast back.

_FRACTION_FROM = 1.25


def _exp_minus_square(x: np.ndarray) -> np.ndarray:
    xh = np.round(x * 4096.0) / 4096.0  # few significant bits: xh * xh is exact
    return np.exp(-xh * xh) * np.exp(-(x - xh) * (x + xh))


def _erf_series(a: np.ndarray) -> np.ndarray:
    x2 = a * a
    term = a.copy()
    total = a.copy()
    for k in range(1, 120):
        term *= (2.0 * x2) / (2 * k + 1)
        total += term
        if k % 8 == 0 and not np.any(term > 1e-17 * total):
            break
    return _TWO_OVER_SQRT_PI * _exp_minus_square(a) * total


def _erfc_fraction(a: np.ndarray, depth: int) -> np.ndarray:
    f = a.copy()
    for k in range(depth, 0, -1):
        f = a + (0.5 * k) / f
    return _exp_minus_square(a) / (_SQRT_PI * f)


def _erfc_upper(a: np.ndarray) -> np.ndarray:
    """erfc for a >= 1.25 (NaN passes through; +inf gives 0)."""
    out = np.empty_like(a)
    near = a < 2.5
    out[near] = _erfc_fraction(a[near], 120)
    far = ~near
    out[far] = _erfc_fraction(np.minimum(a[far], 30.0), 40)
    return out


def erf_array(x: np.ndarray) -> np.ndarray:
    """Vectorised erf in float64 (NaN and +-inf handled)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        small = a < _FRACTION_FROM
        out[small] = _erf_series(a[small])
        big = ~small  # includes NaN
        out[big] = 1.0 - _erfc_upper(a[big])
        out[np.isnan(a)] = np.nan
    return np.copysign(out, x)


def erfc_array(x: np.ndarray) -> np.ndarray:
    """Vectorised erfc in float64: accurate relative to erfc itself in the upper tail."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        small = a < _FRACTION_FROM
        out[small] = 1.0 - _erf_series(a[small])
        big = ~small
        out[big] = _erfc_upper(a[big])
        out[np.isnan(a)] = np.nan
    return np.where(x < 0, 2.0 - out, out)


_HALLEY_STEPS = 2


def erfinv_array(y: np.ndarray) -> np.ndarray:
    """Vectorised erfinv in float64: a closed-form start refined by two Halley steps.

    In the tails (|y| > 0.9) the residual is taken on erfc against ``1 - |y|`` (exact there),
    so the result keeps its relative accuracy as |y| approaches 1.
    """
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    with np.errstate(all="ignore"):
        # Start: x0 = sqrt(sqrt(t^2 - w/c) - t), t = 2/(pi c) + w/2, w = log(1 - a^2), c = 0.147.
        w = np.log((1.0 - a) * (1.0 + a))
        t = 2.0 / (np.pi * 0.147) + 0.5 * w
        x = np.sqrt(np.sqrt(t * t - w / 0.147) - t)
        tail = a > 0.9
        body = ~tail
        complement = 1.0 - a[tail]
        for _ in range(_HALLEY_STEPS):
            residual = np.empty_like(x)
            residual[body] = erf_array(x[body]) - a[body]
            residual[tail] = complement - erfc_array(x[tail])
            residual /= _TWO_OVER_SQRT_PI * _exp_minus_square(x)
            x = x - residual / (1.0 + x * residual)
        x = np.where(a == 1.0, np.inf, x)
        x = np.where(a > 1.0, np.nan, x)
    return np.copysign(x, y)


def _in_float64(fn: Any) -> Any:
    def forward(x: np.ndarray) -> np.ndarray:
        out = fn(x)
        return out.astype(x.dtype, copy=False) if x.dtype != np.float64 else out

    return forward


erf = Op("erf", _real_only(_kernel("erf_vml_cpu"), _in_float64(erf_array)), node="ErfBackward0", dtype="float_unary",
         grads=(lambda grad, self: grad * (-self * self).exp() * _TWO_OVER_SQRT_PI,), variants=_ALL_FORMS,
         jvp="elementwise")
erfc = Op("erfc", _real_only(_kernel("erfc_vml_cpu"), _in_float64(erfc_array)), node="ErfcBackward0", dtype="float_unary",
          grads=(lambda grad, self: grad * (-self * self).exp() * -_TWO_OVER_SQRT_PI,), variants=_ALL_FORMS,
          jvp="elementwise")
def _erfinv_grad(grad: Any, self: Any) -> Any:
    return grad * (erfinv(self) ** 2).exp() * (_SQRT_PI / 2)


erfinv = Op("erfinv", _real_only(_kernel("erfinv_vml_cpu"), _in_float64(erfinv_array)), node="ErfinvBackward0", dtype="float_unary",
            # PyTorch's rule reads the input and computes erfinv again (its node keeps ``self``)
            grads=(_erfinv_grad,), variants=_ALL_FORMS,
            jvp="elementwise")


# -- rounding (zero gradient, as PyTorch) -----------------------------------------------------
def _rounding(kernel: str, fn: Any) -> Any:
    """Rounding forwards: integers are returned as they are, bools are refused (as PyTorch)."""

    def forward(x: np.ndarray) -> np.ndarray:
        kind = x.dtype.kind
        if kind == "b":
            raise _not_implemented_for(kernel, x.dtype)
        if kind in "iu":
            return x.copy()
        if kind == "c":  # (round: its kernel's name; floor, ceil, trunc: a message of their own)
            if kernel == "round_vml_cpu":
                raise _not_implemented_for(kernel, x.dtype)
            raise NotImplementedError(f"{kernel.split('_')[0]} is not supported for complex inputs")
        return fn(x)

    return forward


floor = Op("floor", _rounding("floor_vml_cpu", np.floor), node="FloorBackward0", grads=(_zeros_like,),
           variants=_ALL_FORMS, jvp="elementwise")


ceil = Op("ceil", _rounding("ceil_vml_cpu", np.ceil), node="CeilBackward0", grads=(_zeros_like,),
          variants=_ALL_FORMS, jvp="elementwise")
trunc = Op("trunc", _rounding("trunc_vml_cpu", np.trunc), node="TruncBackward0", grads=(_zeros_like,),
           variants=_ALL_FORMS, aliases=("fix", "fix_"), jvp="elementwise")
round_op = Op("round", _rounding("round_vml_cpu", np.round), node="RoundBackward0", grads=(_zeros_like,),
              jvp="elementwise")


def _round_decimals(x: np.ndarray, decimals: int) -> np.ndarray:
    if x.dtype.kind not in "fV":
        raise _not_implemented_for("round_cpu", x.dtype)
    if decimals >= 0:
        scale = np.asarray(10.0**decimals, x.dtype)
        return np.round(x * scale) / scale
    scale = np.asarray(10.0 ** (-decimals), x.dtype)
    return np.round(x / scale) * scale


round_decimals = Op("round", _round_decimals, node="RoundBackward1", params=("decimals",), grads=(_zeros_like,),
                    jvp="elementwise")


def _frac(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind not in "fV":
        raise _not_implemented_for("frac_cpu", x.dtype)
    return x - np.trunc(x)


frac = Op("frac", _frac, node="FracBackward0", grads=(lambda grad: grad,),
          variants=_ALL_FORMS, jvp="elementwise")


# -- clamp with tensor bounds, clamp_min / clamp_max, nan_to_num ------------------------------
def _clamp_tensor(x: Any, lo: Any, hi: Any) -> Any:
    kind = x.dtype.kind
    if kind == "b":
        raise _not_implemented_for("clamp_cpu", x.dtype)
    if kind == "c":  # (promoted: a real tensor with a complex bound is refused here too, not as "maximum_cpu")
        raise NotImplementedError(CLAMP_COMPLEX)
    out = x
    if lo is not None:
        out = np.maximum(lo, out)  # the input on a tie (-0.0 stays), as PyTorch
    if hi is not None:
        out = np.minimum(hi, out)
    return out


def _clamp_self_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    keep = None
    if min is not None:
        keep = self >= min
    if max is not None:
        upper = self <= max
        keep = upper if keep is None else keep & upper
    return where(keep, grad, 0.0)


def _clamp_min_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    picked = self < min
    if max is not None:
        picked = picked & (min <= max)
    return where(picked, grad, 0.0)


def _clamp_max_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    picked = self > max
    if min is not None:
        picked = picked | (min > max)
    return where(picked, grad, 0.0)


clamp_tensor = Op("clamp", _clamp_tensor, node="ClampBackward0", inputs=("self", "min", "max"), dtype="promote",
                  grads=(_clamp_self_grad, _clamp_min_grad, _clamp_max_grad),
                  variants=_ALL_FORMS, aliases=("clip", "clip_"), signature="min=None, max=None", jvp="elementwise")


def _clamp_one(fn: Any) -> Any:
    def forward(x: np.ndarray, bound: Any) -> np.ndarray:
        if type(bound) is complex:  # (as PyTorch's clamp_min/clamp_max; clamp's own error differs)
            raise NotImplementedError(CLAMP_COMPLEX)
        x = _clamp_promote(x, bound)
        return np.asarray(fn(bound, x)).astype(x.dtype, copy=False)  # the input on a tie

    return forward


clamp_min_scalar = Op("clamp_min", _clamp_one(np.maximum), node="ClampMinBackward0", params=("min",),
                      grads=(lambda grad, self, min: where(self >= min, grad, 0.0),),  # noqa: A006
                      variants=_ALL_FORMS, convert={"min": "scalar"}, jvp="elementwise")
clamp_max_scalar = Op("clamp_max", _clamp_one(np.minimum), node="ClampMaxBackward0", params=("max",),
                      grads=(lambda grad, self, max: where(self <= max, grad, 0.0),),  # noqa: A006
                      variants=_ALL_FORMS, convert={"max": "scalar"}, jvp="elementwise")
_clamp_min_tensor = _real_pairwise(np.maximum, lambda dtype: _not_implemented_for("maximum_cpu", dtype))
_clamp_max_tensor = _real_pairwise(np.minimum, lambda dtype: _not_implemented_for("minimum_cpu", dtype))
clamp_min_tensor = Op("clamp_min", _clamp_min_tensor, node="ClampMinBackward1", inputs=("self", "min"), dtype="promote",
                      grads=(lambda grad, self, min: where(self >= min, grad, 0.0),  # noqa: A006
                             lambda grad, self, min: where(self < min, grad, 0.0)),  # noqa: A006
                      variants=_ALL_FORMS, convert={"min": "scalar"}, jvp="elementwise")
clamp_max_tensor = Op("clamp_max", _clamp_max_tensor, node="ClampMaxBackward1", inputs=("self", "max"), dtype="promote",
                      grads=(lambda grad, self, max: where(self <= max, grad, 0.0),  # noqa: A006
                             lambda grad, self, max: where(self > max, grad, 0.0)),  # noqa: A006
                      variants=_ALL_FORMS, convert={"max": "scalar"}, jvp="elementwise")


def _nan_to_num(x: np.ndarray, nan: Any, posinf: Any, neginf: Any) -> np.ndarray:
    if x.dtype.kind not in "fV":
        return x.copy()
    return np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


nan_to_num = Op("nan_to_num", _nan_to_num, node="NanToNumBackward0", params=("nan", "posinf", "neginf"),
                grads=(lambda grad, self: grad * _const(np.isfinite(self._data)),),
                variants=_ALL_FORMS, signature="nan=0.0, posinf=None, neginf=None", jvp="elementwise")


# -- lerp, addcmul, addcdiv -------------------------------------------------------------------
_CPP_TYPE_NAMES = {
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "uint8": "unsigned char",
    "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _check_same_dtype(self: np.ndarray, other: Any, what: str) -> None:
    if isinstance(other, np.ndarray) and other.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {_CPP_TYPE_NAMES[self.dtype.name]} for `{what}` but got dtype "
                           f"{_CPP_TYPE_NAMES[other.dtype.name]}")


def check_inplace_dtype(x: Any, dtype: Any) -> None:
    """In-place ops with an explicit ``dtype=`` (``cumsum_``) must keep the tensor's own dtype."""
    if dtype is not None and np.dtype(dtype) != x._data.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_CPP_TYPE_NAMES[x._data.dtype.name]} and output "
                           f"tensor dtype {_CPP_TYPE_NAMES[np.dtype(dtype).name]} should match")


def _lerp_values(x: Any, end: Any, weight: Any) -> Any:
    # PyTorch's form: exact at both ends.
    diff = end - x
    return np.where(np.abs(weight) < 0.5, x + weight * diff, end - diff * (1 - weight))


def _lerp_scalar(x: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    _check_same_dtype(x, end, "end")
    if x.dtype.kind not in "fcV":
        raise _not_implemented_for("lerp_kernel_scalar", x.dtype)
    if type(weight) is complex:  # (a real tensor takes a complex weight's real part only if it has no other)
        weight = check_fill(weight, x.dtype)
    return np.asarray(_lerp_values(x, end, np.asarray(weight, x.dtype)), x.dtype)


def _lerp_tensor(x: np.ndarray, end: np.ndarray, weight: np.ndarray) -> np.ndarray:
    _check_same_dtype(x, end, "end")
    if weight.ndim:
        _check_same_dtype(x, weight, "weight")
    if x.dtype.kind not in "fcV":
        raise _not_implemented_for("lerp_kernel_tensor", x.dtype)
    return np.asarray(_lerp_values(x, end, weight.astype(x.dtype, copy=False)), x.dtype)


# (each factor conjugated for complex operands: lerp is holomorphic in each)
lerp_scalar = Op("lerp", _lerp_scalar, node="LerpBackward0", inputs=("self", "end"), params=("weight",),
                 grads=(lambda grad, weight: grad * _cj(1 - weight),
                        lambda grad, weight: grad * _cj(weight)),
                 variants=_ALL_FORMS, convert={"weight": "scalar"}, jvp="elementwise")
lerp_tensor = Op("lerp", _lerp_tensor, node="LerpBackward1", inputs=("self", "end", "weight"),
                 grads=(lambda grad, weight: grad * _cj(1 - weight),
                        lambda grad, weight: grad * _cj(weight),
                        lambda grad, self, end: grad * _cj(end - self)),
                 variants=_ALL_FORMS, convert={"weight": "scalar"}, jvp="elementwise")


def _cast_value(value: Any, dtype: np.dtype) -> Any:
    return int(value) if dtype.kind in "iub" and not isinstance(value, bool) else value


def _addcmul(x: Any, t1: Any, t2: Any, value: Any) -> Any:
    if x.dtype is _BOOL:
        raise _not_implemented_for("addcmul_cpu_out", x.dtype)
    out = np.multiply(t1, t2)
    dtype = np.result_type(x, out)
    v = _cast_value(value, dtype)
    if v != 1:
        out = out * v
    return np.add(x, out).astype(dtype, copy=False)


ADDCDIV_INTEGER_ERROR = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
    "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value "
    "* torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
    "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value "
    "* tensor1 / tensor2), for all dtypes."
)


def promote_arrays(*arrays: np.ndarray) -> np.dtype:
    """PyTorch's promotion over tensors' arrays (0-d ones count only for a higher category)."""
    dims: np.dtype | None = None
    zeros: np.dtype | None = None
    for a in arrays:
        if a.ndim:
            dims = _promote_pair(dims, a.dtype)
        else:
            zeros = _promote_pair(zeros, a.dtype)
    if dims is None:
        assert zeros is not None
        return zeros
    higher: Any = FROM_NUMPY[zeros].category if zeros is not None else -1
    if zeros is not None and higher > FROM_NUMPY[dims].category:
        return zeros
    return dims


def _addcdiv(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: Any) -> np.ndarray:
    if t1.dtype.kind in "iub" and t2.dtype.kind in "iub":
        raise RuntimeError(ADDCDIV_INTEGER_ERROR)
    dtype = promote_arrays(x, t1, t2)
    x, t1, t2 = (a.astype(dtype, copy=False) for a in (x, t1, t2))
    with np.errstate(all="ignore"):
        out = np.true_divide(t1, t2)
    if value != 1:
        out = out * value
    return np.add(x, out).astype(dtype, copy=False)


addcmul = Op("addcmul", _addcmul, node="AddcmulBackward0", inputs=("self", "tensor1", "tensor2"),
             params=("value",), dtype="promote",
             grads=(lambda grad: grad,
                    lambda grad, tensor2, value: grad * (tensor2 * value),
                    lambda grad, tensor1, value: grad * (tensor1 * value)),
             variants=_ALL_FORMS, signature="tensor1, tensor2, *, value=1", jvp="affine_multilinear")
addcdiv = Op("addcdiv", _addcdiv, node="AddcdivBackward0", inputs=("self", "tensor1", "tensor2"),
             params=("value",),
             grads=(lambda grad: grad,
                    lambda grad, tensor2, value: grad * (value / tensor2),
                    lambda grad, tensor1, tensor2, value: -grad * value * tensor1 / (tensor2 * tensor2)),
             variants=_ALL_FORMS, signature="tensor1, tensor2, *, value=1", jvp="elementwise")


# -- comparisons (no gradient; bool results) --------------------------------------------------

_BINARY = ("self", "other")
eq = Op("eq", np.equal, inputs=_BINARY)
ne = Op("ne", np.not_equal, inputs=_BINARY)
# (``==``/``!=`` are hand-written in tensor.py: ``x == None`` is False, not an error.)
_FORMS = ("function", "method")
_SCALAR = {"other": "scalar"}


# NumPy's complex dtype classes (NumPy >= 2 gives each dtype its own class): ``type(a.dtype) in``
# this set is the cheapest test of a complex array (about half of ``a.dtype.kind == "c"``).
_COMPLEX_DTYPES = frozenset(type(np.dtype(t)) for t in (np.complex64, np.complex128, np.clongdouble))


def _ordering(kernel: str, fn: np.ufunc) -> Any:
    """``lt``/``le``/``gt``/``ge``'s forward: NumPy orders complex numbers (lexicographically),
    PyTorch refuses them, the promoted type of the two operands (a tensor, a number) named.
    ``a`` is a tensor's array; ``b`` another's or a Python number (the forms convert NumPy ones)."""
    def forward(a: Any, b: Any) -> Any:
        tb = type(b)
        if type(a.dtype) in _COMPLEX_DTYPES or (type(b.dtype) in _COMPLEX_DTYPES if tb is np.ndarray
                                                 else tb is complex):
            as_operand = [SimpleNamespace(_data=v) if isinstance(v, np.ndarray) else v for v in (a, b)]
            raise _not_implemented_for(kernel, result_type(tuple(as_operand)))  # (PyTorch's promotion)
        return fn(a, b)

    return forward


_lt, _le, _gt, _ge = (_ordering("lt_cpu", np.less), _ordering("le_cpu", np.less_equal),
                      _ordering("gt_cpu", np.greater), _ordering("ge_cpu", np.greater_equal))
# (no gradient, so no node is ever made: the names LtBackward0/1 are the in-place forms', below)
lt = Op("lt", _lt, node="Lt", inputs=_BINARY, variants=_FORMS, aliases=("less",), convert=_SCALAR, operators=("__lt__",))
le = Op("le", _le, node="Le", inputs=_BINARY, variants=_FORMS, aliases=("less_equal",), convert=_SCALAR,
        operators=("__le__",))
gt = Op("gt", _gt, node="Gt", inputs=_BINARY, variants=_FORMS, aliases=("greater",), convert=_SCALAR, operators=("__gt__",))
ge = Op("ge", _ge, node="Ge", inputs=_BINARY, variants=_FORMS, aliases=("greater_equal",), convert=_SCALAR,
        operators=("__ge__",))


def _comparison_inplace(name: str, fn: Any, node: str, alias: str) -> tuple[Op, Op]:
    """``x.lt_(other)``: PyTorch records a node (LtBackward0 for a number, LtBackward1 for a
    tensor) whose gradients are zeros, and writes 1/0 in ``x``'s dtype."""
    def forward(x: np.ndarray, other: Any) -> np.ndarray:
        return np.asarray(fn(x, other)).astype(x.dtype)  # (a float result can carry the node)

    return (Op(name, forward, node=f"{node}Backward0", params=("other",), grads=(_zeros_like,), variants=("inplace",),
               aliases=(alias,), convert=_SCALAR, jvp="transpose"),
            Op(name, forward, node=f"{node}Backward1", inputs=_BINARY, grads=(_zeros_like, _zeros_like),
               variants=("inplace",), aliases=(alias,), convert=_SCALAR, jvp="transpose"))


lt_scalar_inplace, lt_inplace = _comparison_inplace("lt", _lt, "Lt", "less_")
le_scalar_inplace, le_inplace = _comparison_inplace("le", _le, "Le", "less_equal_")
gt_scalar_inplace, gt_inplace = _comparison_inplace("gt", _gt, "Gt", "greater_")
ge_scalar_inplace, ge_inplace = _comparison_inplace("ge", _ge, "Ge", "greater_equal_")
logical_not = Op("logical_not", np.logical_not, variants=_ALL_FORMS)
logical_and = Op("logical_and", np.logical_and, inputs=("self", "other"), variants=_ALL_FORMS)
logical_or = Op("logical_or", np.logical_or, inputs=("self", "other"), variants=_ALL_FORMS)
logical_xor = Op("logical_xor", np.logical_xor, inputs=("self", "other"), variants=_ALL_FORMS)
bitwise_and = Op("bitwise_and", _integer_kernel("bitwise_and_cpu", np.bitwise_and, bools=True), inputs=("self", "other"),
                 dtype="promote", variants=_ALL_FORMS, convert=_SCALAR)
bitwise_or = Op("bitwise_or", _integer_kernel("bitwise_or_cpu", np.bitwise_or, bools=True), inputs=("self", "other"),
                dtype="promote", variants=_ALL_FORMS, convert=_SCALAR)
bitwise_xor = Op("bitwise_xor", _integer_kernel("bitwise_xor_cpu", np.bitwise_xor, bools=True), inputs=("self", "other"),
                 dtype="promote", variants=_ALL_FORMS, convert=_SCALAR)


def _bitwise_not(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "fcV":
        raise _not_implemented_for("bitwise_not_cpu", x.dtype)
    return np.invert(x)


bitwise_not = Op("bitwise_not", _bitwise_not, variants=_ALL_FORMS)


def _where(condition: Any, x: Any, y: Any) -> Any:
    if condition.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_type_name(condition.dtype)}")
    if type(x) is not np.ndarray and type(y) is not np.ndarray:
        # Two Python numbers: PyTorch's dtype for them (a float is the default dtype, not float64).
        return np.where(condition, x, y).astype(result_type((x, y)), copy=False)
    return np.where(condition, x, y)


where = Op("where", _where, node="WhereBackward0", inputs=("condition", "self", "other"), dtype="promote_values",
           grads=(None,
                  lambda grad, condition: where(condition, grad, 0.0),
                  lambda grad, condition: where(condition, 0.0, grad)), jvp="transpose")


# -- copies and casts -------------------------------------------------------------------------

clone = Op("clone", lambda x: x.copy(), node="CloneBackward0", grads=(lambda grad: grad,), jvp="linear")

def _quiet_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x.astype(dtype)``; complex to real keeps the real part with PyTorch's warning, not NumPy's."""
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        x = x.real
    return x.astype(dtype)


def _cast_back(grad: Any, dtype: np.dtype) -> Any:
    """A gradient cast back to its input's dtype; a real input keeps a complex gradient's real part."""
    if grad._data.dtype.kind == "c" and dtype.kind != "c":
        grad = grad.real
    return grad.to(FROM_NUMPY[dtype])


to_dtype = Op("to", _quiet_cast, node="ToCopyBackward0", params=("dtype",),
              grads=(lambda grad, self_dtype: _cast_back(grad, self_dtype),), jvp="linear")

# The in-place ops' out-of-place forms: ``copy_`` and ``fill_`` overwrite ``self``.
copy = Op("copy", lambda x, src: np.broadcast_to(src, x.shape).astype(x.dtype), node="CopyBackwards",
          inputs=("self", "src"),
          grads=(_zeros_like,  # PyTorch's zeros_like(grad): an inf/NaN gradient is not multiplied by 0
                 lambda grad, src_dtype: _cast_back(grad, src_dtype)), jvp="transpose")

fill = Op("fill", lambda x, value: np.full(x.shape, _check_int_scalars(value), dtype=x.dtype), node="FillBackward2",
          params=("value",), grads=(_zeros_like,), jvp="transpose")

# ``fill_(value)`` with a 0-d tensor: the value is an input, and its gradient is grad's sum (the
# engine reduces the broadcast value's gradient to its 0-d shape).
fill_tensor = Op("fill", lambda x, value: np.full(x.shape, value, dtype=x.dtype), node="FillBackward3",
                 inputs=("self", "value"), grads=(_zeros_like, lambda grad: grad), jvp="transpose")

zero = Op("zero", lambda x: np.zeros_like(x), node="ZeroBackward0", grads=(_zeros_like,), jvp="transpose")

def _masked_fill(x: Any, mask: Any, value: Any) -> Any:
    if mask.dtype is not _BOOL:
        from ..tensor import _cpp_type_name

        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {_cpp_type_name(mask.dtype)}")
    return np.asarray(np.where(mask, _check_int_scalars(value), x)).astype(x.dtype, copy=False)


masked_fill = Op("masked_fill", _masked_fill,
                 node="MaskedFillBackward0", inputs=("self", "mask"), params=("value",),
                 grads=(lambda grad, mask: where(mask, 0.0, grad), None), jvp="transpose")

# ``masked_fill(mask, value)`` with a 0-d tensor value: the value gets the masked positions' gradient.
masked_fill_tensor = Op("masked_fill", _masked_fill,
                        node="MaskedFillBackward1", inputs=("self", "mask", "value"),
                        grads=(lambda grad, mask: where(mask, 0.0, grad), None, lambda grad, mask: where(mask, grad, 0.0)),
                        jvp="transpose")


# -- special functions (NumPy kernels in special_math.py, in float64, cast back) ---------------
from . import special_math as _special  # noqa: E402

digamma: Op  # defined below; lgamma's and digamma's rules refer to them
polygamma: Op
special_i1: Op


def _check_float_kernel(kernel: str, x: np.ndarray) -> None:
    if x.dtype.kind not in "fV":
        raise _not_implemented_for(kernel, x.dtype)


lgamma = Op("lgamma", _real_only(_kernel("lgamma_vml_cpu"), _in_float64(_special.lgamma)), node="LgammaBackward0", dtype="float_unary",
            grads=(lambda grad, self: grad * digamma(self),), variants=_ALL_FORMS, jvp="elementwise")
digamma = Op("digamma", _real_only(_kernel("digamma"), _in_float64(_special.digamma)), node="DigammaBackward0", dtype="float_unary",
             grads=(lambda grad, self: grad * polygamma(self, 1),), variants=_ALL_FORMS, jvp="elementwise")


def _polygamma(x: np.ndarray, n: Any) -> np.ndarray:
    if type(n) is not int:
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if x.dtype.kind == "c":  # (PyTorch's kernels: digamma for n = 0, trigamma for 1)
        raise _not_implemented_for(("digamma", "trigamma")[n] if n < 2 else "polygamma", x.dtype)
    out = _special.polygamma(n, x)
    return out.astype(x.dtype, copy=False) if x.dtype != np.float64 else out


# (``retrograd.polygamma(n, input)`` takes n first: written in _functions.py)
polygamma = Op("polygamma", _polygamma, node="PolygammaBackward0", params=("n",), dtype="float_unary",
               grads=(lambda grad, self, n: grad * polygamma(self, n + 1),), variants=("method", "inplace"),
               convert={"n": "integer"}, jvp="elementwise")


def _mvlgamma(x: np.ndarray, p: Any) -> np.ndarray:
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # PyTorch's order: lgamma(x - (p-1)/2) + ... + lgamma(x), then the constant.
    total = np.zeros(x.shape, np.float64)
    for i in range(p - 1, -1, -1):
        total = total + _special.lgamma(x.astype(np.float64) - 0.5 * i)
    out = total + p * (p - 1) * float(np.log(np.pi)) / 4
    return out.astype(x.dtype, copy=False)


def _mvlgamma_grad(grad: Any, self: Any, p: Any) -> Any:
    total = digamma(self)
    for i in range(1, p):
        total = total + digamma(self - 0.5 * i)
    return grad * total


# (PyTorch's mvlgamma starts with an arange of the input's dtype: a complex one names that kernel)
mvlgamma = Op("mvlgamma", _real_only(_kernel("arange_cpu"), _mvlgamma), node="MvlgammaBackward0", params=("p",), dtype="float_unary",
              grads=(_mvlgamma_grad,), variants=_ALL_FORMS, convert={"p": "integer"}, jvp="transpose")


def _i1_grad(grad: Any, self: Any, result: Any) -> Any:
    # i1'(x) = i0(x) - i1(x) / x, and 1/2 at 0 (x replaced by eps there, as PyTorch, so no 0/0).
    eps = float(np.finfo(self._data.dtype).eps)
    tiny = _const(np.abs(self._data) <= eps)
    safe = where(tiny, eps, self)
    return grad * where(tiny, 0.5, i0(safe) - result / safe)


i0 = Op("i0", _real_only(_kernel("i0_vml_cpu"), _in_float64(_special.i0)), node="I0Backward0", dtype="float_unary",
        grads=(lambda grad, self: grad * special_i1(self),), variants=_ALL_FORMS, jvp="elementwise")
# (PyTorch's torch.special.i1: i0's derivative, differentiable again)
special_i1 = Op("special_i1", _real_only(_kernel("i1_cpu"), _in_float64(_special.i1)), node="SpecialI1Backward0", dtype="float_unary",
                grads=(_i1_grad,), jvp="elementwise")


def _gammainc(kernel: str, upper: bool) -> Any:
    def forward(a: np.ndarray, x: np.ndarray) -> np.ndarray:
        dtype = np.result_type(a, x)
        if dtype.kind not in "fV":
            raise _not_implemented_for(kernel, dtype)
        out = _special.gammainc(a, x, upper)
        return out.astype(dtype, copy=False)

    return forward


def _gammainc_input_grad(name: str) -> Any:
    def rule(grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")

    return rule


def _gammainc_other_grad(grad: Any, self: Any, other: Any) -> Any:
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
    return grad * ((self - 1) * other.log() - other - self.lgamma()).exp()


igamma = Op("igamma", _gammainc("igamma_cpu", False), node="IgammaBackward0", inputs=("self", "other"),
            dtype="promote", grads=(_gammainc_input_grad("igamma"), _gammainc_other_grad),
            variants=_ALL_FORMS, convert={"other": "tensor"}, jvp="transpose")
igammac = Op("igammac", _gammainc("igammac_cpu", True), node="IgammacBackward0", inputs=("self", "other"),
             dtype="promote", grads=(_gammainc_input_grad("igammac"),
                                     lambda grad, self, other: -_gammainc_other_grad(grad, self, other)),
             variants=_ALL_FORMS, convert={"other": "tensor"}, jvp="transpose")


# -- xlogy, sinc, logit, sgn, angle, deg2rad, rad2deg -------------------------------------------
@_quiet
def _xlogy(x: Any, y: Any) -> Any:
    # 0 where x == 0, unless y is NaN (as PyTorch)
    out = np.multiply(x, np.log(y))
    return np.where((np.asarray(x) == 0) & ~np.isnan(y), np.zeros((), out.dtype), out)


def _xlogy_self_grad(grad: Any, self: Any, other: Any) -> Any:
    # PyTorch's: xlogy(grad, other), 0 where self == 0 and other <= 0 (selected, so no -inf * 0)
    return where((self == 0) & (other <= 0), 0.0, xlogy(grad, other))


# The Tensor/Tensor entry and the two Scalar overloads (a number as ``other``: XlogyBackward2; as
# ``self``: XlogyBackward1, written in _functions.py).
xlogy = Op("xlogy", _real_only(_kernel("xlogy_cpu"), _xlogy, 2), node="XlogyBackward0", inputs=("self", "other"), dtype="float",
           grads=(_xlogy_self_grad, lambda grad, self, other: grad * self / other),
           variants=("method", "inplace"), convert={"other": "scalar"}, jvp="elementwise")
xlogy_scalar_other = Op("xlogy", _real_only(_kernel("xlogy_cpu"), lambda x, other: _xlogy(x, other).astype(x.dtype, copy=False)),
                        node="XlogyBackward2", params=("other",),
                        dtype="float", grads=(_xlogy_self_grad,),
                        variants=("method", "inplace"), convert={"other": "scalar"}, jvp="elementwise")
xlogy_scalar_self = Op("xlogy", _real_only(_kernel("xlogy_cpu"), lambda y, self: _xlogy(self, y)), node="XlogyBackward1", inputs=("other",),
                       params=("self",), dtype="promote+params",
                       grads=(lambda grad, self, other: grad * self / other,), jvp="elementwise")


@_quiet
def _sinc(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.sinc(x), x.dtype)


def _sinc_grad(grad: Any, self: Any) -> Any:
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0 (selected, not multiplied: no 0 * inf)
    pi_x = self * np.pi
    square = self * self * np.pi
    return where(square == 0.0, 0.0, grad * (pi_x * pi_x.cos() - pi_x.sin()) / square)


sinc = Op("sinc", _sinc, node="SincBackward0", dtype="float_unary", grads=(_sinc_grad,), variants=_ALL_FORMS,
          jvp="elementwise")


@_quiet
def _logit(x: np.ndarray, eps: Any) -> np.ndarray:
    if eps is not None:
        x = np.clip(x, eps, 1 - eps).astype(x.dtype, copy=False)
    return np.asarray(np.log(x / (1 - x)), x.dtype)


def _logit_grad(grad: Any, self: Any, eps: Any) -> Any:
    slope = grad / (self * (1 - self))
    if eps is None:
        return where((self < 0) | (self > 1), float("nan"), slope)
    return where((self < eps) | (self > 1 - eps), 0.0, slope)


logit = Op("logit", _real_only(_kernel("logit_cpu"), _logit), node="LogitBackward0", params=("eps",), dtype="float_unary", grads=(_logit_grad,),
           variants=_ALL_FORMS, signature="eps=None", jvp="elementwise")

def _sgn_forward(x: np.ndarray) -> np.ndarray:
    """``z / |z|`` (0 at 0) for a complex ``x`` (NumPy's ``sign``), else ``sign``."""
    return np.asarray(np.sign(x)) if x.dtype.kind == "c" else _sign(x)


sgn = Op("sgn", _sgn_forward, node="SgnBackward0", grads=(lambda grad, self, result: _zeros_like(grad),),
         variants=_ALL_FORMS, jvp="transpose")


def _angle(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":  # (a real result: complex64's angle is float32)
        return np.angle(x).astype(x.real.dtype, copy=False)
    # real input: pi below 0, NaN for NaN, else 0
    out = np.where(x < 0, np.pi, 0.0).astype(x.dtype, copy=False)
    return np.where(np.isnan(x), x, out)


def _angle_grad(grad: Any, self: Any) -> Any:
    # d angle(z) is Im(conj(z) dz) / |z|^2: PyTorch's gradient i * grad * z / |z|^2 (0 at z = 0);
    # a real input's angle is piecewise constant.
    if self._data.dtype.kind != "c":
        return _zeros_like(grad)
    return where(self == 0, 0.0, grad * self / (self.abs() ** 2) * 1j)


angle = Op("angle", _angle, node="AngleBackward0", dtype="float_unary",
           grads=(_angle_grad,), variants=("function", "method"), jvp="transpose")
_DEG = float(np.pi / 180.0)
deg2rad = Op("deg2rad", _real_only(_message(RuntimeError, "deg2rad is not supported for complex tensors."),
                                     lambda x: np.multiply(x, np.asarray(_DEG, x.dtype))), node="Deg2RadBackward0",
             dtype="float_unary", grads=(lambda grad: grad * _DEG,), variants=_ALL_FORMS, jvp="elementwise")
rad2deg = Op("rad2deg", _real_only(_message(RuntimeError, "rad2deg is not supported for complex tensors."),
                                     lambda x: np.multiply(x, np.asarray(180.0 / np.pi, x.dtype))), node="Rad2DegBackward0",
             dtype="float_unary", grads=(lambda grad: grad * (180.0 / np.pi),), variants=_ALL_FORMS, jvp="elementwise")


# -- copysign, heaviside, fmax/fmin, nextafter, ldexp, frexp -----------------------------------
def _copysign_self_grad(grad: Any, self: Any, result: Any) -> Any:
    # result / self is +-1, and 0 where self is 0 (selected: no 0/0)
    ratio = where(self == 0, 0.0, result / self)
    return grad * ratio


copysign_scalar = Op("copysign", _quiet(_real_only(_kernel("copysign_cpu"),
                                                   lambda x, other: np.copysign(x, other).astype(x.dtype, copy=False))),
                     node="CopysignBackward1", params=("other",), dtype="float", grads=(_copysign_self_grad,),
                     variants=_ALL_FORMS, convert={"other": "scalar"}, jvp="elementwise")
copysign = Op("copysign", _quiet(_real_only(_kernel("copysign_cpu"), np.copysign, 2)), node="CopysignBackward0", inputs=("self", "other"), dtype="float",
              grads=(_copysign_self_grad, lambda grad: _zeros_like(grad)),
              variants=_ALL_FORMS, convert={"other": "scalar"}, jvp="elementwise")


def _heaviside(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if x.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if x.dtype.kind in "fV":
        return np.heaviside(x, values)
    return np.where(x == 0, values, x > 0).astype(x.dtype)


def _not_differentiable(name: str) -> Any:
    def rule(grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return rule


heaviside = Op("heaviside", _heaviside, node="NotImplemented", inputs=("self", "values"),
               grads=(_not_differentiable("heaviside"), _not_differentiable("heaviside")),
               variants=("function", "method"), convert={"values": "tensor"}, jvp="transpose")
# (no ``heaviside_``/``floor_divide_`` yet: PyTorch's in-place node refuses with its own name,
# ``aten::heaviside_``, and one NotImplemented node per op name is all the forms can tell apart)


def _fmax_self_grad(grad: Any, self: Any, other: Any) -> Any:
    # the first operand wins ties, and wherever the other is NaN
    return where((self >= other) | other.isnan(), grad, 0.0)


def _fmin_self_grad(grad: Any, self: Any, other: Any) -> Any:
    return where((self <= other) | other.isnan(), grad, 0.0)


_fmax = _real_pairwise(np.fmax, _not_for_complex("fmax"), input_on_tie=False)
_fmin = _real_pairwise(np.fmin, _not_for_complex("fmin"), input_on_tie=False)
fmax = Op("fmax", _fmax, node="FmaxBackward0", inputs=("self", "other"), dtype="promote",
          grads=(_fmax_self_grad, lambda grad, self, other: where((self >= other) | other.isnan(), 0.0, grad)),
          variants=("function", "method"), convert={"other": "tensor"}, jvp="elementwise")
fmin = Op("fmin", _fmin, node="FminBackward0", inputs=("self", "other"), dtype="promote",
          grads=(_fmin_self_grad, lambda grad, self, other: where((self <= other) | other.isnan(), 0.0, grad)),
          variants=("function", "method"), convert={"other": "tensor"}, jvp="elementwise")


def _nextafter(x: np.ndarray, other: np.ndarray) -> np.ndarray:
    _check_float_kernel("nextafter_cpu", np.empty(0, np.result_type(x, other)))
    return np.nextafter(x, other)


nextafter = Op("nextafter", _nextafter, node="NextafterBackward0", inputs=("self", "other"), dtype="promote",
               grads=(lambda grad: grad, lambda grad: _zeros_like(grad)),
               variants=_ALL_FORMS, convert={"other": "tensor"}, jvp="transpose")


def _ldexp(x: np.ndarray, other: np.ndarray) -> np.ndarray:
    return np.multiply(x, np.exp2(other.astype(x.dtype, copy=False)))


ldexp = Op("ldexp", _quiet(_ldexp), node="LdexpBackward0", inputs=("self", "other"), dtype="float",
           # (PyTorch's ``grad * 2 ** other``: integer powers for an integer exponent, so 0 below 0)
           grads=(lambda grad, other: grad * (2 ** other), lambda grad, result: grad * result * _LN2),
           variants=_ALL_FORMS, convert={"other": "tensor"}, jvp="elementwise")


def _frexp(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if x.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(x)
    return mantissa, exponent.astype(np.int32)


# (``Tensor.frexp`` in tensor.py returns PyTorch's named pair, ``return_types.frexp``)
frexp = Op("frexp", _frexp, node="FrexpBackward0", outputs=2, differentiable_outputs=(True, False),
           grads=(lambda grad, result1: grad[0] / exp2(result1),), saved={"exponent": "result1"}, jvp="transpose")


# -- integer ops: gcd, lcm, shifts, bitwise; signbit, floor_divide -----------------------------
gcd = Op("gcd", _integer_kernel("gcd_cpu", np.gcd), inputs=("self", "other"), dtype="promote",
         variants=_ALL_FORMS, convert={"other": "tensor"})
lcm = Op("lcm", _integer_kernel("lcm_cpu", np.lcm), inputs=("self", "other"), dtype="promote",
         variants=_ALL_FORMS, convert={"other": "tensor"})


def _shift(left: bool) -> Any:
    def forward(a: Any, b: Any) -> Any:
        dtype = np.result_type(a, b)  # (a Python number is weak: the operands are already promoted)
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if dtype.kind not in "iu":
            raise _dtype_refused("lshift_cpu" if left else "rshift_cpu", dtype, a, b)
        a_arr, b_arr = a_arr.astype(dtype, copy=False), b_arr.astype(dtype, copy=False)
        bits = dtype.itemsize * 8
        # A shift by a negative amount or by the width or more: 0 (and -1 for a negative number
        # shifted right), as PyTorch; NumPy's is the processor's (masked amount).
        out_of_range = (b_arr < 0) | (b_arr >= bits)
        safe = np.where(out_of_range, 0, b_arr).astype(dtype, copy=False)
        if left:
            out = np.left_shift(a_arr, safe)
            return np.where(out_of_range, np.zeros((), dtype), out)
        out = np.right_shift(a_arr, safe)
        return np.where(out_of_range, np.where(a_arr < 0, -1, 0).astype(dtype), out)

    return forward


bitwise_left_shift = Op("bitwise_left_shift", _shift(True), inputs=("self", "other"), dtype="promote",
                        variants=_ALL_FORMS, convert={"other": "scalar"}, operators=("__lshift__",))
bitwise_right_shift = Op("bitwise_right_shift", _shift(False), inputs=("self", "other"), dtype="promote",
                         variants=_ALL_FORMS, convert={"other": "scalar"}, operators=("__rshift__",))

signbit = Op("signbit", _real_only(_message(NotImplementedError, "signbit is not implemented for complex tensors."), lambda x: np.signbit(x) if x.dtype.kind in "fV" else np.asarray(x < 0) if x.dtype.kind == "i"
             else np.zeros(x.shape, np.bool_)), variants=("function", "method"))


def _floor_divide(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype is _BOOL:
        raise _not_implemented_for("div_floor_cpu", _BOOL)
    return _div_rounding(a, b, "floor")


floor_divide = Op("floor_divide", _quiet(_floor_divide), node="NotImplemented", inputs=("self", "other"),
                  dtype="promote", grads=(_not_differentiable("floor_divide"), _not_differentiable("floor_divide")),
                  variants=("function", "method"), convert={"other": "scalar"}, jvp="transpose")

# -- tests of values (bool results, no gradient) ------------------------------------------------
_PREDICATE = ("function", "method")
isnan = Op("isnan", np.isnan, variants=_PREDICATE)
isinf = Op("isinf", np.isinf, variants=_PREDICATE)
isfinite = Op("isfinite", np.isfinite, variants=_PREDICATE)
isposinf = Op("isposinf", _real_only(_message(RuntimeError, "isposinf does not support complex inputs."),
                                  lambda x: np.isposinf(x) if x.dtype.kind in "fV" else np.zeros(x.shape, np.bool_)),
              variants=_PREDICATE)
isneginf = Op("isneginf", _real_only(_message(RuntimeError, "isneginf does not support complex inputs."),
                                  lambda x: np.isneginf(x) if x.dtype.kind in "fV" else np.zeros(x.shape, np.bool_)),
              variants=_PREDICATE)
isreal = Op("isreal", lambda x: np.asarray(x.imag == 0) if x.dtype.kind == "c" else np.ones(x.shape, np.bool_),
            variants=_PREDICATE)


def _isclose(a: Any, b: Any, rtol: Any, atol: Any, equal_nan: Any) -> Any:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{scalar_type_name(a.dtype)} did not match {scalar_type_name(b.dtype)}")
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


isclose = Op("isclose", _isclose, inputs=("self", "other"), params=("rtol", "atol", "equal_nan"),
             variants=_PREDICATE, signature="other, rtol=1e-05, atol=1e-08, equal_nan=False",
             convert={"other": "tensor"})


# ``torch.fill(input, value)``: out of place, its own nodes (the in-place ``fill_`` records
# FillBackward2/3).
fill_out = Op("fill", lambda x, value: np.full(x.shape, _check_int_scalars(value), dtype=x.dtype), node="FillBackward0",
              params=("value",), grads=(_zeros_like,), jvp="transpose")
fill_tensor_out = Op("fill", lambda x, value: np.full(x.shape, value, dtype=x.dtype), node="FillBackward1",
                     inputs=("self", "value"), grads=(_zeros_like, lambda grad: grad), jvp="transpose")
