"""The four beats of a graph's life, as plain data (``capture_lifecycle``) and as a drawing
(``make_dot_lifecycle``).

1. ``forward``: the graph as the forward pass built it, every saved tensor held;
2. ``backward``: after ``backward()``: nodes that held saved tensors are released (their tensors
   freed), the gradient that flowed through each node is recorded, the leaves hold ``.grad``;
3. ``second_backward``: ``backward()`` again on the same graph: the real ``RuntimeError`` it
   raises (or, with ``retain_graph=True``, the second pass running and ``.grad`` accumulating);
4. ``new_forward``: the forward called again: a fresh graph, unrelated to the first, while the
   leaves keep their accumulated ``.grad``.

The beats hold only numbers and short strings (shapes, dtypes, bytes, value previews), never a
tensor, so keeping them keeps no graph or array alive. Node, leaf and output ids are strings,
stable within one capture: beats 1-3 share the first graph's node ids (``g1n0``...), beat 4 has
the fresh graph's (``g2n0``...), and a leaf keeps its id (``leaf0``...) in every beat.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.graph import is_released
from ..tensor import Tensor
from . import _NODE_ATTR, FREED_VALUE, RELEASED_STYLE, _digraph, _is_tensor, _Lines, resize_graph, saved_attributes

__all__ = ["Beat", "Edge", "InputInfo", "LeafInfo", "NodeInfo", "OutputInfo", "SavedInfo", "TensorInfo", "capture_lifecycle",
           "make_dot_lifecycle"]

PREVIEW_VALUES = 4  # values shown in a preview before "…"


# -- the data -----------------------------------------------------------------------------------


@dataclass
class TensorInfo:
    """A tensor described without holding it: shape, dtype (NumPy's name, ``float32``), bytes,
    the first few values and the 2-norm (None for bool)."""

    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    preview: str
    norm: float | None


@dataclass
class SavedInfo:
    """One value a node saved for backward. Once ``freed``, shape, dtype and bytes are those it had
    when it was saved (beat 1) and ``preview`` is empty."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str | None
    nbytes: int
    preview: str
    freed: bool


@dataclass
class InputInfo:
    """One differentiable input of a node, as its ``next_functions`` edge sees it: the node that
    made it (None for an input that needs no gradient) and its shape and dtype (None if unknown)."""

    node: str | None
    shape: tuple[int, ...] | None
    dtype: str | None


@dataclass
class NodeInfo:
    """A backward node: its id, op name (``MulBackward0``, ``AccumulateGrad``), forward output
    shape and dtype, whether backward released it, what it saved, its non-tensor arguments
    (``attrs``), and ``grad``: the gradient of each of its outputs that flowed into it during this
    beat's backward (None: no backward reached it in this beat). ``leaf`` names an
    ``AccumulateGrad``'s leaf; ``inputs`` its inputs, one per ``next_functions`` edge."""

    id: str
    op: str
    shape: tuple[int, ...] | None
    dtype: str | None
    released: bool
    saved: list[SavedInfo] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)
    grad: list[TensorInfo | None] | None = None
    leaf: str | None = None
    inputs: list[InputInfo] = field(default_factory=list)

    @property
    def saved_bytes(self) -> int:
        """Bytes of the saved tensors this node still holds."""
        return sum(s.nbytes for s in self.saved if not s.freed)


@dataclass
class Edge:
    """``kind`` ``"forward"``: ``src`` (a leaf or the node of an input) feeds ``dst`` (the node using
    it, or the output). ``kind`` ``"gradient"``: during this beat's backward ``src`` sent ``grad``
    to ``dst`` (backward direction: output -> root node -> ... -> AccumulateGrad -> leaf).
    ``input_nr`` is the slot of ``dst``'s inputs (forward) or of ``src``'s inputs (gradient)."""

    src: str
    dst: str
    kind: str
    input_nr: int = 0
    grad: TensorInfo | None = None


@dataclass
class LeafInfo:
    """A leaf that requires grad (reached through its ``AccumulateGrad`` node ``node``). ``grad``
    is its ``.grad`` at this beat; in beat 4, ``grad_accumulated`` is its ``.grad`` after a
    backward through the fresh graph added to what it kept."""

    id: str
    name: str
    shape: tuple[int, ...]
    dtype: str
    node: str
    grad: TensorInfo | None
    grad_accumulated: TensorInfo | None = None


