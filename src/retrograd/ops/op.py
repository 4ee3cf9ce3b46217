"""The op-definition form and the one dispatch path every op goes through.

An op is one ``Op`` entry: its NumPy forward beside one backward rule per input, written in
retrograd's own ops (so ``create_graph=True`` differentiates them again with no extra code)::

    mul = Op("mul", np.multiply, node="MulBackward0", inputs=("self", "other"), dtype="promote",
             grads=(lambda grad, other: grad * other,
                    lambda grad, self: grad * self))

A rule's first parameter receives the gradient of the output (a tuple of them for ops with
several outputs); its other parameters are named after what it needs, and only that is kept
for backward: an input's name (the saved input), ``result`` (the saved output), ``<input>_shape``,
``<input>_dtype``, a param's name, or ``needs`` (which inputs want a gradient). A single callable
instead of a tuple is a joint rule that returns every input's gradient at once.

``apply`` runs the forward and, only when grad mode is on and some input requires grad,
records one node. ``apply_inplace`` is the in-place counterpart (version counters, history
rewriting, CopySlices for views).
"""

from __future__ import annotations

import linecache
import marshal
import os
import sys
import warnings
import weakref
import zlib
from _thread import RLock
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._dtype import REDUCED_FLOATS, get_default_dtype, result_type
from ..autograd.anomaly_mode import ANOMALY, GENERATED_FILE_PREFIX, remember_creation
from ..autograd.engine import gradient_edge
from ..autograd.forward_ad import DUAL
from ..autograd.grad_mode import INFERENCE_CONTEXTS, STATE
from ..autograd.graph import (
    FREED,
    FREED_TYPE,
    GUARD_EVERY,
    Node,
    SavedTensor,
    freed_message,
    large_graph_guard,
    new_counter,
    next_sequence_nr,
    save_input,
    save_output,
    unpack_input,
    unpack_saved,
)
from ..autograd.graph_hooks import (
    PackedSaved,
    hooked_save_any_output,
    hooked_save_input,
    hooked_save_output,
    on_hooks_change,
)
from ..tensor import Tensor
from .declaration import Declaration
from .plan import DTYPE, NEEDS, PARAM, SAVED, SAVED_ALL, SHAPE, SHAPES, VERSIONED, Plan
from .saved_attrs import saved_properties

_make = Tensor._make


def _first_propagate(op: Op, inputs: Sequence[Any], params: Sequence[Any], result: Any) -> None:
    """Forward AD (only while a dual level is active): ``ops/forward.py``, loaded on first use,
    whose ``propagate`` then takes the name ``propagate_tangents`` (a function-level import costs
    microseconds per call)."""
    global propagate_tangents
    from .forward import propagate

    propagate_tangents = propagate
    propagate(op, inputs, params, result)


propagate_tangents: Callable[[Op, Sequence[Any], Sequence[Any], Any], None] = _first_propagate



GUARD_MASK = GUARD_EVERY - 1
NO_EDGE = (None, 0)  # shared by every untracked input: one tuple fewer per op for the collector

# What each kind of rule argument (the codes: ops/plan.py) reads from the node at backward time:
# the one definition of their meaning. The generated ``apply`` writes these expressions inline;
# the generic loop (``OpNode.apply``) runs them compiled into one getter per rule (``_arg_getter``). The only other
# reading of a saved input is its inlined unpack in ``_generate_apply`` (``self.saved(i)``
# without the call).
_READ_PARAM = "self._params[{i}]"
ARG_EXPRESSIONS = {
    SAVED: "self.saved({i})",
    PARAM: _READ_PARAM,
    VERSIONED: "versioned_param(" + _READ_PARAM + ", self)",  # (version-checked: ``versioned=``)
    SHAPE: "self._input_meta[{i}][0]",
    DTYPE: "self._input_meta[{i}][1]",
    NEEDS: "tuple(nxt is not None for nxt, _ in self.next_functions)",
    SHAPES: "tuple(m[0] for m in self._input_meta)",
    SAVED_ALL: "saved_all(self)",
}

# ``RETROGRAD_GENERIC_BACKWARD=1`` (read once, at import): every node class runs the generic rule
# loop below instead of its generated ``apply``, to tell a fault of the generator from one of a
# rule. Results are the same either way (tests/ops/test_op_core.py runs opdb entries under it).
GENERIC_BACKWARD = os.environ.get("RETROGRAD_GENERIC_BACKWARD", "") not in ("", "0")


def keep_versioned(params: tuple[Any, ...], positions: tuple[int, ...]) -> tuple[Any, ...]:
    """``params`` as a node keeps them: a Tensor at a ``versioned=`` position saved with its
    version, as an input is (``save_input``; packed under saved-tensor hooks); an index key of
    several items (a tuple: ``x[:, i]``, ``x[i, j]``) as a list of its items, each tensor so saved;
    the rest as given."""
    kept = list(params)
    for i in positions:
        value = kept[i]
        if isinstance(value, Tensor):
            kept[i] = _save(value)
        elif type(value) is tuple:
            kept[i] = [_save(k) if isinstance(k, Tensor) else k for k in value]
    return tuple(kept)


def versioned_param(value: Any, node: Node) -> Any:
    """A ``versioned=`` param as its rule reads it: the tensor, if it was not written in place
    since the forward (PyTorch's version error, the one of a saved input, if it was)."""
    kind = type(value)
    if kind is tuple and isinstance(value[0], Tensor):  # (not an index's key of several arrays)
        if value[0]._version_counter.value != value[1]:  # type: ignore[union-attr]  # (saving made its counter)
            unpack_input(value, node)  # raises
        return value[0]
    if kind is PackedSaved:
        return value.unpack(node)
    if kind is FREED_TYPE:  # released by a backward (``release_versioned``)
        raise RuntimeError(freed_message(value))
    if kind is list:  # an index key kept item by item (``keep_versioned``): checked in key order
        items = []
        for item in value:
            kind = type(item)
            if kind is tuple:  # (a saved tensor: the only tuples of a key)
                if item[0]._version_counter.value != item[1]:
                    unpack_input(item, node)  # raises
                item = item[0]
            elif kind is PackedSaved:
                item = item.unpack(node)
            items.append(item)
        return tuple(items)
    return value


# The ``_saved`` of a node that saves no tensor but keeps ``versioned=`` params: not empty, so that
# the engine, which releases only a node with something saved, releases it (``release_versioned``).
KEPT_PARAMS_ONLY: tuple[Any, ...] = (None,)


def release_versioned(node: OpNode, freed: tuple[Any, ...] = FREED) -> None:
    """``Node.release`` for the node of an op with ``versioned=`` params: they go with its saved
    tensors (a second backward through it raises PyTorch's error, as for a saved input)."""
    if node._saved:
        node._saved = freed
    try:
        params = node._params
    except AttributeError:  # (none given)
        return
    kept = list(params)
    for i in node._op.versioned_params:
        kept[i] = freed
    node._params = tuple(kept)


def versioned_array(value: Any) -> Any:
    """A ``versioned=`` param as an array, for forwards and rules: callers give a Tensor (so that
    the node keeps its version), internal ones (vmap's batching rules, a compiled graph's replay)
    an array."""
    return value._data if isinstance(value, Tensor) else value


def saved_all(node: Node) -> tuple[Any, ...]:
    """A variadic op's saved inputs, all of them unpacked."""
    saved = node._saved
    if not saved and type(saved) is FREED_TYPE:
        raise RuntimeError(freed_message(saved))
    return tuple(unpack_saved(v, node) for v in saved[: len(node.next_functions)])


class OpNode(Node):
    """A node recorded by an ``Op``; its class (``MulBackward0``...) is made once per op."""

    __slots__ = ("_params", "_input_meta")
    _op: Op
    _params: tuple[Any, ...]
    _input_meta: tuple[Any, ...]  # (shape, dtype) per edge; recorded only for ops whose rules read it

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        """The generic rule loop: joint rules, several outputs, and every op under
        ``RETROGRAD_GENERIC_BACKWARD=1``. One-output ops with a rule per input otherwise get a
        generated ``apply`` in their node class, made with the class (``_generate_apply``)."""
        op = self._op
        if op.n_outputs == 1 and self.num_outputs == 1:
            grad: Any = grad_outputs[0]
        else:
            grad = tuple(
                g if g is not None else _zeros_for_output(self, k) for k, g in enumerate(grad_outputs)
            )
        getters = op.arg_getters
        joint = op.joint_rule
        if joint is not None:
            grads = tuple(joint(grad, *getters[0](self)))
            return tuple(g if nxt is not None else None for g, (nxt, _) in zip(grads, self.next_functions))
        return tuple(
            None if nxt is None else rule(grad, *get(self))  # type: ignore[misc]  # (edges have rules)
            for (nxt, _), (rule, _), get in zip(self.next_functions, op.edge_rules, getters)
        )


