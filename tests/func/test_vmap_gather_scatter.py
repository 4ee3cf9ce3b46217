"""``gather``, ``scatter``, ``scatter_add`` and ``index_select`` inside ``vmap`` run once on the
whole batch, with a batched index as well as a shared one: values and per-sample gradients match
``torch.func``, and the fallback's performance warning (an error here) never fires."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd import func as rfunc

RS = np.random.RandomState(0)
X = RS.randn(3, 4, 5)
IDX = RS.randint(0, 4, (3, 2, 5))  # per sample: rows to gather along dim 0
IDX_COLS = RS.randint(0, 5, (3, 4, 3))  # per sample: columns along dim 1 (-1)
ROWS = RS.randint(0, 4, (3, 6))  # per sample: an index_select index
SRC = RS.randn(3, 2, 5)

# name: (fn(lib, *inputs), inputs, in_dims); the first input is the differentiated one
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], Any]] = {
    "gather_batched_index": (lambda L, t, i: L.gather(t, 0, i), (X, IDX), 0),
    "gather_negative_dim": (lambda L, t, i: t.gather(-1, i), (X, IDX_COLS), 0),
    "gather_shared_index": (lambda L, t, i: L.gather(t, 1, i), (X, IDX_COLS[0]), (0, None)),
    "scatter_src": (lambda L, s, i: L.zeros(4, 5, dtype=L.float64).scatter(0, i, s), (SRC, IDX), 0),
    "scatter_into_batched": (lambda L, t, i: t.scatter(1, i, t[:, :3] * 2), (X, IDX_COLS), 0),
    "scatter_add": (lambda L, s, i: L.ones(4, 5, dtype=L.float64).scatter_add(0, i, s), (SRC, IDX), 0),
    "scatter_add_shared_index": (lambda L, s, i: L.ones(4, 5, dtype=L.float64).scatter_add(0, i, s),
                                 (SRC, IDX[0]), (0, None)),
    "scatter_value": (lambda L, t, i: t.scatter(0, i, 0.5), (X, IDX), 0),
    "index_select_batched_index": (lambda L, t, i: L.index_select(t, 0, i), (X, ROWS), 0),
    "index_select_dim_1": (lambda L, t, i: t.index_select(1, i), (X, IDX_COLS[:, 0]), 0),
    "index_select_shared_index": (lambda L, t, i: L.index_select(t, 0, i), (X, ROWS[0]), (0, None)),
}


def _inputs(L: Any, inputs: tuple[np.ndarray, ...]) -> list[Any]:
    return [L.tensor(a) for a in inputs]


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch_func(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, inputs, in_dims = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda *a: fn(rg, *a), in_dims=in_dims)(*_inputs(rg, inputs))
    want = tfunc.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*_inputs(torch, inputs))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, _, d) in CASES.items() if d == 0 or d[0] == 0])
def test_per_sample_gradients_match_torch_func(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, inputs, in_dims = CASES[name]

    def loss(L: Any) -> Callable[..., Any]:
        def f(t: Any, i: Any) -> Any:
            out = fn(L, t, i)
            return (out * out.sin()).sum()
        return f

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(loss(rg)), in_dims=in_dims)(*_inputs(rg, inputs))
    want = tfunc.vmap(tfunc.grad(loss(torch)), in_dims=in_dims)(*_inputs(torch, inputs))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


ERRORS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "gather_index_rank": (lambda L, t, i: L.gather(t, 0, i), (X, ROWS)),
    "gather_out_of_range": (lambda L, t, i: L.gather(t, 0, i), (X, IDX + 4)),
    "index_select_float_index": (lambda L, t, i: L.index_select(t, 0, i), (X, ROWS.astype(np.float64))),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, inputs = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (errors come from each sample's own run)
        got = outcome(lambda: rfunc.vmap(lambda *a: fn(rg, *a))(*_inputs(rg, inputs)))
        want = outcome(lambda: tfunc.vmap(lambda *a: fn(torch, *a))(*_inputs(torch, inputs)))
    assert want[0] != "ok"
    assert got == want
