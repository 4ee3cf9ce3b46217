"""The graph's objects: ``Node`` (a recorded backward function), ``AccumulateGrad`` (a leaf's
sink), ``SavedTensor`` (a value kept for backward, with the version it had when saved) and
``VersionCounter`` (shared by a tensor, its views and its detached aliases).

The graph is acyclic and holds no reference cycles: a node points to the nodes of its inputs
(``next_functions``) and to what it saved; a node never holds its own output tensor, only that
tensor's array (see "Saved outputs" in docs/architecture.md). Graphs are therefore freed by
reference counting alone.
"""

from __future__ import annotations

import _thread
import gc
import itertools
import os
import re
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .anomaly_mode import ANOMALY, remember_creation, user_site
from .grad_mode import STATE

if TYPE_CHECKING:
    from ..tensor import Tensor

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__
# An AccumulateGrad's sequence number, and only theirs: above every other node's.
LEAF_SEQUENCE_NR = sys.maxsize

# Every this many recorded nodes, ``large_graph_guard`` runs (the check is one bit test).
GUARD_EVERY = 1 << 16
_RAISED_THRESHOLD2 = 1000


class _CollectorGuard:
    """Keeps CPython's full collections rare while anyone holds it (see "Collector" in
    docs/architecture.md), shared by every thread: the first holder raises the third threshold,
    the last one to let go puts back the exact value it replaced (unless someone set another since).
    The collector itself is never switched off, so other threads' collections go on."""

    __slots__ = ("lock", "holders", "replaced", "refs")

    def __init__(self) -> None:
        # Reentrant: a finalizer of a guarded graph may run while this thread holds the lock.
        self.lock = _thread.RLock()
        self.holders = 0
        self.replaced: int | None = None  # the third threshold the first holder replaced
        self.refs: set[weakref.ref[Node]] = set()  # large graphs holding the guard

    def hold(self) -> None:
        with self.lock:
            if self.holders == 0:
                t0, t1, t2 = gc.get_threshold()
                self.replaced = None
                if t2 < _RAISED_THRESHOLD2:
                    self.replaced = t2
                    gc.set_threshold(t0, t1, _RAISED_THRESHOLD2)
            self.holders += 1

    def release(self, _ref: object = None) -> None:
        with self.lock:
            if _ref is not None:  # a guarded graph was freed
                self.refs.discard(_ref)  # type: ignore[arg-type]
            self.holders -= 1
            if self.holders == 0 and self.replaced is not None:
                t0, t1, t2 = gc.get_threshold()
                if t2 == _RAISED_THRESHOLD2:
                    gc.set_threshold(t0, t1, self.replaced)
                self.replaced = None


COLLECTOR_GUARD = _CollectorGuard()


def large_graph_guard(node: Node) -> None:
    """Keep CPython's full collections from rescanning a growing graph (see "Collector" in
    docs/architecture.md): ``node`` (every ``GUARD_EVERY``-th recorded node) holds the collector
    guard until it is freed, so full collections stay rare exactly while such a graph lives.

    >>> import gc
    >>> from retrograd.autograd.graph import Node, large_graph_guard
    >>> before = gc.get_threshold()
    >>> node = Node()
    >>> large_graph_guard(node)
    >>> gc.get_threshold()[2] >= 1000
    True
    >>> del node
    >>> gc.get_threshold() == before
    True
    """
    guard = COLLECTOR_GUARD
    guard.hold()
    guard.refs.add(weakref.ref(node, guard.release))


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class SavedVersion(int):
    """The version a saved value recorded, as the saved value holds it: one object per
    (counter, version) however many nodes save it, so its reference count tells the counter
    whether a live saved value still refers to that version."""

    __slots__ = ()


