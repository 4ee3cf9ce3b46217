"""``retrograd.viz.explore``: one self-contained HTML page to click through a graph.

``explore(root_or_forward, path)`` lays the graph out with Graphviz (its SVG, inlined) and writes
one HTML file with everything inlined (no network, no CDN): click a node to see its op, its
inputs' shapes and dtypes, the tensors it saved for backward (bytes and a preview) and the
gradient that flowed through it; step through the four beats of the graph's life (the data of
``capture_lifecycle``) with the buttons, the slider or the arrow keys.

The page's data is a JSON object in ``<script id="graph-data">``: ``beats``, each with ``nodes``
(by page id: ``n<k>`` for the k-th backward node in walk order, ``l<k>`` for the leaf under the
AccumulateGrad ``n<k>``, ``out`` for the output), ``edges`` (per drawn edge: "fwd" or "grad")
and ``graph`` (which drawing). In each drawing, Graphviz wrote every node as
``<g id="g<drawing><page id>" class="node <kind>">``; the script adds ``data-node`` and
``data-kind`` to those elements.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..autograd.graph import is_released, peek_saved
from ..tensor import Tensor
from . import FREED_VALUE, _digraph, _is_tensor, _Lines, saved_attributes
from .lifecycle import Beat, TensorInfo, capture_lifecycle, tensor_info

__all__ = ["explore"]

# the buttons' labels, by ``Beat.kind``
BEAT_LABELS = {"forward": "after forward", "backward": "after backward", "second_backward": "backward again",
               "new_forward": "new forward"}


# -- what the page shows: plain JSON-able records -------------------------------------------------


def _shape(shape: Any) -> list[int]:
    return [int(v) for v in shape]


def _shape_text(shape: list[int]) -> str:
    return "(" + ", ".join(str(v) for v in shape) + ("," if len(shape) == 1 else "") + ")"


def _record(info: TensorInfo | None) -> dict[str, Any] | None:
    if info is None:
        return None
    return {"shape": _shape(info.shape), "dtype": info.dtype, "bytes": info.nbytes, "preview": info.preview,
            "norm": None if info.norm is None else f"{info.norm:.4g}"}


def _array(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else np.asarray(value.detach().cpu().numpy())


def _output_meta(fn: Any, output_nr: int) -> tuple[list[int], str] | None:
    """The shape and dtype of ``fn``'s forward output number ``output_nr``, from the graph."""
    variable = getattr(fn, "variable", None)
    if variable is not None:
        return _shape(variable.shape), str(_array(variable).dtype)
    shape, dtype = getattr(fn, "_shape", None), getattr(fn, "_dtype", None)
    if shape is None:
        meta = getattr(fn, "_output_meta", ())
        if output_nr >= len(meta):
            return None
        shape, dtype = meta[output_nr]
    return _shape(shape), str(np.dtype(dtype))


def _saved_values(fn: Any) -> dict[str, Any]:
    """What ``fn`` saved for backward, by name (``FREED_VALUE`` once released): an op's named
    slots and arguments, or a custom ``autograd.Function``'s ``save_for_backward`` tensors
    (``saved[i]``; once released their number is unknown: one ``saved`` entry stands for them)."""
    attrs = saved_attributes(fn)
    if attrs or getattr(fn, "_op", None) is not None:
        return attrs
    if is_released(fn):
        return {"saved": FREED_VALUE}
    saved = getattr(fn, "_saved", None)
    if not isinstance(saved, tuple):
        return {}
    return {f"saved[{i}]": peek_saved(v) for i, v in enumerate(saved) if v is not None}


