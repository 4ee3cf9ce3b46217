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
    return chosen(*operands)


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
