"""``tensor[key]`` and ``tensor[key] = value``, decomposed as PyTorch does.

Basic keys (ints, slices, ``None``, ``...``) become view ops (``select``, ``slice``,
``unsqueeze``); any integer-array or boolean component makes the whole key one advanced
``index`` op (``IndexBackward0``), with repeated indices accumulating in backward.
Assignment through a basic key is an in-place ``copy_``/``fill_`` on the view (so the base
gets ``CopySlices``); through an advanced key it is ``index_put_``.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from .._dtype import result_type, scalar_type_name
from ..tensor import Tensor, _as_tensor_like
from . import elementwise as _E
from . import shape as _S
from .inplace import apply_inplace
from .op import Op, apply, broadcast_error


def _is_advanced(item: Any) -> bool:
    if isinstance(item, Tensor):
        return not (item._data.ndim == 0 and item._data.dtype.kind in "iu")
    return isinstance(item, (list, np.ndarray, bool, np.bool_))


def _as_index_array(item: Any) -> Any:
    if isinstance(item, Tensor):
        data = item._data
    elif isinstance(item, (list, bool, np.bool_)):
        data = np.asarray(item)
        if data.dtype.kind in "fV" and data.size == 0:
            data = data.astype(np.int64)
    else:
        data = np.asarray(item)
    if data.dtype.kind not in "iub":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return data


_BYTE_INDEX_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."


def _key_items(key: Any) -> tuple[tuple[Any, ...], int]:
    """The items of a key, as the indexing code reads them (a 0-d integer tensor or NumPy integer
    as an int; PyTorch reads a uint8 index tensor as a boolean mask, deprecated, with its
    warning), and how many uint8 masks there were. One pass: it runs on every ``x[key]``."""
    if not isinstance(key, tuple):
        key = (key,)
    found = 0
    out = []
    for item in key:
        if isinstance(item, Tensor):
            data = item._data
            if data.dtype.char == "B":  # (uint8)
                item = _byte_mask(data)
                found += 1
            elif data.ndim == 0 and data.dtype.kind in "iu":
                item = int(data)
        elif isinstance(item, np.ndarray):
            if item.dtype.char == "B":
                item = _byte_mask(item)
                found += 1
        elif isinstance(item, np.integer):
            item = int(item)
        out.append(item)
    return tuple(out), found


def _byte_mask(data: np.ndarray) -> Any:
    if data.ndim:  # (a 0-d one is read as a bool scalar, without the warning)
        warnings.warn(_BYTE_INDEX_WARNING, UserWarning, stacklevel=5)
    return data != 0


def _check_dims(key: tuple[Any, ...], ndim: int) -> int:
    """Number of tensor dims the key consumes; IndexError when too many."""
    consumed = 0
    for item in key:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (Tensor, np.ndarray)):
            array = _as_index_array(item)
            consumed += max(array.ndim, 1) if array.dtype.kind == "b" else 1
        else:
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return consumed


def getitem(x: Tensor, key: Any) -> Tensor:
    single_slice = isinstance(key, slice)
    items = _key_items(key)[0]
    consumed = _check_dims(items, x._data.ndim)
    out = x
    dim = 0
    advanced: list[tuple[int, np.ndarray, Any]] = []  # applied last, in one index op, as PyTorch does
    for position, item in enumerate(items):
        if item is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif item is Ellipsis:
            dim += x._data.ndim - consumed
        elif isinstance(item, Tensor) or _is_advanced(item):  # (a 0-d integer tensor is an int by now)
            array = _as_index_array(item)
            advanced.append((dim, array, item))
            dim += array.ndim if array.dtype.kind == "b" else 1
        elif isinstance(item, int):
            size = out._data.shape[dim]
            if not -size <= item < size:  # PyTorch names the index's position in the key as the dimension
                raise IndexError(f"index {item} is out of bounds for dimension {position} with size {size}")
            out = out.select(dim, item)
        elif isinstance(item, slice):
            size = out._data.shape[dim]
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = item.indices(size)
            stop = max(stop, start)
            if single_slice or not (start == 0 and stop == size and step == 1):
                out = apply(_S.slice_op, (out, dim, start, stop, step))
            dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
    if advanced:
        np_key: list[Any] = []
        covered = 0  # dims of ``out`` the key spans so far (a boolean mask spans mask.ndim)
        for d, array, item in advanced:
            np_key += [slice(None)] * (d - covered)
            np_key.append(_lone_index(array, item))
            if array.dtype.kind == "b":
                _check_mask_shape(array, out._data.shape, d)
                covered = d + array.ndim
            else:
                covered = d + 1
        if len(np_key) > 1:
            return apply(_S.index, (out, tuple(np_key)))  # type: ignore[no-any-return]
        return apply(_S.index, (out, np_key[0]))  # type: ignore[no-any-return]
    if out is x:
        out = apply(_S.alias, (x,))
    return out


def setitem(x: Tensor, key: Any, value: Any) -> None:
    items, byte_masks = _key_items(key)
    if byte_masks:
        _refuse_byte_mask_fill(items, value)
    if any(_is_advanced(item) for item in items):
        np_key = tuple(_lone_index(_as_index_array(i), i) if _is_advanced(i) else i for i in items)
        if len(np_key) == 1:  # a lone mask: PyTorch's message when its shape does not fit
            _check_mask_shape(_as_index_array(items[0]), x._data.shape, 0)
        values = value if isinstance(value, Tensor) else _as_tensor_like(value, x)
        apply_inplace(_S.index_put, (x, values, np_key[0] if len(np_key) == 1 else np_key, False))
        return
    target = getitem(x, key)
    if isinstance(value, Tensor):
        target.copy_(value)
    elif isinstance(value, (int, float, bool, np.generic)):
        target.fill_(value)
    else:
        target.copy_(_as_tensor_like(value, x))


def _lone_index(array: Any, item: Any) -> Any:
    """An index of a key: the tensor it was read from, if ``array`` is that tensor's own data (so
    that the node keeps it with its version: written in place before backward, PyTorch's error),
    else the array (a list, a uint8 mask read as bool, a batched tensor's logical array)."""
    if isinstance(item, Tensor) and item._data is array and type(array) is np.ndarray:
        return item
    return array


def _refuse_byte_mask_fill(items: tuple[Any, ...], value: Any) -> None:
    """A single mask with one value is PyTorch's ``masked_fill_``, which takes no uint8 mask."""
    if sum(_is_advanced(i) for i in items) == 1 and np.size(
            value._data if isinstance(value, Tensor) else value) == 1:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def _check_mask_shape(mask: np.ndarray, shape: tuple[int, ...], start: int) -> None:
    """PyTorch's IndexError for a boolean mask whose shape differs from the dims it covers."""
    if mask.dtype != np.bool_:
        return
    for i, size in enumerate(mask.shape):
        if start + i < len(shape) and shape[start + i] != size:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {i} does not match the shape of the indexed "
                f"tensor {list(shape)} at index {start + i}"
            )


