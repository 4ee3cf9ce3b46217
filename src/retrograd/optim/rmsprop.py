"""RMSprop (momentum, centered, weight decay, maximize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _check, _grad_of, _params_with_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """PyTorch's RMSprop: ``v = alpha * v + (1 - alpha) * g**2``; the step divides by
    ``sqrt(v) + eps`` (``sqrt(v - mean(g)**2) + eps`` when centered).

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.RMSprop([p], lr=0.01).step(); round(p.item(), 4)
    0.9
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                alpha = group["alpha"]
                eps = group["eps"]
                momentum = group["momentum"]
                weight_decay = group["weight_decay"]
                buffers = ("square_avg", *(("momentum_buffer",) if momentum > 0 else ()),
                           *(("grad_avg",) if group["centered"] else ()))
                for p in _params_with_grad(group):
                    state = self._state_at(p, buffers)
                    grad = _grad_of(p, group["maximize"])
                    state["step"].add_(1)
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                    if group["centered"]:
                        grad_avg = state["grad_avg"]
                        grad_avg.add_(grad - grad_avg, alpha=1 - alpha)
                        avg = (square_avg - grad_avg * grad_avg).sqrt()
                    else:
                        avg = square_avg.sqrt()
                    avg = avg.add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(grad / avg)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.add_(grad / avg, alpha=-lr)
        return loss
