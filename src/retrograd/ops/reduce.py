"""Reductions, one block per topic: ``sum``/``mean``; ``sum_to_size`` (how the engine reduces a
broadcast gradient); ``prod``; ``max``/``min`` (all and per dim), ``argmax``/``argmin``,
``amax``/``amin``; ``var``/``std`` and their ``_mean`` pairs; ``logsumexp``; norms
(``vector_norm`` with PyTorch's rules for every order, ``norm``'s dtype form, ``dist``); a private
``flip`` for reversed cumulative rules; ``cumsum``/``cumprod``;
``sort``/``argsort``/``topk``/``kthvalue``/``median``/``nanmedian``/``mode``;
``all``/``any``/``count_nonzero``/``nansum``."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dtype import FROM_NUMPY, scalar_type_name
from ..autograd.fp_errors import ignore_fp_errors, quiet_forward, restore_fp_errors
from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from . import elementwise as _E
from . import shape as _S
from .op import Op

_make = Tensor._make


def normalize_dim(dim: int, ndim: int) -> int:
    """Wrap a negative dim; PyTorch's IndexError when out of range (0-dim tensors accept -1, 0)."""
    span = builtins.max(ndim, 1)
    if not -span <= dim < span:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-span}, {span - 1}], but got {dim})"
        )
    return dim % span


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``None`` (all dims), an int, or a sequence of ints -> sorted tuple of non-negative dims."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        dims: Sequence[int] = (int(dim),)
    else:
        dims = tuple(dim)
        if not dims:
            return None
    normalized = [normalize_dim(d, ndim) for d in dims]
    out = tuple(sorted(set(normalized)))
    if len(out) != len(dims):
        repeated = next(d for i, d in enumerate(normalized) if d in normalized[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return tuple(d for d in out if d < ndim) if ndim else ()


def _keepdim_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> tuple[int, ...]:
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def expand_reduced(grad: Tensor, shape: tuple[int, ...], dims: tuple[int, ...] | None, keepdim: bool) -> Tensor:
    """Broadcast the gradient of a reduction back over the reduced dims."""
    if not keepdim and shape:
        grad = grad.reshape(_keepdim_shape(shape, dims))
    return grad.expand(shape)


def _axis(dims: tuple[int, ...] | None) -> Any:
    return dims if dims is None else tuple(dims)


def _const(array: np.ndarray) -> Tensor:
    """A constant tensor made from data inside a backward rule (no gradient flows into it)."""
    return _make(array)


def _zeros(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return _make(np.zeros(shape, dtype))


def _check_nonempty_dim(x: np.ndarray, dim: int, name: str) -> None:
    if x.ndim and x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


# -- sum, mean --------------------------------------------------------------------------------


# PyTorch's CPU accumulate types (``at::acc_type<T, false>``): a half tensor is summed in float and
# cast back; NumPy would add up a half reduction over a non-innermost axis in half.
_HALF = np.dtype(np.float16)


def _half_reduce(fn: Any, x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
    """A sum-like reduction of half values (or into a half result), accumulated in float32."""
    return np.asarray(fn(x.astype(_HALF, copy=False), axis=dims, keepdims=keepdim, dtype=np.float32)).astype(_HALF)


def _sum(x: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    elif x.dtype == _HALF if dtype is None else np.dtype(dtype) == _HALF:
        return _half_reduce(np.add.reduce, x, _axis(dims), keepdim)
    elif dtype is None and _needs_cascade(x, dims):
        return _cascade_sum(x, dims[0], keepdim)
    # np.add.reduce is np.sum without its Python-level wrapper (a few µs per call on small arrays).
    return np.asarray(np.add.reduce(x, axis=_axis(dims), keepdims=keepdim, dtype=dtype))  # type: ignore[call-overload]


def _sum_all(x: np.ndarray, dtype: Any) -> Any:
    if dtype is None and x.dtype.kind in "fc" and x.dtype != _HALF:
        return np.add.reduce(x, axis=None)  # ``x.sum()``: one NumPy call (the path wraps its scalar)
    return _sum(x, None, False, dtype)


sum_all = Op("sum", _sum_all, node="SumBackward0", params=("dtype",),
             grads=(lambda grad, self_shape: grad.expand(self_shape),))

sum_dim = Op("sum", _sum, node="SumBackward1", params=("dim", "keepdim", "dtype"),
             grads=(lambda grad, self_shape, dim, keepdim: expand_reduced(grad, self_shape, dim, keepdim),))


def _check_mean_dtype(x: np.ndarray) -> None:
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {scalar_type_name(x.dtype)}"
        )


def _mean(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
    _check_mean_dtype(x)
    if not x.size:  # NaN for each empty slice, without NumPy's "Mean of empty slice" warning
        return np.full(np.add.reduce(x, axis=_axis(dims), keepdims=keepdim).shape, np.nan, x.dtype)  # type: ignore[call-overload]
    if _needs_cascade(x, dims):
        return np.asarray(_cascade_sum(x, dims[0], keepdim) / np.float32(x.shape[dims[0]]), x.dtype)
    return np.asarray(np.mean(x, axis=_axis(dims), keepdims=keepdim), dtype=x.dtype)


# Below this many terms NumPy's row-by-row float32 sum stays within float32's rounding of PyTorch's.
_CASCADE_MIN = 1024


def _needs_cascade(x: np.ndarray, dims: Any) -> bool:
    """A float32 sum over one long axis that NumPy would add up row after row (not pairwise)."""
    return (x.dtype == np.float32 and dims is not None and len(dims) == 1 and x.shape[dims[0]] >= _CASCADE_MIN
            and x.strides[dims[0]] != x.itemsize)  # (along the contiguous axis NumPy sums pairwise)


def _cascade_sum(x: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    """Sum float32 over ``dim`` in two levels, blocks of about sqrt(n) terms and then the block sums,
    as PyTorch's cascade sum does: the error grows with sqrt(n), not n. Splitting the axis is a
    view, so this reads the data once, as a plain sum does."""
    n = x.shape[dim]
    block = int(np.sqrt(n))
    whole = n // block * block
    head = x[(slice(None),) * dim + (slice(0, whole),)]
    head = head.reshape(x.shape[:dim] + (whole // block, block) + x.shape[dim + 1:])
    out = np.add.reduce(np.add.reduce(head, axis=dim), axis=dim)  # across blocks first: whole rows at a time
    if whole < n:
        out = out + np.add.reduce(x[(slice(None),) * dim + (slice(whole, n),)], axis=dim)
    return np.asarray(np.expand_dims(out, dim) if keepdim else out)


def _count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    if dims is None:
        return int(np.prod(shape, dtype=np.int64))
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))


mean_all = Op("mean", lambda x: _mean(x, None, False), node="MeanBackward0", saved=("self_sym_sizes", "self_sym_numel"),
              grads=(lambda grad, self_shape: grad.expand(self_shape) / _count(self_shape, None),))

mean_dim = Op("mean", _mean, node="MeanBackward1", params=("dim", "keepdim"),
              saved=("dim", "keepdim", "self_sym_sizes", "self_sym_numel"),
              grads=(lambda grad, self_shape, dim, keepdim:
                     expand_reduced(grad, self_shape, dim, keepdim) / _count(self_shape, dim),))


# -- sum_to_size: how the engine reduces a broadcast gradient ---------------------------------


def _sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = x.ndim - len(shape)
    if lead > 0 and x.shape[lead:] == shape:  # the common case: summing leading dims away (a bias)
        return np.add.reduce(x, axis=0 if lead == 1 else tuple(range(lead)))  # type: ignore[no-any-return]
    if lead < 0 or any(s != 1 and s != xs for s, xs in zip(shape, x.shape[lead:], strict=False)):
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(x.shape)}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1
    )
    if axes:
        x = np.add.reduce(x, axis=axes, keepdims=True)
    return x.reshape(shape)


sum_to_size = Op("sum_to_size", _sum_to, node="SumBackward1", params=("size",),
                 grads=(lambda grad, self_shape: grad.expand(self_shape),))


# -- prod -------------------------------------------------------------------------------------


def _prod(x: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    if x.dtype == _HALF and (dtype is None or np.dtype(dtype) == _HALF):
        return _half_prod(x, dims, keepdim)
    return np.asarray(np.prod(x, axis=dims, keepdims=keepdim, dtype=dtype))


def _half_prod(x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    """A half product as PyTorch's CPU kernel computes it (one thread): in half, rounding after
    every multiplication (prod has no wider accumulator, unlike sum), in the kernel's order. Along
    the memory-contiguous axis (or over all of a contiguous tensor) that is its vectorised inner
    reduction (``_half_inner_prod``); along any other axis, a plain running product."""
    token = ignore_fp_errors()  # a half product overflows to inf quietly, as in PyTorch
    try:
        if x.ndim == 0:
            return x.copy()
        if dim is None:
            rows = x.ravel(order="K")[None]  # the kernel walks a dense tensor in memory order
            inner = x.flags.c_contiguous or x.flags.f_contiguous
            out = (_half_inner_prod(rows) if inner else _half_running_prod(rows)).reshape(())
            return out.reshape((1,) * x.ndim) if keepdim else out
        moved = np.moveaxis(x, dim, -1)
        rows = moved.reshape(int(np.prod(moved.shape[:-1])), x.shape[dim])
        inner = x.strides[dim] == x.itemsize
        out = (_half_inner_prod(rows) if inner else _half_running_prod(rows)).reshape(moved.shape[:-1])
        return np.expand_dims(out, dim) if keepdim else out
    finally:
        restore_fp_errors(token)


def _half_running_prod(rows: np.ndarray) -> np.ndarray:
    out = np.ones(rows.shape[0], _HALF)
    for k in range(rows.shape[1]):
        np.multiply(out, rows[:, k], out=out)
    return out


def _half_inner_prod(rows: np.ndarray) -> np.ndarray:
    """Each row's product in the order of PyTorch's vectorised inner reduction: four vector
    accumulators of ``lanes`` halves take the row in blocks of ``4 * lanes``; they are multiplied
    pairwise ((a0 a1)(a2 a3)), the lanes of the result in turn, then the tail element by element."""
    lanes = _half_lanes()
    n_rows, n = rows.shape
    block = 4 * lanes
    count = n // block
    out = np.ones(n_rows, _HALF)
    if count:
        blocks = rows[:, : count * block].reshape(n_rows, count, 4, lanes)
        acc = blocks[:, 0].copy()
        for i in range(1, count):
            np.multiply(acc, blocks[:, i], out=acc)
        lane = np.multiply(np.multiply(acc[:, 0], acc[:, 1]), np.multiply(acc[:, 2], acc[:, 3]))
        out = lane[:, 0].copy()
        for j in range(1, lanes):
            np.multiply(out, lane[:, j], out=out)
    for k in range(count * block, n):
        np.multiply(out, rows[:, k], out=out)
    return out


_LANES: list[int] = []


def _half_lanes() -> int:
    """Halves per vector in PyTorch's CPU kernels: 32 where it runs its AVX-512 kernels, else 16
    (``ATEN_CPU_CAPABILITY`` overrides its choice, as it does PyTorch's). Read once, on first use."""
    if not _LANES:
        import os

        choice = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
        if not choice:
            try:
                with open("/proc/cpuinfo") as f:
                    flags = next((line.split() for line in f if line.startswith("flags")), [])
            except OSError:
                flags = []
            avx512 = {"avx512vl", "avx512bw", "avx512dq", "fma"} <= set(flags)
            choice = "avx512" if avx512 else "avx2"
        _LANES.append(32 if choice.startswith("avx512") else 16)
    return _LANES[0]


def _exclusive_cumprod(x: Tensor, dim: int) -> Tensor:
    """``out[k] = prod_{i < k} x[i]`` along ``dim`` (no division: exact with zeros)."""
    n = x._data.shape[dim]
    ones_shape = list(x._data.shape)
    ones_shape[dim] = 1
    ones = _const(np.ones(ones_shape, x._data.dtype))
    if n == 1:
        return ones
    return cumprod(_S.cat(ones, x.narrow(dim, 0, n - 1), dim), dim, None)


def prod_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """Gradient of prod along ``dim`` (grad and result keep the reduced dim)."""
    x = self._data
    if x.size == 0:
        return grad.expand(x.shape) * 0
    if result._data.dtype != x.dtype:
        result, grad = result.to(FROM_NUMPY[x.dtype]), grad.to(FROM_NUMPY[x.dtype])
    if not (x == 0).any():
        return grad * result / self
    # The product of all the others, without dividing: left and right exclusive products.
    left = _exclusive_cumprod(self, dim)
    right = flip(_exclusive_cumprod(flip(self, (dim,)), dim), (dim,))
    return grad * (left * right)


def _prod_all_grad(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    shape = self._data.shape
    if not shape:
        return grad
    flat = self.reshape(-1)
    return prod_backward(grad.reshape(1), flat, result.reshape(1), 0).reshape(shape)


def _prod_dim_grad(grad: Tensor, self: Tensor, result: Tensor, dim: int, keepdim: bool) -> Tensor:
    shape = self._data.shape
    if not shape:
        return grad
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    return prod_backward(grad, self, result, dim)


prod_all = Op("prod", lambda x, dtype: _prod(x, None, False, dtype), node="ProdBackward0", params=("dtype",),
              grads=(_prod_all_grad,))
prod_dim = Op("prod", lambda x, dim, keepdim, dtype: _prod(x, dim, keepdim, dtype), node="ProdBackward1",
              params=("dim", "keepdim", "dtype"), grads=(_prod_dim_grad,))


# -- max / min, argmax / argmin, amax / amin --------------------------------------------------


def _evenly_distribute(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """PyTorch's rule for max()/min()/median() over all elements: ties share the gradient equally
    (a NaN result shares it among the NaN elements)."""
    x, value = self._data, result._data
    mask = np.isnan(x) if x.dtype.kind == "f" and np.isnan(value) else x == value
    # Selected (PyTorch fills zeros, then the mask): an inf/NaN gradient reaches only the ties.
    return _E.where(_make(mask), grad / builtins.max(int(mask.sum()), 1), 0.0)


def _check_nonempty(x: np.ndarray, name: str) -> None:
    if x.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )


def _max_all(x: np.ndarray) -> np.ndarray:
    _check_nonempty(x, "max")
    return np.asarray(np.max(x))


def _min_all(x: np.ndarray) -> np.ndarray:
    _check_nonempty(x, "min")
    return np.asarray(np.min(x))


max_all = Op("max", _max_all, node="MaxBackward1", grads=(_evenly_distribute,))
min_all = Op("min", _min_all, node="MinBackward1", grads=(_evenly_distribute,))


def _select_along(pick: Any) -> Any:
    def forward(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        if x.shape[dim] == 0:
            raise IndexError(f"{pick.__name__[3:]}(): Expected reduction dim {dim} to have non-zero size.")
        idx = pick(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64, copy=False)

    return forward


def value_selecting_backward(grad: Tensor, indices: Tensor, shape: tuple[int, ...], dim: int, keepdim: bool) -> Tensor:
    """Gradient of a reduction that picked one element per slice (max/min/median/mode along dim)."""
    if not shape:
        return grad
    index = indices._data
    if not keepdim:
        grad = grad.unsqueeze(dim)
        index = np.expand_dims(index, dim)
    return put_along(grad, shape, dim, index)


def _put_along(grad: np.ndarray, shape: tuple[int, ...], dim: int, index: np.ndarray) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    np.put_along_axis(out, index, grad, axis=dim)
    return out


# The pair behind value-selecting backwards: ``put_along`` writes a gradient at the picked positions
# (indices are distinct along ``dim``), ``take_along`` reads them back; each is the other's backward.
put_along: Op = Op("put_along", _put_along, node="ScatterBackward0", params=("shape", "dim", "index"),
               grads=(lambda grad, dim, index: take_along(grad, dim, index),))
take_along: Op = Op("take_along", lambda x, dim, index: np.take_along_axis(x, index, axis=dim), node="GatherBackward0",
                params=("dim", "index"),
                grads=(lambda grad, self_shape, dim, index: put_along(grad, self_shape, dim, index),))


def _selecting_grad(grads: Any, result1: Tensor, self_shape: tuple[int, ...], dim: int, keepdim: bool) -> tuple[Tensor]:
    return (value_selecting_backward(grads[0], result1, self_shape, dim, keepdim),)


max_dim = Op("max", _select_along(np.argmax), node="MaxBackward0", params=("dim", "keepdim"), outputs=2,
             saved={"dim": "dim", "keepdim": "keepdim", "self_sym_sizes": "self_sym_sizes", "indices": "result1"},
             differentiable_outputs=(True, False), grads=_selecting_grad)
min_dim = Op("min", _select_along(np.argmin), node="MinBackward0", params=("dim", "keepdim"), outputs=2,
             saved={"dim": "dim", "keepdim": "keepdim", "self_sym_sizes": "self_sym_sizes", "indices": "result1"},
             differentiable_outputs=(True, False), grads=_selecting_grad)

argmax = Op("argmax", lambda x, dim, keepdim: _arg_reduce(np.argmax, x, dim, keepdim), params=("dim", "keepdim"))
argmin = Op("argmin", lambda x, dim, keepdim: _arg_reduce(np.argmin, x, dim, keepdim), params=("dim", "keepdim"))


def _arg_reduce(fn: Any, x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    if x.dtype == np.bool_:
        raise RuntimeError(f"{fn.__name__}(): does not support bool input")
    if x.size == 0:  # PyTorch's errors, not NumPy's ValueError
        if dim is None:
            raise IndexError(f"{fn.__name__}(): Expected reduction dim to be specified for input.numel() == 0.")
        if x.ndim and x.shape[dim] == 0:
            raise IndexError(f"{fn.__name__}(): Expected reduction dim {dim} to have non-zero size.")
    if dim is None:
        out = np.asarray(fn(x))
        return out.reshape((1,) * x.ndim) if keepdim else out
    return np.asarray(fn(x, axis=dim, keepdims=keepdim))


def _extreme(fn: Any, name: str) -> Any:
    def forward(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
        if dims is None and x.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        for d in dims if dims is not None else range(x.ndim):
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return np.asarray(fn(x, axis=dims, keepdims=keepdim))

    return forward


def _extreme_grad(grad: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """amax/amin: tied elements share the gradient evenly (PyTorch's rule)."""
    shape = self._data.shape
    grad = expand_reduced(grad, shape, dim, keepdim)
    mask = self == expand_reduced(result, shape, dim, keepdim)
    count = mask.sum() if dim is None else mask.sum(dim, keepdim=True)
    return grad / count * mask


amax = Op("amax", _extreme(np.max, "amax"), node="AmaxBackward0", params=("dim", "keepdim"), grads=(_extreme_grad,),
           variants=("function", "method"), signature="dim=(), keepdim=False", convert={"dim": "dims"})
amin = Op("amin", _extreme(np.min, "amin"), node="AminBackward0", params=("dim", "keepdim"), grads=(_extreme_grad,),
           variants=("function", "method"), signature="dim=(), keepdim=False", convert={"dim": "dims"})


# -- var, std, var_mean, std_mean -------------------------------------------------------------

VAR_DTYPE_ERROR = "{} only support floating point and complex dtypes"


def _dof_warning(name: str) -> None:
    warnings.warn(
        f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
        "(input numel divided by output numel).", UserWarning, stacklevel=4,
    )


def _sums_pairwise(x: np.ndarray, dims: Any) -> bool:
    """Whether NumPy sums ``x`` over ``dims`` pairwise: a reduction along its contiguous innermost
    run (over other axes it adds row after row in the array's dtype)."""
    return x.flags.c_contiguous and (dims is None or x.ndim <= 1 or tuple(dims) == (x.ndim - 1,))


def _var(x: np.ndarray, dims: Any, correction: Any, keepdim: bool, name: str = "var", sqrt: bool = False) -> np.ndarray:
    if x.dtype.kind not in "fc":
        raise RuntimeError(VAR_DTYPE_ERROR.format(name if name.endswith("_mean") else "std and var"))
    n = _count(x.shape, dims)
    dof = builtins.max(0, n - correction)
    if dof <= 0:
        _dof_warning(name)
    out_dtype = x.dtype
    # PyTorch's CPU var/std accumulate in double (WelfordOps<T, double>). A float32 sum that NumPy
    # does pairwise is as close as float32 can hold, so only the other layouts pay for it.
    upcast = out_dtype == _HALF or out_dtype == np.float32 and not _sums_pairwise(x, dims)
    if upcast:
        x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = np.mean(x, axis=dims, keepdims=True) if n else np.zeros(_keepdim_shape(x.shape, dims), x.dtype)
        centered = np.subtract(x, mean, out=x if upcast else None)  # the upcast copy is ours to overwrite
        if type(centered) is np.ndarray:
            np.multiply(centered, centered, out=centered)
        else:  # a 0-d difference comes back as a NumPy scalar
            centered = centered * centered
        sq = np.add.reduce(centered, axis=dims, keepdims=keepdim)  # type: ignore[call-overload]
        out = np.true_divide(sq, dof)
        # std takes the root before the cast: a half variance may overflow where its root does not.
        return np.asarray(np.sqrt(out) if sqrt else out, out_dtype)


def _var_backward(grad: Tensor, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    dims = dim
    shape = self._data.shape
    dof = builtins.max(0, _count(shape, dims) - correction)
    mean = self.mean() if dims is None else self.mean(dims, keepdim=True)
    with np.errstate(divide="ignore"):
        scale = np.float64(2.0) / dof if dof else np.inf
    return expand_reduced(grad, shape, dims, keepdim) * (self - mean) * float(scale)


def _std_backward(grad: Tensor, self: Tensor, result: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    grad_var = (grad / (result * 2)).masked_fill(result == 0, 0.0)
    return _var_backward(grad_var, self, dim, correction, keepdim)


def _std(x: np.ndarray, dims: Any, correction: Any, keepdim: bool) -> np.ndarray:
    return _var(x, dims, correction, keepdim, "std", sqrt=True)


var = Op("var", _var, node="VarBackward0", params=("dim", "correction", "keepdim"), grads=(_var_backward,))
std = Op("std", _std, node="StdBackward0", params=("dim", "correction", "keepdim"), grads=(_std_backward,))


def _var_mean(x: np.ndarray, dims: Any, correction: Any, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    v = _var(x, dims, correction, keepdim, "var_mean")
    return v, _mean(x, dims, keepdim)


def _std_mean(x: np.ndarray, dims: Any, correction: Any, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    v = _var(x, dims, correction, keepdim, "std_mean", sqrt=True)
    return v, _mean(x, dims, keepdim)


def _mean_backward(grad: Tensor, shape: tuple[int, ...], dims: Any, keepdim: bool) -> Tensor:
    return expand_reduced(grad, shape, dims, keepdim) / builtins.max(_count(shape, dims), 1)


def _var_mean_grad(grads: Any, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> tuple[Tensor]:
    g_var, g_mean = grads
    shape = self._data.shape
    return (_var_backward(g_var, self, dim, correction, keepdim) + _mean_backward(g_mean, shape, dim, keepdim),)


def _std_mean_grad(grads: Any, self: Tensor, result0: Tensor, dim: Any, correction: Any,
                   keepdim: bool) -> tuple[Tensor]:
    g_std, g_mean = grads
    g = _std_backward(g_std, self, result0, dim, correction, keepdim)
    return (g + _mean_backward(g_mean, self._data.shape, dim, keepdim),)


var_mean = Op("var_mean", _var_mean, node="VarMeanBackward0", params=("dim", "correction", "keepdim"), outputs=2,
              grads=_var_mean_grad)
std_mean = Op("std_mean", _std_mean, node="StdMeanBackward0", params=("dim", "correction", "keepdim"), outputs=2,
              grads=_std_mean_grad)


# -- logsumexp --------------------------------------------------------------------------------


def _logsumexp(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
    if x.size == 0:
        return np.asarray(np.log(np.sum(np.exp(x), axis=dims, keepdims=keepdim)), x.dtype)
    shift = np.max(x, axis=dims, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0).astype(x.dtype, copy=False)
    with np.errstate(divide="ignore"):
        e = np.exp(x - shift)
        # As PyTorch: the exponentials are summed in the accumulate type (float for half).
        total = _half_reduce(np.add.reduce, e, dims, True) if x.dtype == _HALF else np.sum(e, axis=dims, keepdims=True)
        out = np.log(total) + shift
    if not keepdim:
        out = out.reshape(_reduced_shape(x.shape, dims))
    return np.asarray(out, x.dtype)


def _reduced_shape(shape: tuple[int, ...], dims: Any) -> tuple[int, ...]:
    if dims is None:
        return ()
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _logsumexp_grad(grad: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    shape = self._data.shape
    return expand_reduced(grad, shape, dim, keepdim) * (self - expand_reduced(result, shape, dim, keepdim)).exp()


logsumexp = Op("logsumexp", quiet_forward(_logsumexp), node="LogsumexpBackward0", params=("dim", "keepdim"), dtype="float_unary",
               grads=(_logsumexp_grad,),
               variants=("function", "method"), signature="dim, keepdim=False", convert={"dim": "dims"})


# -- norms: vector_norm (PyTorch's rules for every order), norm's dtype form, dist ------------
def _vector_norm(x: np.ndarray, ord: float, dims: Any, keepdim: bool) -> np.ndarray:  # noqa: A002
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(x.dtype)}"
        )
    axis = _axis(dims)
    # PyTorch's opmath type: a half norm is computed in float (its squares overflow half at 256).
    a = np.abs(x.astype(np.float32) if x.dtype == _HALF else x)
    if ord == 2:
        out = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    elif ord == np.inf:
        out = np.max(a, axis=axis, keepdims=keepdim)
    elif ord == -np.inf:
        out = np.min(a, axis=axis, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(a != 0, axis=axis, keepdims=keepdim)
    elif ord == 1:
        out = np.sum(a, axis=axis, keepdims=keepdim)
    else:
        out = np.sum(a**ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, dtype=x.dtype)


vector_norm = Op("linalg_vector_norm", quiet_forward(_vector_norm), node="LinalgVectorNormBackward0",
                 params=("ord", "dim", "keepdim"),
                 grads=(lambda grad, self, result, ord, dim, keepdim:  # noqa: A006
                        vector_norm_backward(grad, self, result, ord, dim, keepdim),))


def vector_norm_backward(grad: Tensor, self: Tensor, result: Tensor, ord: float, dim: Any,  # noqa: A002
                         keepdim: bool) -> Tensor:
    """Gradient of ``linalg.vector_norm`` for any order, as PyTorch defines it at zeros and ties."""
    shape = tuple(self._data.shape)
    if not keepdim and shape:
        kshape = _keepdim_shape(shape, dim)
        grad, result = grad.reshape(kshape), result.reshape(kshape)
    if ord == 0:
        return None  # type: ignore[return-value]  # PyTorch: no gradient (the input's .grad stays None)
    if ord == 1:
        return grad * self.sign()
    if ord == 2:
        # PyTorch masks x / norm, not the gradient: an inf or NaN gradient at a zero norm gives NaN.
        # (The divisor is 1 at a zero norm only to keep NumPy from warning about 0 / 0.)
        zero = result == 0
        return grad * (self / _E.where(zero, 1.0, result)).masked_fill(zero, 0.0)
    if ord in (np.inf, -np.inf):
        a = self.abs()
        mask = (a == result) | _const(np.isnan(a._data))
        count = mask.sum() if dim is None else mask.sum(dim, keepdim=True)
        return self.sign() * (grad / count * mask)
    if ord < 1:
        scaled = (self.sign() * self.abs() ** (ord - 1)).masked_fill(self == 0, 0.0)
        return scaled * grad * result ** (1 - ord)
    if ord < 2:
        scaled = self.sign() * self.abs() ** (ord - 1)
    else:
        scaled = self * self.abs() ** (ord - 2)
    return scaled * (grad / result ** (ord - 1)).masked_fill(result == 0, 0.0)


def norm_order(p: Any, dim: Any) -> float:
    """``Tensor.norm``'s ``p`` as a vector-norm order: numbers, inf, and 'fro' over at most two dims."""
    if p is None:
        return 2.0
    if isinstance(p, str):
        dims = () if dim is None else (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if p == "fro" and len(dims) <= 2:
            return 2.0
        if p in ("fro", "nuc"):
            if p == "nuc" and len(dims) in (0, 2):
                raise NotImplementedError("norm(p='nuc') (the nuclear norm) is not supported by retrograd")
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return float(p)


def norm_dtype(x: Tensor, dtype: Any) -> np.dtype:
    """``norm(..., dtype=)``: the dtype to compute in; a narrowing cast is refused as PyTorch does."""
    from .._dtype import to_dtype

    target = to_dtype(dtype).np
    if target.itemsize < x._data.dtype.itemsize or x._data.dtype.kind in "fc" and target.kind not in "fc":
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({scalar_type_name(x._data.dtype)}) should be convertible "
            f"without narrowing to the specified dtype ({scalar_type_name(target)})"
        )
    return target


# With ``dtype=``: the input is cast inside the op (one node, as PyTorch); the engine casts the
# gradient back to the input's dtype.
vector_norm_dtype = Op(
    "linalg_vector_norm",
    quiet_forward(lambda x, ord, dim, keepdim, dtype: _vector_norm(x.astype(dtype), ord, dim, keepdim)),  # noqa: A006
    node="LinalgVectorNormBackward0", params=("ord", "dim", "keepdim", "dtype"),
    grads=(lambda grad, self, result, ord, dim, keepdim, dtype:  # noqa: A006
           vector_norm_backward(grad, self.to(FROM_NUMPY[np.dtype(dtype)]), result, ord, dim, keepdim),))


def _dist(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    if a.dtype.kind == "b":
        raise RuntimeError(_E.BOOL_SUB_ERROR)
    if a.dtype.kind not in "fc":
        raise RuntimeError(
            f"norm(): input dtype should be either floating point or complex. Got {scalar_type_name(a.dtype)} instead."
        )
    return _vector_norm(np.subtract(a, b), p, None, False)


def _dist_grad(grad: Tensor, self: Tensor, other: Tensor, result: Tensor, p: float) -> tuple[Tensor, Tensor]:
    if p == 0:
        zeros = _zeros(result._data.shape, result._data.dtype)
        return zeros, zeros
    g = vector_norm_backward(grad, self - other, result, p, None, False)
    return g, -g


dist = Op("dist", quiet_forward(_dist), node="DistBackward0", inputs=("self", "other"), params=("p",), dtype="promote",
          grads=_dist_grad, variants=("function", "method"), signature="other, p=2",
          convert={"other": "tensor", "p": "float"})


# -- flip (private: reversed cumulative sums and products in backward rules) ------------------

flip: Op = Op("flip", lambda x, dims: np.flip(x, dims).copy(), node="FlipBackward0", params=("dims",),
          grads=(lambda grad, dims: flip(grad, dims),))


def _reverse_cumsum(x: Tensor, dim: int) -> Tensor:
    """``out[k] = sum_{j >= k} x[j]`` along ``dim``."""
    return flip(cumsum(flip(x, (dim,)), dim, None), (dim,))


# -- cumsum, cumprod --------------------------------------------------------------------------


# PyTorch's CPU cumsum/cumprod carry the running value in ``at::acc_type<T, false>``: float for
# half, double for float (the input is first cast to the output dtype).
_CUMULATIVE_ACC: dict[np.dtype, np.dtype] = {_HALF: np.dtype(np.float32), np.dtype(np.float32): np.dtype(np.float64)}


def _cumulative(fn: Any) -> Any:
    def forward(x: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64
        if x.ndim == 0:
            return x.astype(dtype) if dtype is not None else x.copy()
        out = x.dtype if dtype is None else np.dtype(dtype)
        acc = _CUMULATIVE_ACC.get(out)
        if acc is not None:  # one cast and an in-place scan: faster than NumPy's buffered dtype= loop
            work = x.astype(out, copy=False).astype(acc)
            fn(work, axis=dim, out=work)
            return work.astype(out)
        return np.asarray(fn(x, axis=dim, dtype=dtype))

    return forward


def _cumsum_grad(grad: Tensor, self_shape: tuple[int, ...], dim: int) -> Tensor:
    if not self_shape or self_shape[dim] <= 1:
        return grad
    return _reverse_cumsum(grad, dim)


cumsum = Op("cumsum", _cumulative(np.cumsum), node="CumsumBackward0", params=("dim", "dtype"), saved=("dim",),
            grads=(_cumsum_grad,))


def _cumprod_grad(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """d/dx_k of sum_j grad_j cumprod(x)_j = sum_{j>=k} grad_j prod_{i<=j, i!=k} x_i.

    Without zeros this is reverse_cumsum(grad * out) / x. With zeros, division is wrong, and so
    is any shortcut that drops terms that are zero now but whose derivative is not (double
    backward needs them): the products are formed explicitly, O(n^2) per slice, as PyTorch does.
    """
    x = self._data
    if x.ndim == 0 or x.shape[dim] == 0:
        return grad
    if result._data.dtype != x.dtype:
        result = result.to(FROM_NUMPY[x.dtype])
    if not (x == 0).any():
        return _reverse_cumsum(grad * result, dim) / self
    n = x.shape[dim]
    xs, gs = self.transpose(dim, -1), grad.transpose(dim, -1)  # (..., n)
    k, i = np.arange(n)[:, None], np.arange(n)[None, :]
    # between[..., k, j] = prod_{k < i <= j} x_i: a cumprod of x with the entries i <= k set to 1.
    between = cumprod(_E.where(_const(i > k), xs.unsqueeze(-2), 1.0), xs.dim(), None)
    terms = _const(i >= k)
    first_order = not STATE.grad_enabled
    if first_order:
        # First order only (as PyTorch's O(n) path): a product that holds a zero contributes
        # exactly 0, even for an inf/NaN upstream gradient. Double backward keeps such terms:
        # their derivative in the zero itself is not 0.
        terms = _const(terms._data & (between._data != 0))
    after = _E.where(terms, between * gs.unsqueeze(-2), 0.0).sum(-1)  # sum over j >= k
    out = (_exclusive_cumprod(xs, xs.dim() - 1) * after).transpose(dim, -1)
    if first_order:
        # Past the first zero every product holds it: the gradient is exactly 0 there.
        seen = np.cumsum(x == 0, axis=dim)
        past_first = (seen > 1) | ((seen == 1) & (x != 0))
        out = _E.where(_const(past_first), 0.0, out)
    return out


cumprod = Op("cumprod", _cumulative(np.cumprod), node="CumprodBackward0", params=("dim", "dtype"),
             grads=(_cumprod_grad,))


# -- sort, argsort, topk, kthvalue, median, mode -----------------------------------------------


def sort_indices(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``dim``; NaN sorts as the largest value (as PyTorch)."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    # Stable descending: sort the reversed array ascending, then reverse the order back.
    n = x.shape[dim]
    idx = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return np.flip(n - 1 - idx, dim)


def _sort(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = sort_indices(x, dim, descending)
    return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64, copy=False)


def _scatter_back(grads: Any, result1: Tensor, self_shape: tuple[int, ...], dim: int) -> tuple[Tensor]:
    return (value_selecting_backward(grads[0], result1, self_shape, dim, True),)


sort = Op("sort", _sort, node="SortBackward0", params=("dim", "descending"), outputs=2,
          differentiable_outputs=(True, False), grads=_scatter_back)
sort_stable = Op("sort", lambda x, dim, descending, stable: _sort(x, dim, descending), node="SortBackward1",
                 params=("dim", "descending", "stable"), outputs=2, differentiable_outputs=(True, False),
                 grads=_scatter_back)


def _argsort(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros((), np.int64)
    return sort_indices(x, dim, descending).astype(np.int64, copy=False)


argsort = Op("argsort", _argsort, params=("dim", "descending"))


def _topk(x: np.ndarray, k: int, dim: int, largest: bool, sorted: bool) -> tuple[np.ndarray, np.ndarray]:  # noqa: A002
    if x.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = x.shape[dim] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if x.ndim == 0:
        return (x.copy(), np.zeros((), np.int64)) if k else (x.reshape(0)[:0], np.zeros(0, np.int64))
    idx = np.take(sort_indices(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64, copy=False)


topk = Op("topk", _topk, node="TopkBackward0", params=("k", "dim", "largest", "sorted"), outputs=2,
          differentiable_outputs=(True, False),
          grads=lambda grads, result1, self_shape, dim: _scatter_back(grads, result1, self_shape, dim))


def _pick(x: np.ndarray, idx: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    values = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx.astype(np.int64, copy=False)


def _refuse_bool(kernel: str, x: np.ndarray) -> None:
    if x.dtype.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _kthvalue(x: np.ndarray, k: int, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    _refuse_bool("kthvalue_cpu", x)
    size = x.shape[dim] if x.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(sort_indices(x, dim, False), [k - 1], axis=dim)
    return _pick(x, idx, dim, keepdim)


kthvalue = Op("kthvalue", _kthvalue, node="KthvalueBackward0", params=("k", "dim", "keepdim"), outputs=2,
              differentiable_outputs=(True, False),
              grads=lambda grads, result1, self_shape, dim, keepdim: _selecting_grad(grads, result1, self_shape,
                                                                                   dim, keepdim))


def _median_dim(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    _refuse_bool("median_out", x)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _check_nonempty_dim(x, dim, "median")
    n = x.shape[dim]
    order = sort_indices(x, dim, False)
    idx = np.take(order, [(n - 1) // 2], axis=dim)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        has_nan = nan.any(axis=dim, keepdims=True)
        if has_nan.any():  # a NaN makes the median NaN, at the first NaN's index
            idx = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), idx)
    return _pick(x, idx, dim, keepdim)


def _median_all(x: np.ndarray) -> np.ndarray:
    _refuse_bool("median_cpu", x)
    if x.size == 0:
        return np.asarray(np.nan, x.dtype) if x.dtype.kind == "f" else np.zeros((), x.dtype)
    flat = x.reshape(-1)
    if x.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, x.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


median_all = Op("median", _median_all, node="MedianBackward0", grads=(_evenly_distribute,))
median_dim = Op("median", _median_dim, node="MedianBackward1", params=("dim", "keepdim"), outputs=2,
                differentiable_outputs=(True, False), grads=_selecting_grad)


def _nanmedian_all(x: np.ndarray) -> np.ndarray:
    _refuse_bool("median_cpu", x)
    flat = x.reshape(-1)
    if x.dtype.kind == "f":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.asarray(np.nan, x.dtype) if x.dtype.kind == "f" else np.zeros((), x.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


nanmedian_all = Op("nanmedian", _nanmedian_all, node="NanmedianBackward0", grads=(_evenly_distribute,))


def _nanmedian_dim(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """The lower median of each slice's non-NaN values (NaN only where a slice is all NaN)."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _refuse_bool("median_out", x)
    _check_nonempty_dim(x, dim, "nanmedian")
    order = sort_indices(x, dim, False)  # NaN sorts last
    valid = (~np.isnan(x)).sum(axis=dim, keepdims=True) if x.dtype.kind == "f" else x.shape[dim]
    position = np.maximum(valid - 1, 0) // 2
    if np.ndim(position) == 0:
        position = np.full(_keepdim_shape(x.shape, (dim,)), position)
    return _pick(x, np.take_along_axis(order, position, axis=dim), dim, keepdim)


nanmedian_dim = Op("nanmedian", _nanmedian_dim, node="NanmedianBackward1", params=("dim", "keepdim"), outputs=2,
                   differentiable_outputs=(True, False), grads=_selecting_grad)


def _mode(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """Most frequent value along ``dim`` (the smallest among equally frequent ones), at its last index."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _check_nonempty_dim(x, dim, "mode")
    moved = np.moveaxis(x, dim, -1)
    lead = moved.shape[:-1]
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    order = np.argsort(rows, axis=-1, kind="stable")
    values = np.take_along_axis(rows, order, axis=-1)
    pos = np.broadcast_to(np.arange(n), values.shape)
    starts = np.ones(values.shape, bool)
    starts[:, 1:] = values[:, 1:] != values[:, :-1]
    run_start = np.maximum.accumulate(np.where(starts, pos, 0), axis=-1)
    ends = np.ones(values.shape, bool)
    ends[:, :-1] = starts[:, 1:]
    run_end = np.flip(np.minimum.accumulate(np.flip(np.where(ends, pos, n), -1), axis=-1), -1)
    count = run_end - run_start + 1
    best = np.argmax(count, axis=-1)  # first (smallest) value among the most frequent ones
    last = run_end[np.arange(rows.shape[0]), best]  # stable sort: the run's last is the largest index
    idx = order[np.arange(rows.shape[0]), last].reshape(lead)
    vals = rows[np.arange(rows.shape[0]), idx.reshape(-1)].reshape(lead)
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx.astype(np.int64, copy=False)


mode = Op("mode", _mode, node="ModeBackward0", params=("dim", "keepdim"), outputs=2,
          differentiable_outputs=(True, False), grads=_selecting_grad)


# -- all, any, count_nonzero, nansum -----------------------------------------------------------


def _logical_reduce(fn: Any) -> Any:
    def forward(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
        out = np.asarray(fn(x, axis=dims, keepdims=keepdim))
        return out.astype(np.uint8) if x.dtype == np.uint8 else out

    return forward


all_op = Op("all", _logical_reduce(np.all), params=("dim", "keepdim"),
            variants=("function", "method"), signature="dim=None, keepdim=False", convert={"dim": "dims"})
any_op = Op("any", _logical_reduce(np.any), params=("dim", "keepdim"),
            variants=("function", "method"), signature="dim=None, keepdim=False", convert={"dim": "dims"})
count_nonzero = Op("count_nonzero", lambda x, dims: np.asarray(np.count_nonzero(x, axis=dims), np.int64),
                   params=("dim",), variants=("function", "method"), signature="dim=None", convert={"dim": "dims"})


def _nansum(x: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    elif x.dtype == _HALF if dtype is None else np.dtype(dtype) == _HALF:
        return _half_reduce(np.nansum, x, dims, keepdim)
    return np.asarray(np.nansum(x, axis=dims, keepdims=keepdim, dtype=dtype))


nansum = Op("nansum", _nansum, node="NansumBackward0", params=("dim", "keepdim", "dtype"),
            grads=(lambda grad, self, dim, keepdim:
                   expand_reduced(grad, self._data.shape, dim, keepdim) * _const(~np.isnan(self._data)),))
