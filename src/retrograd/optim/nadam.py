"""NAdam (Nesterov-accelerated Adam, with momentum decay and optional decoupled weight decay)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..factories import tensor, zeros_like
from ..ops.elementwise import _addcdiv, _addcmul
from ..tensor import Tensor
from ._common import (
    _check_hyperparameters,
    _lerp_into,
    _moment_groups,
    _plain_scalar,
    _plain_state,
    _refuse_capturable,
    _write_into,
)
from .optimizer import Optimizer, _grad_of, _mul_into

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """PyTorch's NAdam: Adam whose first moment is looked ahead with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``; the running product of the
    ``mu_t`` is kept in the state (``mu_product``, a float32 scalar as PyTorch keeps it).

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> opt = rg.optim.NAdam([p], lr=0.1); opt.step(); list(opt.state[p])
    ['step', 'mu_product', 'exp_avg', 'exp_avg_sq']
    """

    _group_flag_defaults = (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False), ("decoupled_weight_decay", False))

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params, beta1, beta2, lr, eps, weight_decay in _moment_groups(self):
            momentum_decay = group["momentum_decay"]
            differentiable = group["differentiable"]
            plain = self._plain_group(group, lr, beta1, beta2, eps, momentum_decay)
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["mu_product"] = tensor(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
            if params:
                _refuse_capturable(group, "params, mu_products and state_steps")
            for p in params:
                state = self.state[p]
                if plain and _nadam_update_arrays(p, state, lr, beta1, beta2, eps, momentum_decay):
                    continue
                grad: Any = _grad_of(p, group["maximize"])
                exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
                state["step"].add_(1)
                step = state["step"].item()
                bias_correction2 = 1 - beta2**step
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product.mul_(mu)  # in the scalar's own dtype, as PyTorch's float32 state
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                if differentiable:
                    # PyTorch's recorded form: out-of-place, the factors from the float32 product.
                    denom = denom.add(eps)
                    p.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
                    p.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product * mu_next)), denom)
                    continue
                denom.add_(eps)
                product = mu_product.item()
                p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
                p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - product * mu_next))
        return loss


def _nadam_update_arrays(p: Tensor, state: dict[str, Any], lr: float, beta1: float, beta2: float, eps: float,
                         momentum_decay: float) -> bool:
    """``step``'s update of ``p`` (no weight decay, not maximizing) with NumPy on the arrays: the
    tensor ops' own kernels, in the same order, with the same version bumps, without their
    per-op dispatch. False (nothing done) when ``_plain_arrays`` refuses the arrays, or for a
    0-d parameter (NumPy makes scalars of its temporaries)."""
    mu_t: Tensor = state["mu_product"]
    exp_avg: Tensor = state["exp_avg"]
    exp_avg_sq: Tensor = state["exp_avg_sq"]
    mu_product = _plain_scalar(mu_t)
    if mu_product is None:
        return False
    plain = _plain_state(p, state, "exp_avg", "exp_avg_sq")
    if plain is None:
        return False
    steps, (data, grad, m, v) = plain
    step = steps.item()
    bias_correction2 = 1 - beta2**step
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    _mul_into(mu_t, mu_product, mu)  # mu_product.mul_(mu)
    _lerp_into(exp_avg, m, grad, 1 - beta1)  # exp_avg.lerp_(grad, 1 - beta1)
    _mul_into(exp_avg_sq, v, beta2)  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    _write_into(exp_avg_sq, v, _addcmul(v, grad, grad, 1 - beta2), "addcmul_")
    denom = np.sqrt(np.true_divide(v, bias_correction2))  # exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
    np.add(denom, eps, out=denom)
    product = mu_product.item()
    _write_into(p, data, _addcdiv(data, grad, denom, -lr * (1.0 - mu) / (1.0 - product)), "addcdiv_")
    _write_into(p, data, _addcdiv(data, m, denom, -lr * mu_next / (1.0 - product * mu_next)), "addcdiv_")
    return True