class VersionCounter:
    """How many times a storage was written in place; shared by a tensor, its views and aliases.

    While a live saved value refers to an older version of the storage, in-place writes record
    their call site, so the version error can say where the write happened. Saved values hold
    their version as a ``SavedVersion`` handed out by ``mark``; a write drops the marks no saved
    value holds any more and the sites no live one can ask for, so a storage that is saved and
    written over and over (a parameter, at every training step) keeps no history.

    >>> import retrograd as rg
    >>> w = rg.ones(2)
    >>> y = rg.ones(2, requires_grad=True) * w  # saves w at version 0
    >>> with rg.no_grad():
    ...     _ = w.mul_(2)
    >>> len(w._version_counter.sites)  # y's graph still holds version 0
    1
    >>> del y
    >>> with rg.no_grad():
    ...     _ = w.mul_(2)
    >>> w._version_counter.sites is None  # no saved value holds an older version
    True
    """

    __slots__ = ("value", "sites", "mark", "marks")

    def __init__(self) -> None:
        self.value = 0
        self.sites: list[tuple[int, str]] | None = None
        self.mark: SavedVersion | None = None  # the current version's, once one was handed out
        self.marks: list[SavedVersion] | None = None  # those handed out, maybe still held

    def bump(self, op_name: str) -> None:
        self.value += 1
        if self.marks is not None:
            self._note_write(op_name)

    def current_mark(self) -> SavedVersion:
        """The current version as a saved value keeps it (see the class docstring)."""
        mark = self.mark
        if mark is None:
            mark = self.mark = SavedVersion(self.value)
            if self.marks is None:
                self.marks = [mark]
            else:
                self.marks.append(mark)
        return mark

    def _note_write(self, op_name: str) -> None:
        self.mark = None
        marks = self.marks
        oldest = None
        if marks is not None:
            live = _live_marks(marks)
            self.marks = live or None
            if live:
                oldest = min(live)
        if oldest is None:  # no saved value can see this write
            self.sites = None
            return
        sites = self.sites
        if sites is None:
            sites = self.sites = []
        elif sites[0][0] <= oldest:
            sites[:] = [site for site in sites if site[0] > oldest]  # writes no live value predates
        sites.append((self.value, f"{op_name} at {user_call_site()}"))


def _live_marks(marks: list[SavedVersion]) -> list[SavedVersion]:
    """The marks something besides ``marks`` holds (a saved value, not yet freed)."""
    return [m for m in marks if _getrefcount(m) > _MARK_ONLY_IN_LIST]


_getrefcount = sys.getrefcount
# What ``_live_marks`` counts for a mark only its list holds (the list, the loop name, the call's
# argument), measured rather than assumed: interpreters differ.
_MARK_ONLY_IN_LIST = [_getrefcount(m) for m in [SavedVersion(0)]][0]


def user_call_site() -> str:
    """``file:line`` of the innermost frame outside the retrograd package and the code it
    generates (``Tensor.add_`` is made from the op table, ops/variants.py)."""
    site = user_site()
    return "<unknown>" if site is None else f"{site[0]}:{site[1]}"


def _short_node_name(node: Any) -> str:
    return re.sub(r"Backward\d*$", "", type(node).__name__)




INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)


def save_input(tensor: Tensor) -> tuple[Tensor, int]:
    """What a node keeps of an input it needs for backward: the tensor and its current version.

    A plain tuple: saving happens on every recorded op, so it must cost next to nothing.
    """
    if tensor._is_inference:
        raise RuntimeError(INFERENCE_SAVE_ERROR)
    counter = tensor._version_counter
    if counter is None:
        counter = new_counter(tensor)
    mark = counter.mark
    if mark is None:
        mark = counter.current_mark()
    return (tensor, mark)


def new_counter(tensor: Tensor) -> VersionCounter:
    """Give ``tensor`` its version counter (made on first need). If its node saved it as a fresh
    output before it had one (``save_output``), that saved value shares the counter from now on:
    see "Saved outputs" in docs/architecture.md."""
    counter = tensor._version_counter = VersionCounter()
    fn = tensor._grad_fn
    if fn is not None:
        data = tensor._data
        for saved in getattr(fn, "_saved", ()):  # (unset while the node is being recorded)
            if type(saved) is SavedTensor and saved.counter is None and saved.data is data:
                saved.counter = counter
                saved.version = counter.current_mark()
    return counter


def unpack_input(saved: tuple[Tensor, int], node: Node) -> Tensor:
    tensor, version = saved
    counter = tensor._version_counter
    if counter.value != version:  # type: ignore[union-attr]
        raise RuntimeError(version_error(node, tensor._data, counter, version, tensor, tensor._output_nr))
    return tensor


# PyTorch 2.13's hints: how to find the write, or (anomaly mode on) where it printed the stack.
ANOMALY_OFF_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
ANOMALY_ON_HINT = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
    "variable in question was changed in there or anywhere later. Good luck!"
)


_LEGACY_TYPE_NAMES = frozenset({"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"})


