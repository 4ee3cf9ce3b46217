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

from .._dtype import FROM_NUMPY, REDUCED_FLOATS, scalar_type_name
from ..autograd.fp_errors import ignore_fp_errors, quiet_forward, restore_fp_errors
from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from . import elementwise as _E
from . import shape as _S
from .elementwise import _cj
from .op import Op, with_array_rule

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


def _expand_reduced_array(grad: np.ndarray, self_shape: tuple[int, ...], dim: tuple[int, ...] | None,
                          keepdim: bool) -> np.ndarray:
    """``expand_reduced`` on arrays: the rule of a sum over dims when there is no graph to record."""
    if not keepdim and self_shape:
        grad = grad.reshape(_keepdim_shape(self_shape, dim))
    return _S._expand(grad, self_shape)  # type: ignore[no-any-return]


def _expand_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``grad.expand(shape)`` for a shape that is already a tuple of ints (an input's shape kept
    for a rule): the op's own call path, without the method's argument parsing.

    >>> import retrograd as rg
    >>> _expand_to(rg.tensor(2.0), (2, 3)).tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """
    return _S.expand.unary(grad, shape)  # type: ignore[no-any-return]


def _axis(dims: tuple[int, ...] | None) -> Any:
    return dims if dims is None else tuple(dims)


def _const(array: np.ndarray) -> Tensor:
    """A constant tensor made from data inside a backward rule (no gradient flows into it)."""
    return _make(array)


def _zeros(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return _make(np.zeros(shape, dtype))


def _refuse_complex(kernel: str, x: np.ndarray) -> None:
    """PyTorch's error for a complex input to an op that orders values (NumPy orders complex
    numbers lexicographically; PyTorch's kernels have no complex dtype)."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(x.dtype)}\'')


def _refuse_complex_input(name: str, x: np.ndarray) -> None:
    """The same refusal where PyTorch checks it before dispatch (``max(): does not support complex input``)."""
    if x.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")


# What PyTorch's CPU sort and topk say for a complex input (its message starts with a space).
SORT_COMPLEX = " Sort does not support complex dtypes on CPU"


def _check_nonempty_dim(x: np.ndarray, dim: int, name: str) -> None:
    if x.ndim and x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


# -- sum, mean --------------------------------------------------------------------------------


# PyTorch's CPU accumulate types (``at::acc_type<T, false>``): a half tensor is summed in float and
# cast back; NumPy would add up a half reduction over a non-innermost axis in half.
_HALF = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _half_reduce(fn: Any, x: np.ndarray, dims: Any, keepdim: bool, out: np.dtype = _HALF) -> np.ndarray:
    """A sum-like reduction of half (or bfloat16: ``out``) values, or into such a result,
    accumulated in float32."""
    return np.asarray(fn(x.astype(out, copy=False), axis=dims, keepdims=keepdim, dtype=np.float32)).astype(out)


def _sum(x: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    elif (x.dtype if dtype is None else np.dtype(dtype)) in REDUCED_FLOATS:
        return _half_reduce(np.add.reduce, x, _axis(dims), keepdim, x.dtype if dtype is None else np.dtype(dtype))
    elif dtype is None and _needs_cascade(x, dims):
        return _cascade_sum(x, dims[0], keepdim)
    # np.add.reduce is np.sum without its Python-level wrapper (a few µs per call on small arrays).
    return np.asarray(np.add.reduce(x, axis=_axis(dims), keepdims=keepdim, dtype=dtype))  # type: ignore[call-overload]


def _sum_all(x: np.ndarray, dtype: Any) -> Any:
    if dtype is None and x.dtype.kind in "fc" and x.dtype != _HALF:
        return np.add.reduce(x, axis=None)  # ``x.sum()``: one NumPy call (the path wraps its scalar)
    return _sum(x, None, False, dtype)


sum_all = Op("sum", _sum_all, node="SumBackward0", params=("dtype",),
             grads=(with_array_rule(lambda grad, self_shape: _expand_to(grad, self_shape),
                                    lambda grad, self_shape: _S._expand(grad, self_shape), "multilinear"),), jvp="linear")

sum_dim = Op("sum", _sum, node="SumBackward1", params=("dim", "keepdim", "dtype"),
             grads=(with_array_rule(lambda grad, self_shape, dim, keepdim: expand_reduced(grad, self_shape, dim, keepdim),
                                    _expand_reduced_array, "multilinear"),),
             jvp="linear")


def _check_mean_dtype(x: np.ndarray) -> None:
    if x.dtype.kind not in "fcV":
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
    if x.dtype in REDUCED_FLOATS:  # (float32 accumulation: NumPy keeps bfloat16 in bfloat16)
        return np.asarray(np.mean(x, axis=_axis(dims), keepdims=keepdim, dtype=np.float32), dtype=x.dtype)
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
              grads=(lambda grad, self_shape: grad.expand(self_shape) / _count(self_shape, None),), jvp="linear")

mean_dim = Op("mean", _mean, node="MeanBackward1", params=("dim", "keepdim"),
              saved=("dim", "keepdim", "self_sym_sizes", "self_sym_numel"),
              grads=(lambda grad, self_shape, dim, keepdim:
                     expand_reduced(grad, self_shape, dim, keepdim) / _count(self_shape, dim),), jvp="linear")


# -- sum_to_size: how the engine reduces a broadcast gradient ---------------------------------


def _sum_to_dims(x_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dims summed to reduce ``x_shape`` to ``shape`` (the leading ones, and those that become
    1), or PyTorch's error when ``shape`` does not expand to ``x_shape``."""
    lead = len(x_shape) - len(shape)
    if lead > 0 and x_shape[lead:] == shape:  # the common case: leading dims only (a bias's gradient)
        return tuple(range(lead))
    if lead < 0 or any(s != 1 and s != xs for s, xs in zip(shape, x_shape[lead:], strict=False)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(x_shape)}}}.")
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x_shape[lead + i] != 1)


def _sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = x.ndim - len(shape)
    if lead > 0 and x.shape[lead:] == shape:  # the common case: summing leading dims away (a bias)
        return np.add.reduce(x, axis=0 if lead == 1 else tuple(range(lead)))  # type: ignore[no-any-return]
    axes = _sum_to_dims(x.shape, shape)
    if axes:
        x = np.add.reduce(x, axis=axes, keepdims=True)
    return x.reshape(shape)


