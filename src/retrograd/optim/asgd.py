"""ASGD (averaged stochastic gradient descent)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..factories import ones, tensor, zeros, zeros_like
from ._common import _GROUP_FLAGS, _check_hyperparameters, _lr_value, _refuse_capturable
from .optimizer import Optimizer, _grad_of

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's ASGD: ``p = p * (1 - lambd * eta) - eta * g``; ``ax`` averages the iterates once
    ``step > t0``; ``eta = lr / (1 + lambd * lr * step) ** alpha``, ``mu = 1 / max(1, step - t0)``
    (``eta`` and ``mu`` are float32 scalars, as PyTorch keeps them).

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> opt = rg.optim.ASGD([p], lr=0.1); opt.step(); list(opt.state[p]), round(p.item(), 4)
    (['step', 'eta', 'mu', 'ax'], 0.8)
    """

    _group_flag_defaults = _GROUP_FLAGS

    def __init__(self, params: Any, lr: Any = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_hyperparameters(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            lr = _lr_value(group["lr"])
            lambd, alpha, t0, weight_decay = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = zeros(())
                    state["eta"] = tensor(float(lr))
                    state["mu"] = ones(())
                    state["ax"] = zeros_like(p)
            if params:
                _refuse_capturable(group, "params, mus, etas, and state_steps")
            for p in params:
                state = self.state[p]
                grad: Any = _grad_of(p, group["maximize"])
                eta, mu, ax = state["eta"], state["mu"], state["ax"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                step = state["step"].item()
                eta.copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(tensor(1 / max(1, step - t0)))
        return loss
