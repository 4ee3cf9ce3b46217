"""Padding layers (``F.pad`` with a fixed ``padding`` and mode): constant/zero, reflection,
replication and circular, in one, two and three dimensions. ``padding`` is an int (every side)
or a tuple (left, right[, top, bottom[, front, back]])."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]

_sextuple = _ntuple(6, "_sextuple")
_PADDING_TUPLE = {1: _pair, 2: _quadruple, 3: _sextuple}  # (left, right) for each padded dim


class _PadNd(Module):
    """``F.pad(input, self.padding, self._mode)``; ``repr`` shows the padding. A subclass sets ``_nd``,
    the number of padded dims (an int ``padding`` pads both sides of each)."""

    _mode: str
    _nd: int
    padding: tuple[int, ...]

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _PADDING_TUPLE[self._nd](padding)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        n = self._nd
        if input.dim() != n + 1 and input.dim() != n + 2:
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Wrap-around padding of the last dim.

    >>> import retrograd as rg
    >>> rg.nn.CircularPad1d(1)(rg.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Wrap-around padding of the last two dims.

    >>> import retrograd as rg
    >>> rg.nn.CircularPad2d(1)(rg.ones(1, 2, 2)).shape
    torch.Size([1, 4, 4])
    """

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Wrap-around padding of the last three dims.

    >>> import retrograd as rg
    >>> rg.nn.CircularPad3d(1)(rg.ones(1, 2, 2, 2)).shape
    torch.Size([1, 4, 4, 4])
    """

    _nd = 3


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``.

    >>> import retrograd as rg
    >>> rg.nn.ConstantPad1d((1, 2), 3.5)(rg.zeros(1, 1)).tolist()
    [[3.5, 0.0, 3.5, 3.5]]
    """

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``.

    >>> import retrograd as rg
    >>> rg.nn.ConstantPad2d(1, 0.5)
    ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)
    """

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``.

    >>> import retrograd as rg
    >>> rg.nn.ConstantPad3d(1, 0.0)(rg.zeros(1, 1, 1, 1)).shape
    torch.Size([1, 3, 3, 3])
    """

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    """``ConstantPadNd`` with ``value`` 0, shown by its padding alone (listed before the ``ConstantPadNd``
    base, so ``ZeroPad2d`` is still a ``ConstantPad2d`` as in PyTorch)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pads the last dim with zeros.

    >>> import retrograd as rg
    >>> rg.nn.ZeroPad1d(1)
    ZeroPad1d((1, 1))
    """


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pads the last two dims with zeros.

    >>> import retrograd as rg
    >>> rg.nn.ZeroPad2d((1, 0, 0, 1))(rg.ones(1, 1, 1)).tolist()
    [[[0.0, 1.0], [0.0, 0.0]]]
    """


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pads the last three dims with zeros.

    >>> import retrograd as rg
    >>> rg.nn.ZeroPad3d(1)(rg.ones(1, 1, 1, 1)).shape
    torch.Size([1, 3, 3, 3])
    """


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Mirror padding of the last dim (the edge is not repeated).

    >>> import retrograd as rg
    >>> rg.nn.ReflectionPad1d(2)(rg.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Mirror padding of the last two dims.

    >>> import retrograd as rg
    >>> rg.nn.ReflectionPad2d(1)(rg.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 4, 4])
    """

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirror padding of the last three dims.

    >>> import retrograd as rg
    >>> rg.nn.ReflectionPad3d(1)(rg.ones(1, 1, 2, 2, 2)).shape
    torch.Size([1, 1, 4, 4, 4])
    """

    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Edge-repeating padding of the last dim.

    >>> import retrograd as rg
    >>> rg.nn.ReplicationPad1d((1, 2))(rg.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """

    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Edge-repeating padding of the last two dims; ``padding`` is (left, right, top, bottom).

    >>> import retrograd as rg
    >>> rg.nn.ReplicationPad2d((1, 0, 0, 1))(rg.tensor([[[1.0, 2.0]]])).tolist()
    [[[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]]]
    """

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Edge-repeating padding of the last three dims.

    >>> import retrograd as rg
    >>> rg.nn.ReplicationPad3d(1)(rg.ones(1, 1, 2, 2, 2)).shape
    torch.Size([1, 1, 4, 4, 4])
    """

    _nd = 3
