"""``StudentT(df, loc=0.0, scale=1.0)``."""
from __future__ import annotations

import math
from typing import Any

import retrograd as rg

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import StudentT
    >>> StudentT(torch.tensor(3.0)).variance
    tensor(3.)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: Any = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        return self._expanded(StudentT, batch_shape, _instance, expand=("df", "loc", "scale", "_chi2"))

    @property
    def mean(self) -> Any:
        return rg.where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        big = self.df > 2
        safe_df = rg.where(big, self.df, 3.0)  # keeps the unused branch finite for the gradient
        m = rg.where(big, self.scale.pow(2) * safe_df / (safe_df - 2), self.df)
        m = rg.where((self.df <= 2) & (self.df > 1), float("inf"), m)
        return rg.where(self.df <= 1, float("nan"), m)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        Y = X * rg.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + rg.lgamma(0.5 * self.df) - rg.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * rg.log1p(y**2.0 / self.df) - Z

    def entropy(self) -> Any:
        lbeta = rg.lgamma(0.5 * self.df) + math.lgamma(0.5) - rg.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (rg.digamma(0.5 * (self.df + 1)) - rg.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
