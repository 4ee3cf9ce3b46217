"""``NegativeBinomial(total_count, probs=None, logits=None)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .distribution import BinaryProbsOrLogits, Distribution
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsOrLogits, Distribution):
    """Number of successes before ``total_count`` failures, each trial succeeding with ``probs``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import NegativeBinomial
    >>> NegativeBinomial(torch.tensor(3.0), torch.tensor(0.5)).mean
    tensor(3.)
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return self._expanded(NegativeBinomial, batch_shape, _instance, expand=("total_count", "probs", "logits"))

    @property
    def mean(self) -> Any:
        return self.total_count * rg.exp(self.logits)

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / rg.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Any:
        # a Poisson whose rate is Gamma distributed
        return Gamma(concentration=self.total_count, rate=rg.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Any:
        with rg.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return rg.poisson(rate)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = rg.nn.functional.logsigmoid
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (-rg.lgamma(self.total_count + value) + rg.lgamma(1.0 + value)
                             + rg.lgamma(self.total_count))
        # zero successes out of zero trials has probability one
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
