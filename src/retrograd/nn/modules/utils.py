"""Argument helpers shared by the layers: ``_single``/``_pair``/``_triple``/``_quadruple`` turn an
int (or an iterable) into a tuple of ``n`` ints, as PyTorch's ``torch.nn.modules.utils`` do."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Any

__all__ = ["_ntuple", "_pair", "_quadruple", "_reverse_repeat_tuple", "_single", "_triple"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Sequence[int], n: int) -> tuple[int, ...]:
    """Reverse ``t`` and repeat each element ``n`` times: the ``pad`` argument of ``F.pad`` for a
    convolution's symmetric ``padding``."""
    return tuple(x for x in reversed(t) for _ in range(n))