@dataclass
class OutputInfo:
    """The tensor backward starts from (the loss), and the node that made it."""

    id: str
    name: str
    value: TensorInfo
    node: str


@dataclass
class Beat:
    """One beat of the lifecycle (see the module docstring). ``error`` is the text of the
    ``RuntimeError`` the second backward raised (beat 3), ``error_node`` the node it was raised in
    (None when unknown). ``saved_bytes``: bytes the graph's saved tensors hold at this beat (a
    saved array counted once however many nodes share it); ``freed_bytes``: bytes released."""

    index: int
    kind: str
    title: str
    note: str
    retained: bool
    nodes: list[NodeInfo]
    leaves: list[LeafInfo]
    output: OutputInfo
    forward_edges: list[Edge]
    gradient_edges: list[Edge]
    error: str | None = None
    error_node: str | None = None
    saved_bytes: int = 0
    freed_bytes: int = 0

    def node(self, node_id: str) -> NodeInfo:
        """The node with id ``node_id``."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def leaf(self, name: str) -> LeafInfo:
        """The leaf named ``name`` (as in ``params``) or with id ``name``."""
        for leaf in self.leaves:
            if name in (leaf.name, leaf.id):
                return leaf
        raise KeyError(name)


def _data(t: Any) -> Any:
    data = getattr(t, "_data", None)
    return np.asarray(t.detach().numpy()) if data is None else data  # (a PyTorch tensor)


def _fmt(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{v:.4g}"


def preview(array: Any, values: int = PREVIEW_VALUES) -> str:
    """The first ``values`` elements of ``array``, flattened (``[0.5, -1, 2, …]``).

    >>> preview(np.arange(6.0))
    '[0, 1, 2, 3, …]'
    >>> preview(np.float32(1.5))
    '1.5'
    """
    a = np.asarray(array)
    if a.ndim == 0:
        return _fmt(a.item())
    flat = a.reshape(-1)
    head = ", ".join(_fmt(v) for v in flat[:values].tolist())
    return f"[{head}{', …' if flat.size > values else ''}]"


def tensor_info(t: Any) -> TensorInfo:
    """``TensorInfo`` of a tensor (or a NumPy array).

    >>> import retrograd as rg
    >>> tensor_info(rg.tensor([3.0, 4.0]))
    TensorInfo(shape=(2,), dtype='float32', nbytes=8, preview='[3, 4]', norm=5.0)
    """
    a = t if isinstance(t, np.ndarray) else _data(t)
    norm = None if a.dtype.kind == "b" else float(np.linalg.norm(a.reshape(-1).astype(np.complex128 if a.dtype.kind
                                                                                        == "c" else np.float64)))
    return TensorInfo(tuple(int(s) for s in a.shape), str(a.dtype), int(a.nbytes), preview(a), norm)


def _info(t: Any) -> TensorInfo | None:
    return None if t is None else tensor_info(t)


# -- capturing ----------------------------------------------------------------------------------


def _walk(root: Any) -> list[Any]:
    """The graph's nodes from ``root`` along ``next_functions``, each once (explicit stack: deep
    graphs must not hit the recursion limit)."""
    order: list[Any] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append(fn)
        for nxt, _ in reversed(getattr(fn, "next_functions", ())):
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return order


_HOOK_STATE = ("_hooked", "_pre_hooks", "_post_hooks")


def _hook(fn: Any, pre: Callable[..., Any], post: Callable[..., Any]) -> Callable[[], None]:
    """Register ``pre``/``post`` on ``fn``; the returned function removes them and puts back the
    node's hook state as it was (so the engine does not keep looking at it afterwards)."""
    own = getattr(fn, "__dict__", None)
    before = set(own) if own is not None else set()
    handles = [fn.register_prehook(pre), fn.register_hook(post)]

    def remove() -> None:
        for handle in handles:
            handle.remove()
        if own is None:
            return
        for name in ("_pre_hooks", "_post_hooks"):
            if name not in before and not own.get(name, True):
                del own[name]
        still = any(own.get(k) for k in ("_pre_hooks", "_post_hooks", "_tensor_hooks", "_retained"))
        if "_hooked" not in before and "_hooked" in own and not still:
            del own["_hooked"]

    return remove


