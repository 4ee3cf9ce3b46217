"""``memory_report``: the bytes an autograd graph holds, per node and in total.

A saved tensor is counted by its *storage*: the NumPy array that owns the memory, found by
following ``.base`` from the saved array (NumPy points a view of a view at the owner; an
``as_strided`` view goes through a helper object). A storage that several views, nodes or
slots save is counted once, and in full: a small view of a large array keeps all of it alive.

Which bytes backward frees is decided by reference counts, never by ``gc``: every object the
saved values lead to (tensors, their ``_data`` and view ``_base``, arrays and their ``.base``)
is collected with the number of references that come from the saved values themselves; an
object with more references is held from outside the saved values (a parameter, an input, a
tensor you still hold, a node's index array) and survives release, with everything it leads
to. A storage none of those reaches is owned by the graph alone: exactly what release frees.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..tensor import Tensor
from .graph_text import NODE, array_of, format_bytes, param_names, root_nodes, saved_values, walk

__all__ = ["MemoryReport", "memory_report"]


@dataclass(slots=True)
class SavedEntry:
    """One tensor a node holds: its slot name (``self``, ``other``, ``result``...), shape,
    dtype, its own bytes, and its storage (an index into ``MemoryReport.storages``)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    storage: int


@dataclass(slots=True)
class StorageEntry:
    """One block of memory the graph refers to, counted once however many tensors share it.

    ``kind``: ``parameter`` (a tensor in ``params``), ``leaf`` (a leaf that requires grad),
    ``input`` (a tensor without history) or ``intermediate`` (made by an op of the graph).
    ``graph_only``: only the graph's saved values keep it alive, so releasing the graph (by
    backward, or by dropping it) frees it. ``saved_by`` / ``kept_by``: the numbers of the
    nodes that save it for backward / keep it otherwise (index arrays: not freed by backward).
    """

    nbytes: int
    kind: str
    label: str
    graph_only: bool
    saved_by: tuple[int, ...]
    kept_by: tuple[int, ...]


@dataclass(slots=True)
class NodeEntry:
    """A node that holds memory: ``number`` as ``print_graph`` numbers it, its saved tensors,
    the arrays it keeps besides them (``kept``), the bytes of its distinct storages
    (``saved_bytes``), and ``counted_bytes``, the part of ``MemoryReport.total_bytes``
    counted at this node (each storage at the first node that saves it: rows sum to the total)."""

    number: int
    name: str
    saved: tuple[SavedEntry, ...]
    kept: tuple[SavedEntry, ...]
    saved_bytes: int
    counted_bytes: int
    graph_only_bytes: int


