"""``Binomial(total_count=1, probs=None, logits=None)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .distribution import BinaryProbsOrLogits, Distribution

__all__ = ["Binomial"]


def _clamp_by_zero(x: Any) -> Any:
    # max(x, 0) whose gradient at 0 is 1/2, as PyTorch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbsOrLogits, Distribution):
    """Number of successes in ``total_count`` Bernoulli trials of probability ``probs``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Binomial
    >>> Binomial(4, torch.tensor(0.5)).mean
    tensor(2.)
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: Any = None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        return self._expanded(Binomial, batch_shape, _instance, expand=("total_count", "probs", "logits"))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Any:
        return self.total_count * self.probs

    @property
    def mode(self) -> Any:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with rg.no_grad():
            return rg.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = rg.lgamma(self.total_count + 1)
        log_factorial_k = rg.lgamma(value + 1)
        log_factorial_nmk = rg.lgamma(self.total_count - value + 1)
        # k*logit - n*max(logit, 0) - n*log1p(exp(-|logit|)) is k*log(p) + (n-k)*log(1-p), stably
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * rg.log1p(rg.exp(-rg.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Any:
        total_count = int(self.total_count.max())
        if not float(self.total_count.min()) == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(rg.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Any:
        total_count = int(self.total_count.max())
        if not float(self.total_count.min()) == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = rg.arange(1 + total_count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
