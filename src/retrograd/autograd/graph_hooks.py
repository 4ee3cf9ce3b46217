"""Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks`` and friends; these names are
also reachable as ``retrograd.autograd.graph.*``).

Inside ``saved_tensors_hooks(pack, unpack)`` every tensor a recorded node saves for backward
(its inputs and its own outputs) is handed to ``pack`` at once, and the node keeps only what
``pack`` returned; backward hands that to ``unpack`` and uses the tensor it returns. Hooks are
thread-local and nest (the innermost pair applies).

Zero cost when unused: the recording paths call save helpers through module globals that are
swapped for the hooked ones (``PackedSaved``) only while some thread has hooks installed
(``on_hooks_change``); the hooked helpers check this thread's stack and fall back to the plain
ones.
"""

from __future__ import annotations

import weakref
from _thread import _local, allocate_lock  # (threading.local and threading.Lock, without importing threading)
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .grad_mode import STATE
from .graph import (
    FREED_TYPE,
    INFERENCE_SAVE_ERROR,
    Node,
    SavedTensor,
    _tensor_class,
    freed_message,
    peek_saved,
    save_input,
    save_output,
    unpack_saved,
)

if TYPE_CHECKING:
    from ..tensor import Tensor

PACK_INPLACE_ERROR = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot "
    "be modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if "
    "you need to perform in-place operations on the input to a pack hook."
)


class _HookState(_local):
    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: str | None = None  # disable_saved_tensors_hooks' message


_LOCAL = _HookState()
_LOCK = allocate_lock()
_listeners: list[Callable[[bool], None]] = []
_installed = [0]  # hook pairs installed, all threads together


def on_hooks_change(listener: Callable[[bool], None]) -> None:
    """Have ``listener(True)`` called when the first pair of hooks is installed (in any thread)
    and ``listener(False)`` when the last is removed; called once now with the current state.
    (How the recording paths, which this layer does not know, swap their save helpers.)"""
    with _LOCK:
        _listeners.append(listener)
        listener(_installed[0] > 0)


