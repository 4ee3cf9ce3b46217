"""Adadelta (running averages of squared gradients and of squared updates)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.grad_mode import set_grad_enabled
from ._common import _check_lr, _lr_value, _refuse_capturable
from .optimizer import Optimizer, _check, _grad_of, _params_with_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """PyTorch's Adadelta: ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``,
    ``p -= lr * delta``, both averages with decay ``rho``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> opt = rg.optim.Adadelta([p]); opt.step(); list(opt.state[p])
    ['step', 'square_avg', 'acc_delta']
    """

    def __init__(self, params: Any, lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("foreach", None), ("maximize", False), ("differentiable", False),
                               ("capturable", False)):
                group.setdefault(key, value)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        # (differentiable=True records the update, as PyTorch: grad mode follows the flag)
        with set_grad_enabled(bool(self.defaults["differentiable"])), np.errstate(all="ignore"):
            for group in self.param_groups:
                lr = _lr_value(group["lr"])
                rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
                params: list[Any] = _params_with_grad(group)
                for p in params:
                    self._state_at(p, ("square_avg", "acc_delta"))
                if params:
                    _refuse_capturable(group, "params and state_steps", "['cuda', 'xpu', 'hpu', 'privateuseone']")
                for p in params:
                    state = self.state[p]
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    state["step"].add_(1)
                    grad: Any = _grad_of(p, group["maximize"])
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                    std = square_avg.add(eps).sqrt_()
                    delta = acc_delta.add(eps).sqrt_()
                    if group["differentiable"]:
                        delta = delta.clone()
                    delta.div_(std).mul_(grad)
                    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                    p.add_(delta, alpha=-lr)
        return loss
