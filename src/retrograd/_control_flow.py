"""``torch.cond`` and ``torch.while_loop`` with eager semantics: the branch or loop body runs as
ordinary Python on tensors, so its ops record their own nodes (PyTorch's eager call traces the
functions and records one ``CondAutogradOpBackward`` / ``WhileLoopAutogradOpBackward`` node;
the values and gradients are the same). Loaded on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .tensor import Tensor


def _predicate(pred: Any) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: tuple[Any, ...] | list[Any] = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` holds, else ``false_fn(*operands)``.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, -2.0])
    >>> torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,))
    tensor([-1.,  2.])
    """
    chosen = true_fn if _predicate(pred) else false_fn
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists "
                           f"of tensor leaves, but got {operands}.")
    if isinstance(pred, Tensor):
        recorded = _cond_node(pred, chosen, tuple(operands))
        if recorded is not None:
            return recorded
    return chosen(*operands)


def _cond_node(pred: Tensor, chosen: Callable[..., Any], operands: tuple[Any, ...]) -> Any:
    """The branch's result behind one ``CondAutogradOpBackward`` node, as PyTorch's eager ``cond``
    records it (a Python bool predicate runs the branch plainly there too); None when nothing
    needs a gradient, or for a result that is not a tensor or a tuple/list of tensors (the branch
    then runs plainly: ``cond``'s branches are pure functions)."""
    from .autograd.grad_mode import STATE, enable_grad

    if not STATE.grad_enabled or not any(isinstance(o, Tensor) and o.requires_grad for o in operands):
        return None
    inner = tuple(o.detach().requires_grad_() if isinstance(o, Tensor) and o.requires_grad else o for o in operands)
    with enable_grad():  # the branch's own graph, on detached inputs: the node's backward runs it
        out = chosen(*inner)
    single = isinstance(out, Tensor)
    outs = (out,) if single else tuple(out) if isinstance(out, (tuple, list)) else ()
    if not outs or not all(isinstance(o, Tensor) for o in outs):
        return None
    result = _cond_op().apply(pred, (inner, outs), *operands)
    if single:
        return result
    return type(out)(result) if isinstance(result, tuple) else type(out)((result,))


_COND_OP: list[Any] = []


def _cond_op() -> Any:
    """The ``Function`` behind ``cond``'s node (made on first use: ``autograd.function`` loads then)."""
    if _COND_OP:
        return _COND_OP[0]
    from .autograd import grad as autograd_grad
    from .autograd.function import Function

    class CondAutogradOp(Function):  # (its node: CondAutogradOpBackward, PyTorch's name)
        @staticmethod
        def forward(ctx: Any, pred: Any, branch: Any, *operands: Any) -> Any:
            inner, outs = branch
            ctx.inner, ctx.outs = inner, outs
            ctx.mark_non_differentiable(*(o for o in outs if not o.requires_grad))
            results = tuple(o.detach() for o in outs)
            return results[0] if len(results) == 1 else results

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            pairs = [(o, g) for o, g in zip(ctx.outs, grads, strict=True) if g is not None and o.requires_grad]
            wanted = [t for t in ctx.inner if isinstance(t, Tensor) and t.requires_grad]
            found: Any = [None] * len(wanted)
            if pairs and wanted:
                # (not create_graph: PyTorch's cond gradient is not differentiable again either)
                found = autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs], retain_graph=True,
                                      allow_unused=True)
            it = iter(found)
            return (None, None, *(next(it) if isinstance(t, Tensor) and t.requires_grad else None for t in ctx.inner))

    _COND_OP.append(CondAutogradOp)
    return CondAutogradOp


def _metadata(x: Any) -> Any:
    return (tuple(x.shape), x.dtype) if isinstance(x, Tensor) else type(x)


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any], carried_inputs: Any) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; returns ``carried``
    (a tuple; the body must return values of the same shapes and dtypes).

    >>> import retrograd as torch
    >>> torch.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (torch.tensor(0), torch.tensor(1.0)))
    (tensor(3), tensor(8.))
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _predicate(cond_fn(*carried)):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried) or any(_metadata(a) != _metadata(b) for a, b in zip(out, carried)):
            raise RuntimeError(
                "Expected body_fn_output and carried_inputs to have same metadata but found: body_fn_output "
                f"{[_metadata(a) for a in out]} vs carried_inputs {[_metadata(b) for b in carried]}")
        carried = out
    return carried