@dataclass
class _Flow:
    """What one backward did, as the temporary node hooks saw it."""

    into: dict[str, list[TensorInfo | None]] = field(default_factory=dict)  # node id -> grads of its outputs
    sent: dict[str, list[TensorInfo | None]] = field(default_factory=dict)  # node id -> grads to its inputs
    started: list[str] = field(default_factory=list)
    error: RuntimeError | None = None


class _Capture:
    def __init__(self, params: Any) -> None:
        if params is None:
            named: dict[str, Any] = {}
        elif isinstance(params, dict):
            named = params
        else:
            named = dict(params)  # e.g. model.named_parameters()
        if not all(_is_tensor(p) for p in named.values()):
            raise TypeError("capture_lifecycle: params must map names to tensors")
        self.names = {id(v): k for k, v in named.items()}
        self.keep: list[Any] = []  # what the ids below are taken from stays alive during the capture
        self.node_ids: dict[int, str] = {}
        self.counts: dict[int, int] = {}  # graph -> nodes named so far
        self.leaf_ids: dict[int, str] = {}
        self.leaves: dict[str, Any] = {}  # leaf id -> the leaf tensor
        self.saved_meta: dict[tuple[str, str], tuple[tuple[int, ...], str, int, int]] = {}

    def node_id(self, fn: Any, graph: int) -> str:
        ident = self.node_ids.get(id(fn))
        if ident is None:
            k = self.counts.get(graph, 0)
            self.counts[graph] = k + 1
            ident = self.node_ids[id(fn)] = f"g{graph}n{k}"
            self.keep.append(fn)
        return ident

    def leaf_id(self, t: Any) -> str:
        ident = self.leaf_ids.get(id(t))
        if ident is None:
            ident = self.leaf_ids[id(t)] = f"leaf{len(self.leaf_ids)}"
            self.leaves[ident] = t
        return ident

    def flow(self, nodes: list[Any], graph: int, run: Callable[[], None], catch: bool) -> _Flow:
        """Run ``run`` (a backward) with a pre- and post-hook on every node of the graph, recording
        the gradients that flow; the hooks are removed afterwards, whatever happens."""
        flow = _Flow()
        removers = []
        try:
            for fn in nodes:
                ident = self.node_id(fn, graph)

                def pre(grad_outputs: Any, ident: str = ident) -> None:
                    flow.started.append(ident)

                def post(grad_inputs: Any, grad_outputs: Any, ident: str = ident) -> None:
                    flow.into[ident] = [_info(g) for g in grad_outputs]
                    flow.sent[ident] = [_info(g) for g in grad_inputs]

                removers.append(_hook(fn, pre, post))
            try:
                run()
            except RuntimeError as exc:
                if not catch:
                    raise
                # without its traceback: the frames it holds refer back to ``flow`` (a cycle
                # that would keep the whole graph alive until a full collection)
                flow.error = exc.with_traceback(None)
        finally:
            for remove in removers:
                remove()
        return flow

    def snapshot(self, index: int, kind: str, title: str, note: str, retained: bool, loss: Any, graph: int,
                 flow: _Flow | None = None) -> Beat:
        root = loss.grad_fn
        nodes = _walk(root)
        infos: list[NodeInfo] = []
        leaves: list[LeafInfo] = []
        forward: list[Edge] = []
        gradient: list[Edge] = []
        held: dict[int, int] = {}  # saved array -> bytes, each array once
        freed: dict[int, int] = {}  # freed saved array -> bytes, each array once
        out_id = f"g{graph}out"
        root_id = self.node_id(root, graph)
        forward.append(Edge(root_id, out_id, "forward"))
        for fn in nodes:
            ident = self.node_id(fn, graph)
            shape = getattr(fn, "_shape", None)
            dtype = getattr(fn, "_dtype", None)
            info = NodeInfo(ident, type(fn).__name__, None if shape is None else tuple(int(s) for s in shape),
                            None if dtype is None else str(np.dtype(dtype)), is_released(fn))
            for name, value in saved_attributes(fn).items():
                key = (ident, name)
                if value is FREED_VALUE:
                    meta = self.saved_meta.get(key)
                    if meta is not None:  # (a slot never filled, for an input needing no grad, is left out)
                        shp, dt, nbytes, array_id = meta
                        info.saved.append(SavedInfo(name, shp, dt, nbytes, "", True))
                        freed[array_id] = max(freed.get(array_id, 0), nbytes)
                elif _is_tensor(value):
                    a = _data(value)
                    t = tensor_info(a)
                    base = a
                    while isinstance(base.base, np.ndarray):  # a view's storage is its base's
                        base = base.base
                    self.keep.append(base)
                    self.saved_meta[key] = (t.shape, t.dtype, t.nbytes, id(base))
                    held[id(base)] = max(held.get(id(base), 0), t.nbytes)
                    info.saved.append(SavedInfo(name, t.shape, t.dtype, t.nbytes, t.preview, False))
                elif value is not None:
                    text = repr(value) if isinstance(value, (tuple, list)) else str(value)
                    info.attrs[name] = text if len(text) <= 60 else text[:57] + "..."
            if flow is not None:
                info.grad = flow.into.get(ident)
                for i, g in enumerate(flow.sent.get(ident, ())):
                    nxt = fn.next_functions[i][0] if i < len(fn.next_functions) else None
                    if g is not None and nxt is not None:
                        gradient.append(Edge(ident, self.node_id(nxt, graph), "gradient", i, g))
            for i, (nxt, nr) in enumerate(getattr(fn, "next_functions", ())):
                if nxt is not None:
                    forward.append(Edge(self.node_id(nxt, graph), ident, "forward", i))
                    in_shape, in_dtype = _output_meta(nxt, nr)
                    info.inputs.append(InputInfo(self.node_id(nxt, graph), in_shape, in_dtype))
                else:
                    info.inputs.append(InputInfo(None, None, None))
            variable = getattr(fn, "variable", None)
            if variable is not None:
                leaf = self.leaf_id(variable)
                info.leaf = leaf
                a = _data(variable)
                leaves.append(LeafInfo(leaf, self.names.get(id(variable), ""), tuple(int(s) for s in a.shape),
                                       str(a.dtype), ident, _info(variable.grad)))
                forward.append(Edge(leaf, ident, "forward"))
                if flow is not None and flow.into.get(ident, [None])[0] is not None:
                    gradient.append(Edge(ident, leaf, "gradient", 0, flow.into[ident][0]))
            infos.append(info)
        if flow is not None and flow.into.get(root_id):
            gradient.insert(0, Edge(out_id, root_id, "gradient", 0, flow.into[root_id][0]))
        output = OutputInfo(out_id, self.names.get(id(loss), "loss"), tensor_info(loss), root_id)
        error_node = None
        if flow is not None and flow.error is not None:
            unfinished = [n for n in flow.started if n not in flow.into]
            error_node = unfinished[-1] if unfinished else None
        return Beat(index, kind, title, note, retained, infos, leaves, output, forward, gradient,
                    None if flow is None or flow.error is None else str(flow.error), error_node,
                    sum(held.values()), sum(n for a, n in freed.items() if a not in held))


