"""``default_collate`` (a list of samples -> a batch) and ``default_convert``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._functions import stack
from ...factories import as_tensor, tensor
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _rebuild(template: Any, items: Any) -> Any:
    try:
        return type(template)(items)
    except TypeError:  # a mapping/sequence type that cannot be built from its items
        return items if not isinstance(template, Mapping) else dict(items)


def default_collate(batch: Any) -> Any:
    """Stack tensors (and NumPy arrays) along a new first dim; numbers become tensors (floats as
    float64, ints as int64); strings stay a list; dicts, namedtuples and sequences are collated per
    field (a tuple of fields gives a list, as in PyTorch).

    >>> import retrograd as rg
    >>> x, y = rg.utils.data.default_collate([(rg.ones(2), 0), (rg.zeros(2), 1)])
    >>> x.shape, y.tolist()
    (torch.Size([2, 2]), [0, 1])
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=np.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        return _rebuild(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch, strict=False)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(samples) for samples in zip(*batch, strict=False)]
        if isinstance(elem, tuple):
            return columns
        return _rebuild(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays (and NumPy scalars) into tensors, recursively through containers."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "OSUV" else as_tensor(data)
    if isinstance(data, np.generic):
        return data if data.dtype.kind in "OSUV" else as_tensor(data)
    if isinstance(data, Mapping):
        return _rebuild(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data
