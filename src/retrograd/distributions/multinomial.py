"""``Multinomial(total_count=1, probs=None, logits=None)``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all, forwarded

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a categorical distribution.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Multinomial
    >>> Multinomial(4, torch.tensor([1.0, 3.0])).mean
    tensor([1., 3.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: Any = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = rg.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Any:
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    _param = forwarded("_categorical", "_param")
    probs = forwarded("_categorical", "probs")
    logits = forwarded("_categorical", "logits")
    param_shape = forwarded("_categorical", "param_shape")

    def sample(self, sample_shape: Any = ()) -> Any:
        sample_shape = rg.Size(sample_shape)
        with rg.no_grad():
            idx = self._categorical.sample(rg.Size((self.total_count,) + tuple(sample_shape)))
            k = self._categorical._num_events
            counts = rg.nn.functional.one_hot(idx, k).sum(0)
            return counts.to(self.probs.dtype)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = rg.lgamma(value.sum(-1) + 1)
        log_factorial_xs = rg.lgamma(value + 1).sum(-1)
        # 0 * log(0) counts as 0 where a category has probability 0
        logits = rg.where((value == 0) & (logits == float("-inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