# -- scatter_reduce, index_reduce, index_fill, masked_scatter, put, index_put forms ------------
# (issue #12: the indexing ops a user ports; backward rules are PyTorch's, written in ops so that
# they differentiate again)


def _const(array: Any) -> Tensor:
    return Tensor._make(np.asarray(array))


def _delayed_error_forward(x: np.ndarray, message: str) -> np.ndarray:
    return x


def _delayed_error_rule(grad: Tensor, message: str) -> Tensor:
    raise RuntimeError(message)


# PyTorch's DelayedError: an identity whose output's node (``Error``, as PyTorch's) raises in backward
# (a second derivative).
delayed_error = Op("delayed_error", _delayed_error_forward, node="Error", params=("message",),
                   grads=(_delayed_error_rule,), jvp="transpose")

_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a position starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind in "fV":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.fmax, "amin": np.fmin}


def _reduce_into(out: np.ndarray, key: Any, values: np.ndarray, reduce: str, include_self: bool,
                 counts_shape: tuple[int, ...]) -> np.ndarray:
    """Reduce ``values`` into ``out[key]`` (repeated positions combine), in place; ``mean``
    divides by the number of contributions (floor division for integers, as PyTorch)."""
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    if reduce in ("amax", "amin"):
        # NaN wins (PyTorch's max/min propagate it); fmax/fmin alone would drop it.
        ufunc = np.maximum if reduce == "amax" else np.minimum
        ufunc.at(out, key, values)
    else:
        _UFUNCS[reduce].at(out, key, values)
    if reduce == "mean":
        counts = np.ones(counts_shape, np.int64) if include_self else np.zeros(counts_shape, np.int64)
        np.add.at(counts, key, 1)
        counts[counts == 0] = 1
        if out.dtype.kind in "fcV":
            out[...] = out / counts
        else:
            out[...] = np.floor_divide(out, counts)
    return out


