"""Reductions: ``sum``, ``mean``, ``max``/``min`` (all and per dim), vector norms, ``sum_to_size``."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..tensor import Tensor
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
    out = tuple(sorted({normalize_dim(d, ndim) for d in dims}))
    if len(out) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
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


# -- sum, mean --------------------------------------------------------------------------------


def _sum(x: np.ndarray, dims: Any, keepdim: bool, dtype: Any) -> np.ndarray:
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    return np.asarray(np.sum(x, axis=_axis(dims), keepdims=keepdim, dtype=dtype))


sum_all = Op("sum", lambda x, dtype: _sum(x, None, False, dtype), node="SumBackward0", params=("dtype",),
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
    return np.asarray(np.mean(x, axis=_axis(dims), keepdims=keepdim), dtype=x.dtype)


def _count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    if dims is None:
        return int(np.prod(shape, dtype=np.int64))
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))


mean_all = Op("mean", lambda x: _mean(x, None, False), node="MeanBackward0",
              grads=(lambda grad, self_shape: grad.expand(self_shape) / _count(self_shape, None),))

mean_dim = Op("mean", _mean, node="MeanBackward1", params=("dim", "keepdim"),
              grads=(lambda grad, self_shape, dim, keepdim:
                     expand_reduced(grad, self_shape, dim, keepdim) / _count(self_shape, dim),))

# -- max / min --------------------------------------------------------------------------------


def _evenly_distribute(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """PyTorch's rule for max()/min() over all elements: ties share the gradient equally."""
    mask = self == result
    return grad * mask / mask.sum()


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
            raise IndexError(f"max(): Expected reduction dim {dim} to have non-zero size.")
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
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    zeros = _make(np.zeros(shape, grad._data.dtype))
    return zeros.scatter(dim, indices, grad)


def _selecting_grad(grads: Any, result1: Tensor, self_shape: tuple[int, ...], dim: int, keepdim: bool) -> tuple[Tensor]:
    return (value_selecting_backward(grads[0], result1, self_shape, dim, keepdim),)


max_dim = Op("max", _select_along(np.argmax), node="MaxBackward0", params=("dim", "keepdim"), outputs=2,
             differentiable_outputs=(True, False), grads=_selecting_grad)
min_dim = Op("min", _select_along(np.argmin), node="MinBackward0", params=("dim", "keepdim"), outputs=2,
             differentiable_outputs=(True, False), grads=_selecting_grad)

argmax = Op("argmax", lambda x, dim, keepdim: _arg_reduce(np.argmax, x, dim, keepdim), params=("dim", "keepdim"))
argmin = Op("argmin", lambda x, dim, keepdim: _arg_reduce(np.argmin, x, dim, keepdim), params=("dim", "keepdim"))


def _arg_reduce(fn: Any, x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    if dim is None:
        out = np.asarray(fn(x))
        return out.reshape((1,) * x.ndim) if keepdim else out
    return np.asarray(fn(x, axis=dim, keepdims=keepdim))


# -- norms ------------------------------------------------------------------------------------


def _vector_norm(x: np.ndarray, ord: float, dims: Any, keepdim: bool) -> np.ndarray:  # noqa: A002
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(x.dtype)}"
        )
    axis = _axis(dims)
    a = np.abs(x)
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


def _vector_norm_grad(grad: Tensor, self: Tensor, result: Tensor, ord: float, dim: Any, keepdim: bool) -> Tensor:  # noqa: A002
    shape = self.shape
    if not keepdim and shape:
        kshape = _keepdim_shape(tuple(shape), dim)
        grad, result = grad.reshape(kshape), result.reshape(kshape)
    if ord == 0:
        return self * 0
    if ord == 1:
        return grad * self.sign()
    if ord == 2:
        scale = (grad / result).masked_fill(result == 0, 0.0)
        return self * scale
    if ord in (np.inf, -np.inf):
        mask = self.abs() == result
        count = mask.sum(dim=dim, keepdim=True) if dim is not None else mask.sum()
        return grad * self.sign() * mask / count
    scale = (grad / result ** (ord - 1)).masked_fill(result == 0, 0.0)
    return self * self.abs() ** (ord - 2) * scale


vector_norm = Op("linalg_vector_norm", _vector_norm, node="LinalgVectorNormBackward0",
                 params=("ord", "dim", "keepdim"), grads=(_vector_norm_grad,))

# -- sum_to_size: how the engine reduces a broadcast gradient ---------------------------------


def _sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = x.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != xs for s, xs in zip(shape, x.shape[lead:])):
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(x.shape)}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1
    )
    if axes:
        x = np.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape)


sum_to_size = Op("sum_to_size", _sum_to, node="SumBackward1", params=("size",),
                 grads=(lambda grad, self_shape: grad.expand(self_shape),))