def _push(pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
    if _LOCAL.disabled is not None:
        raise RuntimeError(_LOCAL.disabled)
    with _LOCK:
        _LOCAL.stack.append((pack, unpack))
        _installed[0] += 1
        if _installed[0] == 1:
            for listener in _listeners:
                listener(True)


def _pop() -> None:
    with _LOCK:
        _LOCAL.stack.pop()
        _installed[0] -= 1
        if _installed[0] == 0:
            for listener in _listeners:
                listener(False)


def _current() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    local = _LOCAL
    if not local.stack:
        return None
    if local.disabled is not None:
        raise RuntimeError(local.disabled)
    return local.stack[-1]


class saved_tensors_hooks:
    """Pack every tensor saved for backward with ``pack_hook`` and unpack it with
    ``unpack_hook`` when backward needs it (which must return a tensor).

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> packed = []
    >>> with rg.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or len(packed) - 1,
    ...                                            lambda i: packed[i]):
    ...     y = (x * x).sum()
    >>> len(packed)  # x, twice: as the first and the second factor
    2
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc: object) -> None:
        _pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU. As in PyTorch, a CPU tensor is kept as itself
    (``tensor.cpu()``) unless ``pin_memory=True``, which keeps a private copy (everything is on
    the CPU here, so nothing is pinned); ``device_type`` is accepted as in PyTorch.

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> with rg.autograd.graph.save_on_cpu(pin_memory=True):
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(tensor: Tensor) -> tuple[Any, Tensor]:
            return (tensor.device, tensor.detach().clone() if pin_memory else tensor.cpu())

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            return packed[1]

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Make installing saved-tensor hooks (and saving under hooks installed outside) raise
    ``RuntimeError(error_message)`` in this thread, for features that cannot work with them.

    >>> import retrograd as rg
    >>> with rg.autograd.graph.disable_saved_tensors_hooks("not here"):
    ...     try:
    ...         with rg.autograd.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    not here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self.previous = _LOCAL.disabled
        _LOCAL.disabled = self.error_message

    def __exit__(self, *exc: object) -> None:
        _LOCAL.disabled = self.previous

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)

        return wrapper


class PackedSaved:
    """A saved tensor kept as what the pack hook returned, with what unpacking needs to
    reconnect the unpacked tensor to the graph (the saved tensor's grad_fn, or its leaf's
    accumulator, weakly) for double backward. Like PyTorch, no version check: the hooks own
    the value."""

    __slots__ = ("packed", "unpack_hook", "is_output", "output_nr", "requires_grad", "grad_fn", "accumulator")

    def __init__(self, tensor: Tensor, hooks: tuple[Callable[[Any], Any], Callable[[Any], Any]], is_output: bool) -> None:
        from .engine import grad_accumulator

        if tensor._is_inference:
            raise RuntimeError(INFERENCE_SAVE_ERROR)
        pack, self.unpack_hook = hooks
        counter = tensor._version_counter
        version = 0 if counter is None else counter.value
        previous_mode = STATE.grad_enabled
        STATE.grad_enabled = False  # packing is not recorded
        try:
            packed = pack(tensor)
        finally:
            STATE.grad_enabled = previous_mode
        counter = tensor._version_counter
        if counter is not None and counter.value != version:
            raise RuntimeError(PACK_INPLACE_ERROR)
        if packed is tensor and is_output:
            packed = tensor.detach()  # the output itself would refer back to this node: a cycle
        self.packed = packed
        self.is_output = is_output
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad
        self.grad_fn = None if is_output else tensor._grad_fn
        self.accumulator = None
        if self.requires_grad and tensor._grad_fn is None:
            self.accumulator = weakref.ref(grad_accumulator(tensor))

    def unpack(self, node: Node) -> Tensor:
        tensor_class = _tensor_class()
        value = self.unpack_hook(self.packed)
        if not isinstance(value, tensor_class):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(value).__name__}"
            )
        out: Tensor = tensor_class._make(value._data)
        if STATE.grad_enabled and self.requires_grad:  # create_graph: stay connected to the graph
            out._requires_grad = True
            if self.is_output:
                out._grad_fn = node
                out._output_nr = self.output_nr
            elif self.grad_fn is not None:
                out._grad_fn = self.grad_fn
                out._output_nr = self.output_nr
            else:
                out._accumulator = self.accumulator
        return out


REGISTER_FREED_ERROR = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved variables after calling backward."
)
REGISTER_NONE_ERROR = "Calling register_hooks on a saved tensor with value None is forbidden"
REGISTER_TWICE_ERROR = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of hooks "
    "is allowed at a time."
)


class RawSavedTensor:
    """One value a node saved, as PyTorch's ``node._raw_saved_<name>`` gives it (its
    ``torch._C._autograd.SavedTensor``): ``register_hooks(pack, unpack)`` packs the value now and
    has backward unpack it, as ``saved_tensors_hooks`` would have for this one value;
    ``unpack()`` is the value as backward gets it (None if nothing was saved). A handle on the
    node's slot, made when the attribute is read: nothing is kept per recorded node.

    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.exp()
    >>> y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 0 + 1, lambda p: p)  # backward sees ones
    >>> y.sum().backward(); x.grad
    tensor([1., 1.])
    """

    __slots__ = ("_node", "_slot", "_was_saved")

    def __init__(self, node: Node, slot: int, was_saved: Callable[[], bool]) -> None:
        self._node = node
        self._slot = slot
        self._was_saved = was_saved  # (whether recording saved this slot, for a released node)

    def _value(self) -> Any:
        saved = self._node._saved
        if not saved and type(saved) is FREED_TYPE:
            raise RuntimeError(REGISTER_FREED_ERROR if self._was_saved() else REGISTER_NONE_ERROR)
        return saved[self._slot] if self._slot < len(saved) else None

    def register_hooks(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        """Pack the saved value with ``pack_hook`` now; backward unpacks it with ``unpack_hook``."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            "arg1: collections.abc.Callable) -> None")
        value = self._value()
        if value is None:
            raise RuntimeError(REGISTER_NONE_ERROR)
        if type(value) is PackedSaved:
            raise RuntimeError(REGISTER_TWICE_ERROR)
        if type(value) is tuple:  # an input, kept with its version
            packed = PackedSaved(value[0], (pack_hook, unpack_hook), False)
        else:  # the node's own output: its data, off the graph (as PyTorch keeps a saved output)
            out = _tensor_class()._make(value.data)
            if value.counter is not None:
                out._version_counter = value.counter
            packed = PackedSaved(out, (pack_hook, unpack_hook), True)
            packed.requires_grad = value.requires_grad  # (reconnected to the node when unpacked under create_graph)
            packed.output_nr = value.output_nr
        saved = self._node._saved
        self._node._saved = saved[:self._slot] + (packed,) + saved[self._slot + 1:]

    def unpack(self) -> Any:
        """The saved value as ``_saved_<name>`` gives it (version-checked, or through the unpack
        hook), or None if nothing was saved."""
        saved = self._node._saved
        if not saved and type(saved) is FREED_TYPE:
            if self._was_saved():
                raise RuntimeError(freed_message(saved))
            return None
        value = saved[self._slot] if self._slot < len(saved) else None
        if value is None:
            return None
        value = unpack_saved(value, self._node)
        if isinstance(value, (bool, int, float)):  # a Python number: PyTorch's wrapped scalar
            return _tensor_class()._make(np.array(value))
        return value

    @property
    def data(self) -> Any:
        """The saved tensor, unchecked (what the pack hook returned, once hooks are set), or None."""
        saved = self._node._saved
        if not saved and type(saved) is FREED_TYPE:
            return None
        value = saved[self._slot] if self._slot < len(saved) else None
        if type(value) is PackedSaved:
            return value.packed
        return None if value is None else peek_saved(value)


def hooked_save_input(tensor: Tensor) -> Any:
    """``save_input`` while saved-tensor hooks are installed somewhere."""
    hooks = _current()
    if hooks is None:
        return save_input(tensor)
    return PackedSaved(tensor, hooks, False)


def hooked_save_output(tensor: Tensor) -> Any:
    """``save_output`` (one fresh output) while saved-tensor hooks are installed somewhere."""
    hooks = _current()
    if hooks is None:
        return save_output(tensor)
    return PackedSaved(tensor, hooks, True)


def hooked_save_any_output(tensor: Tensor) -> Any:
    """``SavedTensor(output)`` while saved-tensor hooks are installed somewhere."""
    hooks = _current()
    if hooks is None:
        return SavedTensor(tensor)
    return PackedSaved(tensor, hooks, True)
