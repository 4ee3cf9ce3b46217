"""dtype fidelity: reductions accumulate in PyTorch's accumulate type (half in float, float32
cumulative ops and var/std in double) and keep the input dtype; the inputs are chosen so that
accumulating in the tensor's own dtype visibly differs from PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

Fn = Callable[[Any], Any]


def _values(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _same(ours: Any, theirs: Any, rtol: float = 0.0, ulps: int = 0) -> None:
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if ulps:
        a, b = _values(ours), _values(theirs)
        assert (np.abs(a - b) <= ulps * np.spacing(np.abs(b))).all(), np.abs(a - b).max()
    elif rtol:
        np.testing.assert_allclose(_values(ours), _values(theirs), rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(_values(ours), _values(theirs))


def _halves(lib: Any, n: int, value: float) -> Any:
    return lib.full((n,), value, dtype=lib.float16)


def _wide(lib: Any) -> Any:
    """Half values spread up to 50: squares and sums leave half's range (max 65504)."""
    return (lib.arange(5000, dtype=lib.float32) / 100).to(lib.float16)


HALF_FORWARDS: dict[str, Fn] = {
    "cumsum": lambda L: _halves(L, 5000, 0.1).cumsum(0),
    "cumsum_strided": lambda L: L.full((5000, 3), 0.1, dtype=L.float16).cumsum(0),
    "cumsum_dtype_half": lambda L: L.full((5000,), 0.1).cumsum(0, dtype=L.float16),
    "cumsum_half_to_float": lambda L: _halves(L, 5000, 0.1).cumsum(0, dtype=L.float32),
    "cumprod": lambda L: _halves(L, 50, 1.1).cumprod(0),
    "sum_strided": lambda L: L.full((5000, 3), 0.1, dtype=L.float16).sum(0),
    "sum_dtype_half": lambda L: L.full((5000, 3), 0.1).sum(0, dtype=L.float16),
    "nansum_strided": lambda L: L.full((5000, 3), 0.1, dtype=L.float16).nansum(0),
    "mean_strided": lambda L: L.full((5000, 3), 0.1, dtype=L.float16).mean(0),
    "norm": lambda L: _halves(L, 100, 1000.0).norm(),
    "vector_norm_3": lambda L: L.linalg.vector_norm(_halves(L, 100, 100.0), 3),
    "vector_norm_dim": lambda L: L.linalg.vector_norm(L.full((100, 2), 1000.0, dtype=L.float16), dim=0),
    "linalg_norm": lambda L: L.linalg.norm(L.full((10, 10), 1000.0, dtype=L.float16)),
    "matrix_norm_fro": lambda L: L.linalg.matrix_norm(L.full((10, 10), 1000.0, dtype=L.float16)),
    "matrix_norm_1": lambda L: L.linalg.matrix_norm(L.full((10, 10), 1000.0, dtype=L.float16), 1),
    "matrix_norm_inf": lambda L: L.linalg.matrix_norm(L.full((10, 10), 1000.0, dtype=L.float16), float("inf")),
    "dist": lambda L: L.dist(_halves(L, 100, 1000.0), L.zeros(100, dtype=L.float16)),
    "var": lambda L: _wide(L).var(),
    "std": lambda L: _wide(L).std(),
    "var_dim": lambda L: _wide(L).reshape(50, 100).var(1),
    "var_mean": lambda L: L.var_mean(_wide(L))[0],
    "std_mean": lambda L: L.std_mean(_wide(L) * 40)[0],
    "std_mean_mean": lambda L: L.std_mean(_wide(L) * 40)[1],
    "softmax_strided": lambda L: L.softmax(L.zeros((5000, 3), dtype=L.float16), 0),
    "softmax": lambda L: L.softmax(L.linspace(0, 1, 5000).to(L.float16), 0),
    "log_softmax_strided": lambda L: L.log_softmax(L.linspace(0, 1, 5000).to(L.float16).reshape(5000, 1), 0),
    "logsumexp_strided": lambda L: L.logsumexp(L.zeros((5000, 3), dtype=L.float16), 0),
}


@pytest.mark.parametrize("name", HALF_FORWARDS)
def test_half_reductions_accumulate_in_float(torch: Any, name: str) -> None:
    fn = HALF_FORWARDS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning on the way either
        ours = fn(rg)
    # PyTorch's vectorised exp may round a softmax element the other way: one half ulp.
    _same(ours, fn(torch), ulps=1 if name == "softmax" else 0)


