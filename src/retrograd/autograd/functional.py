"""``autograd.functional``: Jacobians, Hessians and their products for functions of tensors.

All are built on ``autograd.grad``, except ``jvp`` and ``jacobian(strategy="forward-mode")``,
which push tangents forward with dual tensors (``autograd.forward_ad``).

>>> import retrograd as rg
>>> from retrograd.autograd.functional import jacobian, hessian
>>> jacobian(lambda x: x ** 2, rg.tensor([1.0, 3.0]))
tensor([[2., 0.],
        [0., 6.]])
>>> hessian(lambda x: (x ** 3).sum(), rg.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import grad
from .grad_mode import enable_grad


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _prepare(inputs: Any, create_graph: bool) -> tuple[Any, ...]:
    """Leaves that require grad, so the function's graph starts from them."""
    return tuple(t if create_graph and t.requires_grad else t.detach().requires_grad_() for t in _as_tuple(inputs))


def _zeros_like(t: Any) -> Any:
    from ..tensor import Tensor

    return Tensor._make(np.zeros(t._data.shape, t._data.dtype))


def _grads(outputs: Any, inputs: tuple[Any, ...], grad_outputs: Any, create_graph: bool) -> tuple[Any, ...]:
    outs = [o for o in _as_tuple(outputs)]
    gos = list(_as_tuple(grad_outputs)) if grad_outputs is not None else [None] * len(outs)
    pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
    if not pairs:
        return tuple(_zeros_like(t) for t in inputs)
    result = grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=create_graph,
                  retain_graph=True, allow_unused=True)
    return tuple(_zeros_like(t) if g is None else g for t, g in zip(inputs, result))


def _unwrap(value: tuple[Any, ...], like: Any) -> Any:
    return value if isinstance(like, (tuple, list)) else value[0]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``.

    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import vjp
    >>> vjp(lambda x: x * 2, rg.ones(2), rg.tensor([1.0, 3.0]))[1]
    tensor([2., 6.])
    """
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        out = func(*ins)
        grads = _grads(out, ins, v, create_graph)
    detached = out if create_graph else (tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach())
    return detached, _unwrap(grads if create_graph else tuple(g.detach() for g in grads), inputs)


def _vjp_graph(func: Callable[..., Any], inputs: Any, create_graph: bool) -> tuple[Any, ...]:
    """The double-vjp trick's first half (call under ``enable_grad``): the inputs, ``func``'s output
    (as given and as a tuple), a dummy cotangent per output that requires grad, and the vjps of
    those dummies, built with a graph so that ``J v`` is their gradient w.r.t. the dummies."""
    ins = _prepare(inputs, create_graph)
    out = func(*ins)
    outs = _as_tuple(out)
    dummies = tuple(_zeros_like(o).requires_grad_() for o in outs)
    return ins, out, outs, dummies, _grads(out, ins, dummies, create_graph=True)


def _forward_jvp(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool) -> tuple[Any, Any]:
    """``(func(inputs), J v)`` in one forward pass with dual tensors (``autograd.forward_ad``)."""
    from . import forward_ad

    with enable_grad():
        ins = _prepare(inputs, create_graph) if create_graph else tuple(t.detach() for t in _as_tuple(inputs))
        tangents = _as_tuple(v) if v is not None else tuple(_zeros_like(t) + 1 for t in ins)
        with forward_ad.dual_level():
            out = func(*(forward_ad.make_dual(x, t) for x, t in zip(ins, tangents)))
            outs = _as_tuple(out)
            pairs = [forward_ad.unpack_dual(o) for o in outs]
            primals = tuple(p.primal for p in pairs)
            jv = tuple(_zeros_like(o) if p.tangent is None else p.tangent for o, p in zip(outs, pairs))
    if not create_graph:
        primals, jv = tuple(p.detach() for p in primals), tuple(t.detach() for t in jv)
    return _unwrap(primals, out), _unwrap(jv, out)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: by forward AD (dual tensors, one forward pass); inside a dual level
    that the caller has entered (forward AD does not nest), by the double-vjp trick.

    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, rg.tensor([1.0, 2.0]), rg.ones(2))[1]
    tensor([2., 4.])
    """
    from .forward_ad import DUAL

    if DUAL[0] is None and not strict:
        return _forward_jvp(func, inputs, v, create_graph)
    with enable_grad():
        ins, out, outs, dummies, vjps = _vjp_graph(func, inputs, create_graph)
        tangents = _as_tuple(v) if v is not None else tuple(_zeros_like(t) + 1 for t in ins)
        pairs = [(g, t) for g, t in zip(vjps, tangents) if g.requires_grad]
        if pairs:
            jv = grad([g for g, _ in pairs], dummies, [t for _, t in pairs], create_graph=create_graph, allow_unused=True)
            jv = tuple(_zeros_like(o) if g is None else g for o, g in zip(outs, jv))
        else:
            jv = tuple(_zeros_like(o) for o in outs)
    result = jv if create_graph else tuple(g.detach() for g in jv)
    detached = out if create_graph else (tuple(o.detach() for o in outs) if isinstance(out, tuple) else out.detach())
    return detached, _unwrap(result, out)


