"""torch.histogram and torch.histogramdd make their bin edges in one place (ops/reduce.py
``_bin_edges``, issue #9's duplicate pairs): histogram is histogramdd's one-dimension case, with the
same checks, messages and edges, and its ``bin_edges`` output is a tensor of its own, as PyTorch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg


def test_histogram_edges_do_not_alias_the_bins_given(torch: Any) -> None:
    for lib in (rg, torch):
        bins = lib.tensor([0.0, 1.0, 2.0])
        _, edges = lib.histogram(lib.tensor([0.5, 1.5]), bins=bins)
        edges[0] = 9.0
        assert bins.tolist() == [0.0, 1.0, 2.0], lib.__name__


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("2-d bins", lambda lib: lib.histogram(lib.tensor([0.5]), bins=lib.zeros(2, 2))),
    ("bins dtype", lambda lib: lib.histogram(lib.tensor([0.5]), bins=lib.tensor([0.0, 1.0], dtype=lib.float64))),
    ("zero bins", lambda lib: lib.histogram(lib.tensor([0.5]), bins=0)),
    ("min over max", lambda lib: lib.histogram(lib.tensor([0.5]), bins=2, range=(2.0, 1.0))),
    ("infinite range", lambda lib: lib.histogram(lib.tensor([0.5]), bins=2, range=(0.0, float("inf")))),
    ("dd 2-d bins", lambda lib: lib.histogramdd(lib.tensor([[0.5, 0.5]]), bins=[lib.zeros(2), lib.zeros(2, 2)])),
    ("dd bins dtype", lambda lib: lib.histogramdd(lib.tensor([[0.5, 0.5]]),
                                                  bins=[lib.zeros(2), lib.zeros(2, dtype=lib.float64)])),
    ("dd zero bins", lambda lib: lib.histogramdd(lib.tensor([[0.5, 0.5]]), bins=[2, 0])),
    ("dd min over max", lambda lib: lib.histogramdd(lib.tensor([[0.5, 0.5]]), bins=2, range=[0.0, 1.0, 3.0, 1.0])),
    ("dd infinite", lambda lib: lib.histogramdd(lib.tensor([[0.5, 0.5]]), bins=2,
                                                range=[0.0, 1.0, float("-inf"), 1.0])),
]


@pytest.mark.parametrize("call", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_edge_errors_match_pytorch(torch: Any, call: Callable[[Any], Any]) -> None:
    expected = outcome(lambda: call(torch))
    assert expected[0] == "RuntimeError"
    assert outcome(lambda: call(rg)) == expected


@pytest.mark.parametrize("bins,range_", [(5, None), (3, (-1.0, 2.0)), (4, (0.25, 0.25))])
def test_histogram_matches_histogramdd_and_pytorch(torch: Any, bins: int, range_: Any) -> None:
    data = np.random.default_rng(1).standard_normal(50).astype(np.float32)
    ours = rg.histogram(rg.tensor(data), bins=bins, range=range_)
    theirs = torch.histogram(torch.tensor(data), bins=bins, range=range_)
    dd = rg.histogramdd(rg.tensor(data).reshape(-1, 1), bins=[bins], range=None if range_ is None else list(range_))
    for got in (ours.bin_edges, dd.bin_edges[0]):
        np.testing.assert_array_equal(got.numpy(), theirs.bin_edges.numpy())
    np.testing.assert_array_equal(ours.hist.numpy(), theirs.hist.numpy())
    np.testing.assert_array_equal(dd.hist.numpy(), theirs.hist.numpy())
