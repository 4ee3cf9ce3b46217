"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``,
``vmap``, ``functional_call`` and ``stack_module_state``; and the forward-mode ones, ``jvp``,
``jacfwd``, ``hessian`` and ``linearize`` (``func/_forward.py``, on ``autograd.forward_ad``).

The reverse-mode transforms run retrograd's own autograd on fresh aliases of their inputs, so they
nest (``grad(grad(f))``) and compose with ``vmap`` (``vmap(grad(loss))`` gives per-sample
gradients). ``vmap`` is a batching transform (``func/_vmap.py``): each op runs once on the whole
batch through its batching rule (``func/_batching.py``).

>>> import retrograd as rg
>>> from retrograd.func import grad
>>> grad(lambda x: (x ** 3).sum())(rg.tensor([1.0, 2.0]))
tensor([ 3., 12.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..autograd import forward_ad
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..tensor import Tensor
from . import _vmap
from ._forward import _split_aux, hessian, jacfwd, jvp, linearize
from ._forward import detach_keeping_tangent as _detach_keeping_tangent
from ._pytree import spec_repr, tree_flatten, tree_map, tree_unflatten
from ._vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize",
           "stack_module_state", "vjp", "vmap"]

# How many reverse-mode transforms are running: an inner one keeps its graph (create_graph) so
# that the outer one can differentiate its result.
_DEPTH = [0]


def _check_argnums(argnums: Any, n_args: int) -> tuple[int, ...] | int:
    """PyTorch's checks of ``argnums`` (an int or a tuple of ints), normalised."""
    if not isinstance(argnums, (int, tuple)):  # (a bool is an int, as in PyTorch)
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        if not -n_args <= argnums < n_args:
            raise RuntimeError(f"Got argnum={argnums}, but only {n_args} positional inputs")
        return int(argnums) % n_args
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    for a in argnums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    normal = tuple(int(a) % n_args for a in argnums)
    if len(set(normal)) != len(normal):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return normal


class _Lifted:
    """The inputs one reverse-mode transform differentiates with respect to: ``logical`` is what
    the function sees; ``targets`` are the tensors autograd differentiates (the physical, batched
    arrays under ``vmap``); ``create`` says whether the results must stay differentiable."""

    def __init__(self, tree: Any) -> None:
        leaves, self.spec = tree_flatten(tree)
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        self.create = _DEPTH[0] > 1 and is_grad_enabled()  # (this transform counts itself)
        self.levels = _vmap.active_levels()  # the vmaps this transform runs under
        self.logical: list[Tensor] = []
        self.targets: list[Tensor] = []
        self.rewrap: list[Callable[[Tensor], Tensor]] = []
        for leaf in leaves:
            physical, rewrap = _vmap.lift(leaf)
            tangent = forward_ad.tangent_of(physical)
            if tangent is not None and tangent._requires_grad and is_grad_enabled():
                self.create = True  # (the results' tangents are differentiable in the given tangent)
            if physical._requires_grad and is_grad_enabled():
                self.create = True
                target = physical.view_as(physical)  # (a view carries the tangent of an enclosing jvp)
            else:
                # Forward over reverse: the alias keeps the input's tangent, so the backward pass (whose
                # rules are ops) carries it and the gradient comes out with its own tangent.
                target = _detach_keeping_tangent(physical, tangent_graph=True).requires_grad_()
            self.targets.append(target)
            self.logical.append(rewrap(target))
            self.rewrap.append(rewrap)
        self.tree = tree_unflatten(list(self.logical), self.spec)

    def gradients(self, output: Tensor, cotangent: Tensor | None, retain: bool = False) -> list[Tensor]:
        """d(output)/d(targets), cotangent-weighted (ones under vmap: samples are independent)."""
        physical_out = _vmap.full_physical(output, self.levels)
        if cotangent is None:
            from .. import ones_like
            physical_ct = ones_like(physical_out)
        else:
            physical_ct = _vmap.full_physical(cotangent, self.levels)
        if physical_out._requires_grad:
            grads = _autograd_grad([physical_out], self.targets, [physical_ct], retain_graph=retain or None,
                                   create_graph=self.create, allow_unused=True)
        else:
            grads = (None,) * len(self.targets)
        from .. import zeros_like
        out = []
        for g, target, rewrap in zip(grads, self.targets, self.rewrap):
            if g is None:
                g = zeros_like(target)
            elif not self.create:
                g = _detach_keeping_tangent(g)  # (create: a tangent with a graph keeps it, see __init__)
            out.append(rewrap(g))
        return out


def _tangents_need_no_graph(lifted: _Lifted) -> bool:
    """Forward over reverse (``jvp(grad(f))``): inside a ``grad`` whose results come out detached
    (nothing outside differentiates them), no tangent computed in it can be differentiated either,
    so the JVP rules need not record graphs (torch.func runs them below the grad level, where
    nothing records)."""
    return not lifted.create and forward_ad.current_level() is not None


def _detached(tree: Any, create: bool) -> Any:
    return tree if create else tree_map(lambda t: _detach_keeping_tangent(t) if isinstance(t, Tensor) else t, tree)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``func``'s gradient with respect to the ``argnums`` arguments, and its value (with ``aux``
    when ``has_aux``), as ``torch.func.grad_and_value``.

    >>> import retrograd as rg
    >>> g, v = grad_and_value(lambda x: (x * x).sum())(rg.tensor([1.0, 3.0]))
    >>> g, v
    (tensor([2., 6.]), tensor(10.))
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums, len(args))
        picked = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
        _DEPTH[0] += 1
        try:
            with enable_grad():
                lifted = _Lifted(picked)
                new_args = list(args)
                if isinstance(nums, int):
                    new_args[nums] = lifted.tree
                else:
                    for i, value in zip(nums, lifted.tree):
                        new_args[i] = value
                with forward_ad.untracked_tangents(_tangents_need_no_graph(lifted)):
                    result, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value(f)(*args)")
                    if not isinstance(result, Tensor):
                        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                                           f"got {type(result)}")
                    if result.dim() != 0:
                        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                                           f"Tensor, got tensor with {result.dim()} dims. Maybe you wanted to use "
                                           "the vjp or jacrev APIs instead?")
                    grads = tree_unflatten(lifted.gradients(result, None), lifted.spec)
        finally:
            _DEPTH[0] -= 1
        value = result if lifted.create else _detach_keeping_tangent(result)
        if has_aux:
            _check_aux(aux)
            return grads, (value, _detached(aux, lifted.create))
        return grads, value

    return wrapper


