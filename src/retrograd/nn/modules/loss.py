"""Loss modules: ``MSELoss``, ``L1Loss``, ``NLLLoss``, ``CrossEntropyLoss``."""

from __future__ import annotations

import warnings
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_sizes(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=4,
        )


def _mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
              reduction: str = "mean") -> Tensor:
    """Mean squared error from existing ops; used until ``functional.mse_loss`` exists."""
    _check_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    diff = input - target
    return _reduce(diff * diff, reduction)


def _l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
             reduction: str = "mean") -> Tensor:
    """Mean absolute error from existing ops; used until ``functional.l1_loss`` exists."""
    _check_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce((input - target).abs(), reduction)


class _Loss(Module):
    reduction: str

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class MSELoss(_Loss):
    """Mean squared error, ``reduction`` of (input - target)**2.

    >>> import retrograd as rg
    >>> rg.nn.MSELoss()(rg.tensor([1.0, 3.0]), rg.tensor([0.0, 1.0])).item()
    2.5
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        mse_loss = getattr(F, "mse_loss", _mse_loss)
        return mse_loss(input, target, reduction=self.reduction)  # type: ignore[no-any-return]


class L1Loss(_Loss):
    """Mean absolute error, ``reduction`` of |input - target|.

    >>> import retrograd as rg
    >>> rg.nn.L1Loss()(rg.tensor([1.0, 3.0]), rg.tensor([0.0, 1.0])).item()
    1.5
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        l1_loss = getattr(F, "l1_loss", _l1_loss)
        return l1_loss(input, target, reduction=self.reduction)  # type: ignore[no-any-return]


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities.

    >>> import retrograd as rg
    >>> rg.nn.NLLLoss()(rg.tensor([[-1.0, -2.0]]), rg.tensor([1])).item()
    2.0
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities.

    >>> import retrograd as rg
    >>> round(rg.nn.CrossEntropyLoss()(rg.zeros(1, 2), rg.tensor([0])).item(), 4)
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)