def _output_meta(fn: Any, nr: int) -> tuple[tuple[int, ...] | None, str | None]:
    """The shape and dtype of output ``nr`` of ``fn`` (None, None when the node does not say)."""
    shape, dtype = getattr(fn, "_shape", None), getattr(fn, "_dtype", None)
    if shape is None:
        meta = getattr(fn, "_output_meta", ())
        if nr >= len(meta):
            return None, None
        shape, dtype = meta[nr]
    return tuple(int(s) for s in shape), None if dtype is None else str(np.dtype(dtype))


def _bytes(n: int) -> str:
    return f"{n:,} B" if n < 10_000 else f"{n / 1024:,.1f} KiB" if n < 10_000_000 else f"{n / 2**20:,.1f} MiB"


def capture_lifecycle(forward: Callable[[], Any] | Tensor, params: dict[str, Any] | Iterable[tuple[str, Any]] | None = None,
                      gradient: Any = None, retain_graph: bool = False) -> list[Beat]:
    """Run a graph through its four beats and describe each one (see the module docstring).

    ``forward`` is a function of no arguments that returns the loss; it is called twice: for beat
    1 and again for beat 4. In between, ``loss.backward(gradient, retain_graph=retain_graph)`` runs
    twice on the first graph (beats 2 and 3), and beat 4 runs one backward through the fresh graph
    (``grad_accumulated``), all for real: the leaves' ``.grad`` end up holding the sum of every
    pass that ran, as a training loop without ``zero_grad()`` would leave them. ``forward`` may
    also be a loss tensor already built: then there is no beat 4 (three beats are returned).
    ``params`` names leaves (a ``{name: tensor}`` dict or ``model.named_parameters()``).

    The gradients of beats 2 and 3 are recorded by node hooks registered only while those
    backward passes run; no hook stays behind.

    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> beats = capture_lifecycle(lambda: (w * w).sum(), params={'w': w})
    >>> [b.kind for b in beats]
    ['forward', 'backward', 'second_backward', 'new_forward']
    >>> beats[0].saved_bytes, beats[1].saved_bytes, beats[1].freed_bytes
    (8, 0, 8)
    >>> beats[1].leaf('w').grad.preview, beats[3].leaf('w').grad_accumulated.preview
    ('[2, 4]', '[4, 8]')
    >>> beats[2].error.startswith('Trying to backward through the graph a second time')
    True
    """
    if _is_tensor(forward):
        return _capture("capture_lifecycle", forward, None, params, gradient, retain_graph)
    if not callable(forward):
        raise TypeError("capture_lifecycle: forward must be a function of no arguments returning the loss, or a "
                        f"loss tensor, not {type(forward).__name__}")
    return _capture("capture_lifecycle", None, forward, params, gradient, retain_graph)


