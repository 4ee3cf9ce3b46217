"""PyTorch's saved attributes on op nodes: ``(a * b).grad_fn._saved_self``, ``_saved_dim``...

Each op's node class gets one read-only property per attribute, made with the class (once per
op, on first use), so recording a node costs nothing more: a value is looked up only when read,
from what the node already keeps (a saved slot, a param, an input's shape).

What an op exposes is derived from its backward rules' parameter names (an input's name, a
param's name, ``result``, ``<input>_shape`` becoming ``<input>_sym_sizes``), or declared in its
``Op`` entry with ``saved=`` when PyTorch's names differ: a mapping from PyTorch's name to one of
ours, or a name that is both. Ours are the rule vocabulary plus ``<input>_sym_numel`` and
``<input>_dim`` (its number of dims). Where PyTorch keeps a value that ours holds inside another
(a pool's ``kernel_size`` in its ``cfg`` tuple), the mapping's value is ``derived(ours, read)``:
PyTorch's value is ``read`` of ours, computed when the attribute is read.

>>> import retrograd as rg
>>> a = rg.ones(2, 3, requires_grad=True)
>>> s = a.sum(1, keepdim=True)
>>> s.grad_fn._saved_keepdim, s.grad_fn._saved_self_sym_sizes
(True, (2, 3))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..autograd.graph import FREED_MESSAGE, FREED_TYPE, peek_saved, unpack_saved
from ..autograd.graph_hooks import RawSavedTensor
from ..tensor import Tensor

if TYPE_CHECKING:
    from .op import Op
    from .plan import Plan


class Derived(tuple):  # type: ignore[type-arg]
    """``(spec, read)``: a saved attribute PyTorch keeps on its own that ours holds inside ``spec``
    (a param, a shape...): its value is ``read(value of spec)``."""

    __slots__ = ()

    @property
    def spec(self) -> str:
        return self[0]  # type: ignore[no-any-return]

    @property
    def read(self) -> Callable[[Any], Any]:
        return self[1]  # type: ignore[no-any-return]


def derived(spec: str, read: Callable[[Any], Any]) -> Derived:
    """A ``saved=`` value: PyTorch's attribute is ``read`` of our ``spec`` (``derived("cfg", itemgetter(0))``)."""
    return Derived((spec, read))


Spec = str | Derived


def saved_names(op: Op | Plan) -> dict[str, Spec]:
    """PyTorch's attribute names (without ``_saved_``) → our spec, for ``op``'s node class."""
    declared: Sequence[str] | Mapping[str, Spec] | None = op.saved_names
    if declared is not None:
        if isinstance(declared, Mapping):
            return dict(declared)
        return {name: name for name in declared}
    from .op import PARAM, SAVED, SHAPE, VERSIONED

    names: dict[str, Spec] = {}
    for specs in (*op.rule_args, op.joint_args):
        for kind, index in specs:
            if kind == SAVED:
                if index < op.n_inputs:
                    name = op.inputs[index]
                else:
                    k = index - op.n_inputs
                    name = "result" if op.n_outputs == 1 else f"result{k}"
            elif kind == PARAM or kind == VERSIONED:
                name = op.params[index]
            elif kind == SHAPE:
                name = f"{op.inputs[op.diff_inputs[index]]}_sym_sizes"  # (index: the input's edge)
            else:  # dtypes, ``needs``, variadic shapes: PyTorch keeps no such attribute
                continue
            names[name] = name
    return names


def saved_properties(op: Op) -> dict[str, property]:
    """``{"_saved_self": property, "_raw_saved_self": property, ...}`` to put in ``op``'s node
    class: one ``_saved_`` per attribute, and a ``_raw_saved_`` (a ``RawSavedTensor``) for each
    that is a saved tensor, as PyTorch's nodes have."""
    properties = {}
    for torch_name, spec in saved_names(op).items():
        properties[f"_saved_{torch_name}"] = _property(op, torch_name, spec)
        slot = _saved_slot(op, spec)
        if slot is not None:
            properties[f"_raw_saved_{torch_name}"] = _raw_property(torch_name, slot)
    return properties


def _saved_slot(op: Op | Plan, spec: Spec) -> int | None:
    """The ``_saved`` slot that ``spec`` reads (an input or an output), or None (a param, a shape,
    a value derived from one)."""
    if isinstance(spec, Derived):
        return None
    if spec in op.inputs:
        return op.inputs.index(spec)
    if spec == "result":
        return op.n_inputs
    if spec.startswith("result") and spec[6:].isdigit():
        return op.n_inputs + int(spec[6:])
    return None


