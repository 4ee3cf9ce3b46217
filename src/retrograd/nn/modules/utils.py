"""Helpers shared by the layers: ``_single``/``_pair``/``_triple``/``_quadruple`` turn an
int (or an iterable) into a tuple of ``n`` ints, as PyTorch's ``torch.nn.modules.utils`` do; the
``weight``/``bias`` parameters are made and initialised here once for the linear, convolution
and normalisation layers."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Any

from ... import factories
from .. import init
from ..parameter import Parameter

__all__ = [
    "_ntuple", "_pair", "_quadruple", "_reset_affine", "_reset_kaiming_uniform", "_reverse_repeat_tuple", "_single",
    "_triple", "_weight_and_bias",
]

_Shape = int | tuple[int, ...] | None


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


def _weight_and_bias(module: Any, weight_shape: _Shape, bias_shape: _Shape, device: Any, dtype: Any) -> None:
    """Register ``module.weight`` and ``module.bias`` (in that order: the ``state_dict`` order) as
    uninitialised parameters of these shapes; ``None`` registers the name as absent."""
    for name, shape in (("weight", weight_shape), ("bias", bias_shape)):
        if shape is None:
            module.register_parameter(name, None)
        else:
            setattr(module, name, Parameter(factories.empty(shape, device=device, dtype=dtype)))


def _reset_kaiming_uniform(weight: Any, bias: Any) -> None:
    """PyTorch's default start of ``Linear`` and the convolutions: ``kaiming_uniform_(a=sqrt(5))``
    for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias (if any)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def _reset_affine(weight: Any, bias: Any) -> None:
    """The identity start of a normalisation's affine map: weight 1, bias (if any) 0."""
    init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
