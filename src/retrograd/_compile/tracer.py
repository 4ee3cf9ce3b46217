"""Tracing: run the function once, eagerly, and record every op-table call into a ``Graph``.

How the calls are seen without costing the eager paths anything: every dispatch path of
``ops/op.py`` (``unary``, ``binary``, ``ternary``, ``prerun``, ``apply_generic``) asks
``INFERENCE_CONTEXTS[0] and STATE.inference`` once per call, after its forward has run and
before it records a node. While a trace runs, ``INFERENCE_CONTEXTS[0]`` is raised and
``ops.op``'s global ``STATE`` is a stand-in whose ``inference`` reads the asking path's frame
(its op, inputs, params and result) into the graph, then answers as the real state would. Only
the tracing thread is recorded; other threads see the real state. The eager paths are
unchanged: nothing is read or called there unless a trace is running.

``ops.inplace``'s ``STATE`` gets a stand-in too: an in-place op on a value the graph itself
computed (owned by no one else: not an input, no view, no other array on its memory) is recorded
as its out-of-place form, and the array's identity then stands for the new value (the graph is
functionalised, as torch.compile does); any other in-place op on a traced tensor is a graph
break. The eager op still runs as it is, so its checks and the version counters are eager's.
And ``Tensor.item``/``tolist``/``numpy``/``__bool__``... are wrapped for the trace's duration, so
that reading a traced value into Python is one (with the reason).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..autograd import grad_mode
from ..autograd.grad_mode import INFERENCE_CONTEXTS, STATE
from ..autograd.graph import VersionCounter
from ..ops import elementwise as _elementwise
from ..ops import inplace as _inplace
from ..ops import op as _op
from ..ops import shape as _shape
from ..tensor import Tensor
from .graph import Call, Graph, ParamRef

_PATHS = frozenset(("unary", "binary", "ternary", "prerun", "apply_generic"))
_RANDOM_WORDS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson")
_TRACE_LOCK = threading.RLock()
# Forwards whose ``alpha=1`` case is exactly a ufunc (their source says so): traced as the ufunc.
_ALPHA_ONE = {"add": (_elementwise._add, np.add), "sub": (_elementwise._sub, np.subtract)}  # one trace at a time (they swap module globals)


class GraphBreak(Exception):
    """Raised under ``fullgraph=True`` where a trace meets what it cannot record."""


class Tracer:
    """Records op calls of the tracing thread into ``self.graph``; values are keyed by the
    identity of their NumPy arrays (kept alive in ``self.keep`` so identities stay unique)."""

    def __init__(self, fullgraph: bool) -> None:
        self.fullgraph = fullgraph
        self.thread = threading.get_ident()
        self.graph = Graph()
        self.values: dict[int, int] = {}  # id(array) -> value, in the current graph
        self.keep: list[Any] = []
        self.breaks: list[str] = []
        self.outer: Callable[[Any], int | None] | None = None  # resolves arrays of an enclosing graph
        self.captured: dict[int, Tensor] = {}  # id(tensor) -> tensors the function may read (closure, globals)
        self.lifted: list[Tensor] = []  # captured tensors that became graph inputs, in order
        self.recorded: set[int] = set()  # id(result tensor) already recorded (a path may ask twice)
        self.op_results: list[Tensor] = []  # every traced op's output tensors, in order
        self.allow_fill_constants = False  # backward: float zeros made outside the op table are constants
        # Set when the function may be split at its breaks (segments.py): the trace then goes on
        # recording after a break, and each break's line in the function is kept.
        self.target_code: Any = None
        self.break_lines: list[int | None] = []
        # An in-place op recorded out of place (``functionalize``) and still running eagerly:
        # (the written array, the value it had); its own dispatch call is not recorded again.
        self.pending: tuple[Any, int] | None = None

    # -- values ----------------------------------------------------------------------------
    def add_input(self, array: Any) -> int:
        v = self.graph.new_value(array)
        self.graph.inputs.append(v)
        self.values[id(array)] = v
        self.keep.append(array)
        return v

    def resolve(self, x: Any, op_name: str) -> Any:
        """An op argument as a graph reference (a value or a constant), or None after a break."""
        if not isinstance(x, Tensor):
            return self.graph.const(x)
        data = x._data
        v = self.values.get(id(data))
        if v is not None:
            return v
        if self.outer is not None:
            v = self.outer(data)
            if v is not None:
                return v
        captured = self.captured.get(id(x))
        if captured is not None:
            self.lifted.append(captured)
            return self.add_input(data)
        if self.allow_fill_constants and data.dtype.kind in "fc" and not data.any():
            # Zeros of a float dtype made inside a backward rule (a missing output's gradient, a
            # scatter's base) are constants; any other array made there from data (a mask, a
            # count) would be a stale copy of this trace's values, so it breaks the graph.
            return self.graph.const(data)
        self.graph_break(f"op {op_name!r} reads a tensor made outside the traced ops "
                         "(a factory, random numbers, or a tensor the function does not take)")
        return None

    def graph_break(self, reason: str) -> None:
        if reason not in self.breaks:
            self.breaks.append(reason)
        if self.fullgraph:
            raise GraphBreak(reason)
        if self.target_code is not None:
            self.break_lines.append(self._line_in_target())

    def _line_in_target(self) -> int | None:
        """The line of the traced function being run when a break happened (None: outside it)."""
        frame: Any = sys._getframe(2)
        while frame is not None and frame.f_code is not self.target_code:
            frame = frame.f_back
        return None if frame is None else int(frame.f_lineno)

    def is_traced(self, t: Tensor) -> bool:
        return id(t._data) in self.values or (self.outer is not None and self.outer(t._data) is not None)

    # -- the hook --------------------------------------------------------------------------
    def on_call(self, frame: Any) -> None:
        """Read one dispatch path's frame: op, inputs, params, outputs."""
        if self.breaks and self.target_code is None:
            return  # the rest runs eagerly anyway
        loc = frame.f_locals
        if self.pending is not None and self._inner_inplace_call(frame):
            return
        name = frame.f_code.co_name
        op = loc.get("op")
        if op is None:
            op = loc["node_cls"]._op
        params = tuple(loc.get("params") or ())
        if name == "apply_generic":
            inputs = tuple(loc["inputs"])
            outputs = tuple(loc["outputs"])
        else:
            if name == "binary":
                inputs = (loc["a"], loc["b"])
            elif name == "ternary":
                inputs = (loc["a"], loc["b"], loc["c"])
            else:
                inputs = (loc["x"],)
            outputs = (loc["result"],)
        if id(outputs[0]) in self.recorded:
            return
        self.recorded.add(id(outputs[0]))
        self.record(op, inputs, params, outputs)

    def record(self, op: Any, inputs: tuple[Any, ...], params: tuple[Any, ...], outputs: tuple[Tensor, ...]) -> None:
        args = []
        for x in inputs:
            ref = self.resolve(x, op.name)
            if ref is None:
                return
            args.append(ref)
        casts = self._casts(op, inputs, params, args)
        if casts is None:
            return
        versioned = op.versioned_params
        if versioned is not None:  # a tensor given there (a loss's target) is a value, never a constant
            for i in versioned:
                p = params[i] if i < len(params) else None
                if isinstance(p, Tensor) and self.outer is None and id(p._data) not in self.values \
                        and id(p) in self.captured:  # one the function reads from its closure or globals
                    self.lifted.append(self.captured[id(p)])
                    self.add_input(p._data)
            # (an index key of several items holds its tensors: as arrays too, ``shape.key_arrays``)
            params = tuple(_shape.key_arrays(p) if i in versioned else p for i, p in enumerate(params))
        if any(isinstance(p, np.ndarray) for p in params):
            refs: list[Any] = []
            for p in params:
                if isinstance(p, np.ndarray):
                    v = self.values.get(id(p))
                    if v is None and self.outer is not None:
                        v = self.outer(p)
                    if v is None:
                        self.graph_break(f"op {op.name!r} takes an array made outside the traced ops")
                        return
                    refs.append(ParamRef(v))
                else:
                    refs.append(p)
            params = tuple(refs)
        outs = []
        for o in outputs:
            data = o._data
            known = self.values.get(id(data))
            if known is None:
                known = self.graph.new_value(data)
                self.values[id(data)] = known
                self.keep.append(data)
            outs.append(known)
        self.op_results.extend(outputs)
        pure = not any(word in op.name for word in _RANDOM_WORDS)
        fn = op.forward
        if fn is _elementwise._tanh_backward and not casts and self._expand_tanh_backward(inputs, args, outs[0]):
            return

        if len(params) == 1 and type(params[0]) is int and params[0] == 1 and op.name in _ALPHA_ONE and fn is _ALPHA_ONE[op.name][0]:
            fn, params = _ALPHA_ONE[op.name][1], ()  # ``_add(a, b, 1)`` is ``np.add(a, b)``: a ufunc, fusable
        self.graph.calls.append(Call(fn, op.name, args, params, outs, op.n_outputs != 1, casts, pure))

    def functionalize(self, frame: Any, target: Tensor) -> bool:
        """Record the in-place op that ``check_inplace`` (``frame``) is about to check, on
        ``target``, as its out-of-place form, when the graph owns ``target``'s array alone: a
        value it computed (not an input), no view, no other traced array on its memory, a pure
        op whose result has ``target``'s shape and dtype. True when recorded (or broken there)."""
        caller = frame.f_back
        if frame.f_code is not _inplace.check_inplace.__code__ or caller is None \
                or caller.f_code is not _inplace.apply_inplace.__code__:
            return False
        data = target._data
        v = self.values.get(id(data))
        if v is None or v in self.graph.inputs or target._base is not None or 0 in data.strides:
            return False
        op, args = caller.f_locals.get("op"), caller.f_locals.get("args")
        if op is None or args is None or op.n_outputs != 1 or any(w in op.name for w in _RANDOM_WORDS):
            return False
        if any(a is not data and np.may_share_memory(a, data) for a in self.keep if isinstance(a, np.ndarray)):
            return False  # a view or alias of it would see the write: the graph's values would not
        inputs, params = tuple(args[: op.n_inputs]), tuple(args[op.n_inputs:])
        try:
            with np.errstate(all="ignore"):
                result = _op.forward_arrays(op, inputs, params)
        except Exception:  # noqa: BLE001 - the eager op raises its own error: a break, as before
            return False
        if target._is_inference and not STATE.inference:
            return False  # (eager raises before its write)
        if not isinstance(result, np.ndarray) or result.shape != data.shape or result.dtype != data.dtype:
            return False  # (a cast or a broadcast on the write: not the out-of-place op's value)
        calls = len(self.graph.calls)
        self.record(op, inputs, params, (Tensor._make(result),))
        new = self.values.get(id(result))
        if new is None or len(self.graph.calls) == calls:
            return True  # a break already (an input made outside the traced ops)
        self.values[id(data)] = new
        self.op_results.append(target)  # its grad_fn will be the in-place op's node
        self.pending = (data, v)
        return True

    def _inner_inplace_call(self, frame: Any) -> bool:
        """Whether this dispatch call is the one an in-place op being functionalised makes on its
        snapshot (already recorded): a snapshot that is a copy (an op saving its input) stands
        for the old value, and it carries the node the old value came from (the target's is
        replaced). Any other call means that op raised before its write: no longer pending."""
        caller = frame.f_back
        for _ in range(3):  # (apply_inplace -> apply -> the path)
            if caller is None or caller.f_code is _inplace.apply_inplace.__code__:
                break
            caller = caller.f_back
        if caller is None or caller.f_code is not _inplace.apply_inplace.__code__ or self.pending is None:
            self.pending = None
            return False
        loc, name = frame.f_locals, frame.f_code.co_name
        snapshot = loc["inputs"][0] if name == "apply_generic" else loc.get("x" if name in ("unary", "prerun") else "a")
        if isinstance(snapshot, Tensor):
            if id(snapshot._data) not in self.values:
                self.values[id(snapshot._data)] = self.pending[1]
                self.keep.append(snapshot._data)
            self.op_results.append(snapshot)
        return True

    def _expand_tanh_backward(self, inputs: tuple[Any, ...], args: list[Any], out: int) -> bool:
        """``tanh_backward(grad, result)`` of equal shapes and float dtypes as its three ufuncs
        (``grad * (1 - result²)``, the same steps as its forward), so that codegen runs them in
        place on buffers; False to record the call as it is."""
        grad, result = (x._data if isinstance(x, Tensor) else None for x in inputs)
        if grad is None or result is None or grad.shape != result.shape or grad.dtype != result.dtype:
            return False
        one = _elementwise._ONES.get(result.dtype)
        if one is None or not all(isinstance(a, int) for a in args):
            return False
        square, scale = self.graph.new_value(result), self.graph.new_value(result)
        calls = self.graph.calls
        calls.append(Call(np.multiply, "tanh_backward", [args[1], args[1]], (), [square], False))
        calls.append(Call(np.subtract, "tanh_backward", [self.graph.const(one), square], (), [scale], False))
        calls.append(Call(np.multiply, "tanh_backward", [args[0], scale], (), [out], False))
        return True

    def _casts(self, op: Any, inputs: tuple[Any, ...], params: tuple[Any, ...], args: list[Any]) -> dict[int, Any] | None:
        """What ``forward_arrays`` does to the arrays before the forward (casts, wrapped ints),
        found by running its steps on the traced values: casts of tensors, changed constants."""
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        before = list(arrays)
        rule = op.dtype_rule
        if rule != "same":
            if rule == "float_unary":
                if arrays[0].dtype.kind not in "fc":
                    arrays[0] = arrays[0].astype(grad_mode_default_dtype())
            else:
                _op._cast_arrays(op, inputs, params, arrays)
        elif len(arrays) == 2 and (type(arrays[1]) is int or type(arrays[0]) is int):
            _op._wrap_int_operand(arrays)
        casts: dict[int, Any] = {}
        for i, (a, b) in enumerate(zip(before, arrays)):
            if a is b:
                continue
            if isinstance(inputs[i], Tensor):
                casts[i] = b.dtype
            else:
                args[i] = self.graph.const(b)
        # A float number beside a float array reaches ufuncs as a 0-d array of its dtype, as the
        # binary path passes it (the same values, and NumPy runs it faster).
        if len(arrays) == 2 and isinstance(inputs[0], Tensor) and type(arrays[1]) is float \
                and arrays[0].dtype.kind == "f" and isinstance(op.forward, np.ufunc):
            scalar = _op.scalar_array(arrays[1], arrays[0].dtype)
            if isinstance(scalar, np.ndarray):
                args[1] = self.graph.const(scalar)
        return casts