def sum_to_recorded(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``x.sum_to_size(shape)`` on a graph being recorded, with PyTorch's nodes: ``sum()`` for a
    0-d target, else a keepdim sum (``SumBackward1``) then, past leading dims, a view
    (``ViewBackward0``). A gradient reduced under ``create_graph=True`` (a broadcast bias's)
    shows the same graph as PyTorch's; otherwise the one-node ``sum_to_size`` does it in one pass."""
    if not shape:
        _sum_to_dims(x._data.shape, shape)
        return x.sum()
    dims = _sum_to_dims(x._data.shape, shape)
    if dims:  # (the ops' own paths: ``dims`` is sorted and in range, ``shape`` a tuple of ints)
        x = sum_dim.unary(x, dims, True, None)
    return _S.view.unary(x, shape) if x._data.ndim > len(shape) else x  # type: ignore[no-any-return]


sum_to_size = Op("sum_to_size", _sum_to, node="SumBackward1", params=("size",),
                 grads=(lambda grad, self_shape: _expand_to(grad, self_shape),), jvp="linear")


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
        return grad * _cj(result / self)
    # The product of all the others, without dividing: left and right exclusive products.
    left = _exclusive_cumprod(self, dim)
    right = flip(_exclusive_cumprod(flip(self, (dim,)), dim), (dim,))
    return grad * _cj(left * right)


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
              grads=(_prod_all_grad,), jvp="transpose")
prod_dim = Op("prod", lambda x, dim, keepdim, dtype: _prod(x, dim, keepdim, dtype), node="ProdBackward1",
              params=("dim", "keepdim", "dtype"), grads=(_prod_dim_grad,), jvp="transpose")


# -- max / min, argmax / argmin, amax / amin --------------------------------------------------


def _evenly_distribute(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """PyTorch's rule for max()/min()/median() over all elements: ties share the gradient equally
    (a NaN result shares it among the NaN elements)."""
    x, value = self._data, result._data
    mask = np.isnan(x) if x.dtype.kind in "fV" and np.isnan(value) else x == value
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
    _refuse_complex("max_all", x)
    return np.asarray(np.max(x))


def _min_all(x: np.ndarray) -> np.ndarray:
    _check_nonempty(x, "min")
    _refuse_complex("min_all", x)
    return np.asarray(np.min(x))


max_all = Op("max", _max_all, node="MaxBackward1", grads=(_evenly_distribute,), jvp="transpose")
min_all = Op("min", _min_all, node="MinBackward1", grads=(_evenly_distribute,), jvp="transpose")


def _select_along(pick: Any) -> Any:
    def forward(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
        if x.ndim and x.shape[dim] == 0:
            raise IndexError(f"{pick.__name__[3:]}(): Expected reduction dim {dim} to have non-zero size.")
        _refuse_complex_input(pick.__name__[3:], x)  # (a 0-d one too)
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
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
               grads=(lambda grad, dim, index: take_along(grad, dim, index),), jvp="transpose")
take_along: Op = Op("take_along", lambda x, dim, index: np.take_along_axis(x, index, axis=dim), node="GatherBackward0",
                params=("dim", "index"),
                grads=(lambda grad, self_shape, dim, index: put_along(grad, self_shape, dim, index),), jvp="linear")


def _selecting_grad(grads: Any, result1: Tensor, self_shape: tuple[int, ...], dim: int, keepdim: bool) -> tuple[Tensor]:
    return (value_selecting_backward(grads[0], result1, self_shape, dim, keepdim),)


max_dim = Op("max", _select_along(np.argmax), node="MaxBackward0", params=("dim", "keepdim"), outputs=2,
             saved={"dim": "dim", "keepdim": "keepdim", "self_sym_sizes": "self_sym_sizes", "indices": "result1"},
             differentiable_outputs=(True, False), grads=_selecting_grad, jvp="transpose")
min_dim = Op("min", _select_along(np.argmin), node="MinBackward0", params=("dim", "keepdim"), outputs=2,
             saved={"dim": "dim", "keepdim": "keepdim", "self_sym_sizes": "self_sym_sizes", "indices": "result1"},
             differentiable_outputs=(True, False), grads=_selecting_grad, jvp="transpose")

argmax = Op("argmax", lambda x, dim, keepdim: _arg_reduce(np.argmax, x, dim, keepdim), params=("dim", "keepdim"))
argmin = Op("argmin", lambda x, dim, keepdim: _arg_reduce(np.argmin, x, dim, keepdim), params=("dim", "keepdim"))


def _arg_reduce(fn: Any, x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    _refuse_complex_input(fn.__name__, x)
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
    kernel = f"{name[1:]}_values_cpu"  # (amax: "max_values_cpu")

    def forward(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
        if dims is None and x.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        for d in dims if dims is not None else range(x.ndim):
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        _refuse_complex(kernel, x)
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
           variants=("function", "method"), signature="dim=(), keepdim=False", convert={"dim": "dims"}, jvp="transpose")
amin = Op("amin", _extreme(np.min, "amin"), node="AminBackward0", params=("dim", "keepdim"), grads=(_extreme_grad,),
           variants=("function", "method"), signature="dim=(), keepdim=False", convert={"dim": "dims"}, jvp="transpose")


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
    if x.dtype.kind not in "fcV":
        raise RuntimeError(VAR_DTYPE_ERROR.format(name if name.endswith("_mean") else "std and var"))
    n = _count(x.shape, dims)
    dof = builtins.max(0, n - correction)
    if dof <= 0:
        _dof_warning(name)
    if x.dtype.kind == "c":
        return _complex_var(x, dims, dof, keepdim, sqrt)
    out_dtype = x.dtype
    # PyTorch's CPU var/std accumulate in double (WelfordOps<T, double>). A float32 sum that NumPy
    # does pairwise is as close as float32 can hold, so only the other layouts pay for it.
    upcast = out_dtype in REDUCED_FLOATS or out_dtype == np.float32 and not _sums_pairwise(x, dims)
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


def _complex_var(x: np.ndarray, dims: Any, dof: int, keepdim: bool, sqrt: bool) -> np.ndarray:
    """var/std of a complex tensor as PyTorch's: the squared moduli of the deviations from the
    mean, summed over ``dof``, real (float32 for complex64)."""
    real_dtype = np.dtype(f"f{x.dtype.itemsize // 2}")
    with np.errstate(all="ignore"):
        centered = x - np.mean(x, axis=dims, keepdims=True) if x.size else x
        sq = np.add.reduce(centered.real ** 2 + centered.imag ** 2, axis=dims, keepdims=keepdim)  # type: ignore[call-overload]
        out = np.true_divide(sq, dof)
        return np.asarray(np.sqrt(out) if sqrt else out, real_dtype)


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


var = Op("var", _var, node="VarBackward0", params=("dim", "correction", "keepdim"), grads=(_var_backward,),
         jvp="transpose")
std = Op("std", _std, node="StdBackward0", params=("dim", "correction", "keepdim"), grads=(_std_backward,),
         jvp="transpose")


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
              grads=_var_mean_grad, jvp="transpose")
std_mean = Op("std_mean", _std_mean, node="StdMeanBackward0", params=("dim", "correction", "keepdim"), outputs=2,
              grads=_std_mean_grad, jvp="transpose")


# -- logsumexp --------------------------------------------------------------------------------


def _logsumexp(x: np.ndarray, dims: Any, keepdim: bool) -> np.ndarray:
    if x.size == 0:
        return np.asarray(np.log(np.sum(np.exp(x), axis=dims, keepdims=keepdim)), x.dtype)
    shift = np.max(x, axis=dims, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0).astype(x.dtype, copy=False)
    with np.errstate(divide="ignore"):
        e = np.exp(x - shift)
        # As PyTorch: the exponentials are summed in the accumulate type (float for half).
        total = (_half_reduce(np.add.reduce, e, dims, True, x.dtype) if x.dtype in REDUCED_FLOATS
                 else np.sum(e, axis=dims, keepdims=True))
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
               variants=("function", "method"), signature="dim, keepdim=False", convert={"dim": "dims"},
               jvp="transpose")


# -- norms: vector_norm (PyTorch's rules for every order), norm's dtype form, dist ------------
def _vector_norm(x: np.ndarray, ord: float, dims: Any, keepdim: bool) -> np.ndarray:  # noqa: A002
    if x.dtype.kind not in "fcV":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(x.dtype)}"
        )
    axis = _axis(dims)
    # PyTorch's opmath type: a half norm is computed in float (its squares overflow half at 256).
    a = np.abs(x.astype(np.float32) if x.dtype in REDUCED_FLOATS else x)
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
    # A complex input's norm is real, as PyTorch's (float32 for complex64).
    return np.asarray(out, dtype=x.dtype if x.dtype.kind != "c" else np.dtype(f"f{x.dtype.itemsize // 2}"))


