"""Loss modules (wrappers of ``nn.functional``'s losses): ``reduction`` is ``'mean'``,
``'sum'`` or ``'none'``; the deprecated ``size_average``/``reduce`` still pick it, with a warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .distance import PairwiseDistance
from .module import Module

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss",
]


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


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
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error, ``reduction`` of |input - target|.

    >>> import retrograd as rg
    >>> rg.nn.L1Loss()(rg.tensor([1.0, 3.0]), rg.tensor([0.0, 1.0])).item()
    1.5
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


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


class SmoothL1Loss(_Loss):
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (d = input - target).

    >>> import retrograd as rg
    >>> rg.nn.SmoothL1Loss()(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0])).item()
    1.3125
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    >>> import retrograd as rg
    >>> rg.nn.HuberLoss(delta=2.0)(rg.tensor([3.0]), rg.tensor([0.0])).item()
    4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities ``input`` against ``target`` (optionally weighted).

    >>> import retrograd as rg
    >>> round(rg.nn.BCELoss()(rg.tensor([0.5]), rg.tensor([1.0])).item(), 4)
    0.6931
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of ``sigmoid(input)``, computed stably; ``pos_weight`` weighs the
    positive term per class. Both weights are buffers.

    >>> import retrograd as rg
    >>> round(rg.nn.BCEWithLogitsLoss(pos_weight=rg.tensor([2.0]))(rg.zeros(1), rg.ones(1)).item(), 4)
    1.3863
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Tensor | None
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``.

    >>> import retrograd as rg
    >>> rg.nn.KLDivLoss(reduction='batchmean')(rg.tensor([[0.0]]), rg.tensor([[1.0]])).item()
    0.0
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of ``target`` under Poisson(``input``) (``log_input``: input is the log-rate).

    >>> import retrograd as rg
    >>> rg.nn.PoissonNLLLoss()(rg.tensor([0.0]), rg.tensor([0.0])).item()
    1.0
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None, eps: float = 1e-8,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of ``target`` under N(``input``, ``var``).

    >>> import retrograd as rg
    >>> rg.nn.GaussianNLLLoss()(rg.tensor([1.0]), rg.tensor([1.0]), rg.tensor([1.0])).item()
    0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for target 1, ``max(0, margin - x)`` for target -1.

    >>> import retrograd as rg
    >>> rg.nn.HingeEmbeddingLoss()(rg.tensor([0.3, 2.0]), rg.tensor([-1.0, 1.0])).item()
    1.350000023841858
    """

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss (``target`` lists class indices, ended by -1).

    >>> import retrograd as rg
    >>> round(rg.nn.MultiLabelMarginLoss()(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-target * input))``.

    >>> import retrograd as rg
    >>> round(rg.nn.SoftMarginLoss()(rg.zeros(2), rg.tensor([1.0, -1.0])).item(), 4)
    0.6931
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss over the classes (dim 1).

    >>> import retrograd as rg
    >>> round(rg.nn.MultiLabelSoftMarginLoss()(rg.zeros(1, 2), rg.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for target -1.

    >>> import retrograd as rg
    >>> rg.nn.CosineEmbeddingLoss()(rg.tensor([[1.0, 0.0]]), rg.tensor([[1.0, 0.0]]), rg.tensor([1.0])).item()
    0.0
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (x1 - x2) + margin)``.

    >>> import retrograd as rg
    >>> rg.nn.MarginRankingLoss(0.5)(rg.tensor([1.0]), rg.tensor([2.0]), rg.tensor([1.0])).item()
    1.5
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss of scores ``input`` against class indices ``target``.

    >>> import retrograd as rg
    >>> round(rg.nn.MultiMarginLoss()(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([3])).item(), 4)
    0.325
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance.

    >>> import retrograd as rg
    >>> a, p, n = rg.zeros(1, 2), rg.zeros(1, 2), rg.ones(1, 2)
    >>> rg.nn.TripletMarginLoss(margin=2.0)(a, p, n).item() > 0
    True
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``TripletMarginLoss`` with any ``distance_function`` (default: ``PairwiseDistance()``).

    >>> import retrograd as rg
    >>> rg.nn.TripletMarginWithDistanceLoss()
    TripletMarginWithDistanceLoss(
      (distance_function): PairwiseDistance()
    )
    """

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.distance_function: Callable[[Tensor, Tensor], Tensor] | None = (
            distance_function if distance_function is not None else PairwiseDistance()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)
