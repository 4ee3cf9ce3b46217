"""Adam and AdamW (amsgrad, L2 or decoupled weight decay, maximize)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._functions import maximum
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._common import _check_lr
from ._foreach import ADAM_SMALL, adam_foreach, check_not_fused, use_foreach
from .optimizer import Optimizer, _add_into, _check, _grad_of, _mul_into, _number, _params_with_grad, _plain_arrays

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """PyTorch's Adam: bias-corrected first and second moments, ``eps`` added after the square
    root; ``decoupled_weight_decay=True`` makes it AdamW.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.Adam([p], lr=0.1).step(); round(p.item(), 4)
    0.9
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_not_fused(foreach, fused)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        # (errstate: as the tensor ops, which compute inf and nan silently whatever the filters)
        with no_grad(), np.errstate(all="ignore"):
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr = float(group["lr"])
                eps = group["eps"]
                weight_decay = group["weight_decay"]
                amsgrad = group["amsgrad"]
                buffers = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("exp_avg", "exp_avg_sq")
                plain = (weight_decay == 0 and not amsgrad and not group["maximize"]
                         and all(_number(x) for x in (beta1, beta2, eps)))
                params = _params_with_grad(group)
                if group.get("foreach") and group.get("differentiable"):
                    raise AssertionError("_foreach ops don't support autograd")
                if use_foreach(group, params, ADAM_SMALL) and adam_foreach(self, group, params):
                    continue
                for p in params:
                    state = self._state_at(p, buffers)
                    if plain and _adam_update_arrays(p, state, lr, beta1, beta2, eps):
                        continue
                    grad = _grad_of(p, group["maximize"])
                    step_t = state["step"]
                    exp_avg = state["exp_avg"]
                    exp_avg_sq = state["exp_avg_sq"]
                    step_t.add_(1)
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            p.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(p, alpha=weight_decay)
                    exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # lerp towards grad
                    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                    step = step_t.item()
                    bias_correction1 = 1 - beta1**step
                    bias_correction2_sqrt = math.sqrt(1 - beta2**step)
                    step_size = lr / bias_correction1
                    if amsgrad:
                        max_sq = state["max_exp_avg_sq"]
                        max_sq.copy_(maximum(max_sq, exp_avg_sq))
                        denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    else:
                        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    p.add_(exp_avg / denom, alpha=-step_size)
        return loss


def _adam_update_arrays(p: Tensor, state: dict[str, Any], lr: float, beta1: float, beta2: float, eps: float) -> bool:
    """``step``'s update of ``p`` (no weight decay, no amsgrad, not maximizing) with NumPy on the
    arrays: the same operations, in the same order, with the same version bumps as the tensor
    ops, without their per-op dispatch. False (nothing done) when ``_plain_arrays`` refuses them,
    or for a 0-d parameter (NumPy makes scalars of its temporaries)."""
    step_t: Tensor = state["step"]
    exp_avg: Tensor = state["exp_avg"]
    exp_avg_sq: Tensor = state["exp_avg_sq"]
    arrays = _plain_arrays(p, p._grad, exp_avg, exp_avg_sq)  # type: ignore[arg-type]
    steps = step_t._data
    if (arrays is None or not arrays[0].ndim or type(steps) is not np.ndarray or steps.dtype.kind not in "fV" or steps.shape != ()
            or step_t._is_inference or not steps.flags.writeable):
        return False
    data, grad, m, v = arrays
    # Each in-place op as ``_write_with_ufunc`` runs it, each out-of-place one as its forward.
    _add_into(step_t, steps, 1)  # step_t.add_(1)
    _add_into(exp_avg, m, np.subtract(grad, m), 1 - beta1)  # exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
    _mul_into(exp_avg_sq, v, beta2)  # exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
    _add_into(exp_avg_sq, v, np.multiply(grad, grad), 1 - beta2)
    step = steps.item()
    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = math.sqrt(1 - beta2**step)
    step_size = lr / bias_correction1
    denom = np.true_divide(np.sqrt(v), bias_correction2_sqrt)  # (exp_avg_sq.sqrt() / bc2).add_(eps)
    np.add(denom, eps, out=denom)
    _add_into(p, data, np.true_divide(m, denom), -step_size)  # p.add_(exp_avg / denom, alpha=-step_size)
    return True


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam update).

    >>> import retrograd as rg
    >>> rg.optim.AdamW([rg.nn.Parameter(rg.ones(1))]).defaults['weight_decay']
    0.01
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
