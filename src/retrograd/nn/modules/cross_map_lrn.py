"""``CrossMapLRN2d``: local response normalisation across channels, PyTorch's legacy (Lua torch)
layer. Its values are PyTorch's, including a quirk of PyTorch's running window sum: for
channels beyond ``(size - 1) // 2 + 1`` the square of channel 0 is never subtracted again, so
it stays in every later channel's window. Its gradient is the exact derivative of those values
(PyTorch's hand-written backward is not: it fails gradcheck; see docs/differences.md), written
in retrograd's ops so that double backward works."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd.function import Function, FunctionMeta
from ...tensor import Tensor
from .normalization import _ResponseNormalization

__all__ = ["CrossMapLRN2d"]


def _window_matrix(channels: int, size: int) -> np.ndarray:
    """(C, C) 0/1 matrix: row c sums the squares PyTorch's recurrence puts in channel c's scale."""
    pre_pad = int((size - 1) / 2 + 1)
    rows = np.zeros((channels, channels))
    rows[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        rows[c] = rows[c - 1]
        if c < channels - pre_pad + 1:
            rows[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            rows[c, c - pre_pad] -= 1
    return rows


def _mix(t: Tensor, matrix: Tensor) -> Tensor:
    """Apply ``matrix`` over the channel dim of (N, C, H, W) ``t``."""
    return (t.permute(0, 2, 3, 1) @ matrix.transpose(0, 1)).permute(0, 3, 1, 2)  # type: ignore[no-any-return]


class _CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        matrix = Tensor._make(_window_matrix(input.shape[1], size).astype(input._data.dtype))
        scale = _mix(input * input, matrix) * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.save_for_backward(input)
        ctx.constants = (matrix, size, alpha, beta, k)
        return output

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        (x,) = ctx.saved_tensors
        matrix, size, alpha, beta, k = ctx.constants
        scale = _mix(x * x, matrix) * (alpha / size) + k
        factor = scale.pow(-beta)
        # d out_c / d x_j: factor_j on the diagonal, and through every scale_c that sums x_j**2
        ratio = grad * x * factor / scale
        back = _mix(ratio, matrix.transpose(0, 1))
        return grad * factor - x * back * (2 * beta * alpha / size), None, None, None, None


# PyTorch's grad_fn name is the Function's class name + "Backward": a subclass of that name
_function: Any = FunctionMeta("CrossMapLRN2d", (_CrossMapLRN2d,), {})


class CrossMapLRN2d(_ResponseNormalization):
    """Local response normalisation across channels of (N, C, H, W) input:
    ``x_c / (k + alpha / size * sum of x_j**2 over the window of c) ** beta``.

    >>> import retrograd as rg
    >>> rg.nn.CrossMapLRN2d(1, alpha=1.0, beta=1.0, k=1.0)(rg.full((1, 1, 1, 1), 2.0, dtype=rg.float64)).tolist()
    [[[[0.4]]]]
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)  # (PyTorch's default ``k`` here is the int 1)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _function.apply(input, self.size, self.alpha, self.beta, self.k)  # type: ignore[no-any-return]