_STRATEGY_ERROR = 'Expected strategy to be either "forward-mode" or "reverse-mode".'


def _check_jacobian_args(create_graph: bool, strict: bool, vectorize: bool, strategy: str) -> None:
    """PyTorch's refusals, in its order (``strategy="forward-mode"`` needs ``vectorize=True``)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            _STRATEGY_ERROR + ' Hint: If your function has more outputs than inputs, "forward-mode" tends to be '
            'more performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` are not "
                "supported together (yet). Please either set `create_graph=False` or `strategy=\"reverse-mode\"`."
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
                "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`."
            )
        if not vectorize:
            raise NotImplementedError(  # (PyTorch's text, its missing space included)
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
    elif vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported together. "
            "Please either set `strict=False` or `vectorize=False`."
        )


def _jacobian_forward(func: Callable[..., Any], inputs: Any) -> Any:
    """The Jacobian one column (input element) at a time: ``J v`` for each unit tangent ``v``,
    by forward AD (one forward pass per column); inside a dual level the caller entered, by the
    double-vjp trick (the function and its vjp graph built once)."""
    from ..tensor import Tensor
    from .forward_ad import DUAL

    if DUAL[0] is None:
        return _jacobian_dual(func, inputs)
    with enable_grad():
        ins, out, outs, dummies, vjps = _vjp_graph(func, inputs, False)
        columns: list[list[list[Any]]] = [[[] for _ in ins] for _ in outs]  # [output][input] -> columns
        for k, (t, g) in enumerate(zip(ins, vjps)):
            for j in range(t.numel()):
                onehot = np.zeros(t._data.size, t._data.dtype)
                onehot[j] = 1
                tangent = Tensor._make(onehot.reshape(t._data.shape))
                if g.requires_grad:
                    jv = grad([g], dummies, [tangent], retain_graph=True, allow_unused=True)
                else:  # the vjp does not depend on the output's cotangent: no path from this input
                    jv = (None,) * len(outs)
                for i, (o, col) in enumerate(zip(outs, jv)):
                    columns[i][k].append(_zeros_like(o) if col is None else col.detach())
    return _jacobian_table(outs, columns, ins, inputs, out)


def _jacobian_dual(func: Callable[..., Any], inputs: Any) -> Any:
    """``_jacobian_forward`` with dual tensors: each column is one forward pass of ``func``."""
    from ..tensor import Tensor
    from . import forward_ad

    # Leaves that require grad, as the reverse path's: a function that differentiates inside
    # (``hessian``'s gradient, forward over reverse) must find a graph to its inputs.
    ins = _prepare(inputs, False)
    out: Any = None
    columns: list[list[list[Any]]] = []  # [output][input] -> columns
    for k, t in enumerate(ins):
        for j in range(t.numel()):
            onehot = np.zeros(t._data.size, t._data.dtype)
            onehot[j] = 1
            with enable_grad(), forward_ad.dual_level():
                args = [forward_ad.make_dual(x, Tensor._make(onehot.reshape(x._data.shape))) if i == k else x
                        for i, x in enumerate(ins)]
                out = func(*args)
                outs = _as_tuple(out)
                if not columns:
                    columns = [[[] for _ in ins] for _ in outs]
                for i, o in enumerate(outs):
                    tangent = forward_ad.unpack_dual(o).tangent
                    columns[i][k].append(_zeros_like(o) if tangent is None else tangent.detach())
    if out is None:  # no input element: one plain call for the output shapes
        out = func(*ins)
        columns = [[[] for _ in ins] for _ in _as_tuple(out)]
    return _jacobian_table(_as_tuple(out), columns, ins, inputs, out)



def _jacobian_table(outs: tuple[Any, ...], columns: list[list[list[Any]]], ins: Sequence[Any], inputs: Any,
                    out: Any) -> Any:
    """The forward-mode Jacobians' result: for each output and input, that pair's columns stacked
    last and shaped ``output.shape + input.shape`` (zeros for an input without elements), nested
    as the caller's ``inputs`` and ``out`` are."""
    from .._functions import stack
    from ..tensor import Tensor

    table = []
    for o, per_input in zip(outs, columns):
        blocks = tuple(
            stack(cols, -1).reshape(tuple(o.shape) + tuple(t.shape)) if cols else
            Tensor._make(np.zeros(tuple(o.shape) + tuple(t.shape), t._data.dtype))
            for cols, t in zip(per_input, ins)
        )
        table.append(_unwrap(blocks, inputs))
    return _unwrap(tuple(table), out)


