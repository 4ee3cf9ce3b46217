"""Tensor.allclose/equal/positive/not_equal and torch.positive/not_equal against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

CASES = [
    ("allclose", lambda lib, a, b: a.allclose(b)),
    ("allclose_tol", lambda lib, a, b: a.allclose(b + 1e-3, rtol=0.0, atol=1e-2)),
    ("allclose_nan", lambda lib, a, b: (a * float("nan")).allclose(a * float("nan"), equal_nan=True)),
    ("equal", lambda lib, a, b: (a.equal(b), a.equal(a), a.equal(a[:1]))),
    ("not_equal_method", lambda lib, a, b: a.not_equal(b).tolist()),
    ("not_equal_scalar", lambda lib, a, b: lib.not_equal(a, 1.0).tolist()),
    ("positive_is_self", lambda lib, a, b: (lib.positive(a) is a, a.positive() is a)),
    ("positive_bool", lambda lib, a, b: lib.positive(a > 0)),
]


def _result(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(torch: Any, name: str, fn: Any) -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0])
    ours = _result(lambda: fn(rg, rg.tensor(a), rg.tensor(b)))
    theirs = _result(lambda: fn(torch, torch.tensor(a), torch.tensor(b)))
    assert ours == theirs


def test_positive_keeps_the_graph() -> None:
    t = rg.tensor([1.0, -2.0], requires_grad=True)
    (rg.positive(t) * 3).sum().backward()
    assert t.grad is not None and t.grad.tolist() == [3.0, 3.0]
