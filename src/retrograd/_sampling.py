"""The samplers on tensors: ``Tensor.uniform_``/``normal_``/``random_``/``exponential_``/
``geometric_``/``log_normal_``/``cauchy_``/``bernoulli_``, and ``bernoulli``, ``multinomial``,
``poisson``, ``binomial``: PyTorch's argument checks, then the numbers of PyTorch's CPU kernels
from ``retrograd._random`` written in the order PyTorch's TensorIterator visits the elements.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ._dtype import scalar_type_name
from ._random import CPUStream
from .autograd.grad_mode import STATE, no_grad
from .random import Generator, default_generator
from .tensor import Tensor

_TORCH_DTYPE = {"Half": "c10::Half", "BFloat16": "c10::BFloat16", "Float": "float", "Double": "double", "Byte": "unsigned char",
                "Char": "signed char", "Short": "short int", "Int": "int", "Long": "long int", "Bool": "bool"}


def stream(generator: Any, name: str = "") -> CPUStream:
    """The engine of ``generator`` (the default one for None), checking its type."""
    if generator is None:
        return default_generator.stream
    if not isinstance(generator, Generator):
        raise TypeError(f"{name or 'sampler'}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator.stream


def cpp(value: Any) -> str:
    """A number as PyTorch's C++ messages print it (``0``, ``-0.5``, ``1e+20``)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(value)
    return f"{float(value):g}"


def _name(t: Tensor) -> str:
    return scalar_type_name(t._data.dtype)


def _meta_name(t: Tensor) -> str:
    """The dtype as PyTorch's C++ ``TypeMeta`` prints it (``float``, ``long int``, ``c10::Half``)."""
    return _TORCH_DTYPE[_name(t)]


def _not_implemented(kernel: str, t: Tensor) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for {_name(t)!r}')


def iteration_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The axes from outermost to innermost as PyTorch's TensorIterator walks an output: by
    decreasing stride (a transposed tensor is filled in memory order, not index order)."""
    return tuple(sorted(range(len(shape)), key=lambda d: -abs(strides[d]) if shape[d] > 1 else 0))


def _place(t: Tensor, flat: np.ndarray) -> np.ndarray:
    """``flat`` (in TensorIterator order) arranged to ``t``'s shape."""
    data = t._data
    if data.ndim < 2 or data.flags.c_contiguous:
        return flat.reshape(data.shape)
    order = iteration_order(data.shape, data.strides)
    laid = flat.reshape([data.shape[d] for d in order])
    return laid.transpose(np.argsort(order))


def _write(t: Tensor, flat: np.ndarray, op: str = "", *others: Tensor) -> Tensor:
    """Write the samples into ``t`` in place; where autograd records it, as the sampler's own node
    (``NormalBackward0``..., a zero gradient; a leaf that requires grad refuses, as in PyTorch)."""
    if t._data.dtype == np.float16 and flat.dtype == np.float64:
        flat = flat.astype(np.float32)  # c10::Half converts from float: double -> float -> half
    values = np.ascontiguousarray(_place(t, flat.astype(t._data.dtype, copy=False)))
    if op and STATE.grad_enabled and (t.requires_grad or any(o.requires_grad for o in others)):
        from .ops import sampling
        from .ops.inplace import apply_inplace

        return apply_inplace(getattr(sampling, op), (t, *others, values))
    return t.copy_(Tensor._make(values))


def _result(sample: np.ndarray, op: str, inputs: tuple[Any, ...]) -> Tensor:
    """A sampled tensor; when a parameter tensor requires grad, the output of the sampler's node."""
    if STATE.grad_enabled and any(isinstance(i, Tensor) and i.requires_grad for i in inputs):
        from .ops import sampling
        from .ops.op import apply

        return apply(getattr(sampling, op), (*inputs, sample))  # type: ignore[no-any-return]
    return Tensor._make(sample)


def _float_bounds(t: Tensor) -> tuple[float, float]:
    info = np.finfo(t._data.dtype)
    return float(info.min), float(info.max)


