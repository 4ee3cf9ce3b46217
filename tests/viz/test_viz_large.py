"""make_dot/make_dot_lifecycle on deep graphs: no recursion, and a fast DOT writer that writes
exactly what graphviz's own ``node``/``edge`` would."""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import pytest

import retrograd as rg

graphviz = pytest.importorskip("graphviz")

from retrograd.viz import _Lines, make_dot, make_dot_lifecycle  # noqa: E402


def chain(n: int) -> tuple[Any, Any]:
    x = rg.ones(2, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    return x, y.sum()


def test_deep_graph_does_not_recurse() -> None:
    # well past the recursion limit: the recursive walk raised RecursionError here
    n = sys.getrecursionlimit() + 4000
    x, loss = chain(n)
    source = make_dot(loss, params={"x": x}).source
    assert source.count("[label=MulBackward0]") == n
    assert len(re.findall(r"^\t\d+ -> \d+$", source, re.M)) == n + 3  # leaf, AccumulateGrad, chain, sum, output
    lifecycle = make_dot_lifecycle(loss).source
    # beats 1-3 (a loss tensor: no beat 4), drawn plain in beat 1 and released (faded) in 2 and 3
    assert lifecycle.count("[label=MulBackward0") == 3 * n
    assert lifecycle.count("[label=MulBackward0]") == n
    assert x.grad is not None


@pytest.mark.slow
def test_hundred_thousand_nodes_to_source_in_under_5s() -> None:
    x, loss = chain(100_000)
    start = time.process_time()  # CPU time: other processes on a busy machine do not count
    source = make_dot(loss, params={"x": x}).source
    elapsed = time.process_time() - start
    assert source.count("[label=MulBackward0]") == 100_000
    assert elapsed < 5.0, elapsed


LABELS = ["MulBackward0", "x\n (3)", 'a "quoted" label', "node", "edge", "", "-4.2", "12", "a b", "Strict", "_x1",
          "x\u00b2", "\u00b2", "0123", "as140_self", "é",
          "self\n (2, 3)\n[freed]", "back\\\\slash", "<html>", "tensors[0]", "Graph"]
ATTRS: list[dict[str, str]] = [{}, {"fillcolor": "orange"}, {"style": "filled,dashed", "fillcolor": "grey92",
                                                             "fontcolor": "grey55", "color": "grey70"},
                               {"dir": "none"}, {"style": "dotted"}]


def test_writer_matches_graphviz_statements() -> None:
    reference = graphviz.Digraph()
    ours = graphviz.Digraph()
    lines = _Lines(ours.body)
    for i, label in enumerate(LABELS):
        attrs = ATTRS[i % len(ATTRS)]
        name = str(140000000000 + i) if i % 2 else f"a{i}_{label[:3]}"
        reference.node(name, label, **attrs)
        lines.node(name, label, **attrs)
        reference.edge(name, "b_out", **attrs)
        lines.edge(name, "b_out", **attrs)
    reference.node("n")
    lines.node("n")
    assert ours.source == reference.source


@pytest.mark.parametrize("draw", [make_dot, make_dot_lifecycle])
def test_drawing_leaves_no_cycle_that_keeps_the_graph(draw: Any) -> None:
    # The graph must go by reference counting once the caller drops it (the large-graph guard
    # makes full collections rare while a big graph lives); a closure or a caught exception's
    # traceback referring back to the walker kept it alive.
    import gc
    import weakref

    x, loss = chain(50)
    node = weakref.ref(loss.grad_fn.next_functions[0][0])
    gc.disable()
    try:
        assert "MulBackward0" in draw(loss).source
        del x, loss
        assert node() is None
    finally:
        gc.enable()