def _scatter_reduce(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray, reduce: str,
                    include_self: bool) -> np.ndarray:
    index = _S._array(index)
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _S._check_scatter(x, src, dim, index, "scatter")
    out = x.copy()
    if index.size:
        view = out.reshape(x.shape or (1,))
        key = _S._along_axis_key(index.reshape(index.shape or (1,)), dim)
        _reduce_into(view, key, _S._src_region(src, index), reduce, include_self, view.shape)
    return out


def _scatter_key(shape: tuple[int, ...], index: np.ndarray, dim: int) -> Any:
    return _S._along_axis_key(index.reshape(index.shape or (1,)), dim)


def _to_src_shape(g: Tensor, src_shape: tuple[int, ...]) -> Tensor:
    """A gradient over ``index``'s shape as one over ``src`` (larger src: zeros for the rest)."""
    if tuple(g._data.shape) == tuple(src_shape):
        return g
    if not src_shape or not g._data.shape:
        return g.reshape(src_shape)
    region = tuple(slice(0, s) for s in g._data.shape)
    return _S.index_put(_const(np.zeros(src_shape, g._data.dtype)), g, region, False)  # type: ignore[no-any-return]


def _gather(t: Tensor, dim: int, index: np.ndarray) -> Tensor:
    return _S.gather(t, dim, index)  # type: ignore[no-any-return]


def _scatter_reduce_grad(grad: Tensor, self: Tensor, src: Tensor, result: Tensor, dim: int, index: Any,
                         reduce: str, include_self: bool, needs: tuple[bool, ...]) -> tuple[Tensor, Tensor]:
    index = _S._array(index)
    x = self._data
    dtype = x.dtype
    key = _scatter_key(x.shape, index, dim)
    src_region = _S._src_region(src._data, index) if index.size else src._data.reshape(-1)[:0]
    if reduce == "sum":
        grad_self, grad_src = grad, _gather(grad, dim, index)
    elif reduce == "prod":
        masked_self = self.masked_fill(_const(x == 0), 1)
        grad_self = grad * scatter_reduce(masked_self, src, dim, index, reduce, include_self) / masked_self
        src_zero = src._data == 0
        zeros_in = np.zeros(x.shape or (1,), dtype)
        if index.size:
            np.add.at(zeros_in, key, (src_region == 0).astype(dtype))
        num_zeros = _S._gather(zeros_in.reshape(x.shape), dim, index)
        single = np.zeros(src._data.shape, bool)
        single[tuple(slice(0, s) for s in (index.shape or (1,)))] = (src_region == 0) & (num_zeros == 1)
        single = single.reshape(src._data.shape)
        masked_src_result = scatter_reduce(self, src.masked_fill(_const(single), 1), dim, index, reduce,
                                           include_self)
        region = _region(single, index)
        divisor = _gather_src(src.masked_fill(_const(src_zero), 1), index)
        grad_src = _E.where(_const(region), _gather(grad * masked_src_result, dim, index),
                            _gather(grad * result, dim, index) / divisor)
        if (num_zeros > 1).any():
            grad_src = delayed_error(grad_src, "scatter_reduce(): Double backward is unsupported for src when >1 "
                                     "zeros in src are scattered to the same position in self")
    elif reduce == "mean":
        counts = np.ones(x.shape or (1,), dtype) if include_self else np.zeros(x.shape or (1,), dtype)
        if index.size:
            np.add.at(counts, key, 1)
        counts[counts == 0] = 1
        counts = counts.reshape(x.shape)
        grad_self = grad / _const(counts)
        grad_src = _gather(grad, dim, index) / _const(_S._gather(counts, dim, index))
    else:  # amax / amin: ties share the gradient evenly
        res = result._data
        value = _S._gather(res, dim, index)
        self_is = (x == res).astype(dtype)
        src_is = (src_region.reshape(index.shape) == value).astype(dtype)
        n = self_is.reshape(x.shape or (1,)).copy()
        if index.size:
            np.add.at(n, key, src_is.reshape(index.shape or (1,)))
        distributed = grad / _const(n.reshape(x.shape))
        grad_self = _const(self_is) * distributed
        grad_src = _const(src_is) * _gather(distributed, dim, index)
    if not include_self:
        grad_self = _S.scatter_value(grad_self, dim, index, 0)
    if needs[1] and grad_src._data.ndim and src._data.ndim:
        _S.check_src_grad_shape("ScatterReduceBackward0", tuple(grad_src._data.shape), tuple(src._data.shape))
    return grad_self, _to_src_shape(grad_src, tuple(src._data.shape))


