"""``ExponentialFamily``: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``."""
from __future__ import annotations

from typing import Any

import retrograd as rg

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of exponential-family distributions: subclasses give ``_natural_params``, ``_log_normalizer``
    and ``_mean_carrier_measure``; entropy and same-family KL then follow from Bregman divergences.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Normal
    >>> isinstance(Normal(0.0, 1.0), ExponentialFamily)
    True
    """

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Any:
        result: Any = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = rg.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
