"""``PairwiseDistance`` and ``CosineSimilarity``."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """The p-norm of ``x1 - x2 + eps`` along the last dim.

    >>> import retrograd as rg
    >>> round(rg.nn.PairwiseDistance()(rg.tensor([[3.0, 0.0]]), rg.tensor([[0.0, 4.0]])).item(), 3)
    5.0
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    >>> import retrograd as rg
    >>> rg.nn.CosineSimilarity(dim=0)(rg.tensor([1.0, 0.0]), rg.tensor([2.0, 0.0])).item()
    1.0
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