@dataclass(frozen=True, repr=False)
class MemoryReport:
    """What ``memory_report`` found; plain data, printable as a table.

    ``total_bytes``: the distinct storages the graph's saved tensors use;
    ``freed_on_release``: the part only the graph keeps alive (freed by backward, or when the
    graph is dropped); ``shared_bytes``: the rest, shared with live tensors (parameters,
    inputs, tensors still referenced), which release does not free; ``kept_bytes``: arrays
    nodes keep besides saved tensors (index arrays, masks), freed only with the nodes;
    ``param_bytes`` / ``grad_bytes``: the parameters (or, without ``params``, the graph's
    leaves) and their ``.grad``.
    """

    nodes: tuple[NodeEntry, ...]
    storages: tuple[StorageEntry, ...]
    node_count: int
    released_count: int
    total_bytes: int
    freed_on_release: int
    shared_bytes: int
    kept_bytes: int
    param_bytes: int
    grad_bytes: int

    def top(self, n: int = 5) -> list[NodeEntry]:
        """The ``n`` nodes that hold the most bytes (their distinct storages)."""
        return heapq.nsmallest(n, self.nodes, key=lambda e: (-e.saved_bytes, e.number))

    def table(self, rows: int = 10) -> str:
        """The report as text: the ``rows`` largest nodes, then the totals."""
        out = [f"graph: {self.node_count:,} nodes, {len(self.nodes):,} holding tensors"
               + (f", {self.released_count:,} released by backward" if self.released_count else "")]
        top = self.top(rows)
        if top:
            cells = [("node", "saved tensors", "bytes", "graph only")]
            for e in top:
                saved = ", ".join([self._describe(s) for s in e.saved] + [self._describe(s, True) for s in e.kept])
                cells.append((f"#{e.number:,} {e.name}", saved, format_bytes(e.saved_bytes),
                              format_bytes(e.graph_only_bytes)))
            widths = [min(max(len(c[i]) for c in cells), 72) for i in range(4)]
            for c in cells:
                out.append("  " + "  ".join(
                    (c[i][: widths[i] - 1] + "…" if len(c[i]) > widths[i] else c[i]).ljust(widths[i])
                    if i < 2 else c[i].rjust(widths[i]) for i in range(4)).rstrip())
            if len(self.nodes) > rows:
                out.append(f"  … {len(self.nodes) - rows:,} more nodes (report.nodes has them all)")
        out.append(f"saved by the graph (each storage once): {format_bytes(self.total_bytes)}")
        out.append(f"  owned by the graph alone, freed on release: {format_bytes(self.freed_on_release)}")
        out.append(f"  shared with live tensors, not freed: {format_bytes(self.shared_bytes)}")
        if self.kept_bytes:
            out.append(f"kept by nodes besides saved tensors (freed with the graph): {format_bytes(self.kept_bytes)}")
        out.append(f"parameters: {format_bytes(self.param_bytes)}   gradients: {format_bytes(self.grad_bytes)}")
        return "\n".join(out)

    def _describe(self, s: SavedEntry, kept: bool = False) -> str:
        storage = self.storages[s.storage]
        text = f"{s.name} {s.shape} {s.dtype}" + (" [kept]" if kept else "")
        if storage.label:
            text += f" ({storage.kind} {storage.label})"
        elif storage.kind != "intermediate":
            text += f" ({storage.kind})"
        if storage.nbytes != s.nbytes:
            text += f" view of {format_bytes(storage.nbytes)}"
        return text

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:  # (the rows can be a million: the totals only)
        return (f"MemoryReport(node_count={self.node_count}, nodes=<{len(self.nodes)} holding tensors>, "
                f"total_bytes={self.total_bytes}, freed_on_release={self.freed_on_release}, "
                f"shared_bytes={self.shared_bytes}, kept_bytes={self.kept_bytes}, "
                f"param_bytes={self.param_bytes}, grad_bytes={self.grad_bytes})")


def memory_report(root: Any, params: Any = None) -> MemoryReport:
    """The memory held by the graph behind ``root`` (a tensor, a ``grad_fn`` node, or a list).

    Lists, per node, the tensors it saved for backward and their bytes; a storage shared by
    views, slots or nodes is counted once. ``freed_on_release`` is what releasing the graph
    frees (backward without ``retain_graph``, or dropping the graph): the storages only the
    graph keeps alive; ``shared_bytes`` are saved storages live tensors also use. ``params``
    (``{name: tensor}``, ``model.named_parameters()``, a module, or tensors) gives
    ``param_bytes``/``grad_bytes`` and names; without it, the graph's leaves are counted.
    ``print(report)`` shows a table; the fields are plain data. Nothing runs until called.

    >>> import retrograd as rg
    >>> w = rg.ones(1000, requires_grad=True)
    >>> h = (w * 2).exp()          # saves its 4,000-byte result: only the graph holds it
    >>> loss = (h * w).sum()       # saves h (held only by the graph) and w (a parameter)
    >>> del h
    >>> report = memory_report(loss, params={'w': w})
    >>> report.total_bytes, report.freed_on_release, report.param_bytes
    (8000, 4000, 4000)
    """
    named, tensors = _params(params)
    names = param_names(named)
    nodes, _ = root_nodes(root)
    found = _collect(nodes)
    _mark_kinds(found, names, tensors or [])
    if tensors is None:
        tensors = found.leaves
    live = _live(found.objs, found.internal, found.edges)
    found.objs.clear()  # (the only references to the saved values this function took)
    return _build(found, live, tensors)


