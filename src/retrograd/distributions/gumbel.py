"""``Gumbel(loc, scale)``."""
from __future__ import annotations

import math
from numbers import Number
from typing import Any

import retrograd as rg

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _finfo, broadcast_all

__all__ = ["Gumbel"]

_EULER = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """Gumbel distribution: ``loc - scale * log(-log(U))`` for uniform ``U``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Gumbel
    >>> Gumbel(0.0, 1.0).log_prob(torch.tensor(0.0))
    tensor(-1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = _finfo(self.loc)
        tiny, top = float(finfo.tiny), 1 - float(finfo.eps)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(tiny, top, validate_args=validate_args)
        else:
            base_dist = Uniform(rg.full_like(self.loc, tiny), rg.full_like(self.loc, top), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-rg.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def entropy(self) -> Any:
        return self.scale.log() + (1 + _EULER)
