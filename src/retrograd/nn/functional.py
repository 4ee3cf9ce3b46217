"""``retrograd.nn.functional``: activations, linear maps, dropout, padding, embedding,
normalisation layers, distances, attention and losses, with PyTorch's signatures, defaults and
``grad_fn`` nodes (convolution, pooling, fold and interpolation come from ``_functional_conv``).

Where the recorded graph differs from PyTorch's (the outermost node always matches):

- ``linear`` of a 1-D input without bias ends in ``SqueezeBackward1`` (PyTorch: the in-place
  ``SqueezeBackward4``), as retrograd's ``matmul`` does.
- ``scaled_dot_product_attention``: the batched products are ``bmm`` + ``_unsafe_view`` (PyTorch also
  expands and views the operands); with ``enable_gqa`` PyTorch runs a fused kernel (one node).
- ``embedding``'s double backward with ``scale_grad_by_freq`` keeps the 1/frequency factor (the exact
  derivative); PyTorch's leaves it out.
- ``native_channel_shuffle`` is differentiable here (PyTorch records ``NotImplemented``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..autograd.grad_mode import STATE, no_grad
from ..ops import elementwise as _E
from ..ops import nn as _nn
from ..ops import shape as _S
from ..ops.inplace import apply_inplace
from ..ops.linalg import matmul as _matmul
from ..ops.op import apply, broadcast_error, prerun, ternary
from ..ops.reduce import normalize_dim
from ..tensor import Size, Tensor

_make = Tensor._make

# -- activations ------------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0).

    >>> import retrograd as rg
    >>> rg.nn.functional.relu(rg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``relu``."""
    return input.relu_()