def _check_aux(aux: Any) -> None:
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a function returning a scalar tensor, with respect to its ``argnums``
    arguments (a tensor or a dict/list/tuple of them), as ``torch.func.grad``. Nests:
    ``grad(grad(f))`` is the second derivative.

    >>> import retrograd as rg
    >>> grad(grad(lambda x: x ** 3))(rg.tensor(2.0))
    tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = inner(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the vector-Jacobian product, one
    gradient per primal (``(output, vjp_fn, aux)`` with ``has_aux``), as ``torch.func.vjp``.

    >>> import retrograd as rg
    >>> out, vjp_fn = vjp(lambda x: x * x, rg.tensor([1.0, 2.0]))
    >>> vjp_fn(rg.tensor([1.0, 10.0]))
    (tensor([ 2., 40.]),)
    """
    _DEPTH[0] += 1
    try:
        with enable_grad():
            lifted = _Lifted(primals)
            result, aux = _split_aux(func(*lifted.tree), has_aux, "vjp(f, *primals)")
            out_leaves, out_spec = tree_flatten(result)
            for leaf in out_leaves:
                if not isinstance(leaf, Tensor):
                    raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                       f"unsupported type {type(leaf)}")
    finally:
        _DEPTH[0] -= 1
    create = lifted.create

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None) -> tuple[Any, ...]:
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec_repr(ct_spec)}, primal output: "
                               f"{spec_repr(out_spec)}")
        for i, (o, c) in enumerate(zip(out_leaves, ct_leaves)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                                   f"output[{i}] has a shape of {o.shape}.")
        return _vjp_call(lifted, out_leaves, ct_leaves, create if create_graph is None else create_graph)

    value = _detached(result, create)
    if has_aux:
        _check_aux(aux)
        return value, vjp_fn, _detached(aux, create)
    return value, vjp_fn


def _vjp_call(lifted: _Lifted, outs: list[Tensor], cts: list[Tensor], create: bool) -> tuple[Any, ...]:
    """Run the backward pass of a ``vjp``. Cotangents batched by a ``vmap`` the forward did not
    run under (``vmap(vjp_fn)``, as ``jacrev`` does) run one backward pass whose gradients are
    batched (the backward rules are ops, so they batch); where that meets code that cannot
    batch, one backward pass per sample."""
    extra = _vmap.extra_levels(cts, outs + lifted.logical)
    if extra:
        if not lifted.levels:
            try:
                return _batched_backward(lifted, outs, cts, create)
            except _vmap.Unbatchable:
                pass
        return _vmap.loop_over(extra, lambda *c: _vjp_call(lifted, outs, list(c), create), cts)
    flat_outs = [o.reshape(-1) for o in outs]
    flat_cts = [c.to(o.dtype).reshape(-1) for o, c in zip(outs, cts)]
    lifted.create = create
    out = flat_outs[0] if len(outs) == 1 else _vmap_cat(flat_outs)
    ct = flat_cts[0] if len(cts) == 1 else _vmap_cat(flat_cts)
    grads = lifted.gradients(_weighted_sum(out, ct), None, retain=True)
    return tuple(tree_unflatten(grads, lifted.spec))


def _batched_backward(lifted: _Lifted, outs: list[Tensor], cts: list[Tensor], create: bool) -> tuple[Any, ...]:
    """The backward pass with batched cotangents, the forward having run outside any vmap."""
    from .. import zeros_like
    used = [(o, c) for o, c in zip(outs, cts) if o._requires_grad]
    grads: tuple[Any, ...] = (None,) * len(lifted.targets)
    if used:
        grads = _autograd_grad([o for o, _ in used], lifted.targets, [c.to(o.dtype) for o, c in used],
                               retain_graph=True, create_graph=create, allow_unused=True)
    out = [zeros_like(t) if g is None else (g if create else _detach_keeping_tangent(g)) for g, t in zip(grads, lifted.targets)]
    return tuple(tree_unflatten(out, lifted.spec))


def _vmap_cat(parts: list[Tensor]) -> Tensor:
    from .. import cat
    return cat(parts)


def _weighted_sum(out: Tensor, ct: Tensor) -> Tensor:
    """``(out * ct).sum()``: its gradient with respect to the primals is the VJP."""
    return (out * ct).sum()


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable[..., Any]:
    """The Jacobian of ``func`` by reverse mode, as ``torch.func.jacrev``: ``vmap`` of ``vjp`` over
    the rows of the identity (``chunk_size`` rows at a time). ``jac[i][j]`` is output ``i``'s
    Jacobian with respect to input ``j`` (unnested where there is one of either).

    >>> import retrograd as rg
    >>> jacrev(lambda x: x ** 2)(rg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums, len(args))
        picked = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)

        def partial(*diff: Any) -> Any:
            new_args = list(args)
            if isinstance(nums, int):
                new_args[nums] = diff[0]
            else:
                for i, value in zip(nums, diff):
                    new_args[i] = value
            return func(*new_args, **kwargs)

        primals = (picked,) if isinstance(nums, int) else picked
        res = vjp(partial, *primals, has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        out_leaves, out_spec = tree_flatten(output)
        from .. import cat, eye
        sizes = [o.numel() for o in out_leaves]
        total = sum(sizes)
        basis = eye(total, dtype=out_leaves[0].dtype) if out_leaves else None

        def row_vjp(row: Tensor) -> Any:
            pieces, start = [], 0
            for o, n in zip(out_leaves, sizes):
                pieces.append(row[start:start + n].reshape(o.shape))
                start += n
            return vjp_fn(tree_unflatten(pieces, out_spec))

        if basis is None:
            raise RuntimeError("jacrev: the function returned no tensors")
        rows = vmap(row_vjp, chunk_size=chunk_size)(basis)  # per primal: (total, *primal.shape)
        in_leaves_per_primal = [tree_flatten(p) for p in primals]
        jac_rows = tree_flatten(rows)[0]
        # Split each input Jacobian by output: (out_i.shape + in.shape).
        per_output: list[list[Tensor]] = [[] for _ in out_leaves]
        for j in jac_rows:
            start = 0
            for k, (o, n) in enumerate(zip(out_leaves, sizes)):
                per_output[k].append(j[start:start + n].reshape(tuple(o.shape) + tuple(j.shape[1:])))
                start += n
        del cat
        results = []
        for k in range(len(out_leaves)):
            flat = iter(per_output[k])
            by_primal = [tree_unflatten([next(flat) for _ in leaves], spec) for leaves, spec in in_leaves_per_primal]
            results.append(by_primal[0] if isinstance(nums, int) else tuple(by_primal))
        jac = tree_unflatten(results, out_spec)
        if has_aux:
            return jac, res[2]
        return jac

    return wrapper


# -- modules as functions ------------------------------------------------------------------------

def _resolve(module: Any, name: str) -> tuple[Any, str]:
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Run ``module``'s forward with the given tensors in place of its parameters and buffers,
    then put the module back exactly as it was (also when the forward raises), as
    ``torch.func.functional_call``.

    >>> import retrograd as rg
    >>> m = rg.nn.Linear(2, 1)
    >>> functional_call(m, {"weight": rg.ones(1, 2), "bias": rg.zeros(1)}, (rg.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)) and all(
            isinstance(d, dict) for d in parameter_and_buffer_dicts):
        given = {}
        for d in parameter_and_buffer_dicts:
            clash = [k for k in d if k in given]
            if clash:
                raise ValueError(f"{clash} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            given.update(d)
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    own = dict(module.named_parameters(remove_duplicate=False))
    own.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:
        _tie(own, given)
    if strict:
        missing = [k for k in own if k not in given]
        unexpected = [k for k in given if k not in own]
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    undo: list[Callable[[], None]] = []
    try:
        for name, value in given.items():
            owner, leaf = _resolve(module, name)
            undo.append(_swap(owner, leaf, value))
        return module(*args, **kwargs)
    finally:
        for restore in reversed(undo):
            restore()


def _tie(own: dict[str, Any], given: dict[str, Any]) -> None:
    """Names of one tied tensor all take the value given for any of them (PyTorch's tie_weights)."""
    groups: dict[int, list[str]] = {}
    for name, t in own.items():
        groups.setdefault(id(t), []).append(name)
    for names in groups.values():
        if len(names) < 2:
            continue
        named = [n for n in names if n in given]
        if not named:
            continue
        if len(named) > 1 and any(given[n] is not given[named[0]] for n in named[1:]):
            raise ValueError(f"functional_call got multiple values for keys {sorted(named)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            given.setdefault(n, given[named[0]])


def _swap(owner: Any, leaf: str, value: Any) -> Callable[[], None]:
    """Put ``value`` in as ``owner.<leaf>`` (in the store it lives in) and return the undo."""
    d = owner.__dict__
    for store_name in ("_parameters", "_buffers"):
        store = d.get(store_name)
        if store is not None and leaf in store:
            old = store[leaf]

            def restore(store: dict[str, Any] = store, old: Any = old) -> None:
                store[leaf] = old
            store[leaf] = value
            return restore
    missing = object()
    old_attr = d.get(leaf, missing)

    def restore_attr() -> None:
        if old_attr is missing:
            d.pop(leaf, None)
        else:
            d[leaf] = old_attr
    d[leaf] = value
    return restore_attr


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of several models of one architecture, each stacked along a new
    first dimension, as ``torch.func.stack_module_state`` (for ``vmap`` over ``functional_call``).
    The stacked parameters are new leaves that require grad.

    >>> import retrograd as rg
    >>> params, buffers = stack_module_state([rg.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf
    (torch.Size([4, 2, 3]), True)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    from .. import stack

    def stacked(items: list[list[tuple[str, Tensor]]], as_leaf: bool) -> dict[str, Tensor]:
        out = {}
        for k, (name, _) in enumerate(items[0]):
            t = stack([dict(i)[name].detach() for i in items])
            out[name] = t.requires_grad_() if as_leaf and items[0][k][1].requires_grad else t
        return out

    params = stacked([list(m.named_parameters()) for m in models], True)
    buffers = stacked([list(m.named_buffers()) for m in models], False)
    return params, buffers
