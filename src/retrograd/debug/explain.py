"""Why is my gradient None (or zero)? ``explain_grad`` and ``record_sites``.

``explain_grad(tensor, root=None)`` reads what the graph and the tensor already hold (grad_fn,
requires_grad, the released-graph markers, saved ReLU masks) and the few notes retrograd leaves
on the paths that cut a graph (``detach()``, ``.data``, ``torch.tensor(t)``, ``zero_grad()``),
and names the cause. Inside ``record_sites()`` retrograd also remembers where (file:line of your
code) tensors and nodes were made, so the explanation can point at the line.

Costs: nothing on an op's path while no ``record_sites()`` is open. Opening one turns on the flag
the recording paths already read per node (anomaly mode's "remember the creation stack") and
swaps two helpers of ``ops/op.py`` for recording ones, so untracked op outputs (made under
``no_grad``, by ``argmax`` or a comparison) remember their op, inputs and line; closing it swaps
them back.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd import anomaly_mode as _anomaly
from ..autograd.anomaly_mode import ROUND_TRIPS, SITE_RECORDERS, Origin, grad_mode_name, input_ref, user_site
from ..autograd.graph import AccumulateGrad, Node, is_released, peek_saved
from ..ops import op as _op
from ..tensor import Tensor

__all__ = ["Explanation", "explain_grad", "record_sites"]

# Causes, as ``Explanation.cause`` names them.
CAUSES = (
    "ok", "integer_dtype", "inference_mode", "no_grad", "detach", "data", "round_trip", "tensor_copy",
    "requires_grad_false", "non_leaf", "not_reachable", "backward_not_run", "not_accumulated", "zero_grad",
    "zero_gradient", "non_differentiable",
)

# -- record_sites ---------------------------------------------------------------------------------

_LOCK = __import__("_thread").RLock()
_ORIGINAL: dict[str, Any] = {}


def _recording_new(cls: Any) -> Any:
    """``object.__new__`` as the recording paths call it, while ``record_sites()`` is open: a new
    op output remembers its op, inputs, grad mode and the user's line (the caller's frame is the
    recording path, whose locals hold the op and its inputs)."""
    obj = object.__new__(cls)
    if cls is Tensor:
        local = sys._getframe(1).f_locals
        op = local.get("op")
        inputs = local.get("inputs")
        if inputs is None:
            inputs = (local["a"], local.get("b")) if "a" in local else (local.get("x"),)
        obj._origin = Origin("op", user_site(), getattr(op, "name", "?"), grad_mode_name(),
                             tuple(input_ref(t) for t in inputs if isinstance(t, Tensor)))
    return obj


def _recording_remember_creation(node: Any) -> None:
    """``remember_creation`` while ``record_sites()`` is open: also keep (weakly) the node's inputs
    that did not require grad, to tell which op cut a path to them."""
    _anomaly.remember_creation(node)
    local = sys._getframe(1).f_locals
    inputs = local.get("inputs")
    if inputs is None:
        inputs = (local.get("a"), local.get("b"))
    untracked = tuple(input_ref(t) for t in inputs if isinstance(t, Tensor) and not t._requires_grad)
    if untracked:
        node.metadata["untracked_inputs_"] = untracked


@contextmanager
def record_sites() -> Iterator[None]:
    """Remember where tensors and nodes are made (file:line of your code) while open, so that
    ``explain_grad`` can name the line that cut a gradient. Process-wide, like anomaly mode;
    nestable. Nodes made meanwhile keep ``metadata["traceback_"]`` (as under anomaly mode).

    >>> import retrograd as rg
    >>> from retrograd.debug import explain_grad, record_sites
    >>> w = rg.ones(2, requires_grad=True)
    >>> with record_sites():
    ...     h = w.detach()
    >>> e = explain_grad(h)
    >>> e.cause, e.line is not None
    ('detach', True)
    """
    with _LOCK:
        SITE_RECORDERS[0] += 1
        if SITE_RECORDERS[0] == 1:
            _ORIGINAL["_new"], _ORIGINAL["remember_creation"] = _op._new, _op.remember_creation
            _op._new = _recording_new  # type: ignore[assignment]
            _op.remember_creation = _recording_remember_creation  # type: ignore[assignment]
        _anomaly.sync_site_flag()
    try:
        yield
    finally:
        with _LOCK:
            SITE_RECORDERS[0] -= 1
            if SITE_RECORDERS[0] == 0:
                _op._new = _ORIGINAL.pop("_new")
                _op.remember_creation = _ORIGINAL.pop("remember_creation")
            _anomaly.sync_site_flag()


# -- the explanation ------------------------------------------------------------------------------

@dataclass
class Explanation:
    """Why a tensor's ``.grad`` is None or zero (or why it does not require grad); ``str()`` gives
    the text. ``cause`` is one of ``CAUSES``; ``site`` the file:line that did it when known
    (``line`` its number); ``cut_op`` the op that cut the path from ``root``; ``relus`` one dict
    per ReLU/threshold node on the path (``node``, ``site``, ``inactive`` fraction of outputs,
    ``dead_units`` fraction of units, ``released``); ``backward_site`` where the backward that
    freed ``root``'s graph ran."""

    tensor: str
    cause: str
    summary: str
    site: str | None = None
    details: list[str] = field(default_factory=list)
    cut_op: str | None = None
    relus: list[dict[str, Any]] = field(default_factory=list)
    backward_site: str | None = None
    fix: str | None = None

    @property
    def line(self) -> int | None:
        """The line number of ``site``."""
        return int(self.site.rsplit(":", 1)[1]) if self.site else None

    @property
    def ok(self) -> bool:
        return self.cause == "ok"

    def __str__(self) -> str:
        text = [f"{self.tensor}: {self.summary}"]
        if self.site:
            text.append(f"  where: {self.site}")
        text += [f"  - {d}" for d in self.details]
        if self.fix:
            text.append(f"  fix: {self.fix}")
        if self.site is None and self.cause in _SITE_CAUSES and not SITE_RECORDERS[0]:
            text.append("  (run the code inside retrograd.debug.record_sites() to see the file:line)")
        return "\n".join(text)