def _region(full: np.ndarray, index: np.ndarray) -> np.ndarray:
    return full.reshape(full.shape or (1,))[tuple(slice(0, s) for s in (index.shape or (1,)))].reshape(index.shape)


def _gather_src(t: Tensor, index: np.ndarray) -> Tensor:
    """``t``'s leading region of ``index``'s shape (src may be larger than index)."""
    if tuple(t._data.shape) == tuple(index.shape):
        return t
    return t[tuple(slice(0, s) for s in index.shape)]


scatter_reduce: Op = Op(
    "scatter_reduce", _scatter_reduce, node="ScatterReduceBackward0", inputs=("self", "src"),
    params=("dim", "index", "reduce", "include_self"), grads=_scatter_reduce_grad,
    variants=("function", "method", "inplace"), signature="dim, index, src, reduce, *, include_self=True",
    convert={"dim": "dim", "index": "versioned_index", "reduce": "str"}, jvp="transpose", versioned=("index",))


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")
INDEX_REDUCE_WARNING = "index_reduce() is in beta and the API may change at any time."
_WARNED: list[bool] = []


def _check_index_reduce(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray, reduce: str) -> np.ndarray:
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not _WARNED:  # (PyTorch warns once per process)
        _WARNED.append(True)
        warnings.warn(INDEX_REDUCE_WARNING, UserWarning, stacklevel=4)
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {list(index.shape)}")
    if src.dtype != x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(x.dtype)}) and source "
                           f"({scalar_type_name(src.dtype)}) must have the same scalar type")
    xs, ss = x.shape or (1,), src.shape or (1,)
    if src.ndim and len(ss) != len(xs) or not x.ndim and src.ndim or any(
            a != b for d, (a, b) in enumerate(zip(xs, ss, strict=False)) if d != dim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(x.shape)} source.shape = {list(src.shape)}")
    idx = index.reshape(-1)
    size = src.shape[dim] if src.ndim else 1
    if idx.size != size:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({size}), for dim: {dim}")
    limit = x.shape[dim] if x.ndim else 1
    if idx.size and ((idx < 0) | (idx >= limit)).any():
        raise IndexError("index out of range in self")
    return idx


def _index_reduce(x: np.ndarray, src: np.ndarray, dim: int, index: Any, reduce: str,
                  include_self: bool) -> np.ndarray:
    idx = _check_index_reduce(x, src, dim, _S._array(index), reduce)
    out = x.copy()
    view = out.reshape(x.shape or (1,))
    key: Any = (slice(None),) * dim + (idx,)
    _reduce_into(view, key, src.reshape(src.shape or (1,)), reduce, include_self, view.shape)
    return out