def version_error(node: Node, data: Any, counter: Any, version: int, tensor: Tensor | None, output_nr: int) -> str:
    """PyTorch's message for a saved value modified in place, plus where the write happened."""
    from .._dtype import scalar_type_name

    shape = ", ".join(str(s) for s in data.shape)
    name = scalar_type_name(data.dtype)
    # PyTorch names the type as its C++ ``toString`` does: the legacy class name for the eight
    # original types, ``CPU<Scalar>Type`` for the others (``[CPUBoolType [3]]`` for a mask).
    what = f"[torch.{name}Tensor [{shape}]]" if name in _LEGACY_TYPE_NAMES else f"[CPU{name}Type [{shape}]]"
    if tensor is None:  # the node's own output
        what += f", which is output {output_nr} of {_short_node_name(node)},"
    elif tensor._grad_fn is not None:
        what += f", which is output {tensor._output_nr} of {_short_node_name(tensor._grad_fn)},"
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} is at version {counter.value}; expected version {version} "
        "instead. " + (ANOMALY_ON_HINT if ANOMALY[2] else ANOMALY_OFF_HINT)
    )
    sites = [site for v, site in (counter.sites or ()) if v > version]
    if sites:
        message += (
            f" [retrograd] The tensor was saved by {type(node).__name__}, and modified in place by "
            + "; then ".join(sites) + "."
        )
    return message


class SavedTensor:
    """A node's own output, saved for its backward (inputs are saved with ``save_input``).

    Only the array and version counter are kept, never the output tensor: the tensor refers to
    the node, so keeping it would make a cycle. Unpacking makes a fresh tensor whose ``grad_fn``
    is the node, so double backward stays connected.
    """

    __slots__ = ("data", "counter", "version", "output_nr", "requires_grad")
    data: Any
    counter: VersionCounter | None  # None: the output has no counter yet, so it is unmodified
    version: int
    output_nr: int
    requires_grad: bool

    def __init__(self, tensor: Tensor) -> None:
        counter = tensor._counter()
        self.counter = counter
        self.version = counter.current_mark()
        self.data = tensor._data
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad

    def unpack(self, node: Node) -> Tensor:
        counter = self.counter
        if counter is not None and counter.value != self.version:
            raise RuntimeError(version_error(node, self.data, counter, self.version, None, self.output_nr))
        out = _new(_Tensor or _tensor_class())
        out._data = self.data
        out._requires_grad = False
        out._grad_fn = None
        if STATE.grad_enabled:  # create_graph: the value must stay connected to this node
            out._version_counter = self.counter
            if self.requires_grad:
                out._requires_grad = True
                out._grad_fn = node
                if self.output_nr:
                    out._output_nr = self.output_nr
        return out


_new = object.__new__
_Tensor: Any = None  # the Tensor class, once known (the graph is below the Tensor)


def _tensor_class() -> Any:
    global _Tensor
    if _Tensor is None:
        from ..tensor import Tensor

        _Tensor = Tensor
    return _Tensor


def save_output(tensor: Tensor) -> SavedTensor:
    """``SavedTensor(tensor)`` for an op's fresh single output, already attached to its node (the
    recording hot path). The output has no version counter yet and gets none here: when it
    makes one, ``new_counter`` hands it to this saved value. Until then it cannot have been
    written in place, so unpacking needs no check."""
    if tensor._grad_fn is None or tensor._version_counter is not None:  # not attached, or a view
        return SavedTensor(tensor)
    saved = _new(SavedTensor)
    saved.data = tensor._data
    saved.counter = None
    saved.version = 0
    saved.output_nr = 0
    saved.requires_grad = tensor._requires_grad
    return saved


def peek_saved(value: Any) -> Any:
    """A saved slot's value without the version check (for drawing and inspecting a graph)."""
    kind = type(value)
    if kind is tuple:
        return value[0]
    if kind is SavedTensor:
        return _tensor_class()._make(value.data)
    if kind is PackedSaved:
        return value.unpack(None)
    return value


def unpack_saved(value: Any, node: Node) -> Any:
    """A saved slot's value: an input (version-checked), an output, or a plain Python value."""
    kind = type(value)
    if kind is tuple:
        return unpack_input(value, node)
    if kind is SavedTensor:
        return value.unpack(node)
    if kind is PackedSaved:  # saved under saved_tensors_hooks
        return value.unpack(node)
    if isinstance(value, SavedTensor):  # an output saved with its forward-AD tangent (ops/forward.py)
        return value.unpack(node)
    return value


