"""Adadelta (running averages of squared gradients and of squared updates)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from ._common import _GROUP_FLAGS, _checked_defaults, _lr_value, _plain_state, _refuse_capturable
from .optimizer import Optimizer, _add_into, _grad_of, _mul_into

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """PyTorch's Adadelta: ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``,
    ``p -= lr * delta``, both averages with decay ``rho``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> opt = rg.optim.Adadelta([p]); opt.step(); list(opt.state[p])
    ['step', 'square_avg', 'acc_delta']
    """

    _group_flag_defaults = _GROUP_FLAGS

    def __init__(self, params: Any, lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, _checked_defaults(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                                   maximize=maximize, capturable=capturable, foreach=foreach,
                                                   differentiable=differentiable))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            lr = _lr_value(group["lr"])
            rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
            for p in params:
                self._state_at(p, ("square_avg", "acc_delta"))
            if params:
                _refuse_capturable(group, "params and state_steps", "['cuda', 'xpu', 'hpu', 'privateuseone']")
            plain = self._plain_group(group, lr, rho, eps)
            for p in params:
                state = self.state[p]
                if plain and _adadelta_update_arrays(p, state, lr, rho, eps):
                    continue
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


def _adadelta_update_arrays(p: Tensor, state: dict[str, Any], lr: float, rho: float, eps: float) -> bool:
    """``step``'s update of ``p`` (no weight decay, not maximizing) with NumPy on the arrays: the
    tensor ops' own kernels, in the same order, with the same version bumps. False (nothing
    done) when ``_plain_arrays`` refuses the arrays, or for a 0-d parameter."""
    square_avg: Tensor = state["square_avg"]
    acc_delta: Tensor = state["acc_delta"]
    plain = _plain_state(p, state, "square_avg", "acc_delta")
    if plain is None:
        return False
    steps, (data, grad, v, u) = plain
    _mul_into(square_avg, v, rho)  # square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    _addcmul_into(square_avg, v, grad, 1 - rho)
    std = np.add(v, eps)  # square_avg.add(eps).sqrt_()
    np.sqrt(std, out=std)
    delta = np.add(u, eps)  # acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
    np.sqrt(delta, out=delta)
    np.true_divide(delta, std, out=delta)
    np.multiply(delta, grad, out=delta)
    _mul_into(acc_delta, u, rho)  # acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    _addcmul_into(acc_delta, u, delta, 1 - rho)
    # p.add_(delta, alpha=-lr): delta is not read again, so it takes the product in place
    _add_into(p, data, np.multiply(delta, -lr, out=delta))
    return True


def _addcmul_into(target: Tensor, out: np.ndarray, t: np.ndarray, value: float) -> None:
    """``target.addcmul_(t, t, value=value)`` on ``target``'s array ``out`` (of ``t``'s dtype): the
    kernel's operations (``_addcmul``: ``t * t``, times ``value`` unless 1, added) in that order,
    so the same roundings, with one temporary instead of three and no copy back."""
    square = np.multiply(t, t)
    if value != 1:
        np.multiply(square, value, out=square)
    np.add(out, square, out=out)
    target._counter().bump("addcmul_")
