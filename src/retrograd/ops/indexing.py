"""``tensor[key]`` and ``tensor[key] = value``, decomposed as PyTorch does.

Basic keys (ints, slices, ``None``, ``...``) become view ops (``select``, ``slice``,
``unsqueeze``); any integer-array or boolean component makes the whole key one advanced
``index`` op (``IndexBackward0``), with repeated indices accumulating in backward.
Assignment through a basic key is an in-place ``copy_``/``fill_`` on the view (so the base
gets ``CopySlices``); through an advanced key it is ``index_put_``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..tensor import Tensor, _as_tensor_like
from . import shape as _S
from .inplace import apply_inplace
from .op import apply


def _is_advanced(item: Any) -> bool:
    if isinstance(item, Tensor):
        return not (item._data.ndim == 0 and item._data.dtype.kind in "iu")
    return isinstance(item, (list, np.ndarray, bool, np.bool_))


def _as_index_array(item: Any) -> Any:
    if isinstance(item, Tensor):
        data = item._data
    elif isinstance(item, (list, bool, np.bool_)):
        data = np.asarray(item)
        if data.dtype.kind == "f" and data.size == 0:
            data = data.astype(np.int64)
    else:
        data = np.asarray(item)
    if data.dtype.kind not in "iub":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return data


_BYTE_INDEX_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."


def _byte_masks(key: Any) -> tuple[Any, int]:
    """PyTorch reads a uint8 index tensor as a boolean mask (deprecated, with its warning): the key
    with such tensors replaced by boolean arrays, and how many there were."""
    items = key if isinstance(key, tuple) else (key,)
    found = 0
    out = []
    for item in items:
        data = item._data if isinstance(item, Tensor) else item
        if isinstance(data, np.ndarray) and data.dtype == np.uint8:
            if data.ndim:  # (a 0-d one is read as a bool scalar, without the warning)
                warnings.warn(_BYTE_INDEX_WARNING, UserWarning, stacklevel=4)
            item = data != 0
            found += 1
        out.append(item)
    if not found:
        return key, 0
    return (tuple(out) if isinstance(key, tuple) else out[0]), found


def _normalize_key(key: Any) -> tuple[Any, ...]:
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for item in key:
        if isinstance(item, Tensor) and item._data.ndim == 0 and item._data.dtype.kind in "iu":
            item = int(item._data)
        elif isinstance(item, np.integer):
            item = int(item)
        out.append(item)
    return tuple(out)


def _check_dims(key: tuple[Any, ...], ndim: int) -> int:
    """Number of tensor dims the key consumes; IndexError when too many."""
    consumed = 0
    for item in key:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (Tensor, np.ndarray)) and _as_index_array(item).dtype == np.bool_:
            consumed += max(_as_index_array(item).ndim, 1)
        else:
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return consumed


def getitem(x: Tensor, key: Any) -> Tensor:
    single_slice = isinstance(key, slice)
    key = _byte_masks(key)[0]
    items = _normalize_key(key)
    consumed = _check_dims(items, x._data.ndim)
    out = x
    dim = 0
    advanced: list[tuple[int, np.ndarray]] = []  # applied last, in one index op, as PyTorch does
    for position, item in enumerate(items):
        if item is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif item is Ellipsis:
            dim += x._data.ndim - consumed
        elif _is_advanced(item):
            array = _as_index_array(item)
            advanced.append((dim, array))
            dim += array.ndim if array.dtype == np.bool_ else 1
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
        for d, array in advanced:
            _check_mask_shape(array, out._data.shape, d)
        np_key: list[Any] = []
        covered = 0  # dims of ``out`` the key spans so far (a boolean mask spans mask.ndim)
        for d, array in advanced:
            np_key += [slice(None)] * (d - covered)
            np_key.append(array)
            covered = d + (array.ndim if array.dtype == np.bool_ else 1)
        return apply(_S.index, (out, tuple(np_key) if len(np_key) > 1 else np_key[0]))  # type: ignore[no-any-return]
    if out is x:
        out = apply(_S.alias, (x,))
    return out


def setitem(x: Tensor, key: Any, value: Any) -> None:
    key, byte_masks = _byte_masks(key)
    if byte_masks:
        _refuse_byte_mask_fill(key, value)
    items = _normalize_key(key)
    if any(_is_advanced(item) for item in items):
        np_key = tuple(_as_index_array(i) if _is_advanced(i) else i for i in items)
        if len(np_key) == 1:  # a lone mask: PyTorch's message when its shape does not fit
            _check_mask_shape(np_key[0], x._data.shape, 0)
        values = value if isinstance(value, Tensor) else _as_tensor_like(value, x)
        apply_inplace(_S.index_put, (x, values, np_key if len(np_key) > 1 else np_key[0], False))
        return
    target = getitem(x, key)
    if isinstance(value, Tensor):
        target.copy_(value)
    elif isinstance(value, (int, float, bool, np.generic)):
        target.fill_(value)
    else:
        target.copy_(_as_tensor_like(value, x))


def _refuse_byte_mask_fill(key: Any, value: Any) -> None:
    """A single mask with one value is PyTorch's ``masked_fill_``, which takes no uint8 mask."""
    items = key if isinstance(key, tuple) else (key,)
    if sum(_is_advanced(i) for i in _normalize_key(items)) == 1 and np.size(
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