def tracing_here() -> bool:
    """Whether a trace is recording this thread's op calls now."""
    state = _op.STATE
    return type(state) is _TracingState and state._tracer.thread == threading.get_ident()


def grad_mode_default_dtype() -> Any:
    from .._dtype import get_default_dtype

    return get_default_dtype().np


class _TracingState:
    """Stands in for ``STATE`` in ``ops.op`` while a trace runs (see the module docstring)."""

    def __init__(self, tracer: Tracer, real: Any) -> None:
        object.__setattr__(self, "_tracer", tracer)
        object.__setattr__(self, "_real", real)

    @property
    def inference(self) -> bool:
        tracer = self._tracer
        if threading.get_ident() == tracer.thread:
            frame = sys._getframe(1)
            if frame.f_code.co_name in _PATHS:
                try:
                    tracer.on_call(frame)
                except GraphBreak:
                    raise
                except Exception as error:  # noqa: BLE001 - the eager op must not fail because of the trace
                    tracer.graph_break(f"retrograd.compile could not record a call: {error!r}")
        return self._real.inference  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)


class _InplaceState:
    """Stands in for ``STATE`` in ``ops.inplace``: an in-place op of the tracing thread on a
    traced tensor is a graph break."""

    def __init__(self, tracer: Tracer, real: Any) -> None:
        object.__setattr__(self, "_tracer", tracer)
        object.__setattr__(self, "_real", real)

    @property
    def grad_enabled(self) -> bool:
        tracer = self._tracer
        if threading.get_ident() == tracer.thread and (not tracer.breaks or tracer.target_code is not None):
            frame = sys._getframe(1)
            target = frame.f_locals.get("self")
            if not isinstance(target, Tensor):
                args = frame.f_locals.get("args")
                target = args[0] if args else None
            pending = tracer.pending
            if isinstance(target, Tensor) and pending is not None and pending[0] is target._data:
                pass  # (the in-place op being functionalised reads the mode again)
            elif isinstance(target, Tensor) and tracer.is_traced(target) and not tracer.functionalize(frame, target):
                op, caller = None, frame  # type: Any, Any  # the in-place op is a local of a caller in ops/inplace.py
                while op is None and caller is not None and caller.f_code.co_filename == frame.f_code.co_filename:
                    op = caller.f_locals.get("op")
                    caller = caller.f_back
                label = getattr(op, "name", frame.f_code.co_name)
                tracer.graph_break(f"in-place op {label!r} writes to a traced tensor")
        return self._real.grad_enabled  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)


