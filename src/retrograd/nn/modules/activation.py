"""Activation modules (thin wrappers of ``nn.functional``), with PyTorch's arguments and ``repr``."""

from __future__ import annotations

import warnings
from typing import Any

from ... import factories
from ...tensor import Tensor
from .. import functional as F
from .. import init as _init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d",
    "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
]


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


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


class _DimModule(Module):
    """A module that works along one ``dim`` (``None``: PyTorch's legacy implicit choice)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """Softmax along ``dim`` (``None``: PyTorch's legacy implicit choice).

    >>> import retrograd as rg
    >>> rg.nn.Softmax(dim=0)(rg.zeros(2)).tolist()
    [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_DimModule):
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> round(rg.nn.LogSoftmax(dim=0)(rg.zeros(2))[0].item(), 4)
    -0.6931
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``.

    >>> import retrograd as rg
    >>> rg.nn.Threshold(0.1, 20)(rg.tensor([0.0, 1.0])).tolist()
    [20.0, 1.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class RReLU(Module):
    """Leaky ReLU with a random slope from U(lower, upper) in training (their mean in eval).

    >>> import retrograd as rg
    >>> rg.nn.RReLU(0.1, 0.3).eval()(rg.tensor([-1.0, 2.0])).tolist()
    [-0.20000000298023224, 2.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``.

    >>> import retrograd as rg
    >>> rg.nn.Hardtanh(-2, 2)(rg.tensor([-3.0, 1.0])).tolist()
    [-2.0, 1.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    >>> import retrograd as rg
    >>> rg.nn.ReLU6()(rg.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _InplaceActivation(Module):
    """An activation whose only argument is ``inplace``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6`` (no ``inplace`` in its ``repr``, as in PyTorch).

    >>> import retrograd as rg
    >>> rg.nn.Hardsigmoid()(rg.tensor([0.0])).tolist()
    [0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6`` (no ``inplace`` in its ``repr``, as in PyTorch).

    >>> import retrograd as rg
    >>> rg.nn.Hardswish()(rg.tensor([3.0])).tolist()
    [3.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``.

    >>> import retrograd as rg
    >>> rg.nn.SiLU()(rg.tensor([0.0])).tolist()
    [0.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``.

    >>> import retrograd as rg
    >>> rg.nn.Mish()(rg.tensor([0.0])).tolist()
    [0.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.mish(input, inplace=self.inplace)


class SELU(_InplaceActivation):
    """``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import retrograd as rg
    >>> rg.nn.SELU()(rg.tensor([0.0])).tolist()
    [0.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.selu(input, self.inplace)


class ELU(Module):
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``.

    >>> import retrograd as rg
    >>> rg.nn.ELU(alpha=2.0)
    ELU(alpha=2.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import retrograd as rg
    >>> rg.nn.CELU()(rg.tensor([1.0])).tolist()
    [1.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second.

    >>> import retrograd as rg
    >>> rg.nn.GLU()(rg.zeros(2, 4)).shape
    torch.Size([2, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit (``approximate='tanh'`` for the tanh form).

    >>> import retrograd as rg
    >>> rg.nn.GELU(approximate='tanh')
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0.

    >>> import retrograd as rg
    >>> rg.nn.Hardshrink()(rg.tensor([0.2, -1.0])).tolist()
    [0.0, -1.0]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    >>> import retrograd as rg
    >>> rg.nn.Softshrink()(rg.tensor([0.2, -1.0])).tolist()
    [0.0, -0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """``x`` for positive ``x``, else ``negative_slope * x``.

    >>> import retrograd as rg
    >>> rg.nn.LeakyReLU(0.25)(rg.tensor([-1.0, 2.0])).tolist()
    [-0.25, 2.0]
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably.

    >>> import retrograd as rg
    >>> round(rg.nn.LogSigmoid()(rg.tensor([0.0])).item(), 4)
    -0.6931
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).

    >>> import retrograd as rg
    >>> rg.nn.Softplus(beta=2)
    Softplus(beta=2, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learnt slope: one for all channels, or one per channel (dim 1).

    >>> import retrograd as rg
    >>> m = rg.nn.PReLU(3)
    >>> m, m.weight.tolist()
    (PReLU(num_parameters=3), [0.25, 0.25, 0.25])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(factories.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)``.

    >>> import retrograd as rg
    >>> rg.nn.Softsign()(rg.tensor([1.0])).tolist()
    [0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    >>> import retrograd as rg
    >>> rg.nn.Tanhshrink()(rg.tensor([0.0])).tolist()
    [0.0]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanhshrink(input)


class Softmin(_DimModule):
    """``softmax(-x)`` along ``dim``.

    >>> import retrograd as rg
    >>> rg.nn.Softmin(dim=0)(rg.zeros(2)).tolist()
    [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.Softmax2d()(rg.zeros(2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
