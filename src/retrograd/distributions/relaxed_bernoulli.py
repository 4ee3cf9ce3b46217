"""``LogitRelaxedBernoulli`` and ``RelaxedBernoulli`` (binary Concrete)."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from . import constraints
from .distribution import BinaryProbsOrLogits, Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, forwarded

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbsOrLogits, Distribution):
    """Logit of a relaxed Bernoulli sample with ``temperature``.

    >>> import retrograd as torch
    >>> from retrograd.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
    >>> LogitRelaxedBernoulli(torch.tensor(0.5), torch.tensor(0.5)).log_prob(torch.tensor(0.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        self.temperature = temperature
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        return self._expanded(LogitRelaxedBernoulli, batch_shape, _instance, expand=("probs", "logits"), share=("temperature",))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        with rg.no_grad():
            uniforms = clamp_probs(rg.rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Relaxed Bernoulli on (0, 1): ``sigmoid`` of a ``LogitRelaxedBernoulli`` sample.

    >>> import retrograd as torch
    >>> from retrograd.distributions import RelaxedBernoulli
    >>> RelaxedBernoulli(torch.tensor(0.5), torch.tensor([0.3])).batch_shape
    torch.Size([1])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    base_dist: Any

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    temperature = forwarded("base_dist", "temperature")
    logits = forwarded("base_dist", "logits")
    probs = forwarded("base_dist", "probs")
