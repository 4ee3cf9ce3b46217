"""``nn.functional.ctc_loss`` (the op is ``ops/nn.py``'s ``ctc_loss``). Re-exported by
``nn/functional.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import nn as _nn
from ..ops.elementwise import where
from ..ops.op import apply
from ..tensor import Tensor

__all__ = ["ctc_loss"]


def _lengths(value: Any) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        return tuple(int(v) for v in np.atleast_1d(value._data))
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    return tuple(int(v) for v in value)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss of ``log_probs`` (T, N, C) (log-softmax output)
    against ``targets``, padded (N, S) or concatenated (sum(target_lengths),). ``mean`` divides each
    loss by its target length, then averages; ``zero_infinity`` zeroes impossible alignments' losses
    and gradients.

    >>> import retrograd as rg
    >>> lp = rg.zeros(2, 1, 2).log_softmax(2)
    >>> round(rg.nn.functional.ctc_loss(lp, rg.tensor([[1]]), [2], [1], reduction="sum").item(), 4)
    0.2877
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    input_t, target_t = _lengths(input_lengths), _lengths(target_lengths)
    batched = log_probs.dim() == 3
    # (an unbatched (T, C) input runs as a batch of one, squeezed at the end: PyTorch's graph)
    x = log_probs if batched else log_probs.unsqueeze(1)
    # (the targets as the op's ``versioned=`` param, as given: an unbatched (S,) one reads as the
    # concatenated targets of a batch of one)
    loss, _ = apply(_nn.ctc_loss, (x, targets, input_t, target_t, blank, bool(zero_infinity)))
    if zero_infinity:
        loss = where(loss == float("inf"), Tensor._make(np.zeros((), loss._data.dtype)), loss)
    if reduction == "mean":
        divisor = Tensor._make(np.maximum(np.asarray(target_t), 1).astype(loss._data.dtype).reshape(loss.shape))
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)  # type: ignore[no-any-return]
