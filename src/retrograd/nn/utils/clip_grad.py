"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

from ..._functions import isfinite, stack
from ...autograd.grad_mode import no_grad
from ...factories import tensor as _tensor
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together (as if concatenated).

    >>> import retrograd as rg
    >>> rg.nn.utils.get_total_norm([rg.tensor([3.0]), rg.tensor([4.0])]).item()
    5.0
    """
    items = _as_list(tensors)
    norm_type = float(norm_type)
    if not items:
        return _tensor(0.0)
    with no_grad():
        norms = [t.norm(norm_type) for t in items]
        total = stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))``, in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Rescale the gradients in place so that their total norm is at most ``max_norm``;
    returns the total norm before clipping (a tensor). Parameters without a gradient are skipped.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([3.0, 4.0])); p.grad = rg.tensor([3.0, 4.0])
    >>> rg.nn.utils.clip_grad_norm_([p], 1.0).item(), [round(v, 4) for v in p.grad.tolist()]
    (5.0, [0.6, 0.8])
    """
    is_generator = isinstance(parameters, types.GeneratorType)
    params = _as_list(parameters)
    if is_generator and not params:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)  # type: ignore[arg-type]
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient to [-clip_value, clip_value], in place.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0, 1.0])); p.grad = rg.tensor([-3.0, 0.5])
    >>> rg.nn.utils.clip_grad_value_([p], 1.0); p.grad.tolist()
    [-1.0, 0.5]
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
