"""The forward-mode transforms of ``retrograd.func`` (``torch.func``'s): ``jvp``, ``jacfwd``,
``hessian`` and ``linearize``, built on dual tensors (``retrograd.autograd.forward_ad``).

>>> import retrograd as rg
>>> from retrograd.func._forward import jvp, jacfwd
>>> jvp(lambda x: x ** 2, (rg.tensor([1.0, 2.0]),), (rg.ones(2),))[1]
tensor([2., 4.])
>>> jacfwd(lambda x: x.sin())(rg.zeros(2))
tensor([[1., 0.],
        [0., 1.]])

Inputs and outputs may be tensors or (nested) tuples, lists and dicts of them, as in PyTorch.
Where a dual level is already active (a forward transform inside another one), the inner ``jvp``
is computed by the double-vjp trick, whose operations carry the outer level's tangents: forward
AD has one level at a time, as in ``torch.autograd.forward_ad``.

(Imports are absolute: until ``retrograd/func/__init__.py`` exists, ``func`` is a namespace
package, which the doctest collector imports this file outside of.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.autograd import forward_ad
from retrograd.autograd import grad as _autograd_grad
from retrograd.func import _vmap  # (loaded first by the package: one import, not one per call)
from retrograd.func._pytree import tree_flatten as _flatten
from retrograd.func._pytree import tree_unflatten as _unflatten
from retrograd.func._pytree import treespec_repr as _spec_text
from retrograd.tensor import Tensor

__all__ = ["hessian", "jacfwd", "jvp", "linearize"]


def _check_tensors(leaves: list[Any], what: str) -> None:
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{what}, got unsupported type {type(leaf)}")


# -- jvp ----------------------------------------------------------------------------------------


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), J @ tangents)`` (and ``aux`` with ``has_aux``), as ``torch.func.jvp``
    (``strict`` is accepted and, as in PyTorch 2.13, changes nothing).

    >>> import retrograd as rg
    >>> from retrograd.func._forward import jvp
    >>> out, tangent = jvp(lambda x, y: x * y, (rg.tensor(2.0), rg.tensor(3.0)), (rg.tensor(1.0), rg.tensor(0.0)))
    >>> out, tangent
    (tensor(6.), tensor(3.))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{_spec_text(p_spec)} and tangents with structure {_spec_text(t_spec)}")
    _check_tensors(p_leaves, "jvp(f, primals, tangents): Expected primals to be a tuple of tensors")
    _check_tensors(t_leaves, "jvp(f, primals, tangents): Expected tangents to be a tuple of tensors")
    if forward_ad.current_level() is not None:
        return _jvp_double_vjp(func, p_leaves, t_leaves, p_spec, has_aux)
    with forward_ad.dual_level():
        duals = [_make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        result = func(*_unflatten(duals, p_spec))
        output, aux = _split_aux(result, has_aux, "jvp(f, primals, tangents)")
        if has_aux:
            _check_tensors(_flatten(aux)[0], "Expected tensors")
        o_leaves, o_spec = _flatten(output)
        _check_tensors(o_leaves, "jvp(f, primals, tangents): expected f(*primals) to return only tensors")
        outs, jvps = [], []
        for o in o_leaves:
            primal, tangent = _unpack_dual(o)
            outs.append(primal)
            jvps.append(tangent if tangent is not None else _zeros_like(o))
    done = (_unflatten(outs, o_spec), _unflatten(jvps, o_spec))
    return (*done, aux) if has_aux else done


def _make_dual(primal: Tensor, tangent: Tensor) -> Tensor:
    """``forward_ad.make_dual``, also under ``vmap``: a batched primal or tangent is a dual of the
    physical tensors (batch dimensions first), so every op then runs once on the whole batch with
    its tangent carried beside it, as PyTorch batches tangents like primals."""
    if type(primal) is Tensor and type(tangent) is Tensor:
        data = primal._data
        if not primal._requires_grad and data.dtype.kind in "fc" and tangent._data.dtype.kind in "fc" \
                and data.shape == tangent._data.shape:
            # (make_dual's checks pass: the dual need not be a view, which only carries a graph
            # there is none of; a detached alias is cheaper and carries the tangent as well)
            level = forward_ad.current_level()
            assert level is not None  # (jvp has entered its level)
            dual = primal.detach()
            forward_ad.set_tangent(dual, tangent, level)
            return dual
        return forward_ad.make_dual(primal, tangent)
    if type(primal) is not _vmap.BatchedTensor and type(tangent) is not _vmap.BatchedTensor:
        return forward_ad.make_dual(primal, tangent)
    if tuple(primal.shape) != tuple(tangent.shape):  # (the per-sample shapes, in make_dual's words)
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {list(primal.shape)} while the given forward "
            f"gradient is of size {list(tangent.shape)}.")
    physical, rewrap = _vmap.lift(primal)
    physical_tangent = _vmap.full_physical(tangent)
    return rewrap(forward_ad.make_dual(physical, physical_tangent))


def _unpack_dual(out: Tensor) -> tuple[Tensor, Tensor | None]:
    """``forward_ad.unpack_dual``, also of a batched output (its tangent is the physical one's)."""
    if type(out) is Tensor:  # (the output itself: its tangent is not seen once the level is left)
        return out, forward_ad.tangent_of(out)
    if type(out) is not _vmap.BatchedTensor:
        return forward_ad.unpack_dual(out)
    levels = _vmap.levels_of(out)[::-1]
    physical: Tensor = out
    while type(physical) is _vmap.BatchedTensor:
        physical = physical._value
    primal, tangent = forward_ad.unpack_dual(physical)
    return (_vmap.rewrap(primal, levels),
            None if tangent is None else _vmap.rewrap(tangent, levels))


def _split_aux(result: Any, has_aux: bool, where: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return result[0], result[1]


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._make(np.zeros(t._data.shape, t._data.dtype))


def _jvp_double_vjp(func: Callable[..., Any], p_leaves: list[Any], t_leaves: list[Any], p_spec: Any,
                    has_aux: bool) -> tuple[Any, ...]:
    """``jvp`` inside an active dual level: J v as the gradient, with respect to a dummy cotangent
    u, of the vjp ``u^T J`` dotted with v (linear in u). Its operations carry the outer level's
    tangents, so transforms nest."""
    from retrograd.autograd.grad_mode import enable_grad, is_grad_enabled

    # The double-vjp's graph is private unless the caller differentiates the result.
    keep_graph = is_grad_enabled() and any(x.requires_grad for x in p_leaves + t_leaves)
    with enable_grad():
        ins = [p if p.requires_grad else _leaf_keeping_tangent(p) for p in p_leaves]
        result = func(*_unflatten(ins, p_spec))
        output, aux = _split_aux(result, has_aux, "jvp(f, primals, tangents)")
        o_leaves, o_spec = _flatten(output)
        _check_tensors(o_leaves, "jvp(f, primals, tangents): expected f(*primals) to return only tensors")
        dummies = [_zeros_like(o).requires_grad_() for o in o_leaves]
        pairs = [(o, u) for o, u in zip(o_leaves, dummies) if o.requires_grad]
        jvps: list[Any] = [None] * len(o_leaves)
        if pairs:
            vjps = _autograd_grad([o for o, _ in pairs], ins, [u for _, u in pairs], create_graph=True,
                                  allow_unused=True)
            used = [(g, t) for g, t in zip(vjps, t_leaves) if g is not None and g.requires_grad]
            if used:
                jvps = list(_autograd_grad([g for g, _ in used], dummies, [t for _, t in used], create_graph=True,
                                           allow_unused=True))
    jvps = [j if j is not None else _zeros_like(o) for j, o in zip(jvps, o_leaves)]
    if not keep_graph:
        o_leaves = [detach_keeping_tangent(o) for o in o_leaves]
        jvps = [detach_keeping_tangent(j) for j in jvps]
    done = (_unflatten(list(o_leaves), o_spec), _unflatten(jvps, o_spec))
    return (*done, aux) if has_aux else done


def detach_keeping_tangent(t: Tensor, tangent_graph: bool = False) -> Tensor:
    """``t.detach()`` that keeps ``t``'s tangent (detached too) at the active dual level (``detach``
    drops it, as in PyTorch): what a transform computes with a private graph (a reverse-mode one
    inside a forward-mode one, a nested ``jvp``) comes out carrying its forward derivative, as
    torch.func's results do, and with no graph (``tangent_graph``: the tangent keeps its own).

    >>> import retrograd as rg
    >>> from retrograd.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(rg.ones(1, requires_grad=True) * 2, rg.ones(1))
    ...     y = detach_keeping_tangent(x)
    ...     y.requires_grad, fwAD.unpack_dual(y).tangent
    (False, tensor([1.]))
    """
    if type(t) is _vmap.BatchedTensor:  # (the tangent is on the physical tensor)
        return _vmap.wrap(detach_keeping_tangent(t._value, tangent_graph), t._level)
    level = forward_ad.current_level()
    tangent = forward_ad.tangent_of(t, level)
    out = t.detach()
    if tangent is None or level is None:
        return out
    if not tangent_graph and tangent._requires_grad:
        tangent = tangent.detach()
    # ``make_dual``'s checks hold already (the tangent is ``t``'s); the detached alias is a new
    # tensor of its own, so it carries the tangent itself rather than through one more view.
    forward_ad.set_tangent(out, tangent, level)
    return out


def _leaf_keeping_tangent(x: Tensor) -> Tensor:
    """``x.detach().requires_grad_()`` that keeps ``x``'s tangent at the active dual level
    (``detach`` drops it, as in PyTorch)."""
    leaf = x.detach().requires_grad_()
    tangent = forward_ad.tangent_of(x)
    return leaf if tangent is None else forward_ad.make_dual(leaf, tangent)


# -- jacfwd, hessian ------------------------------------------------------------------------------


_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by forward AD: one
    forward pass per input element, pushing the identity basis (``torch.func.jacfwd``).
    ``randomness``: ``"error"`` refuses a ``func`` that draws random numbers (PyTorch's error),
    ``"same"`` gives every column the same draws, ``"different"`` lets them differ.

    >>> import retrograd as rg
    >>> from retrograd.func._forward import jacfwd
    >>> jacfwd(lambda x, y: x * y, argnums=(0, 1))(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))[1]
    tensor([[1., 0.],
            [0., 2.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def jacobian(*args: Any) -> Any:
        from retrograd import random as rg_random
        from retrograd.func import _check_argnums

        checked = _check_argnums(argnums, len(args))
        nums = (checked,) if isinstance(checked, int) else checked
        flat = [_flatten(args[a]) for a in nums]
        for leaves, _ in flat:
            _check_tensors(leaves, "Expected tensors")
        try:
            state = rg_random.get_rng_state()
        except RuntimeError:  # inside vmap(randomness="error"), which refuses every draw itself
            state = None
        columns: list[list[list[Any]]] | None = None  # [output leaf][input leaf] -> columns
        primal_out: Any = None
        aux: Any = None
        inputs = [leaf for leaves, _ in flat for leaf in leaves]
        for k, x in enumerate(inputs):
            for j in range(x._data.size):
                if randomness == "same" and state is not None:
                    rg_random.set_rng_state(state)
                basis = np.zeros(x._data.size, x._data.dtype)
                basis[j] = 1
                tangents = [Tensor._make(basis.reshape(x._data.shape)) if i == k else _zeros_like(y)
                            for i, y in enumerate(inputs)]
                out, jv, aux = _jvp_at(func, args, nums, flat, tangents, has_aux)
                if randomness == "error" and state is not None and not _same_state(state, rg_random.get_rng_state()):
                    raise RuntimeError(_RANDOM_ERROR)
                o_leaves, o_spec = _flatten(jv)
                if columns is None:
                    columns = [[[] for _ in inputs] for _ in o_leaves]
                    primal_out = (o_spec, _flatten(out)[0])
                for i, col in enumerate(o_leaves):
                    columns[i][k].append(col)
        if primal_out is None:  # no input element at all: one call for the output's structure
            result = func(*args)
            output, aux = _split_aux(result, has_aux, "jacfwd")
            o_leaves, o_spec = _flatten(output)
            primal_out = (o_spec, o_leaves)
            columns = [[[] for _ in inputs] for _ in o_leaves]
        assert columns is not None
        o_spec, o_primals = primal_out
        per_output = []
        for o, cols in zip(o_primals, columns):
            blocks = [_stack_columns(c, o, x) for c, x in zip(cols, inputs)]
            per_arg, start = [], 0
            for leaves, spec in flat:
                per_arg.append(_unflatten(blocks[start:start + len(leaves)], spec))
                start += len(leaves)
            per_output.append(per_arg[0] if not isinstance(argnums, tuple) else tuple(per_arg))
        jac = _unflatten(per_output, o_spec)
        return (jac, aux) if has_aux else jac

    return jacobian


def _same_state(a: Tensor, b: Tensor) -> bool:
    return bool(np.array_equal(a._data, b._data))


def _jvp_at(func: Callable[..., Any], args: tuple[Any, ...], nums: tuple[int, ...], flat: list[Any],
            tangents: list[Any], has_aux: bool) -> tuple[Any, Any, Any]:
    """One JVP of ``func`` in the arguments ``nums`` (the others held fixed)."""
    primals = tuple(leaf for leaves, _ in flat for leaf in leaves)

    def partial(*leaves: Any) -> Any:
        full = list(args)
        start = 0
        for a, (ls, spec) in zip(nums, flat):
            full[a] = _unflatten(list(leaves[start:start + len(ls)]), spec)
            start += len(ls)
        return func(*full)

    done = jvp(partial, primals, tuple(tangents), has_aux=has_aux)
    return done[0], done[1], (done[2] if has_aux else None)


def _stack_columns(cols: list[Any], out: Any, x: Any) -> Any:
    """The columns J[:, j] (each shaped like ``out``) as a block shaped ``out.shape + x.shape``."""
    from retrograd._functions import stack

    shape = tuple(out.shape) + tuple(x.shape)
    if not cols:
        return Tensor._make(np.zeros(shape, out._data.dtype))
    return stack(cols, -1).reshape(shape)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``, forward over
    reverse, as ``torch.func.hessian``.

    >>> import retrograd as rg
    >>> from retrograd.func._forward import hessian
    >>> hessian(lambda x: (x ** 3).sum())(rg.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    from retrograd.func import jacrev

    return jacfwd(jacrev(func, argnums), argnums)


# -- linearize ------------------------------------------------------------------------------------


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the JVP at ``primals``
    (``torch.func.linearize``). Each call of ``jvp_fn`` runs ``func`` forward again with dual
    tensors (PyTorch traces the linearised graph once instead; the values are the same for a
    deterministic ``func``).

    >>> import retrograd as rg
    >>> from retrograd.func._forward import linearize
    >>> out, jvp_fn = linearize(lambda x: x ** 2, rg.tensor([1.0, 3.0]))
    >>> jvp_fn(rg.ones(2))
    tensor([2., 6.])
    """
    p_leaves, p_spec = _flatten(primals)
    _check_tensors(p_leaves, "linearize: Expected tensors")
    output = func(*primals)
    detached = _unflatten([o.detach() for o in _flatten(output)[0]], _flatten(output)[1])

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {_spec_text(t_spec)} to have the same argspec as the primals "
                               f"{_spec_text(p_spec)}")
        for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{p.shape} of the corresponding primal.")
            if t.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")
        return jvp(func, tuple(primals), tuple(tangents))[1]

    return detached, jvp_fn