_SITE_CAUSES = {"no_grad", "detach", "data", "round_trip", "tensor_copy", "requires_grad_false", "zero_grad",
                "integer_dtype", "inference_mode"}


def _describe(t: Tensor) -> str:
    kind = "leaf" if t._grad_fn is None else f"non-leaf ({t._grad_fn.name()})"
    return f"{kind} tensor of shape {list(t._data.shape)} and dtype {t.dtype}"


def _fmt(site: tuple[str, int] | None) -> str | None:
    return f"{site[0]}:{site[1]}" if site else None


_FRAME = re.compile(r'File "(.*)", line (\d+)')


def node_site(node: Any) -> str | None:
    """file:line where ``node`` was created, when it was recorded (``record_sites``, anomaly mode)."""
    meta = getattr(node, "_metadata", None)
    stack = meta.get("traceback_") if meta else None
    if not stack:
        return None
    found = _FRAME.search(stack[-1])
    return f"{found.group(1)}:{found.group(2)}" if found else None


def _graph(root: Tensor) -> tuple[list[Node], dict[Node, list[Node]]]:
    """Every node reachable from ``root`` (iteratively) and each one's parents."""
    start = root._grad_fn
    if start is None:
        ref = root._accumulator
        start = ref() if ref is not None else None
    if start is None:
        return [], {}
    order: list[Node] = [start]
    parents: dict[Node, list[Node]] = {start: []}
    stack = [start]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            if nxt not in parents:
                parents[nxt] = [fn]
                order.append(nxt)
                stack.append(nxt)
            else:
                parents[nxt].append(fn)
    return order, parents


def _target_node(t: Tensor) -> Node | None:
    if t._grad_fn is not None:
        return t._grad_fn  # type: ignore[no-any-return]
    ref = t._accumulator
    return ref() if ref is not None else None


def _reaches(start: Any, target: Any, memo: dict[Any, bool]) -> bool:
    """Whether ``target`` is ``start`` or reachable from it (iterative, memoised)."""
    if target is None or start is None:
        return False
    seen, stack = {start}, [start]
    while stack:
        fn = stack.pop()
        known = memo.get(fn)
        if known is not None:
            if known:
                return True
            continue
        if fn is target:
            memo[start] = True
            return True
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    memo[start] = False
    return False


def _connects(ref: tuple[Any, ...], tensor: Tensor, target: Any, memo: dict[Any, bool]) -> bool:
    """Whether an input recorded as ``ref`` is ``tensor`` or was computed from it with history."""
    obj = ref[0]()
    if obj is tensor:
        return True
    fn = ref[2]() if ref[2] is not None else None
    return fn is not None and _reaches(fn, target, memo)


