"""Neural-network ops with dedicated rules where a composite would be unstable: ``softmax``,
``log_softmax`` and ``nll_loss`` (``cross_entropy`` composes the last two, as in PyTorch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .op import Op

_make = Tensor._make


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - np.max(x, axis=dim, keepdims=True) if x.size else x
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    if not x.size:
        return x.copy()
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


softmax = Op("softmax", _softmax, node="SoftmaxBackward0", params=("dim",), dtype="float_unary",
             grads=(lambda grad, result, dim: result * (grad - (grad * result).sum(dim, keepdim=True)),))

log_softmax = Op("log_softmax", _log_softmax, node="LogSoftmaxBackward0", params=("dim",), dtype="float_unary",
                 grads=(lambda grad, result, dim: grad - result.exp() * grad.sum(dim, keepdim=True),))


def _flatten_classes(x: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, C, d1, ...) scores and (N, d1, ...) targets -> (M, C) and (M,)."""
    if x.ndim == 1:
        return x[None, :], target.reshape(1)
    classes = x.shape[1]
    return np.moveaxis(x, 1, -1).reshape(-1, classes), target.reshape(-1)


def _check_nll(x: np.ndarray, target: np.ndarray, weight: Any) -> None:
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if x.ndim < 1 or x.ndim > 1 and target.shape != (x.shape[0],) + x.shape[2:]:
        raise ValueError(
            f"Expected input batch_size ({x.shape[0] if x.ndim else 1}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 1})."
        )
    if weight is not None and weight.shape != (x.shape[-1 if x.ndim == 1 else 1],):
        raise RuntimeError("weight tensor should be defined either for all classes or no classes")


def _nll_weights(x: np.ndarray, target: np.ndarray, weight: Any, ignore_index: int) -> tuple[np.ndarray, ...]:
    scores, flat_target = _flatten_classes(x, target)
    classes = scores.shape[1]
    valid = flat_target != ignore_index
    safe = np.where(valid, flat_target, 0)
    bad = (safe < 0) | (safe >= classes)
    if bad.any():
        raise IndexError(f"Target {int(flat_target[bad][0])} is out of bounds.")
    w = (weight[safe] if weight is not None else np.ones(len(safe), scores.dtype)) * valid
    return scores, safe, w.astype(scores.dtype, copy=False)


def _nll_loss(x: np.ndarray, target: np.ndarray, weight: Any, reduction: str, ignore_index: int) -> np.ndarray:
    _check_nll(x, target, weight)
    scores, safe, w = _nll_weights(x, target, weight, ignore_index)
    losses = -scores[np.arange(len(safe)), safe] * w
    if reduction == "none":
        return losses.reshape(target.shape)
    if reduction == "sum":
        return np.asarray(losses.sum(), dtype=x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(losses.sum() / w.sum(), dtype=x.dtype)


def _nll_loss_grad(grad: Tensor, self: Tensor, target: Tensor, weight: Any, reduction: str,
                   ignore_index: int) -> Tensor:
    # The loss is linear in ``self``: grad * coefficients, with constant coefficients, so the
    # rule is differentiable again.
    x = self._data
    weight_data = weight._data if weight is not None else None
    scores, safe, w = _nll_weights(x, target._data, weight_data, ignore_index)
    coeff = np.zeros_like(scores)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            w = w / w.sum()
    coeff[np.arange(len(safe)), safe] = -w
    if x.ndim == 1:
        coeff_full = coeff[0]
    else:
        moved = (x.shape[0],) + x.shape[2:] + (x.shape[1],)
        coeff_full = np.moveaxis(coeff.reshape(moved), -1, 1)
    if reduction == "none" and x.ndim > 1:
        grad = grad.unsqueeze(1)
    return grad * _make(np.ascontiguousarray(coeff_full))


nll_loss = Op("nll_loss", _nll_loss, node="NllLossBackward0", inputs=("self", "target", "weight"),
              params=("reduction", "ignore_index"), grads=(_nll_loss_grad, None, None))
