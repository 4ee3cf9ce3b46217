"""In-place ops: version counters, PyTorch's checks, and rewriting history.

An in-place op ``x.op_(...)`` runs the out-of-place ``op`` on a snapshot of ``x`` that carries
``x``'s history, writes the result into ``x``'s memory, bumps the shared version counter, and
makes the new node ``x``'s ``grad_fn``. When ``x`` is a view, the base's history is rewritten
instead with a ``CopySlices`` node (as in PyTorch), and the view's ``grad_fn`` is regenerated
from the base as an ``AsStridedBackward0`` (see "Views" in docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dtype import _category, scalar_type_name
from ..autograd.engine import gradient_edge, note_copied_edges
from ..autograd.forward_ad import DUAL
from ..autograd.grad_mode import STATE
from ..autograd.graph import FREED, Node, mark_made_late
from ..tensor import Tensor
from . import op as _op_module
from .op import Op, apply, forward_arrays, record
from .shape import put_positions, take_positions

_make = Tensor._make

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation."
INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)
MULTI_OUTPUT_VIEW_ERROR = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of a function that "
    "returns multiple views. Such functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one."
)
CUSTOM_VIEW_ERROR = (
    "Output {nr} of {name} is a view and {what} modified inplace. This view was created inside a custom Function "
    "(or because an input was returned as-is) and the autograd logic to handle view+inplace would override the "
    "custom backward associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)
MULTI_VIEW_ERROR = (
    "Output {nr} of {name} is a view and {what} modified inplace. This view is the output of a function that "
    "returns multiple views. Such functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one."
)
MODE_VIEW_ERROR = (
    "{made} {mode} mode and {what} modified inplace {where}. Given that this use case is "
    "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the {block} block (if you don't want the inplace to be tracked) or both outside "
    "(if you want the inplace to be tracked)."
)
OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)

_ONE_VALUE = ("zero", "fill")  # write one value: PyTorch allows them on an expanded tensor
PARTIAL_OVERLAP_ERROR = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def check_input_overlap(data: np.ndarray, inputs: Sequence[Any]) -> None:
    """PyTorch's refusal to write into memory an input also reads from, unless the two are the
    very same elements (``x.add_(x)``): NumPy would give an order-dependent result."""
    for x in inputs:
        if not isinstance(x, Tensor):
            continue
        other = x._data
        if other is data or other.base is None and data.base is None:  # one owner each: disjoint
            continue
        if np.may_share_memory(data, other) and _partial_overlap(data, other):
            raise RuntimeError(PARTIAL_OVERLAP_ERROR)


def _dense(a: np.ndarray) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the elements fill a block with no gaps."""
    expected = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _partial_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """PyTorch's memory-overlap test: only dense layouts are compared (others are 'too hard' and
    pass); the same block with the same strides is a full overlap, which is allowed."""
    if not a.size or not b.size or not _dense(a) or not _dense(b):
        return False
    a_begin, b_begin = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
    if a_begin == b_begin and a_end == b_end:
        return a.strides != b.strides
    return a_begin < b_end and b_begin < a_end


def view_rebase_error(view: Tensor, direct: bool) -> str | None:
    """PyTorch's refusal of an in-place write that would rewrite the history of ``view`` (made
    in no_grad or inference mode, by a custom Function, or as one of several view outputs), or
    None when it is allowed. ``direct``: the view itself is written, else its base was."""
    kind = view._creation_meta
    if kind is None:
        return None
    fn, nr = view._grad_fn, view._output_nr
    name = re.sub(r"Backward\d*$", "", type(fn).__name__)
    what = "is being" if direct else "its base or another view of its base has been"
    if kind == "custom":
        return CUSTOM_VIEW_ERROR.format(nr=nr, name=name, what=what)
    if kind == "multi":
        return MULTI_VIEW_ERROR.format(nr=nr, name=name, what=what)
    made = "A view was created in" if fn is None else f"Output {nr} of {name} is a view of a view which was created in"
    if kind == "inference":
        return MODE_VIEW_ERROR.format(made=made, mode="inference", what=what, where="in normal mode",
                                      block="inference_mode")
    return MODE_VIEW_ERROR.format(made=made, mode="no_grad", what=what, where="with grad mode enabled", block="no_grad")


