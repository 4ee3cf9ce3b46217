"""``ExpRelaxedCategorical`` and ``RelaxedOneHotCategorical`` (Gumbel-softmax / Concrete)."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs, forwarded

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """Log of a Concrete (relaxed one-hot) sample with ``temperature``.

    >>> import retrograd as torch
    >>> from retrograd.distributions.relaxed_categorical import ExpRelaxedCategorical
    >>> ExpRelaxedCategorical(torch.tensor(0.5), torch.ones(3)).event_shape
    torch.Size([3])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = rg.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    param_shape = forwarded("_categorical", "param_shape")
    logits = forwarded("_categorical", "logits")
    probs = forwarded("_categorical", "probs")

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        with rg.no_grad():
            uniforms = clamp_probs(rg.rand(shape, dtype=self.logits.dtype))
            gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Any) -> Any:
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = rg.lgamma(rg.full_like(self.temperature, float(K))) - self.temperature.log().mul(-(K - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Concrete distribution on the simplex: a differentiable relaxation of ``OneHotCategorical``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import RelaxedOneHotCategorical
    >>> RelaxedOneHotCategorical(torch.tensor(0.5), torch.ones(3)).rsample().sum().round()
    tensor(1.)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True
    base_dist: Any

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    temperature = forwarded("base_dist", "temperature")
    logits = forwarded("base_dist", "logits")
    probs = forwarded("base_dist", "probs")