class _FreedMarker(tuple):  # type: ignore[type-arg]
    """The saved tuple of a node whose saved tensors were released after backward. Each line that
    calls backward has one (``released_marker``) that names it (``site``),
    so that a second backward through the graph can say where the first one ran. Empty, like
    ``()``: code tests ``not saved and type(saved) is FREED_TYPE``, which costs a non-empty
    tuple one truth test."""

    where: tuple[str, int] | None = None  # (file, line), formatted only when asked for

    @property
    def site(self) -> str | None:
        """``file:line`` of the backward call that released the node, if known."""
        where = self.where
        return f"{where[0]}:{where[1]}" if where is not None else None


FREED_TYPE = _FreedMarker
FREED: tuple[Any, ...] = _FreedMarker()  # released where no backward call is known (Node.release's default)


def released_marker(depth: int = 1) -> tuple[Any, ...]:
    """The marker a backward call puts in the nodes it releases, naming the innermost caller
    outside retrograd (the user's ``backward()`` or ``autograd.grad`` line), looked for from
    ``depth`` frames up (1: the caller). One per such line, made on its first backward call.

    >>> from retrograd.autograd.graph import released_marker
    >>> released_marker().site.endswith(":1")  # the line of this doctest
    True
    """
    where = user_site(depth + 1)
    marker = _MARKERS.get(where)
    if marker is None:
        if len(_MARKERS) >= _MARKERS_KEPT:  # (lines that call backward: a program has few)
            _MARKERS.clear()
        marker = _MARKERS[where] = _FreedMarker()
        marker.where = where
    return marker


_MARKERS: dict[tuple[str, int] | None, _FreedMarker] = {}
_MARKERS_KEPT = 1024


def freed_message(saved: Any) -> str:
    """PyTorch's message for using a released graph, then where the backward that freed it ran."""
    site = getattr(saved, "site", None)
    if site is None:
        return FREED_MESSAGE
    return FREED_MESSAGE + f" [retrograd] The graph was freed by the backward call at {site}."


def is_released(node: Any) -> bool:
    """Whether backward has released ``node``'s saved tensors (a second backward through it raises).
    Drawing and debugging tools ask this, never the marker itself."""
    return isinstance(getattr(node, "_saved", None), _FreedMarker)


class RemovableHandle:
    """Returned by ``register_hook``-style calls; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Node:
    """A backward function in the graph.

    ``next_functions`` is one ``(node_or_None, input_nr)`` edge per differentiable input; ``apply``
    maps the gradients of this node's outputs to gradients of its inputs, one per edge.
    Subclasses are created once per op, named as PyTorch names them (``MulBackward0``).
    Hooks and metadata are class-level ``None`` until set, so a plain node costs four slots.
    """

    __slots__ = ("next_functions", "_sequence_nr", "_saved", "_shape", "_dtype", "__dict__", "__weakref__")
    next_functions: tuple[tuple[Node | None, int], ...]
    _sequence_nr: int
    _saved: tuple[Any, ...]
    # The shape and dtype of this node's (one) forward output: the engine reduces every gradient
    # flowing into the node to them ("Output metadata" in docs/architecture.md). None with
    # several outputs: then ``_output_meta`` has a (shape, dtype) per output.
    _shape: tuple[int, ...] | None
    _dtype: Any
    _output_meta: tuple[Any, ...] = ()
    num_outputs: int = 1
    _hooked: bool = False  # any hook or retain_grad registered (always, for AccumulateGrad): the engine looks only then
    _custom_release: bool = False  # a subclass overrides release() (else the engine inlines it)
    _apply_without_grads: bool = False  # run even when every incoming gradient is None (custom Functions)
    # The engine may not run this node in an uncounted pass before counting the edges into it
    # (engine.run_backward): a leaf's AccumulateGrad with more than one edge ever recorded, and a
    # view's node made after a node that points at it (``mark_made_late``). Others need no count.
    _needs_count: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._custom_release = cls.release is not Node.release
    _pre_hooks: list[Callable[..., Any]] | None = None
    _post_hooks: list[Callable[..., Any]] | None = None
    _tensor_hooks: dict[int, list[Callable[..., Any]]] | None = None
    _retained: dict[int, Any] | None = None
    _metadata: dict[str, Any] | None = None

    def __init__(self) -> None:
        self.next_functions = ()
        self._sequence_nr = next_sequence_nr()
        self._saved = ()
        self._shape = self._dtype = None
        if ANOMALY[0]:  # (op nodes skip __init__: their call paths do this themselves)
            remember_creation(self)

    # -- what the engine calls -------------------------------------------------------------
    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    def release(self, freed: tuple[Any, ...] = FREED) -> None:
        """Free saved tensors after backward (unless the graph is retained), putting ``freed``
        (the backward call's marker) in their place. The engine calls it only when ``_saved``
        is not empty."""
        if self._saved:
            self._saved = freed

    def saved(self, index: int) -> Any:
        saved = self._saved
        if not saved and type(saved) is FREED_TYPE:
            raise RuntimeError(freed_message(saved))
        return unpack_saved(saved[index], self)

    # -- PyTorch's public Node API ---------------------------------------------------------
    def __call__(self, *grad_outputs: Tensor | None) -> tuple[Tensor | None, ...]:
        """Run this backward function on one gradient per forward output; returns one gradient
        per edge in ``next_functions`` (an ``AccumulateGrad`` accumulates and returns ``()``).

        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True)
        >>> (x * 3).grad_fn(rg.ones(2))
        (tensor([3., 3.]), None)
        """
        expected = self.num_outputs
        if len(grad_outputs) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grad_outputs)} instead")
        return tuple(self.apply(list(grad_outputs)))

    def name(self) -> str:
        """The node's name as PyTorch's ``name()`` gives it: its class name, or the C++ name of
        the nodes PyTorch writes by hand (``torch::autograd::NotImplemented``).

        >>> import retrograd as rg
        >>> rg.floor_divide(rg.ones(1, requires_grad=True), 2).grad_fn.name()
        'torch::autograd::NotImplemented'
        """
        kind = type(self).__name__
        return _CPP_NODE_NAMES.get(kind, kind)

    @property
    def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        self._hooked = True
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        self._hooked = True
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        self._hooked = True
        return RemovableHandle(hooks, fn)

    def _retain(self, output_nr: int, tensor: Tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)
        self._hooked = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


def mark_made_late(node: Node) -> None:
    """Say that ``node`` may have been made after a node with an edge to it (a view's node made
    while another op records its edges): an uncounted backward pass (engine.run_backward), which
    relies on every other node being older than the nodes pointing at it, counts edges first."""
    node._needs_count = True


def mark_younger_targets(node: Node) -> None:
    """``mark_made_late`` on each node ``node``'s edges point at that was made after it (a custom
    Function's node is made before its forward runs, and the forward may record nodes)."""
    seq = node._sequence_nr
    for nxt, _ in node.next_functions:
        if nxt is not None and seq < nxt._sequence_nr != LEAF_SEQUENCE_NR:
            mark_made_late(nxt)


