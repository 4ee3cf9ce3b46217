"""A fill value given as a 0-d tensor is an input of the graph: its gradient is not lost.

``x.fill_(v)`` records ``FillBackward3`` and ``x.masked_fill(mask, v)`` ``MaskedFillBackward1``, as
in PyTorch, with an edge to ``v``; checked against PyTorch and by gradcheck.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.autograd import gradcheck, gradgradcheck

MASK = [[True, False, True], [False, False, True]]
X = np.arange(6.0).reshape(2, 3) / 7


def _run(lib: Any, form: str, value_dtype: Any) -> tuple[str, tuple[str, ...], np.ndarray, np.ndarray, float]:
    x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
    v = lib.tensor(1.5, dtype=value_dtype, requires_grad=True)
    mask = lib.tensor(MASK)
    h = x * 2
    if form == "fill_":
        y = h.fill_(v)
    elif form == "masked_fill":
        y = h.masked_fill(mask, v)
    elif form == "masked_fill_":
        y = h.masked_fill_(mask, v)
    else:
        y = h.masked_fill(lib.tensor([True, False, True]), v)  # a broadcast mask
    edges = tuple(type(f).__name__ for f, _ in y.grad_fn.next_functions)
    (y * lib.tensor(X + 1, dtype=lib.float32)).sum().backward()
    return type(y.grad_fn).__name__, edges, np.array(y.tolist()), np.array(x.grad.tolist()), float(v.grad)


@pytest.mark.parametrize("form", ["fill_", "masked_fill", "masked_fill_", "masked_fill_broadcast_mask"])
@pytest.mark.parametrize("value_dtype", ["float32", "float64"])
def test_fill_value_gradient_matches_torch(torch: Any, form: str, value_dtype: str) -> None:
    ours = _run(rg, form, getattr(rg, value_dtype))
    theirs = _run(torch, form, getattr(torch, value_dtype))
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_fill_value_gradients_by_finite_differences() -> None:
    x = rg.tensor(X, dtype=rg.float64, requires_grad=True)
    v = rg.tensor(0.25, dtype=rg.float64, requires_grad=True)
    mask = rg.tensor(MASK)
    for fn in (lambda a, b: (a * a).fill_(b) * a,
               lambda a, b: (a * a).masked_fill(mask, b) * b,
               lambda a, b: (a * 1).masked_fill_(mask, b * b)):
        assert gradcheck(fn, (x, v))
        assert gradgradcheck(fn, (x, v))


def test_tensor_value_without_grad_records_pytorchs_node(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.ones(3, requires_grad=True)
        y = (x * 1).masked_fill(lib.tensor([True, False, True]), lib.tensor(2.0))
        assert type(y.grad_fn).__name__ == "MaskedFillBackward1"
        assert y.tolist() == [2.0, 1.0, 2.0]


def test_fill_value_must_be_zero_dim(torch: Any) -> None:
    for call in (lambda lib: lib.ones(3).fill_(lib.ones(2)),
                 lambda lib: lib.ones(3).masked_fill(lib.tensor([True, False, True]), lib.ones(2)),
                 lambda lib: lib.ones(3).masked_fill_(lib.tensor([True, False, True]), lib.ones(2))):
        assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
