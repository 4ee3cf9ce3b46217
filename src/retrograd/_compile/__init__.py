"""``retrograd.compile``: trace a function once, run straight-line NumPy afterwards.

The first call with a new set of guards (input shapes, dtypes, ``requires_grad``, grad mode,
module parameters' identity) runs the function eagerly while recording every op-table call
(``tracer.py``); the forward graph and a backward graph traced from the ops' own backward rules
become two generated Python functions (``codegen.py``). Later calls that pass the same guards
run the generated forward, and give their outputs one ``CompiledFunctionBackward`` node that
runs the generated backward. What the trace cannot record is a graph break: that guard
variant runs eagerly from then on (``fullgraph=True`` raises instead). See docs/compile.md.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.engine import _reduce_to, gradient_edge
from ..autograd.fp_errors import ignore_fp_errors, restore_fp_errors
from ..autograd.grad_mode import INFERENCE_CONTEXTS, STATE, no_grad
from ..autograd.graph import FREED_TYPE, Node, SavedTensor, freed_message, save_input, unpack_input, version_error
from ..nn.modules.module import Module
from ..ops.inplace import regenerate_view_grad_fn
from ..tensor import Tensor
from .codegen import exec_generated, generate
from .graph import Graph
from .guards import Source, any_hooks, fast_guard, named_values, reached_modules, read_source
from .lowering import fuse_forward, lower_backward
from .segments import Segmented, split, target_function
from .tracer import GraphBreak, Tracer, tracing, tracing_here

__all__ = ["CompiledFunction", "ExplainOutput", "GraphBreak", "OptimizedModule", "compile", "explain"]

CACHE_SIZE_LIMIT = 8  # variants per compiled function, as torch._dynamo.config.cache_size_limit
_NO_EDGE = (None, 0)
_EAGER = "eager"


def _set_view_base(view: Tensor, of: Tensor) -> None:
    """Make a compiled call's output ``view``, which shares memory with the input or output
    ``of``, a view of ``of``'s root as eager's is (PyTorch's compiled views have their ``_base``
    too): an in-place write through either then rewrites the base's history (``CopySlices``), as in
    eager. Only when the call records its node: without one, PyTorch's outputs have no base.
    ``of`` may itself be a view of a value the call does not return (two slices of one
    intermediate): then ``view`` need not lie within it, and keeps no base (PyTorch's would have
    that hidden intermediate)."""
    root = of if of._base is None else of._base
    if not _within(view._data, root._data):
        return
    view._base = root
    view._view_version = view._counter().value


def _within(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every byte of ``a`` lies in the memory span of ``b``."""
    a_lo, a_hi = _extent(a)
    b_lo, b_hi = _extent(b)
    return b_lo <= a_lo and a_hi <= b_hi


def _extent(a: np.ndarray) -> tuple[int, int]:
    """The first and one-past-last byte addresses ``a``'s elements occupy."""
    lo = hi = a.__array_interface__["data"][0]
    if a.size == 0:
        return lo, lo
    for n, stride in zip(a.shape, a.strides, strict=True):
        if stride < 0:
            lo += (n - 1) * stride
        else:
            hi += (n - 1) * stride
    return lo, hi + a.itemsize


