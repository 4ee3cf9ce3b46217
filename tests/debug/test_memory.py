"""retrograd.debug.memory_report: bytes per node against NumPy's nbytes, storages counted once
(views, views of views, several nodes), what is shared with live tensors, and the total freed
on release against tracemalloc."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import retrograd as rg
from retrograd.debug import MemoryReport, memory_report


def saved_storages(report: MemoryReport) -> dict[int, int]:
    return {k: s.nbytes for k, s in enumerate(report.storages) if s.saved_by}


def test_bytes_per_node_match_numpy_nbytes() -> None:
    x = rg.randn(30, 40, dtype=rg.float64, requires_grad=True)
    w = rg.randn(40, 50, requires_grad=True)  # float32
    y = (x @ w.double()).tanh()  # mm saves x and w.double() (a fresh float64 copy); tanh saves its result
    report = memory_report(y.sum(), params={"x": x, "w": w})
    by_name = {e.name: e for e in report.nodes}
    mm = by_name["MmBackward0"]
    assert {(s.name, s.shape, s.dtype, s.nbytes) for s in mm.saved} == {
        ("self", (30, 40), "float64", 30 * 40 * 8), ("mat2", (40, 50), "float64", 40 * 50 * 8)}
    tanh = by_name["TanhBackward0"]
    assert [(s.name, s.nbytes) for s in tanh.saved] == [("result", y._data.nbytes)]
    assert report.total_bytes == x._data.nbytes + 40 * 50 * 8 + y._data.nbytes
    # x is a parameter (live): not freed; the float64 copy of w and tanh's result (y, held by
    # this test) ... y is live here, so only the copy of w is the graph's alone
    assert report.freed_on_release == 40 * 50 * 8
    assert report.param_bytes == x._data.nbytes + w._data.nbytes
    assert report.grad_bytes == 0
    kinds = {report.storages[s.storage].kind for s in mm.saved}
    assert kinds == {"parameter", "intermediate"}


def test_a_storage_saved_by_views_and_by_several_nodes_is_counted_once() -> None:
    x = rg.randn(100, 100, dtype=rg.float64, requires_grad=True)
    h = x * 3  # h's storage: 80,000 bytes, held only by the graph once h is dropped
    v1 = h.t()  # a view
    v2 = v1[10:20]  # a view of a view
    v3 = h.reshape(-1)[:50].view(5, 10)  # views of a view of a view
    loss = (v1 * v1).sum() + (v2 * v2).exp().sum() + (v3 * v3).sum() + (h * h).sum()
    del h, v1, v2, v3
    report = memory_report(loss)
    storages = [k for e in report.nodes for s in e.saved for k in [s.storage]
                if report.storages[k].nbytes == 80_000]
    assert len(set(storages)) == 1 and len(storages) >= 6  # saved by many slots, one storage
    shared = report.storages[storages[0]]
    assert shared.graph_only and shared.kind == "intermediate" and len(shared.saved_by) >= 3
    # the saved views keep the whole storage alive: a view is counted at its storage's size
    sizes = {s.nbytes for e in report.nodes for s in e.saved if s.storage == storages[0]}
    assert 50 * 8 in sizes and 10 * 100 * 8 in sizes
    # the total counts that storage once, plus exp's 8,000-byte result
    assert report.total_bytes == 80_000 + 10 * 100 * 8
    assert report.freed_on_release == report.total_bytes
    assert sum(e.counted_bytes for e in report.nodes) == report.total_bytes


def test_as_strided_view_goes_to_its_owner() -> None:
    x = rg.randn(8, 8, dtype=rg.float64, requires_grad=True)
    h = x * 2
    s = h.diagonal()  # NumPy's as_strided: the view's .base is a helper object, whose .base is h's array
    assert not isinstance(s._data.base, np.ndarray)
    loss = (s * s).sum()
    del h, s
    report = memory_report(loss)
    assert report.total_bytes == 64 * 8
    assert report.freed_on_release == 64 * 8


def test_saved_leaves_and_held_tensors_are_shared_not_freed() -> None:
    w = rg.randn(256, dtype=rg.float64, requires_grad=True)
    data = rg.randn(256, dtype=rg.float64)  # an input, no grad
    h = w * data  # saves data (w needs no saving: data does not require grad)
    kept = (h * w).exp()  # saves h and w; exp saves its result, which `kept` still refers to
    loss = (kept * h).sum()  # saves kept and h (h held by this test)
    report = memory_report(loss, params={"w": w})
    assert report.total_bytes == 4 * 256 * 8
    assert report.freed_on_release == 0 and report.shared_bytes == report.total_bytes
    kinds = {s.kind for s in report.storages}
    assert kinds == {"parameter", "input", "intermediate"}
    assert any(s.label == "w" for s in report.storages)
    del kept
    assert memory_report(loss, params={"w": w}).freed_on_release == 256 * 8
    del h
    assert memory_report(loss, params={"w": w}).freed_on_release == 2 * 256 * 8


def test_index_arrays_are_kept_not_saved() -> None:
    x = rg.randn(1000, dtype=rg.float64, requires_grad=True)
    index = rg.tensor(np.arange(0, 1000, 2))
    loss = x[index].sum()
    report = memory_report(loss)
    assert report.total_bytes == 0
    (entry,) = report.nodes
    assert entry.name == "IndexBackward0" and entry.kept and entry.kept[0].nbytes >= 500 * 8 // 2
    assert report.kept_bytes == sum(report.storages[k.storage].nbytes for k in entry.kept)


def test_after_backward_nothing_is_saved_and_grads_are_counted() -> None:
    w = rg.randn(100, dtype=rg.float64, requires_grad=True)
    loss = (w.exp() * w).sum()
    assert memory_report(loss).total_bytes == 2 * 800
    loss.backward(retain_graph=True)
    kept = memory_report(loss)
    assert kept.total_bytes == 2 * 800 and kept.released_count == 0  # retained: still held
    assert kept.grad_bytes == 800 and kept.param_bytes == 800
    loss.backward()
    after = memory_report(loss)
    assert after.total_bytes == 0 and after.nodes == () and after.released_count == 2
    assert after.grad_bytes == 800


def test_report_prints_a_table() -> None:
    w = rg.randn(1000, requires_grad=True)
    loss = (w.exp() * w).sum()
    text = str(memory_report(loss, params={"w": w}))
    assert "ExpBackward0" in text and "MulBackward0" in text
    assert "3.9 KiB" in text and "parameter w" in text and "freed on release" in text
    report = memory_report(loss, params={"w": w})
    assert repr(report).startswith("MemoryReport(") and "total_bytes=8000" in repr(report)
    assert len(repr(report)) < 300  # totals only, however many nodes
    assert [e.name for e in report.top(1)] == ["MulBackward0"]  # saves 2 storages, exp 1


def traced(action: Callable[[], Any]) -> int:
    """Bytes freed (positive) by ``action``, as tracemalloc sees them."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    action()
    gc.collect()
    return before - tracemalloc.get_traced_memory()[0]