vector_norm = Op("linalg_vector_norm", quiet_forward(_vector_norm), node="LinalgVectorNormBackward0",
                 params=("ord", "dim", "keepdim"),
                 grads=(lambda grad, self, result, ord, dim, keepdim:  # noqa: A006
                        vector_norm_backward(grad, self, result, ord, dim, keepdim),), jvp="transpose")


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
    if target.itemsize < x._data.dtype.itemsize or x._data.dtype.kind in "fcV" and target.kind not in "fcV":
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
           vector_norm_backward(grad, self.to(FROM_NUMPY[np.dtype(dtype)]), result, ord, dim, keepdim),),
    jvp="transpose")


def _dist(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    if a.dtype.kind == "b":
        raise RuntimeError(_E.BOOL_SUB_ERROR)
    if a.dtype.kind not in "fcV":
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
          convert={"other": "tensor", "p": "float"}, jvp="transpose")


# -- flip (private: reversed cumulative sums and products in backward rules) ------------------

flip: Op = Op("flip", lambda x, dims: np.flip(x, dims).copy(), node="FlipBackward0", params=("dims",),
          grads=(lambda grad, dims: flip(grad, dims),), jvp="linear")


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
        acc = _CUMULATIVE_ACC.get(out, _F32 if out in REDUCED_FLOATS else None)  # (bfloat16 as half)
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
            grads=(_cumsum_grad,), jvp="linear")


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
             grads=(_cumprod_grad,), jvp="transpose")


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
    if x.dtype.kind == "c":
        raise RuntimeError(SORT_COMPLEX)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = sort_indices(x, dim, descending)
    return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64, copy=False)


def _scatter_back(grads: Any, result1: Tensor, self_shape: tuple[int, ...], dim: int) -> tuple[Tensor]:
    return (value_selecting_backward(grads[0], result1, self_shape, dim, True),)


# PyTorch's saved attributes of the ops that return (values, indices): the second output is
# ``_saved_indices``, not a derived ``_saved_result1``.
_WITH_INDICES = {"dim": "dim", "indices": "result1", "self_sym_sizes": "self_sym_sizes"}
_WITH_INDICES_KEEPDIM = {"dim": "dim", "keepdim": "keepdim", "indices": "result1", "self_sym_sizes": "self_sym_sizes"}
sort = Op("sort", _sort, node="SortBackward0", params=("dim", "descending"), outputs=2,
          differentiable_outputs=(True, False), saved=_WITH_INDICES, grads=_scatter_back, jvp="transpose")
sort_stable = Op("sort", lambda x, dim, descending, stable: _sort(x, dim, descending), node="SortBackward1",
                 params=("dim", "descending", "stable"), outputs=2, differentiable_outputs=(True, False),
                 saved=_WITH_INDICES,
                 grads=_scatter_back, jvp="transpose")


