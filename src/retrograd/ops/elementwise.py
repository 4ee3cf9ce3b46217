"""Elementwise ops: arithmetic, unary math, activations, comparisons, ``where``, casts.

Each entry is one ``Op``: the NumPy forward beside one backward rule per input (see op.py).
Binary ops broadcast; the engine sums each gradient back to its input's shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import FROM_NUMPY, get_default_dtype, scalar_type_name
from .op import Op

where: Op  # defined below; rules refer to it
tanh_backward: Op
sigmoid_backward: Op

# -- arithmetic -------------------------------------------------------------------------------


def _add(a: Any, b: Any, alpha: Any) -> Any:
    return np.add(a, b) if alpha == 1 else np.add(a, np.multiply(b, alpha))


def _sub(a: Any, b: Any, alpha: Any) -> Any:
    return np.subtract(a, b) if alpha == 1 else np.subtract(a, np.multiply(b, alpha))


def _scaled(grad: Any, alpha: Any) -> Any:
    return grad if alpha == 1 else grad * alpha


add = Op("add", _add, node="AddBackward0", inputs=("self", "other"), params=("alpha",), dtype="promote",
         grads=(lambda grad: grad,
                lambda grad, alpha: _scaled(grad, alpha)))

sub = Op("sub", _sub, node="SubBackward0", inputs=("self", "other"), params=("alpha",), dtype="promote",
         grads=(lambda grad: grad,
                lambda grad, alpha: -_scaled(grad, alpha)))

# ``scalar - tensor``: PyTorch records rsub with the scalar as a parameter, so one edge.
rsub = Op("rsub", lambda x, other, alpha: np.subtract(other, x if alpha == 1 else x * alpha),
          node="RsubBackward1", params=("other", "alpha"), dtype="promote+params",
          grads=(lambda grad, alpha: -_scaled(grad, alpha),))

mul = Op("mul", np.multiply, node="MulBackward0", inputs=("self", "other"), dtype="promote",
         grads=(lambda grad, other: grad * other,
                lambda grad, self: grad * self))

div = Op("div", np.true_divide, node="DivBackward0", inputs=("self", "other"), dtype="float",
         grads=(lambda grad, other: grad / other,
                lambda grad, self, other: -grad * self / (other * other)))

neg = Op("neg", np.negative, node="NegBackward0", grads=(lambda grad: -grad,))

reciprocal = Op("reciprocal", lambda x: np.reciprocal(x), node="ReciprocalBackward0", dtype="float_unary",
                grads=(lambda grad, result: -grad * result * result,))


def _pow_scalar(x: Any, exponent: Any) -> Any:
    if x.dtype.kind in "biu":
        if type(exponent) is float:
            x = x.astype(get_default_dtype().np)
        elif exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(x, exponent)


def _pow_scalar_grad(grad: Any, self: Any, exponent: Any) -> Any:
    if exponent == 0:
        return grad * 0
    return grad * (exponent * self ** (exponent - 1))


def _pow_exponent_grad(grad: Any, self: Any, result: Any) -> Any:
    # d/de x**e = x**e * log(x); PyTorch defines it as 0 where x == 0 (and e >= 0).
    safe_log = where(self == 0, 0.0, self).log()
    return grad * result * safe_log


pow_scalar = Op("pow", _pow_scalar, node="PowBackward0", params=("exponent",),
                grads=(_pow_scalar_grad,))

pow_tensor = Op("pow", np.power, node="PowBackward1", inputs=("self", "exponent"), dtype="promote",
                grads=(lambda grad, self, exponent: grad * exponent * self ** (exponent - 1),
                       _pow_exponent_grad))

# ``scalar ** tensor``: the base is a parameter, the exponent the only input.
pow_scalar_base = Op("pow", lambda exponent, base: np.power(base, exponent), node="PowBackward2",
                     inputs=("exponent",), params=("base",), dtype="promote+params",
                     grads=(lambda grad, result, base: grad * result * float(np.log(base)),))

# -- unary math -------------------------------------------------------------------------------

exp = Op("exp", np.exp, node="ExpBackward0", dtype="float_unary",
         grads=(lambda grad, result: grad * result,))
log = Op("log", np.log, node="LogBackward0", dtype="float_unary",
         grads=(lambda grad, self: grad / self,))
sqrt = Op("sqrt", np.sqrt, node="SqrtBackward0", dtype="float_unary",
          grads=(lambda grad, result: grad / (2 * result),))
sin = Op("sin", np.sin, node="SinBackward0", dtype="float_unary",
         grads=(lambda grad, self: grad * self.cos(),))
cos = Op("cos", np.cos, node="CosBackward0", dtype="float_unary",
         grads=(lambda grad, self: -grad * self.sin(),))
# PyTorch's fused backward ops: one op per rule instead of three, each differentiable again.
tanh_backward = Op("tanh_backward", lambda grad, out: grad * (1 - out * out), node="TanhBackwardBackward0",
                   inputs=("grad", "result"), dtype="promote",
                   grads=(lambda gg, result: tanh_backward(gg, result),
                          lambda gg, grad, result: gg * grad * -2 * result))
sigmoid_backward = Op("sigmoid_backward", lambda grad, out: grad * (out * (1 - out)),
                      node="SigmoidBackwardBackward0", inputs=("grad", "result"), dtype="promote",
                      grads=(lambda gg, result: sigmoid_backward(gg, result),
                             lambda gg, grad, result: gg * grad * (1 - 2 * result)))

tanh = Op("tanh", np.tanh, node="TanhBackward0", dtype="float_unary",
          grads=(lambda grad, result: tanh_backward(grad, result),))


def _sigmoid(x: Any) -> Any:
    # exp of a non-positive number only, so no overflow for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid = Op("sigmoid", _sigmoid, node="SigmoidBackward0", dtype="float_unary",
             grads=(lambda grad, result: sigmoid_backward(grad, result),))

sign = Op("sign", np.sign, node="SignBackward0", grads=(lambda grad: grad * 0,))

abs = Op("abs", np.abs, node="AbsBackward0",  # noqa: A001 - PyTorch's name
         grads=(lambda grad, self: grad * self.sign(),))

relu = Op("relu", lambda x: np.maximum(x, 0).astype(x.dtype, copy=False), node="ReluBackward0",
          grads=(lambda grad, result: grad * (result > 0),))


def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if x.dtype.kind in "biu" and (type(lo) is float or type(hi) is float):
        x = x.astype(get_default_dtype().np)
    out = x
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out.astype(x.dtype, copy=False)


def _clamp_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    if min is not None and max is not None:
        return grad * ((self >= min) & (self <= max))
    if min is not None:
        return grad * (self >= min)
    return grad * (self <= max)


clamp = Op("clamp", _clamp, node="ClampBackward1", params=("min", "max"), grads=(_clamp_grad,))

# -- comparisons (no gradient; bool results) --------------------------------------------------

_BINARY = ("self", "other")
eq = Op("eq", np.equal, inputs=_BINARY)
ne = Op("ne", np.not_equal, inputs=_BINARY)
lt = Op("lt", np.less, inputs=_BINARY)
le = Op("le", np.less_equal, inputs=_BINARY)
gt = Op("gt", np.greater, inputs=_BINARY)
ge = Op("ge", np.greater_equal, inputs=_BINARY)
logical_not = Op("logical_not", np.logical_not)
logical_and = Op("logical_and", np.logical_and, inputs=("self", "other"))
logical_or = Op("logical_or", np.logical_or, inputs=("self", "other"))
logical_xor = Op("logical_xor", np.logical_xor, inputs=("self", "other"))
bitwise_and = Op("bitwise_and", np.bitwise_and, inputs=("self", "other"))
bitwise_or = Op("bitwise_or", np.bitwise_or, inputs=("self", "other"))
bitwise_xor = Op("bitwise_xor", np.bitwise_xor, inputs=("self", "other"))
bitwise_not = Op("bitwise_not", np.invert)


def _where(condition: Any, x: Any, y: Any) -> Any:
    if condition.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_type_name(condition.dtype)}")
    return np.where(condition, x, y)


where = Op("where", _where, node="WhereBackward0", inputs=("condition", "self", "other"), dtype="promote_values",
           grads=(None,
                  lambda grad, condition: where(condition, grad, 0.0),
                  lambda grad, condition: where(condition, 0.0, grad)))

# -- copies and casts -------------------------------------------------------------------------

clone = Op("clone", lambda x: x.copy(), node="CloneBackward0", grads=(lambda grad: grad,))

to_dtype = Op("to", lambda x, dtype: x.astype(dtype), node="ToCopyBackward0", params=("dtype",),
              grads=(lambda grad, self_dtype: grad.to(FROM_NUMPY[self_dtype]),))

# The in-place ops' out-of-place forms: ``copy_`` and ``fill_`` overwrite ``self``.
copy = Op("copy", lambda x, src: np.broadcast_to(src, x.shape).astype(x.dtype), node="CopyBackwards",
          inputs=("self", "src"),
          grads=(lambda grad: grad * 0,
                 lambda grad, src_dtype: grad.to(FROM_NUMPY[src_dtype])))

fill = Op("fill", lambda x, value: np.full(x.shape, value, dtype=x.dtype), node="FillBackward2",
          params=("value",), grads=(lambda grad: grad * 0,))

zero = Op("zero", lambda x: np.zeros_like(x), node="ZeroBackward0", grads=(lambda grad: grad * 0,))

masked_fill = Op("masked_fill", lambda x, mask, value: np.asarray(np.where(mask, value, x)).astype(x.dtype, copy=False),
                 node="MaskedFillBackward0", inputs=("self", "mask"), params=("value",),
                 grads=(lambda grad, mask: where(mask, 0.0, grad), None))


def _maximum_grad(grad: Any, self: Any, other: Any) -> Any:
    # Ties split the gradient evenly, as PyTorch does.
    return where(self == other, grad / 2, grad).masked_fill(self < other, 0.0)


def _minimum_grad(grad: Any, self: Any, other: Any) -> Any:
    return where(self == other, grad / 2, grad).masked_fill(self > other, 0.0)


maximum = Op("maximum", np.maximum, node="MaximumBackward0", inputs=("self", "other"), dtype="promote",
             grads=(_maximum_grad, lambda grad, self, other: _maximum_grad(grad, other, self)))
minimum = Op("minimum", np.minimum, node="MinimumBackward0", inputs=("self", "other"), dtype="promote",
             grads=(_minimum_grad, lambda grad, self, other: _minimum_grad(grad, other, self)))


def _div_rounding(a: Any, b: Any, rounding_mode: str) -> Any:
    if rounding_mode == "floor":
        if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
            if np.any(np.asarray(b) == 0):
                raise RuntimeError("ZeroDivisionError")
            return np.floor_divide(a, b)
        return np.floor(np.true_divide(a, b))
    if rounding_mode == "trunc":
        q = np.true_divide(a, b)
        out = np.trunc(q)
        if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
            return np.asarray(out).astype(np.result_type(a, b))
        return out
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


# Rounded division is piecewise constant: zero gradient, as in PyTorch.
div_rounding = Op("div", _div_rounding, node="DivBackward2", inputs=("self", "other"), params=("rounding_mode",),
                  dtype="promote", grads=(lambda grad: grad * 0, lambda grad: grad * 0))


def _remainder(a: Any, b: Any) -> Any:
    return np.mod(a, b)


remainder = Op("remainder", _remainder, node="RemainderBackward1", inputs=("self", "other"), dtype="promote",
               grads=(lambda grad: grad,
                      lambda grad, self, other: -grad * (self / other).floor()))

floor = Op("floor", np.floor, node="FloorBackward0", grads=(lambda grad: grad * 0,))


def _clamp_tensor(x: Any, lo: Any, hi: Any) -> Any:
    out = x
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out


def _clamp_self_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    keep = None
    if min is not None:
        keep = self >= min
    if max is not None:
        upper = self <= max
        keep = upper if keep is None else keep & upper
    return grad * keep


def _clamp_min_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    picked = self < min
    if max is not None:
        picked = picked & (min <= max)
    return grad * picked


def _clamp_max_grad(grad: Any, self: Any, min: Any, max: Any) -> Any:  # noqa: A002
    picked = self > max
    if min is not None:
        picked = picked | (min > max)
    return grad * picked


clamp_tensor = Op("clamp", _clamp_tensor, node="ClampBackward0", inputs=("self", "min", "max"), dtype="promote",
                  grads=(_clamp_self_grad, _clamp_min_grad, _clamp_max_grad))
