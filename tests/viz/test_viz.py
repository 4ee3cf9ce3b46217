"""viz.make_dot (torchviz's layout) and viz.make_dot_lifecycle. make_dot only reads the public
graph API (grad_fn, next_functions, variable, _base), so the same function drawn over real
PyTorch's graph is the reference for the structure."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

import retrograd as rg

pytest.importorskip("graphviz")

from retrograd.viz import make_dot, make_dot_lifecycle  # noqa: E402


def summary(dot: Any) -> tuple[list[str], list[str]]:
    source = dot.source
    labels = {}
    for ident, quoted, bare in re.findall(r'^\s*(\w+) \[label=(?:"((?:[^"\\]|\\.)*)"|([^\s\]]+))', source, re.M | re.S):
        labels[ident] = quoted if quoted else bare
    edges = sorted(f"{labels[a]} -> {labels[b]}" for a, b in re.findall(r"^\s*(\w+) -> (\w+)", source, re.M))
    return sorted(labels.values()), edges


def graphs(lib: Any) -> list[tuple[Any, dict[str, Any]]]:
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = lib.tensor(0.1, requires_grad=True)
    m = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    v = lib.tensor([[0.5, -0.5]], requires_grad=True)
    h = (m @ v.t()).tanh()
    shared = x * w
    return [
        ((x * w + b).sum(), {}),
        ((x * w + b).sum(), {"x": x, "w": w, "b": b}),
        ((h * h).sum(), {"m": m}),
        ((shared + shared.exp()).mean(), {"x": x}),
        ((x * 2, (w + 1).sum()), {}),
        ((x * 2)[1:], {}),  # a view: its base is drawn too, with a dotted edge
        (x.view(3, 1) * b, {"b": b}),
    ]


def test_structure_matches_torch_graphs(torch: Any) -> None:
    for (ours, p_r), (theirs, p_t) in zip(graphs(rg), graphs(torch), strict=True):
        dr, dt = make_dot(ours, params=p_r), make_dot(theirs, params=p_t)
        assert type(dr).__name__ == "Digraph"
        assert summary(dr) == summary(dt)
        assert dr.source.count("style=dotted") == dt.source.count("style=dotted")


def test_layout_attributes() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).sum()
    dot = make_dot(y, params={"x": x})
    assert dot.node_attr == {"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
                             "height": "0.2", "fontname": "monospace"}
    assert dot.graph_attr["size"] == "12,12"
    assert re.search(r'label="x\n \(2\)" fillcolor=lightblue', dot.source)
    assert re.search(r'label="\n \(\)" fillcolor=darkolivegreen1', dot.source)
    big = x
    for _ in range(60):
        big = big * 1.0
    assert make_dot(big.sum()).graph_attr["size"] != "12,12"  # resized with the number of statements


def test_show_attrs_and_saved() -> None:
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    z = (x * w).exp().sum()
    plain = make_dot(z)
    assert "[saved tensor]" not in plain.source and "orange" not in plain.source
    attrs = make_dot(z, show_attrs=True)
    assert "MulBackward0\n---------------------\nself : [saved tensor]\nother: [saved tensor]" in attrs.source
    assert "result: [saved tensor]" in attrs.source
    saved = make_dot(z, show_saved=True)
    assert re.search(r'label="result\n \(3\)" fillcolor=orange', saved.source)
    assert saved.source.count("dir=none") == 3
    assert "other: 1.25" in make_dot((x * 1.25).sum(), show_attrs=True).source
    short = make_dot((x * 1.25).sum(), show_attrs=True, max_attr_chars=3)
    assert "other: ..." in short.source and "1.25" not in short.source


def test_after_backward_attrs_show_freed() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    z = x.exp().sum()
    z.backward()
    assert "result: [freed]" in make_dot(z, show_attrs=True).source
    assert "orange" not in make_dot(z, show_saved=True).source


def test_lifecycle() -> None:
    w = rg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x = rg.tensor([0.3, 0.2, -0.1])
    loss = (x * w).exp().sum()
    dot = make_dot_lifecycle(loss, params={"w": w})
    src = dot.source
    assert "subgraph cluster_a" in src and "subgraph cluster_b" in src
    before, after = src.split("subgraph cluster_b")
    assert "fillcolor=orange" in before and "[freed]" not in before
    assert "[freed]" in after and "fillcolor=orange" not in after.split("b_note")[0]
    assert "w\n (3)\n .grad set" in after and ".grad set" not in before
    assert "would raise" in src
    expected = ((x * rg.tensor([1.0, -2.0, 0.5])).exp() * x).tolist()
    assert w.grad.tolist() == pytest.approx(expected)  # the backward pass really ran
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()

    kept = make_dot_lifecycle((x * w).exp().sum(), retain_graph=True)
    assert "[freed]" not in kept.source and "backward() may run again" in kept.source
    with pytest.raises(RuntimeError, match="must be a tensor with a grad_fn"):
        make_dot_lifecycle(x.sum())


def test_missing_graphviz_names_the_extra(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match=r"'viz' extra"):
        make_dot(rg.ones(1, requires_grad=True).sum())