# -- in-place samplers ------------------------------------------------------------------------


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    if t._data.dtype.kind not in "fV":
        raise _not_implemented("check_uniform_bounds", t)
    lo, hi = _float_bounds(t)
    dtype_name = _meta_name(t)
    for v, name in ((a, "from"), (b, "to")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {dtype_name}")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={cpp(a)} > to={cpp(b)}")
    if b - a > hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_name(t)}>::max(), but found "
                           f"to={cpp(b)} and from={cpp(a)} which result in to-from to exceed the limit")
    g = stream(generator, "uniform_")
    if t.numel() == 0:
        return t
    return _write(t, g.uniform(t.numel(), t._data.dtype, float(a), float(b)), "uniform_")


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {cpp(std)}")
    if t._data.dtype.kind not in "fV":
        raise _not_implemented("normal_kernel_cpu", t)
    g = stream(generator, "normal_")
    if t.numel() == 0:
        return t
    return _write(t, g.normal(t.numel(), t._data.dtype, float(mean), float(std), t.is_contiguous()), "normal_")


def _random_bounds_check(t: Tensor, low: int, high_inc: int) -> None:
    dtype = t._data.dtype
    dtype_name = _meta_name(t)
    if dtype.kind in "fV":
        lo, hi = _float_bounds(t)
        digits = np.finfo(dtype).nmant + 1
        for v, name in ((low, "from"), (high_inc, "to - 1")):
            if not lo <= v <= hi:
                raise RuntimeError(f"{name} is out of bounds for {dtype_name}")
        for v, name in ((low, "from"), (high_inc, "to - 1")):
            if v < -(1 << digits) or v > 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{dtype_name} can support discrete uniform distribution only within this range. This "
                              "warning will become an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)
    else:
        info = (0, 1) if dtype == np.bool_ else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        for v, name in ((low, "from"), (high_inc, "to - 1")):
            if not info[0] <= v <= info[1]:
                raise RuntimeError(f"{name} is out of bounds for {dtype_name}")


def _update_from(low: int, digits: int, dtype: np.dtype) -> int:
    """PyTorch's ``update_from``: the lowest int64 that survives a round trip through ``dtype``."""
    plus1 = int(dtype.type(low + 1))
    if plus1 < low:
        n = abs(low + 1).bit_length() - 1
        low = plus1 + (1 << (n - digits + 1))
    return low


def _update_to(high: int, digits: int, dtype: np.dtype) -> int:
    minus1 = int(dtype.type(high - 1))
    if minus1 >= high:
        n = abs(high - 1).bit_length() - 1
        high = minus1 - (1 << (n - digits + 1))
    return high


