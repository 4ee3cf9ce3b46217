"""The graph's objects: ``Node`` (a recorded backward function), ``AccumulateGrad`` (a leaf's
sink), ``SavedTensor`` (a value kept for backward, with the version it had when saved) and
``VersionCounter`` (shared by a tensor, its views and its detached aliases).

The graph is acyclic and holds no reference cycles: a node points to the nodes of its inputs
(``next_functions``) and to what it saved; a node never holds its own output tensor, only that
tensor's array (see "Saved outputs" in docs/architecture.md). Graphs are therefore freed by
reference counting alone.
"""

from __future__ import annotations

import gc
import itertools
import os
import re
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .grad_mode import STATE

if TYPE_CHECKING:
    from ..tensor import Tensor

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

# Every this many recorded nodes, ``large_graph_guard`` runs (the check is one bit test).
GUARD_EVERY = 1 << 16
_RAISED_THRESHOLD2 = 1000
_saved_thresholds: list[tuple[int, int, int]] = []


def large_graph_guard() -> None:
    """Keep CPython's full collections from rescanning a growing graph (see "Collector" in
    docs/architecture.md): while graphs grow, full collections become rarer, until the engine has
    run (``release_graph_guard``). Graphs hold no cycles, so nothing they hold waits on them."""
    t0, t1, t2 = gc.get_threshold()
    if t2 < _RAISED_THRESHOLD2:
        _saved_thresholds.append((t0, t1, t2))
        gc.set_threshold(t0, t1, _RAISED_THRESHOLD2)


def release_graph_guard() -> None:
    """Restore the collector's thresholds after backward (unless someone changed them since)."""
    if _saved_thresholds:
        t0, t1, t2 = _saved_thresholds.pop()
        _saved_thresholds.clear()
        current = gc.get_threshold()
        if current[2] == _RAISED_THRESHOLD2:
            gc.set_threshold(current[0], current[1], t2)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class VersionCounter:
    """How many times a storage was written in place; shared by a tensor, its views and aliases.

    ``saved`` turns on once a graph saves a tensor of this storage: from then on, in-place
    writes record their call site, so the version error can say where the write happened.
    """

    __slots__ = ("value", "saved", "sites")

    def __init__(self) -> None:
        self.value = 0
        self.saved = False
        self.sites: list[tuple[int, str]] | None = None

    def bump(self, op_name: str) -> None:
        self.value += 1
        if self.saved:
            if self.sites is None:
                self.sites = []
            self.sites.append((self.value, f"{op_name} at {user_call_site()}"))


def user_call_site() -> str:
    """``file:line`` of the innermost frame outside the retrograd package."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


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
    counter.saved = True
    return (tensor, counter.value)


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
                counter.saved = True
    return counter


def unpack_input(saved: tuple[Tensor, int], node: Node) -> Tensor:
    tensor, version = saved
    counter = tensor._version_counter
    if counter.value != version:  # type: ignore[union-attr]
        raise RuntimeError(version_error(node, tensor._data, counter, version, tensor, tensor._output_nr))
    return tensor


def version_error(node: Node, data: Any, counter: Any, version: int, tensor: Tensor | None, output_nr: int) -> str:
    """PyTorch's message for a saved value modified in place, plus where the write happened."""
    from .._dtype import scalar_type_name

    shape = ", ".join(str(s) for s in data.shape)
    what = f"[torch.{scalar_type_name(data.dtype)}Tensor [{shape}]]"
    if tensor is None:  # the node's own output
        what += f", which is output {output_nr} of {_short_node_name(node)},"
    elif tensor._grad_fn is not None:
        what += f", which is output {tensor._output_nr} of {_short_node_name(tensor._grad_fn)},"
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} is at version {counter.value}; expected version {version} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
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
        counter.saved = True
        self.counter = counter
        self.version = counter.value
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
    return value


def unpack_saved(value: Any, node: Node) -> Any:
    """A saved slot's value: an input (version-checked), an output, or a plain Python value."""
    kind = type(value)
    if kind is tuple:
        return unpack_input(value, node)
    if kind is SavedTensor:
        return value.unpack(node)
    return value


class _FreedMarker(tuple):  # type: ignore[type-arg]
    """The saved tuple of a node whose saved tensors were released after backward."""


FREED: tuple[Any, ...] = _FreedMarker()


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

    # -- what the engine calls -------------------------------------------------------------
    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors after backward (unless the graph is retained). The engine calls
        it only when ``_saved`` is not empty."""
        if self._saved:
            self._saved = FREED

    def saved(self, index: int) -> Any:
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
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
        return type(self).__name__

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


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)
    _hooked = True  # the engine must look at the leaf's own hooks before accumulating

    def __init__(self, variable: Tensor) -> None:
        self.next_functions = ()
        self._sequence_nr = sys.maxsize  # run as soon as ready, like PyTorch
        self._saved = ()
        self.variable = variable

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
            self.variable._accumulate_grad(grad)
        return ()
