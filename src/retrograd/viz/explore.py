"""``retrograd.viz.explore``: one self-contained HTML page to click through a graph.

``explore(root_or_forward, path)`` lays the graph out with Graphviz (its SVG, inlined), and
writes one HTML file with everything inlined (no network, no CDN): click a node to see its op,
its inputs' shapes and dtypes, the tensors it saved for backward (bytes and a preview) and the
gradient that flowed through it; step through the beats of the graph's life with the buttons,
the slider or the arrow keys.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from typing import Any

import numpy as np

from ..autograd.graph import is_released, peek_saved
from ..tensor import Tensor
from . import FREED_VALUE, _digraph, _is_tensor, _Lines, saved_attributes

__all__ = ["explore"]

PREVIEW_ITEMS = 6  # values shown in a preview (the panel says how many there are in all)


# -- what the page shows: plain JSON-able records -------------------------------------------------


def _dtype_name(np_dtype: Any) -> str:
    from .._dtype import from_numpy_dtype

    try:
        return str(from_numpy_dtype(np.dtype(np_dtype)))
    except TypeError:
        return str(np_dtype)


def _shape(shape: Any) -> list[int]:
    return [int(v) for v in shape]


def _shape_text(shape: list[int]) -> str:
    return "(" + ", ".join(str(v) for v in shape) + ("," if len(shape) == 1 else "") + ")"


def _preview(array: Any) -> str:
    """The first few values of ``array``, flattened, with an ellipsis when there are more."""
    flat = np.asarray(array).reshape(-1)
    head = flat[:PREVIEW_ITEMS]
    if head.dtype.kind == "f":
        text = ", ".join(_num(float(v)) for v in head)
    else:
        text = ", ".join(str(v.item()) for v in head)
    return "[" + text + (", …" if flat.size > PREVIEW_ITEMS else "") + "]"


def _num(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return f"{v:.4g}"


def _tensor_record(array: Any) -> dict[str, Any]:
    array = np.asarray(array)
    record: dict[str, Any] = {"shape": _shape(array.shape), "dtype": _dtype_name(array.dtype),
                              "bytes": int(array.nbytes), "preview": _preview(array)}
    if array.dtype.kind in "fc" and array.size:
        record["norm"] = _num(float(np.linalg.norm(array.astype(np.float64).reshape(-1))))
    return record


def _array(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else np.asarray(value.detach().cpu().numpy())


def _output_meta(fn: Any, output_nr: int) -> tuple[list[int], str] | None:
    """The shape and dtype of ``fn``'s forward output number ``output_nr``, from the graph."""
    variable = getattr(fn, "variable", None)
    if variable is not None:
        return _shape(variable.shape), _dtype_name(_array(variable).dtype)
    shape, dtype = getattr(fn, "_shape", None), getattr(fn, "_dtype", None)
    if shape is None:
        meta = getattr(fn, "_output_meta", ())
        if output_nr >= len(meta):
            return None
        shape, dtype = meta[output_nr]
    return _shape(shape), _dtype_name(dtype)


