"""Activation modules: ``ReLU``, ``Tanh``, ``Sigmoid``, ``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Tanh"]


class ReLU(Module):
    """max(x, 0), optionally in place.

    >>> import retrograd as rg
    >>> rg.nn.ReLU()(rg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import retrograd as rg
    >>> rg.nn.Tanh()(rg.zeros(1)).tolist()
    [0.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.tanh()


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    >>> import retrograd as rg
    >>> rg.nn.Sigmoid()(rg.zeros(1)).tolist()
    [0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.sigmoid()


class Softmax(Module):
    """Softmax along ``dim`` (``None``: PyTorch's legacy implicit choice).

    >>> import retrograd as rg
    >>> rg.nn.Softmax(dim=0)(rg.zeros(2)).tolist()
    [0.5, 0.5]
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> round(rg.nn.LogSoftmax(dim=0)(rg.zeros(2))[0].item(), 4)
    -0.6931
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