def _params(params: Any) -> tuple[list[tuple[str, Any]] | None, list[Any] | None]:
    """``params`` as ``(name, tensor)`` pairs (for names) and as tensors; None when not given."""
    if params is None:
        return None, None
    if hasattr(params, "named_parameters"):  # a Module
        params = params.named_parameters()
    if isinstance(params, Tensor):
        return [], [params]
    items = list(params.items()) if isinstance(params, Mapping) else list(params)
    if all(isinstance(p, Tensor) for p in items):
        return [], items
    return items, [t for _, t in items]


class _Found:
    """What ``_collect`` gathered; ``objs`` is the only thing holding references to objects."""

    def __init__(self) -> None:
        self.objs: list[Any] = []
        self.index: dict[int, int] = {}
        self.internal: list[int] = []  # references each object gets from the saved values and each other
        self.edges: list[list[int]] = []  # the objects each object refers to (counted in ``internal``)
        self.owner: list[int] = []  # the storage owner of each object (-1: not an array)
        self.size: list[int] = []  # an owner's bytes
        self.kind: dict[int, str] = {}  # owner index -> the strongest kind seen
        self.label: dict[int, str] = {}  # owner index -> a parameter's name
        self.rows: list[tuple[int, str, list[tuple[str, tuple[int, ...], str, int, int]],
                              list[tuple[str, tuple[int, ...], str, int, int]]]] = []
        self.node_count = 0
        self.released = 0
        self.leaves: list[Any] = []

    def _add(self, obj: Any) -> int:
        i = len(self.objs)
        self.index[id(obj)] = i
        self.objs.append(obj)
        self.internal.append(0)
        self.edges.append([])
        self.owner.append(-1)
        self.size.append(0)
        return i

    def intern(self, value: Any) -> int:
        """Add ``value`` and what it leads to (a tensor's array and view base, an array's
        ``.base``, a container's items), counting the references among them; return its index."""
        index, objs, internal, edges = self.index, self.objs, self.internal, self.edges
        first = index.get(id(value))
        if first is not None:
            return first
        first = self._add(value)
        order = [first]
        stack = [first]
        while stack:
            i = stack.pop()
            obj = objs[i]
            children: list[Any]
            if isinstance(obj, Tensor):
                children = [obj._data] if obj._base is None else [obj._data, obj._base]
            elif isinstance(obj, (tuple, list)):
                children = [v for v in obj if isinstance(v, (Tensor, np.ndarray, tuple, list))]
            else:
                base = getattr(obj, "base", None)  # an array's owner (or as_strided's helper object)
                children = [base] if base is not None and not isinstance(base, (bytes, str)) else []
            for child in children:
                j = index.get(id(child))
                if j is None:
                    j = self._add(child)
                    stack.append(j)
                    order.append(j)
                internal[j] += 1
                edges[i].append(j)
        del obj, children
        for i in reversed(order):  # (children before parents) each array's storage owner
            self._set_owner(i)
        return first

    def _set_owner(self, i: int) -> None:
        """Follow ``i``'s chain (tensor -> its array -> ``.base`` ...) to the object that owns
        the memory, and note that owner on each object of the chain."""
        objs, owner, index = self.objs, self.owner, self.index
        chain = []
        while owner[i] < 0:
            obj = objs[i]
            if isinstance(obj, (tuple, list)):
                return
            chain.append(i)
            if isinstance(obj, Tensor):
                i = index[id(obj._data)]
                continue
            base = getattr(obj, "base", None)
            j = index.get(id(base)) if base is not None else None
            if j is None:  # the owner
                owner[i] = i
                if isinstance(obj, np.ndarray):
                    self.size[i] = int(obj.nbytes)
                else:
                    try:
                        self.size[i] = memoryview(obj).nbytes
                    except TypeError:  # (then the largest array over it, below)
                        pass
                break
            i = j
        o = owner[i]
        if not isinstance(objs[o], np.ndarray):  # a buffer that is no array: its largest array
            for k in chain:
                if isinstance(objs[k], np.ndarray):
                    self.size[o] = max(self.size[o], int(objs[k].nbytes))
        for k in chain:
            owner[k] = o


_KIND_ORDER = {"intermediate": 0, "input": 1, "leaf": 2, "parameter": 3}


