"""RAdam (Adam with the variance of the adaptive learning rate rectified)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops.elementwise import _addcmul
from ..tensor import Tensor
from ._common import (
    _checked_defaults,
    _decayed_moments,
    _moment_groups,
    _refuse_capturable,
    _write_into,
)
from .optimizer import Optimizer, _add_into, _grad_of

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """PyTorch's RAdam: while the approximated simple-moving-average length ``rho_t`` is at most 5
    the step is SGD with momentum on the bias-corrected first moment; after that Adam's adaptive
    step scaled by the rectification term.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.RAdam([p], lr=0.1).step(); round(p.item(), 4)
    0.8
    """

    _group_flag_defaults = (("foreach", None), ("maximize", False), ("differentiable", False), ("decoupled_weight_decay", False), ("capturable", False))

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        super().__init__(params, _checked_defaults(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                                   maximize=maximize, foreach=foreach, capturable=capturable,
                                                   decoupled_weight_decay=decoupled_weight_decay,
                                                   differentiable=differentiable))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params, beta1, beta2, lr, eps, weight_decay in _moment_groups(self):
            differentiable = group["differentiable"]
            plain = self._plain_group(group, lr, beta1, beta2, eps)
            for p in params:
                self._state_at(p, ("exp_avg", "exp_avg_sq"))
            if params:
                _refuse_capturable(group, "params and state_steps")
            rho_inf = 2 / (1 - beta2) - 1
            for p in params:
                state = self.state[p]
                if plain and _radam_update_arrays(p, state, lr, beta1, beta2, eps, rho_inf):
                    continue
                grad: Any = _grad_of(p, group["maximize"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"].add_(1)
                step = state["step"].item()
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                corrected = exp_avg / bias_correction1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    root = exp_avg_sq.sqrt()
                    adaptive = (bias_correction2**0.5) / (root.add(eps) if differentiable else root.add_(eps))
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss


def _radam_update_arrays(p: Tensor, state: dict[str, Any], lr: float, beta1: float, beta2: float, eps: float,
                         rho_inf: float) -> bool:
    """``step``'s update of ``p`` (no weight decay, not maximizing) with NumPy on the arrays, as
    NAdam's (``_nadam_update_arrays``); the bias-corrected ``exp_avg`` is scaled by the adaptive rate and
    its rectification only once ``rho_t > 5``. False, with nothing done, where the arrays are refused."""
    exp_avg_sq: Tensor = state["exp_avg_sq"]
    # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2): the mul_ is done in _decayed_moments
    plain = _decayed_moments(p, state, "exp_avg_sq", beta1, beta2)
    if plain is None:
        return False
    steps, (data, grad, m, v) = plain
    step = steps.item()
    _write_into(exp_avg_sq, v, _addcmul(v, grad, grad, 1 - beta2), "addcmul_")
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    corrected = np.true_divide(m, bias_correction1)  # exp_avg / bias_correction1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if rho_t > 5.0:
        root = np.sqrt(v)  # (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
        np.add(root, eps, out=root)
        adaptive = np.true_divide(bias_correction2**0.5, root)
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        update = np.multiply(np.multiply(np.multiply(corrected, lr), adaptive), rect)
    else:
        update = np.multiply(corrected, lr)
    _add_into(p, data, update, -1.0)  # p.add_(..., alpha=-1.0)
    return True