def build(n: int = 200) -> tuple[Any, Any, Any]:
    """A small MLP-like graph whose intermediates only the graph keeps (n×n float64 each)."""
    x = rg.randn(n, n, dtype=rg.float64)
    w1 = rg.randn(n, n, dtype=rg.float64, requires_grad=True)
    w2 = rg.randn(n, n, dtype=rg.float64, requires_grad=True)
    h = (x @ w1).tanh()
    g = (h @ w2).sigmoid() * h.t()
    loss = (g.exp() + g[1:].sum()).sum()
    return loss, w1, w2


def test_freed_on_release_matches_tracemalloc_on_backward() -> None:
    loss, w1, w2 = build()
    loss.backward()  # (first-use code and caches made before measuring)
    tracemalloc.start()
    try:
        loss, w1, w2 = build()
        report = memory_report(loss, params={"w1": w1, "w2": w2})
        assert report.freed_on_release >= 8 * 200 * 200 * 4  # x, h, ... several n×n arrays
        freed = traced(loss.backward)
        grads = w1.grad._data.nbytes + w2.grad._data.nbytes  # what backward allocated and kept
        assert abs(freed + grads - report.freed_on_release) < 0.02 * report.freed_on_release, (
            freed + grads, report.freed_on_release)
    finally:
        tracemalloc.stop()


