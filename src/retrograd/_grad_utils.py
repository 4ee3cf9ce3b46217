"""Resetting the ``.grad`` of parameters: what ``Module.zero_grad`` and ``Optimizer.zero_grad``
both do, written once, below both layers."""

from __future__ import annotations

from collections.abc import Iterable

from .autograd.anomaly_mode import ANOMALY, note_origin
from .tensor import Tensor


def zero_grads(params: Iterable[Tensor], set_to_none: bool) -> None:
    """Reset the gradient of each of ``params`` that has one: to ``None`` (``set_to_none``), or
    detached and filled with zeros in place, as PyTorch's ``zero_grad`` does. Each reset tensor
    notes it in ``_grad_reset`` (where, when creation sites are on; and the zeroed gradient's
    version), which ``debug.explain_grad`` reads.

    >>> import retrograd as rg
    >>> w = rg.ones(2, requires_grad=True)
    >>> (w * w).sum().backward()
    >>> zero_grads([w], set_to_none=False); w.grad
    tensor([0., 0.])
    >>> zero_grads([w], set_to_none=True); w.grad is None
    True
    """
    if set_to_none:
        reset = None  # every parameter's note is the same: made once, for the first gradient reset
        for p in params:
            if p._grad is not None:
                if reset is None:
                    reset = (note_origin("zero_grad") if ANOMALY[0] else None, None)
                p._grad = None
                p._grad_reset = reset
        return
    for p in params:
        grad = p._grad
        if grad is None:
            continue
        if grad._grad_fn is not None:
            grad.detach_()
        else:
            grad.requires_grad_(False)
        grad.zero_()
        p._grad_reset = (note_origin("zero_grad") if ANOMALY[0] else None, grad._counter().value)
