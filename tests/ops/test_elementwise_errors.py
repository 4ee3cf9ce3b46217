"""Bad input to the elementwise ops raises PyTorch's exception type and message (checked against
real PyTorch when it is installed), never a NumPy traceback."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip

ADDCDIV_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2."
)

# (id, fn(lib), exception type, message prefix)
CASES: list[tuple[str, Callable[[Any], Any], type[BaseException], str]] = [
    ("sub two bools", lambda lib: lib.tensor([True]) - lib.tensor([False]), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
     "operator instead."),
    ("rsub two bools", lambda lib: lib.rsub(lib.tensor([True]), lib.tensor([True])), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported."),
    ("sub integral alpha", lambda lib: lib.sub(lib.tensor([1, 2]), 1, alpha=0.5), RuntimeError,
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("rsub integral alpha", lambda lib: lib.rsub(lib.tensor([1, 2]), 2, alpha=0.5), RuntimeError,
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("pow negative integer", lambda lib: lib.pow(lib.tensor([1, 2]), -1), RuntimeError,
     "Integers to negative integer powers are not allowed."),
    ("ceil bool", lambda lib: lib.ceil(lib.tensor([True])), NotImplementedError,
     "\"ceil_vml_cpu\" not implemented for 'Bool'"),
    ("floor bool", lambda lib: lib.tensor([True]).floor(), NotImplementedError,
     "\"floor_vml_cpu\" not implemented for 'Bool'"),
    ("round bool", lambda lib: lib.round(lib.tensor([False])), NotImplementedError,
     "\"round_vml_cpu\" not implemented for 'Bool'"),
    ("trunc bool", lambda lib: lib.trunc(lib.tensor([False])), NotImplementedError,
     "\"trunc_vml_cpu\" not implemented for 'Bool'"),
    ("round decimals int", lambda lib: lib.round(lib.tensor([1, 2]), decimals=1), NotImplementedError,
     "\"round_cpu\" not implemented for 'Long'"),
    ("frac int", lambda lib: lib.tensor([1, 2]).frac(), NotImplementedError, "\"frac_cpu\" not implemented for 'Long'"),
    ("fmod int by zero", lambda lib: lib.fmod(lib.tensor([1, 2]), 0), RuntimeError, "ZeroDivisionError"),
    ("fmod int by zero tensor", lambda lib: lib.tensor([1, 2]).fmod(lib.tensor([0, 1])), RuntimeError,
     "ZeroDivisionError"),
    ("remainder int by zero", lambda lib: lib.tensor([1, 2]) % 0, RuntimeError, "ZeroDivisionError"),
    ("remainder int by zero tensor", lambda lib: lib.remainder(lib.tensor([3]), lib.tensor([0])), RuntimeError,
     "ZeroDivisionError"),
    ("atan2 number (method)", lambda lib: lib.ones(2).atan2(2), TypeError,
     "atan2(): argument 'other' (position 1) must be Tensor, not int"),
    ("atan2 number (function)", lambda lib: lib.atan2(lib.ones(2), 2.0), TypeError,
     "atan2(): argument 'other' (position 2) must be Tensor, not float"),
    ("hypot number", lambda lib: lib.hypot(lib.ones(2), 2), TypeError,
     "hypot(): argument 'other' (position 2) must be Tensor, not int"),
    ("logaddexp number", lambda lib: lib.ones(2).logaddexp(2), TypeError,
     "logaddexp(): argument 'other' (position 1) must be Tensor, not int"),
    ("hypot int", lambda lib: lib.hypot(lib.tensor([3]), lib.tensor([4])), NotImplementedError,
     "\"hypot_cpu\" not implemented for 'Long'"),
    ("logaddexp int", lambda lib: lib.logaddexp(lib.tensor([3]), lib.tensor([4])), NotImplementedError,
     "\"logaddexp_cpu\" not implemented for 'Long'"),
    ("atan2 broadcast", lambda lib: lib.atan2(lib.ones(3, 4), lib.ones(2)), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1"),
    ("lerp end dtype", lambda lib: lib.lerp(lib.ones(2, dtype=lib.float64), lib.ones(2), 0.5), RuntimeError,
     "expected dtype double for `end` but got dtype float"),
    ("lerp half end", lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float16), 0.5), RuntimeError,
     "expected dtype float for `end` but got dtype c10::Half"),
    ("lerp weight dtype", lambda lib: lib.lerp(lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.int64)), RuntimeError,
     "expected dtype float for `weight` but got dtype long int"),
    ("lerp int", lambda lib: lib.lerp(lib.tensor([1]), lib.tensor([2]), 0.5), NotImplementedError,
     "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    ("lerp int tensor weight", lambda lib: lib.tensor([1]).lerp(lib.tensor([2]), lib.tensor([1])),
     NotImplementedError, "\"lerp_kernel_tensor\" not implemented for 'Long'"),
    ("lerp broadcast", lambda lib: lib.lerp(lib.ones(3, 4), lib.ones(2), 0.5), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1"),
    ("addcdiv ints", lambda lib: lib.addcdiv(lib.ones(2), lib.tensor([1, 2]), lib.tensor([3, 4])), RuntimeError,
     ADDCDIV_MESSAGE),
    ("clamp no bounds", lambda lib: lib.clamp(lib.ones(2)), RuntimeError,
     "torch.clamp: At least one of 'min' or 'max' must not be None"),
    ("float_power_ float32", lambda lib: lib.ones(2).float_power_(2), RuntimeError,
     "the base given to float_power_ has dtype Float but the operation's result requires dtype Double"),
    ("erf_ on int", lambda lib: lib.tensor([1, 2]).erf_(), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    ("square_ on bool", lambda lib: lib.tensor([1, 2]).rsqrt_(), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    ("fmod bool", lambda lib: lib.fmod(lib.tensor([True]), lib.tensor([True])), NotImplementedError,
     "\"fmod_cpu\" not implemented for 'Bool'"),
    ("remainder bool", lambda lib: lib.tensor([True]).remainder(lib.tensor([True])), NotImplementedError,
     "\"remainder_cpu\" not implemented for 'Bool'"),
    ("addcmul bool", lambda lib: lib.addcmul(lib.tensor([True]), lib.tensor([True]), lib.tensor([True])),
     NotImplementedError, "\"addcmul_cpu_out\" not implemented for 'Bool'"),
    ("clamp bool with tensor bounds",
     lambda lib: lib.clamp(lib.tensor([True]), lib.tensor([False]), lib.tensor([True])), NotImplementedError,
     "\"clamp_cpu\" not implemented for 'Bool'"),
    ("in-place broadcast to a smaller tensor", lambda lib: lib.ones(2).addcmul_(lib.ones(3, 2), lib.ones(2)),
     RuntimeError, "output with shape [2] doesn't match the broadcast shape [3, 2]"),
]


@pytest.mark.parametrize(("fn", "exc", "message"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error(fn: Callable[[Any], Any], exc: type[BaseException], message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        fn(rg)


@pytest.mark.parametrize(("fn", "exc", "message"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error_matches_torch(fn: Callable[[Any], Any], exc: type[BaseException], message: str) -> None:
    torch = torch_or_skip()
    with pytest.raises(exc, match=re.escape(message)):
        fn(torch)


def test_remainder_with_number_first_refuses_backward() -> None:
    x = rg.tensor([3.0, 4.0], requires_grad=True)
    y = rg.remainder(5, x)
    assert type(y.grad_fn).__name__ == "NotImplemented"
    assert y.tolist() == [2.0, 1.0]
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        y.sum().backward()


def test_domain_errors_are_silent_nan() -> None:
    # PyTorch returns nan/inf without warnings where NumPy would warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = [rg.tensor([-1.0, 2.0]).log2(), rg.tensor([2.0]).asin(), rg.tensor([0.0]).rsqrt(),
               rg.tensor([1.5, -1.0]).erfinv(), rg.tensor([-2.0]).log1p(), rg.tensor([1.0]).atanh()]
    assert np.isnan(out[0][0].item()) and out[0][1].item() == 1.0
    assert np.isnan(out[1].item()) and out[2].item() == np.inf
    assert np.isnan(out[3][0].item()) and out[3][1].item() == -np.inf
    assert np.isnan(out[4].item()) and out[5].item() == np.inf


def test_sub_keeps_float32_with_alpha() -> None:
    assert rg.sub(rg.ones(2), 1.5, alpha=2.5).dtype == rg.float32
    assert rg.add(rg.ones(2), 1.5, alpha=2.5).dtype == rg.float32


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_inplace_inverse_hyperbolic_refuses_backward(name: str) -> None:
    # As PyTorch: the in-place forms record their own node (``AsinhBackward1``...) that refuses.
    x = rg.tensor([0.3, 0.5], requires_grad=True)
    y = getattr(x * 1.0 + (1.5 if name == "acosh" else 0.0), name + "_")()
    assert type(y.grad_fn).__name__ == name.capitalize() + "Backward1"
    message = f"the derivative for 'inplace version of {name}' is not implemented."
    with pytest.raises(RuntimeError, match=re.escape(message)):
        y.sum().backward()


def test_clamp_promotes_bool_and_int_like_torch() -> None:
    b = rg.tensor([True, False])
    assert rg.clamp(b, 0, 1).dtype == rg.int64 and rg.clamp(b, 0, 1).tolist() == [1, 0]
    assert b.clamp_max(1).dtype == rg.int64
    assert rg.tensor([0, 3]).clamp_min(0.5).dtype == rg.float32


# -- numerical edge cases ----------------------------------------------------------------------


def test_erf_family_accuracy_against_torch() -> None:
    torch = torch_or_skip()
    x = np.concatenate([np.linspace(-7, 7, 20001), [-1e-300, 0.0, 1e-300, 26.5, -30.0, np.inf, -np.inf, np.nan]])
    for name, rtol in (("erf", 2e-15), ("erfc", 1e-14)):
        ours = getattr(rg.tensor(x), name)().numpy()
        ref = getattr(torch.tensor(x), name)().numpy()
        np.testing.assert_allclose(ours, ref, rtol=rtol, atol=1e-300, equal_nan=True)
    y = np.concatenate([np.linspace(-1, 1, 20001), 1 - np.logspace(-16, -1, 300), np.logspace(-300, -1, 300),
                        [np.nan, 1.5, -2.0]])
    np.testing.assert_allclose(rg.tensor(y).erfinv().numpy(), torch.tensor(y).erfinv().numpy(), rtol=5e-15,
                               atol=1e-300, equal_nan=True)


def test_erfinv_inverts_erf() -> None:
    x = np.linspace(-5.0, 5.0, 4001)
    roundtrip = rg.tensor(x).erf().erfinv().numpy()
    # erf (relative error ~1e-15) is flat in the tails: the achievable accuracy is that / erf'(x).
    tolerance = 1.5e-15 / (2 / np.sqrt(np.pi) * np.exp(-x * x)) + 1e-15
    assert np.all(np.abs(roundtrip - x) <= tolerance)