def _index_reduce_grad(grad: Tensor, self: Tensor, source: Tensor, result: Tensor, dim: int, index: Any,
                       reduce: str, include_self: bool) -> tuple[Tensor, Tensor]:
    index = _S._array(index)
    x = self._data
    dtype = x.dtype
    idx = index.reshape(-1)
    key: Any = (slice(None),) * dim + (idx,)

    def select(t: Tensor) -> Tensor:
        return _S.index_select(t, dim, idx).reshape(source._data.shape)  # type: ignore[no-any-return]

    if reduce == "prod":
        masked_self = self.masked_fill(_const(x == 0), 1)
        grad_self = grad * index_reduce(masked_self, source, dim, index, reduce, include_self) / masked_self
        src_zero = source._data == 0
        zeros_in = np.zeros(x.shape or (1,), dtype)
        np.add.at(zeros_in, key, src_zero.reshape(source._data.shape or (1,)).astype(dtype))
        num_zeros = np.take(zeros_in, idx, axis=dim).reshape(source._data.shape)
        single = src_zero & (num_zeros == 1)
        masked_src_result = index_reduce(self, source.masked_fill(_const(single), 1), dim, index, reduce,
                                         include_self)
        grad_src = _E.where(_const(single), select(grad * masked_src_result),
                            select(grad * result) / source.masked_fill(_const(src_zero), 1))
        if (num_zeros > 1).any():
            grad_src = delayed_error(grad_src, "index_reduce(): Double backward is unsupported for source when >1 "
                                     "zeros in source are scattered to the same position in self")
    elif reduce == "mean":
        counts = np.ones(x.shape or (1,), dtype) if include_self else np.zeros(x.shape or (1,), dtype)
        np.add.at(counts, key, 1)
        counts[counts == 0] = 1
        grad_self = grad / _const(counts.reshape(x.shape))
        grad_src = select(grad) / _const(np.take(counts, idx, axis=dim).reshape(source._data.shape))
    else:
        res = result._data
        value = np.take(res.reshape(x.shape or (1,)), idx, axis=dim).reshape(source._data.shape)
        self_is = (x == res).astype(dtype)
        src_is = (source._data == value).astype(dtype)
        n = self_is.reshape(x.shape or (1,)).copy()
        np.add.at(n, key, src_is.reshape(source._data.shape or (1,)))
        distributed = grad / _const(n.reshape(x.shape))
        grad_self = _const(self_is) * distributed
        grad_src = _const(src_is) * select(distributed)
    if not include_self:
        grad_self = index_fill(grad_self, dim, index, 0)
    return grad_self, grad_src


index_reduce: Op = Op(
    "index_reduce", _index_reduce, node="IndexReduceBackward0", inputs=("self", "source"),
    params=("dim", "index", "reduce", "include_self"), grads=_index_reduce_grad,
    variants=("function", "method", "inplace"), signature="dim, index, source, reduce, *, include_self=True",
    convert={"dim": "dim", "index": "versioned_index", "reduce": "str"}, jvp="transpose", versioned=("index",))


