"""Adagrad (lr decay, weight decay, initial accumulator, maximize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..factories import full_like, tensor
from .optimizer import Optimizer, _check, _grad_of, _params_with_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """PyTorch's Adagrad: ``sum += g**2``; ``p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (step - 1) * lr_decay)``. State is created for every parameter up front.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.Adagrad([p], lr=0.1).step(); round(p.item(), 4)
    0.9
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0)
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                for p in _params_with_grad(group):
                    state = self.state[p]
                    step_t = state["step"]
                    step_t.add_(1)
                    step = step_t.item()
                    grad = _grad_of(p, group["maximize"])
                    if group["weight_decay"] != 0:
                        grad = grad.add(p, alpha=group["weight_decay"])
                    clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                    state_sum = state["sum"]
                    state_sum.add_(grad * grad)
                    std = state_sum.sqrt().add_(group["eps"])
                    p.add_(grad / std, alpha=-clr)
        return loss
