"""``AdaptiveLogSoftmaxWithLoss`` (Grave et al., "Efficient softmax approximation for GPUs"): a
head over the frequent classes plus one entry per cluster of rarer classes, each cluster scored
by its own two-layer projection. Built from the ops PyTorch's layer uses (gather, log_softmax, an
indexed copy into the output...), so values, gradients and the outputs' grad_fn names follow it."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` gives ``(output, loss)``, the target log
    probabilities and their negated mean; ``log_prob(input)`` the full (N, n_classes) log
    distribution and ``predict(input)`` its argmax.

    >>> import retrograd as rg
    >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4])
    >>> out = asm(rg.ones(3, 8), rg.tensor([0, 5, 9]))
    >>> out.output.shape, asm.log_prob(rg.ones(3, 8)).shape
    (torch.Size([3]), torch.Size([3, 10]))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, width, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every cluster's projections as on construction."""
        self.head.reset_parameters()
        tail: Any = self.tail
        for projection in tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)  # noqa: A001
        target = target_ if batched else target_.unsqueeze(0)
        rows_seen = 0
        output = input.new_zeros(target.size(0))
        head_index: Any = target.new_empty(target.size(0))  # the head column each row reads
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                head_index[rows] = target[mask]
            else:
                cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
                picked = cluster.gather(1, (target[mask] - low).unsqueeze(1))
                output[rows] = picked.squeeze(1)
            rows_seen += rows.numel()
        if rows_seen != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        out = input.new_empty((head_output.size(0), self.n_classes))
        head = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs[:-1], self.cutoffs[1:], strict=True)):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log probabilities of all ``n_classes`` classes, (N, n_classes).

        >>> import retrograd as rg
        >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(16, 6, cutoffs=[2, 4])
        >>> round(asm.log_prob(rg.ones(1, 16)).exp().sum().item(), 6)
        1.0
        """
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row, ``log_prob(input).argmax(1)`` (the head alone
        decides where its best entry is a shortlist class).

        >>> import retrograd as rg
        >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
        >>> asm.predict(rg.ones(2, 4)).shape
        torch.Size([2])
        """
        head_output: Any = self.head(input)
        best = head_output.argmax(dim=1)
        outside = best >= self.shortlist_size
        if not outside.any():
            return best  # type: ignore[no-any-return]
        if outside.all():
            return self._full_log_prob(input, head_output).argmax(dim=1)  # type: ignore[no-any-return]
        best[outside] = self._full_log_prob(input[outside], head_output[outside]).argmax(dim=1)
        return best  # type: ignore[no-any-return]