def _unary(op: Any, input: Tensor, params: tuple[Any, ...], inplace: bool = False,  # noqa: A002
           inplace_op: Any = None) -> Tensor:
    if inplace:
        return apply_inplace(inplace_op or op, (input, *params))
    return apply(op, (input, *params))  # type: ignore[no-any-return]


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > threshold``, else ``value``.

    >>> import retrograd as rg
    >>> rg.nn.functional.threshold(rg.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return _unary(_nn.threshold, input, (threshold, value), inplace, _nn.threshold_)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place ``threshold``."""
    return _unary(_nn.threshold, input, (threshold, value), True, _nn.threshold_)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x, min_val, max_val)`` with zero gradient at and beyond the bounds.

    >>> import retrograd as rg
    >>> rg.nn.functional.hardtanh(rg.tensor([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _unary(_nn.hardtanh, input, (min_val, max_val), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)`` (PyTorch records it as ``hardtanh``).

    >>> import retrograd as rg
    >>> rg.nn.functional.relu6(rg.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``negative_slope * x``.

    >>> import retrograd as rg
    >>> rg.nn.functional.leaky_relu(rg.tensor([-1.0, 2.0]), 0.25).tolist()
    [-0.25, 2.0]
    """
    return _unary(_nn.leaky_relu, input, (negative_slope,), inplace, _nn.leaky_relu_)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.elu(rg.tensor([-1.0]))[0].item(), 4)
    -0.6321
    """
    return _unary(_nn.elu, input, (alpha, 1.0, 1.0), inplace, _nn.elu_)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``elu``."""
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.selu(rg.tensor([1.0]))[0].item(), 4)
    1.0507
    """
    return _unary(_nn.elu, input, (_nn.SELU_ALPHA, _nn.SELU_SCALE, 1.0), inplace, _nn.elu_)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``selu``."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.celu(rg.tensor([-1.0]), 2.0)[0].item(), 4)
    -0.7869
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _unary(_nn.celu, input, (alpha, 1.0, 1.0 / alpha), inplace, _nn.celu_)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``celu``."""
    return celu(input, alpha, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)`` (exact, with erf) or its tanh approximation.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.gelu(rg.tensor([1.0]))[0].item(), 4)
    0.8413
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply(_nn.gelu, (input, approximate))  # type: ignore[no-any-return]


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)``.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.silu(rg.tensor([1.0]))[0].item(), 4)
    0.7311
    """
    return _unary(_nn.silu, input, (), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.mish(rg.tensor([1.0]))[0].item(), 4)
    0.8651
    """
    return _unary(_nn.mish, input, (), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``; stable for any x.

    >>> import retrograd as rg
    >>> rg.nn.functional.softplus(rg.tensor([-1e4, 1e4])).tolist()
    [0.0, 10000.0]
    """
    return apply(_nn.softplus, (input, beta, threshold))  # type: ignore[no-any-return]


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)``.

    >>> import retrograd as rg
    >>> rg.nn.functional.softsign(rg.tensor([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """
    return input / (input.abs() + 1)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``.

    >>> import retrograd as rg
    >>> rg.nn.functional.hardsigmoid(rg.tensor([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return _unary(_nn.hardsigmoid, input, (), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6``.

    >>> import retrograd as rg
    >>> rg.nn.functional.hardswish(rg.tensor([-4.0, 3.0])).tolist()
    [-0.0, 3.0]
    """
    return _unary(_nn.hardswish, input, (), inplace)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``1 / (1 + exp(-x))``.

    >>> import retrograd as rg
    >>> rg.nn.functional.sigmoid(rg.tensor([0.0])).tolist()
    [0.5]
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent.

    >>> import retrograd as rg
    >>> rg.nn.functional.tanh(rg.tensor([0.0])).tolist()
    [0.0]
    """
    return input.tanh()


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, stable for any x.

    >>> import retrograd as rg
    >>> rg.nn.functional.logsigmoid(rg.tensor([-1e4, 1e4])).abs().tolist()
    [10000.0, 0.0]
    """
    return apply(_nn.log_sigmoid, (input,))  # type: ignore[no-any-return]


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves of ``dim``.

    >>> import retrograd as rg
    >>> rg.nn.functional.glu(rg.tensor([2.0, 0.0])).tolist()
    [1.0]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return apply(_nn.glu, (input, normalize_dim(dim, input.dim())))  # type: ignore[no-any-return]


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0.

    >>> import retrograd as rg
    >>> rg.nn.functional.hardshrink(rg.tensor([-1.0, 0.25, 0.75])).tolist()
    [-1.0, 0.0, 0.75]
    """
    return apply(_nn.hardshrink, (input, lambd))  # type: ignore[no-any-return]


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` shrunk towards 0 by ``lambd`` (0 inside [-lambd, lambd]).

    >>> import retrograd as rg
    >>> rg.nn.functional.softshrink(rg.tensor([-1.0, 0.2, 1.5])).tolist()
    [-0.5, 0.0, 1.0]
    """
    return apply(_nn.softshrink, (input, lambd))  # type: ignore[no-any-return]


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)``.

    >>> import retrograd as rg
    >>> rg.nn.functional.tanhshrink(rg.tensor([0.0])).tolist()
    [0.0]
    """
    return input - input.tanh()


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``weight * x``, with one learnt slope per channel (dim 1) or one in all.

    >>> import retrograd as rg
    >>> rg.nn.functional.prelu(rg.tensor([[-1.0, 2.0]]), rg.tensor([0.25])).tolist()
    [[-0.25, 2.0]]
    """
    return _nn.prelu(input, weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] per element when training (retrograd's
    generator), the mean slope otherwise.

    >>> import retrograd as rg
    >>> rg.nn.functional.rrelu(rg.tensor([-1.0, 2.0]), 0.125, 0.375).tolist()
    [-0.25, 2.0]
    """
    if training:
        from ..random import default_generator

        # PyTorch's CPU kernel draws U(lower, upper) as a double for each element <= 0, in order
        data = input._data
        negative = data <= 0
        # (its bounds first rounded to the input's math type: float for float32/float16)
        opmath = np.float64 if data.dtype == np.float64 else np.float32
        low, high = float(opmath(lower)), float(opmath(upper))
        # (a plain multiply-add: this kernel is not built with FMA, unlike uniform_'s)
        draws = default_generator.stream.unit_double(int(negative.sum())) * (high - low) + low
        noise: Any = np.ones(data.shape, data.dtype)  # the slope is stored in the input's dtype
        noise[negative] = draws
    else:
        noise = (lower + upper) / 2
    return _unary(_nn.rrelu_with_noise, input, (noise,), inplace, _nn.rrelu_with_noise_)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:  # noqa: A002
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Samples from the Gumbel-softmax distribution (retrograd's generator); ``hard`` returns one-hot
    samples with the soft sample's gradient (straight-through).

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.nn.functional.gumbel_softmax(rg.zeros(2, 3), hard=True).sum(-1).tolist()
    [1.0, 1.0]
    """
    from ..factories import empty_like

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    # PyTorch's recipe: -empty_like(logits).exponential_().log()
    noise = -empty_like(logits).exponential_()._data.astype(logits._data.dtype)
    noise = -np.log(-noise)
    gumbels = (logits + _make(noise)) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _make(np.zeros(tuple(logits.shape), logits._data.dtype)).scatter(dim, index, value=1.0)
    return y_hard - y_soft.detach() + y_soft

# -- softmax family ---------------------------------------------------------------------------


def _softmax_dim(name: str, input: Tensor, dim: int | None, stacklevel: int) -> int:  # noqa: A002
    if dim is None:  # PyTorch's legacy implicit choice
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                      "as an argument.", UserWarning, stacklevel=stacklevel)
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return normalize_dim(dim, input.dim())


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> rg.nn.functional.softmax(rg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    d = _softmax_dim("softmax", input, dim, _stacklevel)
    x = input if dtype is None else input.to(dtype)
    return apply(_nn.softmax, (x, d))  # type: ignore[no-any-return]


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """``softmax(-x)`` along ``dim``.

    >>> import retrograd as rg
    >>> rg.nn.functional.softmin(rg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    d = _softmax_dim("softmin", input, dim, _stacklevel)
    x = -input if dtype is None else (-input).to(dtype)
    return apply(_nn.softmax, (x, d))  # type: ignore[no-any-return]


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """log(softmax(x)) along ``dim``, computed stably.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.log_softmax(rg.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    d = _softmax_dim("log_softmax", input, dim, _stacklevel)
    x = input if dtype is None else input.to(dtype)
    return apply(_nn.log_softmax, (x, d))  # type: ignore[no-any-return]

# -- linear maps ------------------------------------------------------------------------------


def _check_bias_expands(bias: Tensor, rows: int, cols: int) -> None:
    target = (rows, cols)
    shape = tuple(bias.shape)
    for i in range(1, len(shape) + 1):
        have, want = shape[-i], target[-i] if i <= 2 else 1
        if have != want and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) at non-singleton "
                f"dimension {2 - i}.  Target sizes: [{rows}, {cols}].  Tensor sizes: [{', '.join(map(str, shape))}]"
            )


def _addmm(bias: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    # (Array shapes, not ``Size`` objects: this runs for every nn.Linear call.)
    shape2 = mat2._data.shape
    if len(shape2) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    shape1 = mat1._data.shape
    if (len(shape1) == 2 and shape1[1] == shape2[0]
            and (not isinstance(bias, Tensor) or bias._data.shape != (shape2[1],))):
        _check_bias_expands(bias, shape1[0], shape2[1])
    global _ADDMM
    if _ADDMM is None:
        _ADDMM = ternary(_nn.addmm)
    return _ADDMM(bias, mat1, mat2)  # type: ignore[no-any-return]


_ADDMM: Any = None  # addmm's three-input call path (ops/op.py, ``ternary``), made on first use


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``, composed as PyTorch does (``addmm`` on matrices).

    >>> import retrograd as rg
    >>> rg.nn.functional.linear(rg.ones(1, 2), rg.ones(3, 2), rg.zeros(3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    ndim = input.dim()
    if ndim == 0 or weight.dim() == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and {weight.dim()}D"
        )
    if bias is not None:
        if ndim == 2:
            return _addmm(bias, input, weight.t())
        if input.is_contiguous() and (input.dim() == 3 or bias.dim() == 1):
            # PyTorch flattens the batch into one ``addmm`` and views the result back.
            lead = tuple(input.shape[:-1])
            rows = int(np.prod(lead, dtype=np.int64))
            out = _addmm(bias, input.reshape(rows, input.shape[-1]), weight.t())
            return out.view(*lead, out.shape[1])
    out = _matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``out[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    >>> import retrograd as rg
    >>> rg.nn.functional.bilinear(rg.ones(1, 2), rg.ones(1, 3), rg.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                f"{input2.shape[i]}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}"
        )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected {weight.shape[0]}"
        )
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    flat = apply(_nn.trilinear, (input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1])))
    out = flat.reshape(out_shape)
    return out if bias is None else out + bias

# -- dropout ----------------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _bernoulli(shape: tuple[int, ...], keep: float) -> np.ndarray:
    """PyTorch's CPU dropout mask: ``empty(shape).bernoulli_(1 - p)`` on the default generator."""
    from ..random import default_generator

    return default_generator.stream.bernoulli_scalar(math.prod(shape), keep).reshape(shape)


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,  # noqa: A002
                  alpha: bool) -> Tensor:
    if p == 0 or not training or input.numel() == 0:
        return input
    dtype = input._data.dtype
    if dtype.kind == "c" and p != 1:  # (p=1 draws no mask: a complex input is zeroed)
        raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for \'{scalar_type_name(dtype)}\'')
    if dtype.kind not in "fVc":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {scalar_type_name(dtype)}")
    if p == 1:
        zero = _make(np.zeros((), dtype))
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    keep = _bernoulli(shape, 1 - p)
    if alpha:
        a_const = 1.7580993408473766
        a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
        shift = _make(((keep - 1.0) * (a_const * a) + a_const * a * p).astype(dtype))
        noise = _make((keep * a).astype(dtype))
        out = input.mul_(noise) if inplace else input * noise
        return out.add_(shift) if inplace else out + shift
    # noise.div_(1 - p) in the input's dtype, as PyTorch scales the mask: a kept element is
    # 1 / (1 - p) rounded in that dtype, so one pass multiplies the mask by that one number
    noise = _make(np.multiply(keep, np.ones((), dtype) / dtype.type(1 - p), dtype=dtype))
    return input.mul_(noise) if inplace else input * noise


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` (retrograd's generator) and scale the rest by 1/(1-p).

    >>> import retrograd as rg
    >>> x = rg.ones(4)
    >>> rg.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Dropout that keeps SELU's self-normalising mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
                               batched: bool) -> Tensor:
    if batched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    x = input.unsqueeze(0)
    out = _dropout_impl(x, p, training, inplace, feature=True, alpha=False)
    if inplace:
        return input
    return out.squeeze(0)


def _warn_feature_dropout_rank(input: Tensor, spatial: int) -> None:  # noqa: A002
    """``dropout2d``/``dropout3d``'s deprecation warning for an input that is not ``spatial + 1`` or
    ``spatial + 2``-D (the caller's caller is the line warned about)."""
    if input.dim() not in (spatial + 1, spatial + 2):
        name = f"dropout{spatial}d"
        warnings.warn(
            f"{name}: Received a {input.dim()}-D input to {name}, which is deprecated and will result in an "
            "error in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            f"Note that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
            f"channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).",
            UserWarning, stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs)."
        )
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, H, W) inputs (3-D inputs are taken as (N, C, L), as PyTorch does)."""
    _check_p(p)
    _warn_feature_dropout_rank(input, 2)
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning, stacklevel=2)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    _warn_feature_dropout_rank(input, 3)
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 5)

# -- padding ----------------------------------------------------------------------------------


def _shape_list(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _pad_circular(input: Tensor, pad: tuple[int, ...]) -> Tensor:  # noqa: A002
    # As PyTorch: copy the kept region into a new tensor, then copy the wrapped borders from it,
    # one padded dim after another (so the history is a chain of CopySlices).
    k = len(pad) // 2
    nd = input.dim()
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(k):
        d = nd - k + i
        left, right = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        if left > in_shape[d] or right > in_shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[d] = in_shape[d] + left + right
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = _make(np.zeros(out_shape, input._data.dtype))
    out_slice, in_slice = out, input
    for i in range(k):
        d = nd - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        out_slice = apply(_S.slice_op, (out_slice, d, max(left, 0), out_shape[d] - max(right, 0), 1))
        in_slice = apply(_S.slice_op, (in_slice, d, max(-left, 0), in_shape[d] - max(-right, 0), 1))
    out_slice.copy_(in_slice)
    for i in range(k):
        d = nd - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = out_shape[d]
        if left > 0:
            src = apply(_S.slice_op, (out, d, size - left - max(right, 0), size - max(right, 0), 1))
            apply(_S.slice_op, (out, d, 0, left, 1)).copy_(src)
        if right > 0:
            src = apply(_S.slice_op, (out, d, max(left, 0), max(left, 0) + right, 1))
            apply(_S.slice_op, (out, d, size - right, size, 1)).copy_(src)
    return out


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims; ``pad`` is (last left, last right, 2nd-last left, ...).
    Modes: ``constant`` (negative pads crop), ``reflect``, ``replicate``, ``circular``.

    >>> import retrograd as rg
    >>> rg.nn.functional.pad(rg.tensor([[1.0, 2.0]]), (1, 2)).tolist()
    [[0.0, 1.0, 2.0, 0.0, 0.0]]
    >>> rg.nn.functional.pad(rg.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    pads = tuple(int(p) for p in pad)
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pads)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return apply(_nn.constant_pad_nd, (input, pads, 0 if value is None else value))  # type: ignore[no-any-return]
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pads) // 2
    if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pads)} is not supported for {input.dim()}D input tensor.")
    if mode == "circular":
        return _pad_circular(input, pads)
    shape = tuple(input.shape)
    checked = shape[1:] if input.dim() == k + 2 else shape
    if 0 in checked:
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {_shape_list(shape)}"
        )
    if mode == "reflect":
        for j in range(k):
            d = input.dim() - 1 - j
            left, right = pads[2 * j], pads[2 * j + 1]
            if left >= shape[d] or right >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding input dimension, "
                    f"but got: padding ({left}, {right}) at dimension {d} of input {_shape_list(shape)}"
                )
    width = shape[-1] + pads[0] + pads[1]
    if k == 1 and width < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: {width}")
    indices = _nn.pad_indices(shape, pads, mode)
    return apply(_nn.PAD_OPS[(mode, k)], (input, indices))  # type: ignore[no-any-return]

# -- pixel and channel shuffles ---------------------------------------------------------------


def _check_shuffle_args(fn: str, input: Tensor, factor_name: str, factor: int) -> int:  # noqa: A002
    """The rank and factor checks that ``pixel_shuffle`` and ``pixel_unshuffle`` share; the factor as an int."""
    r = int(factor)
    if input.dim() < 3:
        raise RuntimeError(f"{fn} expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{fn} expects a positive {factor_name}, but got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)``.

    >>> import retrograd as rg
    >>> rg.nn.functional.pixel_shuffle(rg.arange(4.0).reshape(1, 4, 1, 1), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = _check_shuffle_args("pixel_shuffle", input, "upscale_factor", upscale_factor)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply(_nn.pixel_shuffle, (input, r))  # type: ignore[no-any-return]


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse of ``pixel_shuffle``.

    >>> import retrograd as rg
    >>> rg.nn.functional.pixel_unshuffle(rg.arange(4.0).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = _check_shuffle_args("pixel_unshuffle", input, "downscale_factor", downscale_factor)
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={input.shape[d]} is not divisible by {r}")
    return apply(_nn.pixel_unshuffle, (input, r))  # type: ignore[no-any-return]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """Interleave the channels (dim 1) of ``groups`` groups.

    >>> import retrograd as rg
    >>> rg.nn.functional.channel_shuffle(rg.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{_shape_list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return apply(_nn.channel_shuffle, (input, int(groups)))  # type: ignore[no-any-return]


native_channel_shuffle = channel_shuffle

# -- one_hot, embedding -----------------------------------------------------------------------


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding of class indices (a trailing dim of ``num_classes``).

    >>> import retrograd as rg
    >>> rg.nn.functional.one_hot(rg.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    data = tensor._data
    if data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size:
        if data.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if data.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _make((data[..., None] == np.arange(num_classes)).astype(np.int64))


def _embedding_renorm(weight: Tensor, indices: np.ndarray, max_norm: float, norm_type: float) -> None:
    rows = np.unique(indices)
    data = weight._data
    picked = data[rows]
    norms = np.linalg.norm(picked, ord=norm_type, axis=1) if picked.size else np.zeros(len(rows))
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    data[rows] = (picked * scale[:, None]).astype(data.dtype, copy=False)
    weight._counter().bump("embedding_renorm_")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx``'s row gets no gradient.
    ``max_norm`` renormalises the looked-up rows in place first. (Gradients are always dense.)

    >>> import retrograd as rg
    >>> rg.nn.functional.embedding(rg.tensor([1]), rg.tensor([[0.0], [5.0]])).tolist()
    [[5.0]]
    """
    num = weight.shape[0] if weight.dim() else 0
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    indices = input._data
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"torch.{scalar_type_name(indices.dtype)}Tensor instead (while checking arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    coeff = None
    if weight.requires_grad and STATE.grad_enabled:
        coeff = _nn.embedding_coefficients(indices, num, padding_idx, scale_grad_by_freq)
    return apply(_nn.embedding, (weight, _S.versioned_index(input), coeff))  # type: ignore[no-any-return]


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings: rows of a 2-D ``input``, or the slices of a 1-D
    ``input`` that start at ``offsets``. (Gradients are always dense.)

    >>> import retrograd as rg
    >>> w = rg.tensor([[1.0], [2.0], [4.0]])
    >>> rg.nn.functional.embedding_bag(rg.tensor([0, 1, 2]), w, rg.tensor([0, 1]), mode="sum").tolist()
    [[1.0], [6.0]]
    """
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        starts = np.arange(0, input.numel(), max(input.shape[1], 1))
        include_last_offset = False
        input = input.reshape(-1)  # noqa: A001
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets._data.astype(np.int64)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    indices = input._data
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"torch.{scalar_type_name(indices.dtype)}Tensor instead (while checking arguments for embedding_bag)"
        )
    num = weight.shape[0]
    bad = np.flatnonzero((indices < 0) | (indices >= num))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {indices[bad[0]]} which is not in the valid range "
                           f"[0, {num})")
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    length = len(indices)
    if len(starts):
        if starts[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {starts[0]}")
        if starts[-1] > length:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} but got offsets[-1] of "
                               f"{starts[-1]}")
    num_bags = len(starts) - 1 if include_last_offset else len(starts)
    # (include_last_offset: indices past the last offset join the last bag, as on PyTorch's CPU)
    bags = np.searchsorted(starts[:num_bags], np.arange(length), side="right") - 1
    kept = (bags >= 0) & (bags < num_bags)
    if padding_idx is not None:
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
        kept &= indices != padding_idx
    positions = np.flatnonzero(kept)
    idx, bag = indices[positions].astype(np.int64), bags[positions]
    coeff = grad_scale = None
    if mode == "mean":
        counts = np.bincount(bag, minlength=num_bags)
        coeff = 1.0 / counts[bag]
    if scale_grad_by_freq:
        grad_scale = 1.0 / np.bincount(indices.astype(np.int64), minlength=num)[idx]
    psw = None
    if per_sample_weights is not None:
        psw = per_sample_weights if len(positions) == length else per_sample_weights[positions]
    # (the node keeps ``input`` and ``offsets`` with their version, as PyTorch's: written before
    # backward, its error; ``idx`` and ``bag`` are what backward computes with)
    return apply(_nn.embedding_bag,  # type: ignore[no-any-return]
                 (weight, psw, idx, bag, num_bags, mode, coeff, grad_scale, input, offsets))

# -- normalisation ----------------------------------------------------------------------------


def _verify_batch_size(size: Sequence[int]) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {Size(size)}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalise each channel (dim 1) by the batch statistics (training; the running ones are
    updated in place with ``momentum``) or by the running statistics (evaluation).

    >>> import retrograd as rg
    >>> out = rg.nn.functional.batch_norm(rg.tensor([[1.0], [3.0]]), None, None, training=True)
    >>> [round(v, 3) for v in out.flatten().tolist()]
    [-1.0, 1.0]
    """
    if training:
        _verify_batch_size(tuple(input.shape))
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if not training:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    # (the node keeps the statistics with their version, ``versioned=``: backward reads them again,
    # and a write in between is PyTorch's error; a training step's update does not count as one)
    return apply(_nn.native_batch_norm,  # type: ignore[no-any-return]
                 (input, weight, bias, running_mean, running_var, training, momentum, eps))


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,  # noqa: A002
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims (batch norm on a (1, N*C, ...) view).

    >>> import retrograd as rg
    >>> out = rg.nn.functional.instance_norm(rg.tensor([[[1.0, 3.0]]]))
    >>> [round(v, 3) for v in out.flatten().tolist()]
    [-1.0, 1.0]
    """
    if use_input_stats:
        size = tuple(input.shape)
        if int(np.prod(size[2:], dtype=np.int64)) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {Size(size)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = input.shape[0], input.shape[1]
    flat = input.contiguous().view(1, n * c, *input.shape[2:])

    def repeat(t: Tensor | None) -> Tensor | None:
        return None if t is None else apply(_nn.repeat_vector, (t, n))

    stats = [None if s is None else _make(np.tile(s._data, n)) for s in (running_mean, running_var)]
    out = batch_norm(flat, stats[0], stats[1], repeat(weight), repeat(bias), use_input_stats, momentum, eps)
    for target, repeated in zip((running_mean, running_var), stats, strict=True):
        if target is not None and repeated is not None:
            target._data[...] = repeated._data.reshape(n, c).mean(0)
            target._counter().bump("copy_")
    return out.view(input.shape)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims.

    >>> import retrograd as rg
    >>> out = rg.nn.functional.layer_norm(rg.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 3) for v in out.flatten().tolist()]
    [-1.0, 1.0]
    """
    if not isinstance(normalized_shape, (tuple, list, Size)):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    shape = tuple(int(s) for s in normalized_shape)
    return apply(_nn.native_layer_norm, (input, weight, bias, shape, eps))  # type: ignore[no-any-return]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-05) -> Tensor:
    """Normalise over groups of channels (and the spatial dims).

    >>> import retrograd as rg
    >>> out = rg.nn.functional.group_norm(rg.tensor([[1.0, 3.0]]), 1)
    >>> [round(v, 3) for v in out.flatten().tolist()]
    [-1.0, 1.0]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    return apply(_nn.native_group_norm, (input, weight, bias, num_groups, eps))  # type: ignore[no-any-return]


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps)`` over the trailing ``normalized_shape`` dims, times ``weight``
    (``eps`` defaults to the dtype's machine epsilon).

    >>> import retrograd as rg
    >>> [round(v, 3) for v in rg.nn.functional.rms_norm(rg.tensor([[1.0, 1.0]]), (2,)).flatten().tolist()]
    [1.0, 1.0]
    """
    shape = tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={_shape_list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{_shape_list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.dim() - k, input.dim()))
    inv = apply(_nn.rsqrt, (apply(_nn.add_scalar, ((input ** 2).mean(dims, keepdim=True), eps)),))
    out = input * inv
    if weight is not None:
        out = out * weight
    return out if out.is_contiguous() else out.contiguous()  # PyTorch returns a contiguous result


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> import retrograd as rg
    >>> [round(v, 4) for v in rg.nn.functional.normalize(rg.tensor([[3.0, 4.0]]))[0].tolist()]
    [0.6, 0.8]
    """
    denom = apply(_nn.clamp_min, (input.norm(p, dim, keepdim=True), eps)).expand_as(input)
    result = input / denom
    if out is not None:
        with no_grad():
            out.copy_(result)
        return out
    return result

# -- distances --------------------------------------------------------------------------------


def _broadcast(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if a.shape == b.shape:
        return a, b
    try:
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise RuntimeError(broadcast_error([tuple(a.shape), tuple(b.shape)])) from None
    return (a if tuple(a.shape) == shape else a.expand(shape)), (b if tuple(b.shape) == shape else b.expand(shape))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``<x1, x2> / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs broadcast).

    >>> import retrograd as rg
    >>> rg.nn.functional.cosine_similarity(rg.tensor([[1.0, 0.0]]), rg.tensor([[2.0, 0.0]])).tolist()
    [1.0]
    """
    kinds = {x1._data.dtype.kind, x2._data.dtype.kind}
    if not kinds & {"f", "V"} or "c" in kinds:  # (complex is not floating point here)
        from .._dtype import result_type

        common = scalar_type_name(result_type((x1, x2)))
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {common}")
    a, b = _broadcast(x1, x2)
    d = normalize_dim(dim, a.dim())
    # Each vector is divided by its norm first; the clamp to eps happens outside autograd.
    na = a.norm(2, d, keepdim=True).clone()
    nb = b.norm(2, d, keepdim=True).clone()
    with no_grad():
        na.clamp_(min=eps)
        nb.clamp_(min=eps)
    return ((a / na) * (b / nb)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.pairwise_distance(rg.tensor([[3.0, 4.0]]), rg.zeros(1, 2), eps=0.0).item(), 4)
    5.0
    """
    ndim = max(x1.dim(), x2.dim())
    diff = apply(_nn.add_scalar, (x1 - x2, eps))
    dims = (ndim - 1,) if ndim else None
    return apply(_nn.norm, (diff, float(p), dims, keepdim))  # type: ignore[no-any-return]



def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """p-norm distances between all pairs of rows (i < j) of an (N, M) input.

    >>> import retrograd as rg
    >>> rg.nn.functional.pdist(rg.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])).tolist()
    [5.0, 4.0, 3.0]
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._data.dtype.kind not in "fV":  # (complex included)
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(_nn.pdist, (input.contiguous(), float(p)))  # type: ignore[no-any-return]



def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Tensor:
    """Normalise each element by the mean of squares over ``size`` neighbouring channels.

    >>> import retrograd as rg
    >>> rg.nn.functional.local_response_norm(rg.ones(1, 2, 1), 2, alpha=1.0, beta=1.0, k=0.0).flatten().tolist()
    [2.0, 1.0]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    if input._data.dtype.kind == "c":  # (PyTorch's composite averages with avg_pool2d/3d: no complex kernel)
        kernel = "avg_pool2d" if input.dim() == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input._data.dtype)}\'')
    sizes = tuple(input.shape)
    squares = (input * input).reshape(sizes[0], sizes[1], -1)
    padded = pad(squares, (0, 0, size // 2, (size - 1) // 2))
    # The mean over a window of ``size`` channels, as PyTorch's average pooling computes it.
    window = padded.narrow(1, 0, sizes[1])
    for offset in range(1, size):
        window = window + padded.narrow(1, offset, sizes[1])
    div = (window / size).reshape(sizes)
    div = (div * alpha + k) ** beta
    return input / div

# -- losses -----------------------------------------------------------------------------------


def _legacy_reduction(size_average: Any, reduce: Any, stacklevel: int = 3) -> str:
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  UserWarning, stacklevel=stacklevel)
    return ret


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      UserWarning, stacklevel=3)
        reduction = "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:  # noqa: A002
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). This will "
            "likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning, stacklevel=stacklevel)