def check_inplace(self: Tensor, inputs: Sequence[Any] = (), fill: bool = False) -> None:
    """PyTorch's refusals, before anything is written (``inputs``: the op's other inputs;
    ``fill``: the op writes one value, which an expanded tensor allows)."""
    if self._creation_meta is not None and STATE.grad_enabled and (
            self._requires_grad or self._base._requires_grad  # type: ignore[union-attr]
            or any(isinstance(x, Tensor) and x._requires_grad for x in inputs)):
        message = view_rebase_error(self, True)
        if message is not None:
            raise RuntimeError(message)
    if self._is_inference and not STATE.inference:
        raise RuntimeError(INFERENCE_INPLACE_ERROR)
    if STATE.grad_enabled:
        base = self._base
        if base is None:
            if self._requires_grad and self._grad_fn is None:
                raise RuntimeError(LEAF_ERROR)
        elif base._requires_grad and base._grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_ERROR)
        else:
            op = getattr(self._grad_fn, "_op", None)
            if op is not None and op.view and op.n_outputs != 1:
                name = type(self._grad_fn).__name__.replace("Backward0", "")
                raise RuntimeError(MULTI_OUTPUT_VIEW_ERROR.format(nr=self._output_nr, name=name))
    data = self._data
    if not fill and 0 in data.strides and data.size and any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)):
        raise RuntimeError(OVERLAP_ERROR)


def _write(self: Tensor, out: np.ndarray, name: str) -> None:
    data = self._data
    if out.shape != data.shape:
        try:
            out = np.broadcast_to(out, data.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape {list(data.shape)} doesn't match the broadcast shape {list(out.shape)}"
            ) from None
    if out.dtype != data.dtype:
        if name == "abs_" and data.dtype.kind == "c":
            # (a complex tensor's abs is real: PyTorch refuses to store it back, with its own message)
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        if _category(out.dtype) > _category(data.dtype):
            raise RuntimeError(
                f"result type {scalar_type_name(out.dtype)} can't be cast to the desired output type "
                f"{scalar_type_name(data.dtype)}"
            )
    np.copyto(data, out, casting="unsafe")
    self._counter().bump(name)


def _write_with_ufunc(ufunc: Any, self: Tensor, other: Any, params: Sequence[Any]) -> bool:
    """``self op= other`` straight into ``self``'s memory (an optimizer's update under no_grad):
    no temporary the size of the parameter. Only when PyTorch's result dtype is ``self``'s;
    anything unusual returns False and takes the general path (and its errors)."""
    data = self._data
    operand: Any
    if isinstance(other, Tensor):
        operand = other._data
        if operand.dtype != data.dtype:
            return False
    elif (type(other) is float or type(other) is int) and data.dtype.kind in "fV":
        if type(other) is int and not -(1 << 63) <= other < 1 << 64:
            return False  # PyTorch's OverflowError, from the general path
        operand = other
    else:
        return False
    alpha = params[0] if params else 1
    if alpha != 1:
        with np.errstate(all="ignore"):  # (rare: add_/sub_ with alpha)
            operand = np.multiply(operand, alpha)
    try:
        ufunc(data, operand, out=data)
    except (ValueError, TypeError):  # (NumPy refuses bool - bool: the general path raises PyTorch's error)
        return False
    except RuntimeWarning:  # a filter made NumPy's inf/nan warning an error: raised after the write
        pass
    return True


# Set by ``func/_vmap.py``: in-place ops on ``vmap``'s batched tensors (see ``_op._BATCHING``).
_batched_apply_inplace: Any = None


