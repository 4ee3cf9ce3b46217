"""``print_graph``: an autograd graph as an indented text tree.

The walk (``walk``) is iterative and visits each node once, so a graph of a million nodes, or
one deeper than Python's recursion limit, prints in one pass; ``memory_report`` numbers its
rows with the same walk, so ``#12`` means the same node in both.
"""

from __future__ import annotations

import bisect
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

import numpy as np

from ..autograd.graph import FREED, Node, PackedSaved, SavedTensor, is_released
from ..tensor import Tensor
from ..viz import _slot_name  # (the names make_dot shows)

__all__ = ["print_graph"]

NODE, REF = 0, 1  # the two kinds of events ``walk`` yields

# One event: (kind, node, number, line prefix, prefix of its inputs, straight, chain).
# ``straight``: the node is the only unprinted non-leaf input of the node above, printed right
# below it at the same indentation. ``chain``: the node's own inputs are that one straight input
# plus nodes already printed (references), so a run of such nodes can be collapsed.
Event = tuple[int, Any, int, str, str, bool, bool]

_BRANCH, _LAST = "├─ ", "└─ "
_PIPE, _SPACE = "│  ", "   "


def walk(roots: Iterable[Any], max_indent: int = 40) -> Iterator[Event]:
    """Every node reachable from ``roots`` (nodes), depth first, output first, each once
    (``NODE``); a node reached again is a ``REF`` to its number. A node's inputs that are leaves
    or already numbered come first, as branches; if exactly one input remains, it follows at
    the same indentation (``straight``), so a chain does not indent and neither the walk nor
    the text grows with depth. Indentation stops growing after ``max_indent`` levels."""
    numbers: dict[int, int] = {}
    count = 0
    cap = len(_PIPE) * max_indent
    stack: list[tuple[Any, str, str, bool]] = [(root, "", "", True) for root in reversed(list(roots))]
    pop, push = stack.pop, stack.append
    while stack:
        node, line_prefix, cont, straight = pop()
        number = numbers.get(id(node))
        if number is not None:
            yield (REF, node, number, line_prefix, cont, straight, False)
            continue
        count += 1
        numbers[id(node)] = count
        children = [nxt for nxt, _ in getattr(node, "next_functions", ()) if nxt is not None]
        if len(children) == 1:  # (the common case, kept short: a chain of a million nodes)
            child = children[0]
            edges = getattr(child, "next_functions", ())
            if edges and id(child) not in numbers and (edges[0][0] is not None or _has_inputs(child)):
                push((child, cont, cont, True))
                yield (NODE, node, count, line_prefix, cont, straight, True)
                continue
            branches = children
            chain = False
        else:
            if len(children) > 1:
                children = list({id(c): c for c in children}.values())  # an input used twice: once
            new = [c for c in children if id(c) not in numbers and _has_inputs(c)]
            chain = False
            if len(new) == 1:
                follow = new[0]
                branches = [c for c in children if c is not follow]
                chain = all(id(c) in numbers for c in branches)
                push((follow, cont, cont, True))
            else:
                branches = children
        last = len(branches) - 1
        for i in range(last, -1, -1):
            child_cont = cont + (_SPACE if i == last else _PIPE)
            push((branches[i], cont + (_LAST if i == last else _BRANCH), child_cont[:cap], False))
        yield (NODE, node, count, line_prefix, cont, straight, chain)


def _has_inputs(node: Any) -> bool:
    for nxt, _ in getattr(node, "next_functions", ()):
        if nxt is not None:
            return True
    return False


# -- what a node holds -------------------------------------------------------------------------


