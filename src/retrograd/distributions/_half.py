"""``HalfNormal`` and ``HalfCauchy``: the absolute value of a symmetric distribution at 0."""
from __future__ import annotations

import math
from typing import Any

import retrograd as rg

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class HalfOfSymmetric(TransformedDistribution):
    """``|X|`` for ``X ~ symmetric(0, scale)`` (the class's ``symmetric``: Normal, Cauchy): the
    density doubled on [0, inf), the cdf and icdf folded, the entropy less log 2.

    >>> import retrograd as torch
    >>> from retrograd.distributions import HalfNormal
    >>> HalfNormal(torch.tensor(1.0)).cdf(torch.tensor(0.0))
    tensor(0.)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_dist: Any
    symmetric: Any  # the distribution folded, made as symmetric(0, scale)

    def __init__(self, scale: Any, validate_args: Any = None) -> None:
        base_dist = self.symmetric(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = self._get_checked_instance(HalfOfSymmetric, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return rg.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = rg.as_tensor(value, dtype=self.base_dist.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return rg.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)
