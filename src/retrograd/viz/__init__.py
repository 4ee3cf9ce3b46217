"""``retrograd.viz``: draw autograd graphs with Graphviz.

``make_dot`` is torchviz's ``make_dot`` for retrograd (same arguments, same picture: one grey box
per backward node, light-blue leaves under their ``AccumulateGrad``, the output in green, saved
tensors in orange). ``make_dot_lifecycle`` draws a graph before and after its backward pass.

Both need the ``graphviz`` Python package (``pip install retrograd[viz]``); rendering images
also needs the Graphviz binaries, but building the ``Digraph`` (and reading ``.source``) does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..autograd.graph import FREED_MESSAGE, is_released, peek_saved
from ..tensor import Tensor

__all__ = ["make_dot", "make_dot_lifecycle", "resize_graph"]

SAVED_PREFIX = "_saved_"
_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


def _digraph(**kwargs: Any) -> Any:
    try:
        from graphviz import Digraph
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "retrograd.viz needs the 'graphviz' Python package: install it with "
            "`pip install retrograd[viz]` (the 'viz' extra) or `pip install graphviz`."
        ) from exc
    return Digraph(**kwargs)


_DOT_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


class _Lines:
    """Appends node and edge statements to a graph's ``body`` exactly as graphviz's ``node`` and
    ``edge`` write them (attributes sorted, identifiers quoted when needed), without their per-call
    argument handling, which dominates the time on graphs of 100,000 nodes."""

    def __init__(self, body: list[str]) -> None:
        from graphviz.quoting import quote

        self._quote = getattr(quote, "__wrapped__", quote)  # skip the positional-args shim
        self._cache: dict[str, str] = {}
        self.body = body

    def q(self, text: str) -> str:
        # node ids (``str(id(...))``, ``a1234``, ``bs1234_self``) are valid DOT ids as they are
        if text.isascii() and (text.isdigit() or text.isidentifier() and text.lower() not in _DOT_KEYWORDS):
            return text
        quoted = self._cache.get(text)
        if quoted is None:
            quoted = self._cache[text] = self._quote(text)
        return quoted

    def _attrs(self, label: str | None, attrs: dict[str, str]) -> str:
        parts = [f"label={self.q(label)}"] if label is not None else []
        parts += [f"{self.q(k)}={self.q(v)}" for k, v in sorted(attrs.items()) if v is not None]
        return f" [{' '.join(parts)}]" if parts else ""

    def node(self, name: str, label: str | None = None, **attrs: str) -> None:
        self.body.append(f"\t{self.q(name)}{self._attrs(label, attrs)}\n")

    def edge(self, tail: str, head: str, **attrs: str) -> None:
        self.body.append(f"\t{self.q(tail)} -> {self.q(head)}{self._attrs(None, attrs)}\n")


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) or type(value).__name__ in ("Tensor", "Parameter")


def _size_to_str(shape: Any) -> str:
    return "(" + ", ".join(str(int(v)) for v in shape) + ")"


# -- reading a node's saved values (retrograd's nodes, or any node with torch's ``_saved_*``) ----


class _Freed:
    """Stands for a saved value released by backward."""


FREED_VALUE = _Freed()


def saved_attributes(fn: Any) -> dict[str, Any]:
    """What ``fn`` saved for backward, by name (``self``, ``other``, ``result``, params...); a value
    is ``FREED_VALUE`` once backward released it."""
    op = getattr(fn, "_op", None)
    if op is None:  # PyTorch-style nodes expose ``_saved_<name>`` attributes
        attrs: dict[str, Any] = {}
        for name in dir(fn):
            if name.startswith(SAVED_PREFIX):
                try:
                    attrs[name[len(SAVED_PREFIX):]] = getattr(fn, name)
                except RuntimeError:
                    attrs[name[len(SAVED_PREFIX):]] = FREED_VALUE
        return attrs
    attrs = {}
    saved = fn._saved
    n_inputs = len(fn.next_functions) if op.variadic else op.n_inputs
    if is_released(fn):
        slots = sorted(set().union(*op.saves_for)) if op.saves_for else []
        for i in slots:
            attrs[_slot_name(op, i, n_inputs)] = FREED_VALUE
    else:
        for i, slot in enumerate(saved):
            if slot is not None:
                attrs[_slot_name(op, i, n_inputs)] = peek_saved(slot)
    for name, value in zip(op.params, getattr(fn, "_params", ()), strict=False):
        attrs[name] = value
    return attrs


def _slot_name(op: Any, i: int, n_inputs: int) -> str:
    if op.variadic:
        return f"{op.inputs[0]}[{i}]" if i < n_inputs else f"result{i - n_inputs}"
    if i < op.n_inputs:
        return str(op.inputs[i])
    k = i - op.n_inputs
    return "result" if op.n_outputs == 1 else f"result{k}"


def _fn_label(fn: Any, show_attrs: bool, max_attr_chars: int) -> str:
    name = type(fn).__name__
    if not show_attrs:
        return name
    attrs: dict[str, str] = {}
    for key, val in saved_attributes(fn).items():
        if val is FREED_VALUE:
            attrs[key] = "[freed]"
        elif _is_tensor(val):
            attrs[key] = "[saved tensor]"
        elif isinstance(val, tuple) and any(_is_tensor(t) for t in val):
            attrs[key] = "[saved tensors]"
        else:
            attrs[key] = str(val)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1 + col2 + 2, len(name))

    def cut(s: str) -> str:
        return s[: col2 - 3] + "..." if len(s) > col2 else s

    rows = "\n".join(f"{k:<{col1}}: {cut(v):>{col2}}" for k, v in attrs.items())
    return name + "\n" + sep + "\n" + rows


def resize_graph(dot: Any, size_per_element: float = 0.15, min_size: float = 12) -> None:
    """Grow the drawing's ``size`` with the number of statements (as torchviz does)."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")