def _where(rule: Any) -> str:
    """``file:line`` of a rule's definition, the path from the package root when inside it."""
    code = getattr(rule, "__code__", None)
    if code is None:
        return repr(rule)
    path = code.co_filename.replace(os.sep, "/")
    cut = path.rfind("/retrograd/")
    return f"{path[cut + 1:] if cut >= 0 else path}:{code.co_firstlineno}"


def _compile(source: str, filename: str, namespace: dict[str, Any], name: str) -> Any:
    """Compile generated source and register it with ``linecache`` (as ``torch.fx`` does), so
    that tracebacks, ``inspect.getsource`` and pdb show its lines."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(_code_for(source, filename), namespace)  # noqa: S102
    return namespace[name]


_CACHED_SOURCE_MIN = 4096  # smaller sources compile in well under a millisecond


def _code_for(source: str, filename: str) -> Any:
    """``compile(source, filename)``, cached like a ``.pyc`` for the large sources made at import
    (the recording paths; the public forms were, until each was made on first lookup): compiling
    them was a sixth of ``import retrograd``.
    The cache file holds the source too and is used only when it matches exactly; where
    ``__pycache__`` cannot be written, it simply compiles."""
    if len(source) < _CACHED_SOURCE_MIN:
        return compile(source, filename, "exec")
    key = zlib.crc32(f"{filename}\n{source}".encode())
    path = os.path.join(os.path.dirname(__file__), "__pycache__",
                        f"generated.{sys.implementation.cache_tag}.{key:08x}.marshal")
    try:
        with open(path, "rb") as f:
            cached_source, code = marshal.loads(f.read())
        if cached_source == source and code.co_filename == filename:
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "wb") as f:
            f.write(marshal.dumps((source, code)))
        os.replace(partial, path)  # whole or not at all, even with several processes importing
    except OSError:
        pass
    return code


def _arg_getter(op: Op, specs: tuple[tuple[int, int], ...], label: str) -> Callable[[Node], tuple[Any, ...]]:
    """One rule's arguments as a function of the node, made from ``ARG_EXPRESSIONS``."""
    items = "".join(ARG_EXPRESSIONS[kind].format(i=index) + ", " for kind, index in specs)
    source = f"def args(self):  # arguments of {label} of op {op.name!r}\n    return ({items})\n"
    filename = f"{GENERATED_FILE_PREFIX}{op.node_name} arguments of {label}>"
    return _compile(source, filename, {"saved_all": saved_all, "versioned_param": versioned_param}, "args")  # type: ignore[no-any-return]


# -- Rules on arrays ----------------------------------------------------------------------------
# A backward rule is written in retrograd's ops so that ``create_graph=True`` records it. When
# nothing is recorded (grad mode off, as in a plain backward or the second backward of a
# Hessian-vector product; no forward-AD level; no inference mode), those op calls only wrap and
# unwrap arrays: through the call paths, ``grad.mm(mat2.t())`` costs a quarter more than its
# NumPy product. A rule may carry the same computation written on arrays (``with_array_rule``);
# the generated ``apply`` then runs that on the gradient's and saved tensors' arrays whenever
# they are plain float32/float64 arrays of one dtype, and the tensor rule otherwise
# (tests/ops/test_array_rules.py holds the two to the same bits on every op-database sample).