# Nodes PyTorch implements in C++ outside its generated ops, whose ``name()`` is the C++ name
# (AccumulateGrad and CopySlices say theirs in their own classes).
_CPP_NODE_NAMES = {"NotImplemented": "torch::autograd::NotImplemented", "Error": "torch::autograd::Error",
                   "CopyBackwards": "torch::autograd::CopyBackwards"}


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable", "_edges_made")
    _hooked = True  # the engine must look at the leaf's own hooks before accumulating
    _needs_count = True  # unless a single edge was ever made to it (``_edges_made``)

    def __init__(self, variable: Tensor) -> None:
        self.next_functions = ()
        self._sequence_nr = LEAF_SEQUENCE_NR  # run as soon as ready, like PyTorch
        self._saved = ()
        self.variable = variable
        # How many times ``engine.grad_accumulator`` handed this node out: at least the number of
        # edges pointing at it. At 1, the gradient from that one edge is the whole of it.
        self._edges_made = 0

    # The leaf's current shape and dtype (``.data`` may have been replaced since this was made).
    @property
    def _shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.variable._data.shape  # type: ignore[no-any-return]

    @property
    def _dtype(self) -> Any:  # type: ignore[override]
        return self.variable._data.dtype

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        grad = grad_outputs[0]
        if grad is not None:
            variable = self.variable
            with ACCUMULATE_LOCK:  # backward calls in several threads may meet at one leaf
                if variable._grad is None and not STATE.grad_enabled:
                    data = grad._data
                    # The common first gradient, kept uncopied at once: a fresh array of its own
                    # in the leaf's layout, that only the engine refers to (the rules of
                    # _lay_out_first and Tensor._accumulate_grad, whose general path this skips).
                    # Held by: the engine's list, this name, getrefcount's argument; the array by
                    # the gradient, ``data`` and the argument.
                    if (data.base is None and type(grad) is (_Tensor or _tensor_class())
                            and (data.ndim < 2 or data.strides == variable._data.strides)
                            and data.flags.writeable and _getrefcount(grad) <= 3 and _getrefcount(data) <= 3):
                        variable._grad = grad
                    else:
                        del grad, data  # (so that _lay_out_first counts the references to it exactly)
                        grad = _lay_out_first(grad_outputs, variable._data)
                        variable._accumulate_grad(grad)
                else:
                    variable._accumulate_grad(grad)
            if variable._post_accumulate_grad_hooks is not None:
                _run_post_accumulate_grad_hooks(variable)
        return ()

    def name(self) -> str:
        """PyTorch's C++ name for this node (its Python class name stays ``AccumulateGrad``).

        >>> import retrograd as rg
        >>> (rg.ones(1, requires_grad=True) * 2).grad_fn.next_functions[0][0].name()
        'torch::autograd::AccumulateGrad'
        """
        return "torch::autograd::AccumulateGrad"