def make_dot(var: Any, params: dict[str, Any] | None = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> Any:
    """A ``graphviz.Digraph`` of the graph behind ``var`` (a tensor or a tuple of tensors).

    Backward nodes are grey boxes named like PyTorch's (``MulBackward0``); a leaf is a light-blue
    box with its shape (and its name from ``params``, a ``{name: tensor}`` dict) feeding its
    ``AccumulateGrad``; the output is green, a view's base dark green (dotted edge).
    ``show_attrs`` lists each node's saved values and arguments; ``show_saved`` adds the saved
    tensors as orange boxes; ``max_attr_chars`` truncates long attribute values.

    >>> import retrograd as rg
    >>> x = rg.ones(3, requires_grad=True)
    >>> dot = make_dot((x * 2).sum(), params={'x': x})
    >>> 'MulBackward0' in dot.source and 'x\\n (3)' in dot.source
    True
    """
    if params is not None:
        if not all(_is_tensor(p) for p in params.values()):
            raise TypeError("make_dot: params must map names to tensors")
        param_map = {id(v): k for k, v in params.items()}
    else:
        param_map = {}
    dot = _digraph(node_attr=dict(_NODE_ATTR), graph_attr=dict(size="12,12"))
    lines = _Lines(dot.body)
    seen: set[int] = set()
    keep: list[Any] = []  # objects whose ids are used as node names stay alive until the end

    def var_name(v: Any, name: str | None = None) -> str:
        if not name:
            name = param_map.get(id(v), "")
        return f"{name}\n {_size_to_str(v.shape)}"

    def add_nodes(fn: Any) -> None:
        # Depth-first with an explicit stack (a deep graph would overflow Python's recursion
        # limit), emitting statements in the same order as the recursive walk of torchviz.
        if id(fn) in seen:
            return
        stack = [(fn, iter(visit(fn)))]
        while stack:
            cur, edges = stack[-1]
            for nxt, _ in edges:
                if nxt is not None:
                    lines.edge(str(id(nxt)), str(id(cur)))
                    if id(nxt) not in seen:
                        stack.append((nxt, iter(visit(nxt))))
                        break
            else:
                stack.pop()

    def visit(fn: Any) -> Any:
        """Draw ``fn`` (and its leaf and saved tensors); return its edges."""
        seen.add(id(fn))
        keep.append(fn)
        if show_saved:
            for attr, val in saved_attributes(fn).items():
                values = [(attr, val)] if _is_tensor(val) else (
                    [(f"{attr}[{i}]", t) for i, t in enumerate(val) if _is_tensor(t)] if isinstance(val, tuple) else [])
                for label, t in values:
                    keep.append(t)
                    seen.add(id(t))
                    lines.edge(str(id(fn)), str(id(t)), dir="none")
                    lines.node(str(id(t)), var_name(t, label), fillcolor="orange")
        variable = getattr(fn, "variable", None)
        if variable is not None:  # AccumulateGrad: draw its leaf
            seen.add(id(variable))
            keep.append(variable)
            lines.node(str(id(variable)), var_name(variable), fillcolor="lightblue")
            lines.edge(str(id(variable)), str(id(fn)))
        lines.node(str(id(fn)), _fn_label(fn, show_attrs, max_attr_chars))
        return getattr(fn, "next_functions", ())

    def add_base_tensor(v: Any, color: str = "darkolivegreen1") -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        keep.append(v)
        lines.node(str(id(v)), var_name(v), fillcolor=color)
        if v.grad_fn is not None:
            add_nodes(v.grad_fn)
            lines.edge(str(id(v.grad_fn)), str(id(v)))
        base = getattr(v, "_base", None)
        if base is not None:
            add_base_tensor(base, color="darkolivegreen3")
            lines.edge(str(id(base)), str(id(v)), style="dotted")

    if isinstance(var, tuple):
        for v in var:
            add_base_tensor(v)
    else:
        add_base_tensor(var)
    resize_graph(dot)
    return dot


# -- the lifecycle drawing -------------------------------------------------------------------


@dataclass
class _Snapshot:
    nodes: list[tuple[int, str]] = field(default_factory=list)  # (id, name)
    edges: list[tuple[int, int]] = field(default_factory=list)  # (from id, to id): gradient flow
    saved: dict[int, list[tuple[str, str, bool]]] = field(default_factory=dict)  # id -> (name, shape, freed)
    leaves: dict[int, tuple[str, bool]] = field(default_factory=dict)  # AccumulateGrad id -> (label, has grad)


def _snapshot(root: Any, param_map: dict[int, str], shapes: dict[tuple[int, str], str]) -> _Snapshot:
    snap = _Snapshot()
    seen: set[int] = set()
    stack = [root]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        snap.nodes.append((id(fn), type(fn).__name__))
        variable = getattr(fn, "variable", None)
        if variable is not None:
            label = f"{param_map.get(id(variable), '')}\n {_size_to_str(variable.shape)}"
            grad = variable._grad if isinstance(variable, Tensor) else variable.grad
            snap.leaves[id(fn)] = (label, grad is not None)
        items = []
        for name, val in saved_attributes(fn).items():
            freed = val is FREED_VALUE
            if freed or _is_tensor(val):
                key = (id(fn), name)
                if not freed:
                    shapes[key] = _size_to_str(val.shape)
                items.append((name, shapes.get(key, "(?)"), freed))
        if items:
            snap.saved[id(fn)] = items
        for nxt, _ in reversed(getattr(fn, "next_functions", ())):
            if nxt is not None:
                snap.edges.append((id(nxt), id(fn)))
                stack.append(nxt)
    return snap


def _draw_snapshot(dot: Any, snap: _Snapshot, prefix: str, title: str, out_label: str, out_id: str) -> None:
    with dot.subgraph(name=f"cluster_{prefix}") as sub:
        sub.attr(label=title, fontname="monospace", fontsize="11", style="rounded", color="grey60")
        lines = _Lines(sub.body)
        lines.node(out_id, out_label, fillcolor="darkolivegreen1")
        for ident, name in snap.nodes:
            lines.node(f"{prefix}{ident}", name)
            leaf = snap.leaves.get(ident)
            if leaf is not None:
                label, has_grad = leaf
                text = label + ("\n .grad set" if has_grad else "")
                lines.node(f"{prefix}v{ident}", text, fillcolor="lightblue")
                lines.edge(f"{prefix}v{ident}", f"{prefix}{ident}")
            for name, shape, freed in snap.saved.get(ident, ()):
                sid = f"{prefix}s{ident}_{name}"
                if freed:
                    lines.node(sid, f"{name}\n {shape}\n[freed]", fillcolor="grey92", fontcolor="grey55",
                             color="grey70", style="filled,dashed")
                    lines.edge(f"{prefix}{ident}", sid, dir="none", color="grey70", style="dashed")
                else:
                    lines.node(sid, f"{name}\n {shape}", fillcolor="orange")
                    lines.edge(f"{prefix}{ident}", sid, dir="none")
        for a, b in snap.edges:
            lines.edge(f"{prefix}{a}", f"{prefix}{b}")


def make_dot_lifecycle(loss: Tensor, params: dict[str, Any] | None = None, gradient: Any = None,
                       retain_graph: bool | None = None) -> Any:
    """Draw ``loss``'s graph before and after its backward pass, side by side, and run that pass.

    Panel 1 ("after forward") is the graph as the forward pass built it: backward nodes (grey),
    leaves (light blue) under their ``AccumulateGrad``, and every tensor a node saved for backward
    (orange). This function then calls ``loss.backward(gradient, retain_graph=retain_graph)``
    itself, so the caller's leaves get their ``.grad`` as with a plain ``backward()``.
    Panel 2 ("after backward") is the same graph afterwards: the saved tensors have been freed
    (shown greyed out and dashed, marked ``[freed]``), leaves say ``.grad set``, and a note says
    that a second ``backward()`` through this graph would raise. With ``retain_graph=True`` the
    saved tensors stay orange in panel 2 and the note says the graph may be reused.

    ``params`` names leaves as in ``make_dot``. Returns a ``graphviz.Digraph``.

    >>> import retrograd as rg
    >>> w = rg.ones(3, requires_grad=True)
    >>> dot = make_dot_lifecycle((w * w).exp().sum(), params={'w': w})
    >>> '[freed]' in dot.source, w.grad is not None
    (True, True)
    """
    if not _is_tensor(loss) or loss.grad_fn is None:
        raise RuntimeError("make_dot_lifecycle: loss must be a tensor with a grad_fn (built with grad mode on)")
    param_map = {id(v): k for k, v in (params or {}).items()}
    shapes: dict[tuple[int, str], str] = {}
    root = loss.grad_fn
    before = _snapshot(root, param_map, shapes)
    loss.backward(gradient, retain_graph=retain_graph)
    after = _snapshot(root, param_map, shapes)

    dot = _digraph(node_attr=dict(_NODE_ATTR), graph_attr=dict(size="12,12", rankdir="TB", compound="true"))
    out_label = f"{param_map.get(id(loss), '')}\n {_size_to_str(loss.shape)}"
    _draw_snapshot(dot, before, "a", "1. after forward: graph built, saved tensors held", out_label, "a_out")
    _draw_snapshot(dot, after, "b", "2. after backward: saved tensors freed, .grad filled", out_label, "b_out")
    dot.edge(f"a{id(root)}", "a_out")
    dot.edge(f"b{id(root)}", "b_out")
    freed = any(f for items in after.saved.values() for _, _, f in items)
    note = ("a second backward() would raise:\n" + FREED_MESSAGE[:80] + "...") if freed else \
        "graph retained: backward() may run again"
    dot.node("b_note", note, shape="note", fillcolor="lightyellow")
    dot.edge("b_out", "b_note", style="invis")
    resize_graph(dot)
    return dot