def _fill_index(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = index.reshape(-1)
    size = x.shape[dim] if x.ndim else 1
    if idx.size and ((idx < -size) | (idx >= size)).any():
        bad = int(idx[(idx < -size) | (idx >= size)][0])
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return np.where(idx < 0, idx + size, idx)


def _index_fill(x: np.ndarray, dim: int, index: Any, value: Any) -> np.ndarray:
    idx = _fill_index(x, dim, _S._array(index))
    out = x.copy()
    out.reshape(x.shape or (1,))[(slice(None),) * dim + (idx,)] = value
    return out


def _index_fill_tensor(x: np.ndarray, value: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    if value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    return _index_fill(x, dim, index, value.astype(x.dtype))


def _index_fill_value_grad(grad: Tensor, dim: int, index: Any) -> Tensor:
    unique = np.unique(_S._array(index).reshape(-1))  # a repeated index fills once: its gradient counts once
    return _S.index_select(grad, dim, unique).sum()  # type: ignore[no-any-return]


index_fill: Op = Op("index_fill", _index_fill, node="IndexFillBackward0", params=("dim", "index", "value"),
                    saved=("dim", "index"), grads=(lambda grad, dim, index: index_fill(grad, dim, index, 0),),
                    variants=("function", "method", "inplace"), signature="dim, index, value",
                    convert={"dim": "dim", "index": "versioned_index"}, jvp="transpose", versioned=("index",))
index_fill_tensor: Op = Op(
    "index_fill", _index_fill_tensor, node="IndexFillBackward1", inputs=("self", "value"), params=("dim", "index"),
    saved=("dim", "index"),
    grads=(lambda grad, dim, index: index_fill(grad, dim, index, 0), _index_fill_value_grad),
    variants=("function", "method", "inplace"), signature="dim, index, value",
    convert={"dim": "dim", "index": "versioned_index"}, jvp="transpose", versioned=("index",))


def _check_masked_scatter_dtypes(x: np.ndarray, source: np.ndarray) -> None:
    if source.dtype != x.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{scalar_type_name(x.dtype)} and {scalar_type_name(source.dtype)}")


def _scatter_masked(x: np.ndarray, full: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``x`` (broadcast to ``full``'s shape, a copy) with ``source``'s leading elements where
    ``full`` is set; PyTorch's errors for a mask that is not bool and a source too short."""
    if full.dtype != np.bool_:
        if full.dtype == np.uint8:  # (PyTorch warns, then refuses it as any other non-bool mask)
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
                          "please use a mask with dtype torch.bool instead.", UserWarning, stacklevel=2)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(full.dtype)}")
    out = np.array(np.broadcast_to(x, full.shape))
    count = int(full.sum())
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[full] = source.reshape(-1)[:count]
    return out


def _masked_scatter(x: np.ndarray, mask: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``masked_scatter``: as PyTorch, the mask and self are broadcast together before the dtypes are checked."""
    try:
        shape = np.broadcast_shapes(mask.shape, x.shape)
    except ValueError:
        raise RuntimeError(broadcast_error([mask.shape, x.shape])) from None
    _check_masked_scatter_dtypes(x, source)
    return _scatter_masked(x, np.broadcast_to(mask, shape), source)


def _masked_scatter_in_place(x: np.ndarray, mask: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``masked_scatter_``: as PyTorch, the dtypes are checked first, then the mask is expanded to self's shape."""
    _check_masked_scatter_dtypes(x, source)
    return _scatter_masked(x, _S._expand(mask, x.shape), source)


def _masked_scatter_backward(grad: np.ndarray, mask: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    full = np.broadcast_to(mask, grad.shape)
    picked = grad[full]
    numel = int(np.prod(sizes, dtype=np.int64))
    out = np.zeros(numel, grad.dtype)
    out[:picked.size] = picked
    return out.reshape(sizes)


masked_scatter_backward: Op = Op(
    "masked_scatter_backward", _masked_scatter_backward, node="MaskedScatterBackwardBackward0",
    params=("mask", "sizes"),
    grads=(lambda grad, self_shape, mask: masked_scatter(_const(np.zeros(self_shape, grad._data.dtype)), grad,
                                                         mask),), jvp="transpose")


def _masked_scatter_source_grad(grad: Tensor, source_shape: tuple[int, ...], mask: Any) -> Tensor:
    return masked_scatter_backward(grad, _S._array(mask), tuple(source_shape))  # type: ignore[no-any-return]


def _masked_scatter_entry(forward: Any, variants: tuple[str, ...]) -> Op:
    return Op("masked_scatter", lambda x, source, mask: forward(x, _S._array(mask), source), node="MaskedScatterBackward0",
              inputs=("self", "source"), params=("mask",), saved=("mask", "source_sym_sizes"),
              grads=(lambda grad, mask: grad.masked_fill(_const(_S._array(mask)), 0.0), _masked_scatter_source_grad),
              variants=variants, signature="mask, source", convert={"mask": "versioned_mask", "source": "tensor"},
              jvp="transpose", versioned=("mask",))


masked_scatter: Op = _masked_scatter_entry(_masked_scatter, ("function", "method"))
# The in-place form checks its arguments in another order (and expands the mask, not both): its own entry.
masked_scatter_inplace: Op = _masked_scatter_entry(_masked_scatter_in_place, ("inplace",))


def _put_positions(x: np.ndarray, index: np.ndarray, source: np.ndarray) -> np.ndarray:
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    if source.dtype != x.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_type_name(x.dtype)} and source.dtype = {scalar_type_name(source.dtype)}")
    if source.size != index.size:
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")
    flat = index.reshape(-1)
    bad = (flat < -x.size) | (flat >= x.size)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor of {x.size} elements.")
    return np.where(flat < 0, flat + x.size, flat)  # type: ignore[no-any-return]


def _put(x: np.ndarray, source: np.ndarray, index: Any, accumulate: bool) -> np.ndarray:
    positions = _put_positions(x, _S._array(index), source)
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, positions, source.reshape(-1))
    else:
        flat[positions] = source.reshape(-1)
    return out


put: Op = Op(
    "put", _put, node="PutBackward0", inputs=("self", "source"), params=("index", "accumulate"),
    saved=("accumulate", "index", "source"),
    grads=(lambda grad, source, index, accumulate:
           grad if accumulate else put(grad, _const(np.zeros(source._data.shape, grad._data.dtype)), index, False),
           lambda grad, source, index: _S.take(grad, index).reshape(source._data.shape)),
    variants=("function", "method", "inplace"), signature="index, source, accumulate=False",
    convert={"index": "versioned_index", "accumulate": "bool"}, jvp="linear", versioned=("index",))


def index_put_key(x: Tensor, indices: Any) -> Any:
    """``index_put``'s tuple of index tensors (``None`` for a whole dim) as one NumPy key."""
    items = tuple(indices)
    key = tuple(slice(None) if i is None else _as_index_array(i) for i in items)
    if len(key) > x._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim} (got {len(key)})")
    _check_dims(key, x._data.ndim)
    dim = 0
    for item in key:  # PyTorch's message for an integer index out of range, before NumPy's
        if isinstance(item, np.ndarray) and item.dtype != np.bool_:
            size = x._data.shape[dim]
            bad = (item < -size) | (item >= size)
            if bad.any():
                raise IndexError(f"index {int(item[bad].flat[0])} is out of bounds for dimension {dim} with size {size}")
        dim += item.ndim if isinstance(item, np.ndarray) and item.dtype == np.bool_ else 1
    key = tuple(_lone_index(k, item) for k, item in zip(key, items, strict=True))
    return key if len(key) != 1 else key[0]


def index_put_values(x: Tensor, values: Tensor, key: Any) -> Tensor:
    """``values`` checked as PyTorch's index_put does: the same dtype, broadcastable to the result."""
    if values._data.dtype != x._data.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(x._data.dtype)} for the destination and "
                           f"{scalar_type_name(values._data.dtype)} for the source.")
    target = np.empty(x._data.shape, np.bool_)[_S.key_arrays(key)].shape
    shape = values._data.shape
    try:
        fits = np.broadcast_shapes(shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot be broadcast to indexing "
                           f"result of shape {list(target)}")
    return values