def _argsort(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    if x.dtype.kind == "c":
        raise RuntimeError(SORT_COMPLEX)
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
    if x.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if x.ndim == 0:
        return (x.copy(), np.zeros((), np.int64)) if k else (x.reshape(0)[:0], np.zeros(0, np.int64))
    idx = np.take(sort_indices(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64, copy=False)


topk = Op("topk", _topk, node="TopkBackward0", params=("k", "dim", "largest", "sorted"), outputs=2,
          differentiable_outputs=(True, False), saved=_WITH_INDICES,
          grads=lambda grads, result1, self_shape, dim: _scatter_back(grads, result1, self_shape, dim), jvp="transpose")


def _pick(x: np.ndarray, idx: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    values = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx.astype(np.int64, copy=False)


def _refuse_bool(kernel: str, x: np.ndarray) -> None:
    if x.dtype.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _kthvalue(x: np.ndarray, k: int, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    _check_nonempty_dim(x, dim, "kthvalue")  # (before the dtype and k, as PyTorch's)
    _refuse_bool("kthvalue_cpu", x)
    size = x.shape[dim] if x.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _refuse_complex("kthvalue_cpu", x)
    idx = np.take(sort_indices(x, dim, False), [k - 1], axis=dim)
    return _pick(x, idx, dim, keepdim)


kthvalue = Op("kthvalue", _kthvalue, node="KthvalueBackward0", params=("k", "dim", "keepdim"), outputs=2,
              differentiable_outputs=(True, False), saved=_WITH_INDICES_KEEPDIM,
              grads=lambda grads, result1, self_shape, dim, keepdim: _selecting_grad(grads, result1, self_shape,
                                                                                   dim, keepdim), jvp="transpose")


def _median_dim(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    _refuse_bool("median_out", x)
    _check_nonempty_dim(x, dim, "median")
    _refuse_complex("median_out", x)  # (a 0-d one too)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    n = x.shape[dim]
    order = sort_indices(x, dim, False)
    idx = np.take(order, [(n - 1) // 2], axis=dim)
    if x.dtype.kind in "fV":
        nan = np.isnan(x)
        has_nan = nan.any(axis=dim, keepdims=True)
        if has_nan.any():  # a NaN makes the median NaN, at the first NaN's index
            idx = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), idx)
    return _pick(x, idx, dim, keepdim)


def _median_all(x: np.ndarray) -> np.ndarray:
    _refuse_bool("median_cpu", x)
    if x.size == 0:
        return np.asarray(np.nan, x.dtype) if x.dtype.kind in "fcV" else np.zeros((), x.dtype)
    _refuse_complex("median_cpu", x)
    flat = x.reshape(-1)
    if x.dtype.kind in "fV" and np.isnan(flat).any():
        return np.asarray(np.nan, x.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


median_all = Op("median", _median_all, node="MedianBackward0", grads=(_evenly_distribute,), jvp="transpose")
median_dim = Op("median", _median_dim, node="MedianBackward1", params=("dim", "keepdim"), outputs=2,
                differentiable_outputs=(True, False), saved=_WITH_INDICES_KEEPDIM,
                grads=_selecting_grad, jvp="transpose")


def _nanmedian_all(x: np.ndarray) -> np.ndarray:
    _refuse_bool("median_cpu", x)
    if x.size:
        _refuse_complex("median_cpu", x)
    flat = x.reshape(-1)
    if x.dtype.kind in "fV":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.asarray(np.nan, x.dtype) if x.dtype.kind in "fV" else np.zeros((), x.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


nanmedian_all = Op("nanmedian", _nanmedian_all, node="NanmedianBackward0", grads=(_evenly_distribute,), jvp="transpose")


def _nanmedian_dim(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """The lower median of each slice's non-NaN values (NaN only where a slice is all NaN)."""
    _check_nonempty_dim(x, dim, "nanmedian")
    _refuse_complex("median_out", x)  # (a 0-d one too)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _refuse_bool("median_out", x)
    order = sort_indices(x, dim, False)  # NaN sorts last
    valid = (~np.isnan(x)).sum(axis=dim, keepdims=True) if x.dtype.kind in "fV" else x.shape[dim]
    position = np.maximum(valid - 1, 0) // 2
    if np.ndim(position) == 0:
        position = np.full(_keepdim_shape(x.shape, (dim,)), position)
    return _pick(x, np.take_along_axis(order, position, axis=dim), dim, keepdim)


nanmedian_dim = Op("nanmedian", _nanmedian_dim, node="NanmedianBackward1", params=("dim", "keepdim"), outputs=2,
                   differentiable_outputs=(True, False), saved=_WITH_INDICES_KEEPDIM,
                   grads=_selecting_grad, jvp="transpose")


def _mode(x: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """Most frequent value along ``dim`` (the smallest among equally frequent ones), at its last index."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    _check_nonempty_dim(x, dim, "mode")
    _refuse_complex("mode_cpu", x)
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
          differentiable_outputs=(True, False), saved=_WITH_INDICES_KEEPDIM,
          grads=_selecting_grad, jvp="transpose")


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
    if x.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and np.dtype(dtype).kind == "c":  # (a real input summed into a complex dtype)
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{scalar_type_name(np.dtype(dtype))}\'')
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    elif (x.dtype if dtype is None else np.dtype(dtype)) in REDUCED_FLOATS:
        return _half_reduce(np.nansum, x, dims, keepdim, x.dtype if dtype is None else np.dtype(dtype))
    return np.asarray(np.nansum(x, axis=dims, keepdims=keepdim, dtype=dtype))


nansum = Op("nansum", _nansum, node="NansumBackward0", params=("dim", "keepdim", "dtype"),
            grads=(lambda grad, self, dim, keepdim:
                   expand_reduced(grad, self._data.shape, dim, keepdim) * _const(~np.isnan(self._data)),),
            jvp="transpose")


# -- aminmax, cummax / cummin, logcumsumexp, renorm ---------------------------------------------


def _aminmax(x: np.ndarray, dim: int | None, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    if dim is None:
        if x.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
        _refuse_complex("aminmax_cpu", x)
        lo, hi = np.asarray(np.min(x)), np.asarray(np.max(x))
        if keepdim:
            lo, hi = lo.reshape((1,) * x.ndim), hi.reshape((1,) * x.ndim)
        return lo, hi
    if x.ndim == 0:
        return x.copy(), x.copy()
    if x.shape[dim] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    _refuse_complex("aminmax_cpu", x)
    return np.asarray(np.min(x, axis=dim, keepdims=keepdim)), np.asarray(np.max(x, axis=dim, keepdims=keepdim))


def _scale_by_count(grad: Tensor, result: Tensor, self: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    """PyTorch's rule for aminmax: the gradient is shared evenly among the slice's ties."""
    x = self._data
    if not keepdim and dim is not None and x.ndim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    mask = x == result._data
    count = mask.sum(axis=None if dim is None else dim, keepdims=True)
    return grad / _const(count.astype(x.dtype)) * _const(mask.astype(x.dtype))


def _aminmax_grad(grads: Any, self: Tensor, result0: Tensor, result1: Tensor, dim: int | None,
                  keepdim: bool) -> tuple[Tensor]:
    return (_scale_by_count(grads[0], result0, self, dim, keepdim)
            + _scale_by_count(grads[1], result1, self, dim, keepdim),)


aminmax = Op("aminmax", _aminmax, node="AminmaxBackward0", params=("dim", "keepdim"), outputs=2,
             saved={"dim": "dim", "keepdim": "keepdim", "min": "result0", "max": "result1", "self": "self"},
             grads=_aminmax_grad, jvp="transpose")


def _cum_extreme(take: Any, kernel: str) -> Any:
    """cummax/cummin along ``dim``: a value replaces the running one when ``take(value, running)``
    holds (``>=``/``<=``: a tie moves the index to the later element) or it is NaN (as PyTorch:
    NaN sticks, each later NaN taking the index)."""

    def forward(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        if x.size:  # (an empty complex one is returned as it is, as PyTorch's)
            _refuse_complex(kernel, x)
        moved = np.moveaxis(x, dim, -1)
        values = np.empty(moved.shape, x.dtype)
        indices = np.zeros(moved.shape, np.int64)
        if moved.shape[-1]:
            best, where = moved[..., 0].copy(), np.zeros(moved.shape[:-1], np.int64)
            floating = x.dtype.kind in "fV"
            for k in range(moved.shape[-1]):
                value = moved[..., k]
                with np.errstate(invalid="ignore"):
                    update = take(value, best)
                if floating:
                    update = np.isnan(value) | (update & ~np.isnan(best))
                best = np.where(update, value, best)
                where = np.where(update, k, where)
                values[..., k], indices[..., k] = best, where
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)

    return forward


def _cum_extreme_grad(grads: Any, self: Tensor, result1: Tensor, dim: int) -> tuple[Tensor]:
    grad = grads[0]
    x = self._data
    if x.ndim == 0 or x.size == 0:
        return (grad,)
    return (_S.scatter_add(_zeros(x.shape, grad._data.dtype), grad, dim, result1._data),)


cummax = Op("cummax", _cum_extreme(np.greater_equal, "cummax_cpu"), node="CummaxBackward0", params=("dim",), outputs=2,
            saved={"dim": "dim", "indices": "result1", "self": "self"}, differentiable_outputs=(True, False),
            grads=_cum_extreme_grad, jvp="transpose")
cummin = Op("cummin", _cum_extreme(np.less_equal, "cummin_cpu"), node="CumminBackward0", params=("dim",), outputs=2,
            saved={"dim": "dim", "indices": "result1", "self": "self"}, differentiable_outputs=(True, False),
            grads=_cum_extreme_grad, jvp="transpose")


def _logcumsumexp(x: np.ndarray, dim: int) -> np.ndarray:
    if x.dtype.kind not in "fcV":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
    if x.ndim == 0:
        return x.copy()
    if x.dtype in REDUCED_FLOATS:
        return np.logaddexp.accumulate(x.astype(np.float32), axis=dim).astype(x.dtype)  # type: ignore[no-any-return]
    return np.logaddexp.accumulate(x, axis=dim)  # type: ignore[no-any-return]


def _logcumsumexp_grad(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """d out_j / d x_k = exp(x_k - out_j) for j >= k: the reversed log-cumulative-sum of
    log|grad_j| - out_j, for the positive and the negative part of the gradient apart (stable
    for any magnitude, and written in ops, so it differentiates again), as PyTorch's rule."""
    if self._data.ndim == 0 or self._data.size == 0:
        return grad

    def part(log_grad: Tensor) -> Tensor:
        reversed_sum = flip(logcumsumexp(flip(log_grad - result, (dim,)), dim), (dim,))
        return (reversed_sum + self).exp()

    # The lowest finite value, not -inf, where a part has no gradient: -inf - result would meet
    # +inf in the double backward and make NaN.
    lowest = float(np.finfo(grad._data.dtype).min)
    log_abs = grad.abs().log()
    return (part(_E.where(_const(grad._data > 0), log_abs, lowest))
            - part(_E.where(_const(grad._data < 0), log_abs, lowest)))


logcumsumexp: Op = Op("logcumsumexp", quiet_forward(_logcumsumexp), node="LogcumsumexpBackward0", params=("dim",),
                      saved=("dim", "result", "self"), grads=(_logcumsumexp_grad,),
                      variants=("function", "method"), signature="dim", convert={"dim": "dim"}, jvp="transpose")


def _renorm_factor(x: np.ndarray, p: float, dim: int, maxnorm: float) -> np.ndarray:
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        shown = int(maxnorm) if float(maxnorm).is_integer() else maxnorm  # (PyTorch prints a Scalar)
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {shown}")
    if x.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    others = tuple(d for d in range(x.ndim) if d != dim)
    norm = _vector_norm(x, p, others, True)
    return np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.dtype)  # type: ignore[no-any-return]


def _renorm(x: np.ndarray, p: float, dim: int, maxnorm: float) -> np.ndarray:
    return np.asarray(x * _renorm_factor(x, p, dim, maxnorm), x.dtype)


def _renorm_grad(grad: Tensor, self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """out = x * f(norm(x)), f = maxnorm / (norm + 1e-7) where the slice's norm exceeds maxnorm
    (else 1, no dependence): the product rule through the slice's vector norm."""
    others = tuple(d for d in range(self._data.ndim) if d != dim)
    norm = vector_norm(self, p, others, True)
    over = _const(norm._data > maxnorm)
    factor = _E.where(over, maxnorm / (norm + 1e-7), 1.0)
    inner = (grad * self).sum(others, keepdim=True)
    dfactor = _E.where(over, -maxnorm / (norm + 1e-7) ** 2, 0.0)
    return grad * factor + vector_norm_backward(inner * dfactor, self, norm, p, others, True)


renorm: Op = Op("renorm", quiet_forward(_renorm), node="RenormBackward0", params=("p", "dim", "maxnorm"),
                grads=(_renorm_grad,), variants=("function", "method", "inplace"), signature="p, dim, maxnorm",
                convert={"dim": "dim"}, jvp="transpose")


# -- counting and binning: bincount, histc, histogram, searchsorted / bucketize, unique --------


def _not_implemented(name: str) -> Any:
    """A backward PyTorch records but does not implement: its error when the graph reaches it."""

    def rule(grads: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return rule


def _bincount_weights_dtype(weights: np.ndarray) -> np.dtype:
    return weights.dtype if weights.dtype in (np.float32, np.float64) else np.dtype(np.float64)


def _bincount(x: np.ndarray, weights: np.ndarray | None, minlength: int) -> np.ndarray:
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = builtins.max(minlength, int(x.max()) + 1 if x.size else 0)
    if weights is None:
        return np.bincount(x.astype(np.int64), minlength=length).astype(np.int64)
    dtype = _bincount_weights_dtype(weights)
    return np.bincount(x.astype(np.int64), weights.astype(np.float64), minlength=length).astype(dtype)


bincount_op = Op("bincount", lambda x, minlength: _bincount(x, None, minlength), params=("minlength",))
# With weights that require grad PyTorch records a node whose backward is not implemented.
bincount_weighted = Op("bincount", lambda x, weights, minlength: _bincount(x, weights, minlength),
                       node="NotImplemented", inputs=("self", "weights"), params=("minlength",),
                       grads=_not_implemented("bincount"), jvp="transpose")


def torch_linspace(start: float, end: float, steps: int, dtype: Any) -> np.ndarray:
    """PyTorch's CPU linspace: the first half counts up from ``start``, the second down from ``end``."""
    if steps == 1:
        return np.asarray([start], dtype)
    kind = np.dtype(dtype).type
    first, last = kind(start), kind(end)
    step = (last - first) / kind(steps - 1)  # (in the output dtype, as PyTorch's kernel)
    i = np.arange(steps).astype(dtype)
    half = steps // 2
    return np.where(np.arange(steps) < half, first + step * i, last - step * (kind(steps - 1) - i)).astype(dtype)  # type: ignore[no-any-return]


def _histc(x: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    bins, lo, hi = int(bins), float(lo), float(hi)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if lo == hi and x.size:
        finite = x[~np.isnan(x)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_scalar(lo)}, {_scalar(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    values = x.reshape(-1).astype(np.float64)
    values = values[(values >= lo) & (values <= hi)]
    pos = ((values - lo) * bins / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1
    return np.bincount(pos, minlength=bins).astype(x.dtype)


def _scalar(value: float) -> str:
    """A float as PyTorch prints a Scalar in messages (``1``, ``1.5``, ``inf``, ``nan``)."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _bin_edges(spec: np.ndarray | int, column: np.ndarray, lo_hi: tuple[float, float] | None, d: int,
               dtype: np.dtype) -> np.ndarray:
    """Dimension ``d``'s bin edges for ``torch.histogram`` and ``torch.histogramdd``, with PyTorch's
    messages: the edges given (a 1-D array of the input's dtype, copied) or ``spec`` uniform bins
    over ``lo_hi`` or, when None, the extent of ``column``.

    >>> _bin_edges(4, np.array([1.0, 3.0]), None, 0, np.dtype(np.float32)).tolist()
    [1.0, 1.5, 2.0, 2.5, 3.0]
    """
    if isinstance(spec, np.ndarray):
        if spec.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {spec.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if spec.dtype != dtype:
            from ..tensor import _cpp_type_name

            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with "
                f"dtype {_cpp_type_name(dtype)} and bins for dimension {d} with dtype {_cpp_type_name(spec.dtype)}")
        return spec.copy()  # an output of its own, as PyTorch's histogram (not a view of the bins given)
    if spec <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {spec} for dimension {d}")
    if lo_hi is not None:
        lo, hi = lo_hi
    elif column.size:
        lo, hi = float(np.min(column)), float(np.max(column))
    else:
        lo, hi = 0.0, 1.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_scalar(lo)} max "
                           f"{_scalar(hi)} for dimension {d}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_scalar(lo)}, {_scalar(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return torch_linspace(lo, hi, int(spec) + 1, dtype)


def _histogram(x: np.ndarray, bins: Any, weight: np.ndarray | None, density: bool,
               range_: Any) -> tuple[np.ndarray, np.ndarray]:
    """``torch.histogram``: ``bins`` a count (uniform edges over ``range_`` or the data's extent)
    or the edges themselves; elements outside the edges (and NaN) are not counted."""
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(x.dtype)}'")
    if weight is not None and weight.shape != x.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
            f"excluding its innermost dimension, but got input with shape {list(x.shape) + [1]} and weight with "
            f"shape {list(weight.shape)}")
    values = x.reshape(-1)
    lo_hi = None if range_ is None else (float(range_[0]), float(range_[1]))
    edges = _bin_edges(bins, values, lo_hi, 0, x.dtype)  # histogram is histogramdd's one-dimension case
    n = edges.size - 1
    if n < 1:
        return np.zeros(0, x.dtype), edges
    keep = (values >= edges[0]) & (values <= edges[-1])
    kept = values[keep]
    pos = np.searchsorted(edges, kept, side="right") - 1
    pos[pos == n] = n - 1
    w = None if weight is None else weight.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(pos, weights=w, minlength=n)[:n].astype(x.dtype)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = (hist / hist.sum(dtype=x.dtype) / np.diff(edges)).astype(x.dtype)
    return hist, edges


def _check_boundaries(boundaries: np.ndarray, values: np.ndarray, sorter: np.ndarray | None) -> None:
    if boundaries.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.ndim > 1 and (values.ndim != boundaries.ndim or boundaries.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(boundaries.shape)} and "
            f"input value tensor {list(values.shape)}")
    if sorter is not None:
        if sorter.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{scalar_type_name(sorter.dtype)}")
        if sorter.shape != boundaries.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter.size and (sorter.min() < 0 or sorter.max() >= boundaries.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


def searchsorted_array(boundaries: np.ndarray, values: np.ndarray, right: bool, out_int32: bool,
                       sorter: np.ndarray | None) -> np.ndarray:
    """Insertion positions of ``values`` in the (last dim of) ``boundaries``."""
    _check_boundaries(boundaries, values, sorter)
    for x in (boundaries, values):
        _refuse_complex("searchsorted_out_cpu", x)
    if sorter is not None:
        boundaries = np.take_along_axis(boundaries, sorter, axis=-1)
    common = np.result_type(boundaries, values)
    side: Any = "right" if right else "left"
    if boundaries.ndim == 1:
        out = np.searchsorted(boundaries.astype(common), values.astype(common), side=side)
    else:
        # (rows counted from the leading dims: reshape(-1, 0) cannot infer them for an empty last dim)
        rows = int(np.prod(values.shape[:-1]))
        rows_b = boundaries.reshape(rows, boundaries.shape[-1]).astype(common)
        rows_v = values.reshape(rows, values.shape[-1]).astype(common)
        out = np.stack([np.searchsorted(b, v, side=side) for b, v in zip(rows_b, rows_v, strict=True)]) \
            if rows_v.shape[0] else np.zeros(rows_v.shape, np.int64)
        out = out.reshape(values.shape)
    return np.asarray(out, np.int32 if out_int32 else np.int64)


def searchsorted_side(right: bool, side: str | None) -> bool:
    """``right=`` and ``side=`` as one flag, with PyTorch's errors when they disagree."""
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side == "right"


def _unique_flat(x: np.ndarray, return_inverse: bool, return_counts: bool) -> tuple[np.ndarray, ...]:
    _refuse_complex("unique", x)
    flat = x.reshape(-1)
    values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
    return (values, inverse.reshape(x.shape).astype(np.int64), counts.astype(np.int64))


def _unique_dim(x: np.ndarray, dim: int, consecutive: bool) -> tuple[np.ndarray, ...]:
    _refuse_complex("unique" if consecutive else "unique_dim", x)
    if x.ndim == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 0)")
    if x.size == 0 and x.shape[dim] != 0 and any(s == 0 for i, s in enumerate(x.shape) if i != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    moved = np.moveaxis(x, dim, 0)
    n = moved.shape[0]
    if n == 0:
        return x.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = moved.reshape(n, -1)
    if consecutive:
        starts = np.ones(n, bool)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        order = np.arange(n)
    else:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
        srt = rows[order]
        starts = np.ones(n, bool)
        starts[1:] = (srt[1:] != srt[:-1]).any(axis=1)
    group = np.cumsum(starts) - 1
    inverse = np.empty(n, np.int64)
    inverse[order] = group
    counts = np.bincount(group).astype(np.int64)
    picked = order[starts]
    return np.moveaxis(moved[picked], 0, dim).copy(), inverse, counts


def _unique_consecutive_flat(x: np.ndarray) -> tuple[np.ndarray, ...]:
    _refuse_complex("unique", x)
    flat = x.reshape(-1)
    if flat.size == 0:
        return flat.copy(), np.zeros(x.shape, np.int64), np.zeros(0, np.int64)
    starts = np.ones(flat.size, bool)
    starts[1:] = flat[1:] != flat[:-1]
    group = np.cumsum(starts) - 1
    return flat[starts], group.reshape(x.shape).astype(np.int64), np.bincount(group).astype(np.int64)


def _unique_rule(name: str) -> Any:
    def rule(grads: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return rule


unique2 = Op("_unique2", lambda x: _unique_flat(x, True, True), node="Unique2Backward0", outputs=3,
             differentiable_outputs=(True, False, False), grads=_unique_rule("_unique2"), jvp="transpose")
unique_dim = Op("unique_dim", lambda x, dim: _unique_dim(x, dim, False), node="UniqueDimBackward0", params=("dim",),
                outputs=3, differentiable_outputs=(True, False, False), grads=_unique_rule("unique_dim"),
                jvp="transpose")
unique_consecutive_op = Op(
    "unique_consecutive",
    lambda x, dim: _unique_consecutive_flat(x) if dim is None else _unique_dim(x, dim, True),
    node="UniqueConsecutiveBackward0", params=("dim",), outputs=3, differentiable_outputs=(True, False, False),
    grads=_unique_rule("unique_consecutive"), jvp="transpose")


histc = Op("histc", _histc, params=("bins", "min", "max"), variants=("function", "method"),
           signature="bins=100, min=0, max=0")


def unique_outputs(outputs: Any, return_inverse: Any, return_counts: Any) -> Any:
    """``unique``'s result: the values alone, or a tuple with the inverse and/or the counts."""
    values, inverse, counts = outputs
    if not return_inverse and not return_counts:
        return values
    return (values, *((inverse,) if return_inverse else ()), *((counts,) if return_counts else ()))


# -- composites, recorded as PyTorch's own (its ATen code calls other ops, whose nodes the graph
# shows): diff, trapezoid / cumulative_trapezoid, gradient, cov / corrcoef, quantile -----------


def _narrow(x: Tensor, dim: int, start: int, stop: int | None = None) -> Tensor:
    """``at::slice(x, dim, start, stop)``: always a SliceBackward0 view (Python bounds)."""
    size = x._data.shape[dim]
    begin, end, _ = slice(start, stop).indices(size)
    return _S.slice_op(x, dim, begin, builtins.max(end, begin), 1)  # type: ignore[no-any-return]


def _scalar_ops() -> Any:
    from . import nn as _N  # (loads on first use: the Scalar-overload nodes MulBackward1, DivBackward1)

    return _N


def diff(x: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bool), after
    concatenating ``prepend``/``append``."""
    if x._data.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, x._data.ndim)
    for other in (prepend, append):
        if other is not None:
            if other._data.ndim != x._data.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
            for i in range(x._data.ndim):
                if i != d and other._data.shape[i] != x._data.shape[i]:
                    raise RuntimeError(
                        "diff expects the shape of tensor to prepend or append to match that of input except along "
                        f"the differencing dimension; input.size({i}) = {x._data.shape[i]}, but got tensor.size({i}) "
                        f"= {other._data.shape[i]}")
    if n == 0:
        return _E.copy(_make(np.zeros_like(x._data)), x)  # type: ignore[no-any-return]
    if prepend is not None or append is not None:
        x = _S.cat(*[t for t in (prepend, x, append) if t is not None], d)
    size = x._data.shape[d]
    out_len = size - 1
    result = x
    for _ in range(builtins.min(n, size)):
        right, left = result.narrow(d, 1, out_len), result.narrow(d, 0, out_len)
        result = _E.logical_xor(right, left) if x._data.dtype == np.bool_ else right - left
        out_len -= 1
    return result


def _dx_view(y: Tensor, x: Tensor, dim: int, name: str) -> Tensor:
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[dim] = x._data.shape[0]
        x = x.view(shape)
    elif x._data.ndim < y._data.ndim:
        x = x.view((1,) * (y._data.ndim - x._data.ndim) + tuple(x._data.shape))
    return _narrow(x, dim, 1) - _narrow(x, dim, 0, -1)


def _check_dx(dx: Any, name: str) -> float:
    if isinstance(dx, (bool, np.bool_, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: with sample points ``x`` or a constant spacing ``dx``."""
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, y._data.ndim)
    if isinstance(x, Tensor):
        if y._data.shape[d] == 0:
            return _zeros(y._data.shape[:d] + y._data.shape[d + 1:], y._data.dtype)
        if y._data.dtype == np.bool_ or x._data.dtype == np.bool_:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
        step = _dx_view(y, x, d, "trapezoid")
        return _scalar_ops().div_scalar(((_narrow(y, d, 0, -1) + _narrow(y, d, 1)) * step).sum(d), 2.0)  # type: ignore[no-any-return]
    spacing = 1.0 if dx is None else dx
    if y._data.shape[d] == 0:
        return _zeros(y._data.shape[:d] + y._data.shape[d + 1:], y._data.dtype)
    if y._data.dtype == np.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    spacing = _check_dx(spacing, "trapezoid")
    N = _scalar_ops()
    ends = N.mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5)
    return N.mul_scalar(y.sum(d) - ends, spacing)  # type: ignore[no-any-return]


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running trapezoid rule along ``dim`` (one element fewer than ``y`` there)."""
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, y._data.ndim)
    N = _scalar_ops()
    if isinstance(x, Tensor):
        if y._data.dtype == np.bool_ or x._data.dtype == np.bool_:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
        step = _dx_view(y, x, d, "cumulative_trapezoid")
        return N.div_scalar(((_narrow(y, d, 0, -1) + _narrow(y, d, 1)) * step).cumsum(d), 2.0)  # type: ignore[no-any-return]
    if y._data.dtype == np.bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    spacing = _check_dx(1.0 if dx is None else dx, "cumulative_trapezoid")
    return N.mul_scalar(_narrow(y, d, 0, -1) + _narrow(y, d, 1), spacing / 2.0).cumsum(d)  # type: ignore[no-any-return]


def gradient(x: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """``torch.gradient``: central differences inside, one-sided (``edge_order`` 1 or 2) at the
    edges, along each of ``dim`` (default: every dim); ``spacing`` a number, one per dim, or
    coordinate tensors."""
    data = x._data
    if data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(data.ndim)) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    scalar_spacing = not isinstance(spacing, (list, tuple))
    spacings = [spacing] * len(dims) if scalar_spacing else list(spacing)
    if not scalar_spacing:
        if dim is None and len(spacings) != data.ndim:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                f"'self.dim() = {data.ndim}', since dim argument was not given, but got a list of length "
                f"{len(spacings)}")
        if dim is not None and len(spacings) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have "
                f"the same length, but got a spacing argument of length {len(spacings)} and a dim argument of length "
                f"{len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [normalize_dim(int(d), data.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        repeated = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    for d in dims:
        if data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    N = _scalar_ops()
    out = []
    for d, step in zip(dims, spacings, strict=True):
        s = lambda a, b=None, d=d: _narrow(x, d, a, b)  # noqa: E731
        if isinstance(step, Tensor):
            out.append(_gradient_coordinates(x, step, d, edge_order))
            continue
        h = float(step)
        center = N.div_scalar(s(2) - s(0, -2), h)
        if edge_order == 1:
            first = N.div_scalar(s(1, 2) - s(0, 1), h)
            last = N.div_scalar(s(-1) - s(-2, -1), h)
        else:
            first = N.div_scalar(N.mul_scalar(s(0, 1), -1.5) + N.mul_scalar(s(1, 2), 2) - N.mul_scalar(s(2, 3), 0.5), h)
            last = N.div_scalar(N.mul_scalar(s(-3, -2), 0.5) - N.mul_scalar(s(-2, -1), 2) + N.mul_scalar(s(-1), 1.5), h)
        out.append(_S.cat(first, N.div_scalar(center, 2), last, d))
    return tuple(out)


def _gradient_coordinates(x: Tensor, coords: Tensor, d: int, edge_order: int) -> Tensor:
    if coords._data.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coords._data.ndim} dimensions!")
    shape = [1] * x._data.ndim
    shape[d] = -1
    h = diff(coords, 1, 0)
    h1, h2 = _narrow(h, 0, 0, -1), _narrow(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    s = lambda a_, b_=None: _narrow(x, d, a_, b_)  # noqa: E731
    center = a * s(0, -2) + b * s(1, -1) + c * s(2)
    if edge_order == 1:
        first = (s(1, 2) - s(0, 1)) / h[0]
        last = (s(-1) - s(-2, -1)) / h[-1]
    else:
        N = _scalar_ops()
        h0, h1_, hl, hl2 = h[0], h[1], h[-1], h[-2]
        first = (-(N.mul_scalar(h0, 2.0) + h1_) / (h0 * (h0 + h1_)) * s(0, 1) + (h0 + h1_) / (h0 * h1_) * s(1, 2)
                 + (-h0) / (h1_ * (h0 + h1_)) * s(2, 3))
        last = (hl / (hl2 * (hl + hl2)) * s(-3, -2) - (hl + hl2) / (hl * hl2) * s(-2, -1)
                + N.mul_scalar(hl, 2) .add(hl2) / (hl * (hl + hl2)) * s(-1))
    return _S.cat(first, center, last, d)  # type: ignore[no-any-return]


def cov(x: Tensor, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``x``'s rows (observations in columns)."""
    data = x._data
    if data.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {data.ndim} dimensions")
    if data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    rows = x.view(1, -1) if data.ndim < 2 else x
    observations = rows._data.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_cov_weights(fweights, "fweights", "iu", "integral", observations)
        w = fweights
    if aweights is not None:
        _check_cov_weights(aweights, "aweights", "fV", "floating point", observations)
        w = aweights if w is None else w * aweights
    w_sum = _make(np.asarray(observations, np.int64)) if w is None else w.sum()
    if w is not None and not w_sum._data != 0:
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (rows if w is None else rows * w).sum(1) / w_sum
    if w is None:
        norm_factor = _make(np.asarray(observations - correction, np.int64))
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    elif fweights is None and observations == 1 and correction == 1:
        norm_factor = _make(np.asarray(0, np.int64))
    else:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if norm_factor._data <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=3)
        norm_factor = _make(np.zeros((), norm_factor._data.dtype))
    if observations == 1 and (fweights is None) != (aweights is None):
        # One observation with one kind of weights: the weighted mean is the observation itself.
        dtype = rows._data.dtype if rows._data.dtype.kind in "fcV" else np.float32
        centered = _make(np.zeros(rows._data.shape, dtype))
    else:
        centered = rows - avg.unsqueeze(1)
    from . import linalg as _L

    c = _L.mm(centered, (centered if w is None else centered * w).t())
    return (c / norm_factor).squeeze()  # type: ignore[no-any-return]


def _check_cov_weights(weights: Tensor, name: str, kinds: str, kind_name: str, observations: int) -> None:
    """``cov``'s checks of ``fweights`` (integral) and ``aweights`` (floating point), in PyTorch's words."""
    data = weights._data
    if data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{data.ndim} dimensions")
    if data.dtype.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got {name} with "
                           f"{scalar_type_name(data.dtype)} dtype")
    if data.size != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {data.size} != {observations}")
    if observations and data.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(x: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``x``'s rows, clipped to [-1, 1]."""
    if x._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{x._data.ndim} dimensions")
    c = cov(x)
    if c._data.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(x: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear",
             ignore_nan: bool = False) -> Tensor:
    """``quantile``/``nanquantile``: sort, pick the two neighbours of each rank, interpolate (the
    graph PyTorch records: sort, gather, lerp, then in-place squeeze/transpose)."""
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_scalar(float(q))}")
        q = _make(np.asarray(q, x._data.dtype if x._data.dtype.kind in "fV" else np.float32))
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    data, qs = x._data, q._data
    if data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if qs.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if data.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if qs.dtype != data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if dim is not None:
        dim = normalize_dim(dim, data.ndim)
    if not ((qs >= 0) & (qs <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        out_shape = [1] * data.ndim if keepdim else []
        ordered = x.reshape(-1).sort().values
    else:
        out_shape = list(data.shape)
        if data.ndim:
            if keepdim:
                out_shape[dim] = 1
            else:
                del out_shape[dim]
        ordered = (x.sort().values if dim == data.ndim - 1 else
                   x.unsqueeze(-1).transpose(dim, -1).sort().values)
    ordered = ordered.view(*out_shape, ordered._data.shape[-1])
    ranks = _quantile_ranks(ordered._data, qs, ignore_nan, interpolation)
    # ranks: (..., len(q)) over the reduced shape with q last
    below = np.floor(ranks).astype(np.int64) if interpolation in ("linear", "midpoint") else ranks.astype(np.int64)
    values = ordered.gather(-1, _make(below))
    if interpolation in ("linear", "midpoint"):
        weights = np.full(ranks.shape, 0.5, data.dtype) if interpolation == "midpoint" else (ranks - below).astype(
            data.dtype)
        above = np.ceil(ranks).astype(np.int64)
        values = values.lerp(ordered.gather(-1, _make(above)), _make(weights))
    if qs.ndim == 0:
        return _S.squeeze_dim_inplace(values, values._data.ndim - 1)  # (PyTorch's in-place view ops' nodes)
    last = values._data.ndim
    return _S.squeeze_dim_inplace(_S.transpose_inplace(_S.unsqueeze_inplace(values, 0), 0, last), last)


def _quantile_ranks(ordered: np.ndarray, qs: np.ndarray, ignore_nan: bool, interpolation: str) -> np.ndarray:
    """Each quantile's (fractional) rank in its sorted slice, ``q`` last: ``ordered`` is
    (..., n) and the result (..., len(q))."""
    q = qs.reshape(-1)
    nan = np.isnan(ordered)
    if ignore_nan:
        ranks = q * (np.sum(~nan, axis=-1, keepdims=True) - 1)
        ranks = np.where(ranks < 0, 0, ranks)
    else:
        last = ordered.shape[-1] - 1
        ranks = np.where(nan.any(axis=-1, keepdims=True), last, q * last)
    ranks = np.broadcast_to(ranks, ordered.shape[:-1] + (q.size,)).astype(ordered.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    return ranks  # type: ignore[no-any-return]