def _pointwise_loss_args(input: Tensor, target: Tensor, size_average: Any, reduce: Any,  # noqa: A002
                         reduction: str) -> tuple[Tensor, Tensor, str]:
    """The start that ``mse_loss``, ``l1_loss`` and ``smooth_l1_loss`` share: warn on a size mismatch
    and on legacy flags (at the loss's caller), then broadcast; returns (input, target, reduction)."""
    _warn_size(input, target, stacklevel=4)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=4)
    a, b = _broadcast(input, target)
    return a, b, reduction


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:  # noqa: A002
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum() if mean_by_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error (``weight``: per-element weights, mean divided by their sum).

    >>> import retrograd as rg
    >>> rg.nn.functional.mse_loss(rg.tensor([1.0, 3.0]), rg.tensor([0.0, 0.0])).item()
    5.0
    """
    a, b, reduction = _pointwise_loss_args(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted((a - b) ** 2, weight, input, reduction, True)
    _check_reduction(reduction)
    return apply(_nn.mse_loss, (a, b, reduction))  # type: ignore[no-any-return]


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error.

    >>> import retrograd as rg
    >>> rg.nn.functional.l1_loss(rg.tensor([1.0, -3.0]), rg.tensor([0.0, 0.0])).item()
    2.0
    """
    a, b, reduction = _pointwise_loss_args(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted((a - b).abs(), weight, input, reduction, True)
    _check_reduction(reduction)
    return _apply_reduction((a - b).abs(), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared error below ``beta`` (divided by ``beta``), absolute error above.

    >>> import retrograd as rg
    >>> rg.nn.functional.smooth_l1_loss(rg.tensor([0.5, 3.0]), rg.zeros(2), reduction="sum").item()
    2.625
    """
    a, b, reduction = _pointwise_loss_args(input, target, size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta == 0.0:
        return _apply_reduction((a - b).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply(_nn.smooth_l1_loss, (a, b, reduction, beta))  # type: ignore[no-any-return]


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Tensor | None = None) -> Tensor:
    """Squared error below ``delta``, ``delta``-scaled absolute error above.

    >>> import retrograd as rg
    >>> rg.nn.functional.huber_loss(rg.tensor([0.5, 3.0]), rg.zeros(2), reduction="sum").item()
    2.625
    """
    _warn_size(input, target)
    a, b = _broadcast(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(apply(_nn.huber_loss, (a, b, "none", delta)), weight, input, reduction, False)
    _check_reduction(reduction)
    return apply(_nn.huber_loss, (a, b, reduction, delta))  # type: ignore[no-any-return]


def _no_grad_arg(t: Tensor | None, arg: str, fn: str) -> None:
    if t is not None and t.requires_grad and STATE.grad_enabled:
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input cannot have "
            "requires_grad True."
        )


def _nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,  # noqa: A002
                 ignore_index: int) -> Tensor:
    shape, tdata = input._data.shape, target._data  # (plain shapes: this runs on every training step)
    ndim = len(shape)
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1 and tdata.ndim >= 1 and shape[0] != tdata.shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({tdata.shape[0]}).")
    if tdata.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {scalar_type_name(tdata.dtype)}")
    classes = shape[0 if ndim == 1 else 1]
    wdata = None
    if weight is not None:
        if weight.dim() != 1 or weight.shape[0] != classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {classes} classes or no classes but got weight "
                f"tensor of shape: {_shape_list(weight.shape)}"
            )
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(input._data.dtype)} but found "
                f"{scalar_type_name(weight._data.dtype)}"
            )
        wdata = weight  # (versioned: the node keeps the tensor with its version)
    # The target as the op's ``versioned=`` param: the tensor, whose version the node keeps
    # (under vmap, a batched one's logical array, for the batching rule).
    tkeep: Any = target if type(tdata) is np.ndarray else tdata
    if ndim <= 2:
        _no_grad_arg(weight, "weight", "nll_loss_forward")
        if tdata.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if ndim == 1 and tdata.ndim == 1:
            if tdata.shape[0] != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {tdata.shape[0]}")
            if tkeep is not target:  # (a tensor target is kept as given, as PyTorch's; the forward views it)
                tkeep = tdata.reshape(())
        return apply(_nn.nll_loss, (input, tkeep, wdata, reduction, ignore_index))  # type: ignore[no-any-return]
    _no_grad_arg(weight, "weight", "nll_loss2d_forward")
    n = input.shape[0]
    if input.dim() == 4:
        if target.dim() != 3:
            raise RuntimeError(
                f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {target.dim()}"
            )
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(
                f"size mismatch (got input: {_shape_list(input.shape)} , target: {_shape_list(target.shape)}"
            )
        return apply(_nn.nll_loss2d, (input, tkeep, wdata, reduction, ignore_index))  # type: ignore[no-any-return]
    out_size = (n,) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {_shape_list(out_size)}, got {_shape_list(target.shape)}")
    # As PyTorch: view (N, C, d1, d2...) as (N, C, 1, d1*d2*...) and use the 2-D loss.
    x = input.contiguous()
    x = x.view(n, classes, 1, -1) if x.numel() else x.view(n, classes, 0, 0)
    t_shape = (n, 1, -1) if tdata.size else (n, 0, 0)
    t = target.contiguous().reshape(t_shape) if tkeep is target else np.ascontiguousarray(tdata).reshape(t_shape)
    out = apply(_nn.nll_loss2d, (x, t, wdata, reduction, ignore_index))
    return out.view(out_size) if reduction == "none" else out  # type: ignore[no-any-return]


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,  # noqa: A002
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities, for (C), (N, C) or
    (N, C, d1, ...) inputs; ``weight`` per class, ``ignore_index`` targets contribute nothing.

    >>> import retrograd as rg
    >>> rg.nn.functional.nll_loss(rg.tensor([[-1.0, -2.0]]), rg.tensor([1])).item()
    2.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _class_view(weight: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    if input.dim() == 1:
        return weight
    shape = [1] * input.dim()
    shape[1] = weight.shape[0]
    return weight.view(shape)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,  # noqa: A002
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` for class indices, or the cross entropy with
    class probabilities (a target shaped like the input); ``label_smoothing`` mixes in the uniform
    distribution.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.cross_entropy(rg.zeros(1, 2), rg.tensor([0])).item(), 4)
    0.6931
    """
    reduction = _reduction(size_average, reduce, reduction)
    class_dim = 0 if input._data.ndim == 1 else 1
    if input._data.shape == target._data.shape:
        return _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    if weight is None:
        fused = _cross_entropy_fused(input, target, reduction, ignore_index)
        if fused is not None:
            return fused
    logp = apply(_nn.log_softmax, (input, normalize_dim(class_dim, input._data.ndim)))
    return _nll_loss_nd(logp, target, weight, reduction, ignore_index)


_FUSED_CE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_CE_PATHS: list[Any] = []  # log_softmax's and nll_loss's recording paths for a forward run (ops/op.py, ``prerun``)


def _cross_entropy_fused(input: Tensor, target: Tensor, reduction: str, ignore_index: int) -> Tensor | None:  # noqa: A002
    """``cross_entropy`` of (N, C) float scores and N class indices, none ignored, with one fused
    forward (``ops/nn.log_softmax_nll``) and the same two nodes as the composition records
    (NllLossBackward0 after LogSoftmaxBackward0, the same saved values and params), so grad_fn,
    double backward and saved-tensor hooks are unchanged. ``None``: take the composition."""
    x, tdata = input._data, target._data
    if type(x) is not np.ndarray or type(tdata) is not np.ndarray:  # (under vmap: the composition batches)
        return None
    if not (x.ndim == 2 and tdata.ndim == 1 and tdata.dtype == np.int64 and x.dtype in _FUSED_CE_DTYPES
            and x.shape[0] == tdata.shape[0] and not 0 <= ignore_index < x.shape[1]):
        return None
    fused = _nn.log_softmax_nll(x, target, reduction)
    if fused is None:
        return None
    if not _CE_PATHS:
        _CE_PATHS[:] = (prerun(_nn.log_softmax), prerun(_nn.nll_loss))
    record_log_softmax, record_nll_loss = _CE_PATHS
    logp = record_log_softmax(input, fused[0], 1)
    return record_nll_loss(logp, fused[1], target, None, reduction, ignore_index)  # type: ignore[no-any-return]


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,  # noqa: A002
                         ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    if target._data.dtype.kind not in "fV":
        name = scalar_type_name(target._data.dtype)
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got {name}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {classes} classes or no classes but got "
            f"weight tensor of shape: {_shape_list(weight.shape)}"
        )
    logp = apply(_nn.log_softmax, (input, normalize_dim(class_dim, input._data.ndim)))
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = target * (1 - label_smoothing) + label_smoothing / classes
    product = logp * target if weight is None else logp * target * _class_view(weight, input)
    if reduction == "none":
        return -product.sum(class_dim)
    total = -product.sum()
    if reduction == "sum":
        return total
    if input.numel() == 0:
        return apply(_nn.div_scalar, (total, 0.0))  # type: ignore[no-any-return]
    return apply(_nn.div_scalar, (total, input.numel() // classes))  # type: ignore[no-any-return]


def _cross_entropy_smoothed(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,  # noqa: A002
                            ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    logp = apply(_nn.log_softmax, (input, normalize_dim(class_dim, input._data.ndim)))
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    classes = input.shape[class_dim]
    smooth = -(logp if weight is None else logp * _class_view(weight, input)).sum(class_dim)
    ignored = target == ignore_index
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = ~ignored._data
        if weight is None:
            ret = smooth.sum() / _make(np.asarray(kept.sum(), dtype=np.int64))
        else:
            picked = weight._data[target._data[kept].astype(np.int64)]
            ret = smooth.sum() / _make(np.asarray(picked.sum(), dtype=weight._data.dtype))
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return apply(_nn.mul_scalar, (nll, 1 - label_smoothing)) + apply(_nn.mul_scalar, (ret, label_smoothing / classes))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` for probabilities ``x``; each log is clamped at
    -100, as in PyTorch.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.binary_cross_entropy(rg.tensor([0.5]), rg.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        _no_grad_arg(weight, "weight", "binary_cross_entropy")
        shape = tuple(np.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
        weight = weight.detach().expand(shape)
    return apply(_nn.binary_cross_entropy, (input, target, weight, reduction))  # type: ignore[no-any-return]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits;
    ``pos_weight`` weighs the positive term.

    >>> import retrograd as rg
    >>> rg.nn.functional.binary_cross_entropy_with_logits(rg.tensor([1e4]), rg.tensor([1.0])).item()
    0.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if input._data.dtype.kind == "c":  # (PyTorch's composite takes log_sigmoid of the input alone)
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{scalar_type_name(input._data.dtype)}\'')
    _no_grad_arg(weight, "weight", "binary_cross_entropy_with_logits")
    _no_grad_arg(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    weight = None if weight is None else weight.detach()
    pos_weight = None if pos_weight is None else pos_weight.detach()
    return apply(_nn.binary_cross_entropy_with_logits,  # type: ignore[no-any-return]
                 (input, target, weight, pos_weight, reduction))


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence ``target * (log(target) - input)`` for log-probabilities ``input``
    (``log_target``: the target is given as log-probabilities too). Use ``reduction='batchmean'``
    for the mathematical definition.

    >>> import retrograd as rg
    >>> rg.nn.functional.kl_div(rg.tensor([0.0]), rg.tensor([1.0]), reduction="sum").item()
    0.0
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' "
            "divides only by the batch size, and aligns with the KL div math definition.'mean' will be changed to "
            "behave the same as 'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input._data.dtype.kind == "c" or target._data.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if input._data.dtype.kind not in "fV" or target._data.dtype.kind not in "fV":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = apply(_nn.xlogy, (target, target)) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() else total
    return _apply_reduction(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: Any = None, eps: float = 1e-08, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood (``log_input``: the input is the log of the rate;
    ``full``: add the Stirling term for targets above 1).

    >>> import retrograd as rg
    >>> rg.nn.functional.poisson_nll_loss(rg.tensor([0.0]), rg.tensor([1.0])).item()
    1.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * apply(_nn.add_scalar, (input, eps)).log()
    if full:
        half_log = apply(_nn.mul_scalar, (apply(_nn.mul_scalar, (target, 2 * math.pi)).log(), 0.5))
        stirling = target * target.log() - target + half_log
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``.

    >>> import retrograd as rg
    >>> rg.nn.functional.margin_ranking_loss(rg.tensor([1.0]), rg.tensor([2.0]), rg.tensor([1.0])).item()
    1.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    scores = apply(_nn.add_scalar, (-target * (input1 - input2), margin))
    return _apply_reduction(apply(_nn.clamp_min, (scores, 0)), reduction)


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float) -> None:
    """The margin and rank checks of both triplet losses."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs"
        )


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-06, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise p-norm distance.

    >>> import retrograd as rg
    >>> a = rg.tensor([[0.0, 0.0]])
    >>> round(rg.nn.functional.triplet_margin_loss(a, a, a + 3, eps=0.0).item(), 4)
    0.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_triplet(anchor, positive, negative, margin)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = apply(_E.minimum, (d_neg, pairwise_distance(positive, negative, p, eps)))
    loss = apply(_nn.clamp_min, (apply(_nn.add_scalar, (d_pos, margin)) - d_neg, 0))
    return _apply_reduction(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance (``pairwise_distance`` by default).

    >>> import retrograd as rg
    >>> a = rg.tensor([[0.0, 0.0]])
    >>> rg.nn.functional.triplet_margin_with_distance_loss(a, a, a + 3).item()
    0.0
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(anchor, positive, negative, margin)
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = apply(_E.minimum, (d_neg, distance(positive, negative)))
    loss = apply(_nn.clamp_min, (margin + d_pos - d_neg, 0))
    return _apply_reduction(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where ``target == -1``.

    >>> import retrograd as rg
    >>> x = rg.tensor([[1.0, 0.0]])
    >>> round(rg.nn.functional.cosine_embedding_loss(x, x, rg.tensor([1])).item(), 4)
    0.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with sizes {_shape_list(input1.shape)} and "
            f"{_shape_list(input2.shape)}."
        )
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes {_shape_list(input1.shape)} and "
            f"{_shape_list(input2.shape)}."
        )
    eps = 1e-12
    prod_sum = (input1 * input2).sum(tdim)
    mag1 = apply(_nn.add_scalar, ((input1 * input1).sum(tdim), eps))
    mag2 = apply(_nn.add_scalar, ((input2 * input2).sum(tdim), eps))
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = _make(np.zeros(tuple(cos.shape), cos._data.dtype))
    pos = _make(np.ones((), cos._data.dtype)) - cos
    neg = apply(_nn.clamp_min, (apply(_nn.sub_scalar, (cos, margin)), 0))
    out = apply(_E.where, (target == 1, pos, zeros)) + apply(_E.where, (target == -1, neg, zeros))
    return _apply_reduction(out, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` (computed stably), for targets of +-1.

    >>> import retrograd as rg
    >>> round(rg.nn.functional.soft_margin_loss(rg.tensor([0.0]), rg.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _reduction(size_average, reduce, reduction)
    _no_grad_arg(target, "target", "soft_margin_loss")
    t = target.expand(tuple(input.shape)) if tuple(target.shape) != tuple(input.shape) else target  # (a view: its version)
    if input.requires_grad and STATE.grad_enabled and input._data.dtype.kind == "c":
        # (PyTorch has no complex rule for it, and says so when a graph would be recorded)
        raise RuntimeError("soft_margin_loss does not support automatic differentiation for outputs with complex "
                           "dtype.")
    return apply(_nn.soft_margin_loss, (input, t, reduction))  # type: ignore[no-any-return]


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per-class binary logistic loss averaged over the classes (last dim).

    >>> import retrograd as rg
    >>> round(rg.nn.functional.multilabel_soft_margin_loss(rg.zeros(1, 2), rg.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.shape[input.dim() - 1]
    loss = loss.sum(input.dim() - 1) / classes
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum_i max(0, margin - x[y] + x[i])^p / C`` over the classes ``i != y``.

    >>> import retrograd as rg
    >>> rg.nn.functional.multi_margin_loss(rg.tensor([[0.0, 0.0]]), rg.tensor([0])).item()
    0.5
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() not in (1, 2) or input.numel() == 0 and input.dim() == 1:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_shape_list(input.shape)}")
    n = 1 if input.dim() == 1 else input.shape[0]
    tdata = target._data
    if target.dim() > 1 or tdata.size != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch "
            f"size). Expected target size [{n}], but got {_shape_list(target.shape)}. Input has shape "
            f"{_shape_list(input.shape)}."
        )
    classes = input.shape[-1]
    if tdata.size and (tdata.min() < 0 or tdata.max() >= classes):
        raise RuntimeError("target out of range")
    return apply(_nn.multi_margin_loss,  # type: ignore[no-any-return]  # (versioned: the tensors)
                 (input, target, p, margin, weight, reduction))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss; each row of ``target`` lists the target classes, ended by the first -1.

    >>> import retrograd as rg
    >>> rg.nn.functional.multilabel_margin_loss(rg.tensor([[0.0, 1.0]]), rg.tensor([[1, -1]])).item()
    0.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    tdata = target._data
    if tdata.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_type_name(tdata.dtype)}")
    if input.dim() > 2 or target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {_shape_list(target.shape)} for input of size: "
                           f"{_shape_list(input.shape)}")
    if tdata.size and (tdata.min() < -1 or tdata.max() >= input.shape[-1]):
        raise RuntimeError("argument #2 'target' is out of range")
    return apply(_nn.multilabel_margin_loss, (input, target, reduction))  # (versioned: the tensor)  # type: ignore[no-any-return]


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Any = None,  # noqa: A002
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``.

    >>> import retrograd as rg
    >>> x, t = rg.tensor([0.25, 0.25]), rg.tensor([1.0, -1.0])
    >>> rg.nn.functional.hinge_embedding_loss(x, t, reduction="none").tolist()
    [0.25, 0.75]
    """
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _make(np.zeros(tuple(input.shape), input._data.dtype))
    margin_clamp = apply(_nn.clamp_min, (_make(np.asarray(margin, input._data.dtype)) - input, 0))
    out_margin = apply(_E.where, (target != 1, margin_clamp, zeros))
    out_self = apply(_E.where, (target != -1, input, zeros))
    return _apply_reduction(out_margin + out_self, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,  # noqa: A002
                      eps: float = 1e-06, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)^2 / var)`` (``var``
    clamped at ``eps`` outside autograd; ``full`` adds the constant).

    >>> import retrograd as rg
    >>> rg.nn.functional.gaussian_nll_loss(rg.tensor([1.0]), rg.tensor([1.0]), rg.tensor([1.0])).item()
    0.0
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        v = input.new_ones(tuple(input.shape)) * var
    else:
        v = var
        if bool((v._data < 0).any()):
            raise ValueError("var has negative entry/entries")
    if v.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(v.shape):
            v = v.unsqueeze(-1)
        elif not (input.dim() == v.dim()
                  and sum(y for x, y in zip(input.shape, v.shape, strict=True) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    v = v.clone()
    with no_grad():
        v.clamp_(min=eps)
    loss = 0.5 * (v.log() + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)

# -- attention --------------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` (PyTorch's math path); a boolean ``attn_mask`` keeps the
    positions where it is True, a float one is added; ``is_causal`` masks the future.

    >>> import retrograd as rg
    >>> q = rg.ones(1, 2, 4)
    >>> rg.nn.functional.scaled_dot_product_attention(q, q, rg.tensor([[[1.0], [3.0]]])).flatten().tolist()
    [2.0, 2.0]
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    length, source = query.shape[-2], key.shape[-2]
    dtype = query._data.dtype
    mask: Tensor | None = None
    if is_causal:
        mask = _make(np.where(np.tril(np.ones((length, source), dtype=bool)), 0.0, -np.inf).astype(dtype))
    elif attn_mask is not None:
        mask = (_make(np.where(attn_mask._data, 0.0, -np.inf).astype(dtype)) if attn_mask._data.dtype == np.bool_
                else attn_mask)
    if enable_gqa:
        groups = query.shape[-3] // key.shape[-3]
        key = _repeat_interleave(key, groups, key.dim() - 3)
        value = _repeat_interleave(value, groups, value.dim() - 3)
    # As PyTorch's math path: both operands scaled by sqrt(scale), a softmax that zeroes fully masked rows.
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(scale))
    q = apply(_nn.mul_scalar, (query, -root if scale < 0 else root))
    weights = _matmul(q, apply(_nn.mul_scalar, (key.transpose(-2, -1), root)))
    if mask is not None:
        weights = weights + mask
    weights = apply(_nn.safe_softmax, (weights, weights.dim() - 1))
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return _matmul(weights, value)


def _repeat_interleave(t: Tensor, repeats: int, dim: int) -> Tensor:
    shape = tuple(t.shape)
    expanded = t.unsqueeze(dim + 1).expand(*shape[:dim + 1], repeats, *shape[dim + 1:])
    return expanded.reshape(*shape[:dim], shape[dim] * repeats, *shape[dim + 1:])


__all__ = [
    "alpha_dropout", "batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu",
    "celu_", "channel_shuffle", "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "elu", "elu_", "embedding", "embedding_bag", "feature_alpha_dropout",
    "gaussian_nll_loss", "gelu", "glu", "group_norm", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "hardtanh_", "hinge_embedding_loss", "huber_loss", "instance_norm", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "leaky_relu_", "linear", "local_response_norm", "log_softmax", "logsigmoid",
    "margin_ranking_loss", "mish", "mse_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "native_channel_shuffle", "nll_loss", "normalize", "one_hot", "pad",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6",
    "relu_", "rms_norm", "rrelu", "rrelu_", "scaled_dot_product_attention", "selu", "selu_", "sigmoid", "silu",
    "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "threshold_", "triplet_margin_loss", "triplet_margin_with_distance_loss",
]

# Functions with a module of their own, each with its own ``__all__``: convolution, pooling,
# unfold/fold and interpolation (_functional_conv); multi-head attention (_functional_attention: it
# builds on linear, softmax, dropout and sdpa above); the 3-D, power-average and unpooling pools,
# generalised from the 2-D ones (_functional_pool); affine_grid (_functional_grid); ctc_loss
# (_functional_ctc); grid_sample and the sampling functions (_functional_sampling);
# fractional_max_pool{2,3}d (_functional_fractional_pool); linear_cross_entropy (_functional_linear_ce).
# A new one: a star import here and its name in the tuple below.
from . import (  # noqa: E402
    _functional_attention,
    _functional_conv,
    _functional_ctc,
    _functional_fractional_pool,
    _functional_grid,
    _functional_linear_ce,
    _functional_pool,
    _functional_sampling,
)
from ._functional_attention import *  # noqa: E402, F401, F403
from ._functional_attention import _canonical_mask, _none_or_dtype  # noqa: E402, F401
from ._functional_conv import *  # noqa: E402, F401, F403
from ._functional_ctc import *  # noqa: E402, F401, F403
from ._functional_fractional_pool import *  # noqa: E402, F401, F403
from ._functional_grid import *  # noqa: E402, F401, F403
from ._functional_linear_ce import *  # noqa: E402, F401, F403
from ._functional_pool import *  # noqa: E402, F401, F403
from ._functional_sampling import *  # noqa: E402, F401, F403

__all__ += [name for module in (
    _functional_conv, _functional_attention, _functional_pool, _functional_grid, _functional_ctc,
    _functional_sampling, _functional_fractional_pool, _functional_linear_ce,
) for name in module.__all__]