def nonzero_static(x: Tensor, size: int, fill_value: int) -> Tensor:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(x._data).astype(np.int64)
    out = np.full((size, x._data.ndim), fill_value, np.int64)
    n = builtins.min(size, found.shape[0])
    out[:n] = found[:n]
    return Tensor._make(out)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat ``indices`` in a tensor of ``shape`` (Python's floor modulo wraps
    out-of-range and negative indices, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        if isinstance(indices, (int, np.integer)) and not isinstance(indices, bool):
            indices = Tensor._make(np.asarray(indices, np.int64))
        else:
            raise TypeError(f"expected 'indices' to be integer dtype, but got {type(indices).__name__}")
    data = indices._data
    if data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    out = []
    rest = data.astype(np.int64)
    for size in reversed(dims):
        out.append(np.mod(rest, size) if size else np.zeros_like(rest))
        rest = np.floor_divide(rest, size) if size else rest
    return tuple(Tensor._make(a) for a in reversed(out))


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            "isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one of:\n"
            " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = False, "
            "Tensor out = None)\n"
            " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = False, "
            "Tensor out = None)\n"
            " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = False, "
            "Tensor out = None)\n")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    for arr in (a, b):  # (PyTorch's isin has no bool or complex kernel; a Python complex is ComplexDouble)
        if arr.dtype == np.bool_ or arr.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_type_name(arr.dtype)}")
    common = result_type((elements, test_elements))
    found = np.isin(a.astype(common), b.astype(common), invert=bool(invert))
    return Tensor._make(np.asarray(found))