def _capture(who: str, loss: Any, forward: Callable[[], Any] | None, params: Any, gradient: Any,
             retain_graph: bool) -> list[Beat]:
    """The beats of ``loss``'s graph (built by ``forward()`` when None); beat 4 calls ``forward``
    again, so there is none without it."""
    cap = _Capture(params)
    if loss is None:
        assert forward is not None
        loss = _check_loss(who, forward())
    else:
        _check_loss(who, loss)
    retain = bool(retain_graph)
    nodes = _walk(loss.grad_fn)
    beats = [cap.snapshot(1, "forward", "", "", True, loss, 1)]
    first = cap.flow(nodes, 1, lambda: loss.backward(gradient, retain_graph=retain), catch=False)
    beats.append(cap.snapshot(2, "backward", "", "", retain, loss, 1, first))
    second = cap.flow(nodes, 1, lambda: loss.backward(gradient, retain_graph=retain), catch=True)
    beats.append(cap.snapshot(3, "second_backward", "", "", retain, loss, 1, second))
    if forward is not None:
        fresh = _check_loss(who, forward())
        beat = cap.snapshot(4, "new_forward", "", "", True, fresh, 2)
        fresh.backward(gradient)
        for leaf in beat.leaves:
            leaf.grad_accumulated = _info(cap.leaves[leaf.id].grad)
        beats.append(beat)
    _word(beats)
    return beats


def _check_loss(who: str, loss: Any) -> Any:
    if not _is_tensor(loss) or loss.grad_fn is None:
        raise RuntimeError(f"{who}: loss must be a tensor with a grad_fn (built with grad mode on)")
    return loss


def _word(beats: list[Beat]) -> None:
    """Titles and notes, from what the beats recorded."""
    one, two, three = beats[0], beats[1], beats[2]
    one.title = f"1. forward: graph built, saved tensors held ({_bytes(one.saved_bytes)})"
    one.note = f"{len(one.nodes)} nodes; each op saved what its backward needs"
    released = sum(n.released for n in two.nodes)
    if two.retained:
        two.title = "2. backward(retain_graph=True): graph kept, .grad filled"
        two.note = f"saved tensors kept ({_bytes(two.saved_bytes)}): backward() may run again"
    else:
        two.title = f"2. backward(): graph freed ({_bytes(two.freed_bytes)}), .grad filled"
        two.note = f"{released} of {len(two.nodes)} nodes released: a second backward() would raise"
    if three.error is not None:
        three.title = "3. backward() again: RuntimeError"
        three.note = "the graph was consumed: holding the loss does not bring it back"
        before = {leaf.id: leaf.grad for leaf in two.leaves}
        changed = [leaf.name or leaf.id for leaf in three.leaves if leaf.grad != before.get(leaf.id)]
        if changed:  # leaves the pass reached before it failed got their gradient again
            three.note += f"\n(yet {', '.join(changed)} reached before the error: .grad added again)"
    elif three.retained:
        three.title = "3. backward() again: runs, .grad accumulates (2×)"
        three.note = "retain_graph=True kept the saved tensors"
    else:
        three.title = "3. backward() again: runs (nothing was saved, nothing freed)"
        three.note = "no node of this graph saved a tensor"
    if len(beats) > 3:
        four = beats[3]
        four.title = "4. new forward: a fresh graph, .grad kept"
        four.note = "the leaves outlive the graph; .grad accumulates until zero_grad()"