def _raw_property(torch_name: str, slot: int) -> property:
    def get(node: Any) -> RawSavedTensor:
        return RawSavedTensor(node, slot, lambda: _was_saved(node, slot))

    get.__name__ = f"_raw_saved_{torch_name}"
    return property(get, doc=f"PyTorch's ``_raw_saved_{torch_name}``: the saved value, to register hooks on.")


def check_saved_names(op: Op | Plan) -> None:
    """Refuse, when the op table is built, a declared name that refers to nothing the node keeps."""
    for torch_name, spec in saved_names(op).items():
        if _getter(op, spec) is None:
            raise ValueError(f"{op.name}: saved attribute {torch_name!r} refers to unknown {spec!r}")


def _property(op: Op, torch_name: str, spec: Spec) -> property:
    getter = _getter(op, spec)
    assert getter is not None  # (checked when the op was defined)
    getter.__name__ = f"_saved_{torch_name}"
    ours = f"read from ``{spec.spec}``" if isinstance(spec, Derived) else f"``{spec}``"
    return property(getter, doc=f"PyTorch's ``_saved_{torch_name}`` (retrograd's {ours}).")


def _getter(op: Op | Plan, spec: Spec) -> Callable[[Any], Any] | None:
    if isinstance(spec, Derived):
        base = _getter(op, spec.spec)
        if base is None:
            return None
        read = spec.read
        return lambda node: read(base(node))
    slot = _saved_slot(op, spec)
    if slot is not None:
        return _slot_getter(slot)
    if spec in op.params:
        index = op.params.index(spec)
        if index in (op.versioned_params or ()):  # kept as (tensor, version): checked, as PyTorch's unpacking
            from .op import versioned_param

            return lambda node: versioned_param(_param(node, index), node)
        return lambda node: _param(node, index)
    reductions: tuple[tuple[str, Callable[[tuple[int, ...]], Any]], ...] = (
        ("_sym_sizes", tuple), ("_sym_numel", prod), ("_dim", len))
    for suffix, reduce in reductions:
        if spec.endswith(suffix) and spec[: -len(suffix)] in op.inputs:
            position = op.inputs.index(spec[: -len(suffix)])
            if position not in op.diff_inputs:
                return None
            return _shape_getter(op.diff_inputs.index(position), position, reduce)
    return None


def _shape_getter(edge: int, slot: int, reduce: Callable[[tuple[int, ...]], Any]) -> Callable[[Any], Any]:
    def get(node: Any) -> Any:
        shape = _input_shape(node, edge, slot)
        return None if shape is None else reduce(shape)

    return get


def _slot_getter(slot: int) -> Callable[[Any], Any]:
    def get(node: Any) -> Any:
        saved = node._saved
        if type(saved) is FREED_TYPE:
            if not _was_saved(node, slot):  # PyTorch: what was never saved reads None even now
                return None
            raise RuntimeError(FREED_MESSAGE)
        value = saved[slot] if slot < len(saved) else None
        if value is None:  # not needed by the rules of the inputs that required grad
            return None
        value = unpack_saved(value, node)  # (version-checked, as PyTorch's unpacking is)
        if isinstance(value, (bool, int, float)):  # a Python number: PyTorch's wrapped scalar
            return Tensor._make(np.array(value))
        return value

    return get


def _was_saved(node: Any, slot: int) -> bool:
    """Whether recording saved ``slot``: the rules of the inputs that had an edge asked for it
    (what ``record`` and the call paths save, recomputed from the edges)."""
    op = node._op
    if op.variadic:
        return bool(op.saves_for[0]) and any(nxt is not None for nxt, _ in node.next_functions)
    for edge, (nxt, _) in enumerate(node.next_functions):
        if nxt is not None and slot in op.saves_for[op.diff_inputs[edge]]:
            return True
    return False


def _param(node: Any, index: int) -> Any:
    params = getattr(node, "_params", ())  # (unset on the fast paths when a call has none)
    value = params[index] if index < len(params) else None
    if isinstance(value, np.ndarray):
        return Tensor._make(value)
    return value


def _input_shape(node: Any, edge: int, slot: int) -> tuple[int, ...] | None:
    """An input's shape: from the node's input metadata when its rules keep it, else from the
    producer of the input (which keeps its output's shape: "Output metadata" in
    docs/architecture.md), else from the input itself if it was saved. None if none of these."""
    meta = getattr(node, "_input_meta", None)
    if meta is not None and meta[edge] is not None:
        return tuple(meta[edge][0])
    producer, nr = node.next_functions[edge]
    if producer is None:
        saved = node._saved
        value = saved[slot] if type(saved) is not FREED_TYPE and slot < len(saved) else None
        return tuple(peek_saved(value).shape) if value is not None else None
    shape = producer._shape
    if shape is None:
        shape = producer._output_meta[nr][0]
    return tuple(shape)
