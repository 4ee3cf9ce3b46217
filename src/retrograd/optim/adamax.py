"""Adamax (Adam with the infinity norm)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._functions import cat, maximum
from ..ops.elementwise import _addcdiv
from ..tensor import Tensor
from ._common import (
    _GROUP_FLAGS,
    _checked_defaults,
    _decayed_moments,
    _moment_groups,
    _refuse_capturable,
    _write_into,
)
from .optimizer import Optimizer, _grad_of

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """PyTorch's Adamax: ``exp_inf = max(beta2 * exp_inf, |g| + eps)``,
    ``p -= lr / (1 - beta1**t) * exp_avg / exp_inf``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.Adamax([p], lr=0.1).step(); round(p.item(), 4)
    0.9
    """

    _group_flag_defaults = _GROUP_FLAGS

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        super().__init__(params, _checked_defaults(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                                   foreach=foreach, maximize=maximize, differentiable=differentiable,
                                                   capturable=capturable))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params, beta1, beta2, lr, eps, weight_decay in _moment_groups(self):
            for p in params:
                self._state_at(p, ("exp_avg", "exp_inf"))
            if params:
                _refuse_capturable(group, "params and state_steps")
            plain = self._plain_group(group, lr, beta1, beta2, eps)
            for p in params:
                state = self.state[p]
                if plain and _adamax_update_arrays(p, state, lr, beta1, beta2, eps):
                    continue
                grad: Any = _grad_of(p, group["maximize"])
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                if group["differentiable"]:  # PyTorch's recorded form: the max over a stack
                    norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze(0)], 0)
                    exp_inf.copy_(norm_buf.amax(0, keepdim=False))
                else:
                    exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                clr = lr / (1 - beta1 ** state["step"].item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss


def _adamax_update_arrays(p: Tensor, state: dict[str, Any], lr: float, beta1: float, beta2: float,
                          eps: float) -> bool:
    """``step``'s update of ``p`` (no weight decay, not maximizing) with NumPy on the arrays, as
    Adadelta's (``_adadelta_update_arrays``): ``exp_inf = max(beta2 * exp_inf, |grad| + eps)``, then
    ``p -= lr / (1 - beta1**step) * exp_avg / exp_inf``. False, with nothing done, where the arrays are refused."""
    exp_inf: Tensor = state["exp_inf"]
    # exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps))): the mul_ is done in _decayed_moments
    plain = _decayed_moments(p, state, "exp_inf", beta1, beta2)
    if plain is None:
        return False
    steps, (data, grad, m, u) = plain
    bound = np.abs(grad)
    np.add(bound, eps, out=bound)
    _write_into(exp_inf, u, np.maximum(u, bound), "copy_")
    clr = lr / (1 - beta1 ** steps.item())
    _write_into(p, data, _addcdiv(data, m, u, -clr), "addcdiv_")  # p.addcdiv_(exp_avg, exp_inf, value=-clr)
    return True