# Tensor methods that hand a traced value to Python: each is a graph break while tracing.
_READS = ("item", "tolist", "numpy", "__array__", "__bool__", "__float__", "__int__", "__index__", "__complex__")


def _reader(tracer: Tracer, name: str, original: Any) -> Any:
    label = f"Tensor.{name}()" if not name.startswith("__") else {"__bool__": "Python control flow on a tensor "
                                                                  "value (Tensor.__bool__)"}.get(name, f"Tensor.{name}")

    def read(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == tracer.thread and tracer.is_traced(self):
            tracer.graph_break(f"{label} reads a traced value into Python")
        return original(self, *args, **kwargs)

    read.__name__ = name
    return read


_SIDE_EFFECT = ("an in-place write to a tensor the graph does not compute (a global or captured tensor, a "
                "parameter updated by an optimizer step): the generated code would not repeat it")


def _bump_watcher(tracer: Tracer, original: Any) -> Any:
    """``VersionCounter.bump`` for a trace's duration: every in-place write counts a version (the
    tensor ops and the optimizers' NumPy updates alike), and one of the tracing thread's forward
    that is not an in-place op on a traced tensor (already a break) is a side effect the graph
    does not hold, so a break: replaying the graph alone would silently skip it."""

    def bump(self: Any, op_name: str) -> None:
        if tracer.pending is not None and threading.get_ident() == tracer.thread:
            tracer.pending = None  # the functionalised op's write: done (the graph holds it)
            original(self, op_name)
            return
        if threading.get_ident() == tracer.thread and tracer.outer is None:
            # The writer's tensor is a local of the caller (``self``, ``target``...): a traced one
            # is ``_InplaceState``'s break already.
            local = sys._getframe(1).f_locals.values()
            if any(isinstance(v, Tensor) and v._version_counter is self and tracer.is_traced(v) for v in local):
                pass
            elif tracer.breaks and tracer.breaks[-1].startswith("in-place op"):
                if tracer.target_code is not None:  # (most likely that op's own write: its line, no new reason)
                    tracer.break_lines.append(tracer._line_in_target())
            else:
                tracer.graph_break(_SIDE_EFFECT)
        original(self, op_name)

    return bump


def _grad_writer(tracer: Tracer, original: Any) -> Any:
    """``Tensor._accumulate_grad`` for a trace's duration: ``backward()`` run by the traced function
    writes ``.grad``, a side effect the generated code would not repeat: a break."""

    def accumulate(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == tracer.thread and tracer.outer is None:
            tracer.graph_break("backward() inside the function writes .grad: the generated code would not repeat it")
        return original(self, *args, **kwargs)

    return accumulate


def _grad_slot(tracer: Tracer) -> property:
    """``Tensor._grad`` for a trace's duration (a class default, the value in the instance's
    ``__dict__``): a write by the tracing thread's forward (``zero_grad()``, ``p.grad = ...``) is a
    side effect the generated code would not repeat: a break."""

    def get(self: Tensor) -> Any:
        return self.__dict__.get("_grad")

    def put(self: Tensor, value: Any) -> None:
        if threading.get_ident() == tracer.thread and tracer.outer is None:
            tracer.graph_break("a write to .grad (zero_grad(), backward()) inside the function: the generated code "
                               "would not repeat it")
        self.__dict__["_grad"] = value

    return property(get, put)


@contextmanager
def tracing(tracer: Tracer) -> Iterator[None]:
    """Install the tracer's stand-ins for the duration of a trace."""
    with _TRACE_LOCK:
        originals = {name: Tensor.__dict__[name] for name in _READS if name in Tensor.__dict__}
        op_state, inplace_state = _op.STATE, _inplace.STATE
        bump = VersionCounter.__dict__["bump"]
        accumulate = Tensor.__dict__["_accumulate_grad"]
        try:
            VersionCounter.bump = _bump_watcher(tracer, bump)  # type: ignore[method-assign]
            Tensor._accumulate_grad = _grad_writer(tracer, accumulate)  # type: ignore[method-assign]
            Tensor._grad = _grad_slot(tracer)  # type: ignore[assignment]
            _op.STATE = _TracingState(tracer, STATE)  # type: ignore[assignment]
            _inplace.STATE = _InplaceState(tracer, STATE)  # type: ignore[assignment]
            for name, method in originals.items():
                setattr(Tensor, name, _reader(tracer, name, method))
            with grad_mode._contexts_lock:
                INFERENCE_CONTEXTS[0] += 1
            yield
        finally:
            with grad_mode._contexts_lock:
                INFERENCE_CONTEXTS[0] -= 1
            for name, method in originals.items():
                setattr(Tensor, name, method)
            VersionCounter.bump = bump  # type: ignore[method-assign]
            Tensor._accumulate_grad = accumulate  # type: ignore[method-assign]
            Tensor._grad = None  # (the class default again)
            _op.STATE = op_state
            _inplace.STATE = inplace_state  # type: ignore[assignment]