class _Graph:
    """One walk over a graph of backward nodes: page ids (``n0``, ``n1``... in walk order, so two
    graphs built by the same forward get the same ids), the edges, the leaves and the output."""

    def __init__(self, output: Any, names: dict[int, str], max_nodes: int) -> None:
        self.output = output
        self.root = output.grad_fn
        self.names = names
        self.fns: list[Any] = []
        self.ids: dict[int, str] = {}
        stack = [self.root]
        while stack:  # depth first, explicit stack: a deep graph must not reach the recursion limit
            fn = stack.pop()
            if id(fn) in self.ids:
                continue
            if len(self.fns) >= max_nodes:
                raise ValueError(
                    f"explore: the graph has more than max_nodes={max_nodes} nodes; a page that large is "
                    "unreadable (and slow to lay out): pass a larger max_nodes, or use "
                    "retrograd.debug.print_graph(root) for the text form")
            self.ids[id(fn)] = f"n{len(self.fns)}"
            self.fns.append(fn)
            for nxt, _ in reversed(getattr(fn, "next_functions", ())):
                if nxt is not None and id(nxt) not in self.ids:
                    stack.append(nxt)
        self.leaves: dict[str, Any] = {}  # "l3" -> the leaf tensor under AccumulateGrad "n3"
        for fn in self.fns:
            variable = getattr(fn, "variable", None)
            if variable is not None:
                self.leaves["l" + self.ids[id(fn)][1:]] = variable
        # the drawn edges, in forward direction: leaf -> its AccumulateGrad, input -> user, root -> out
        self.edges: list[tuple[str, str]] = [(key, "n" + key[1:]) for key in self.leaves]
        for fn in self.fns:
            for nxt, _ in getattr(fn, "next_functions", ()):
                if nxt is not None:
                    self.edges.append((self.ids[id(nxt)], self.ids[id(fn)]))
        self.edges.append(("n0", "out"))
        # what custom autograd.Function nodes saved, read now, right after the forward:
        # capture_lifecycle reads only ops' named slots
        self.function_saved: dict[str, list[dict[str, Any]]] = {}
        for fn in self.fns:
            if getattr(fn, "_op", None) is None and not hasattr(fn, "variable") and not is_released(fn):
                saved = [dict(_record(tensor_info(_array(v))) or {}, name=k, freed=False)
                         for k, v in _saved_values(fn).items() if _is_tensor(v)]
                if saved:
                    self.function_saved[self.ids[id(fn)]] = saved

    def static(self, fn: Any) -> dict[str, Any]:
        """What does not change between beats: op, output shape and dtype, inputs (with the
        shape and dtype each input edge carries, and ``{"op": None}`` for an input that needs no
        gradient), the leaf an AccumulateGrad feeds."""
        record: dict[str, Any] = {"kind": "node", "op": type(fn).__name__}
        meta = _output_meta(fn, 0)
        if meta is not None:
            record["shape"], record["dtype"] = meta
        inputs = []
        for nxt, nr in getattr(fn, "next_functions", ()):
            if nxt is None:
                inputs.append({"op": None})
                continue
            entry: dict[str, Any] = {"op": type(nxt).__name__, "node": self.ids[id(nxt)]}
            meta = _output_meta(nxt, nr)
            if meta is not None:
                entry["shape"], entry["dtype"] = meta
            if getattr(nxt, "variable", None) is not None:
                entry["leaf"] = self.names.get(id(nxt.variable), "")
            inputs.append(entry)
        record["inputs"] = inputs
        variable = getattr(fn, "variable", None)
        if variable is not None:
            record["leaf"] = self.names.get(id(variable), "")
        return record

    def structure(self) -> str:
        """What the drawing depends on: two graphs with equal structures share one drawing."""
        nodes = [(type(fn).__name__, _output_meta(fn, 0), bool(_saved_values(fn))) for fn in self.fns]
        leaves = sorted((k, self.names.get(id(v), "")) for k, v in self.leaves.items())
        return json.dumps([nodes, self.edges, leaves, _shape(self.output.shape)])


def _line(record: dict[str, Any]) -> str | None:
    """The last line of a node's label, which changes with the beats: the bytes its saved tensors
    hold (or freed), a leaf's ``.grad``."""
    if record["kind"] == "leaf":
        return ".grad " + ("set" if record["grad"] is not None else "None")
    saved = record.get("saved")
    if record["kind"] != "node" or not saved:
        return None
    word = "freed" if all(s["freed"] for s in saved) else "saved"
    if any(s.get("bytes") is None for s in saved):  # freed before explore saw them: sizes unknown
        return word
    return f"{word} {_bytes(sum(int(s['bytes']) for s in saved))}"


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MB"


def _leaf_record(graph: _Graph, variable: Any) -> dict[str, Any]:
    data = _array(variable)
    return {"kind": "leaf", "name": graph.names.get(id(variable), ""), "shape": _shape(data.shape),
            "dtype": str(data.dtype), "requires_grad": bool(variable.requires_grad), "value": _record(tensor_info(data))}


def _output_record(graph: _Graph, value: TensorInfo) -> dict[str, Any]:
    return {"kind": "output", "name": graph.names.get(id(graph.output), ""), "shape": _shape(value.shape),
            "dtype": value.dtype, "value": _record(value)}