# -- drawing ------------------------------------------------------------------------------------

FADED = RELEASED_STYLE
GRADIENT_EDGE = dict(style="dashed", color="red3", fontcolor="red3", fontsize="9")
FORWARD_EDGE = dict(color="grey25")


def _shape_text(shape: tuple[int, ...] | None) -> str:
    return "(?)" if shape is None else "(" + ", ".join(str(s) for s in shape) + ")"


def _grad_text(g: TensorInfo | None) -> str:
    if g is None:
        return "None"
    return f"‖g‖={g.norm:.3g}" if g.norm is not None else g.preview


def _draw_beat(dot: Any, beat: Beat, prefix: str, previous: Beat | None) -> None:
    with dot.subgraph(name=f"cluster_{prefix}") as sub:
        sub.attr(label=beat.title + "\n" + beat.note, fontname="monospace", fontsize="12", style="rounded",
                 color="grey60", labeljust="l")
        lines = _Lines(sub.body)

        def nid(ident: str) -> str:
            return f"{prefix}_{ident}"

        out = beat.output
        lines.node(nid(out.id), f"{out.name}\n {_shape_text(out.value.shape)}\n = {out.value.preview}",
                   fillcolor="darkolivegreen1")
        for node in beat.nodes:
            attrs = dict(FADED) if node.released else {}
            if node.id == beat.error_node:
                attrs.update(color="red3", penwidth="2")
            lines.node(nid(node.id), node.op, **attrs)
            for s in node.saved:
                sid = nid(f"{node.id}_s_{s.name}")
                text = f"{s.name} {_shape_text(s.shape)}\n {_bytes(s.nbytes)}"
                if s.freed:
                    lines.node(sid, text + "\n[freed]", **FADED)
                    lines.edge(nid(node.id), sid, dir="none", color="grey70", style="dashed")
                else:
                    lines.node(sid, text, fillcolor="orange")
                    lines.edge(nid(node.id), sid, dir="none", color="orange3")
        for leaf in beat.leaves:
            text = f"{leaf.name}\n {_shape_text(leaf.shape)}"
            if beat.index == 4:
                text += "\n .grad kept: " + _grad_text(leaf.grad)
                if leaf.grad_accumulated is not None:
                    text += "\n after its backward: " + _grad_text(leaf.grad_accumulated)
            elif leaf.grad is not None:
                before = None
                if previous is not None:
                    before = next((p.grad for p in previous.leaves if p.id == leaf.id), None)
                how = "set" if before is None else "unchanged" if before == leaf.grad else "accumulated"
                text += f"\n .grad {how}: {_grad_text(leaf.grad)}\n {leaf.grad.preview}"
            else:
                text += "\n .grad None"
            lines.node(nid(leaf.id), text, fillcolor="lightblue")
        for e in beat.forward_edges:
            lines.edge(nid(e.src), nid(e.dst), **FORWARD_EDGE)
        for e in beat.gradient_edges:
            # drawn against the forward edge (dir=back) so the layout stays the forward graph's
            lines.edge(nid(e.dst), nid(e.src), dir="back", label=_grad_text(e.grad), **GRADIENT_EDGE)
        if beat.error is not None:
            text = "\n".join(textwrap.wrap("RuntimeError: " + beat.error, 46))
            lines.node(nid("error"), text, shape="note", fillcolor="mistyrose", color="red3", fontcolor="red4")
            anchor = beat.error_node or out.id
            lines.edge(nid("error"), nid(anchor), color="red3", style="bold", arrowhead="tee")


def _draw_missing_beat(dot: Any) -> None:
    with dot.subgraph(name="cluster_d") as sub:
        sub.attr(label="4. new forward: a fresh graph", fontname="monospace", fontsize="12", style="rounded",
                 color="grey60", labeljust="l")
        _Lines(sub.body).node("d_note", "a loss tensor cannot be built again: pass forward=\n"
                              "(a function that builds the loss) to draw this beat,\n"
                              "or a function in place of the loss:\n"
                              "make_dot_lifecycle(lambda: model(x).sum())",
                              shape="note", fillcolor="white")