def test_freed_on_release_matches_tracemalloc_when_the_graph_is_dropped() -> None:
    build()[0].backward()
    tracemalloc.start()
    try:
        loss, w1, w2 = build()
        holder = [loss]
        del loss
        report = memory_report(holder[0])
        freed = traced(holder.clear)
        # (the nodes themselves are a few hundred bytes each)
        assert abs(freed - report.freed_on_release) < 0.02 * report.freed_on_release, (freed, report.freed_on_release)
    finally:
        tracemalloc.stop()


def test_report_takes_no_reference_and_leaves_the_graph_intact() -> None:
    x = rg.randn(50, requires_grad=True)
    h = x.exp()
    loss = (h * h).sum()
    counts = sys.getrefcount(h), sys.getrefcount(h._data), sys.getrefcount(loss.grad_fn)
    memory_report(loss)
    assert (sys.getrefcount(h), sys.getrefcount(h._data), sys.getrefcount(loss.grad_fn)) == counts
    loss.backward()
    assert np.allclose(x.grad._data, 2 * np.exp(2 * x._data), rtol=1e-5)


def test_deep_graph_is_walked_without_recursion() -> None:
    x = rg.randn(4, dtype=rg.float64, requires_grad=True)
    y = x
    for _ in range(sys.getrecursionlimit() + 2000):
        y = y.tanh() * 0.5
    report = memory_report(y.sum())
    assert report.node_count == 2 * (sys.getrecursionlimit() + 2000) + 2
    # each tanh saves its result (32 bytes); the mul by a number saves no tensor
    assert report.total_bytes == 32 * (sys.getrecursionlimit() + 2000)
    assert report.freed_on_release == report.total_bytes


def test_values_packed_by_saved_tensors_hooks_are_counted_without_unpacking() -> None:
    calls: list[str] = []

    def pack(t: Any) -> Any:
        calls.append("pack")
        return (t.detach().clone(), "tag")  # a copy: the graph alone holds it

    def unpack(packed: Any) -> Any:
        calls.append("unpack")
        return packed[0]

    x = rg.randn(100, dtype=rg.float64, requires_grad=True)
    with rg.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = (x.exp() * x).sum()
    report = memory_report(loss)
    assert calls == ["pack"] * 3
    assert report.total_bytes == 3 * 800 and report.freed_on_release == 3 * 800
    assert {s.name for e in report.nodes for s in e.saved} == {"self[0]", "other[0]", "result[0]"}


def test_custom_function_saved_tensors_and_ctx_attributes() -> None:
    class Cube(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            ctx.twice = a * 2  # kept by the node: not a saved tensor, not freed by backward
            return a ** 3

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (a,) = ctx.saved_tensors
            return 3 * a * a * g

    x = rg.randn(100, dtype=rg.float64, requires_grad=True)
    loss = Cube.apply(x).sum()
    report = memory_report(loss)
    (entry,) = report.nodes
    assert entry.name == "CubeBackward"
    assert [(s.name, s.nbytes) for s in entry.saved] == [("saved_tensors[0]", 800)]
    assert [(s.name, s.nbytes) for s in entry.kept] == [("twice", 800)]
    assert report.storages[entry.saved[0].storage].kind == "leaf"  # no params given: x is a leaf
    assert report.total_bytes == 800 and report.freed_on_release == 0 and report.kept_bytes == 800
    assert report.param_bytes == 800  # without params, the graph's leaves