def _saved_values(fn: Any) -> dict[str, Any]:
    """What ``fn`` saved for backward, by name (``FREED_VALUE`` once released): an op's named
    slots, or a custom ``autograd.Function``'s ``save_for_backward`` tensors (``saved[i]``;
    once released their number is unknown, so one ``saved`` entry stands for them)."""
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
    graphs built by the same forward get the same ids), the edges, and the leaves and output."""

    def __init__(self, root: Any, output: Any, params: dict[int, str], max_nodes: int) -> None:
        self.fns: list[Any] = []
        self.ids: dict[int, str] = {}
        self.edges: list[tuple[str, str, int]] = []  # (from, to, input number): forward direction
        stack = [root]
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
        for fn in self.fns:
            for k, (nxt, _) in enumerate(getattr(fn, "next_functions", ())):
                if nxt is not None:
                    self.edges.append((self.ids[id(nxt)], self.ids[id(fn)], k))
        self.leaves: dict[str, Any] = {}  # "l3" -> the leaf tensor under AccumulateGrad "n3"
        for fn in self.fns:
            variable = getattr(fn, "variable", None)
            if variable is not None:
                self.leaves["l" + self.ids[id(fn)][1:]] = variable
        self.root = root
        self.output = output
        self.params = params

    def structure(self) -> list[Any]:
        """What the layout depends on: two graphs with equal structures share one drawing."""
        nodes = [(type(fn).__name__, _output_meta(fn, 0), bool(_saved_values(fn))) for fn in self.fns]
        leaves = sorted((k, self.params.get(id(v), "")) for k, v in self.leaves.items())
        return [nodes, self.edges, leaves, _shape(self.output.shape) if self.output is not None else None]


def _snapshot(graph: _Graph, grads: dict[int, Any], saved_bytes: dict[tuple[int, str], dict[str, Any]],
              faded: bool | None = None) -> dict[str, Any]:
    """The records of every node, leaf and edge of ``graph`` as it is now.

    ``grads`` maps a node's id to the gradient that flowed into it (its output's gradient);
    ``saved_bytes`` remembers each saved tensor's record so that a freed one still shows what
    it held; ``faded``, when given, overrides ``is_released`` for the whole graph.
    """
    nodes: dict[str, Any] = {}
    for fn in graph.fns:
        ident = graph.ids[id(fn)]
        inputs = []
        for nxt, nr in getattr(fn, "next_functions", ()):
            if nxt is None:
                inputs.append({"op": None})
                continue
            meta = _output_meta(nxt, nr)
            entry: dict[str, Any] = {"op": type(nxt).__name__, "node": graph.ids[id(nxt)]}
            if meta is not None:
                entry["shape"], entry["dtype"] = meta
            variable = getattr(nxt, "variable", None)
            if variable is not None:
                entry["leaf"] = graph.params.get(id(variable), "")
            inputs.append(entry)
        saved = []
        values = _saved_values(fn)
        if values == {"saved": FREED_VALUE}:  # a released Function: the names it had, if seen before
            values = {name: FREED_VALUE for (ident_, name) in saved_bytes if ident_ == id(fn)} or values
        for name, value in values.items():
            key = (id(fn), name)
            if value is FREED_VALUE:
                record = dict(saved_bytes.get(key, {}), name=name, freed=True)
                record.pop("preview", None)
            elif _is_tensor(value):
                record = dict(_tensor_record(_array(value)), name=name, freed=False)
                saved_bytes[key] = record
            else:
                continue
            saved.append(record)
        meta = _output_meta(fn, 0)
        released = is_released(fn) if faded is None else faded
        total = sum(int(s.get("bytes", 0)) for s in saved)
        node: dict[str, Any] = {
            "kind": "node", "op": type(fn).__name__, "inputs": inputs, "saved": saved, "released": released,
            "grad": _tensor_record(grads[id(fn)]) if id(fn) in grads else None,
            "line": (("freed " if released and any(s["freed"] for s in saved) else "saved ") + _bytes(total))
            if saved else None,
        }
        if meta is not None:
            node["shape"], node["dtype"] = meta
        variable = getattr(fn, "variable", None)
        if variable is not None:
            node["leaf"] = graph.params.get(id(variable), "")
        nodes[ident] = node
    for leaf_id, variable in graph.leaves.items():
        grad = variable.grad
        nodes[leaf_id] = {
            "kind": "leaf", "name": graph.params.get(id(variable), ""), "shape": _shape(variable.shape),
            "dtype": _dtype_name(_array(variable).dtype), "requires_grad": bool(variable.requires_grad),
            "value": _tensor_record(_array(variable)),
            "grad": _tensor_record(_array(grad)) if grad is not None else None,
            "line": ".grad " + ("set" if grad is not None else "None"),
        }
    if graph.output is not None:
        out = graph.output
        nodes["out"] = {"kind": "output", "name": graph.params.get(id(out), ""), "shape": _shape(out.shape),
                        "dtype": _dtype_name(_array(out).dtype), "value": _tensor_record(_array(out))}
    return {"nodes": nodes}


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MB"


# -- the drawing --------------------------------------------------------------------------------


def _label(record: dict[str, Any]) -> str:
    kind = record["kind"]
    meta = f"{_shape_text(record['shape'])} {record['dtype'].replace('torch.', '')}" if "shape" in record else ""
    if kind == "node":
        lines = [record["op"], meta] + ([record["line"]] if record.get("line") else [])
    elif kind == "leaf":
        lines = [record["name"] or "leaf", meta, record["line"]]
    else:
        lines = [record["name"] or "output", meta]
    return "\n".join(line for line in lines if line)


def _svg(graph: _Graph, first: dict[str, Any], prefix: str) -> str:
    """Graphviz's SVG of ``graph`` (laid out from its first snapshot ``first``), made ready to
    inline in HTML: no XML prolog, doctype, comments, namespaces or tooltips, and every node's
    and edge's element carrying the page id (``<g id="{prefix}n3" class="node">``)."""
    dot = _digraph(graph_attr=dict(rankdir="TB", bgcolor="transparent", nodesep="0.25", ranksep="0.28",
                                   fontname="monospace"),
                   node_attr=dict(shape="box", style="rounded,filled", fontname="monospace", fontsize="11",
                                  margin="0.12,0.05", height="0.3", penwidth="1.2"),
                   edge_attr=dict(arrowsize="0.7", penwidth="1.2", color="#555555"))
    lines = _Lines(dot.body)
    colors = {"node": "#e4e4e4", "leaf": "#add8e6", "output": "#caff70"}
    nodes = first["nodes"]
    for ident, record in nodes.items():
        lines.node(ident, _label(record), id=prefix + ident, fillcolor=colors[record["kind"]], **{"class": record["kind"]})
    k = 0
    for key in nodes:
        if key.startswith("l"):  # a leaf feeds its AccumulateGrad
            lines.edge(key, "n" + key[1:], id=f"{prefix}e{k}")
            k += 1
    for a, b, _ in graph.edges:
        lines.edge(a, b, id=f"{prefix}e{k}")
        k += 1
    if "out" in nodes:
        lines.edge("n0", "out", id=f"{prefix}e{k}")
    svg = dot.pipe(format="svg", encoding="utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r"<title>.*?</title>\n?", "", svg)
    return svg.strip()


def _edge_ids(graph: _Graph, nodes: dict[str, Any]) -> list[tuple[str, str]]:
    """(from, to) for each edge id ``e{k}`` of the drawing, in the order ``_svg`` numbered them."""
    pairs = [(key, "n" + key[1:]) for key in nodes if key.startswith("l")]
    pairs += [(a, b) for a, b, _ in graph.edges]
    if "out" in nodes:
        pairs.append(("n0", "out"))
    return pairs


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


BEAT_TEXT = {
    1: ("after forward", "the forward pass built the graph: each node holds the tensors its backward needs"),
    2: ("after backward", "gradients flowed back (dashed) into the leaves' .grad; faded nodes released their saved tensors"),
    3: ("backward again", "a second backward() through the released graph raises"),
    4: ("new forward", "a fresh graph, nothing to do with the first; the leaves kept their accumulated .grad"),
}


def _beat(n: int, graph: _Graph, snap: dict[str, Any], svg_index: int, backward: bool,
          error: str | None = None, title: str | None = None, caption: str | None = None) -> dict[str, Any]:
    default_title, default_caption = BEAT_TEXT[n]
    snap.update(n=n, title=title or default_title, caption=caption or default_caption, graph=svg_index,
                error=error, backward=backward, edges=_edge_states(graph, snap["nodes"]))
    return snap


def _run_backward(loss: Any, graph: _Graph, gradient: Any, retain_graph: bool
                  ) -> tuple[dict[int, Any], str | None, set[int]]:
    """Run ``loss.backward`` with hooks on every node of ``graph``: returns the gradient that
    flowed into each node (of its first output), the error text if it raised, and the nodes
    that it entered but did not finish (where it raised)."""
    grads: dict[int, Any] = {}
    entered: set[int] = set()
    done: set[int] = set()
    handles = []
    for fn in graph.fns:
        def pre(grad_outputs: Any, key: int = id(fn)) -> None:
            entered.add(key)

        def post(grad_inputs: Any, grad_outputs: Any, key: int = id(fn)) -> None:
            done.add(key)
            g = grad_outputs[0] if grad_outputs else None
            if g is not None:
                grads[key] = _array(g).copy()
        handles += [fn.register_prehook(pre), fn.register_hook(post)]
    error = None
    try:
        loss.backward(gradient, retain_graph=retain_graph)
    except RuntimeError as exc:
        error = f"RuntimeError: {exc}"
    finally:
        for handle in handles:
            handle.remove()
    return grads, error, entered - done


def _own_beats(forward: Any, names: dict[int, str], gradient: Any, retain_graph: bool,
               max_nodes: int) -> tuple[list[_Graph], list[dict[str, Any]]]:
    """The four beats, captured here from the public graph API: forward, backward (with hooks
    recording the gradients), a second backward, and a second forward."""
    loss = _forward_output(forward)
    graph = _Graph(loss.grad_fn, loss, names, max_nodes)
    saved: dict[tuple[int, str], dict[str, Any]] = {}
    first = _snapshot(graph, {}, saved)
    grads, error, _ = _run_backward(loss, graph, gradient, retain_graph)
    if error is not None:
        raise RuntimeError(f"explore: the first backward() failed: {error}")
    second = _snapshot(graph, grads, saved)
    grads3, error3, raised = _run_backward(loss, graph, gradient, False)
    third = _snapshot(graph, grads3, saved)
    for fn in graph.fns:
        if id(fn) in raised:
            third["nodes"][graph.ids[id(fn)]]["raised"] = True
    loss4 = _forward_output(forward)
    graph4 = _Graph(loss4.grad_fn, loss4, names, max_nodes)
    fourth = _snapshot(graph4, {}, {})
    title3 = caption3 = None
    if error3 is None:
        title3 = "backward again"
        caption3 = ("the graph was retained (retain_graph=True), so a second backward() ran: the leaves' .grad "
                    "now holds the sum of both" if retain_graph else
                    "no node had released saved tensors, so a second backward() ran and accumulated again")
    beats = [_beat(1, graph, first, 0, False),
             _beat(2, graph, second, 0, True, caption=None if not retain_graph else
                   "gradients flowed back (dashed) into the leaves' .grad; retain_graph=True kept every saved tensor"),
             _beat(3, graph, third, 0, True, error3, title3, caption3),
             _beat(4, graph4, fourth, 1, False)]
    if error3 is not None:  # the panel shows what flowed in the backward that ran; the edges, how far this one got
        for key, node in third["nodes"].items():
            if node["kind"] == "node":
                node["grad"] = second["nodes"][key]["grad"]
    return [graph, graph4], beats


def _forward_output(forward: Any) -> Any:
    out = forward()
    if not _is_tensor(out) or out.grad_fn is None:
        raise TypeError("explore: forward() must return a tensor with a grad_fn (built with grad mode on), "
                        f"got {type(out).__name__}")
    return out


def _svgs(graphs: list[_Graph], beats: list[dict[str, Any]]) -> list[str]:
    """One drawing per distinct graph structure: a new forward that builds the same graph is
    drawn once and shared, so stepping the beats keeps every node where it was."""
    svgs: list[str] = []
    keys: list[str] = []
    index_of: dict[int, int] = {}
    for g, graph in enumerate(graphs):
        key = json.dumps(graph.structure())
        if key not in keys:
            first = next(b for b in beats if b["graph"] == g)
            keys.append(key)
            svgs.append(_svg(graph, first, f"g{len(svgs)}"))
        index_of[g] = keys.index(key)
    for beat in beats:
        beat["graph"] = index_of[beat["graph"]]
    return svgs


def explore(root_or_forward: Any, path: str | os.PathLike[str], params: dict[str, Any] | None = None,
            gradient: Any = None, retain_graph: bool = False, title: str | None = None,
            max_nodes: int = 400) -> str:
    """Write an explorable page of a graph to ``path`` (one HTML file, everything inlined: it
    works offline) and return the path.

    Click a node for its op, its output's and inputs' shapes and dtypes, the tensors it saved for
    backward (bytes, a preview), and the gradient that flowed through it; click a leaf for its
    value and ``.grad``. ``params`` names leaves (a ``{name: tensor}`` dict, as ``make_dot``'s).

    ``root_or_forward`` is either

    - a function of no arguments that runs a forward pass and returns its output (a loss): the
      page steps through the four beats of a graph's life (buttons, slider, arrow keys):
      1. after forward; 2. after ``backward(gradient, retain_graph=retain_graph)``, released
      nodes faded and gradient edges dashed; 3. a second ``backward()``, with the
      ``RuntimeError`` it raises; 4. a new forward (``forward()`` called again): a fresh graph
      while the leaves keep their accumulated ``.grad``. This runs those passes, so the leaves'
      ``.grad`` is set afterwards, as after a training step without ``zero_grad()``;
    - a tensor with a ``grad_fn``: one beat, its graph as it is now (faded where a backward has
      released it); nothing is run.

    ``max_nodes`` bounds the graph (a larger one raises ``ValueError``: use
    ``retrograd.debug.print_graph`` for those).

    >>> import os, tempfile, retrograd as rg
    >>> w = rg.ones(3, requires_grad=True)
    >>> page = explore(lambda: (w * w).sum(), os.path.join(tempfile.mkdtemp(), 'graph.html'), params={'w': w})
    >>> text = open(page, encoding='utf-8').read()
    >>> 'MulBackward0' in text and 'Trying to backward through the graph a second time' in text
    True
    >>> w.grad
    tensor([2., 2., 2.])
    """
    names = {id(v): k for k, v in (params or {}).items()}
    if callable(root_or_forward) and not _is_tensor(root_or_forward):
        graphs, beats = _own_beats(root_or_forward, names, gradient, retain_graph, max_nodes)
    elif _is_tensor(root_or_forward) and root_or_forward.grad_fn is not None:
        graph = _Graph(root_or_forward.grad_fn, root_or_forward, names, max_nodes)
        snap = _snapshot(graph, {}, {})
        released = any(n.get("released") for n in snap["nodes"].values())
        graphs = [graph]
        beats = [_beat(2 if released else 1, graph, snap, 0, released,
                       caption="a backward has run: faded nodes released their saved tensors" if released else None)]
    else:
        raise TypeError("explore: expected a tensor with a grad_fn, or a function that runs a forward pass "
                        f"and returns one; got {type(root_or_forward).__name__}")
    text = _page(title or "retrograd graph", _svgs(graphs, beats), beats)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return os.fspath(path)


def _edge_states(graph: _Graph, nodes: dict[str, Any]) -> list[str]:
    """Per drawn edge, in the drawing's order: "grad" (dashed, pointing back) where a gradient
    flowed back along it in this beat's backward, else "fwd" (solid: the forward pass).
    A gradient crossing edge a -> b arrives at a (at b's AccumulateGrad when a is a leaf)."""
    out = []
    for a, b in _edge_ids(graph, nodes):
        reached = nodes[b] if nodes[a]["kind"] == "leaf" else nodes[a]
        out.append("grad" if reached.get("kind") == "node" and reached.get("grad") is not None else "fwd")
    return out
