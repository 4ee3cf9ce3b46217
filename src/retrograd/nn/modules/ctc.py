"""``CTCLoss``: the module form of ``nn.functional.ctc_loss``."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .loss import _Loss

__all__ = ["CTCLoss"]


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss: ``forward(log_probs, targets, input_lengths,
    target_lengths)``.

    >>> import retrograd as rg
    >>> lp = rg.zeros(2, 1, 2).log_softmax(2)
    >>> round(rg.nn.CTCLoss(reduction="sum")(lp, rg.tensor([[1]]), [2], [1]).item(), 4)
    0.2877
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
