"""``retrograd.viz``: draw autograd graphs with Graphviz.

``make_dot`` is torchviz's ``make_dot`` for retrograd (same arguments, same picture: one grey box
per backward node, light-blue leaves under their ``AccumulateGrad``, the output in green, saved
tensors in orange; nodes released by a backward pass faded, with a dashed border).
``make_dot_lifecycle`` draws the four beats of a graph's life side by side (built, freed by
backward, a second backward failing, a new forward), from the data ``capture_lifecycle`` returns.

Both need the ``graphviz`` Python package (``pip install retrograd[viz]``); rendering images
also needs the Graphviz binaries, but building the ``Digraph`` (and reading ``.source``) does not.
"""

from __future__ import annotations

from typing import Any

from ..autograd.graph import is_released, peek_saved
from ..tensor import Tensor

__all__ = ["capture_lifecycle", "explore", "make_dot", "make_dot_lifecycle", "resize_graph"]

SAVED_PREFIX = "_saved_"
# A node whose saved tensors backward released (and saved tensors freed): faded, dashed border.
RELEASED_STYLE: dict[str, str] = dict(fillcolor="grey92", fontcolor="grey55", color="grey70", style="filled,dashed")
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
        if is_released(fn):  # backward freed what it saved: drawn faded
            lines.node(str(id(fn)), _fn_label(fn, show_attrs, max_attr_chars), **RELEASED_STYLE)
        else:
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
    # The nested walkers refer to each other through their closure cells, a reference cycle;
    # emptying ``keep`` lets the graph go by reference counting instead of waiting for a full
    # collection (which the large-graph guard makes rarer while the graph is alive).
    keep.clear()
    resize_graph(dot)
    return dot


# -- the lifecycle drawing: four beats, in .lifecycle (which uses the helpers above) -------------

from .explore import explore  # noqa: E402  (it builds on the helpers above)
from .lifecycle import capture_lifecycle, make_dot_lifecycle  # noqa: E402
