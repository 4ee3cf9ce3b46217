"""``dist.GradBucket``: what a ``DistributedDataParallel`` communication hook is given."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor


class GradBucket:
    """One bucket of gradients, flattened into one tensor, handed to a communication hook.

    ``buffer()`` is that flat tensor (the hook may reduce it in place), ``gradients()`` the
    per-parameter views of it, ``parameters()`` the parameters in the same order, ``index()`` the
    bucket's position (0 is reduced first) and ``is_last()`` whether it is the last one.

    >>> import numpy as np, retrograd as rg
    >>> from retrograd.distributed import GradBucket
    >>> w = rg.nn.Parameter(rg.ones(2))
    >>> b = GradBucket(0, 1, np.array([1.0, 2.0]), [w], np.array([0, 2]))
    >>> b.buffer(), b.is_last()
    (tensor([1., 2.], dtype=torch.float64), True)
    """

    def __init__(self, index: int, count: int, buffer: np.ndarray, params: list[Tensor], offsets: np.ndarray) -> None:
        self._index = index
        self._count = count
        self._buffer = Tensor._make(buffer)  # (shares the bucket's memory)
        self._params = params
        self._offsets = offsets

    def index(self) -> int:
        return self._index

    def is_last(self) -> bool:
        return self._index == self._count - 1

    def buffer(self) -> Tensor:
        return self._buffer

    def set_buffer(self, buffer: Tensor) -> None:
        """Replace the bucket's values with ``buffer``'s (same number of elements)."""
        if buffer.numel() != self._buffer.numel():
            raise RuntimeError(f"GradBucket.set_buffer: the bucket holds {self._buffer.numel()} elements, "
                               f"got {buffer.numel()}")
        np.copyto(self._buffer._data, np.asarray(buffer._data).reshape(-1), casting="same_kind")

    def gradients(self) -> list[Tensor]:
        flat = self._buffer._data
        return [Tensor._make(flat[self._offsets[i]:self._offsets[i + 1]].reshape(p._data.shape))
                for i, p in enumerate(self._params)]

    def parameters(self) -> list[Any]:
        return list(self._params)

    def __repr__(self) -> str:
        return f"GradBucket(index={self._index}, numel={self._buffer.numel()})"