def apply_inplace(op: Op, args: Sequence[Any]) -> Tensor:
    """Run ``op`` in place on ``args[0]``; returns ``args[0]``."""
    if _op_module._BATCHING and any(type(a) is _op_module._BatchedTensor for a in args):
        return _batched_apply_inplace(op, args)  # type: ignore[no-any-return]
    if DUAL[0] is not None:  # forward AD: the tangent is updated too
        from .forward import apply_inplace_dual

        return apply_inplace_dual(op, args, apply_inplace)
    self: Tensor = args[0]
    inputs = args[: op.n_inputs]
    check_inplace(self, inputs, op.name in _ONE_VALUE)
    if op.n_inputs > 1 and isinstance(inputs[-1], Tensor) or op.n_inputs > 2:  # (not for p.mul_(0.9))
        check_input_overlap(self._data, inputs[1:])
    params = args[op.n_inputs:]
    name = op.name + "_"
    track = STATE.grad_enabled and op.differentiable and any(
        isinstance(x, Tensor) and x._requires_grad for x in inputs
    )
    if not track:
        if op.inplace_ufunc is not None and _write_with_ufunc(op.inplace_ufunc, self, inputs[1], params):
            self._counter().bump(name)
            return self
        _write(self, forward_arrays(op, inputs, params), name)
        return self

    snapshot = _make(self._data.copy() if op.saves_self else self._data, self._requires_grad)
    if self._requires_grad:
        snapshot._grad_fn, snapshot._output_nr = gradient_edge(self)  # type: ignore[misc,assignment]
    result = apply(op, (snapshot, *inputs[1:], *params))
    _write(self, result._data, name)
    node = result._grad_fn
    if node is None:
        return self
    _rebind_saved_output(node, result, self)
    if node._shape is not None:  # the node's output is ``self`` now (in its dtype)
        node._shape, node._dtype = self._data.shape, self._data.dtype
    base = self._base
    if base is None:
        old = self._grad_fn, self._output_nr
        self._grad_fn, self._output_nr, self._requires_grad = node, 0, True
        _move_retain(self, old)
        return self
    positions = view_positions(self._data, base._data)
    copy = CopySlices(base, positions, node, self)
    _set_base_history(base, copy)
    regenerate_view_grad_fn(self)
    return self


def _move_retain(tensor: Tensor, old: tuple[Any, int]) -> None:
    """``retain_grad()`` survives an in-place op: the tensor's new node retains it (PyTorch)."""
    fn, nr = old
    if fn is not None and fn._retained is not None:
        ref = fn._retained.get(nr)
        if ref is not None and ref() is tensor:
            del fn._retained[nr]
            tensor._grad_fn._retain(tensor._output_nr, tensor)


def _set_base_history(base: Tensor, copy: Node) -> None:
    old = base._grad_fn, base._output_nr
    base._grad_fn, base._output_nr, base._requires_grad = copy, 0, True
    _move_retain(base, old)


def rebase_dirty_view(view: Tensor, node: Node, input_nr: int) -> None:
    """A custom Function wrote into ``view`` (its tensor input ``input_nr``, marked dirty): the
    base's history becomes a ``CopySlices`` around the Function's node, as for any in-place op."""
    base: Tensor = view._base  # type: ignore[assignment]
    positions = view_positions(view._data, base._data)
    base_edge = (gradient_edge(base) if base._requires_grad else None) or (None, 0)
    copy = CopySlices(base, positions, node, view)
    edges = list(node.next_functions)
    edges[input_nr] = base_edge
    copy.next_functions = tuple(edges)
    note_copied_edges(node.next_functions)  # (node too may be reached: a saved output unpacked under create_graph)
    copy._view_input = input_nr
    _set_base_history(base, copy)
    regenerate_view_grad_fn(view)


def _rebind_saved_output(node: Node, result: Tensor, target: Tensor) -> None:
    """The node saved ``result``; the value now lives in ``target`` (and is at its new version)."""
    for saved in node._saved or ():
        if getattr(saved, "data", None) is result._data:
            saved.data = target._data
            counter = target._counter()
            saved.counter = counter
            saved.version = counter.current_mark()  # (a mark, so the counter drops sites no one needs)