def _draw_legend(dot: Any) -> None:
    with dot.subgraph(name="cluster_legend") as sub:
        sub.attr(label="legend", fontname="monospace", fontsize="11", style="rounded", color="grey80")
        lines = _Lines(sub.body)
        lines.node("legend_node", "backward node (grad_fn)")
        lines.node("legend_faded", "released node:\nits saved tensors freed", **FADED)
        lines.node("legend_saved", "saved tensor (bytes)", fillcolor="orange")
        lines.node("legend_leaf", "leaf and its .grad", fillcolor="lightblue")
        chain = ["legend_node", "legend_faded", "legend_saved", "legend_leaf"]
        # edge samples: two invisible ends on one rank, so the sample edge is horizontal
        for key, text, attrs, direction in (("f", "forward edge (solid)", FORWARD_EDGE, "forward"),
                                             ("g", "gradient flow (dashed)", GRADIENT_EDGE, "back")):
            a, b = f"legend_{key}0", f"legend_{key}1"
            with sub.subgraph() as row:
                row.attr(rank="same")
                _Lines(row.body).node(a, text, shape="plaintext", style="", fontsize="9")
                _Lines(row.body).node(b, "", shape="point", width="0.01", color="white")
            lines.edge(a, b, dir=direction, minlen="2", **attrs)
            chain.append(a)
        for a, b in zip(chain, chain[1:], strict=False):
            lines.edge(a, b, style="invis")


def make_dot_lifecycle(loss: Any, params: dict[str, Any] | Iterable[tuple[str, Any]] | None = None, gradient: Any = None,
                       retain_graph: bool | None = None, *, forward: Callable[[], Any] | None = None) -> Any:
    """Draw the four beats of a graph's life side by side, running them (``capture_lifecycle``).

    1. after forward: the graph built (grey backward nodes, light-blue leaves under their
       ``AccumulateGrad``), every tensor a node saved in orange with its bytes;
    2. after ``backward()``: each released node faded (grey, dashed border), its saved tensors
       marked ``[freed]``, the gradient flow drawn as dashed red edges labelled with the norm of
       the gradient they carried, the leaves' ``.grad`` shown;
    3. a second ``backward()``: the ``RuntimeError`` it really raised, pinned to the node that
       raised it (with ``retain_graph=True``: the second pass running, ``.grad`` accumulated);
    4. a new forward: a fresh graph, the leaves keeping their ``.grad`` (and what it became after
       a backward through the fresh graph).
    Forward edges are solid, gradient edges dashed (a legend says so).

    ``loss`` is a function of no arguments returning the loss (called twice: beats 1 and 4), or a
    loss tensor already built: then beat 4 is drawn only if ``forward`` (such a function) is
    given, and is otherwise a note saying so. Either way this runs the backward passes for real:
    the leaves' ``.grad`` accumulate as ``capture_lifecycle`` describes. ``params`` names leaves
    as in ``make_dot``. Returns a ``graphviz.Digraph``.

    >>> import retrograd as rg
    >>> w = rg.ones(3, requires_grad=True)
    >>> dot = make_dot_lifecycle(lambda: (w * w).exp().sum(), params={'w': w})
    >>> '[freed]' in dot.source, 'Trying to backward' in dot.source, w.grad is not None
    (True, True, True)
    """
    if forward is not None and not callable(forward):
        raise TypeError("make_dot_lifecycle: forward must be a function of no arguments returning the loss")
    if _is_tensor(loss):
        beats = _capture("make_dot_lifecycle", loss, forward, params, gradient, bool(retain_graph))
    elif callable(loss):
        beats = _capture("make_dot_lifecycle", None, loss, params, gradient, bool(retain_graph))
    else:
        raise TypeError("make_dot_lifecycle: loss must be a loss tensor or a function of no arguments returning one")
    dot = _digraph(node_attr=dict(_NODE_ATTR), graph_attr=dict(size="12,12", rankdir="TB", newrank="true"))
    _draw_legend(dot)
    for i, (beat, prefix) in enumerate(zip(beats, "abcd", strict=False)):
        _draw_beat(dot, beat, prefix, beats[i - 1] if i else None)
    if len(beats) == 3:
        _draw_missing_beat(dot)
    resize_graph(dot)
    return dot