def _collect(nodes: list[Any]) -> _Found:
    from ..autograd.graph import is_released

    found = _Found()
    index, internal, owner = found.index, found.internal, found.owner
    rows = found.rows
    for kind, node, number, _, _, _, _ in walk(nodes):
        if kind != NODE:
            continue
        found.node_count += 1
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.leaves.append(variable)
        saved: list[tuple[str, tuple[int, ...], str, int, int]] = []
        if is_released(node):
            found.released += 1
        else:
            for name, value in saved_values(node):
                if isinstance(value, Tensor):
                    array = value._data
                elif isinstance(value, np.ndarray):
                    array = value
                elif isinstance(value, (tuple, list)):  # what a pack hook returned
                    i = found.intern(value)
                    internal[i] += 1
                    saved.extend(_entries(found, name, value))
                    continue
                else:
                    continue
                j = index.get(id(value))
                i = found.intern(value) if j is None else j
                internal[i] += 1  # the node's saved slot: the reference release drops
                saved.append((name, array.shape, _dtype_name(array.dtype), array.nbytes, owner[i]))
        kept = _kept_values(node)
        if kept:
            kept_entries = []
            for name, value in kept:
                found.intern(value)
                kept_entries.extend(_entries(found, name, value))
            rows.append((number, type(node).__name__, saved, kept_entries))
        elif saved:
            rows.append((number, type(node).__name__, saved, []))
    return found


_DTYPE_NAMES: dict[Any, str] = {}


def _dtype_name(dtype: Any) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _kept_values(node: Any) -> list[tuple[str, Any]]:
    """Arrays and tensors a node keeps besides its saved values: an op's array arguments (an
    index, a mask; one declared ``versioned=``, kept with its version, is freed by backward) and
    a custom Function's ``ctx`` attributes."""
    out = []
    op = getattr(node, "_op", None)
    if op is not None:
        params = getattr(node, "_params", None)
        if params:
            for name, value in zip(op.params, params, strict=False):
                if type(value) is tuple and value and isinstance(value[0], Tensor):  # (tensor, version)
                    value = value[0]
                if array_of(value) is not None:
                    out.append((str(name), value))
    elif getattr(node, "_n_forward_args", None) is not None:  # a custom Function's ctx
        for name, value in vars(node).items():
            if not name.startswith("_") and array_of(value) is not None:
                out.append((name, value))
    return out


def _entries(found: _Found, name: str, value: Any) -> list[tuple[str, tuple[int, ...], str, int, int]]:
    """(name, shape, dtype, nbytes, owner) for each array in an interned value (a tensor, an
    array, or a container of them, as a pack hook may return)."""
    values = list(enumerate(value)) if isinstance(value, (tuple, list)) else [(None, value)]
    out = []
    for k, v in values:
        array = array_of(v)
        if array is None:
            continue
        label = name if k is None else f"{name}[{k}]"
        out.append((label, array.shape, _dtype_name(array.dtype), array.nbytes, found.owner[found.index[id(v)]]))
    return out


def _refcounts(objs: list[Any]) -> list[int]:
    return [_getrefcount(o) for o in objs]


_getrefcount = sys.getrefcount
# What ``_refcounts`` counts for an object only ``objs`` holds (the list, the loop name, the
# call's argument): measured rather than assumed.
_ONLY_IN_LIST = _refcounts([object()])[0]


def _live(objs: list[Any], internal: list[int], edges: list[list[int]]) -> list[bool]:
    """Which objects survive release: those referenced from outside the saved values, and
    everything they lead to."""
    counts = _refcounts(objs)
    live = [c - _ONLY_IN_LIST > n for c, n in zip(counts, internal)]
    stack = [i for i, is_live in enumerate(live) if is_live]
    while stack:
        for j in edges[stack.pop()]:
            if not live[j]:
                live[j] = True
                stack.append(j)
    return live


def _tensor_kind(t: Any, params: set[int]) -> str:
    if id(t) in params:
        return "parameter"
    if t._grad_fn is None:
        return "leaf" if t._requires_grad else "input"
    return "intermediate"


