"""Small differences from PyTorch 2.13 (issue 8, second part), each compared with real PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _grads_of(lib: Any, fn: Any) -> Any:
    """What ``fn(lib)`` returns, as plain values (tensors as lists, exceptions as (type, message))."""
    try:
        value = fn(lib)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e))
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "detach") and hasattr(value, "tolist"):
        return value.detach().tolist()
    return value


# -- views made under no_grad of a base that requires grad -------------------------------------


def _no_grad_views(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 2  # a non-leaf base
    with lib.no_grad():
        views = {"slice": x[1:], "view": x.view(3), "unsqueeze": x.unsqueeze(0), "expand": x.expand(2, 3),
                 "split": x.split(1)[0], "unbind": x.unbind(0)[1], "nonleaf": b[:2], "of_view": x[1:][:1]}
        not_views = {"detach": x.detach(), "op": x * 2}
    with lib.inference_mode():
        inference = x[:1]
    out: dict[str, Any] = {}
    for name, v in {**views, "inference": inference}.items():
        out[name] = (v.requires_grad, v.is_leaf, v.grad_fn is None)
    for name, v in not_views.items():
        out[name] = v.requires_grad
    # Their later ops record a graph, but no gradient flows into the base or the view.
    v = views["slice"]
    y = v * 3 + x[1:] ** 2
    out["graph"] = (y.requires_grad, type(y.grad_fn).__name__)
    y.sum().backward()
    out["x.grad"] = x.grad.tolist()
    out["v.grad"] = v.grad
    out["next_functions"] = [fn is None for fn, _ in (v * 2).grad_fn.next_functions]
    out["grad_unused"] = outcome(lambda: lib.autograd.grad((v * v).sum(), x))
    out["grad_allow_unused"] = lib.autograd.grad((v * v).sum(), [x, v], allow_unused=True)[0] is None
    out["grad_wrt_view"] = outcome(lambda: lib.autograd.grad((v * v).sum(), v))
    out["backward_of_view"] = outcome(lambda: v.backward(lib.ones(2)))
    out["retain_grad"] = outcome(lambda: v.retain_grad())
    out["requires_grad_false"] = v.requires_grad_(False).requires_grad
    out["inplace"] = outcome(lambda: v.mul_(2))
    z = lib.tensor([1.0, 2.0])
    with lib.no_grad():
        out["base_without_grad"] = z[:1].requires_grad
    return out


def test_views_made_under_no_grad_require_grad_as_in_pytorch(torch: Any) -> None:
    assert _no_grad_views(rg) == _no_grad_views(torch)


# -- subtraction with a bool operand ------------------------------------------------------------

BOOL_SUB_CASES = [
    "b - x", "x - b", "b - i", "i - b", "b - b", "b - 1", "b - 1.0", "1 - b", "1.0 - b", "True - b", "b - True",
    "x - True", "True - x", "i - True", "lib.sub(b, x)", "lib.sub(x, b)", "lib.subtract(b, x)", "lib.rsub(b, x)",
    "lib.rsub(x, b)", "lib.rsub(b, 1)", "lib.rsub(x, True)", "b.sub(1)", "b.sub(x, alpha=2)", "x.sub(b, alpha=2)",
    "lib.sub(b, b, alpha=True)", "x - lib.tensor(True)", "b - lib.tensor(1.0)", "b.sub_(1)", "x.clone().sub_(b)",
    "x.clone().sub_(True)", "b.clone().sub_(b)", "lib.tensor(True) - lib.tensor(2.0)", "xg - b", "b - xg",
]


@pytest.mark.parametrize("expr", BOOL_SUB_CASES)
def test_subtraction_with_a_bool_operand(expr: str, torch: Any) -> None:
    def run(lib: Any) -> Any:
        b, x, i = lib.tensor([True, False]), lib.tensor([1.0, 2.0]), lib.tensor([1, 2])
        xg = lib.tensor([1.0, 2.0], requires_grad=True)  # noqa: F841 - used by the expressions
        return eval(expr, {"lib": lib, "b": b, "x": x, "i": i, "xg": xg})

    assert _grads_of(rg, run) == _grads_of(torch, run)


# -- Python ints beyond int64 / uint64 ----------------------------------------------------------

BIG_INT_CASES = [
    "x + 2**64", "x + 2**63", "x - 2**64", "x * 2**64", "x / 2**64", "2**64 + x", "2**64 - x", "x + (-2**63 - 1)",
    "x + (2**63 - 1)", "lib.add(x, 2**64)", "x.clone().add_(2**64)", "x.clone().mul_(-2**70)", "x ** 2**64",
    "x + 2**70", "x + (-2**70)", "x == 2**64", "x < 2**64", "i + 2**64", "i + 2**63", "i * 2**63",
    "i + (-2**63 - 1)", "b + 2**64", "lib.full((2,), 2**64)", "x.clone().fill_(2**64)", "x.clamp(max=2**64)",
    "x.clamp(min=-2**64)", "x.masked_fill(x > 0, 2**64)", "lib.where(x > 0, x, 2**64)", "lib.rsub(x, 2**64)",
    "lib.tensor([1, 2**63])", "lib.tensor([1.0, 2**63])", "lib.tensor([2**64])", "lib.tensor(2**63)",
    "lib.tensor([1, -2**63])", "lib.tensor([1, -2**63 - 1])", "lib.tensor([1.5, 2**64])",
    "lib.tensor([[1], [2**63]])", "lib.tensor([1, 2**63], dtype=lib.float32)",
    "lib.tensor([1, 2**64], dtype=lib.float32)", "lib.tensor([1, 2**63], dtype=lib.int64)",
    "lib.tensor([1, 2**63], dtype=lib.int32)", "lib.tensor([[1, 2], [3, -2**63 - 1]], dtype=lib.int64)",
    "lib.tensor([1, 2**63], dtype=lib.float64)", "lib.tensor([1.5, 2.0], dtype=lib.int64)",
]


@pytest.mark.parametrize("expr", BIG_INT_CASES)
def test_python_ints_beyond_int64_as_in_pytorch(expr: str, torch: Any) -> None:
    def run(lib: Any) -> Any:
        x, i, b = lib.tensor([1.0, -2.0]), lib.tensor([1, 2]), lib.tensor([True, False])
        return eval(expr, {"lib": lib, "x": x, "i": i, "b": b})

    assert _grads_of(rg, run) == _grads_of(torch, run)


# -- float16 prod: accumulated in half, in PyTorch's kernel order --------------------------------

HALF_PROD_CASES = [
    ("all", lambda lib, t: t.prod(), (1000,)),
    ("all_short", lambda lib, t: t.prod(), (63,)),
    ("all_tail", lambda lib, t: t.prod(), (1001,)),
    ("all_2d", lambda lib, t: t.prod(), (37, 41)),
    ("all_transposed", lambda lib, t: t.t().prod(), (37, 41)),
    ("all_strided", lambda lib, t: t[:, ::2].prod(), (20, 30)),
    ("last_dim", lambda lib, t: t.prod(1), (7, 300)),
    ("last_dim_keepdim", lambda lib, t: t.prod(-1, keepdim=True), (7, 300)),
    ("first_dim", lambda lib, t: t.prod(0), (300, 7)),
    ("middle_dim", lambda lib, t: t.prod(1), (4, 30, 70)),
    ("transposed_dim0", lambda lib, t: t.t().prod(0), (7, 300)),
    ("transposed_dim1", lambda lib, t: t.t().prod(1), (7, 300)),
    ("function", lambda lib, t: lib.prod(t, 0), (129,)),
    ("empty", lambda lib, t: t.prod(0), (0, 3)),
    ("scalar", lambda lib, t: t.prod(), ()),
    ("overflow", lambda lib, t: (t * 4).prod(), (200,)),
]


@pytest.mark.parametrize("name,fn,shape", HALF_PROD_CASES, ids=[c[0] for c in HALF_PROD_CASES])
def test_float16_prod_accumulates_as_pytorch(name: str, fn: Any, shape: tuple[int, ...], torch: Any) -> None:
    data = np.random.default_rng(len(name)).uniform(0.8, 1.2, shape).astype(np.float16)
    ours, theirs = fn(rg, rg.tensor(data)), fn(torch, torch.tensor(data))
    assert str(ours.dtype) == str(theirs.dtype) == "torch.float16"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_float16_prod_gradient_as_pytorch(torch: Any) -> None:
    data = np.random.default_rng(3).uniform(0.8, 1.2, (5, 70)).astype(np.float16)
    grads = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True)
        x.prod(1).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


# -- gradcheck of a function with a bool output -------------------------------------------------

BOOL_OUTPUTS = [
    ("bool", lambda t: t > 0),
    ("float_and_bool", lambda t: (t * 2, t > 0)),
    ("int", lambda t: t.argmax()),
    ("float_and_int", lambda t: (t * 2, t.argmax())),
]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name,fn", BOOL_OUTPUTS, ids=[c[0] for c in BOOL_OUTPUTS])
def test_gradcheck_of_a_function_with_a_bool_output(name: str, fn: Any, fast_mode: bool, torch: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch))
    assert _grads_of(rg, run) == _grads_of(torch, run)


# -- floor division and remainder at infinities and signed zeros --------------------------------

_SPECIAL = [float("inf"), float("-inf"), float("nan"), 5.0, -5.0, 0.0, -0.0, 1.0, 0.3, -0.7, 7.5]
_DIVISORS = [1.0, -1.0, float("inf"), float("-inf"), 0.0, -0.0, 2.0, 0.1, -0.3]

DIVISION_CASES = [
    ("floor_div", lambda lib, t, d: t.div(d, rounding_mode="floor")),
    ("floordiv_op", lambda lib, t, d: t // d),
    ("rfloordiv", lambda lib, t, d: d // t),
    ("floor_div_tensor", lambda lib, t, d: lib.div(t, lib.tensor(d), rounding_mode="floor")),
    ("remainder", lambda lib, t, d: t % d),
    ("rremainder", lambda lib, t, d: d % t),
    ("remainder_tensor", lambda lib, t, d: lib.remainder(t, lib.tensor([d] * len(_SPECIAL)))),
    ("fmod", lambda lib, t, d: t.fmod(d)),
    ("trunc_div", lambda lib, t, d: t.div(d, rounding_mode="trunc")),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", DIVISION_CASES, ids=[c[0] for c in DIVISION_CASES])
def test_floor_division_and_remainder_at_special_values(name: str, fn: Any, dtype: str, torch: Any) -> None:
    for d in _DIVISORS:
        ours = fn(rg, rg.tensor(_SPECIAL, dtype=getattr(rg, dtype)), d).numpy()
        theirs = fn(torch, torch.tensor(_SPECIAL, dtype=getattr(torch, dtype)), d).numpy()
        assert ours.dtype == theirs.dtype
        numbers = ~np.isnan(theirs)  # (a NaN's sign bit means nothing)
        np.testing.assert_array_equal(np.signbit(ours[numbers]), np.signbit(theirs[numbers]), err_msg=f"{name} by {d}")
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{name} by {d}")


# -- pow with the exponents PyTorch computes by products and roots ------------------------------


@pytest.mark.parametrize("exponent", [0.5, -0.5, 3, 3.0, -1, -2, -2.0, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_special_exponents_bit_for_bit(exponent: float, dtype: str, torch: Any) -> None:
    data = np.concatenate([[0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-30, -1e30],
                           np.random.default_rng(0).uniform(-3, 3, 2000)])
    ours = (rg.tensor(data, dtype=getattr(rg, dtype)) ** exponent).numpy()
    theirs = (torch.tensor(data, dtype=getattr(torch, dtype)) ** exponent).numpy()
    if exponent == 0.5:  # PyTorch's vectorised root may differ from the correctly rounded one by an ulp
        numbers = ~np.isnan(theirs[:7])
        np.testing.assert_array_equal(np.signbit(ours[:7][numbers]), np.signbit(theirs[:7][numbers]))
        np.testing.assert_allclose(ours, theirs, rtol=2e-7 if dtype == "float32" else 1e-15, equal_nan=True)
    else:
        numbers = ~np.isnan(theirs)
        np.testing.assert_array_equal(np.signbit(ours[numbers]), np.signbit(theirs[numbers]))
        np.testing.assert_array_equal(ours, theirs)


# -- the small ones -----------------------------------------------------------------------------


def _to_copy(lib: Any) -> Any:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    out = {}
    for name, call in [("dtype", lambda: x.to(lib.float64, copy=True)),
                       ("kw", lambda: x.to(dtype=lib.float64, copy=True)),
                       ("positional", lambda: x.to(lib.float64, False, True)),
                       ("device", lambda: x.to("cpu", copy=True)),
                       ("only_copy", lambda: x.to(copy=True)),
                       ("other_dtype", lambda: x.to(lib.float32, copy=True))]:
        y = call()
        y.sum().backward()
        out[name] = (y is x, type(y.grad_fn).__name__, str(y.dtype), x.grad.tolist())
        x.grad = None
    out["no_copy"] = x.to(lib.float64) is x and x.to("cpu") is x
    return out


def test_to_with_copy_records_ToCopyBackward0(torch: Any) -> None:
    assert _to_copy(rg) == _to_copy(torch)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_inplace_inverse_hyperbolic_backward_error_type(name: str, torch: Any) -> None:
    def run(lib: Any) -> None:
        x = lib.tensor([0.3, 0.5], requires_grad=True)
        y = getattr(x * 1.0 + (1.5 if name == "acosh" else 0.0), name + "_")()
        y.sum().backward()

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch))


MASK_CASES = [
    "m.masked_fill(lib.tensor([1.0, 0.0, 1.0]), 0.0)", "m.masked_fill(lib.tensor([1, 0, 1]), 0.0)",
    "m.masked_fill(lib.tensor([1, 0, 1], dtype=lib.uint8), 0.0)", "m.masked_fill(lib.tensor([1, 0, 1], dtype=lib.int32), 0.0)",
    "m.masked_fill(lib.tensor([1.0, 0.0, 1.0], dtype=lib.float64), 0.0)", "m.clone().masked_fill_(lib.tensor([1.0, 0.0, 1.0]), 0.0)",
    "m.masked_fill(lib.tensor([1.0, 0.0, 1.0]), lib.tensor(0.0))", "m.masked_fill(lib.tensor([True, False, True]), 5.0)",
    "lib.masked_fill(m, lib.tensor([0, 1, 0]), 1.0)",
]


@pytest.mark.parametrize("expr", MASK_CASES)
def test_masked_fill_refuses_non_bool_masks(expr: str, torch: Any) -> None:
    def run(lib: Any) -> Any:
        return eval(expr, {"lib": lib, "m": lib.tensor([1.0, 2.0, 3.0])})

    assert _grads_of(rg, run) == _grads_of(torch, run)


INDEX_CASES = ["t2[0, 2]", "t2[3]", "t2[0, -3]", "t3[:, 2]", "t3[..., 4]", "t3[0, 1, 4]", "t3[None, 0, 2]",
               "t3[1:, 5]", "t3[..., 1, 9]", "t3[0][2]"]


@pytest.mark.parametrize("expr", INDEX_CASES)
def test_index_error_names_the_dimension_as_pytorch(expr: str, torch: Any) -> None:
    def get(lib: Any) -> Any:
        return eval(expr, {"t2": lib.ones(3, 2), "t3": lib.ones(3, 2, 4)})

    def put(lib: Any) -> None:
        t2, t3 = lib.ones(3, 2), lib.ones(3, 2, 4)
        exec(f"{expr} = 0.0", {"t2": t2, "t3": t3})

    assert outcome(lambda: get(rg)) == outcome(lambda: get(torch))
    assert outcome(lambda: put(rg)) == outcome(lambda: put(torch))