def _run_post_accumulate_grad_hooks(variable: Tensor) -> None:
    """``hook(tensor)`` for each of the leaf's post-accumulate-grad hooks, once ``.grad`` holds
    the new gradient; like PyTorch, they must return None."""
    for hook in list(variable._post_accumulate_grad_hooks or ()):
        result = hook(variable)
        if result is not None:
            if not isinstance(result, _tensor_class()):
                raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


# Held while a gradient is added into a ``.grad`` (PyTorch's AccumulateGrad holds a mutex too):
# NumPy releases the GIL inside the addition, and a first gradient is checked, then stored.
# Reentrant, so a hook run during accumulation may itself call backward.
ACCUMULATE_LOCK = _thread.RLock()


def _in_layout_of(grad: Tensor, like: Any) -> Tensor:
    """``grad`` with the memory layout ``.grad`` of a leaf holding ``like`` must have (PyTorch's
    gradient layout contract): the leaf's strides if its array is dense, else row-major. An
    optimizer's in-place update then walks both in the same order (a transposed gradient of a
    2048×2048 weight made each update about seven times slower)."""
    data = grad._data
    if data.strides == like.strides or data.ndim < 2 or data.shape != like.shape:
        return grad
    if like.flags.c_contiguous:
        if data.flags.c_contiguous:
            return grad
        target = np.empty(data.shape, data.dtype)
    elif _is_dense(like):
        target = np.empty_like(like, dtype=data.dtype)  # (order "K": the same strides)
    elif data.flags.c_contiguous:
        return grad
    else:
        target = np.empty(data.shape, data.dtype)
    target[...] = data
    return _tensor_class()._make(target)


def _lay_out_first(grads: list[Any], like: Any) -> Tensor:
    """Make ``grads[0]``, a leaf's first gradient, one that may become its ``.grad``: in the leaf's
    layout (``_in_layout_of``), and, if it is a whole-array view that only the engine can see
    (``linear``'s weight gradient is ``(grad.T @ x).T.T``), the array itself, so that it is kept
    uncopied as a fresh array is (``Tensor._accumulate_grad``). The values stay the same."""
    grad = grads[0]
    laid = _in_layout_of(grad, like)
    if laid is not grad:
        grads[0] = laid
        return laid
    del laid
    data = grad._data
    base = data.base
    if (base is None or type(grad) is not _tensor_class() or not data.flags.c_contiguous
            or not base.flags.c_contiguous or base.shape != data.shape or base.base is not None
            or not base.flags.writeable):
        return grad
    # Held by: the gradient by the list, this name and getrefcount's argument; the view by the
    # gradient, this name and the argument; the array by the view, this name, the argument and
    # the view's root tensor (a view op's output keeps it), which the gradient alone holds.
    owner = grad._base
    arrays = 3
    if owner is not None:
        if owner._data is not base or _getrefcount(owner) > 3:
            return grad
        arrays = 4
    if _getrefcount(grad) > 3 or _getrefcount(data) > 3 or _getrefcount(base) > arrays:
        return grad
    grad = grads[0] = _tensor_class()._make(base)
    return grad


def _is_dense(a: Any) -> bool:
    """Whether ``a``'s elements fill its memory without gaps or overlaps (in some dimension order)."""
    size = a.itemsize
    for stride, n in sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != size:
            return False
        size *= n
    return True


# PyTorch's ``torch.autograd.graph`` namespace has the saved-tensor hooks (defined on top of this module).
from .graph_hooks import (  # noqa: E402
    PackedSaved,
)
from .graph_hooks import disable_saved_tensors_hooks as disable_saved_tensors_hooks  # noqa: E402
from .graph_hooks import save_on_cpu as save_on_cpu  # noqa: E402
from .graph_hooks import saved_tensors_hooks as saved_tensors_hooks  # noqa: E402