def _current_beat(graph: _Graph) -> dict[str, Any]:
    """The graph as it is now, read from its nodes (``explore`` of a tensor: nothing is run)."""
    nodes: dict[str, Any] = {}
    held: dict[int, int] = {}  # storage -> bytes: an array saved by several nodes counts once
    for fn in graph.fns:
        record = graph.static(fn)
        saved, attrs = [], {}
        for name, value in _saved_values(fn).items():
            if value is FREED_VALUE:
                saved.append({"name": name, "shape": None, "dtype": None, "bytes": None, "preview": "", "freed": True})
            elif _is_tensor(value):
                array = _array(value)
                base = array
                while isinstance(base.base, np.ndarray):
                    base = base.base
                held[id(base)] = max(held.get(id(base), 0), int(array.nbytes))
                saved.append(dict(_record(tensor_info(array)) or {}, name=name, freed=False))
            elif value is not None:
                attrs[name] = str(value)
        record.update(saved=saved, attrs=attrs, released=is_released(fn), raised=False, grads=None)
        nodes[graph.ids[id(fn)]] = record
    for key, variable in graph.leaves.items():
        nodes[key] = dict(_leaf_record(graph, variable), grad=_record(_info(variable.grad)), grad_accumulated=None)
    nodes["out"] = _output_record(graph, tensor_info(_array(graph.output)))
    released = any(n.get("released") for n in nodes.values())
    beat = {"n": 1, "label": "the graph now",
            "title": "after backward" if released else "after forward",
            "caption": ("a backward has run: the faded nodes released their saved tensors" if released else
                        "the graph as the forward pass built it: each node holds the tensors its backward needs"),
            "error": None, "backward": released, "nodes": nodes, "graph": 0, "held": sum(held.values()),
            "freed": None,
            "no_grads": "not recorded: explore(tensor) runs nothing; give explore a forward function to see them",
            "edges": ["fwd"] * len(graph.edges)}
    for record in nodes.values():
        record["line"] = _line(record)
    return beat


def _info(t: Any) -> TensorInfo | None:
    return None if t is None else tensor_info(_array(t))


def _pair(beat: Beat, graph: _Graph) -> dict[str, Any]:
    """``capture_lifecycle``'s node ids -> the nodes of ``graph``, found by walking both from the
    output along the same input edges (so nothing depends on how either side numbers nodes)."""
    into: dict[str, list[Any]] = {}
    for edge in beat.forward_edges:
        into.setdefault(edge.dst, []).append(edge)
    leaf_ids = {leaf.id for leaf in beat.leaves}
    fn_of = {beat.output.node: graph.root}
    stack = [beat.output.node]
    while stack:
        ident = stack.pop()
        fn = fn_of[ident]
        for edge in into.get(ident, ()):
            if edge.src in leaf_ids or edge.src in fn_of:
                continue
            fn_of[edge.src] = fn.next_functions[edge.input_nr][0]
            stack.append(edge.src)
    missing = [n.id for n in beat.nodes if n.id not in fn_of]
    if missing:  # pragma: no cover - the two walks follow the same edges
        raise RuntimeError(f"explore: could not match the captured nodes {missing} to the graph")
    return fn_of


def _lifecycle_beat(beat: Beat, graph: _Graph, grads_shown: dict[str, Any] | None) -> dict[str, Any]:
    """One of ``capture_lifecycle``'s beats as page records, on ``graph`` (the graph it describes).
    ``grads_shown``: for a second backward that raised, the gradients of the backward that ran
    (the panel shows those; the dashed edges show how far the failing one got)."""
    fn_of = _pair(beat, graph)
    page_id = {ident: graph.ids[id(fn)] for ident, fn in fn_of.items()}
    nodes: dict[str, Any] = {}
    sent: dict[str, dict[int, TensorInfo | None]] = {}
    for edge in beat.gradient_edges:
        sent.setdefault(edge.src, {})[edge.input_nr] = edge.grad
    for info in beat.nodes:
        pid = page_id[info.id]
        record = graph.static(fn_of[info.id])
        for k, entry in enumerate(record["inputs"]):
            if entry["op"] is not None and k in sent.get(info.id, {}):
                entry["grad"] = _record(sent[info.id][k])
        saved = [{"name": s.name, "shape": None if s.shape is None else _shape(s.shape), "dtype": s.dtype,
                  "bytes": s.nbytes, "preview": s.preview, "freed": s.freed} for s in info.saved]
        if not saved and pid in graph.function_saved:
            saved = [dict(r, freed=info.released, preview="" if info.released else r["preview"])
                     for r in graph.function_saved[pid]]
        grads = [_record(g) for g in info.grad] if info.grad is not None else None
        if grads_shown is not None:
            grads = grads_shown.get(pid)
        record.update(
            saved=saved, attrs=dict(info.attrs), released=info.released, raised=info.id == beat.error_node, grads=grads)
        nodes[pid] = record
    for leaf in beat.leaves:
        variable = fn_of[leaf.node].variable
        nodes["l" + page_id[leaf.node][1:]] = dict(_leaf_record(graph, variable), grad=_record(leaf.grad),
                                                   grad_accumulated=_record(leaf.grad_accumulated))
    nodes["out"] = dict(_output_record(graph, beat.output.value), name=beat.output.name)
    leaf_ids = {leaf.id for leaf in beat.leaves}

    def drawn(edge: Any) -> tuple[str, str]:  # the drawn (forward) edge a gradient edge runs back along
        if edge.src == beat.output.id:
            return page_id[edge.dst], "out"
        if edge.dst in leaf_ids:
            return "l" + page_id[edge.src][1:], page_id[edge.src]
        return page_id[edge.dst], page_id[edge.src]

    flowed = {drawn(e) for e in beat.gradient_edges}
    for record in nodes.values():
        record["line"] = _line(record)
    return {"n": beat.index, "label": BEAT_LABELS.get(beat.kind, beat.kind), "title": beat.title,
            "caption": beat.note, "error": None if beat.error is None else f"RuntimeError: {beat.error}",
            "backward": beat.kind in ("backward", "second_backward"), "nodes": nodes,
            "held": beat.saved_bytes, "freed": beat.freed_bytes,
            "edges": ["grad" if pair in flowed else "fwd" for pair in graph.edges]}