def _addresses(a: np.ndarray) -> np.ndarray:
    addr = np.full(a.shape, a.__array_interface__["data"][0], dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[axis] = n
        addr = addr + (np.arange(n, dtype=np.int64) * stride).reshape(shape)
    return addr


def view_positions(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """For each element of ``view``, its position in ``base`` flattened in C order.

    Works for any chain of views (slices, transposes, selects, diagonals...) because it maps
    memory addresses; only used on the rare paths (in-place on a view, stale view history).
    """
    base_addr = _addresses(base).reshape(-1)
    order = np.argsort(base_addr, kind="stable")
    sorted_addr = base_addr[order]
    view_addr = _addresses(view)
    idx = np.clip(np.searchsorted(sorted_addr, view_addr), 0, len(sorted_addr) - 1)
    if not np.array_equal(sorted_addr[idx], view_addr):
        raise RuntimeError("internal error: a view does not lie inside its base")
    return order[idx]


def regenerate_view_grad_fn(view: Tensor) -> Any:
    """Give ``view`` a fresh ``AsStridedBackward0`` from its base's current history."""
    base = view._base
    if base is not None and view._creation_meta is not None and STATE.grad_enabled and base._requires_grad:
        message = view_rebase_error(view, False)
        if message is not None:
            raise RuntimeError(message)
    old = view._grad_fn, view._output_nr
    view._view_version = view._counter().value
    if base is None or not base._requires_grad or not STATE.grad_enabled and view._grad_fn is None:
        return view._grad_fn
    record(take_positions, (base,), (view_positions(view._data, base._data),), (view,))
    mark_made_late(view._grad_fn)  # (made on a use after a write: maybe while that use's node records its edges)
    _move_retain(view, old)
    return view._grad_fn


class CopySlices(Node):
    """The base's new history after an in-place op on one of its views.

    Its gradient for the base is the incoming gradient with the view's region replaced by what
    the in-place op's node returns for that region; the op's other inputs get the rest.
    """

    __slots__ = ("fn", "positions", "_view_meta")
    _view_input = 0  # which of fn's inputs is the view (a custom Function's dirty input may be any)

    def __init__(self, base: Tensor, positions: np.ndarray, fn: Node, view: Tensor) -> None:
        super().__init__()
        self.fn = fn
        self.positions = positions
        base_edge = gradient_edge(base) if base._requires_grad else None
        self.next_functions = ((base_edge or (None, 0)),) + fn.next_functions[1:]
        note_copied_edges(fn.next_functions[1:])  # (fn may be reached too: a saved output unpacked under create_graph)
        self._shape, self._dtype = base._data.shape, base._data.dtype
        self._view_meta = (view._data.shape, view._data.dtype)
        self._saved = fn._saved  # what it keeps is what its fn keeps (released with it)

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        grad = grad_outputs[0]
        assert grad is not None
        region = take_positions(grad, self.positions)
        k = self._view_input
        if k:
            fn_grads = self.fn.apply([region])
            fn_grads = (fn_grads[k],) + tuple(fn_grads[:k]) + tuple(fn_grads[k + 1:])
        else:
            fn_grads = self.fn.apply([region])
        region_grad = fn_grads[0]
        if region_grad is None:
            # PyTorch zeroes the region (not ``region * 0``, which an inf or NaN gradient makes NaN).
            region_grad = Tensor._make(np.zeros(region._data.shape, region._data.dtype))
        else:
            shape, dtype = self._view_meta
            if tuple(region_grad.shape) != shape:
                region_grad = region_grad.sum_to_size(shape)
        base_grad = put_positions(grad, region_grad, self.positions)
        if k:
            rest = fn_grads[1:]
            return tuple(rest[:k]) + (base_grad,) + tuple(rest[k:])
        return (base_grad,) + tuple(fn_grads[1:])

    def release(self, freed: tuple[Any, ...] = FREED) -> None:
        self.fn.release(freed)
        super().release(freed)

    def name(self) -> str:
        """PyTorch's C++ name for this node (its Python class name stays ``CopySlices``).

        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True).clone()
        >>> x[0] = 5.0
        >>> x.grad_fn.name()
        'torch::autograd::CopySlices'
        """
        return "torch::autograd::CopySlices"