def _check_index_copy(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """``index`` as a vector of positions along ``dim``, after PyTorch's checks of index_copy, in its order."""
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if src.ndim == 0 and index.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {index.size})")
    if src.ndim != x.ndim and src.ndim and x.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({src.ndim}), destination dimensionality ({x.ndim})")
    if index.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    if src.dtype != x.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{scalar_type_name(x.dtype)} and (source) {scalar_type_name(src.dtype)}")
    x_slice = x.shape[:dim] + x.shape[dim + 1:]
    src_slice = src.shape[:dim] + src.shape[dim + 1:]
    if x_slice != src_slice:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
            f"{' '.join(map(str, x_slice))} at dimension {dim} and source slice shape: "
            f"{' '.join(map(str, src_slice))} at dimension 0.")
    if src.ndim and index.size != src.shape[dim]:
        raise IndexError(f"index_copy_(): Number of indices ({index.size}) should be equal to source.size(dim) "
                         f"({src.shape[dim]})")
    idx = index.reshape(-1)
    size = x.shape[dim] if x.ndim else 1
    bad = (idx < 0) | (idx >= size)
    if src.size and bad.any():  # (PyTorch checks while copying: nothing to copy, nothing checked)
        raise IndexError(f"index_copy_(): index {int(idx[bad][0])} is out of bounds for dimension {dim} with size "
                         f"{size}")
    return idx


def _index_copy(x: np.ndarray, src: np.ndarray, dim: int, index: Any) -> np.ndarray:
    idx = _check_index_copy(x, src, dim, _S._array(index))
    out = x.copy()
    if not src.size:  # (nothing to copy: PyTorch checks no index either)
        return out
    # A repeated index takes the last of its rows, as PyTorch's CPU copy does (its docs: nondeterministic).
    out.reshape(x.shape or (1,))[(slice(None),) * dim + (idx,)] = src if x.ndim else src.reshape(-1)
    return out


def _index_copy_source_grad(grad: Tensor, source_shape: tuple[int, ...], dim: int, index: Any) -> Tensor:
    picked = _S.index_select(grad, dim, _S._array(index).reshape(-1))
    # PyTorch's formula expands to the source's shape (its ExpandBackward0 in double backward).
    return picked.expand(source_shape) if source_shape else picked.reshape(())  # type: ignore[no-any-return]


index_copy: Op = Op(
    "index_copy", _index_copy, node="IndexCopyBackward0", inputs=("self", "source"), params=("dim", "index"),
    saved=("dim", "index", "source", "source_dim"),
    # The source rule names ``source`` so that the node keeps it (PyTorch's ``_saved_source``) and
    # ``source_shape`` so that the node records the inputs' shapes (``_saved_source_dim`` even
    # when only self requires grad).
    grads=(lambda grad, dim, index: index_fill(grad, dim, index, 0),
           lambda grad, source, source_shape, dim, index: _index_copy_source_grad(grad, source_shape, dim, index)),
    variants=("function", "method", "inplace"), signature="dim, index, source",
    convert={"dim": "dim", "index": "versioned_index", "source": "tensor"}, jvp="linear", versioned=("index",))
