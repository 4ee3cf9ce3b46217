"""``Identity`` and ``Linear``."""

from __future__ import annotations

import math
from typing import Any

from ... import factories
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear"]


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    >>> import retrograd as rg
    >>> x = rg.ones(2)
    >>> rg.nn.Identity(54, unused='x')(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


def _linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``; used until ``functional.linear`` exists."""
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


class Linear(Module):
    """``y = x @ weight.T + bias`` with PyTorch's default initialisation
    (``kaiming_uniform_(a=sqrt(5))`` for the weight, U(-1/sqrt(in), 1/sqrt(in)) for the bias).

    >>> import retrograd as rg
    >>> lin = rg.nn.Linear(3, 2)
    >>> lin.weight.shape, lin.bias.shape, lin(rg.zeros(5, 3)).shape
    (torch.Size([2, 3]), torch.Size([2]), torch.Size([5, 2]))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(factories.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        linear = getattr(F, "linear", _linear)
        return linear(input, self.weight, self.bias)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