class CompiledFunctionBackward(Node):
    """The one node a compiled call's outputs share: runs the generated backward."""

    __slots__ = ("_variant", "_out_meta")
    _variant: Variant
    _out_meta: tuple[tuple[tuple[int, ...], Any], ...]

    def apply(self, grad_outputs: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        if STATE.grad_enabled:
            _refuse_double_backward()
        saved = self._saved
        if not saved and type(saved) is FREED_TYPE:
            raise RuntimeError(freed_message(saved))
        variant = self._variant
        n_saved = len(variant.saved_kind)
        arrays = list(saved[:n_saved])
        for k, guard in enumerate(variant.alias_guards):
            _check_alias(self, saved[n_saved + k], arrays[guard[0]], guard)
        for pos in variant.saved_special:  # the inputs and outputs: the rest are plain arrays
            s = saved[pos]
            if type(s) is tuple:
                arrays[pos] = unpack_input(s, self)._data
            elif type(s) is SavedTensor:
                arrays[pos] = s.unpack(self)._data
        seeds = [g._data if g is not None else np.zeros(shape, dtype)
                 for g, (shape, dtype) in zip(grad_outputs, self._out_meta)]
        token = ignore_fp_errors()  # PyTorch computes inf and nan silently, as eager retrograd does
        try:
            grads = variant.backward(*seeds, *arrays)  # type: ignore[misc]  # (set when there is a node)
        finally:
            restore_fp_errors(token)
        make = Tensor._make
        return tuple(make(g) for g in grads)


# A saved value that is a view of an input or output: (its saved position, "input" or "output",
# that tensor's index, the view's node class or None, the view's output number).
AliasGuard = tuple[int, str, int, Any, int]


def _check_alias(node: Node, base: Any, value: Any, guard: AliasGuard) -> None:
    """Raise eager's version error if the input or output that the saved ``value`` is a view of
    was written in place since the forward. ``base``: that input as ``save_input`` keeps it, or
    that output as a ``SavedTensor``; ``value``: the array, or the saved output holding it."""
    if type(base) is SavedTensor:
        counter, version = base.counter, base.version
    else:
        counter, version = base[0]._version_counter, base[1]
    if counter.value == version:  # type: ignore[union-attr]  # (saving gave it a counter)
        return
    data = value.data if type(value) is SavedTensor else value
    view = Tensor._make(data)  # a stand-in for the traced view, for the message: its shape, its node's name
    view_node_class, output_nr = guard[3], guard[4]
    if view_node_class is not None:
        view._grad_fn = object.__new__(view_node_class)
        view._output_nr = output_nr
    raise RuntimeError(version_error(node, data, counter, version, view, output_nr))


def _counter_owners(everything: list[Tensor], flat: list[Tensor], out_input: list[int | None]) -> dict[int, tuple[str, int]]:
    """id of each input's and output's version counter (its views and aliases share it) -> the
    input ("input", index) or output ("output", index) it counts writes of: an input first, then
    an output that is not a view, then the first view."""
    owners: dict[int, tuple[str, int]] = {}
    for i, t in enumerate(everything):
        if t._version_counter is not None:
            owners.setdefault(id(t._version_counter), ("input", i))
    for i in sorted(range(len(flat)), key=lambda k: flat[k]._base is not None):
        counter = flat[i]._version_counter
        if counter is not None and out_input[i] is None:
            owners.setdefault(id(counter), ("output", i))
    return owners


def _views_of(tracer: Tracer, owners: dict[int, tuple[str, int]]) -> dict[int, tuple[tuple[str, int], Tensor]]:
    """The forward values whose traced tensor shares its version counter with an input or output
    (a view of it, ``weight.t()``), each with that owner and the tensor: eager's saved view sees
    its base's in-place writes through that counter, so the compiled node checks the base's."""
    found: dict[int, tuple[tuple[str, int], Tensor]] = {}
    if not owners:
        return found
    values = tracer.values
    for t in tracer.op_results:
        counter = t._version_counter
        if counter is not None and id(counter) in owners:
            v = values.get(id(t._data))
            if v is not None and v not in found:
                found[v] = (owners[id(counter)], t)
    return found


def _refuse_double_backward() -> None:
    raise RuntimeError(
        "retrograd.compile: double backward (create_graph=True) through a compiled function is not "
        "supported; call the function uncompiled (fn._orig_mod or the original) for higher-order gradients")


@dataclass
class Variant:
    """One compiled guard variant: generated forward and (optionally) backward."""

    forward: Callable[..., Any]
    forward_source: str
    n_inputs: int
    lifted: list[Tensor]
    lifted_guards: list[tuple[Any, ...]]
    out_spec: Any  # how to rebuild the function's return value
    out_grad: list[bool]  # which flat outputs get the node
    out_input: list[int | None]  # a flat output that is an input: its index
    saved_kind: list[tuple[str, int]] = field(default_factory=list)  # ("input", i) / ("output", k) / ("array", 0)
    backward: Callable[..., Any] | None = None
    backward_source: str | None = None
    grad_inputs: list[int] = field(default_factory=list)  # inputs with an edge, in edge order
    op_names: list[str] = field(default_factory=list)
    compile_seconds: float = 0.0
    inference: bool = False
    guard: Any = None  # the generated straight-line guard of this variant's call form (guards.py)
    node_meta: tuple[tuple[tuple[int, ...], Any], ...] | None = None  # its node's outputs' (shape, dtype)
    saved_special: list[int] = field(default_factory=list, init=False)  # positions of non-"array" saved values
    # Saved values that are views of an input (a linear layer's ``weight.t()``) or of an output.
    # The node keeps that base's version after the saved values and checks it before the
    # backward, as eager's saved view shares its base's version counter: an in-place write of
    # the base in between raises.
    alias_guards: list[AliasGuard] = field(default_factory=list)
    # Outputs that are views of an input (``x.t()`` returned) or of an earlier output: (output,
    # "input" or "output", that base's index). They share the base's version counter, as eager's
    # views do, so an in-place write through either is seen by whatever saved the other.
    out_views: list[tuple[int, str, int]] = field(default_factory=list)
    # Outputs that are views of an input, of an output or of an intermediate the function does
    # not return (a hidden output of the node): their grad_fn is a view node of that base, as
    # PyTorch's is the view's own node (here ``AsStridedBackward0``), not an output of the
    # compiled node, so that an in-place write through one view reaches the others.
    base_views: list[int] = field(default_factory=list)
    lifted_sources: list[tuple[Any, Any, Any]] = field(default_factory=list)  # where each lifted tensor was read
    runner: Callable[[list[Tensor]], Any] | None = None  # ``run`` as straight-line code, made by its first call

    def bindings_hold(self) -> bool:
        """Whether each lifted tensor is still what its global or closure name holds (Dynamo
        guards the source): a name rebound to another tensor makes the caller trace again."""
        for t, source in zip(self.lifted, self.lifted_sources):
            if read_source(source) is not t:
                return False
        return True

    def __post_init__(self) -> None:
        self.saved_special = [pos for pos, (kind, _) in enumerate(self.saved_kind) if kind != "array"]

    def run(self, tensors: list[Tensor]) -> Any:
        """The compiled forward on ``tensors`` (the flat inputs, lifted tensors not included): its
        outputs, with the node that runs the backward when one is recorded."""
        runner = self.runner
        if runner is not None:
            return runner(tensors)
        result = self._run_first(tensors)
        if self.backward is None or self.node_meta is not None:
            self.runner = self._straight_line_run()
        return result

    def _run_first(self, tensors: list[Tensor]) -> Any:
        arrays = [t._data for t in tensors]
        arrays += [t._data for t in self.lifted]
        token = ignore_fp_errors()  # PyTorch computes inf and nan silently, as eager retrograd does
        try:
            res = self.forward(*arrays)
        finally:
            restore_fp_errors(token)
        n_out = len(self.out_grad)
        make = Tensor._make
        flat: list[Any] = []
        everything = tensors + self.lifted if self.lifted else tensors
        for k in range(n_out):
            i = self.out_input[k]
            flat.append(make(res[k]) if i is None else everything[i])
        for k, kind, i in self.out_views:
            flat[k]._version_counter = (everything[i] if kind == "input" else flat[i])._counter()
        if self.inference:  # (a guard: the variant was traced under inference_mode)
            for k, t in enumerate(flat):
                if self.out_input[k] is None:
                    t._is_inference = True
        if self.backward is not None and STATE.grad_enabled:
            node = CompiledFunctionBackward()
            node._variant = self
            node.next_functions = tuple([gradient_edge(everything[i]) or _NO_EDGE for i in self.grad_inputs])
            outs = [t for t, g in zip(flat, self.out_grad) if g]
            meta = self.node_meta
            if meta is None:  # (the guards fix the outputs' shapes and dtypes: the same for every call)
                meta = self.node_meta = tuple((t._data.shape, t._data.dtype) for t in outs)
            node._out_meta = meta
            if len(outs) == 1:
                node._shape, node._dtype = meta[0]
            else:
                node.num_outputs = len(outs)
                node._output_meta = meta
            for nr, t in enumerate(outs):
                t._requires_grad = True
                t._grad_fn = node
                if nr:
                    t._output_nr = nr
            saved = list(res[n_out:])
            kinds = self.saved_kind
            for pos in self.saved_special:  # (a loop over the few inputs and outputs only)
                kind, i = kinds[pos]
                saved[pos] = save_input(everything[i]) if kind == "input" else SavedTensor(flat[i])
            saved += [save_input(everything[i]) if kind == "input" else SavedTensor(flat[i])
                      for _, kind, i, _, _ in self.alias_guards]
            node._saved = tuple(saved)
            for k, kind, i in self.out_views:  # views of inputs and outputs keep their base
                _set_view_base(flat[k], everything[i] if kind == "input" else flat[i])
            for k in self.base_views:
                regenerate_view_grad_fn(flat[k])
        return _rebuild(self.out_spec, flat)

    def _straight_line_run(self) -> Callable[[list[Tensor]], Any]:
        """``run`` for this variant alone as generated code: the loops over outputs, edges and
        saved values unrolled, and what the guards fix (the outputs' shapes and dtypes, which
        outputs are inputs, inference mode) settled in the source. The same steps as
        ``_run_first``, in the same order."""
        n_out = len(self.out_grad)
        ns: dict[str, Any] = {"_make": Tensor._make, "_ignore": ignore_fp_errors,
                              "_restore": restore_fp_errors, "_S": STATE, "_Node": CompiledFunctionBackward,
                              "_V": self, "_edge": gradient_edge, "_NO": _NO_EDGE, "_save_input": save_input,
                              "_SavedTensor": SavedTensor, "_rebuild": _rebuild, "_spec": self.out_spec}
        names = [f"a{i}" for i in range(self.n_inputs)]
        for j, t in enumerate(self.lifted):
            ns[f"_L{j}"] = t
            names.append(f"_L{j}")
        n_saved = len(self.saved_kind) if self.backward is not None else 0
        results = [f"r{k}" for k in range(n_out + n_saved)]
        lines = ["def run(tensors):"]
        if self.n_inputs:
            lines.append(f"    {', '.join(names[:self.n_inputs])}, = tensors")
        lines += ["    _tok = _ignore()  # PyTorch computes inf and nan silently, as eager retrograd does",
                  "    try:",
                  f"        {', '.join(results)}, = _V.forward({', '.join(f'{n}._data' for n in names)})"
                  if results else f"        _V.forward({', '.join(f'{n}._data' for n in names)})",
                  "    finally:",
                  "        _restore(_tok)"]
        outs = []
        for k in range(n_out):
            i = self.out_input[k]
            if i is not None:
                outs.append(names[i])
                continue
            outs.append(f"o{k}")
            lines.append(f"    o{k} = _make(r{k})")
            if self.inference:
                lines.append(f"    o{k}._is_inference = True")
        for view, kind, i in self.out_views:  # (after all outputs exist: a view's base may come later)
            base = names[i] if kind == "input" else outs[i]
            lines.append(f"    o{view}._version_counter = {base}._counter()  # a view of {base}")
        if self.backward is not None:
            meta = self.node_meta
            ns["_meta"] = meta
            ns["_Node"] = self._node_class()
            node_outs = [outs[k] for k in range(n_out) if self.out_grad[k]]
            edges = "".join(f"_edge({names[i]}) or _NO, " for i in self.grad_inputs)
            lines += ["    if _S.grad_enabled:",
                      "        node = _Node()",
                      "        node._variant = _V",
                      f"        node.next_functions = ({edges})",
                      "        node._out_meta = _meta"]
            if len(node_outs) == 1:
                ns["_shape"], ns["_dtype"] = meta[0]  # type: ignore[index]  # (set by the first run)
                lines.append("        node._shape, node._dtype = _shape, _dtype")
            else:
                lines += [f"        node.num_outputs = {len(node_outs)}", "        node._output_meta = _meta"]
            for nr, o in enumerate(node_outs):
                lines += [f"        {o}._requires_grad = True", f"        {o}._grad_fn = node"]
                if nr:
                    lines.append(f"        {o}._output_nr = {nr}")
            saved = []
            for pos, (kind, i) in enumerate(self.saved_kind):
                saved.append(f"_save_input({names[i]})" if kind == "input" else f"_SavedTensor({outs[i]})"
                             if kind == "output" else f"r{n_out + pos}")
            saved += [f"_save_input({names[i]})" if kind == "input" else f"_SavedTensor({outs[i]})"
                      for _, kind, i, _, _ in self.alias_guards]
            lines.append(f"        node._saved = ({''.join(f'{v}, ' for v in saved)})")
            for view, kind, i in self.out_views:
                ns["_set_view_base"] = _set_view_base
                lines.append(f"        _set_view_base(o{view}, {names[i] if kind == 'input' else outs[i]})")
            for view in self.base_views:
                ns["_regenerate"] = regenerate_view_grad_fn
                lines.append(f"        _regenerate(o{view})  # a view node of its hidden base")
        kind, value = self.out_spec
        if kind == "t":
            lines.append(f"    return {outs[value]}")
        else:
            lines.append(f"    return _rebuild(_spec, [{', '.join(outs)}])")
        return exec_generated("\n".join(lines) + "\n", "run", ns, "run")  # type: ignore[no-any-return]

    def _node_class(self) -> type[CompiledFunctionBackward]:
        """``CompiledFunctionBackward`` with this variant's ``apply`` as generated straight-line
        code: the saved values unpacked by kind, one seed per output, one tensor per gradient.
        The same steps as the shared ``apply``; the class keeps its name."""
        meta = self.node_meta
        assert meta is not None  # (the first run, with its node, set it)
        ns: dict[str, Any] = {"_S": STATE, "_V": self, "_FREED": FREED_TYPE, "_freed_message": freed_message,
                              "_refuse": _refuse_double_backward, "_ignore": ignore_fp_errors,
                              "_restore": restore_fp_errors, "_make": Tensor._make, "_zeros": np.zeros,
                              "_unpack_input": unpack_input, "_check_alias": _check_alias}
        seeds = []
        for k, (shape, dtype) in enumerate(meta):
            ns[f"_shape{k}"], ns[f"_dtype{k}"] = shape, dtype
            seeds.append(f"g{k}._data if g{k} is not None else _zeros(_shape{k}, _dtype{k})")
        saved = []
        for pos, (kind, _) in enumerate(self.saved_kind):
            saved.append(f"_unpack_input(s{pos}, self)._data" if kind == "input" else f"s{pos}.unpack(self)._data"
                         if kind == "output" else f"s{pos}")
        grads = [f"r{k}" for k in range(len(self.grad_inputs))]
        call = f"_V.backward({', '.join(seeds + saved)})"
        lines = ["def apply(self, grad_outputs):",
                 "    if _S.grad_enabled:",
                 "        _refuse()",
                 "    saved = self._saved",
                 "    if not saved and saved.__class__ is _FREED:",
                 "        raise RuntimeError(_freed_message(saved))"]
        guards = [f"q{k}" for k in range(len(self.alias_guards))]
        if saved or guards:
            lines.append(f"    {''.join(f's{pos}, ' for pos in range(len(saved)))}{''.join(f'{q}, ' for q in guards)}= saved")
        for k, guard in enumerate(self.alias_guards):  # one compare per base a saved view reads
            ns[f"_G{k}"] = guard
            lines += [f"    if q{k}[0]._version_counter.value != q{k}[1]:" if guard[1] == "input" else
                      f"    if q{k}.counter.value != q{k}.version:",
                      f"        _check_alias(self, q{k}, s{guard[0]}, _G{k})"]
        lines += [f"    {''.join(f'g{k}, ' for k in range(len(meta)))}= grad_outputs",
                  "    _tok = _ignore()  # PyTorch computes inf and nan silently, as eager retrograd does",
                  "    try:",
                  f"        {''.join(f'{g}, ' for g in grads)}= {call}" if grads else f"        {call}",
                  "    finally:",
                  "        _restore(_tok)",
                  f"    return ({''.join(f'_make({g}), ' for g in grads)})"]
        apply = exec_generated("\n".join(lines) + "\n", "CompiledFunctionBackward.apply", ns, "apply")
        return type("CompiledFunctionBackward", (CompiledFunctionBackward,),
                    {"__slots__": (), "apply": apply, "__module__": __name__, "__doc__": CompiledFunctionBackward.__doc__})

    @property
    def code(self) -> str:
        text = self.forward_source
        if self.backward_source is not None:
            text += "\n" + self.backward_source
        return text


def _rebuild(spec: Any, flat: list[Any]) -> Any:
    kind, value = spec
    if kind == "t":
        return flat[value]
    if kind == "c":
        return value
    cls, entries = value
    items = [flat[v] if k == "t" else v for k, v in entries]
    if cls is tuple or cls is list:
        return cls(items)
    return cls(*items)  # a named tuple (torch.return_types)


_CONSTANT_TYPES = (type(None), bool, int, float, complex, str)


def _flatten_output(result: Any) -> tuple[Any, list[Tensor]] | None:
    """The return value as (spec, flat tensors): a tensor, a number, or a tuple (named tuples
    too) or list of them; None for anything else (a graph break)."""
    if isinstance(result, Tensor):
        return ("t", 0), [result]
    if isinstance(result, (tuple, list)):
        flat: list[Tensor] = []
        items = []
        for r in result:
            if isinstance(r, Tensor):
                items.append(("t", len(flat)))
                flat.append(r)
            elif type(r) in _CONSTANT_TYPES:
                items.append(("c", r))
            else:
                return None
        return ("seq", (type(result), items)), flat
    if type(result) in _CONSTANT_TYPES:
        return ("c", result), []
    return None


def _captured_tensors(fn: Any) -> dict[int, tuple[Tensor, Source]]:
    """Tensors the function can read without taking them (``named_values``: its closure cells,
    the globals it names...), as Dynamo's sources would, each with where it was read."""
    return {id(t): (t, source) for t, source in named_values(fn) if isinstance(t, Tensor)}


class CompiledFunction:
    """What ``retrograd.compile(fn)`` returns: call it as ``fn``; ``.code`` shows the generated source.

    >>> import retrograd as rg
    >>> f = rg.compile(lambda x: (x * 2).tanh())
    >>> x = rg.ones(3)
    >>> bool((f(x) == (x * 2).tanh()).all()), bool((f(x) == (x * 2).tanh()).all())
    (True, True)
    >>> "tanh" in f.code
    True
    """

    def __init__(self, fn: Callable[..., Any], *, fullgraph: bool = False, dynamic: bool | None = None,
                 module: Any = None) -> None:
        self._fn = fn
        self._module = module
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self._cache: dict[Any, Any] = {}
        self.breaks: list[str] = []  # every graph break seen, with its reason
        self.last_variant: Variant | None = None
        self.compile_times: list[float] = []
        self.last_segmented: Segmented | None = None  # the latest variant split at its breaks
        self._split = True  # (False for a part of a split function: its source is not its own)
        self._replan: Callable[[list[int | None]], Segmented | None] | None = None
        # The modules a call reaches (``guards.reached_modules``) and their submodules, cached:
        # each submodule with its children, which one compare per call keeps true.
        self._roots: list[tuple[Module, Source | None]] = []
        self._mods: list[tuple[Module, tuple[Any, ...]]] | None = None
        self._mods_roots: list[int] = []  # (the roots ``_mods`` was made for)
        self._fast: Variant | None = None  # the variant of the latest call, tried first by its own guard
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def code(self) -> str:
        """The generated source of the latest compiled variant (forward, then backward)."""
        if self.last_variant is None:
            return "" if self.last_segmented is None else self.last_segmented.code
        return self.last_variant.code

    def _inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Tensor]] | None:
        """The guard key and the flat tensor inputs; None when an argument cannot be guarded."""
        key: list[Any] = [STATE.grad_enabled, STATE.inference]
        tensors: list[Tensor] = []
        for a in (*args, *(kwargs[k] for k in sorted(kwargs))):
            if isinstance(a, Tensor):
                tensors.append(a)
                key.append((a._data.shape, a._data.dtype, a._requires_grad))
            elif type(a) in (list, tuple) and any(isinstance(x, Tensor) for x in a):
                part: list[Any] = [type(a), len(a)]
                for x in a:
                    if isinstance(x, Tensor):
                        tensors.append(x)
                        part.append((x._data.shape, x._data.dtype, x._requires_grad))
                    else:
                        part.append(("c", type(x), x))
                key.append(tuple(part))
            else:
                key.append(("c", type(a), a))
        key.append(tuple(sorted(kwargs)))
        roots = self._roots = reached_modules(self._fn, self._module, args)
        if roots:
            self._module_guards(roots, tensors, key)
        try:
            frozen = tuple(key)
            hash(frozen)
        except TypeError:
            return None
        return frozen, tensors

    def _module_guards(self, roots: list[tuple[Module, Source | None]], tensors: list[Tensor], key: list[Any]) -> None:
        """The reached modules' parameters and buffers (as ``parameters()``/``buffers()`` order
        them, root after root) and their guards: the roots' identity, every submodule's
        ``training`` flag, whether a module hook would run, each parameter's and buffer's
        identity, shape, dtype and ``requires_grad``. The submodules come from a cached list
        that one compare of each submodule's children per call keeps true (``modules()`` walks
        the tree through generators: tens of µs)."""
        mods = self._mods
        if mods is None or any(tuple(m._modules.values()) != kids for m, kids in mods) \
                or self._mods_roots != [id(r) for r, _ in roots]:
            walked: set[int] = set()
            mods = self._mods = []
            for root, _ in roots:
                for m in root.modules():
                    if id(m) not in walked:
                        walked.add(id(m))
                        mods.append((m, tuple(m._modules.values())))
            self._mods_roots = [id(r) for r, _ in roots]
        key.append(tuple(id(r) for r, _ in roots))
        key.append(any_hooks(mods))
        seen: set[int] = set()
        for m, _ in mods:
            for p in m._parameters.values():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    tensors.append(p)
                    key.append((id(p), p._data.shape, p._data.dtype, p._requires_grad))
        seen.clear()
        for m, _ in mods:
            for b in m._buffers.values():
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    tensors.append(b)
                    key.append((id(b), b._data.shape, b._data.dtype))
        key.append(tuple(m.training for m, _ in mods))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if INFERENCE_CONTEXTS[0] and tracing_here():  # called by a function being traced: inlined in its graph
            return self._fn(*args, **kwargs)
        fast = self._fast
        if fast is not None and not kwargs:
            flat = fast.guard(args)
            if flat is not None and (not fast.lifted_sources or fast.bindings_hold()):
                runner = fast.runner
                return runner(flat) if runner is not None else fast.run(flat)
        found = self._inputs(args, kwargs)
        if found is None:
            self._note("an argument is not hashable, so it cannot be guarded")
            return self._fn(*args, **kwargs)
        key, tensors = found
        variant = self._cache.get(key)
        if type(variant) is Variant:
            if all((t._data.shape, t._data.dtype, t._requires_grad) == g
                   for t, g in zip(variant.lifted, variant.lifted_guards)) and variant.bindings_hold():
                self._remember(variant, args, kwargs, tensors)
                return variant.run(tensors)
        elif variant is not None:
            if variant is _EAGER:
                return self._fn(*args, **kwargs)
            return variant.run(self._fn, args, kwargs)  # a Segmented: split at its breaks
        if len(self._cache) >= CACHE_SIZE_LIMIT:
            self._note(f"cache_size_limit ({CACHE_SIZE_LIMIT}) reached: too many recompilations")
            return self._fn(*args, **kwargs)
        return self._trace(key, tensors, args, kwargs)

    def _remember(self, variant: Variant, args: tuple[Any, ...], kwargs: dict[str, Any], tensors: list[Tensor]) -> None:
        """Let the next call try ``variant`` first, through its straight-line guard (made once
        per variant, for calls of tensors only)."""
        if kwargs:
            return
        if variant.guard is None:
            variant.guard = fast_guard(self._roots, self._mods, args, tensors, variant.lifted) or False
        self._fast = variant if variant.guard else None

    def _note(self, reason: str) -> None:
        if self.fullgraph:
            raise GraphBreak(reason)
        if reason not in self.breaks:
            self.breaks.append(reason)

    def _trace(self, key: Any, tensors: list[Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self._roots and self._mods is not None and any_hooks(self._mods):
            # The trace would run the hooks once; the generated code would never run them again.
            self._note("a module the function calls has forward or backward hooks: the call runs eagerly")
            self._cache[key] = _EAGER
            return self._fn(*args, **kwargs)
        start = time.perf_counter()
        tracer = Tracer(self.fullgraph)
        for t in tensors:
            tracer.add_input(t._data)
        whole_module = self._module is self._fn  # (a part of a split forward has its own function)
        captured = _captured_tensors(self._module.forward if whole_module else self._fn)
        tracer.captured = {key: t for key, (t, _) in captured.items()}
        if self._split and not self.fullgraph:
            target = target_function(self._fn, self._module)
            tracer.target_code = None if target is None else target.__code__
        elif self._replan is not None:
            tracer.target_code = getattr(self._fn, "__code__", None)
        with tracing(tracer):
            result = self._fn(*args, **kwargs)
            variant = None if tracer.breaks else self._build(tracer, tensors, result)
        if variant is None:
            for reason in tracer.breaks:
                self._note(reason)
            plan: Segmented | None = None
            if tracer.breaks and self._split:
                plan = split(self._fn, self._module, tracer.break_lines, self._part)
            elif tracer.breaks and self._replan is not None:
                plan = self._replan(tracer.break_lines)  # a part that broke on its own: cut it further
            self._cache[key] = _EAGER if plan is None else plan
            if plan is not None:
                self.last_segmented = plan
            return result
        variant.lifted_sources = [captured[id(t)][1] for t in variant.lifted]
        variant.compile_seconds = time.perf_counter() - start
        self.compile_times.append(variant.compile_seconds)
        self._cache[key] = variant
        self.last_variant = variant
        return result

    def _part(self, fn: Callable[..., Any], replan: Callable[[list[int | None]], Segmented | None]) -> CompiledFunction:
        """A run of statements of a split function, compiled on its own; ``replan`` cuts it
        further at the lines where it breaks (as a branch not taken by the first trace may)."""
        part = CompiledFunction(fn, dynamic=self.dynamic, module=self._module)
        part._split = False
        part._replan = replan
        return part

    def _build(self, tracer: Tracer, tensors: list[Tensor], result: Any) -> Variant | None:
        flat_spec = _flatten_output(result)
        if flat_spec is None:
            tracer.graph_break("the function returns something other than tensors, numbers, or a tuple or list of them")
            return None
        spec, flat = flat_spec
        graph = tracer.graph
        everything = tensors + tracer.lifted
        out_values = []
        out_input: list[int | None] = []
        for t in flat:
            v = tracer.values.get(id(t._data))
            if v is None:
                tracer.graph_break("the function returns a tensor made outside the traced ops")
                return None
            out_values.append(v)
            out_input.append(next((i for i, x in enumerate(everything) if x is t), None))
        if not self._split and any(t._base is not None and out_input[k] is None for k, t in enumerate(flat)):
            # A part of a split function hands its locals on: a view among them would reach the
            # next part as a plain tensor, and an in-place write there would miss its base's history.
            tracer.graph_break("a part of a split function hands on a view, which a later part may write through")
            return None
        # A view of an intermediate the function does not return: as PyTorch's, its base is that
        # intermediate, a hidden output of the compiled node (``_rebuild`` leaves it out), and its
        # grad_fn a view node of it, so an in-place write through one view reaches the others.
        flat = list(flat)
        returned = len(flat)
        hidden: set[int] = set()
        base_views: list[int] = []
        for k in range(returned):
            base = flat[k]._base
            if base is None or any(x is base for x in everything) or any(x is base for x in flat[:returned]):
                continue
            if id(base) not in hidden:
                v = tracer.values.get(id(base._data))
                if v is None:
                    continue
                hidden.add(id(base))
                flat.append(base)
                out_values.append(v)
                out_input.append(None)
            base_views.append(k)
        owners = _counter_owners(everything, flat, out_input)
        out_views = [(k, *owner) for k, t in enumerate(flat) if out_input[k] is None and t._version_counter is not None
                     and (owner := owners[id(t._version_counter)]) != ("output", k)]
        recorded = [t._requires_grad and t._grad_fn is not None and out_input[k] is None for k, t in enumerate(flat)]
        more = []
        for k, kind, i in out_views:
            # A returned view of an input or output gets a view node of it too, not an output of
            # the compiled node (whose output number its later view node would keep), when the
            # call records a node for its other outputs.
            of = everything[i] if kind == "input" else flat[i]
            root = of if of._base is None else of._base
            if k not in base_views and flat[k]._base is not None and _within(flat[k]._data, root._data):
                more.append(k)
        if any(r and k not in base_views and k not in more for k, r in enumerate(recorded)):
            base_views += more
        out_grad = [r and k not in base_views for k, r in enumerate(recorded)]
        graph.outputs = list(out_values)
        fwd_graph = graph
        variant_backward = None
        saved_kind: list[tuple[str, int]] = []
        grad_inputs: list[int] = []
        backward_source = None
        alias_guards: list[AliasGuard] = []
        if any(out_grad) and STATE.grad_enabled:
            views = _views_of(tracer, owners)
            traced = self._trace_backward(tracer, tensors, flat, out_grad)
            if traced is None:
                return None
            bw_graph, saved_values, grad_inputs = traced
            input_pos = {v: i for i, v in reversed(list(enumerate(fwd_graph.inputs)))}
            output_pos = {v: k for k, v in reversed(list(enumerate(out_values)))}
            for v in saved_values:
                if v in input_pos:
                    saved_kind.append(("input", input_pos[v]))
                elif v in output_pos:
                    saved_kind.append(("output", output_pos[v]))
                else:
                    saved_kind.append(("array", 0))
                view = views.get(v)
                if view is not None and view[0] != saved_kind[-1]:  # (a base saved as itself: its own slot checks it)
                    (kind, i), t = view
                    node_class = None if t._grad_fn is None else type(t._grad_fn)
                    alias_guards.append((len(saved_kind) - 1, kind, i, node_class, t._output_nr))
                fwd_graph.outputs.append(v)
            backward_source, variant_backward = generate(bw_graph, "backward")
        ops = [c.label for c in fwd_graph.calls]
        fuse_forward(fwd_graph)
        source, forward = generate(fwd_graph, "forward")
        lifted = list(tracer.lifted)
        variant = Variant(forward, source, len(tensors), lifted,
                       [(t._data.shape, t._data.dtype, t._requires_grad) for t in lifted],
                       spec, out_grad, out_input, saved_kind, variant_backward, backward_source,
                       grad_inputs, ops)
        variant.inference = bool(STATE.inference)
        variant.alias_guards = alias_guards
        variant.out_views = out_views
        variant.base_views = base_views
        return variant

    def _trace_backward(self, tracer: Tracer, tensors: list[Tensor], flat: list[Tensor],
                        out_grad: list[bool]) -> tuple[Graph, list[int], list[int]] | None:
        """Run the recorded nodes' own backward rules on seed gradients, recording their ops
        into a second graph whose inputs are the seeds and the forward values the rules read."""
        fwd_values = tracer.values
        saved_values: list[int] = []
        bw_of_fwd: dict[int, int] = {}
        tracer.graph = bw = Graph()
        tracer.values = {}
        tracer.allow_fill_constants = True

        def outer(array: Any) -> int | None:
            fv = fwd_values.get(id(array))
            if fv is None:
                return None
            bv = bw_of_fwd.get(fv)
            if bv is None:
                bv = bw_of_fwd[fv] = tracer.add_input(array)
                saved_values.append(fv)
            return bv

        everything = tensors + tracer.lifted
        trace_nodes = {id(t._grad_fn): t._grad_fn for t in tracer.op_results if t._grad_fn is not None}
        # The inputs' gradient edges: where the graph leaves the traced region.
        input_of_edge: dict[tuple[int, int], int] = {}
        for i, t in enumerate(everything):
            if t._requires_grad:
                edge = gradient_edge(t)
                if edge is not None and edge[0] is not None:
                    input_of_edge.setdefault((id(edge[0]), edge[1]), i)
        grad_inputs = sorted(set(input_of_edge.values()))
        buffers: dict[int, list[Any]] = {}
        boundary: dict[int, Any] = {}
        reachable: dict[int, Node] = {}

        def add_to(node: Node, nr: int, g: Tensor) -> bool:
            key = (id(node), nr)
            if key in input_of_edge and id(node) not in trace_nodes:
                i = input_of_edge[key]
                boundary[i] = g if i not in boundary else boundary[i] + g
                return True
            if id(node) not in trace_nodes:
                tracer.graph_break(f"a gradient flows into {node.name()}, outside the traced function")
                return False
            slots = buffers.setdefault(id(node), [None] * node.num_outputs)
            slots[nr] = g if slots[nr] is None else slots[nr] + g
            reachable[id(node)] = node
            return True

        with no_grad():
            tracer.outer = outer
            try:
                seeds = []
                rng = np.random.default_rng(0)  # seeds with both signs: a rule's mask of them shows up as data
                for t, wants in zip(flat, out_grad):
                    if wants:
                        seed = rng.standard_normal(t._data.shape).astype(t._data.dtype) + 0.5
                        tracer.add_input(seed)
                        seeds.append(Tensor._make(seed))
                        if not add_to(t._grad_fn, t._output_nr, seeds[-1]):
                            return None
                # Sequence numbers grow with creation, so the latest first is a topological
                # order (as the engine's heap).
                heap = [(-n._sequence_nr, id(n)) for n in reachable.values()]
                heapq.heapify(heap)
                queued = set(reachable)
                while heap:
                    _, key = heapq.heappop(heap)
                    node = reachable[key]
                    grads = buffers.pop(key)
                    if node._hooked or node._pre_hooks or node._post_hooks or not hasattr(type(node), "_op"):
                        tracer.graph_break(f"backward node {node.name()} has hooks or is not an op's node")
                        return None
                    try:
                        results = lower_backward(tracer, node, grads) or node.apply(grads)
                    except RuntimeError as error:
                        # A value the rule saved was overwritten by an in-place op the forward
                        # recorded out of place: eager's backward raises, so this runs eagerly.
                        tracer.graph_break(f"backward node {node.name()} cannot run: {error}")
                        return None
                    if tracer.breaks:
                        return None
                    for (nxt, nr), g in zip(node.next_functions, results):
                        if nxt is None or g is None:
                            continue
                        meta = nxt._output_meta[nr] if nxt._output_meta else (nxt._shape, nxt._dtype)
                        if meta[0] is not None:
                            g = _reduce_to(g, meta[0], meta[1])
                        if not add_to(nxt, nr, g):
                            return None
                        if id(nxt) in reachable and id(nxt) not in queued:
                            queued.add(id(nxt))
                            heapq.heappush(heap, (-nxt._sequence_nr, id(nxt)))
                        if tracer.breaks:
                            return None
            finally:
                tracer.outer = None
        outputs = []
        kept_inputs = []
        for i in grad_inputs:
            g = boundary.get(i)
            if g is None:
                continue
            ref = tracer.resolve(g, "gradient")
            if not isinstance(ref, int):
                if ref is None:
                    return None
                # a constant gradient: give it a value of its own (a copy of the constant)
                tracer.graph_break("a gradient is a constant")
                return None
            outputs.append(ref)
            kept_inputs.append(i)
        bw.outputs = outputs
        if tracer.breaks:
            return None
        # The seeds come first in the backward's arguments, then the saved forward values.
        from_forward = set(bw_of_fwd.values())
        bw.inputs = [v for v in bw.inputs if v not in from_forward] + [bw_of_fwd[fv] for fv in saved_values]
        return bw, saved_values, kept_inputs


def compile(  # noqa: A001 - torch.compile's name
        model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None, backend: Any = "inductor",
        mode: str | None = None, options: dict[str, Any] | None = None, disable: bool = False) -> Any:
    """Compile a function or module, as ``torch.compile``: ``@retrograd.compile``,
    ``retrograd.compile(fn)``, ``retrograd.compile(module)``. ``backend``, ``mode`` and ``options``
    are accepted (there is one backend: generated NumPy); ``dynamic`` is accepted, and shapes are
    always specialised (a new shape compiles a new variant).

    >>> import retrograd as rg
    >>> @rg.compile
    ... def f(x):
    ...     return (x * x).sum()
    >>> f(rg.tensor([1.0, 2.0])).item(), f(rg.tensor([3.0, 4.0])).item()
    (5.0, 25.0)
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic)
    from .optim_step import CompiledOptimizerStep, is_optimizer_step

    if is_optimizer_step(model):
        return CompiledOptimizerStep(model, fullgraph=fullgraph)
    if not callable(model):
        raise RuntimeError(f"fullgraph={fullgraph}: compile() expects a callable or nn.Module, got {type(model).__name__}")
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic)


class OptimizedModule(Module):
    """``retrograd.compile(module)``: a module whose forward is compiled; its parameters are the
    original module's (``_orig_mod``), as torch.compile's OptimizedModule.

    >>> import retrograd as rg
    >>> lin = rg.nn.Linear(2, 1)
    >>> m = rg.compile(lin)
    >>> m._orig_mod is lin, [n for n, _ in m.named_parameters()]
    (True, ['_orig_mod.weight', '_orig_mod.bias'])
    """

    def __init__(self, mod: Module, *, fullgraph: bool = False, dynamic: bool | None = None) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", CompiledFunction(mod, fullgraph=fullgraph, dynamic=dynamic, module=mod))
        object.__setattr__(self, "training", mod.training)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    @property
    def code(self) -> str:
        """The generated source of the latest compiled variant."""
        return self._compiled.code

    def train(self, mode: bool = True) -> OptimizedModule:
        self._orig_mod.train(mode)
        object.__setattr__(self, "training", mode)
        return self


@dataclass
class BreakReason:
    """One graph break, as torch._dynamo's GraphCompileReason: ``.reason``."""

    reason: str


@dataclass
class ExplainOutput:
    """What ``explain(fn)(*args)`` returns, shaped as ``torch._dynamo.explain``'s."""

    graphs: list[str]
    graph_count: int
    graph_break_count: int
    break_reasons: list[BreakReason]
    op_count: int
    ops_per_graph: list[list[str]]
    compile_times: list[float]

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        lines += [f"  Break Reason {i + 1}: {b.reason}" for i, b in enumerate(self.break_reasons)]
        return "\n".join(lines)


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainOutput]:
    """``explain(fn)(*args)``: trace ``fn`` on the arguments and list its graphs and breaks.

    >>> import retrograd as rg
    >>> out = explain(lambda x: x * 2 if x.sum() > 0 else x)(rg.ones(2))
    >>> out.graph_count, out.graph_break_count
    (0, 1)
    """
    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = CompiledFunction(fn)
        compiled(*args, **kwargs)
        plan = compiled.last_segmented
        breaks = list(compiled.breaks)
        times = list(compiled.compile_times)
        if plan is None:
            variants = [compiled.last_variant]
        else:
            compiled(*args, **kwargs)  # split at its breaks: the second call compiles the parts
            parts: list[CompiledFunction] = [p.call for p in plan.all_parts() if p.compiled]
            variants = [p.last_variant for p in parts]
            breaks += [r for p in parts for r in p.breaks if r not in breaks]
            times += [t for p in parts for t in p.compile_times]
        graphs = [v.code for v in variants if v is not None]
        ops = [v.op_names for v in variants if v is not None]
        return ExplainOutput(graphs, len(graphs), len(breaks), [BreakReason(r) for r in breaks],
                             sum(len(o) for o in ops), ops, times)

    return run
