"""``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module
from .utils import _reset_kaiming_uniform, _weight_and_bias

__all__ = ["Bilinear", "Identity", "Linear"]


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
        _weight_and_bias(self, (out_features, in_features), out_features if bias else None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_kaiming_uniform(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b``: ``weight`` is (out_features, in1_features, in2_features), initialised
    (with the bias) from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    >>> import retrograd as rg
    >>> m = rg.nn.Bilinear(3, 4, 2)
    >>> m, m.weight.shape, m(rg.zeros(5, 3), rg.zeros(5, 4)).shape
    (Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True), torch.Size([2, 3, 4]), torch.Size([5, 2]))
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), out_features if bias else None, device,
                         dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