def random_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """``random_()``, ``random_(to)``, ``random_(from, to)`` (``to=None``: up to the dtype's top)."""
    if "from" in kwargs:
        args = (kwargs.pop("from"),) + args
    if "to" in kwargs:
        args = args + (kwargs.pop("to"),)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dtype = t._data.dtype
    n = t.numel()
    if not args:
        g = stream(generator, "random_")
        return t if n == 0 else _write(t, g.random_default(n, dtype), "random_")
    if len(args) == 1:
        low, high = 0, args[0]
    else:
        low, high = args[0], args[1]
    low = int(low)
    if high is not None:
        high = int(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if dtype.kind in "fV":
            digits = np.finfo(dtype).nmant + 1
            low, high = _update_from(low, digits, dtype), _update_to(high, digits, dtype)
            if low >= high:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={low} >= to={high}")
        _random_bounds_check(t, low, high - 1)
        g = stream(generator, "random_")
        if n == 0:
            return t
        return _write(t, g.random_from_to(n, (high - low) & 0xFFFFFFFFFFFFFFFF, low).astype(dtype),
                      "random_to_" if len(args) == 1 else "random_from_to_")
    if low != -2**63:
        if dtype.kind in "fV":
            digits = np.finfo(dtype).nmant + 1
            top = 1 << digits
            low = _update_from(low, digits, dtype)
            if low >= top:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={low} > to_inc={top}")
        else:
            top = 1 if dtype == np.bool_ else int(np.iinfo(dtype).max)
        _random_bounds_check(t, low, top)
        g = stream(generator, "random_")
        if n == 0:
            return t
        return _write(t, g.random_from_to(n, (top - low + 1) & 0xFFFFFFFFFFFFFFFF, low).astype(dtype),
                      "random_from_to_")
    if dtype not in (np.int64, np.float64, np.float32):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    g = stream(generator, "random_")
    return t if n == 0 else _write(t, g.random_full(n).astype(dtype), "random_from_to_")


def exponential_(t: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={cpp(lambd)}")
    if t.numel() == 0:
        return t
    if t._data.dtype.kind not in "fV":
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_name(t)}")
    return _write(t, stream(generator, "exponential_").exponential(t.numel(), float(lambd)), "exponential_")


def geometric_(t: Tensor, p: float, *, generator: Any = None) -> Tensor:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={cpp(p)}")
    if t._data.dtype == np.bool_:
        raise _not_implemented("geometric_cpu", t)
    return t if t.numel() == 0 else _write(t, stream(generator, "geometric_").geometric(t.numel(), float(p)),
                                           "geometric_")


def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={cpp(std)}")
    if t._data.dtype.kind not in "fV":
        raise _not_implemented("log_normal_cpu", t)
    g = stream(generator, "log_normal_")
    return t if t.numel() == 0 else _write(t, g.log_normal(t.numel(), float(mean), float(std)), "log_normal_")


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={cpp(sigma)}")
    if t._data.dtype.kind not in "fV":
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_meta_name(t)}")
    g = stream(generator, "cauchy_")
    return t if t.numel() == 0 else _write(t, g.cauchy(t.numel(), float(median), float(sigma)), "cauchy_")


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)")


