"""``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from typing import Any

from ...ops.reduce import normalize_dim
from ...tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` into one (by default all but the batch dim).

    >>> import retrograd as rg
    >>> rg.nn.Flatten()(rg.zeros(2, 3, 4)).shape
    torch.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:  # noqa: A002
    """``input.unflatten(dim, sizes)``: split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    ndim = input.dim()
    d = normalize_dim(dim, ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[d]
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in sizes:
        if known == 0 or size % known:
            raise RuntimeError(f"shape '{sizes}' is invalid for input of size {size}")
        sizes[sizes.index(-1)] = size // known
    elif known != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({size}) in the input tensor"
        )
    shape = tuple(input.shape)
    return input.reshape(shape[:d] + tuple(sizes) + shape[d + 1:])


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``.

    >>> import retrograd as rg
    >>> rg.nn.Unflatten(1, (2, 3))(rg.zeros(4, 6)).shape
    torch.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter (named tensors are not supported)")
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(value: Any) -> None:
        if isinstance(value, (tuple, list)):
            for idx, elem in enumerate(value):
                if not isinstance(elem, int):
                    raise TypeError(
                        f"unflattened_size must be tuple of ints, but found element of type {type(elem).__name__} "
                        f"at pos {idx}"
                    )
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(value).__name__}")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        method = getattr(input, "unflatten", None)
        if method is not None:
            return method(self.dim, self.unflattened_size)  # type: ignore[no-any-return]
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
