"""``torch.histogramdd`` against PyTorch: counts, edges, dtypes and the named tuple, with bin counts,
per-dimension edges, ranges, weights, density, batched points and every error PyTorch raises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

POINTS = np.random.default_rng(0).standard_normal((50, 3))
SMALL = [[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]

CASES: dict[str, Any] = {
    "bins per dim": lambda lib: lib.histogramdd(lib.tensor(POINTS), bins=[3, 4, 5]),
    "one count, range, density, float32": lambda lib: lib.histogramdd(
        lib.tensor(POINTS).float(), bins=4, range=[-1, 1, -2, 2, 0, 1], density=True),
    "edges and weights": lambda lib: lib.histogramdd(
        lib.tensor(POINTS), bins=[lib.tensor([-1.0, 0, 1]).double(), lib.tensor([-3.0, 3]).double(),
                                  lib.tensor([0.0, 0.5, 1, 2]).double()], weight=lib.tensor(np.linspace(0, 1, 50))),
    "batched points, weights, density": lambda lib: lib.histogramdd(
        lib.tensor(POINTS.reshape(5, 10, 3)), bins=2, weight=lib.tensor(np.linspace(0, 1, 50).reshape(5, 10)),
        density=True),
    "no points": lambda lib: lib.histogramdd(lib.tensor(np.zeros((0, 2))), bins=2),
    "one value per dim": lambda lib: lib.histogramdd(lib.tensor([[1.0, 1.0], [1.0, 1.0]]), bins=2),
    "decreasing edges": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[lib.tensor([0.0, 1, 2]),
                                                                            lib.tensor([3.0, 0])]),
    "edges ignore range": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[lib.tensor([0.0, 1, 2]),
                                                                              lib.tensor([0.0, 3])], range=[0, 1, 0, 1]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_histogramdd_matches_torch(torch: Any, case: str) -> None:
    got, want = CASES[case](rg), CASES[case](torch)
    assert type(got).__name__ == type(want).__name__ == "histogramdd"
    assert isinstance(got.bin_edges, tuple) and len(got.bin_edges) == len(want.bin_edges)
    assert str(got.hist.dtype) == str(want.hist.dtype) and got.hist.shape == want.hist.shape
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-6)
    for e, f in zip(got.bin_edges, want.bin_edges):
        assert str(e.dtype) == str(f.dtype)
        np.testing.assert_array_equal(e.numpy(), f.numpy())


def test_histogramdd_counts_by_hand() -> None:
    hist, edges = rg.histogramdd(rg.tensor(SMALL), bins=[2, 2], weight=rg.tensor([1.0, 2.0, 4.0, 8.0]))
    # edges [0, 1, 2] both ways; the last bin is closed: (2, 2) falls in bin (1, 1)
    assert hist.tolist() == [[0.0, 1.0], [6.0, 8.0]]
    assert [e.tolist() for e in edges] == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]


ERRORS: dict[str, Any] = {
    "integer points": lambda lib: lib.histogramdd(lib.tensor(SMALL).long(), bins=[2]),
    "bins count": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[2]),
    "range length first": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[2], range=[0.0, 1.0]),
    "range length": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=2, range=[0.0, 1.0]),
    "2-d edges": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[lib.tensor([0.0, 1, 2]), lib.tensor([[0.0, 3]])]),
    "edges dtype": lambda lib: lib.histogramdd(lib.tensor(SMALL),
                                               bins=[lib.tensor([0.0, 1, 2]), lib.tensor([0.0, 3]).double()]),
    "weight dtype": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=2, weight=lib.ones(4).double()),
    "weight shape": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=2, weight=lib.ones(3)),
    "infinite data": lambda lib: lib.histogramdd(lib.tensor([[1.0, float("inf")]]), bins=2),
    "nan data": lambda lib: lib.histogramdd(lib.tensor([[1.0, float("nan")], [0.0, 0.0]]), bins=2),
    "infinite range": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[2, 3], range=[0.0, 1.0, 0, float("inf")]),
    "zero bins": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[2, 0]),
    "min above max": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[2, 3], range=[0.0, 1.0, 1, 0]),
    "one edges tensor": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=lib.tensor([0.0, 1, 2])),
    "edges count": lambda lib: lib.histogramdd(lib.tensor(SMALL), bins=[lib.tensor([0.0, 1, 2])]),
    "1-d input": lambda lib: lib.histogramdd(lib.tensor([1.0, 2, 3]), bins=2),
    "0-d input": lambda lib: lib.histogramdd(lib.tensor(1.0), bins=2),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_histogramdd_errors_match_torch(torch: Any, case: str) -> None:
    assert outcome(lambda: ERRORS[case](rg)) == outcome(lambda: ERRORS[case](torch))