# -- the drawing --------------------------------------------------------------------------------


def _label(record: dict[str, Any]) -> str:
    kind = record["kind"]
    meta = f"{_shape_text(record['shape'])} {record['dtype']}" if record.get("shape") is not None else ""
    if kind == "node":
        lines = [record["op"], meta, record.get("line")]
    elif kind == "leaf":
        lines = [record["name"] or "leaf", meta, record["line"]]
    else:
        lines = [record["name"] or "output", meta]
    return "\n".join(line for line in lines if line)


def _svg(graph: _Graph, nodes: dict[str, Any], prefix: str) -> str:
    """Graphviz's SVG of ``graph`` (labelled from the records ``nodes`` of its first beat), ready
    to inline in HTML: no XML prolog, doctype, comments, namespaces or tooltips, and every node's
    and edge's element carrying the page id (``<g id="{prefix}n3" class="node node">``)."""
    dot = _digraph(graph_attr=dict(rankdir="TB", bgcolor="transparent", nodesep="0.25", ranksep="0.28"),
                   node_attr=dict(shape="box", style="rounded,filled", fontname="monospace", fontsize="11",
                                  margin="0.12,0.05", height="0.3", penwidth="1.2"),
                   edge_attr=dict(arrowsize="0.7", penwidth="1.2", color="#555555"))
    lines = _Lines(dot.body)
    colors = {"node": "#e4e4e4", "leaf": "#add8e6", "output": "#caff70"}
    for ident, record in nodes.items():
        lines.node(ident, _label(record), id=prefix + ident, fillcolor=colors[record["kind"]], **{"class": record["kind"]})
    for k, (a, b) in enumerate(graph.edges):
        lines.edge(a, b, id=f"{prefix}e{k}")
    svg = dot.pipe(format="svg", encoding="utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)  # HTML needs no namespaces (and they are URLs)
    svg = re.sub(r"<title>.*?</title>\n?", "", svg)  # the DOT names would pop up as tooltips
    return svg.strip()


# -- the page -----------------------------------------------------------------------------------


def _json_for_script(value: Any) -> str:
    # inside <script>, "</" could close the element early, and U+2028/9 break older parsers
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _page(title: str, svgs: list[str], beats: list[dict[str, Any]]) -> str:
    from ._explore_page import CSS, JS, TEMPLATE

    drawings = "\n".join(f'<div class="drawing" data-graph="{i}" hidden>{svg}</div>' for i, svg in enumerate(svgs))
    return (TEMPLATE.replace("{{TITLE}}", html.escape(title))
            .replace("{{CSS}}", CSS)
            .replace("{{DRAWINGS}}", drawings)
            .replace("{{DATA}}", _json_for_script({"title": title, "beats": beats}))
            .replace("{{JS}}", JS))


def _drawings(graphs: list[_Graph], beats: list[dict[str, Any]]) -> list[str]:
    """One drawing per distinct graph structure (``beat["graph"]`` indexes ``graphs`` on entry,
    the drawings on return): a new forward that builds the same graph shares the first one's
    drawing, so stepping the beats keeps every node in its place."""
    svgs: list[str] = []
    keys: list[str] = []
    index_of: dict[int, int] = {}
    for g, graph in enumerate(graphs):
        key = graph.structure()
        if key not in keys:
            first = next(b for b in beats if b["graph"] == g)
            keys.append(key)
            svgs.append(_svg(graph, first["nodes"], f"g{len(svgs)}"))
        index_of[g] = keys.index(key)
    for beat in beats:
        beat["graph"] = index_of[beat["graph"]]
    return svgs


def _names(params: dict[str, Any] | Iterable[tuple[str, Any]] | None) -> dict[str, Any]:
    named = {} if params is None else dict(params.items() if isinstance(params, dict) else params)
    if not all(_is_tensor(p) for p in named.values()):
        raise TypeError("explore: params must map names to tensors")
    return named


def explore(root_or_forward: Callable[[], Any] | Tensor, path: str | os.PathLike[str],
            params: dict[str, Any] | Iterable[tuple[str, Any]] | None = None, gradient: Any = None,
            retain_graph: bool = False, title: str | None = None, max_nodes: int = 400) -> str:
    """Write an explorable page of a graph to ``path``: one HTML file with everything inlined (it
    works offline); returns the path.

    Click a node for its op, its output's and inputs' shapes and dtypes, the tensors it saved for
    backward (bytes, a preview), its arguments and the gradient that flowed into it (and what it
    sent to each input); click a leaf for its value and ``.grad``. ``params`` names leaves (a
    ``{name: tensor}`` dict or ``model.named_parameters()``, as ``make_dot``'s).

    ``root_or_forward`` is either

    - a function of no arguments that runs a forward pass and returns the loss: the page steps
      through the four beats of ``capture_lifecycle`` (buttons, slider, arrow keys):
      1. after forward; 2. after ``backward(gradient, retain_graph=retain_graph)``, the released
      nodes faded and the edges the gradient flowed back along dashed; 3. a second
      ``backward()``: the ``RuntimeError`` it raises and the node that raised it; 4. a new
      forward (``forward()`` called again): a fresh graph while the leaves keep their ``.grad``.
      Those passes really run (and one more backward through the fresh graph), so afterwards
      the leaves' ``.grad`` holds their sum, as a training loop without ``zero_grad()`` leaves it;
    - a tensor with a ``grad_fn``: one beat, its graph as it is now (faded where a backward has
      released it); nothing is run.

    ``max_nodes`` bounds the graph (a larger one raises ``ValueError``: use
    ``retrograd.debug.print_graph`` for those).

    >>> import os, tempfile, retrograd as rg
    >>> w = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> page = explore(lambda: (w * w).sum(), os.path.join(tempfile.mkdtemp(), 'graph.html'), params={'w': w})
    >>> text = open(page, encoding='utf-8').read()
    >>> 'MulBackward0' in text and 'Trying to backward through the graph a second time' in text
    True
    >>> w.grad  # the first backward and the fresh graph's: 2 * w, twice
    tensor([4., 8.])
    """
    named = _names(params)
    names = {id(v): k for k, v in named.items()}
    graphs: list[_Graph] = []
    if callable(root_or_forward) and not _is_tensor(root_or_forward):
        forward = root_or_forward

        def traced() -> Any:  # keep each graph capture_lifecycle describes, to read what it lacks
            out = forward()
            if not _is_tensor(out) or out.grad_fn is None:
                raise TypeError("explore: forward() must return a tensor with a grad_fn (built with grad mode "
                                f"on), got {type(out).__name__}")
            graphs.append(_Graph(out, names, max_nodes))
            return out

        lifecycle = capture_lifecycle(traced, params=named, gradient=gradient, retain_graph=retain_graph)
        beats: list[dict[str, Any]] = []
        for beat in lifecycle:
            g = 0 if beat.kind != "new_forward" else len(graphs) - 1
            shown = None
            if beat.kind == "second_backward" and beat.error is not None:
                shown = {k: r["grads"] for k, r in beats[1]["nodes"].items() if r["kind"] == "node"}
            beats.append(dict(_lifecycle_beat(beat, graphs[g], shown), graph=g,
                              grads_note=None if shown is None else "in the first backward"))
    elif _is_tensor(root_or_forward) and getattr(root_or_forward, "grad_fn", None) is not None:
        graphs.append(_Graph(root_or_forward, names, max_nodes))
        beats = [_current_beat(graphs[0])]
    else:
        raise TypeError("explore: expected a tensor with a grad_fn, or a function that runs a forward pass "
                        f"and returns one; got {type(root_or_forward).__name__}")
    text = _page(title or "retrograd graph", _drawings(graphs, beats), beats)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return os.fspath(path)
