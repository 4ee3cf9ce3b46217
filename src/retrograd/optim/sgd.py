"""Stochastic gradient descent (with momentum, dampening, Nesterov, weight decay, maximize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._common import _check_lr
from ._foreach import check_not_fused, sgd_foreach, use_foreach
from .optimizer import Optimizer, _add_into, _check, _grad_of, _mul_into, _number, _params_with_grad, _plain_arrays

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's SGD: ``buf = momentum * buf + (1 - dampening) * g`` (``buf = g`` on the first step),
    then ``p -= lr * (g + momentum * buf if nesterov else buf)``, with ``g = grad + weight_decay * p``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.SGD([p], lr=0.1).step(); round(p.item(), 4)
    0.8
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        _check(lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_not_fused(foreach, fused)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        # (errstate: as the tensor ops, which compute inf and nan silently whatever the filters)
        with no_grad(), np.errstate(all="ignore"):
            for group in self.param_groups:
                lr = group["lr"]
                momentum = group["momentum"]
                dampening = group["dampening"]
                weight_decay = group["weight_decay"]
                params = _params_with_grad(group)
                if use_foreach(group, params) and sgd_foreach(self, group, params):
                    continue
                for p in params:
                    if weight_decay == 0 and not group["maximize"] and _sgd_update_arrays(
                            p, self.state[p] if momentum != 0 else None, lr, momentum, dampening, group["nesterov"]):
                        continue
                    d_p = _grad_of(p, group["maximize"])
                    if weight_decay != 0:
                        d_p = d_p.add(p, alpha=weight_decay)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = d_p.clone().detach()
                            state["momentum_buffer"] = buf
                        else:
                            buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                        d_p = d_p.add(buf, alpha=momentum) if group["nesterov"] else buf
                    p.add_(d_p, alpha=-lr)
        return loss


def _sgd_update_arrays(p: Tensor, state: dict[str, Any] | None, lr: float, momentum: float, dampening: float,
                       nesterov: bool) -> bool:
    """``step``'s update of ``p`` (no weight decay, not maximizing) with NumPy on the arrays: the
    same operations, in the same order, with the same version bumps as the tensor ops, without
    their per-op dispatch. False (nothing done) when ``_plain_arrays`` refuses them, or on the
    first step with momentum (which makes the buffer with ``clone``)."""
    grad: Tensor = p._grad  # type: ignore[assignment]
    buf: Tensor | None = None
    if state is not None:
        buf = state.get("momentum_buffer")
        if buf is None:
            return False
        arrays = _plain_arrays(p, grad, buf)
    else:
        arrays = _plain_arrays(p, grad)
    if arrays is None or not (_number(lr) and _number(momentum) and _number(dampening)):
        return False
    data, d_p = arrays[0], arrays[1]
    # Each in-place op as ``_write_with_ufunc`` runs it, each out-of-place one as its forward.
    if buf is not None:
        buf_data = arrays[2]
        _mul_into(buf, buf_data, momentum)  # buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
        _add_into(buf, buf_data, d_p, 1 - dampening)
        if nesterov:  # d_p.add(buf, alpha=momentum)
            d_p = np.add(d_p, buf_data if momentum == 1 else np.multiply(buf_data, momentum))
        else:
            d_p = buf_data
    _add_into(p, data, d_p, -lr)  # p.add_(d_p, alpha=-lr)
    return True
