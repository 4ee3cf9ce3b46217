"""Adafactor (factored second moments for matrices, relative step sizes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..factories import tensor, zeros_like
from ._common import _check_lr, _lr_value
from .optimizer import Optimizer, _grad_of, _params_with_grad

__all__ = ["Adafactor"]


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


class Adafactor(Optimizer):
    """PyTorch's Adafactor: a parameter of two or more dimensions keeps only the row and column
    means of the squared gradient over its last two dimensions (``row_var``, ``col_var``), a
    vector the full ``variance``; the step is ``max(eps2, rms(p)) * min(lr, 1/sqrt(t))``, the
    update clipped to RMS ``d``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.ones(2, 3)); p.grad = rg.ones(2, 3)
    >>> opt = rg.optim.Adafactor([p]); opt.step(); [tuple(v.shape) for v in opt.state[p].values()]
    [(), (2, 1), (1, 3)]
    """

    def __init__(self, params: Any, lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        _check_lr(lr)
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with no_grad(), np.errstate(all="ignore"):
            for group in self.param_groups:
                eps1, eps2 = group["eps"]
                lr = _lr_value(group["lr"])
                beta2_decay, weight_decay, d = group["beta2_decay"], group["weight_decay"], group["d"]
                params: list[Any] = _params_with_grad(group)
                for p in params:
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    state = self.state[p]
                    if len(state) == 0:
                        g: Any = p._grad
                        state["step"] = tensor(0.0)
                        if g.dim() > 1:
                            state["row_var"] = g.new_zeros((*g.shape[:-1], 1))
                            state["col_var"] = g.new_zeros((*g.shape[:-2], 1, g.shape[-1]))
                        else:
                            state["variance"] = zeros_like(g)
                for p in params:
                    state = self.state[p]
                    grad: Any = _grad_of(p, group["maximize"])
                    if eps1 is None:  # the first parameter's dtype decides, as in PyTorch's loop
                        eps1 = float(np.finfo(p._data.dtype).eps)
                    state["step"].add_(1)
                    step = state["step"].item()
                    one_minus_beta2_t = step**beta2_decay
                    rho_t = min(lr, 1 / (step**0.5))
                    alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                    if weight_decay != 0:
                        p.mul_(1 - lr * weight_decay)
                    if grad.dim() > 1:
                        row_var, col_var = state["row_var"], state["col_var"]
                        row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2_t)
                        col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2_t)
                        var_estimate = row_var @ col_var
                        var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                    else:
                        variance = state["variance"]
                        variance.lerp_(grad * grad, one_minus_beta2_t)
                        var_estimate = variance.clone()
                    update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
                    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                    p.add_(update, alpha=-alpha / denom)
        return loss