def _find_cut(origins: list[Any], tensor: Tensor) -> tuple[Origin, str] | None:
    """Walk the recorded origins (breadth first) back towards ``tensor``: the first origin one of
    whose inputs is ``tensor`` or comes from it with history, while its own output is untracked,
    is where the path was cut. Returns it and why."""
    target = _target_node(tensor)
    memo: dict[Any, bool] = {}
    seen: set[int] = set()
    queue = [o for o in origins if isinstance(o, Origin)]
    while queue:
        o = queue.pop(0)
        if id(o) in seen:
            continue
        seen.add(id(o))
        for ref in o.inputs:
            if _connects(ref, tensor, target, memo):
                return o, _cut_reason(o)
        queue += [ref[1] for ref in o.inputs if isinstance(ref[1], Origin)]
    return None


def _cut_reason(o: Origin) -> str:
    if o.kind == "op":
        if o.grad_mode != "grad":
            return "inference_mode" if o.grad_mode == "inference" else "no_grad"
        return "non_differentiable"
    return o.kind


_CUT_TEXT = {
    "detach": "detach() cut it from the graph",
    "data": ".data cut it from the graph",
    "tensor_copy": "torch.tensor(t) copied it without its history",
    "no_grad": "it was computed under no_grad()",
    "inference_mode": "it was computed under inference_mode()",
    "non_differentiable": "the op's output is not differentiable (an integer/bool result: argmax, a comparison...)",
}


def _round_trip(t: Tensor) -> tuple[str, tuple[str, int] | None, Any] | None:
    """The latest recorded ``.item()``/``.numpy()``/``.tolist()`` whose value ``t`` was built from."""
    data = t._data
    for what, site, source, value in reversed(ROUND_TRIPS):
        if isinstance(value, weakref.ref):  # a numpy() array, held weakly
            value = value()
            if value is None:
                continue
        try:
            if isinstance(value, np.ndarray):
                same = np.shares_memory(data, value) or (value.shape == data.shape and np.array_equal(value, data))
            else:
                same = np.array_equal(np.asarray(value), data.reshape(np.shape(value)) if data.size else data)
        except (ValueError, TypeError):
            same = False
        if same:
            return what, site, source()
    return None


