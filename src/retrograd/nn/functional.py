"""``retrograd.nn.functional``: activations, softmax family and losses."""

from __future__ import annotations

from typing import Any

from ..ops import nn as _nn
from ..ops.op import apply
from ..ops.reduce import normalize_dim
from ..tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0).

    >>> import retrograd as rg
    >>> rg.nn.functional.relu(rg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else input.relu()


def _softmax_dim(input: Tensor, dim: int | None) -> int:  # noqa: A002
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return normalize_dim(dim, input.dim())


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> rg.nn.functional.softmax(rg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    x = input if dtype is None else input.to(dtype)
    return apply(_nn.softmax, (x, _softmax_dim(input, dim)))  # type: ignore[no-any-return]


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.log_softmax(rg.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    x = input if dtype is None else input.to(dtype)
    return apply(_nn.log_softmax, (x, _softmax_dim(input, dim)))  # type: ignore[no-any-return]


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,  # noqa: A002
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities.

    >>> import retrograd as rg
    >>> rg.nn.functional.nll_loss(rg.tensor([[-1.0, -2.0]]), rg.tensor([1])).item()
    2.0
    """
    _check_reduction(reduction)
    return apply(_nn.nll_loss, (input, target, weight, reduction, ignore_index))  # type: ignore[no-any-return]


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,  # noqa: A002
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` for class indices; class probabilities also accepted.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.cross_entropy(rg.zeros(1, 2), rg.tensor([0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    if target.is_floating_point():  # class probabilities
        probs = target
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / input.shape[class_dim]
        per_class = -(logp * probs) if weight is None else -(logp * probs * _class_view(weight, input))
        losses = per_class.sum(class_dim)
        if reduction == "none":
            return losses
        if reduction == "sum":
            return losses.sum()
        return losses.sum() / (losses.numel() if input.dim() > 1 else 1)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return loss
    classes = input.shape[class_dim]
    valid = target != ignore_index
    smooth = -(logp if weight is None else logp * _class_view(weight, input)).sum(class_dim)
    smooth = smooth.masked_fill(valid.logical_not(), 0.0)
    if reduction == "none":
        smooth_red = smooth
    elif reduction == "sum":
        smooth_red = smooth.sum()
    else:
        denom = valid.sum() if weight is None else (weight[target.masked_fill(valid.logical_not(), 0)] * valid).sum()
        smooth_red = smooth.sum() / denom
    return loss * (1 - label_smoothing) + smooth_red * (label_smoothing / classes)


def _class_view(weight: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    shape = [1] * input.dim()
    shape[0 if input.dim() == 1 else 1] = weight.shape[0]
    return weight.reshape(shape)


# Convolution, pooling, unfold/fold and interpolation live in their own module.
from ._functional_conv import *  # noqa: E402, F401, F403
