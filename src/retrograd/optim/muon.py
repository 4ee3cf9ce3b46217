"""Muon (momentum orthogonalised by a Newton-Schulz iteration, for 2-D parameters)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..factories import tensor, zeros_like
from ._common import _check_lr, _lr_value
from .optimizer import Optimizer, _params_with_grad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _bfloat16(values: Any) -> np.ndarray:
    """``values`` rounded to bfloat16 (to nearest, ties to even), held in float32: PyTorch runs the
    iteration in bfloat16, each operation rounding once its exact result.

    >>> _bfloat16(np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8])).tolist()
    [1.0, 1.0, 1.015625]
    """
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def _zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> np.ndarray:
    """The quintic Newton-Schulz iteration towards ``U V^T`` of ``grad = U S V^T``, in bfloat16
    as PyTorch's (each matrix product accumulated exactly, then rounded)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bfloat16(grad).astype(np.float64)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = float(_bfloat16(np.sqrt(np.sum(x * x))))
    x = _bfloat16(x / float(_bfloat16(max(norm, eps)))).astype(np.float64)
    for _ in range(ns_steps):
        gram = _bfloat16(x @ x.T).astype(np.float64)
        update = _bfloat16(b * gram + c * (gram @ gram)).astype(np.float64)
        x = _bfloat16(a * x + update @ x).astype(np.float64)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """PyTorch's Muon: ``buf = lerp(buf, g, 1 - momentum)``; the (Nesterov) momentum is
    orthogonalised by ``ns_steps`` Newton-Schulz iterations in bfloat16, then
    ``p = p * (1 - lr * weight_decay) - adjusted_lr * update``. Only 2-D parameters.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.ones(2, 3)); p.grad = rg.ones(2, 3)
    >>> opt = rg.optim.Muon([p]); opt.step(); list(opt.state[p])
    ['momentum_buffer']
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        _check_lr(lr)
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn is None or adjust_lr_fn in ("original", "match_rms_adamw"),
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with no_grad(), np.errstate(all="ignore"):
            for group in self.param_groups:
                lr = _lr_value(group["lr"])
                weight_decay, momentum = group["weight_decay"], group["momentum"]
                params: list[Any] = _params_with_grad(group)
                for p in params:
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = zeros_like(p._grad)
                for p in params:
                    grad: Any = p.grad
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    buf = self.state[p]["momentum_buffer"]
                    buf.lerp_(grad, 1 - momentum)
                    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                    ortho = _zeropower_via_newtonschulz(update.detach().numpy().astype(np.float64),
                                                        group["ns_coefficients"], group["ns_steps"], group["eps"])
                    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
                    p.mul_(1 - lr * weight_decay)
                    p.add_(tensor(ortho, dtype=p.dtype), alpha=-adjusted_lr)
        return loss
