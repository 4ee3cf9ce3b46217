"""JVP rules of the op table: how each op carries tangents in forward-mode AD.

Each differentiable entry declares its JVP beside its VJP rules (``Op(..., jvp="linear")``,
validated by ``ops/declaration.py``): one of these constructors, which derive it mechanically
(JAX's ``deflinear``/``defjvp`` idea), a rule function of its own, or ``"unsupported"`` (PyTorch's
"Trying to use forward AD with ..." error, where PyTorch has no JVP either). ``jvp_kind(op)``
reads the declaration, and ``docs/api/forward_ad.md`` lists the constructors:

- ``"linear"``: the op is linear in its differentiable inputs jointly (views, reshapes, ``sum``,
  ``cat``, ``gather``, the FFTs...), so its JVP is the op itself applied to the tangents (zeros
  for inputs without one). Exact.
- ``"multilinear"``: linear in each input separately (``mm``, ``bmm``, ``dot``): the sum over
  inputs of the op with that input replaced by its tangent. Exact.
- ``"affine_multilinear"``: ``beta * input + alpha * f(rest)`` with ``f`` multilinear
  (``addmm``, ``addcmul``, ``baddbmm``): the op on (input's tangent, first tangent, rest) plus
  the op on (zero, ..., tangent i, ...) for the others. Exact.
- ``"elementwise"``: an elementwise op of real tensors, whose VJP rule ``grad * f'(x)`` is
  self-adjoint: the VJP rules applied to the tangents, summed over inputs and broadcast to the
  output. Exact for real dtypes (a complex one takes the transpose below, since its VJP rule
  conjugates).
- ``"transpose"`` (the general one): the VJP rule is linear in the gradient, so
  the JVP is its transpose, computed by differentiating the rule with respect to a dummy
  gradient: ``t_out = d/dg <vjp_rule(g), t_in>`` (the real inner product, so complex inputs and
  non-holomorphic ops are right too). Exact wherever the rule is differentiable in its
  gradient, which double backward (gradgradcheck of every op in the op database) checks; an
  op whose rule is not raises PyTorch's "not implemented" error rather than give a wrong tangent.

The rules run on the primals with forward AD suspended (a tangent of a tangent would be
meaningless at one level), under the caller's grad mode: the tangent has a graph exactly when
something it was computed from requires grad (forward-over-reverse, reverse-over-forward).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dtype import FROM_NUMPY, _promote_pair
from ..autograd.anomaly_mode import GENERATED_FILE_PREFIX
from ..autograd.forward_ad import DUAL, UNTRACKED_TANGENTS, set_tangent, suspended, tangent_of
from ..autograd.grad_mode import STATE, enable_grad
from ..autograd.graph import SavedTensor
from ..tensor import Tensor
from .op import _compile, _where, apply, forward_arrays, quiet  # (this module loads on first use, after ops/op.py)
from .plan import DTYPE, NEEDS, PARAM, SAVED, SAVED_ALL, SHAPE, SHAPES, VERSIONED

NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been implemented yet."
)


def jvp_kind(op: Any) -> str | None:
    """How ``op``'s JVP is derived: its entry's ``jvp=`` (see the module docstring), ``"explicit"``
    for a rule function, None for a non-differentiable op (or, a bug the op table's test catches,
    a differentiable one that declares none).

    >>> from retrograd.ops.elementwise import exp
    >>> from retrograd.ops.linalg import mm
    >>> jvp_kind(exp), jvp_kind(mm)
    ('elementwise', 'multilinear')
    """
    if not op.differentiable:
        return None
    jvp = op.jvp
    return "explicit" if callable(jvp) else jvp


def propagate(op: Any, inputs: Sequence[Any], params: Sequence[Any], result: Any) -> None:
    """Give ``result`` (an op's output, or tuple of outputs) its tangent, if an input has one.

    Called by the op call paths only while a dual level is active (``DUAL[0]``). Runs the op's
    own tangent path (``tangent_path``: generated straight-line code for a one-output op, made on
    the op's first use inside a level), which is ``propagate_general`` specialised to that op."""
    path = _TANGENT_PATHS.get(op)
    if path is None:
        path = tangent_path(op)
    path(op, inputs, params, result)


def propagate_general(op: Any, inputs: Sequence[Any], params: Sequence[Any], result: Any) -> None:
    """``propagate`` for any op: the reference the generated tangent paths are specialised from,
    and what ops with several outputs, variadic ops and joint rules run."""
    level = DUAL[0]
    if level is None or not op.differentiable:
        return
    kind = op.jvp
    if (kind == "unsupported" or kind is None) and any(
            isinstance(x, Tensor) and tangent_of(x, level) is not None for x in inputs):
        raise NotImplementedError(NOT_IMPLEMENTED.format(op.name))  # (as PyTorch; or no JVP declared)
    if op.view and isinstance(inputs[0], Tensor):  # how to make this view's tangent from its base's
        source = inputs[0]                              # (see ``_view_tangent``)
        if isinstance(result, tuple):
            for k, o in enumerate(result):
                o._fw_view = (op, source, params, k, source._data, ())
        else:
            result._fw_view = (op, source, params, None, source._data, ())
    diff = range(len(inputs)) if op.variadic or op.joint_rule is not None else op.diff_inputs
    tangents: list[Any] = [None] * len(inputs)
    found = False
    other_dtype = None  # the promoted dtype of tangents of another dtype than their primals
    for i in diff:
        x = inputs[i]
        if isinstance(x, Tensor):
            fw = x._fw_grad  # (``tangent_of``, inline: this runs for every input of every op)
            if fw is not None and fw[0] is level:
                # (a tangent of another dtype than its primal is kept: PyTorch's formulas compute
                # with it, so ``f32 primal, f64 tangent`` gives f64 tangents from there on)
                t = tangents[i] = fw[1]
                if t._data.dtype != x._data.dtype:
                    other_dtype = _promote_pair(other_dtype, t._data.dtype)
                found = True
    if not found:
        return
    if isinstance(result, tuple):
        outputs: tuple[Any, ...] = result
        flags = op.differentiable_outputs
        wanted: Sequence[int] = [k for k, o in enumerate(outputs)
                                 if o._data.dtype.kind in "fc" and (k >= len(flags) or flags[k])]
        if not wanted:
            return
    else:
        outputs = (result,)
        if result._data.dtype.kind not in "fc":
            return
        wanted = _FIRST
    DUAL[0] = None  # (``suspended()``, inline: a context manager costs microseconds per op)
    grad_off = UNTRACKED_TANGENTS[0] and STATE.grad_enabled  # (no graph wanted for these tangents)
    if grad_off:
        STATE.grad_enabled = False
    try:
        if kind == "elementwise" and op.joint_rule is None and _all_real(inputs, outputs):
            out_tangents = _elementwise(op, inputs, params, outputs, tangents, diff)
        elif kind == "linear":
            if STATE.grad_enabled:
                out_tangents = _linear(op, inputs, params, tangents, diff, len(outputs))
            else:
                out_tangents = _linear_arrays(op, inputs, params, tangents, diff)
        elif kind == "multilinear":
            if STATE.grad_enabled:
                out_tangents = _multilinear(op, inputs, params, tangents, diff, 0)
            else:
                out_tangents = _multilinear_arrays(op, inputs, params, tangents, diff)
        elif kind == "affine_multilinear":
            out_tangents = _multilinear(op, inputs, params, tangents, diff, 1)
        elif callable(kind):  # the entry's own rule function
            out_tangents = kind(tangents, inputs, params, outputs)
        else:
            out_tangents = _transpose(op, inputs, params, outputs, tangents, diff, wanted)
            kind = "transpose"  # (for ``_mixed_dtype_tangent``: an elementwise op of complex tensors too)
    finally:
        DUAL[0] = level
        if grad_off:
            STATE.grad_enabled = True
    for k in wanted:
        t = out_tangents[k]
        if t is None:
            continue
        out = outputs[k]
        data = t._data
        if data.shape != out._data.shape:
            t = t.expand(out._data.shape)
        if other_dtype is not None:
            t = _mixed_dtype_tangent(t, out, other_dtype, kind)
        elif data.dtype != out._data.dtype:
            t = _as_output_tangent(t, out)
        out._fw_grad = (level, t)
        if out._grad_fn is not None and _saves_output(op):
            _keep_saved_tangent(out, t, level)


_FIRST = (0,)


_SAVES_OUTPUT: dict[int, bool] = {}


def _saves_output(op: Any) -> bool:
    """Whether some rule of ``op`` reads its output (then the node keeps it as a ``SavedTensor``)."""
    known = _SAVES_OUTPUT.get(id(op))
    if known is None:
        n = op.n_inputs
        known = _SAVES_OUTPUT[id(op)] = any(i >= n for slots in op.saves_for for i in slots)
    return known


def _dtype(t: Tensor) -> Any:
    return t.dtype


def _as_output_tangent(t: Tensor, out: Tensor) -> Tensor:
    """A rule's tangent ``t`` in the dtype of the output ``out`` (the real part for a real one)."""
    return t.real if t._data.dtype.kind == "c" and out._data.dtype.kind != "c" else t.to(_dtype(out))


def _mixed_dtype_tangent(t: Tensor, out: Tensor, other_dtype: Any, kind: Any) -> Tensor:
    """A rule's tangent ``t`` for ``out`` where an input's tangent had another dtype than its
    primal (``other_dtype``, their promotion). PyTorch's formulas compute with such a tangent, so
    its dtype carries on (a float64 tangent of a float32 primal stays float64, a float16 one through
    a view stays float16): the rule's own result is kept where it computed with the tangents
    (the elementwise rules, the linear ops), and the transpose, which computes in the output's
    dtype, is promoted with theirs. A complex tangent of a real output gives its real part."""
    if t._data.dtype.kind == "c" and out._data.dtype.kind != "c" and other_dtype.kind != "c":
        t = t.real
    if kind == "transpose":
        target = _promote_pair(t._data.dtype, other_dtype)
        if target != t._data.dtype:
            t = t.to(FROM_NUMPY[target])
    return t


def _all_real(inputs: Sequence[Any], outputs: Sequence[Any]) -> bool:
    for x in (*inputs, *outputs):
        if isinstance(x, Tensor) and x._data.dtype.kind == "c":
            return False
    return True


def _zeros_like(x: Tensor) -> Tensor:
    return Tensor._make(np.zeros(x._data.shape, x._data.dtype))


def _rule_args(op: Any, specs: Sequence[tuple[int, int]], inputs: Sequence[Any], params: Sequence[Any],
               outputs: Sequence[Any], needs: tuple[bool, ...], diff: Sequence[int]) -> list[Any]:
    """A rule's arguments, read from the call itself instead of a node (``ARG_EXPRESSIONS``)."""
    n = len(inputs) if op.variadic else op.n_inputs
    args: list[Any] = []
    for kind, i in specs:
        if kind == SAVED:
            args.append(inputs[i] if i < n else outputs[i - n])
        elif kind == PARAM or kind == VERSIONED:  # (a versioned param is read as given: no write since)
            args.append(params[i])
        elif kind == SHAPE or kind == DTYPE:
            x = inputs[diff[i]]
            data = x._data if isinstance(x, Tensor) else np.asarray(x)
            args.append(data.shape if kind == SHAPE else data.dtype)
        elif kind == NEEDS:
            args.append(needs)
        elif kind == SHAPES:
            args.append(tuple(x._data.shape if isinstance(x, Tensor) else None for x in inputs))
        elif kind == SAVED_ALL:
            args.append(tuple(inputs))
        else:  # pragma: no cover - the plan knows no other kinds
            raise AssertionError(kind)
    return args


def _elementwise(op: Any, inputs: Sequence[Any], params: Sequence[Any], outputs: Sequence[Any],
                 tangents: list[Any], diff: Sequence[int]) -> list[Any]:
    needs = tuple(tangents[i] is not None for i in diff)
    total: Any = None
    for e, i in enumerate(diff):
        t = tangents[i]
        if t is None:
            continue
        rule, specs = op.edge_rules[e]
        part = rule(t, *_rule_args(op, specs, inputs, params, outputs, needs, diff))
        total = part if total is None else total + part
    return [total]


def _untracked(args: Sequence[Any]) -> bool:
    """Whether the tangent needs no graph: grad mode off, or nothing it is made from requires grad."""
    if not STATE.grad_enabled:
        return True
    return not any(isinstance(x, Tensor) and x._requires_grad for x in args)


def _run(op: Any, args: Sequence[Any], params: Sequence[Any], untracked: bool) -> Any:
    """``op(*args, *params)``; when no graph is wanted, the NumPy forward alone (no call path)."""
    if not untracked:
        return apply(op, (*args, *params))
    out = forward_arrays(op, args, params)
    if isinstance(out, tuple):
        return tuple(Tensor._make(np.asarray(o)) for o in out)
    return Tensor._make(np.asarray(out))


def _linear(op: Any, inputs: Sequence[Any], params: Sequence[Any], tangents: list[Any], diff: Sequence[int],
            n_outputs: int) -> list[Any]:
    args = list(inputs)
    for i in diff:
        x = inputs[i]
        if isinstance(x, Tensor):
            args[i] = tangents[i] if tangents[i] is not None else _zeros_like(x)
    out = _run(op, args, params, _untracked(args))
    return list(out) if isinstance(out, tuple) else [out]


def _multilinear(op: Any, inputs: Sequence[Any], params: Sequence[Any], tangents: list[Any], diff: Sequence[int],
                 affine: int) -> list[Any]:
    """Sum over inputs i of op(..., tangent_i, ...); with ``affine=1`` input 0 is an added term,
    so it rides along with the first product term and is zero in the others. A term without a
    graph (nothing in it requires grad: ``x @ tW`` where only W does) is computed as arrays, and
    such terms are summed as arrays (one Tensor at the end, not one per term and sum)."""
    grad_on = STATE.grad_enabled
    total: Any = None
    tracked = False
    first = True
    for i in diff:
        if i < affine:
            continue
        t = tangents[i]
        t0 = tangents[0] if affine else None
        if t is None and not (affine and first and t0 is not None):
            continue
        args = list(inputs)
        args[i] = t if t is not None else _zeros_like(inputs[i])
        if affine:
            args[0] = t0 if first and t0 is not None else _zeros_like(inputs[0])
        first = False
        total, tracked = _add_term(op, args, params, grad_on, total, tracked)
    if total is None and affine and tangents[0] is not None:  # only the added input has a tangent
        args = [_zeros_like(x) if isinstance(x, Tensor) and j in diff else x for j, x in enumerate(inputs)]
        args[0] = tangents[0]
        total, tracked = _add_term(op, args, params, grad_on, total, tracked)
    if not tracked and total is not None:
        total = Tensor._make(np.asarray(total))
    return [total]


def _add_term(op: Any, args: Sequence[Any], params: Sequence[Any], grad_on: bool, total: Any,
              tracked: bool) -> tuple[Any, bool]:
    """``total + op(*args, *params)``: arrays while no term needs a graph, Tensors from the first
    one that does (``tracked``)."""
    if grad_on and any(isinstance(x, Tensor) and x._requires_grad for x in args):
        # (the op's own two-input recording path where it has one: cheaper than the generic one)
        part = op.binary(*args, *params) if op.binary_fast else apply(op, (*args, *params))
        if total is None:
            return part, True
        return (total if tracked else Tensor._make(np.asarray(total))) + part, True
    part = forward_arrays(op, args, params)
    if total is None:
        return part, tracked
    return (total + Tensor._make(np.asarray(part)) if tracked else np.add(total, part)), tracked


def _linear_arrays(op: Any, inputs: Sequence[Any], params: Sequence[Any], tangents: list[Any],
                   diff: Sequence[int]) -> list[Any]:
    """``_linear`` with grad mode off (the backward pass of forward over reverse, untracked
    tangents): no graph can be wanted, so the op's NumPy forward runs on the tangents directly.

    >>> import retrograd as rg
    >>> from retrograd.ops.shape import t as t_op
    >>> _linear_arrays(t_op, [rg.ones(2, 3)], [], [rg.arange(6.0).view(2, 3)], (0,))[0]
    tensor([[0., 3.],
            [1., 4.],
            [2., 5.]])
    """
    args = list(inputs)
    for i in diff:
        x = inputs[i]
        if isinstance(x, Tensor):
            t = tangents[i]
            args[i] = t if t is not None else _zeros_like(x)
    out = forward_arrays(op, args, params)
    if isinstance(out, tuple):
        return [Tensor._make(np.asarray(o)) for o in out]
    return [Tensor._make(np.asarray(out))]


def _multilinear_arrays(op: Any, inputs: Sequence[Any], params: Sequence[Any], tangents: list[Any],
                        diff: Sequence[int]) -> list[Any]:
    """``_multilinear`` (not affine) with grad mode off: the terms ``op(..., tangent_i, ...)`` as
    arrays, summed in the same order, one Tensor at the end.

    >>> import retrograd as rg
    >>> from retrograd.ops.linalg import mm
    >>> a, b = rg.tensor([[1.0, 2.0]]), rg.tensor([[3.0], [4.0]])
    >>> _multilinear_arrays(mm, [a, b], [], [rg.ones(1, 2), rg.ones(2, 1)], (0, 1))[0]
    tensor([[10.]])
    """
    total: Any = None
    for i in diff:
        t = tangents[i]
        if t is None:
            continue
        args = list(inputs)
        args[i] = t
        part = forward_arrays(op, args, params)
        total = part if total is None else np.add(total, part)
    return [Tensor._make(np.asarray(total))]


def _transpose(op: Any, inputs: Sequence[Any], params: Sequence[Any], outputs: Sequence[Any], tangents: list[Any],
               diff: Sequence[int], wanted: Sequence[int]) -> list[Any]:
    """``t_out = d/dg <vjp(g), t_in>``: the transpose of the VJP rule (see the module docstring)."""
    from ..autograd import grad as autograd_grad

    create = STATE.grad_enabled and (
        any(t is not None and t._requires_grad for t in tangents)
        or any(isinstance(x, Tensor) and x._requires_grad for x in inputs)
    )
    needs = tuple(tangents[i] is not None for i in diff)
    if not create:  # the rule's graph then starts at the dummy only: the backward below walks nothing else
        inputs = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
        outputs = [o.detach() for o in outputs]
    with enable_grad():
        # Ones, not zeros: the rule is linear in the gradient, so its derivative is the same at any
        # gradient, and some rules are computed through log|grad| (logcumsumexp), nan at zero.
        dummies = [_zeros_like(o) for o in outputs]
        for k in wanted:
            dummies[k] = Tensor._make(np.ones(outputs[k]._data.shape, outputs[k]._data.dtype)).requires_grad_()
        g: Any = dummies[0] if op.n_outputs == 1 and len(outputs) == 1 else tuple(dummies)
        if op.joint_rule is not None:
            grads = tuple(op.joint_rule(g, *_rule_args(op, op.joint_args, inputs, params, outputs, needs, diff)))
            pairs = [(grads[e], tangents[i]) for e, i in enumerate(diff) if tangents[i] is not None]
        else:
            pairs = []
            for e, i in enumerate(diff):
                if tangents[i] is not None:
                    rule, specs = op.edge_rules[e]
                    pairs.append((rule(g, *_rule_args(op, specs, inputs, params, outputs, needs, diff)),
                                  tangents[i]))
        total: Any = None
        for gi, t in pairs:
            if gi is None:
                continue
            if not isinstance(gi, Tensor) or not gi._requires_grad and np.any(gi._data):
                # A rule computed outside the graph: its transpose is unknown (never a wrong tangent).
                raise NotImplementedError(NOT_IMPLEMENTED.format(op.name))
            prod = (gi.conj() * t).real if gi._data.dtype.kind == "c" else gi * (t.real if t.is_complex() else t)
            s = prod.sum()
            total = s if total is None else total + s
        targets = [dummies[k] for k in wanted]
        if total is None or not total._requires_grad:  # rules independent of the gradient: zero
            return [_zeros_like(o) for o in outputs]
        found = autograd_grad(total, targets, create_graph=create, allow_unused=True)
    out: list[Any] = [None] * len(outputs)
    for k, f in zip(wanted, found):
        out[k] = f if f is not None else _zeros_like(outputs[k])
    return out


# -- generated tangent paths ------------------------------------------------------------------
# ``propagate_general`` decides, for every op and every call, what the op's declaration already
# settles: which inputs are differentiable, the JVP kind, whether the op is a view, what each rule
# reads, whether a node saves the output. Forward over reverse runs a dozen ops per layer with a
# tangent, so that Python is most of what forward AD adds to an op. ``tangent_path(op)`` writes
# the same steps for one op as straight-line code, made on the op's first use inside a dual level
# (as ``ops/op.py`` writes each op's backward ``apply``): the rule arguments as direct reads, the
# loops over inputs unrolled, and, where no graph can be wanted (grad mode off: the backward pass
# of forward over reverse), linear and bilinear tangents computed by the op's NumPy forward on the
# arrays. Anything unusual at run time (a tangent of another dtype than its primal, a complex
# elementwise op) takes ``propagate_general`` from the start, so the generated code only handles
# the common case. ``tangent_source(op)`` prints it.

_TANGENT_PATHS: dict[Any, Any] = {}  # op -> its tangent path (made on first use)
_TANGENT_SOURCES: dict[Any, str] = {}  # op -> the generated source, where there is one


def _no_tangent(op: Any, inputs: Sequence[Any], params: Sequence[Any], result: Any) -> None:
    """The tangent path of a non-differentiable op: its outputs get no tangent."""


def tangent_path(op: Any) -> Any:
    """``op``'s tangent path (made once): generated for a one-output op with a rule per input and
    a JVP the generator knows, else ``propagate_general``. Called with ``propagate``'s arguments.

    >>> from retrograd.ops.elementwise import exp
    >>> from retrograd.ops.shape import unbind
    >>> tangent_path(exp).__name__, tangent_path(unbind).__name__
    ('tangent_path', 'propagate_general')
    """
    path = _TANGENT_PATHS.get(op)
    if path is None:
        if not op.differentiable:
            path = _no_tangent
        elif (op.n_outputs != 1 or op.variadic or op.joint_rule is not None or not op.diff_inputs
              or op.jvp in ("unsupported", None)):
            path = propagate_general
        else:
            source, path = _generate_tangent_path(op)
            _TANGENT_SOURCES[op] = source
        _TANGENT_PATHS[op] = path
    return path


def tangent_source(op: Any) -> str | None:
    """The source of ``op``'s generated tangent path (None where it runs ``propagate_general``).

    >>> from retrograd.ops.linalg import mm
    >>> print(tangent_source(mm).splitlines()[0])
    def tangent_path(op, inputs, params, result):
    """
    tangent_path(op)
    return _TANGENT_SOURCES.get(op)


def _array_of(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _rule_call_args(op: Any, specs: Sequence[tuple[int, int]], diff: Sequence[int]) -> list[str]:
    """A rule's arguments as expressions of the generated path's locals (``_rule_args`` inlined):
    ``x{i}`` the inputs, ``result``, ``params``, ``needs``."""
    n = op.n_inputs
    args = []
    for kind, i in specs:
        if kind == SAVED:
            args.append(f"x{i}" if i < n else "result")
        elif kind == PARAM or kind == VERSIONED:
            args.append(f"params[{i}]")
        elif kind == SHAPE:
            args.append(f"_array_of(x{diff[i]}).shape")
        elif kind == DTYPE:
            args.append(f"_array_of(x{diff[i]}).dtype")
        elif kind == NEEDS:
            args.append("needs")
        else:  # (SHAPES, SAVED_ALL: variadic ops, which run propagate_general)
            raise AssertionError(f"{op.name}: unexpected rule argument kind {kind}")
    return args


def _forward_call(op: Any, args: Sequence[str], indent: str) -> list[str]:
    """Lines that set ``d`` to the op's NumPy forward of array expressions ``args`` (and the
    params): the forward itself where the op's dtype rule casts nothing, else ``forward_arrays``."""
    if op.dtype_rule != "same":  # (forward_arrays casts as the op's call path does: it takes the tensors)
        tensors = [a.removesuffix("._data") for a in args]
        return [f"{indent}d = forward_arrays(op, ({', '.join(tensors)},), params)"]
    call = ", ".join([*args, "*params"])
    return [f"{indent}try:",
            f"{indent}    d = forward({call})",
            f"{indent}except RuntimeWarning:  # (a warnings filter that makes them errors: as forward_arrays)",
            f"{indent}    d = quiet(forward, {call})"]


def _generate_tangent_path(op: Any) -> tuple[str, Any]:
    """Write ``propagate_general`` for one op (see the section's comment)."""
    kind = "explicit" if callable(op.jvp) else op.jvp
    n = op.n_inputs
    diff = op.diff_inputs
    xs = [f"x{i}" for i in range(n)]
    ts = [f"t{i}" if i in diff else "None" for i in range(n)]
    namespace: dict[str, Any] = {
        "DUAL": DUAL, "STATE": STATE, "UNTRACKED_TANGENTS": UNTRACKED_TANGENTS, "Tensor": Tensor,
        "general": propagate_general, "forward": op.forward, "forward_arrays": forward_arrays, "quiet": quiet,
        "apply": apply, "_make": Tensor._make, "_asarray": np.asarray, "_add": np.add, "_zeros_like": _zeros_like,
        "_array_of": _array_of, "_untracked": _untracked, "_multilinear": _multilinear, "_transpose": _transpose,
        "_keep_saved_tangent": _keep_saved_tangent, "_dtype": _dtype, "_FIRST": _FIRST, "jvp": op.jvp,
    }
    lines = ["def tangent_path(op, inputs, params, result):",
             f"    # tangent path of op {op.name!r} ({kind}), generated by ops/forward.py (_generate_tangent_path)",
             "    level = DUAL[0]",
             "    if level is None:",
             "        return"]
    reads_at = len(lines)  # (the inputs the code reads are named here, at the end)
    if op.view:  # how to make this view's tangent from its base's (``_view_tangent``)
        lines += ["    if isinstance(x0, Tensor):",
                  "        result._fw_view = (op, x0, params, None, x0._data, ())"]
    lines.append("    " + " = ".join(f"t{i}" for i in diff) + " = None")
    for i in diff:
        lines += [f"    if isinstance(x{i}, Tensor):",
                  f"        fw = x{i}._fw_grad",
                  "        if fw is not None and fw[0] is level:",
                  f"            t{i} = fw[1]",
                  f"            if t{i}._data.dtype is not x{i}._data.dtype and t{i}._data.dtype != x{i}._data.dtype:",
                  "                # (a tangent of another dtype: converted by the general path)",
                  "                return general(op, inputs, params, result)"]
    lines += ["    if " + " and ".join(f"t{i} is None" for i in diff) + ":",
              "        return",
              "    out = result._data",
              '    if out.dtype.kind not in "fc":',
              "        return"]
    if kind == "elementwise":  # complex operands take the transpose (the general path)
        complex_test = " or ".join(['out.dtype.kind == "c"'] + [
            f'isinstance({x}, Tensor) and {x}._data.dtype.kind == "c"' for x in xs])
        lines += [f"    if {complex_test}:",
                  "        return general(op, inputs, params, result)"]
    bilinear = kind == "multilinear" and n == 2 and diff == (0, 1)
    if bilinear:  # (an operand that is not a tensor: the general path's error or conversion)
        lines += ["    if not (isinstance(x0, Tensor) and isinstance(x1, Tensor)):",
                  "        return general(op, inputs, params, result)"]
    lines += ["    DUAL[0] = None  # (rules run on primals: suspended(), inline)",
              "    state = STATE",
              "    grad_off = UNTRACKED_TANGENTS[0] and state.grad_enabled  # (no graph wanted for these tangents)",
              "    if grad_off:",
              "        state.grad_enabled = False",
              "    try:"]
    body: list[str] = []
    tangents = f"[{', '.join(ts)}]"
    if kind == "elementwise":
        uses_needs = any(k == NEEDS for _, specs in op.edge_rules for k, _ in specs)
        if uses_needs:
            body.append("needs = (" + "".join(f"t{i} is not None, " for i in diff) + ")")
        if len(diff) > 1:
            body.append("tangent = None")
        for e, (rule, specs) in enumerate(op.edge_rules):
            i = diff[e]
            namespace[f"rule{e}"] = rule
            call = f"rule{e}(t{i}, {', '.join(_rule_call_args(op, specs, diff))})".replace(", )", ")")
            where = f"  # rule for {op.inputs[i]!r} at {_where(rule)}"
            if len(diff) == 1:  # (found above: the one tangent)
                body.append(f"tangent = {call}{where}")
                continue
            body.append(f"if t{i} is not None:")
            if e == 0:
                body.append(f"    tangent = {call}{where}")
            else:
                body += [f"    part = {call}{where}",
                         "    tangent = part if tangent is None else tangent + part"]
    elif kind == "linear":
        args = []
        for i in range(n):
            if i in diff and len(diff) == 1:
                args.append(f"t{i}")  # (found above: the one tangent)
            elif i in diff:
                body.append(f"a{i} = t{i} if t{i} is not None else "
                            f"(_zeros_like(x{i}) if isinstance(x{i}, Tensor) else x{i})")
                args.append(f"a{i}")
            else:
                args.append(f"x{i}")
        untracked = (f"not {args[0]}._requires_grad" if n == 1
                     else f"_untracked(({', '.join(args)},))")
        body.append(f"if not state.grad_enabled or {untracked}:  # no graph: the NumPy forward on the arrays")
        if n == 1 and op.dtype_rule == "same":
            body += _forward_call(op, [f"{args[0]}._data"], "    ")
        else:
            body.append(f"    d = forward_arrays(op, ({', '.join(args)},), params)")
        body += ["    tangent = _make(_asarray(d))",
                 "else:",
                 f"    tangent = apply(op, ({', '.join(args)}, *params))"]
    elif bilinear:  # ``_multilinear``, unrolled: a term with a graph where grad mode is on and an
        # operand requires grad, else the op's NumPy forward on the arrays (terms summed as arrays)
        namespace["binary"] = op.binary if op.binary_fast else (lambda a, b, *ps: apply(op, (a, b, *ps)))
        body += ["grad_on = state.grad_enabled",
                 "tracked = False",
                 "if t0 is not None:",
                 "    if grad_on and (t0._requires_grad or x1._requires_grad):",
                 "        d = binary(t0, x1, *params)",
                 "        tracked = True",
                 "    else:"]
        body += _forward_call(op, ["t0._data", "x1._data"], "        ")
        body += ["if t1 is not None:",
                 "    if grad_on and (x0._requires_grad or t1._requires_grad):",
                 "        part = binary(x0, t1, *params)",
                 "        d = part if t0 is None else (d if tracked else _make(_asarray(d))) + part",
                 "        tracked = True",
                 "    else:"]
        body += [line.replace("d = ", "part = ") for line in _forward_call(op, ["x0._data", "t1._data"], "        ")]
        body += ["        if t0 is None:",
                 "            d = part",
                 "        else:",
                 "            d = d + _make(_asarray(part)) if tracked else _add(d, part)",
                 "tangent = d if tracked else _make(_asarray(d))"]
    elif kind in ("multilinear", "affine_multilinear"):
        body.append(f"tangent = _multilinear(op, inputs, params, {tangents}, {diff!r}, "
                    f"{int(kind == 'affine_multilinear')})[0]")
    elif kind == "explicit":
        body.append(f"tangent = jvp({tangents}, inputs, params, (result,))[0]  # the rule at {_where(op.jvp)}")
    else:  # "transpose"
        body.append(f"tangent = _transpose(op, inputs, params, (result,), {tangents}, {diff!r}, _FIRST)[0]")
    lines += ["        " + line for line in body]
    lines += ["    finally:",
              "        DUAL[0] = level",
              "        if grad_off:",
              "            state.grad_enabled = True",
              "    if tangent is None:",
              "        return",
              "    data = tangent._data",
              "    if data.shape != out.shape:  # (a broadcast operand's tangent)",
              "        tangent = tangent.expand(out.shape)",
              "    if data.dtype is not out.dtype and data.dtype != out.dtype:",
              '        tangent = tangent.real if data.dtype.kind == "c" and out.dtype.kind != "c" else tangent.to(_dtype(result))',
              "    result._fw_grad = (level, tangent)"]
    if _saves_output(op):
        lines += ["    if result._grad_fn is not None:  # the node keeps the output: give it the tangent too",
                  "        _keep_saved_tangent(result, tangent, level)"]
    text = "\n".join(lines)
    lines[reads_at:reads_at] = [f"    {x} = inputs[{i}]" for i, x in enumerate(xs) if re.search(rf"\b{x}\b", text)]
    source = "\n".join(lines) + "\n"
    filename = f"{GENERATED_FILE_PREFIX}{op.node_name} tangent path for op {op.name!r} (ops/forward.py)>"
    return source, _compile(source, filename, namespace, "tangent_path")

def apply_inplace_dual(op: Any, args: Sequence[Any], apply_inplace: Any) -> Any:
    """``apply_inplace`` inside a dual level: the op's out-of-place tangent (computed from the
    inputs' tangents, ``self``'s included) becomes ``self``'s tangent after the write."""
    level = DUAL[0]
    self = args[0]
    n = op.n_inputs
    has = any(isinstance(x, Tensor) and tangent_of(x, level) is not None for x in args[:n])
    tangent = None
    if has:
        tangent = tangent_of(apply(op, tuple(args)), level)
    with suspended():
        apply_inplace(op, args)
    if has:
        if tangent is None:
            tangent = _zeros_like(self)
        elif tangent._data.dtype.kind == "c" and self._data.dtype.kind != "c":
            tangent = tangent.real  # (else its own dtype, as the out-of-place op's: PyTorch's)
        target = _view_tangent(self, level) if self._base is not None else None
        if target is not None:  # a view: write into the base's tangent, as PyTorch does
            target._data[...] = tangent._data
            tangent = target
        set_tangent(self, tangent, level)  # type: ignore[arg-type]  # (a level is active here)
    return self


def _view_tangent(view: Tensor, level: Any) -> Tensor | None:
    """The tangent of ``view`` as a view of its base's tangent (the base gets a zero tangent if it
    has none), by replaying the view ops made inside the level (a link is ``(op, source, params,
    output index, the source's array then, in-place view ops applied to the view since)``); None
    where the chain is unknown (a view made before the level), cannot be replayed on a tangent
    (``as_strided``, whose geometry addresses the primal's storage; a source changed in place by
    a view op since), or the base's tangent cannot be written."""
    chain = []
    x = view
    while True:
        link = x.__dict__.get("_fw_view")
        if link is None:
            break
        if link[0].jvp != "linear" or link[1]._data is not link[4] or any(op.jvp != "linear" for op, _ in link[5]):
            return None
        chain.append(link)
        x = link[1]
    if not chain or x is not view._base and x._base is not view._base:
        return None
    root_tangent = tangent_of(x, level)
    if root_tangent is None:
        root_tangent = _zeros_like(x)
        set_tangent(x, root_tangent, level)
    t = root_tangent
    with suspended():
        for op, _, params, k, _, after in reversed(chain):
            out = apply(op, (t, *params))
            t = out[k] if k is not None else out
            for later, later_params in after:
                t = apply(later, (t, *later_params))
    if not (t._data.flags.writeable and np.shares_memory(t._data, root_tangent._data)):
        return None
    return t


def inplace_view_dual(self: Tensor, op: Any, params: Sequence[Any], name: str, inplace_view: Any,
                      same_layout: bool) -> Tensor:
    """An in-place view op (``t_``, ``squeeze_``, ``as_strided_``...) on a tensor with a tangent:
    the tangent changes the same way, in place, as in PyTorch (``as_strided_``'s only where the
    tangent's storage is laid out as the primal's, ``same_layout``; else it is read through the
    geometry, the op's ``jvp=``); a view made in the level remembers the op, so that a later
    write through it still reaches its base's tangent. ``inplace_view(tensor, op, params, name)``
    is the primal's own (ops/strided.py). The tangent goes first: an error leaves both as they were."""
    level = DUAL[0]
    tangent = tangent_of(self, level)
    with suspended():
        if callable(op.jvp) and not same_layout:
            (new,) = op.jvp([tangent], (self,), params, (self,))
            inplace_view(self, op, params, name)
            set_tangent(self, new, level)  # type: ignore[arg-type]  # (a level is active here)
        else:
            inplace_view(tangent, op, params, name)
            inplace_view(self, op, params, name)
    link = self.__dict__.get("_fw_view")
    if link is not None:
        self.__dict__["_fw_view"] = (*link[:5], (*link[5], (op, tuple(params))))
    return self


def _keep_saved_tangent(out: Tensor, tangent: Any, level: Any) -> None:
    """A node that saved ``out`` keeps only its array (``SavedTensor``): give that saved value
    the tangent too, so a backward run inside the level sees it (forward-over-reverse)."""
    node = out._grad_fn
    if node is None:
        return
    saved = getattr(node, "_saved", None)
    if not saved:
        return
    out._counter()  # first, so that the saved value gets the counter it would have had
    saved = node._saved
    for k, value in enumerate(saved):
        if type(value) is SavedTensor and value.data is out._data:
            replaced = list(saved)
            replaced[k] = DualSavedTensor.of(value, tangent, level)
            node._saved = tuple(replaced)
            return


class DualSavedTensor(SavedTensor):
    """A saved output with its tangent: unpacking restores the tangent while its level lasts."""

    __slots__ = ("tangent", "level")
    tangent: Any
    level: Any

    @classmethod
    def of(cls, saved: SavedTensor, tangent: Any, level: Any) -> DualSavedTensor:
        new = object.__new__(cls)
        new.data, new.counter, new.version = saved.data, saved.counter, saved.version  # (SavedTensor's slots)
        new.output_nr, new.requires_grad = saved.output_nr, saved.requires_grad
        new.tangent = tangent
        new.level = level
        return new

    def unpack(self, node: Any) -> Tensor:
        out = SavedTensor.unpack(self, node)
        if DUAL[0] is self.level:
            out._fw_grad = (self.level, self.tangent)
        return out