def saved_values(node: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` for each value ``node`` saved for backward and still holds: a saved
    input is its ``Tensor``, a saved output its NumPy array, a value saved under
    ``saved_tensors_hooks`` what the pack hook returned. Names are PyTorch's (``self``,
    ``other``, ``result``...) for retrograd's ops, ``saved_tensors[i]`` for a custom Function.
    Nothing is unpacked: no version check runs, no unpack hook is called."""
    saved = getattr(node, "_saved", ())
    if not saved or saved is FREED or is_released(node):
        return []
    op = getattr(node, "_op", None)
    n_inputs = 0
    if op is not None:
        n_inputs = len(node.next_functions) if op.variadic else op.n_inputs
    out = []
    for i, slot in enumerate(saved):
        kind = type(slot)
        if kind is tuple:
            value = slot[0]
        elif kind is SavedTensor:
            value = slot.data
        elif kind is PackedSaved:
            value = slot.packed
        else:
            value = slot
        if value is None:
            continue
        out.append((_slot_name(op, i, n_inputs) if op is not None else f"saved_tensors[{i}]", value))
    return out


def array_of(value: Any) -> np.ndarray | None:
    """The NumPy array behind a saved value (a tensor's ``_data``), or None."""
    if isinstance(value, np.ndarray):
        return value
    data = getattr(value, "_data", None) if isinstance(value, Tensor) else None
    return data if isinstance(data, np.ndarray) else None


def format_bytes(n: int) -> str:
    """``n`` bytes for people: ``512 B``, ``1.5 KiB``, ``3.0 MiB``.

    >>> format_bytes(1536)
    '1.5 KiB'
    """
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.1f} {unit}"


def _shape_dtype(shape: Any, dtype: Any) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    return f"{tuple(int(s) for s in shape)} {name}"


def _describe(value: Any, names: Mapping[int, str]) -> str:
    array = array_of(value)
    if array is None and isinstance(value, (tuple, list)):  # what a saved_tensors_hooks pack returned
        inner = [_describe(v, names) for v in value if array_of(v) is not None]
        return f"packed[{', '.join(inner)}]"
    if array is None:
        if isinstance(value, (bool, int, float, complex)):
            return repr(value)
        return f"<{type(value).__name__}>"
    name = names.get(id(value))
    text = _shape_dtype(array.shape, array.dtype) + " " + format_bytes(array.nbytes)
    return f"{name} {text}" if name else text


def _output(node: Any) -> str:
    shape = getattr(node, "_shape", None)
    if shape is not None:
        return _shape_dtype(shape, node._dtype)
    meta = getattr(node, "_output_meta", ())
    return ", ".join(_shape_dtype(s, d) for s, d in meta) if meta else "?"


def node_line(node: Any, number: int, names: Mapping[int, str]) -> str:
    """One node's line: number, op, output shape and dtype, saved tensors (or released); a
    leaf's ``AccumulateGrad`` shows its leaf (named from ``names``) and whether ``.grad`` is set."""
    head = f"#{number:,} {type(node).__name__}"
    variable = getattr(node, "variable", None)
    if variable is not None:
        name = names.get(id(variable))
        leaf = f"leaf {name + ' ' if name else ''}{_shape_dtype(variable.shape, variable._data.dtype)}"
        grad = variable._grad
        grad_text = "None" if grad is None else _shape_dtype(grad.shape, grad._data.dtype)
        return f"{head} · {leaf} · .grad {grad_text}"
    text = f"{head} → {_output(node)}"
    if is_released(node):
        return text + " · saved tensors released"
    saved = saved_values(node)
    if saved:
        text += " · saved " + ", ".join(f"{slot}={_describe(v, names)}" for slot, v in saved)
    return text


def _ref_line(node: Any, number: int, names: Mapping[int, str], hidden: _Ranges) -> str:
    text = f"→ see #{number:,} {type(node).__name__}"
    variable = getattr(node, "variable", None)
    if variable is not None and id(variable) in names:
        text += f" ({names[id(variable)]})"
    if number in hidden:
        text += " (in a collapsed run above)"
    return text


def _saved_nbytes(saved: tuple[Any, ...]) -> int:
    """The bytes of the tensors in a node's (unreleased) ``_saved``, each its own ``nbytes``."""
    total = 0
    for slot in saved:
        kind = type(slot)
        if kind is tuple:
            total += slot[0]._data.nbytes
        elif kind is SavedTensor:
            total += slot.data.nbytes
        elif kind is PackedSaved or isinstance(slot, (Tensor, np.ndarray)):  # (not a number or None)
            value = slot.packed if kind is PackedSaved else slot
            for v in value if isinstance(value, (tuple, list)) else (value,):
                array = array_of(v)
                if array is not None:
                    total += array.nbytes
    return total


# -- the printer -----------------------------------------------------------------------------


class _Ranges:
    """A set of numbers that come as consecutive runs, kept as ``[lo, hi]`` ranges."""

    def __init__(self) -> None:
        self.los: list[int] = []
        self.his: list[int] = []

    def add_range(self, lo: int, hi: int) -> None:
        """Add ``lo..hi``, above every number added so far."""
        self.los.append(lo)
        self.his.append(hi)

    def __contains__(self, n: int) -> bool:
        i = bisect.bisect_right(self.los, n) - 1
        return i >= 0 and n <= self.his[i]


class _Full(Exception):
    """``max_lines`` lines were written."""


def param_names(params: Any) -> dict[int, str]:
    """``{id(tensor): name}`` from ``params``: a ``{name: tensor}`` mapping, ``(name, tensor)``
    pairs (``model.named_parameters()``) or a module."""
    if params is None:
        return {}
    if hasattr(params, "named_parameters"):  # a Module
        params = params.named_parameters()
    items = params.items() if isinstance(params, Mapping) else params
    names: dict[int, str] = {}
    for item in items:
        if isinstance(item, Tensor):  # (a bare tensor: no name)
            continue
        name, tensor = item
        if not isinstance(tensor, Tensor):
            raise TypeError(f"params must map names to tensors, got {type(tensor).__name__} for {name!r}")
        names[id(tensor)] = str(name)
    return names


def root_nodes(root: Any) -> tuple[list[Any], list[str]]:
    """The graph nodes behind ``root`` (a tensor, a node, or a sequence of them), and a note for
    each tensor that has no graph."""
    roots = list(root) if isinstance(root, (list, tuple)) else [root]
    nodes: list[Any] = []
    notes: list[str] = []
    for r in roots:
        if isinstance(r, Tensor):
            if r.grad_fn is not None:
                nodes.append(r.grad_fn)
            elif r.requires_grad:
                notes.append(f"leaf tensor {_shape_dtype(r.shape, r._data.dtype)} (requires_grad=True): "
                             "no graph behind it (a leaf's grad_fn is None)")
            else:
                notes.append(f"tensor {_shape_dtype(r.shape, r._data.dtype)} does not require grad: no graph")
        elif isinstance(r, Node) or hasattr(r, "next_functions"):
            nodes.append(r)
        else:
            raise TypeError(f"print_graph: expected a tensor or a graph node, got {type(r).__name__}")
    return nodes, notes


def print_graph(root: Any, file: IO[str] | None = None, params: Any = None, *, collapse: int = 8,
                max_lines: int | None = 1000, max_indent: int = 40) -> str:
    """Print the graph behind ``root`` (a tensor, a ``grad_fn`` node, or a list of them) as an
    indented tree, output first, and return the text.

    Each node gets one line: ``#number``, its op, its output's shape and dtype, the tensors it
    saved for backward with their bytes, or ``saved tensors released`` once backward freed them.
    A leaf's ``AccumulateGrad`` names its leaf (from ``params``: ``{name: tensor}`` or
    ``model.named_parameters()``), with its shape and whether ``.grad`` is set. A node's inputs
    follow it: leaves and nodes printed before branch off (``├─``), and its one remaining input
    comes right below at the same indentation, so a chain reads top to bottom. A node reached
    again (a shared subgraph) is printed once and then referenced (``→ see #12``). A run of more
    than ``collapse`` chained nodes shows its first and last two and one line for the rest
    (``… 9,996 × MulBackward0 …``). Output stops after ``max_lines`` lines (None: no limit).

    The walk is iterative: any depth works, and a million-node chain prints in seconds.
    Writes to ``file`` (default ``sys.stdout``).

    >>> import retrograd as rg
    >>> w = rg.ones(3, requires_grad=True)
    >>> text = print_graph((w * w).sum(), params={'w': w})
    #1 SumBackward0 → () float32
    #2 MulBackward0 → (3,) float32 · saved self=w (3,) float32 12 B, other=w (3,) float32 12 B
    └─ #3 AccumulateGrad · leaf w (3,) float32 · .grad None
    """
    names = param_names(params)
    nodes, notes = root_nodes(root)
    lines: list[str] = list(notes)
    limit = sys.maxsize if max_lines is None else max(int(max_lines), 1)
    try:
        _render(walk(nodes, max_indent), names, lines, limit, collapse)
    except _Full:
        lines.append(f"… output cut after {limit:,} lines (pass max_lines=None to print everything)")
    text = "\n".join(lines)
    print(text, file=sys.stdout if file is None else file)
    return text


class _Run:
    """The chained nodes being collected (see ``_render``): the groups (a node's event and its
    reference lines) not written yet, and a tally of those collapsed."""

    __slots__ = ("pending", "length", "head_written", "tally", "first", "last", "saved_bytes", "released",
                 "reads", "prefix")

    def __init__(self) -> None:
        self.pending: deque[list[Event]] = deque()
        self.length = 0
        self.head_written = False
        self.tally: dict[str, int] = {}
        self.first = self.last = 0  # the numbers of the first and last collapsed node
        self.saved_bytes = self.released = 0
        self.reads: dict[int, None] = {}  # nodes the collapsed ones also read (a few)
        self.prefix = ""

    def hide(self, group: list[Event]) -> None:
        _, node, number, prefix, _, _, _ = group[0]
        name = type(node).__name__
        tally = self.tally
        if not tally:
            self.first, self.prefix = number, prefix
        self.last = number  # (a run's numbers are consecutive: a chained node's input is numbered next)
        tally[name] = tally.get(name, 0) + 1
        if is_released(node):  # (the released marker is an empty tuple)
            self.released += 1
        else:
            saved = getattr(node, "_saved", ())
            if saved:
                self.saved_bytes += _saved_nbytes(saved)
        if len(group) > 1 and len(self.reads) < 4:
            for event in group[1:]:
                self.reads[event[2]] = None

    def summary(self) -> str:
        n = self.last - self.first + 1
        kinds = ", ".join(f"{c:,} × {name}" for name, c in sorted(self.tally.items(), key=lambda kv: -kv[1]))
        text = f"… {kinds} …" if len(self.tally) == 1 else f"… {n:,} nodes: {kinds} …"
        extra = []
        if self.saved_bytes:
            extra.append(f"saved {format_bytes(self.saved_bytes)}")
        if self.released:
            extra.append("all released" if self.released == n else f"{self.released:,} released")
        if self.reads:
            extra.append("each also reads " + ", ".join(f"#{r:,}" for r in list(self.reads)[:4]))
        return self.prefix + text + (f" ({'; '.join(extra)})" if extra else "")


def _render(events: Iterator[Event], names: Mapping[int, str], lines: list[str], limit: int, collapse: int) -> None:
    """Write the events as lines, collapsing runs of more than ``collapse`` chained nodes: a
    chained node (its one new input straight below it, any others already printed) is held
    back until the run ends or grows past ``collapse``; then its first and last ``keep`` nodes
    are written around one summary line. Memory stays bounded by ``collapse`` however long the
    run."""
    hidden = _Ranges()  # numbers of the nodes inside collapsed runs, for references to them
    keep = 2
    threshold = max(collapse, 2 * keep) if collapse > 0 else sys.maxsize

    def emit_group(group: list[Event]) -> None:
        for kind, node, number, prefix, _, _, _ in group:
            if len(lines) >= limit:
                raise _Full
            if kind == NODE:
                lines.append(prefix + node_line(node, number, names))
            else:
                lines.append(prefix + _ref_line(node, number, names, hidden))

    def end_run(run: _Run) -> None:
        if run.tally:
            hidden.add_range(run.first, run.last)
            if len(lines) >= limit:
                raise _Full
            lines.append(run.summary())
        for group in run.pending:
            emit_group(group)

    run: _Run | None = None
    for event in events:
        if event[0] == REF:
            if run is not None:
                run.pending[-1].append(event)  # a chained node's reference lines follow it
            else:
                emit_group([event])
            continue
        chain = event[6]
        if run is not None and not (chain and event[5]):  # not the straight input of the run's last node
            end_run(run)
            run = None
        if not chain:
            emit_group([event])
            continue
        if run is None:
            run = _Run()
        pending = run.pending
        pending.append([event])
        run.length += 1
        if run.length > threshold:
            if not run.head_written:
                for _ in range(keep):
                    emit_group(pending.popleft())
                run.head_written = True
            while len(pending) > keep:
                run.hide(pending.popleft())
    if run is not None:
        end_run(run)