def _owner_of(array: Any) -> Any:
    """The object that owns ``array``'s memory (following ``.base``)."""
    obj = array
    while True:
        base = getattr(obj, "base", None)
        if base is None or isinstance(base, (bytes, str)):
            return obj
        obj = base


def _mark_kinds(found: _Found, names: Mapping[int, str], params: list[Any]) -> None:
    """Each storage's kind: a parameter's (or a leaf's, an input's) if such a tensor among the
    saved values or in ``params`` uses it, whatever view of it the graph saved."""
    param_ids = {id(t) for t in params}
    kinds = found.kind
    labels = found.label

    def mark(owner: int, kind: str, label: str) -> None:
        old = kinds.get(owner)
        if old is None or _KIND_ORDER[kind] > _KIND_ORDER[old]:
            kinds[owner] = kind
        if label and not labels.get(owner):
            labels[owner] = label

    for i, obj in enumerate(found.objs):
        if isinstance(obj, Tensor) and found.owner[i] >= 0:
            mark(found.owner[i], _tensor_kind(obj, param_ids), names.get(id(obj), ""))
    for t in params:
        j = found.index.get(id(_owner_of(t._data)))
        if j is not None:
            mark(found.owner[j], "parameter", names.get(id(t), ""))


def _storage_bytes(tensors: Iterable[Any], grads: bool) -> int:
    owners: dict[int, int] = {}
    for t in tensors:
        if grads:
            t = t._grad
            if t is None:
                continue
        data = t._data
        owner = _owner_of(data)
        owners[id(owner)] = max(owners.get(id(owner), 0), int(getattr(owner, "nbytes", data.nbytes)))
    return sum(owners.values())


def _build(found: _Found, live: list[bool], tensors: list[Any]) -> MemoryReport:
    storage_of: dict[int, int] = {}  # owner index -> storage number
    saved_by: list[list[int]] = []
    kept_by: list[list[int]] = []
    owners: list[int] = []

    def storage(owner: int, number: int, kept: bool) -> int:
        k = storage_of.get(owner)
        if k is None:
            k = storage_of[owner] = len(owners)
            owners.append(owner)
            saved_by.append([])
            kept_by.append([])
        users = kept_by[k] if kept else saved_by[k]
        if not users or users[-1] != number:
            users.append(number)
        return k

    rows: list[tuple[int, str, list[SavedEntry], list[SavedEntry]]] = []
    for number, name, saved, kept in found.rows:
        rows.append((number, name,
                     [SavedEntry(n, sh, dt, nb, storage(o, number, False)) for n, sh, dt, nb, o in saved],
                     [SavedEntry(n, sh, dt, nb, storage(o, number, True)) for n, sh, dt, nb, o in kept]))
    storages = tuple(
        StorageEntry(found.size[o], found.kind.get(o, "intermediate"), found.label.get(o, ""),
                     bool(saved_by[k]) and not live[o], tuple(saved_by[k]), tuple(kept_by[k]))
        for k, o in enumerate(owners))
    sizes = [s.nbytes for s in storages]
    alone = [s.nbytes if s.graph_only else 0 for s in storages]
    counted = [False] * len(storages)
    entries = []
    for number, name, saved_entries, kept_entries in rows:
        mine = {e.storage for e in saved_entries}
        first = 0
        for k in mine:
            if not counted[k]:
                counted[k] = True
                first += sizes[k]
        entries.append(NodeEntry(number, name, tuple(saved_entries), tuple(kept_entries),
                                 sum([sizes[k] for k in mine]), first, sum([alone[k] for k in mine])))
    total = sum(s.nbytes for s in storages if s.saved_by)
    freed = sum(s.nbytes for s in storages if s.graph_only)
    return MemoryReport(
        nodes=tuple(entries), storages=storages, node_count=found.node_count, released_count=found.released,
        total_bytes=total, freed_on_release=freed, shared_bytes=total - freed,
        kept_bytes=sum(s.nbytes for s in storages if s.kept_by and not s.saved_by),
        param_bytes=_storage_bytes(tensors, grads=False), grad_bytes=_storage_bytes(tensors, grads=True))
