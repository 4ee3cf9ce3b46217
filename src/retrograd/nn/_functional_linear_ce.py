"""``nn.functional.linear_cross_entropy``: ``cross_entropy(linear(input, linear_weight,
linear_bias), target, ...)`` with PyTorch's checks, K-dimensional weights and its ``options``
(``LinearCrossEntropyOptions``, ``nn/modules/linear_cross_entropy.py``). Re-exported by
``nn/functional.py``.

PyTorch's chunked path (``options`` given) only bounds memory: the loss and gradients are the
reference path's, which is what is computed here in every case (the node under the loss is
``NllLossBackward0`` rather than PyTorch's generated custom-op node; see docs/differences.md)."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..tensor import Tensor

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: Any = None) -> Tensor:
    """Cross entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``: input
    (N, in) or (in,), linear_weight (C, *out_features, in); ``ignore_index=None`` means -100
    for class indices.

    >>> import retrograd as rg
    >>> F = rg.nn.functional
    >>> round(F.linear_cross_entropy(rg.ones(1, 2), rg.zeros(3, 2), rg.tensor([0])).item(), 4)
    1.0986
    """
    from . import functional as F

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        from .. import int64

        chunkable = (not out_features and reduction in {"mean", "sum", "none"} and label_smoothing == 0.0
                     and target.dtype == int64)
        if not chunkable:
            warnings.warn(
                "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
                "label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                f"out_features={out_features}, tracing=False, linear_bias.shape="
                f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", UserWarning, stacklevel=2)
        else:
            # (resolving the options raises PyTorch's ValueError for a chunk size that disagrees)
            options._adjust(num_batches=batches[0] if batches else 1, in_features=in_features,
                            num_classes=num_classes, dtype=input.dtype)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction,  # type: ignore[no-any-return]
                           ignore_index=ignore_index, label_smoothing=label_smoothing)
