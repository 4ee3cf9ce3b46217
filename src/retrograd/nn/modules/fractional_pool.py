"""``FractionalMaxPool2d`` / ``FractionalMaxPool3d``: ``F.fractional_max_pool{2,3}d`` as layers, with
PyTorch's constructor checks; ``_random_samples`` is kept as a buffer (None draws new windows on
every call)."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _pair, _triple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        expand = _pair if self._nd == 2 else _triple
        if self._nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = expand(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = expand(output_size) if output_size is not None else None
        self.output_ratio = expand(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) input to ``output_size`` or
    ``output_ratio`` of the input; windows start at pseudo-random offsets drawn with ``rand``
    (PyTorch's numbers after the same ``manual_seed``) unless ``_random_samples`` fixes them.

    >>> import retrograd as rg
    >>> pool = rg.nn.FractionalMaxPool2d(2, output_size=2, _random_samples=rg.zeros(1, 1, 2))
    >>> pool(rg.arange(16.0).reshape(1, 1, 4, 4)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input.

    >>> import retrograd as rg
    >>> pool = rg.nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=rg.zeros(1, 1, 3))
    >>> pool(rg.arange(64.0).reshape(1, 4, 4, 4)).shape
    torch.Size([1, 2, 2, 2])
    """

    _nd = 3
