"""``div``/``divide``/``true_divide`` and their in-place forms record PyTorch's node for every
``rounding_mode`` spelling (an explicit ``rounding_mode=None`` is PyTorch's DivBackward2 overload,
not the DivBackward0 of ``x / y``), with the same values, dtypes, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

_NOT_GIVEN = "not given"
_MODES = [_NOT_GIVEN, None, "trunc", "floor"]


def _call(lib: Any, name: str, other_kind: str, mode: Any) -> Any:
    x = lib.tensor([1.5, -2.5, 3.0, 7.0], dtype=lib.float64, requires_grad=True)
    other = lib.tensor([2.0, 4.0, -3.0, 0.5], dtype=lib.float64, requires_grad=True) if other_kind == "tensor" else 2.0
    kw = {} if mode is _NOT_GIVEN else {"rounding_mode": mode}
    if name.endswith("_"):
        out = getattr(x * 1, name)(other, **kw)
    elif name.startswith("fn."):
        out = getattr(lib, name[3:])(x, other, **kw)
    else:
        out = getattr(x, name)(other, **kw)
    out.sum().backward()
    grads = [x.grad] + ([other.grad] if other_kind == "tensor" else [])
    return out, grads


_CASES = [(name, kind, mode)
          for name in ("div", "divide", "fn.div", "fn.divide", "div_", "divide_")
          for kind in ("scalar", "tensor") for mode in _MODES]
_CASES += [(name, kind, _NOT_GIVEN) for name in ("true_divide", "fn.true_divide", "true_divide_")
           for kind in ("scalar", "tensor")]


@pytest.mark.parametrize("case", _CASES, ids=[f"{n}-{k}-{m}" for n, k, m in _CASES])
def test_div_node_values_and_gradients_as_torch(torch: Any, case: Any) -> None:
    name, kind, mode = case
    want, want_grads = _call(torch, name, kind, mode)
    got, got_grads = _call(rg, name, kind, mode)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert got.dtype == getattr(rg, str(want.dtype).split(".")[1])
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-15)


def test_explicit_none_saved_attributes_as_torch(torch: Any) -> None:
    results = []
    for lib in (torch, rg):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        node = lib.div(x, y, rounding_mode=None).grad_fn
        assert node._saved_self is x and node._saved_other is y
        results.append(node._saved_rounding_mode)
    assert results == [None, None]


def test_explicit_none_is_true_division_of_integers(torch: Any) -> None:
    for other in (2, [2, 2]):
        want = torch.div(torch.tensor([3, 4]), torch.tensor(other) if isinstance(other, list) else other,
                         rounding_mode=None)
        got = rg.div(rg.tensor([3, 4]), rg.tensor(other) if isinstance(other, list) else other, rounding_mode=None)
        assert got.dtype == rg.float32 and want.dtype == torch.float32
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_explicit_none_higher_order_gradients() -> None:
    x = rg.tensor([1.5, -2.5, 3.0], dtype=rg.float64, requires_grad=True)
    y = rg.tensor([2.0, 4.0, -3.0], dtype=rg.float64, requires_grad=True)
    fn = lambda a, b: rg.div(a, b, rounding_mode=None)  # noqa: E731
    assert rg.autograd.gradcheck(fn, (x, y))
    assert rg.autograd.gradgradcheck(fn, (x, y))


_ERRORS = [
    ("int-inplace-none", lambda lib: lib.tensor([3, 4]).div_(2, rounding_mode=None)),
    ("int-inplace-tensor-none", lambda lib: lib.tensor([3, 4]).div_(lib.tensor([2, 2]), rounding_mode=None)),
    ("bad-mode", lambda lib: lib.tensor([1.0]).div(2, rounding_mode="bad")),
    ("true_divide-rounding", lambda lib: lib.ones(2).true_divide(lib.ones(2), rounding_mode=None)),
    ("true_divide-other-kw", lambda lib: lib.ones(2).true_divide(2, foo=1)),
    ("true_divide_-rounding", lambda lib: lib.ones(2).true_divide_(lib.ones(2), rounding_mode="floor")),
]


@pytest.mark.parametrize("call", _ERRORS, ids=[c[0] for c in _ERRORS])
def test_div_errors_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    want = outcome(lambda: fn(torch))
    assert want[0] != "ok"
    assert outcome(lambda: fn(rg)) == want