def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """In-place Bernoulli draws: a scalar ``p`` (a 53-bit uniform each: PyTorch's kernel on
    non-Intel CPUs; Intel builds use MKL's stream instead) or a tensor of probabilities."""
    if isinstance(p, Tensor):
        if p._data.dtype.kind not in "fV":
            raise _not_implemented("bernoulli_tensor_cpu_p_", p)
        if t.numel() == 0:
            return t
        probs = np.broadcast_to(p._data, t._data.shape)
        order = iteration_order(t._data.shape, t._data.strides) if not t.is_contiguous() else None
        flat = probs.transpose(order).reshape(-1) if order is not None else probs.reshape(-1)
        g = stream(generator, "bernoulli_")
        bad = np.flatnonzero(~((flat >= 0) & (flat <= 1)))
        if bad.size:  # PyTorch's kernel checks each element as it reaches it
            g.bernoulli_probs(flat[:bad[0]])
            raise RuntimeError(_P_RANGE)
        return _write(t, g.bernoulli_probs(flat), "bernoulli_tensor_", p)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={cpp(p)}")
    g = stream(generator, "bernoulli_")
    return t if t.numel() == 0 else _write(t, g.bernoulli_scalar(t.numel(), p), "bernoulli_scalar_")


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None, out: Any = None) -> Tensor:  # noqa: A002
    """Draw 0/1 with probability ``input`` (or the scalar ``p``), shaped and typed like ``input``.

    >>> import retrograd as rg
    >>> rg.bernoulli(rg.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    result = Tensor._make(np.empty(input._data.shape, input._data.dtype))
    if p is None:
        if input._data.dtype.kind not in "fV":
            raise _not_implemented("bernoulli_tensor_cpu_p_", input)
        with no_grad():
            bernoulli_(result, input, generator=generator)
        return _result(result._data, "bernoulli", (input,))
    with no_grad():
        return bernoulli_(result, p, generator=generator)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """Indices drawn from the rows of ``input`` (weights); without replacement each row's
    ``num_samples`` distinct ones (PyTorch's exponential race: top-k of p / Exp(1)).

    >>> import retrograd as rg
    >>> rg.multinomial(rg.tensor([0.0, 1.0, 0.0]), 1).tolist()
    [1]
    """
    data = input._data
    if not 0 < data.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if data.dtype.kind not in "fV":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_name(input)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = data.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = data.shape[:-1] + (num_samples,)
    if math.prod(shape) == 0:
        return Tensor._make(np.zeros(shape, np.int64))
    if data.dtype == np.float16:
        raise RuntimeError("multinomial is not implemented for half on CPU")
    g = stream(generator, "multinomial")
    with np.errstate(invalid="ignore"):
        valid = bool(data.max() < np.inf) and bool(data.min() >= 0)
    if not valid:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (data.reshape(-1, n_categories).sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement:
        q = g.exponential(data.size, 1.0).astype(data.dtype).reshape(data.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = data / q
        # argmax/topk: the largest first (ties among zero-probability categories, reached only
        # when sampling more than the nonzero ones, follow NumPy's sort, not PyTorch's topk)
        order = np.argsort(-ratio, axis=-1, kind="stable")
        return Tensor._make(np.ascontiguousarray(order[..., :num_samples]).astype(np.int64))
    return Tensor._make(g.multinomial_with_replacement(data, num_samples))


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson draws with the rates in ``input`` (PyTorch's per-element sampler and numbers).

    >>> import retrograd as rg
    >>> rg.poisson(rg.zeros(2)).tolist()
    [0.0, 0.0]
    """
    if input._data.dtype.kind not in "fV" or input._data.dtype == np.float16:
        raise _not_implemented("poisson_cpu", input)
    if (input._data < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = stream(generator, "poisson")
    return _result(g.poisson(input._data).astype(input._data.dtype), "poisson", (input,))


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial draws (``count`` trials of probability ``prob``); PyTorch's BTRS/inversion sampler
    on its uniform stream.

    >>> import retrograd as rg
    >>> rg.binomial(rg.tensor([5.0]), rg.tensor([1.0])).tolist()
    [5.0]
    """
    if count._data.dtype.kind not in "fV" or count._data.dtype == np.float16:
        raise _not_implemented("binomial_cpu", count)
    shape = np.broadcast_shapes(count._data.shape, prob._data.shape)
    counts = np.broadcast_to(count._data, shape).reshape(-1).tolist()
    probs = np.broadcast_to(prob._data.astype(count._data.dtype), shape).reshape(-1).tolist()
    g = stream(generator, "binomial")
    out = [_binomial_one(g, float(n), float(p)) for n, p in zip(counts, probs)]
    return Tensor._make(np.array(out, dtype=count._data.dtype).reshape(shape))


def _binomial_one(g: CPUStream, count: float, prob: float) -> float:
    """ATen's ``sample_binomial``: inversion for count * min(p, 1-p) < 10, else BTRS (Hormann)."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if count * prob >= 10.0:
            return _btrs(g, count, prob)
        return _inversion(g, count, prob)
    if prob > 0.5:
        q = 1.0 - prob
        if count * q >= 10.0:
            return count - _btrs(g, count, q)
        return count - _inversion(g, count, q)
    return math.nan


def _inversion(g: CPUStream, count: float, prob: float) -> float:
    geom_sum = 0.0
    num_geom = 0
    logprob = math.log1p(-prob)
    while True:
        u = g._uniform1()
        geom = math.ceil(math.log(u) / logprob) if u > 0 else math.inf
        geom_sum += geom
        if geom_sum > count:
            break
        num_geom += 1
    return float(num_geom)


def _stirling_tail(k: float) -> float:
    table = [0.08106146679532726, 0.04134069595540929, 0.02767792568499834, 0.02079067210376509,
             0.01664469118982119, 0.01387612882307075, 0.01189670994589177, 0.01041126526197209,
             0.009255462182712733, 0.008330563433362871]
    if k <= 9:
        return table[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(g: CPUStream, count: float, prob: float) -> float:
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        u = g._uniform1() - 0.5
        v = g._uniform1()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return float(k)
        v = math.log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                      + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                      + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                      + _stirling_tail(m) + _stirling_tail(count - m)
                      - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upperbound:
            return float(k)