def explain_grad(tensor: Tensor, root: Tensor | None = None) -> Explanation:
    """Explain why ``tensor.grad`` is None or zero, or why ``tensor`` does not require grad, naming
    the cause (and the file:line, for what ``record_sites()`` recorded). With ``root`` (the loss)
    it also checks that ``tensor`` is reachable from it (else which op cut the path), whether a
    backward ran on its graph, and the ReLUs on the path (fraction of dead units).

    >>> import retrograd as rg
    >>> from retrograd.debug import explain_grad
    >>> w = rg.ones(3, requires_grad=True)
    >>> loss = (w * 2).sum()
    >>> explain_grad(w, root=loss).cause
    'backward_not_run'
    >>> loss.backward()
    >>> print(explain_grad(w, root=loss))  # doctest: +ELLIPSIS
    leaf tensor of shape [3] and dtype torch.float32: nothing wrong: its gradient is ...
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"explain_grad() expects a Tensor, got {type(tensor).__name__}")
    if root is not None and not isinstance(root, Tensor):
        raise TypeError(f"explain_grad() expects root to be a Tensor, got {type(root).__name__}")
    desc = _describe(tensor)
    if tensor._data.dtype.kind not in "fcV":
        return _integer(tensor, desc)
    if not tensor._requires_grad:
        return _untracked(tensor, desc, root)
    nodes, parents = _graph(root) if root is not None else ([], {})
    target = _target_node(tensor)
    if tensor._grad_fn is not None and not tensor.retains_grad:
        e = Explanation(desc, "non_leaf", "it is not a leaf (it has a grad_fn), and backward fills .grad only for "
                        "leaves unless retain_grad() was called on it before backward",
                        site=node_site(tensor._grad_fn),
                        fix="call t.retain_grad() before backward(), or get it with torch.autograd.grad(loss, t)")
        if root is not None and target not in parents:
            e.details.append("it is not reachable from root either: no gradient would reach it")
        return e
    if root is not None and target not in parents:
        return _not_reachable(tensor, desc, root, nodes, parents)
    backward_site = _backward_site(nodes)
    grad = tensor._grad
    reset = tensor._grad_reset
    if grad is None:
        if root is not None and backward_site is None and not _retained_run(nodes):
            e = Explanation(desc, "backward_not_run", "it is part of root's graph, but no backward has run on that "
                            "graph yet", fix="call root.backward() (backward fills .grad; autograd.grad does not)")
            if reset is not None:
                e.details.append(_reset_text(reset))
            _relu_report(e, tensor, nodes, parents, target)
            return e
        if reset is not None and reset[1] is None:
            return Explanation(desc, "zero_grad", "its .grad was reset to None by zero_grad() (set_to_none=True) and "
                               "no backward has reached it since", site=_fmt(reset[0].site) if reset[0] else None,
                               backward_site=backward_site)
        if root is not None:
            return Explanation(desc, "not_accumulated", "a backward ran on root's graph"
                               + (f" (at {backward_site})" if backward_site else "")
                               + " but nothing was accumulated into its .grad: torch.autograd.grad() returns "
                               "gradients instead, and backward(inputs=...) fills only the inputs named",
                               backward_site=backward_site)
        return Explanation(desc, "backward_not_run", "no backward has reached it: no backward() ran on a graph that "
                           "uses it (pass root=loss to check the graph you ran it on)")
    if not grad._data.any():
        if reset is not None and reset[1] is not None and grad._counter().value == reset[1]:
            return Explanation(desc, "zero_grad", "its .grad was zeroed in place by zero_grad(set_to_none=False) and "
                               "no backward has added to it since", site=_fmt(reset[0].site) if reset[0] else None)
        e = Explanation(desc, "zero_gradient", "a gradient reached it, but it is exactly zero", backward_site=backward_site)
        if root is None:
            e.details.append("pass root=loss to look for dead ReLUs on the path")
        else:
            _relu_report(e, tensor, nodes, parents, target)
        return e
    return Explanation(desc, "ok", f"nothing wrong: its gradient is there (norm {float(np.linalg.norm(grad._data)):.4g})",
                       backward_site=backward_site)


def _reset_text(reset: tuple[Any, Any]) -> str:
    where = f" at {_fmt(reset[0].site)}" if reset[0] is not None and reset[0].site else ""
    return f"its .grad was also reset by zero_grad(){where}"


def _backward_site(nodes: list[Node]) -> str | None:
    """Where the backward that released some node of the graph ran ("?" if unknown)."""
    for fn in nodes:
        if is_released(fn):
            return getattr(fn._saved, "site", None) or "?"
    return None


def _retained_run(nodes: list[Node]) -> bool:
    """Whether some leaf of the graph has a gradient: a backward ran with retain_graph=True."""
    return any(type(fn) is AccumulateGrad and fn.variable._grad is not None for fn in nodes)  # type: ignore[attr-defined]


def _integer(tensor: Tensor, desc: str) -> Explanation:
    e = Explanation(desc, "integer_dtype", "only floating point and complex tensors can require gradients; "
                    "an integer or bool tensor never has a .grad")
    o = tensor._origin
    if isinstance(o, Origin):
        e.site = _fmt(o.site)
        if o.kind == "op":
            e.cut_op = o.detail
            e.details.append(f"it was made by {o.detail}" + (
                ", from a tensor that requires grad: that op's output is not differentiable"
                if any(ref[3] for ref in o.inputs) else ""))
    return e


def _untracked(tensor: Tensor, desc: str, root: Tensor | None) -> Explanation:
    o = tensor._origin
    site = _fmt(o.site) if isinstance(o, Origin) else None
    if tensor._is_inference:
        return Explanation(desc, "inference_mode", "it was created under inference_mode(): an inference tensor never "
                           "requires grad", site=site, fix="create it outside inference_mode() (no_grad() if it "
                           "must be untracked but later used in a graph)")
    kind = o.kind if isinstance(o, Origin) else o
    if kind in ("detach", "data", "tensor_copy"):
        what = {"detach": "detach()", "data": ".data", "tensor_copy": "torch.tensor(t) (a copy without history)"}[kind]
        e = Explanation(desc, kind, f"it was made by {what}, which cuts it from the graph: it does not require grad",
                        site=site, fix={"detach": "use the tensor itself where you need its gradient",
                                        "data": "use the tensor itself (not .data) where you need its gradient",
                                        "tensor_copy": "use t.clone() to copy with history"}[kind])
        if isinstance(o, Origin) and o.inputs:
            source = o.inputs[0]
            e.details.append("its source " + ("required grad" if source[3] else "did not require grad either"))
        return e
    if isinstance(o, Origin) and o.kind == "factory":
        # Only factories that take data can rebuild a value (zeros() equal to an item() is chance).
        trip = _round_trip(tensor) if o.detail in ("tensor", "as_tensor", "from_numpy") else None
        if trip is not None:
            what, trip_site, source = trip
            e = Explanation(desc, "round_trip", f"it was built ({o.detail}) from a value that left autograd through "
                            f"{what}: Python numbers and NumPy arrays carry no graph", site=site,
                            fix="keep the computation in tensors (no .item()/.numpy()/.tolist() on the path)")
            e.details.append(f"{what} was called" + (f" at {_fmt(trip_site)}" if trip_site else "")
                             + (f" on a {_describe(source)}" if source is not None else ""))
            return e
        return Explanation(desc, "requires_grad_false", f"it was created by {o.detail}() with requires_grad=False "
                           "(the default)", site=site, fix="pass requires_grad=True, or call t.requires_grad_()")
    if isinstance(o, Origin) and o.kind == "op":
        if o.grad_mode != "grad":
            mode = "inference_mode" if o.grad_mode == "inference" else "no_grad"
            return Explanation(desc, mode, f"it was computed ({o.detail}) under {mode}(), which records no graph",
                               site=site, cut_op=o.detail, fix=f"compute it outside {mode}()")
        cut = _first_cut(o)
        if cut is not None:
            c, reason = cut
            e = Explanation(desc, reason, f"it was computed ({o.detail}) from a tensor that was cut from the graph: "
                            f"{_CUT_TEXT.get(reason, reason)}", site=_fmt(c.site), cut_op=c.detail)
            if site:
                e.details.append(f"it was computed at {site}")
            return e
        return Explanation(desc, "requires_grad_false", f"it was computed ({o.detail}) only from tensors that do "
                           "not require grad", site=site)
    if tensor._creation_meta in ("no_grad", "inference"):
        return Explanation(desc, "no_grad", "it is a view made under no_grad(): it does not require grad")
    e = Explanation(desc, "requires_grad_false", "it is a leaf that does not require grad: created with "
                    "requires_grad=False (a factory's default) or computed under no_grad()",
                    fix="pass requires_grad=True at creation, or compute it outside no_grad()")
    if root is not None:
        nodes, _ = _graph(root)
        for fn in nodes:
            for value in _untracked_saved(fn):
                if value is not tensor and np.shares_memory(value._data, tensor._data):
                    e.details.append(f"root's graph uses an untracked alias of it in {fn.name()}")
                    break
    return e


def _first_cut(o: Origin) -> tuple[Origin, str] | None:
    """The nearest recorded ancestor of an untracked op output where tracking was lost: an op
    run under no_grad/inference_mode, detach/.data/torch.tensor(t), or a non-differentiable op on
    a tensor that required grad."""
    queue, seen = [o], set()
    while queue:
        cur = queue.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.kind in ("detach", "data", "tensor_copy"):
            return cur, cur.kind
        if cur.kind == "op" and any(ref[3] for ref in cur.inputs):
            return cur, _cut_reason(cur)
        if cur.kind == "op" and cur.grad_mode != "grad":
            return cur, _cut_reason(cur)
        queue += [ref[1] for ref in cur.inputs if isinstance(ref[1], Origin)]
    return None


def _untracked_saved(fn: Node) -> list[Tensor]:
    """The tensors a node saved that did not require grad (what an untracked input left in it)."""
    saved = fn._saved
    if not saved or is_released(fn):
        return []
    out = []
    for slot in saved:
        if slot is None:
            continue
        value = peek_saved(slot)
        if isinstance(value, Tensor) and not value._requires_grad:
            out.append(value)
    return out


def _not_reachable(tensor: Tensor, desc: str, root: Tensor, nodes: list[Node],
                   parents: dict[Node, list[Node]]) -> Explanation:
    e = Explanation(desc, "not_reachable", "it is not reachable from root: no path of grad_fn edges leads from root "
                    "to it, so no gradient can flow to it")
    if not nodes:
        e.details.append("root itself has no graph (it does not require grad)")
        o = root._origin
        cut = _first_cut(o) if isinstance(o, Origin) else None
        if cut is not None:
            e.cut_op, e.site = cut[0].detail, _fmt(cut[0].site)
            e.details.append(f"root was cut at {cut[0].detail}: {_CUT_TEXT.get(cut[1], cut[1])}")
        return e
    # Recorded untracked inputs of root's graph (record_sites), then what its nodes saved.
    origins = []
    for fn in nodes:
        meta = fn._metadata
        for ref in (meta.get("untracked_inputs_", ()) if meta else ()):
            if ref[1] is not None:
                origins.append(ref[1])
            else:
                obj = ref[0]()
                if obj is not None and obj._origin is not None:
                    origins.append(obj._origin)
    found = _find_cut(origins, tensor)
    if found is not None:
        o, reason = found
        e.cut_op, e.site = o.detail, _fmt(o.site)
        e.details.append(f"the path was cut by {o.detail}: {_CUT_TEXT.get(reason, reason)}")
        e.fix = {"detach": "use the tensor itself, not its detach()", "data": "use the tensor itself, not .data",
                 "no_grad": "compute that step outside no_grad()"}.get(reason)
        return e
    for fn in nodes:
        for value in _untracked_saved(fn):
            o = value._origin
            if np.shares_memory(value._data, tensor._data):
                e.cut_op = o if isinstance(o, str) else (o.detail if isinstance(o, Origin) else "an untracked copy")
                e.details.append(f"{fn.name()} uses an untracked alias of it ({e.cut_op}: detach(), .data or "
                                 ".numpy() share its memory without its history)")
                return e
    suspects = []
    for fn in nodes:
        if any(nxt is None for nxt, _ in fn.next_functions):
            kinds = sorted({str(v._data.dtype) for v in _untracked_saved(fn)})
            suspects.append(f"{fn.name()}" + (f" (untracked {', '.join(kinds)} input)" if kinds else ""))
    if suspects:
        e.details.append("nodes of root's graph that take untracked inputs (the cut is upstream of one of them): "
                         + ", ".join(suspects[:8]))
    e.details.append("typical cuts: argmax/argmin or a comparison (integer/bool results), detach()/.data, "
                     "an .item()/.numpy()/.tolist() round trip, no_grad(); record_sites() names the one")
    return e


_RELU_NODES = ("ReluBackward0", "ReluBackward1", "ThresholdBackward0", "ThresholdBackward1")


def _relu_report(e: Explanation, tensor: Tensor, nodes: list[Node], parents: dict[Node, list[Node]],
                 target: Any) -> None:
    """The ReLU/threshold nodes on a path from root to ``tensor``, with their masks' dead fraction."""
    if target is None or target not in parents:
        return
    on_path, stack = {target}, [target]  # the nodes from which target is reachable
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in on_path:
                on_path.add(parent)
                stack.append(parent)
    for fn in nodes:
        if fn not in on_path or type(fn).__name__ not in _RELU_NODES:
            continue
        info: dict[str, Any] = {"node": fn.name(), "site": node_site(fn), "released": is_released(fn)}
        mask = None if info["released"] else _inactive_mask(fn)
        if mask is not None:
            info["inactive"] = float(mask.mean()) if mask.size else 0.0
            units = mask.reshape(mask.shape[0], mask.shape[1], -1).all(axis=(0, 2)) if mask.ndim >= 2 else mask
            info["dead_units"] = float(units.mean()) if units.size else 0.0
            info["units"] = int(units.size)
            text = (f"{fn.name()}" + (f" (created at {info['site']})" if info["site"] else "")
                    + f": {info['dead_units']:.0%} of its {info['units']} units are dead (output 0 for every input), "
                    f"{info['inactive']:.0%} of its outputs are 0")
        else:
            text = (f"{fn.name()} on the path" + (f" (created at {info['site']})" if info["site"] else "")
                    + ": its mask was freed by backward; explain before backward or use retain_graph=True to "
                    "see the fraction of dead units")
        e.relus.append(info)
        e.details.append(text)
    dead = [r for r in e.relus if r.get("dead_units") == 1.0]
    if dead and e.cause == "zero_gradient":
        e.summary += " (dead ReLUs: every unit of a ReLU on the path is inactive)"
        e.fix = "check the initialisation and learning rate, or use LeakyReLU"


def _inactive_mask(fn: Node) -> Any:
    """Where a ReLU/threshold node passes no gradient (output <= threshold), from what it saved."""
    values = [peek_saved(s) for s in fn._saved if s is not None]
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        return None
    threshold = 0.0
    params = getattr(fn, "_params", ())
    if params:
        threshold = params[0]
    return tensors[-1]._data <= threshold
