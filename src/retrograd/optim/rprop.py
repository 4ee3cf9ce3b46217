"""Rprop (resilient backpropagation: per-element step sizes driven by the gradient's sign)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..factories import full_like, tensor, zeros_like
from ._common import _GROUP_FLAGS, _check_hyperparameters, _lr_value, _refuse_capturable
from .optimizer import Optimizer, _check, _grad_of

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's Rprop: each element's step size grows by ``etas[1]`` while its gradient keeps its
    sign and shrinks by ``etas[0]`` when it flips (that step then skips the element), clamped to
    ``step_sizes``; ``p -= sign(g) * step_size``.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0])); p.grad = rg.tensor([2.0])
    >>> rg.optim.Rprop([p], lr=0.1).step(); round(p.item(), 4)
    0.9
    """

    _group_flag_defaults = _GROUP_FLAGS

    def __init__(self, params: Any, lr: Any = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters(lr=lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(p._grad, _lr_value(group["lr"]))  # type: ignore[arg-type]
            if params:
                _refuse_capturable(group, "params and state_steps")
            for p in params:
                state = self.state[p]
                grad: Any = _grad_of(p, group["maximize"])
                prev, step_size = state["prev"], state["step_size"]
                state["step"].add_(1)
                sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
                flipped, grown, kept = sign.lt(0), sign.gt(0), sign.eq(0)
                sign.masked_fill_(grown, etaplus).masked_fill_(flipped, etaminus).masked_fill_(kept, 1)
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                grad = grad.masked_fill(flipped, 0)  # no step where the sign flipped
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
