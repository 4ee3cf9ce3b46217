"""``Chi2(df)``."""
from __future__ import annotations

from typing import Any

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    >>> import retrograd as torch
    >>> from retrograd.distributions import Chi2
    >>> Chi2(torch.tensor(4.0)).mean
    tensor(4.)
    """

    arg_constraints = {"df": constraints.positive}  # type: ignore[dict-item]

    def __init__(self, df: Any, validate_args: Any = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]

    @property
    def df(self) -> Any:
        return self.concentration * 2