ARRAY_RULE_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def with_array_rule(rule: Callable[..., Any], array_rule: Callable[..., Any],
                    tangent: str | Callable[..., Any] | None = None,
                    pair: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """``rule`` (a backward rule written in ops), carrying ``array_rule``: the same computation on
    NumPy arrays, with the same parameters, for the generated ``apply`` to run when no graph or
    tangent is wanted. It must give the very same array as ``rule``'s result on arrays of one
    float32/float64 dtype (the other arguments, shapes and params, as they are).

    ``tangent`` lets the array form run inside a forward-AD level too, when nothing is recorded
    (the backward pass of forward over reverse): how the rule's result moves with its tensor
    arguments, on arrays. ``"multilinear"``: the rule is linear in each tensor argument
    separately (``grad @ mat2.T``, a view of ``grad``), so the tangent is the sum, in parameter
    order, of ``array_rule`` with one argument replaced by its tangent (the product rule). Or a
    function ``tangent(tangents, *args)`` of the tangents (one per parameter, None where there is
    none) and the array rule's arguments, returning the tangent array, or None for no tangent.
    Either must give the very bits the rule's ops give as the tangent of its result
    (tests/ops/test_array_rules_tangents.py holds them to it): the same terms, summed in the same
    order with the same operand order, since a sum or product of two NaNs keeps the first one's
    bits; where the ops' order is not the parameter order, write the function. ``pair``, where
    the two share work (relu's mask): ``pair(tangents, *args)`` gives both arrays at once, for
    calls where some tangent is there.

    >>> import numpy as np, retrograd as rg
    >>> from retrograd.ops.linalg import mm
    >>> rule = mm.edge_rules[0][0]
    >>> rule.on_arrays(np.ones((1, 2)), np.ones((3, 2))).tolist()
    [[2.0, 2.0, 2.0]]
    >>> rule.tangent_on_arrays((np.ones((1, 2)), None), np.ones((1, 2)), np.ones((3, 2))).tolist()
    [[2.0, 2.0, 2.0]]
    """
    names = rule.__code__.co_varnames[:rule.__code__.co_argcount]
    array_names = array_rule.__code__.co_varnames[:array_rule.__code__.co_argcount]
    if names != array_names:
        raise TypeError(f"array rule parameters {array_names} differ from the rule's {names}")
    rule.on_arrays = array_rule  # type: ignore[attr-defined]
    if tangent == "multilinear":
        rule.tangent_on_arrays = _multilinear_tangent(array_rule)  # type: ignore[attr-defined]
    elif callable(tangent):
        rule.tangent_on_arrays = tangent  # type: ignore[attr-defined]
    elif tangent is not None:
        raise ValueError(f"tangent must be 'multilinear' or a function, not {tangent!r}")
    if pair is not None:
        rule.pair_on_arrays = pair  # type: ignore[attr-defined]
    return rule


def _multilinear_tangent(array_rule: Callable[..., Any]) -> Callable[..., Any]:
    """The tangent of a rule linear in each tensor argument: the product rule on arrays."""
    def tangent(tangents: Sequence[Any], *args: Any) -> Any:
        total = None
        for i, t in enumerate(tangents):
            if t is not None:
                part = array_rule(*args[:i], t, *args[i + 1:])
                total = part if total is None else np.add(total, part)
        return total
    return tangent


def _array_of(x: Any, dtype: Any) -> Any:
    """The array of ``x`` if it is a plain Tensor over a NumPy array of ``dtype``, else None."""
    if type(x) is Tensor:
        data = x._data
        if type(data) is np.ndarray and data.dtype is dtype:
            return data
    return None


def rule_with_tangents(rule: Callable[..., Any], level: Any, args: tuple[Any, ...],
                       tensors: tuple[int, ...]) -> Any:
    """``rule(*args)`` inside a forward-AD level with nothing recorded, by its array forms: the
    result from ``rule.on_arrays``, its tangent from ``rule.tangent_on_arrays``, both on the
    arrays of the tensor arguments (positions ``tensors``, the gradient first) and of their
    tangents at ``level``. Where those are not plain float32/float64 arrays of the gradient's
    dtype (a tangent of another dtype included), or NumPy raises a warning made an error, the
    rule runs in ops, as it would without array forms.

    The backward pass of forward over reverse runs every rule this way: in ops, each op of a
    rule would compute its tangent with ops of its own (tests/ops/test_array_rules_tangents.py
    holds the two to the same bits)."""
    dtype = args[0]._data.dtype
    if dtype not in ARRAY_RULE_DTYPES:
        return rule(*args)
    arrays = list(args)
    tangents: list[Any] = [None] * len(args)
    found = False
    for i in tensors:
        x = args[i]
        data = _array_of(x, dtype)
        if data is None:
            return rule(*args)
        arrays[i] = data
        fw = x._fw_grad
        if fw is not None and fw[0] is level:
            data = _array_of(fw[1], dtype)
            if data is None:
                return rule(*args)
            tangents[i] = data
            found = True
    try:
        pair = getattr(rule, "pair_on_arrays", None) if found else None
        if pair is not None:
            out, tangent = pair(tangents, *arrays)
        else:
            out = rule.on_arrays(*arrays)  # type: ignore[attr-defined]
            tangent = rule.tangent_on_arrays(tangents, *arrays) if found else None  # type: ignore[attr-defined]
    except RuntimeWarning:  # (a filter that raises NumPy's warnings: the ops compute quietly)
        return rule(*args)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    result = _make(out)
    if tangent is not None:
        if type(tangent) is not np.ndarray:
            tangent = np.asarray(tangent)
        if tangent.shape != out.shape:  # (as the op's tangent path: a broadcast operand's tangent)
            tangent = np.broadcast_to(tangent, out.shape)
        result._fw_grad = (level, _make(tangent))
    return result


# What the generated ``apply`` of an op with array rules tests first: ``array``, the gradient's
# array when the rules may run on arrays, else None.
_ARRAY_PATH_TEST = [
    "    array = None",
    "    if not STATE.grad_enabled and DUAL[0] is None and not INFERENCE_CONTEXTS[0] and type(grad) is Tensor:",
    "        array = grad._data",
    "        if type(array) is not _ndarray or array.dtype not in ARRAY_RULE_DTYPES:",
    "            array = None",
]
# The same for an op some of whose rules have a tangent form (``with_array_rule(..., tangent=)``):
# inside a forward-AD level with nothing recorded, ``dual`` is the level, and those rules run
# through ``rule_with_tangents``.
_DUAL_ARRAY_PATH_TEST = [
    "    array = dual = None",
    "    if not STATE.grad_enabled and not INFERENCE_CONTEXTS[0] and type(grad) is Tensor:",
    "        if DUAL[0] is None:",
    "            array = grad._data",
    "            if type(array) is not _ndarray or array.dtype not in ARRAY_RULE_DTYPES:",
    "                array = None",
    "        else:  # forward AD, nothing recorded: the backward pass of forward over reverse",
    "            dual = DUAL[0]",
]
_ARRAY_PATH_NAMES = {"STATE": STATE, "DUAL": DUAL, "INFERENCE_CONTEXTS": INFERENCE_CONTEXTS, "Tensor": Tensor,
                     "_ndarray": np.ndarray, "_asarray": np.asarray, "_wrap": Tensor._make,
                     "ARRAY_RULE_DTYPES": ARRAY_RULE_DTYPES, "rule_with_tangents": rule_with_tangents}


def _generate_apply(op: Op) -> tuple[str, Callable[..., Any]]:
    """Write ``apply`` for a one-output op with a rule per input, as straight-line code.

    Every rule argument becomes a direct read (a saved slot, a param, a shape) instead of a
    lookup at backward time; an edge whose input was not tracked gets ``None`` without calling
    its rule, and a saved input is unpacked only if an edge whose rule reads it is present
    (nothing is saved for the others). The source is registered with ``linecache`` under a name
    that says the node class and op, and each rule call names the rule's own file:line, so a
    failing rule's traceback reads::

        File "<retrograd generated: MulBackward0.apply for op 'mul'>", line 12, in apply
          g1 = rule1(grad, saved0)  # rule for 'other' at retrograd/ops/elementwise.py:40

    ``op.backward_source`` shows the whole source.
    """
    namespace: dict[str, Any] = {"FREED_TYPE": FREED_TYPE, "freed_message": freed_message, "unpack_input": unpack_input,
                                 "PackedSaved": PackedSaved, "saved_all": saved_all,
                                 "versioned_param": versioned_param, **_ARRAY_PATH_NAMES}
    n_inputs = op.n_inputs
    edge_rules = op.edge_rules
    n_edges = len(edge_rules)
    readers: dict[int, list[int]] = {}  # saved input slot -> the edges whose rules read it
    # Per edge: the rule's call, where the rule is, and for a rule with an array form, the lines
    # that compute its gradient ``g<edge>`` (on the arrays, or by the rule).
    calls: list[tuple[str, str, list[str] | None]] = []
    for e, (rule, specs) in enumerate(edge_rules):
        namespace[f"rule{e}"] = rule
        args = ["grad"]
        tensors = []  # the rule's tensor arguments (on the array path, their arrays are passed)
        for kind, index in specs:
            if kind == SAVED and index < n_inputs:
                readers.setdefault(index, [])
                if e not in readers[index]:
                    readers[index].append(e)
                args.append(f"saved{index}")
                tensors.append(f"saved{index}")
            elif kind in (SHAPES, SAVED_ALL):  # variadic ops have a joint rule
                raise AssertionError(f"{op.name}: unexpected rule argument kind {kind}")
            elif kind == SAVED:  # an output: always a SavedTensor (or PackedSaved)
                args.append(f"saved[{index}].unpack(self)")
                tensors.append(f"saved[{index}].unpack(self)")
            else:
                args.append(ARG_EXPRESSIONS[kind].format(i=index).replace("self.next_functions", "edges"))
        where = f"  # rule for {op.inputs[op.diff_inputs[e]]!r} at {_where(rule)}"
        array_rule = getattr(rule, "on_arrays", None)
        if array_rule is None:
            calls.append((f"rule{e}({', '.join(args)})", where, None))
            continue
        # An output is unpacked once, into a name, for both the test and the call.
        unpacks = [f"output{k} = {t}" for k, t in enumerate(tensors) if t.startswith("saved[")]
        names = {t: f"output{k}" for k, t in enumerate(tensors) if t.startswith("saved[")}
        args = [names.get(a, a) for a in args]
        tensors = [names.get(t, t) for t in tensors]
        namespace[f"array_rule{e}"] = array_rule
        call = f"rule{e}({', '.join(args)})"
        array_args = ", ".join("array" if a == "grad" else f"{a}._data" if a in tensors else a for a in args)
        same = "".join(f" and type({t}) is Tensor and {t}._data.dtype is array.dtype" for t in tensors)
        dual_lines = []
        if hasattr(rule, "tangent_on_arrays"):
            positions = tuple(k for k, a in enumerate(args) if a == "grad" or a in tensors)
            dual_lines = ["elif dual is not None:  # nothing recorded, tangents: the rule's array forms",
                          f"    g{e} = rule_with_tangents(rule{e}, dual, ({', '.join(args)}{',' * (len(args) == 1)}), "
                          f"{positions!r})"]
        calls.append((call, where, [
            *unpacks,
            f"if array is not None{same}:  # no graph, no tangent: the rule on the arrays",
            "    try:",
            f"        g{e} = array_rule{e}({array_args})  # at {_where(array_rule)}",
            "    except RuntimeWarning:  # (a filter that raises NumPy's warnings: the ops compute quietly)",
            f"        g{e} = {call}",
            "    else:",
            f"        g{e} = _wrap(g{e} if type(g{e}) is _ndarray else _asarray(g{e}))",
            *dual_lines,
            "else:",
            f"    g{e} = {call}{where}"]))
    lines = ["def apply(self, grad_outputs):",
             f"    # {op.node_name}.apply, generated from the backward rules of op {op.name!r}"
             " (ops/op.py, _generate_apply)",
             "    grad = grad_outputs[0]"]
    if n_edges > 1 or any(kind == NEEDS for _, specs in edge_rules for kind, _ in specs):
        lines.append("    edges = self.next_functions")
    if any(kind == SAVED for _, specs in edge_rules for kind, _ in specs):
        lines += ["    saved = self._saved", "    if not saved and type(saved) is FREED_TYPE:",
                  "        raise RuntimeError(freed_message(saved))"]
    def unpack(k: int, indent: str) -> list[str]:  # the inlined form of ``self.saved(k)``
        return [f"{indent}saved{k} = saved[{k}]",
                f"{indent}if type(saved{k}) is tuple:  # an input saved as (tensor, version)",
                f"{indent}    if saved{k}[0]._version_counter.value != saved{k}[1]:",
                f"{indent}        unpack_input(saved{k}, self)  # raises",
                f"{indent}    saved{k} = saved{k}[0]",
                f"{indent}elif type(saved{k}) is PackedSaved:  # saved under saved_tensors_hooks",
                f"{indent}    saved{k} = saved{k}.unpack(self)"]

    # A slot read by every edge is unpacked first; one read by a single edge, in that edge's
    # branch; one read by some edges, under a test that one of them is present.
    for k in sorted(readers):
        if len(readers[k]) == n_edges:
            lines += unpack(k, "    ")
        elif len(readers[k]) > 1:
            lines.append("    if " + " or ".join(f"edges[{e}][0] is not None" for e in readers[k]) + ":")
            lines += unpack(k, "        ")
    if any(hasattr(rule, "tangent_on_arrays") for rule, _ in edge_rules):
        lines += _DUAL_ARRAY_PATH_TEST
    elif any(hasattr(rule, "on_arrays") for rule, _ in edge_rules):
        lines += _ARRAY_PATH_TEST
    if n_edges == 1:
        call, where, array_lines = calls[0]
        if array_lines is None:
            lines.append(f"    return ({call},){where}")
        else:
            lines += ["    " + line for line in array_lines]
            lines.append("    return (g0,)")
    else:
        lines.append("    " + " = ".join(f"g{e}" for e in range(n_edges)) + " = None")
        for e, (call, where, array_lines) in enumerate(calls):
            lines.append(f"    if edges[{e}][0] is not None:")
            for k in sorted(readers):
                if readers[k] == [e] and n_edges > 1:
                    lines += unpack(k, "        ")
            if array_lines is None:
                lines.append(f"        g{e} = {call}{where}")
            else:
                lines += ["        " + line for line in array_lines]
        lines.append(f"    return ({', '.join(f'g{e}' for e in range(n_edges))})")
    source = "\n".join(lines) + "\n"
    label = f"{op.node_name}.apply for op {op.name!r}"
    if _APPLY_LABELS.setdefault(label, op) is not op:  # (two entries of one name: ops/linalg.py's and ops/nn.py's addmm)
        label += f" of {getattr(op.forward, '__module__', None)}"
    return source, _compile(source, f"{GENERATED_FILE_PREFIX}{label}>", namespace, "apply")


# The op each generated ``apply``'s file name was first given to (while it lives): linecache keeps
# one source per file name, so another op of the same node and op name gets its module added.
_APPLY_LABELS: weakref.WeakValueDictionary[str, Op] = weakref.WeakValueDictionary()


def _zeros_for_output(node: OpNode, k: int) -> Tensor:
    shape, dtype = node._output_meta[k]
    return _make(np.zeros(shape, dtype))


_FIRST_USE = RLock()  # guards making an op's node class and call paths (once each)


class Op:
    """One entry of the op table: forward, node name, and a backward rule per input.

    ``op.declaration`` is the entry as written (``ops/declaration.py``), ``op.plan`` the run plan
    derived from it (``ops/plan.py``, its fields read on the op itself), and the node class and
    call paths are made here on first use."""

    def __init__(
        self,
        name: str,
        forward: Callable[..., Any],
        *,
        node: str | None = None,
        inputs: Sequence[str] = ("self",),
        params: Sequence[str] = (),
        grads: Sequence[Callable[..., Any] | None] | Callable[..., Any] | None = None,
        dtype: str = "same",
        view: bool = False,
        outputs: int = 1,
        differentiable_outputs: Sequence[bool] | None = None,
        saved: Sequence[str] | Mapping[str, Any] | None = None,
        variants: Sequence[str] = (),
        aliases: Sequence[str] = (),
        signature: str | None = None,
        convert: Mapping[str, str] | None = None,
        operators: Sequence[str] = (),
        hot: bool = False,
        inplace_ufunc: Any = None,
        jvp: str | Callable[..., Any] | None = None,
        versioned: Sequence[str] = (),
    ) -> None:
        # The entry as written, validated (``ops/declaration.py``), and the run plan derived
        # from it (``ops/plan.py``).
        self.declaration = Declaration(
            name, forward, node=node, inputs=inputs, params=params, grads=grads, dtype=dtype,  # type: ignore[arg-type]
            view=view, outputs=outputs,
            differentiable_outputs=None if differentiable_outputs is None else tuple(differentiable_outputs),
            saved=saved, variants=variants, aliases=aliases, signature=signature,  # type: ignore[arg-type]
            convert=convert, operators=operators, hot=hot, inplace_ufunc=inplace_ufunc,  # type: ignore[arg-type]
            jvp=jvp, versioned=versioned)  # type: ignore[arg-type]
        # The plan is made on the op's first use (``__getattr__``, ``_make_plan``): building
        # every entry's at import cost ``import retrograd`` milliseconds. The name is the plan's too.
        self.name = name
        # ``check_operands(inputs, params)``: refuses operands by their dtypes before promotion
        # (``bool - x``); run only where promotion is needed (``_cast_arrays``), off the hot paths.
        self.check_operands: Callable[[Sequence[Any], Sequence[Any]], None] | None = None
        self._backward_source: str | None = None

    # Made on first use (``__getattr__``), so that importing the op table builds no classes and
    # no closures: the node class (``MulBackward0``), and the op's own call paths ``op.unary(x)``
    # / ``op.binary(a, b, *params)`` that Tensor methods use.
    node_cls: type[OpNode] | None
    arg_getters: tuple[Callable[[Node], tuple[Any, ...]], ...]  # the generic loop's, one per rule
    unary: Callable[..., Any]
    binary: Callable[..., Any]

    plan: Plan  # with its fields copied onto the op, on first use (``_make_plan``)

    def __getattr__(self, name: str) -> Any:
        if name not in ("node_cls", "unary", "binary"):
            if "plan" not in self.__dict__ and not name.startswith("__"):  # (not for protocol probes)
                self._make_plan()
            if name in self.__dict__:  # (a plan field another thread was copying in)
                return self.__dict__[name]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with _FIRST_USE:  # two threads must not make two MulBackward0 classes
            made = self.__dict__.get(name)
            return made if made is not None or name in self.__dict__ else self._make(name)

    def _make_plan(self) -> None:
        """Derive the run plan (``ops/plan.py``, which checks the rules' parameter names) and
        copy its fields onto the op, where the call paths read them: one attribute lookup each,
        and no ``__getattr__`` after this. ``plan`` is set last: once it is there, so is every
        field (a thread that reads ``op.plan`` first sees a whole op)."""
        with _FIRST_USE:
            if "plan" not in self.__dict__:
                plan = Plan(self.declaration)
                for field, value in plan.fields().items():
                    self.__dict__.setdefault(field, value)
                self.plan = plan

    def _make(self, name: str) -> Any:
        value: Any
        if name == "node_cls":
            value = self._make_node_class() if self.differentiable else None
        elif name == "unary":
            value = unary_path(self)
        else:
            value = binary_path(self)
        setattr(self, name, value)
        return value

    def __call__(self, *args: Any) -> Any:
        # ``apply(self, args)``, inline: backward rules call ops this way (``tanh_backward(grad,
        # result)``), so the frame saved here is saved on every such node.
        if len(args) == self.n_args and isinstance(args[0], Tensor):
            if self.unary_fast:
                return self.unary(*args)
            if self.binary_fast:
                return self.binary(*args)
        return apply_generic(self, args)

    def _make_node_class(self) -> type[OpNode]:
        """The node class (``MulBackward0``), with its ``apply`` installed now: the generated
        one for one-output ops with a rule per input, else (and under
        ``RETROGRAD_GENERIC_BACKWARD=1``) ``OpNode.apply``, the generic loop, whose argument
        getters are made here too."""
        body: dict[str, Any] = {"__slots__": (), "_op": self, **saved_properties(self)}
        if self.versioned_params:
            body["release"] = release_versioned
        if self.joint_rule is None and self.n_outputs == 1:
            self._backward_source, generated = _generate_apply(self)
            if not GENERIC_BACKWARD:
                body["apply"] = generated
        if "apply" not in body:
            if self.joint_rule is not None:
                self.arg_getters = (_arg_getter(self, self.joint_args, "the joint rule"),)
            else:
                self.arg_getters = tuple(_arg_getter(self, specs, f"the rule for {self.inputs[i]!r}")
                                         for i, (_, specs) in zip(self.diff_inputs, self.edge_rules))
        node_cls = type(self.node_name, (OpNode,), body)
        node_cls.__module__ = "retrograd.autograd.graph"
        return node_cls

    @property
    def backward_source(self) -> str | None:
        """The source of the generated ``apply``, to read what backward does for this op
        (``None`` for ops that run the generic loop: joint rules, several outputs).

        >>> from retrograd.ops.elementwise import sigmoid
        >>> print(sigmoid.backward_source.splitlines()[-1].strip())  # doctest: +ELLIPSIS
        return (rule0(grad, saved[1].unpack(self)),)  # rule for 'self' at retrograd/ops/elementwise.py:...
        """
        if self.differentiable:
            self.node_cls  # noqa: B018 - made with the class
        return self._backward_source

    def operator(self, coerce: Callable[[Any], Any], *defaults: Any) -> Callable[..., Any]:
        """This op as a Tensor operator method: ``Tensor.__add__ = add.operator(coerce, 1)``."""
        return binary_path(self, coerce, defaults)

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


def _cast_arrays(op: Op, inputs: Sequence[Any], params: Sequence[Any], arrays: list[Any]) -> None:
    """Cast input arrays to the dtype PyTorch computes in (in place on the list).

    Rules: ``same`` (no cast), ``float_unary`` (integers become the default float),
    ``promote`` (PyTorch's promotion over the inputs), ``promote+params`` (scalar params count
    too), ``promote_values`` (all inputs but the first, e.g. ``where``'s condition), ``float``
    (promotion, then integers become the default float).
    """
    rule = op.dtype_rule  # "same" and "float_unary" are handled by forward_arrays
    if rule == "promote+params" and len(arrays) == 1:
        a = arrays[0]
        if type(a) is np.ndarray and a.dtype.kind in "fV" and all(type(p) in (int, float) for p in params):
            for p in params:
                if type(p) is int and not INT_SCALAR_MIN <= p < INT_SCALAR_END:
                    check_int_scalar(p)  # raises
            return  # a float tensor and Python numbers: the tensor's dtype wins
    first = 1 if rule == "promote_values" else 0
    if len(arrays) - first == 2 and rule != "promote+params":
        # Fast path for the common binary cases: same dtypes, or a float tensor and a number.
        a, b = arrays[first], arrays[first + 1]
        ta, tb = type(a), type(b)
        if ta is np.ndarray and tb is np.ndarray:
            if a.dtype == b.dtype and (rule != "float" or a.dtype.kind in "fV"):
                return
        elif ta is np.ndarray and (tb is float or tb is int) and a.dtype.kind == "f":  # (bfloat16: below)
            if tb is int and not INT_SCALAR_MIN <= b < INT_SCALAR_END:
                check_int_scalar(b)  # raises
            return
    if op.check_operands is not None:
        op.check_operands(inputs, params)
    operands = tuple(inputs[first:]) + (tuple(params) if rule == "promote+params" else ())
    target = result_type(operands)
    if rule == "float" and target.kind not in "fcV":
        target = get_default_dtype().np
    for i in range(first, len(arrays)):
        a = arrays[i]
        if type(a) is np.ndarray:
            if a.dtype != target:
                arrays[i] = a.astype(target)
        elif rule == "float" and type(a) is int:
            arrays[i] = float(a)
        elif type(a) is int and target.kind in "iu":
            arrays[i] = wrap_int(a, target)


def _wrap_int_operand(arrays: list[Any]) -> None:
    """An ``int`` beside an integer array is wrapped into its dtype, as PyTorch wraps the scalar."""
    a, b = arrays
    for v in arrays:
        if type(v) is int and not INT_SCALAR_MIN <= v < INT_SCALAR_END:
            check_int_scalar(v)  # raises
    if type(b) is int and type(a) is np.ndarray and a.dtype.kind in "iu":
        arrays[1] = wrap_int(b, a.dtype)
    elif type(a) is int and type(b) is np.ndarray and b.dtype.kind in "iu":
        arrays[0] = wrap_int(a, b.dtype)


def wrap_int(value: int, dtype: np.dtype) -> np.ndarray:
    """A Python int operand of an integer op, as PyTorch wraps it into the op's dtype: modulo its
    width (``int8 + 1000`` adds -24; ``2**63`` is a uint64 scalar, wrapped the same way); beyond
    that PyTorch's OverflowError (``check_int_scalar``)."""
    if not INT_SCALAR_MIN <= value < INT_SCALAR_END:
        check_int_scalar(value)  # raises
    if value >= 1 << 63:
        value -= INT_SCALAR_END
    return np.array(value, np.int64).astype(dtype)


# The Python ints PyTorch takes as a number operand: int64, or uint64 from 2**63 on.
INT_SCALAR_MIN, INT_SCALAR_END = -(1 << 63), 1 << 64


def check_int_scalar(value: int) -> None:
    """PyTorch's OverflowError for a Python int operand outside int64 and uint64 (``x + 2**64``).

    >>> check_int_scalar(2**64)
    Traceback (most recent call last):
    OverflowError: int too big to convert
    """
    if value >= INT_SCALAR_END:
        raise OverflowError("int too big to convert")
    if value < INT_SCALAR_MIN:
        raise OverflowError("can't convert negative int to unsigned")


# PyTorch's CPU mul and div take a Python number operand of a float16/bfloat16 tensor in
# float32 ("opmath"): the tensor's values are widened, combined with the number, rounded once.
# (Float16 with a number takes the fast path: see docs/differences.md.)
OPMATH_SCALAR_OPS = frozenset(("mul", "div"))


def opmath_scalar_forward(op: Op, arrays: list[Any], params: Sequence[Any]) -> Any:
    """The forward of ``tensor <op> number`` for a float16/bfloat16 tensor, in float32; None when
    the operands are anything else."""
    a = arrays[0]
    if type(a) is not np.ndarray or a.dtype not in REDUCED_FLOATS:
        return None
    if not all(type(v) in (int, float) for v in (*arrays[1:], *params) if v is not None):
        return None
    wide = [a.astype(np.float32), *arrays[1:]]
    try:
        out = op.forward(*wide, *params)
    except RuntimeWarning:
        out = quiet(op.forward, *wide, *params)
    return np.asarray(out).astype(a.dtype)


def forward_arrays(op: Op, inputs: Sequence[Any], params: Sequence[Any]) -> Any:
    """Run an op's NumPy forward on its inputs' arrays, cast as PyTorch would."""
    if len(inputs) == 1:
        x = inputs[0]
        arrays = [x._data if isinstance(x, Tensor) else x]
    else:
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    rule = op.dtype_rule
    if rule != "same":
        if rule == "float_unary":
            if arrays[0].dtype.kind not in "fcV":
                arrays[0] = arrays[0].astype(get_default_dtype().np)
        else:
            _cast_arrays(op, inputs, params, arrays)
            if op.name in OPMATH_SCALAR_OPS:  # (a number beside a float16/bfloat16 tensor: never the fast paths)
                out = opmath_scalar_forward(op, arrays, params)
                if out is not None:
                    return out
    elif len(arrays) == 2 and (type(arrays[1]) is int or type(arrays[0]) is int):
        _wrap_int_operand(arrays)  # comparisons and bitwise ops of an integer tensor and an int
    try:
        return op.forward(*arrays, *params)
    except RuntimeWarning:
        return quiet(op.forward, *arrays, *params)
    except ValueError as err:
        if "broadcast" in str(err):
            raise RuntimeError(broadcast_error([np.shape(a) for a in arrays if isinstance(a, np.ndarray)])) from None
        raise


def quiet(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a (pure) NumPy forward again with its floating-point warnings off.

    PyTorch computes inf and nan silently. Retrograd's calls into NumPy are not wrapped in
    ``np.errstate`` (it would cost every op); the module-level filter in ``__init__`` hides the
    warnings, and where a warnings filter turns them into exceptions (``-W error``, pytest's
    ``filterwarnings = error``, ``simplefilter("error")``) the forward lands here, via the
    ``except RuntimeWarning`` of the dispatch points, which costs nothing until it is reached.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's Python-level ones ("Mean of empty slice")
        return fn(*args)


def broadcast_error(shapes: list[tuple[int, ...]]) -> str:
    """PyTorch's message for shapes that do not broadcast."""
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    for i in range(1, max(len(a), len(b)) + 1):
        sa = a[-i] if i <= len(a) else 1
        sb = b[-i] if i <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - i
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton "
                    f"dimension {dim}")
    return f"shapes {list(a)} and {list(b)} cannot be broadcast together"


_new = object.__new__
_asarray = np.asarray
_save = save_input  # (tensor, version), refusing inference tensors
_save_output = save_output
_save_any_output: Callable[[Tensor], Any] = SavedTensor  # an output of ``record`` (any output_nr)
_ndarray = np.ndarray

# Set by ``retrograd.func`` while a ``vmap`` runs: the call paths then hand batched tensors to
# ``_batched_apply`` (their batching rules). One flag test per op otherwise.
_BATCHING = False
_BatchedTensor: Any = None
_batched_apply: Any = None


def _use_saved_tensors_hooks(installed: bool) -> None:
    """Swap the save helpers above while saved-tensor hooks are installed in some thread, so
    that recording costs nothing extra otherwise (see ``autograd/graph_hooks.py``)."""
    global _save, _save_output, _save_any_output
    if installed:
        _save, _save_output, _save_any_output = hooked_save_input, hooked_save_output, hooked_save_any_output
    else:
        _save, _save_output, _save_any_output = save_input, save_output, SavedTensor


on_hooks_change(_use_saved_tensors_hooks)


def apply(op: Op, args: Sequence[Any]) -> Any:
    """Run ``op`` on ``args`` (tensor inputs, then params) and record a node if needed.

    One- and two-input ops with one output take their own call path (``op.unary`` /
    ``op.binary``); everything else, and anything unusual, takes ``apply_generic``.
    """
    if len(args) == op.n_args and isinstance(args[0], Tensor):
        if op.unary_fast:
            return op.unary(*args)
        if op.binary_fast:
            return op.binary(*args)
    return apply_generic(op, args)


def apply_generic(op: Op, args: Sequence[Any]) -> Any:
    """``apply`` for any op: several inputs or outputs, variadic ops, dtype promotion.

    Nothing about autograd happens unless grad mode is on and a differentiable input requires
    grad.
    """
    if _BATCHING and any(type(a) is _BatchedTensor for a in args):
        return _batched_apply(op, tuple(args))
    n = len(args) - len(op.params) if op.variadic else op.n_inputs
    inputs: Sequence[Any]
    params: Sequence[Any]
    if len(args) == n:
        inputs, params = args, ()
    else:
        inputs, params = args[:n], args[n:]
    out = forward_arrays(op, inputs, params)
    state = STATE
    if op.n_outputs == 1:
        if type(out) is not _ndarray:  # ufuncs return NumPy scalars for 0-d inputs
            out = np.asarray(out)
        result = _new(Tensor)
        result._data = out
        result._requires_grad = False
        result._grad_fn = None
        outputs: tuple[Tensor, ...] = (result,)
    else:
        outputs = tuple(Tensor._make(np.asarray(o)) for o in out)
    if INFERENCE_CONTEXTS[0] and state.inference and not op.view:
        for o in outputs:
            o._is_inference = True
    if op.view:
        source = inputs[0]
        base = source._base if source._base is not None else source
        counter = source._counter()
        if source._is_inference:  # a view is an inference tensor if and only if its base is
            for o in outputs:
                o._is_inference = True
        for o in outputs:
            o._base = base
            o._version_counter = counter
            o._view_version = counter.value
        if not state.grad_enabled:
            mark_view_mode(outputs)
        elif op.n_outputs != 1 or source._creation_meta is not None:
            inherit_view_meta(source, outputs, op.n_outputs != 1)
    if state.grad_enabled and op.differentiable:
        for x in inputs if op.all_inputs_differentiable else [inputs[i] for i in op.diff_inputs]:
            if isinstance(x, Tensor) and x._requires_grad:
                record(op, inputs, params, outputs)
                break
    if DUAL[0] is not None:  # forward AD
        propagate_tangents(op, inputs, params, outputs[0] if op.n_outputs == 1 else outputs)
    return outputs[0] if op.n_outputs == 1 else outputs


def mark_view_mode(views: Sequence[Tensor]) -> None:
    """Views made with grad mode off remember it: an in-place write through one with grad mode
    on is refused, as in PyTorch (``ops/inplace.check_inplace``). The one-input recording path
    does the same inline (``RECORDING_SOURCE``): a change here goes there too."""
    meta = "inference" if STATE.inference else "no_grad"
    for v in views:
        base = v._base
        if not base._is_inference:  # type: ignore[union-attr]
            v._creation_meta = meta
            if base._requires_grad:  # type: ignore[union-attr]
                v._requires_grad = True  # as PyTorch's view of such a base (engine.GRADLESS_VIEWS)


def inherit_view_meta(source: Tensor, views: Sequence[Tensor], multi: bool) -> None:
    """Views made in grad mode: one of several outputs is "multi"; a view of a view whose
    in-place writes are refused inherits that (PyTorch's propagate_creation_meta)."""
    previous = source._creation_meta
    meta = "multi" if multi and previous != "inference" else previous
    for v in views:
        v._creation_meta = meta


def _edge(x: Tensor) -> tuple[Any, int]:
    """``gradient_edge(x)`` for a tracked input, its common cases inline: an op's output, and a
    view whose base was not written since the view was made (``w.t()`` into ``linear``'s addmm,
    the transposes every backward rule of a product records)."""
    fn = x._grad_fn
    if fn is None or x._base is not None:
        if fn is not None:
            counter = x._version_counter  # (a view shares its base's, made with the view)
            if counter is not None and x._view_version == counter.value:
                return (fn, x._output_nr)
        return gradient_edge(x)  # type: ignore[return-value]
    return (fn, x._output_nr)


# Python numbers reaching a NumPy-arithmetic forward as 0-d arrays of the tensor's dtype: NumPy
# runs such an operand at about half the cost of a Python scalar (the same values: a Python
# number meets a float tensor in the tensor's dtype either way). Made once per (value, dtype).
_SCALAR_ARRAYS: dict[tuple[Any, Any], np.ndarray] = {}


def scalar_array(value: float | int, dtype: Any) -> Any:
    """``value`` as a read-only 0-d array of ``dtype`` (cached), or itself if it does not fit."""
    key = (value, dtype)
    array = _SCALAR_ARRAYS.get(key)
    if array is None:
        if type(value) is int:
            check_int_scalar(value)
        try:
            with np.errstate(over="ignore"):
                array = np.array(value, dtype)
        except OverflowError:  # an int too large for any float: NumPy's own path decides
            return value
        array.flags.writeable = False
        if len(_SCALAR_ARRAYS) >= 256:  # a program that multiplies by ever new numbers
            _SCALAR_ARRAYS.clear()
        _SCALAR_ARRAYS[key] = array
    return array


def array_scalars(forward: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a forward that is plain NumPy arithmetic on its two inputs (as ufuncs are), so that
    a Python number may reach it as a 0-d array (``scalar_array``)."""
    forward.array_scalars = True  # type: ignore[attr-defined]
    return forward


# -- The recording paths ---------------------------------------------------------------------
# Recording a node is written once. The steps every path shares (wrap the forward's array in a
# fresh tensor, make the node, attach it to its output) are the snippets below, spliced where
# ``@NAME`` stands into the three paths (the closures ``unary_path`` and ``binary_path`` make, and
# ``record``), which are compiled from this one source at import. A shared helper function would
# cost every op a Python call; spliced text costs none. The source is registered with
# ``linecache`` (``_compile``), so tracebacks and debuggers show its lines, and anomaly mode's
# creation tracebacks leave its frames out as they do retrograd's own.

_WRAP_RESULT = """\
if type(out) is not _ndarray:  # ufuncs return NumPy scalars for 0-d inputs
    out = _asarray(out)
result = _new(Tensor)
result._data = out
result._requires_grad = False
result._grad_fn = None
"""

_NEW_NODE = """\
node = _new(node_cls)
node._sequence_nr = seq = next_sequence_nr()
if not seq & GUARD_MASK:
    large_graph_guard(node)
if params:  # (unset otherwise: only rules that read a param look)
    node._params = params if versioned is None else keep_versioned(params, versioned)
if ANOMALY[0]:
    remember_creation(node)
"""

_ATTACH_OUTPUT = """\
out_shape = out.shape
try:  # the one tuple of that shape (``_SHAPES``): a graph keeps one tuple fewer per node
    node._shape = _SHAPES[out_shape]
except KeyError:
    node._shape = intern_shape(out_shape)
node._dtype = dtype = out.dtype
if dtype.kind in "fcV":  # an integer or bool output never requires grad
    result._requires_grad = True
    result._grad_fn = node
"""

# Output shapes as nodes keep them, one tuple per distinct shape. A shape tuple lives as long as
# its node, and each object a graph keeps alive is scanned by the cycle collector (a third of the
# chain's collector time was these tuples); equal shapes share one, as the graph never mutates them.
_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}
_SHAPES_MAX = 1024  # a program of ever new shapes starts over rather than growing the table


def intern_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape``, or an equal tuple stored earlier: the one the recording paths give a node.

    >>> from retrograd.ops.op import intern_shape
    >>> intern_shape((2, 3)) is intern_shape(tuple([2, 3]))
    True
    """
    known = _SHAPES.get(shape)
    if known is not None:
        return known
    if len(_SHAPES) >= _SHAPES_MAX:
        _SHAPES.clear()
    _SHAPES[shape] = shape
    return shape


# The node of a one-input op (``unary_path`` and ``prerun_path``).
_RECORD_ONE_INPUT = """\
@NEW_NODE
fn = x._grad_fn
node.next_functions = ((fn, x._output_nr),) if fn is not None and x._base is None else (_edge(x),)
if uses_meta:
    node._input_meta = ((data.shape, data.dtype),)
@ATTACH_OUTPUT
if keep_input or keep_result:
    node._saved = (_save(x) if keep_input else None, _save_output(result) if keep_result else None)
else:
    node._saved = nothing_saved
"""

_RECORDING_PATHS = '''\
def unary_path(op: Op) -> Callable[..., Tensor]:
    """``apply(op, (x, *params))`` for a one-input op, specialised to it: the hot path of
    ``x.tanh()``, ``x.sum(dim)``, ``x.t()``.

    The op's constants are bound once, so a call reads no table; a node is recorded inline with
    only what this op's rule needs saved. Anything unusual takes ``apply_generic``.
    """
    if not op.unary_fast:
        return lambda x, *params: apply_generic(op, (x, *params))
    forward = op.forward
    node_cls: Any = op.node_cls  # fast ops are differentiable: every input has a rule
    to_float = op.dtype_rule == "float_unary"
    keep_input, keep_result = op.unary_saves
    uses_meta = op.uses_meta
    is_view = op.view
    versioned = op.versioned_params
    nothing_saved = () if versioned is None else KEPT_PARAMS_ONLY

    def unary(x: Tensor, *params: Any) -> Tensor:
        if _BATCHING and type(x) is _BatchedTensor:
            return _batched_apply(op, (x, *params))
        data = x._data
        if to_float and data.dtype.kind not in "fcV":
            return apply_generic(op, (x, *params))  # type: ignore[no-any-return]
        try:
            out = forward(data, *params) if params else forward(data)
        except ValueError:
            return apply_generic(op, (x, *params))  # type: ignore[no-any-return]  # raises PyTorch's error
        except RuntimeWarning:
            out = quiet(forward, data, *params)
        @WRAP_RESULT
        if is_view:  # shares the input's memory, root base and version counter
            base = x._base
            result._base = x if base is None else base
            counter = x._version_counter
            if counter is None:
                counter = new_counter(x)  # (``x._counter()``, one call fewer)
            result._version_counter = counter
            result._view_version = counter.value
            if x._is_inference:  # a view is an inference tensor if and only if its base is
                result._is_inference = True
            if not STATE.grad_enabled:  # ``mark_view_mode``, inline (backward's views): keep the two alike
                root = result._base
                if not root._is_inference:
                    result._creation_meta = "inference" if STATE.inference else "no_grad"
                    if root._requires_grad:
                        result._requires_grad = True  # as PyTorch's view of such a base
            elif x._creation_meta is not None:
                result._creation_meta = x._creation_meta
        if INFERENCE_CONTEXTS[0] and STATE.inference:
            if not is_view:
                result._is_inference = True
        elif x._requires_grad and STATE.grad_enabled:  # (inference mode turns grad mode off)
            @RECORD_ONE_INPUT
        if DUAL[0] is not None:  # forward AD: the one check while no dual level is active
            propagate_tangents(op, (x,), params, result)
        return result

    return unary


def binary_path(op: Op, coerce: Callable[[Any], Any] | None = None, defaults: tuple[Any, ...] = ()) -> Callable[..., Any]:
    """``apply(op, (a, b, *params))`` for a two-input op, specialised to it: the hot path of
    ``a * b``. Inline are a tensor and a tensor of the same dtype, and a float tensor and a Python
    number; anything else (promotion, errors) takes ``apply_generic``.

    As an operator (``Tensor.__mul__``, see ``Op.operator``), ``coerce`` converts any other
    operand first (or returns NotImplemented) and ``defaults`` are the params, as ``alpha=1``."""
    if not op.binary_fast:
        def generic(a: Any, b: Any, *params: Any) -> Any:
            if coerce is not None and not isinstance(b, Tensor):
                b = coerce(b)
                if b is NotImplemented:
                    return NotImplemented
            return apply_generic(op, (a, b, *(params or defaults)))

        if op.differentiable or op.n_outputs != 1 or op.view or op.variadic or op.params or defaults:
            return generic
        gradless_forward = op.forward

        def gradless(a: Any, b: Any) -> Any:
            # ``x < y``, ``x > 0.5``: an op that never records a node, on two tensors of one dtype
            # or a float tensor and a Python number, outside vmap and inference mode, needs only
            # its forward and the wrapping: what ``apply_generic`` would do, at half the cost.
            if _BATCHING or INFERENCE_CONTEXTS[0] or type(a) is not Tensor:
                return generic(a, b)
            ad = a._data
            if isinstance(b, Tensor):
                bd = b._data
                if bd.dtype is not ad.dtype and bd.dtype != ad.dtype:
                    return generic(a, b)
            elif (type(b) is float or type(b) is int and -0x8000000000000000 <= b <= 0x7FFFFFFFFFFFFFFF) \
                    and ad.dtype.kind == "f":  # (an int beyond int64: PyTorch's OverflowError, from the general path)
                bd = b
            else:
                return generic(a, b)
            try:
                out = gradless_forward(ad, bd)
            except (ValueError, RuntimeWarning):  # (PyTorch's error, or NumPy's warnings kept quiet: the general path)
                return apply_generic(op, (a, b))  # (``op`` a local too: ``debug.record_sites`` reads it off the frame)
            result = _new(Tensor)
            result._data = out if type(out) is _ndarray else np.asarray(out)
            result._requires_grad = False
            result._grad_fn = None
            return result

        return gradless
    forward = op.forward
    node_cls: Any = op.node_cls  # fast ops are differentiable: every input has a rule
    uses_meta = op.uses_meta
    save_plans = op.binary_saves
    any_dtype = op.dtype_rule == "same"
    numbers_as_arrays = isinstance(forward, np.ufunc) or getattr(forward, "array_scalars", False)
    cached_scalar = _SCALAR_ARRAYS.get
    to_float = op.dtype_rule == "float"
    versioned = op.versioned_params
    nothing_saved = () if versioned is None else KEPT_PARAMS_ONLY

    def binary(a: Tensor, b: Any, *params: Any) -> Any:
        if defaults and not params:
            params = defaults
        if _BATCHING and (type(a) is _BatchedTensor or type(b) is _BatchedTensor):
            return _batched_apply(op, (a, b, *params))
        ad = a._data
        bd: Any
        if isinstance(b, Tensor):
            bd = b._data
            if not any_dtype:
                dt = ad.dtype
                if (dt is not bd.dtype and dt != bd.dtype) or (to_float and dt.kind != "f"):
                    return apply_generic(op, (a, b, *params))  # type: ignore[no-any-return]
            b_tracked = b._requires_grad
        elif (type(b) is float or type(b) is int) and ad.dtype.kind == "f":
            bd = b
            if numbers_as_arrays and b:  # (not for zeros: -0.0 == 0.0 as a key)
                bd = cached_scalar((b, ad.dtype))
                if bd is None:
                    bd = scalar_array(b, ad.dtype)
            b_tracked = False
        else:
            if coerce is not None:
                b = coerce(b)
                if b is NotImplemented:
                    return NotImplemented
            return apply_generic(op, (a, b, *params))
        try:
            out = forward(ad, bd, *params) if params else forward(ad, bd)
        except ValueError:
            return apply_generic(op, (a, b, *params))  # type: ignore[no-any-return]  # raises PyTorch's error
        except RuntimeWarning:
            out = quiet(forward, ad, bd, *params)
        @WRAP_RESULT
        a_tracked = a._requires_grad
        if INFERENCE_CONTEXTS[0] and STATE.inference:
            result._is_inference = True
        elif (a_tracked or b_tracked) and STATE.grad_enabled:  # (inference mode turns grad mode off)
            @NEW_NODE
            if uses_meta:
                node._input_meta = ((ad.shape, ad.dtype), (bd.shape, bd.dtype) if isinstance(b, Tensor) else None)
            if a_tracked:
                fn = a._grad_fn
                edge_a = (fn, a._output_nr) if fn is not None and a._base is None else _edge(a)
            else:
                edge_a = NO_EDGE
            node.next_functions = (edge_a, _edge(b) if b_tracked else NO_EDGE)
            @ATTACH_OUTPUT
            save_a, save_b, save_result = save_plans[a_tracked + 2 * b_tracked]
            if save_a or save_b or save_result:
                node._saved = (
                    _save(a) if save_a else None,
                    (_save(b) if isinstance(b, Tensor) else b) if save_b else None,
                    _save_output(result) if save_result else None,
                )
            else:
                node._saved = nothing_saved
        if DUAL[0] is not None:  # forward AD: the one check while no dual level is active
            propagate_tangents(op, (a, b), params, result)
        return result

    return binary


def record(op: Op, inputs: Sequence[Any], params: Sequence[Any], outputs: Sequence[Tensor]) -> OpNode:
    """Attach a new node of ``op`` to ``outputs``: edges, input metadata, saved values."""
    node_cls = op.node_cls
    params = tuple(params)
    versioned = op.versioned_params
    nothing_saved = () if versioned is None else KEPT_PARAMS_ONLY
    @NEW_NODE
    edges: list[tuple[Any, int]] = []
    wanted: frozenset[int] | set[int] = frozenset()
    variadic = op.variadic
    saves_for = op.saves_for
    diff_inputs = range(len(inputs)) if op.all_inputs_differentiable else op.diff_inputs
    for i in diff_inputs:
        x = inputs[i]
        if isinstance(x, Tensor) and x._requires_grad:
            edges.append(_edge(x))
            slots = saves_for[0] if variadic else saves_for[i]
            if slots:
                wanted = wanted | slots
        else:
            edges.append(NO_EDGE)
    node.next_functions = tuple(edges)
    if op.uses_meta:
        node._input_meta = tuple(
            (x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None for x in (inputs[i] for i in diff_inputs)
        )
    n_outputs = len(outputs)
    if n_outputs == 1:
        result = outputs[0]
        out = result._data
        @ATTACH_OUTPUT
    else:
        node.num_outputs = n_outputs
        node._shape = node._dtype = None
        node._output_meta = tuple((o._data.shape, o._data.dtype) for o in outputs)
        differentiable = op.differentiable_outputs
        for k, o in enumerate(outputs):
            if (k >= len(differentiable) or differentiable[k]) and o._data.dtype.kind in "fcV":
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = k
    if wanted:
        n_inputs = len(inputs)
        if variadic:  # a variadic rule that saves inputs gets all of them
            wanted = range(n_inputs)  # type: ignore[assignment]
        saved: list[Any] = [None] * (n_inputs + n_outputs)
        for i in wanted:
            if i < n_inputs:
                x = inputs[i]
                saved[i] = _save(x) if isinstance(x, Tensor) else x
            else:
                saved[i] = _save_any_output(outputs[i - n_inputs])
        node._saved = tuple(saved)
    else:
        node._saved = nothing_saved
    return node
'''


def _splice(source: str, snippets: Mapping[str, str]) -> str:
    """``source`` with each line ``@NAME`` replaced by ``snippets[NAME]`` at that line's indent."""
    out = []
    for line in source.splitlines(True):
        name = line.strip()
        if name.startswith("@") and name[1:] in snippets:
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + s if s.strip() else s for s in snippets[name[1:]].splitlines(True)]
        else:
            out.append(line)
    return "".join(out)


_SNIPPETS = {"WRAP_RESULT": _WRAP_RESULT, "NEW_NODE": _NEW_NODE, "ATTACH_OUTPUT": _ATTACH_OUTPUT}
_SNIPPETS["RECORD_ONE_INPUT"] = _splice(_RECORD_ONE_INPUT, _SNIPPETS)

# Names the recording source reads from this module's globals (the save helpers are read there
# at each call, so that ``_use_saved_tensors_hooks`` can swap them).
_READ_BY_RECORDING_PATHS = (ANOMALY, remember_creation, large_graph_guard, next_sequence_nr, GUARD_MASK, NO_EDGE,
                            new_counter, KEPT_PARAMS_ONLY)

if TYPE_CHECKING:
    def unary_path(op: Op) -> Callable[..., Tensor]: ...

    def binary_path(op: Op, coerce: Callable[[Any], Any] | None = None,
                    defaults: tuple[Any, ...] = ()) -> Callable[..., Any]: ...

    def record(op: Op, inputs: Sequence[Any], params: Sequence[Any], outputs: Sequence[Tensor]) -> OpNode: ...
else:
    RECORDING_SOURCE = _splice(_RECORDING_PATHS, _SNIPPETS)
    _compile(RECORDING_SOURCE, f"{GENERATED_FILE_PREFIX}recording paths (ops/op.py)>", globals(), "record")


# -- Recording paths made on request ----------------------------------------------------------
# Two paths written like ``binary_path`` (the same spliced snippets, compiled the same way) but
# kept apart from RECORDING_SOURCE: each is made only for the ops whose callers ask for it
# (``ternary(op)``, ``prerun(op)``), so nothing on the one- and two-input paths changes.
# - ``ternary_path``: ``addmm(bias, input, weight.t())`` is how every ``nn.Linear`` on a matrix
#   runs; through ``apply_generic`` its recording cost half as much again as PyTorch's.
# - ``prerun_path``: a one-input op whose forward the caller has run already, as part of a
#   fused forward of several ops (``cross_entropy``: log_softmax and nll_loss in one pass), so
#   that each op still records its own node, as PyTorch does.

_PATHS_ON_REQUEST = '''\
def ternary_path(op: Op) -> Callable[..., Any]:
    """``apply(op, (a, b, c, *params))`` for a three-input op, specialised to it: the hot path of
    ``F.linear`` (``addmm``). Inline are three tensors (a ``"same"`` dtype rule does no casting);
    anything else (numbers, promotion, errors) takes ``apply_generic``."""
    if not (op.n_inputs == 3 and op.n_outputs == 1 and not op.view and not op.variadic and op.differentiable
            and op.all_inputs_differentiable and op.joint_rule is None and op.dtype_rule == "same"):
        return lambda a, b, c, *params: apply_generic(op, (a, b, c, *params))
    forward = op.forward
    node_cls: Any = op.node_cls
    uses_meta = op.uses_meta
    saves_for = op.saves_for
    save_plans = []  # what to save, indexed by a_tracked + 2 * b_tracked + 4 * c_tracked
    for tracked in range(8):
        wanted: frozenset[int] = frozenset()
        for i in range(3):
            if tracked >> i & 1:
                wanted |= saves_for[i]
        save_plans.append((0 in wanted, 1 in wanted, 2 in wanted, 3 in wanted))
    versioned = op.versioned_params
    nothing_saved = () if versioned is None else KEPT_PARAMS_ONLY

    def ternary(a: Any, b: Any, c: Any, *params: Any) -> Any:
        if _BATCHING or not (isinstance(a, Tensor) and isinstance(b, Tensor) and isinstance(c, Tensor)):
            return apply_generic(op, (a, b, c, *params))
        ad, bd, cd = a._data, b._data, c._data
        try:
            out = forward(ad, bd, cd, *params) if params else forward(ad, bd, cd)
        except ValueError:
            return apply_generic(op, (a, b, c, *params))  # raises PyTorch's error
        except RuntimeWarning:
            out = quiet(forward, ad, bd, cd, *params)
        @WRAP_RESULT
        a_tracked, b_tracked, c_tracked = a._requires_grad, b._requires_grad, c._requires_grad
        if INFERENCE_CONTEXTS[0] and STATE.inference:
            result._is_inference = True
        elif (a_tracked or b_tracked or c_tracked) and STATE.grad_enabled:  # (inference mode turns grad mode off)
            @NEW_NODE
            if uses_meta:
                node._input_meta = ((ad.shape, ad.dtype), (bd.shape, bd.dtype), (cd.shape, cd.dtype))
            edges = []
            for x, tracked in ((a, a_tracked), (b, b_tracked), (c, c_tracked)):
                if tracked:
                    fn = x._grad_fn
                    edges.append((fn, x._output_nr) if fn is not None and x._base is None else _edge(x))
                else:
                    edges.append(NO_EDGE)
            node.next_functions = tuple(edges)
            @ATTACH_OUTPUT
            save_a, save_b, save_c, save_result = save_plans[a_tracked + 2 * b_tracked + 4 * c_tracked]
            if save_a or save_b or save_c or save_result:
                node._saved = (
                    _save(a) if save_a else None,
                    _save(b) if save_b else None,
                    _save(c) if save_c else None,
                    _save_output(result) if save_result else None,
                )
            else:
                node._saved = nothing_saved
        if DUAL[0] is not None:  # forward AD: the one check while no dual level is active
            propagate_tangents(op, (a, b, c), params, result)
        return result

    return ternary


def prerun_path(op: Op) -> Callable[..., Tensor]:
    """``unary_path(op)`` for a forward the caller has run: ``prerun(x, out, *params)`` wraps
    ``out`` (what ``op.forward(x._data, *params)`` returns) and records the node exactly as
    ``op.unary(x, *params)`` would. For ops that are not views, with a one-input fast path."""
    if not op.unary_fast or op.view:
        raise TypeError(f"op {op.name!r} has no pre-run recording path")
    node_cls: Any = op.node_cls
    keep_input, keep_result = op.unary_saves
    uses_meta = op.uses_meta
    versioned = op.versioned_params
    nothing_saved = () if versioned is None else KEPT_PARAMS_ONLY

    def prerun(x: Tensor, out: Any, *params: Any) -> Tensor:
        @WRAP_RESULT
        if INFERENCE_CONTEXTS[0] and STATE.inference:
            result._is_inference = True
        elif x._requires_grad and STATE.grad_enabled:  # (inference mode turns grad mode off)
            data = x._data
            @RECORD_ONE_INPUT
        if DUAL[0] is not None:  # forward AD: the one check while no dual level is active
            propagate_tangents(op, (x,), params, result)
        return result

    return prerun
'''

if TYPE_CHECKING:
    def ternary_path(op: Op) -> Callable[..., Any]: ...

    def prerun_path(op: Op) -> Callable[..., Tensor]: ...
else:
    PATHS_ON_REQUEST_SOURCE = _splice(_PATHS_ON_REQUEST, _SNIPPETS)
    _compile(PATHS_ON_REQUEST_SOURCE, f"{GENERATED_FILE_PREFIX}recording paths made on request (ops/op.py)>",
             globals(), "ternary_path")


def _made_on_request(op: Op, name: str, make: Callable[[Op], Any]) -> Any:
    path = op.__dict__.get(name)
    if path is None:
        with _FIRST_USE:
            path = op.__dict__.get(name)
            if path is None:
                path = op.__dict__[name] = make(op)
    return path


def ternary(op: Op) -> Callable[..., Any]:
    """``op``'s three-input call path (``ternary_path``), made once, on first use.

    >>> import retrograd as rg
    >>> from retrograd.ops.nn import addmm
    >>> out = ternary(addmm)(rg.zeros(2), rg.ones(1, 3), rg.ones(3, 2, requires_grad=True))
    >>> out.tolist(), out.grad_fn.name()
    ([[3.0, 3.0]], 'AddmmBackward0')
    """
    return _made_on_request(op, "_ternary", ternary_path)  # type: ignore[no-any-return]


def prerun(op: Op) -> Callable[..., Tensor]:
    """``op``'s recording path for a forward already run (``prerun_path``), made once, on first use.

    >>> import numpy as np, retrograd as rg
    >>> from retrograd.ops.elementwise import exp
    >>> x = rg.zeros(2, requires_grad=True)
    >>> y = prerun(exp)(x, np.exp(x._data))
    >>> y.tolist(), y.grad_fn.name()
    ([1.0, 1.0], 'ExpBackward0')
    """
    return _made_on_request(op, "_prerun", prerun_path)  # type: ignore[no-any-return]
