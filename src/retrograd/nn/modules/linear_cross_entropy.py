"""``LinearCrossEntropyLoss`` (a ``Linear`` head and cross entropy in one module) and
``LinearCrossEntropyOptions`` (the chunking options of ``F.linear_cross_entropy``: validated and
resolved as PyTorch does; the loss is computed unchunked, see ``nn/_functional_linear_ce.py``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

_POLICIES = {"auto", "accurate", "balanced", "compact"}
# (device type, input dtype name) -> (acc_policy, chunking_method) for "auto"; CPU only here
_AUTO_DEFAULTS = {"bfloat16": ("accurate", "aspect_ratio"), "float16": ("accurate", "aspect_ratio")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Chunking options of ``linear_cross_entropy`` (batch rows per chunk, accumulation policy
    and dtype); checked on construction as in PyTorch.

    >>> import retrograd as rg
    >>> rg.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=4, chunking_method='auto', acc_policy='auto', acc_dtype=None)
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and str(self.acc_dtype) not in (
                "torch.float16", "torch.bfloat16", "torch.float32", "torch.float64"):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    @staticmethod
    def _chunk_size(num_batches: int, in_features: int, num_classes: int, method: str) -> int:
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // in_features))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype: Any,
                device: Any = None) -> LinearCrossEntropyOptions:
        """The options resolved for one call: ``"auto"`` picks, the chunk size, the
        accumulation dtype (ValueError when ``batch_chunk_size`` and ``chunking_method`` disagree)."""
        from ... import float32

        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        name = str(dtype).replace("torch.", "")
        if acc_policy == "auto" or method == "auto":
            policy, auto_method = _AUTO_DEFAULTS.get(name, _AUTO_FALLBACK)
            acc_policy = policy if acc_policy == "auto" else acc_policy
            method = auto_method if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            low = self.acc_policy == "auto" and name in ("float16", "bfloat16")
            acc_dtype = float32 if low else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)


class LinearCrossEntropyLoss(_WeightedLoss):
    """``linear_cross_entropy`` with its own ``Linear`` head (``self.linear``, weight
    (num_classes * prod(out_features), in_features)).

    >>> import retrograd as rg
    >>> loss = rg.nn.LinearCrossEntropyLoss(2, 3)
    >>> loss(rg.ones(4, 2), rg.tensor([0, 1, 2, 0])).shape
    torch.Size([])
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (),
                 bias: bool = False, device: Any = None, dtype: Any = None, reduction: str = "mean",
                 weight: Tensor | None = None, ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        bias = None if self.linear.bias is None else self.linear.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