def test_half_cumsum_reaches_500_as_issue_reports() -> None:
    # Hand-derived: 5000 * fp16(0.1) = 499.88, which rounds to 500 in half; a half accumulator
    # stalls at 256, where adding 0.1 no longer changes it.
    assert rg.full((5000,), 0.1, dtype=rg.float16).cumsum(0)[-1].item() == 500.0


FLOAT32_FORWARDS: dict[str, Fn] = {
    # PyTorch's CPU cumsum/cumprod carry a double: results equal to the last bit.
    "cumsum": lambda L: L.full((10**5,), 0.1).cumsum(0),
    "cumsum_random": lambda L: L.from_numpy(np.random.default_rng(0).standard_normal((3, 20000), np.float32)).cumsum(1),
    "cumsum_dim0": lambda L: L.from_numpy(np.random.default_rng(1).standard_normal((20000, 3), np.float32)).cumsum(0),
    "cumprod": lambda L: L.full((1000,), 1.001).cumprod(0),
    "cumsum_int_to_float": lambda L: L.arange(10**5).cumsum(0, dtype=L.float32),
}


@pytest.mark.parametrize("name", FLOAT32_FORWARDS)
def test_float32_cumulative_ops_accumulate_in_double(torch: Any, name: str) -> None:
    fn = FLOAT32_FORWARDS[name]
    _same(fn(rg), fn(torch))


def test_float32_var_accumulates_in_double(torch: Any) -> None:
    # A float32 accumulator over a non-innermost axis leaves a visible variance of a constant.
    fn: Fn = lambda L: (L.full((10**5, 2), 0.1) + L.tensor([0.0, 1.0])).var(0)  # noqa: E731
    _same(fn(rg), fn(torch))
    fn = lambda L: L.from_numpy(  # noqa: E731
        np.random.default_rng(2).standard_normal((10**5, 2), np.float32) + np.float32(1000)).std(0)
    _same(fn(rg), fn(torch), rtol=2e-7)


HALF_BACKWARDS: dict[str, Fn] = {
    "cumsum": lambda x: x.cumsum(0),
    "norm": lambda x: x.norm(),
    "softmax": lambda x: x.softmax(0),
    "log_softmax": lambda x: x.log_softmax(0),
    "var": lambda x: x.var(),
    "std": lambda x: x.std(),
    "logsumexp": lambda x: x.logsumexp(0),
}


@pytest.mark.parametrize("name", HALF_BACKWARDS)
def test_half_backward_matches_pytorch(torch: Any, name: str) -> None:
    fn = HALF_BACKWARDS[name]
    data = (np.linspace(0, 50, 4000) % 7).astype(np.float16)
    weights = np.linspace(-1, 1, 4000).astype(np.float16)
    grads = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True)
        out = fn(x)
        out.backward(lib.tensor(weights) if out.dim() else None)
        grads.append(x.grad)
    _same(*grads, ulps=2)  # half rounding of the elementwise steps may differ by an ulp or two


def test_half_matrix_norm_svd_orders_still_refused(torch: Any) -> None:
    from conftest import outcome

    for order in ("nuc", 2, -2):
        assert outcome(lambda: rg.linalg.matrix_norm(rg.ones(3, 3, dtype=rg.float16), order)) == outcome(
            lambda: torch.linalg.matrix_norm(torch.ones(3, 3, dtype=torch.float16), order))


HALF_PRODUCTS: dict[str, Fn] = {
    # Half products accumulate in float: 300 * 300 overflows half but the dot product is 0.
    "matmul": lambda L: L.full((1, 8), 300.0, dtype=L.float16) @ L.tensor([[300.0], [-300.0]] * 4, dtype=L.float16),
    "mm_long": lambda L: L.mm(L.full((1, 5000), 0.1, dtype=L.float16), L.ones((5000, 1), dtype=L.float16)),
    "bmm": lambda L: L.bmm(L.full((1, 1, 5000), 0.1, dtype=L.float16), L.ones((1, 5000, 1), dtype=L.float16)),
    "addmm": lambda L: L.addmm(L.ones((1, 1), dtype=L.float16), L.full((1, 5000), 0.1, dtype=L.float16),
                               L.ones((5000, 1), dtype=L.float16)),
    "einsum": lambda L: L.einsum("i,i->", L.full((8,), 300.0, dtype=L.float16),
                                 L.tensor([300.0, -300.0] * 4, dtype=L.float16)),
}


@pytest.mark.parametrize("name", HALF_PRODUCTS)
def test_half_matrix_products_match_pytorch(torch: Any, name: str) -> None:
    fn = HALF_PRODUCTS[name]
    _same(fn(rg), fn(torch))
