"""The graph's objects: ``Node`` (a recorded backward function), ``AccumulateGrad`` (a leaf's
sink), ``SavedTensor`` (a value kept for backward, with the version it had when saved) and
``VersionCounter`` (shared by a tensor, its views and its detached aliases).

The graph is acyclic and holds no reference cycles: a node points to the nodes of its inputs
(``next_functions``) and to what it saved; a node never holds its own output tensor, only that
tensor's array (see "Saved outputs" in docs/architecture.md). Graphs are therefore freed by
reference counting alone.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tensor import Tensor

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

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




class SavedTensor:
    """A tensor saved by a node for its backward, checked against in-place writes on unpack.

    An input is kept as the tensor itself. The node's own output is kept as its array only,
    and unpacked into a fresh tensor whose ``grad_fn`` is the node: this breaks the cycle
    output -> node -> output while keeping double backward connected.
    """

    __slots__ = ("tensor", "data", "counter", "version", "output_nr", "requires_grad")
    tensor: Tensor | None
    data: Any  # the saved output's array, or None for a saved input
    counter: VersionCounter
    version: int
    output_nr: int
    requires_grad: bool

    def __init__(self, tensor: Tensor, is_output: bool) -> None:
        counter = tensor._version_counter
        counter.saved = True
        self.counter = counter
        self.version = counter.value
        if is_output:
            self.tensor = None
            self.data = tensor._data
            self.output_nr = tensor._output_nr
            self.requires_grad = tensor._requires_grad
        else:
            self.tensor = tensor
            self.data = None

    def unpack(self, node: Node) -> Tensor:
        if self.counter.value != self.version:
            raise RuntimeError(self._modified_message(node))
        if self.tensor is not None:
            return self.tensor
        from ..tensor import Tensor  # noqa: F811

        out = Tensor._make(self.data, self.requires_grad)
        out._version_counter = self.counter
        if self.requires_grad:
            out._grad_fn = node
            out._output_nr = self.output_nr
        return out

    def _modified_message(self, node: Node) -> str:
        data = self.tensor._data if self.tensor is not None else self.data
        shape = ", ".join(str(s) for s in data.shape)
        from .._dtype import scalar_type_name

        what = f"[torch.{scalar_type_name(data.dtype)}Tensor [{shape}]]"
        if self.tensor is None:
            what += f", which is output {self.output_nr} of {_short_node_name(node)},"
        elif self.tensor._grad_fn is not None:
            what += f", which is output {self.tensor._output_nr} of {_short_node_name(self.tensor._grad_fn)},"
        message = (
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {what} is at version {self.counter.value}; expected version {self.version} "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute "
            "its gradient, with torch.autograd.set_detect_anomaly(True)."
        )
        sites = [site for version, site in (self.counter.sites or ()) if version > self.version]
        if sites:
            message += (
                f" [retrograd] The tensor was saved by {type(node).__name__}, and modified in place by "
                + "; then ".join(sites) + "."
            )
        return message


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

    ``next_functions`` is one ``(node_or_None, input_nr)`` edge per input; ``apply`` maps the
    gradients of this node's outputs to gradients of its inputs, one per edge.
    Subclasses are created once per op, named as PyTorch names them (``MulBackward0``).
    """

    __slots__ = (
        "next_functions", "num_outputs", "_sequence_nr", "_saved", "_input_meta",
        "_pre_hooks", "_post_hooks", "_tensor_hooks", "_retained", "_metadata", "__weakref__",
    )

    def __init__(self) -> None:
        self.next_functions: tuple[tuple[Node | None, int], ...] = ()
        self.num_outputs = 1
        self._sequence_nr = next_sequence_nr()
        self._saved: tuple[Any, ...] = ()
        self._input_meta: tuple[Any, ...] = ()
        self._pre_hooks: list[Callable[..., Any]] | None = None
        self._post_hooks: list[Callable[..., Any]] | None = None
        self._tensor_hooks: dict[int, list[Callable[..., Any]]] | None = None
        self._retained: dict[int, Any] | None = None
        self._metadata: dict[str, Any] | None = None

    # -- what the engine calls -------------------------------------------------------------
    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors after backward (unless the graph is retained)."""
        if self._saved:
            self._saved = FREED

    def unpack(self, index: int) -> Tensor:
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
        return saved[index].unpack(self)  # type: ignore[no-any-return]

    # -- PyTorch's public Node API ---------------------------------------------------------
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
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._sequence_nr = sys.maxsize  # run as soon as ready, like PyTorch
        self.variable = variable

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        grad = grad_outputs[0]
        if grad is not None:
            self.variable._accumulate_grad(grad)
        return ()