def _check_strict_outputs(outs: tuple[Any, ...]) -> None:
    """``strict=True``: every output must depend differentiably on the inputs (PyTorch's wording)."""
    for i, o in enumerate(outs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."
            )


def _strict_row(o: Any, i: int, ins: tuple[Any, ...], onehot: Any, create_graph: bool) -> tuple[Any, ...]:
    """A Jacobian row under ``strict=True``: it must reach every input (and, with ``create_graph``,
    stay differentiable), else PyTorch's error instead of a block of zeros."""
    row = grad([o], ins, [onehot], retain_graph=True, create_graph=create_graph, allow_unused=True)
    for k, g in enumerate(row):
        if g is None:
            raise RuntimeError(
                f"Output {i} of the user-provided function is independent of input {k}. This is not allowed "
                "in strict mode."
            )
        if create_graph and not g.requires_grad:
            raise RuntimeError(
                f"The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                "in strict mode when create_graph=True."
            )
    return tuple(row)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian, shape ``out.shape + in.shape``: one reverse pass per output element, or with
    ``strategy="forward-mode"`` (which, as in PyTorch, needs ``vectorize=True``) one Jacobian-vector
    product per input element.

    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import jacobian
    >>> jacobian(lambda x: x.sum(0), rg.ones(2, 1), vectorize=True, strategy="forward-mode")
    tensor([[[1.],
             [1.]]])
    """
    from ..tensor import Tensor

    _check_jacobian_args(create_graph, strict, vectorize, strategy)
    if strategy == "forward-mode":
        return _jacobian_forward(func, inputs)
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        out = func(*ins)
        outs = _as_tuple(out)
        if strict:
            _check_strict_outputs(outs)
        table = []
        for i, o in enumerate(outs):
            rows: list[list[Any]] = [[] for _ in ins]
            for j in range(o.numel()):
                onehot = np.zeros(o._data.size, o._data.dtype)
                onehot[j] = 1
                cotangent = Tensor._make(onehot.reshape(o._data.shape))
                grads = _strict_row(o, i, ins, cotangent, create_graph) if strict else _grads(o, ins, cotangent, create_graph)
                for k, g in enumerate(grads):
                    rows[k].append(g if create_graph else g.detach())
            from .._functions import stack

            blocks = tuple(
                (stack(r).reshape(tuple(o.shape) + tuple(t.shape)) if r else
                 Tensor._make(np.zeros(tuple(o.shape) + tuple(t.shape), t._data.dtype)))
                for r, t in zip(rows, ins)
            )
            table.append(_unwrap(blocks, inputs))
    return _unwrap(tuple(table), out)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient (taken with
    ``outer_jacobian_strategy``; forward-over-reverse needs ``vectorize=True``, as in PyTorch)."""
    from ..tensor import Tensor

    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_ERROR)

    def gradient(*ins: Any) -> Any:
        out = func(*ins)
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        if strict:
            _check_strict_outputs((out,))
        grads = _grads(out.reshape(()), ins, None, create_graph=True)
        for k, g in enumerate(grads if strict else ()):
            if not g.requires_grad:
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided function with "
                    f"respect to input {k} is independent of the input. This is not allowed in strict mode. You "
                    "should ensure that your function is twice differentiable and that the jacobian depends on "
                    "the inputs (this would be violated by a linear function for example)."
                )
        return _unwrap(grads, inputs)

    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                    strategy=outer_jacobian_strategy)


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function."""
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        out = func(*ins)
        grads = _grads(out, ins, None, create_graph=True)
        products = _grads(grads, ins, v, create_graph)
    result = products if create_graph else tuple(p.detach() for p in products)
    return (out if create_graph else out.detach()), _unwrap(result, inputs)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)``; the Hessian is symmetric, so this is ``vhp``.

    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), rg.tensor([1.0, 2.0]), rg.ones(2))[1]
    tensor([ 6., 12.])
    """
    return vhp(func, inputs, v, create_graph, strict)
