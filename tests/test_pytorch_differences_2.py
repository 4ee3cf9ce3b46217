"""Small differences from PyTorch 2.13 (issue 8, second part), each compared with real PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import outcome

import retrograd as rg

LIBS = ("retrograd", "torch")


def _lib(name: str, torch: Any) -> Any:
    return rg if name == "retrograd" else torch


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
