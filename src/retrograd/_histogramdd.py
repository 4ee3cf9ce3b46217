"""``torch.histogramdd``: the histogram of points in D dimensions (the input's innermost dim), with
PyTorch's bin edges (uniform edges made by its linspace, or given per dimension), its range and
density rules and its messages. Not differentiable, as in PyTorch (whose backward is not
implemented). Loaded on first use.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._dtype import scalar_type_name
from .ops.reduce import _bin_edges
from .tensor import Tensor, _cpp_type_name

_WHERE = "torch.histogramdd: "


def _overloads(bins: Any) -> TypeError:
    return TypeError(
        f"histogramdd() received an invalid combination of arguments - got (Tensor, bins={type(bins).__name__}), "
        "but expected one of:\n"
        " * (Tensor input, int bins, tuple of floats range = None, Tensor weight = None, bool density = False)\n"
        " * (Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = None, bool density = "
        "False)\n"
        " * (Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight = None, bool density = "
        "False)\n")


def histogramdd(input: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A001, A002
                weight: Tensor | None = None, density: bool = False) -> Any:
    """Counts of the points ``input[..., :]`` (D coordinates each) in a D-dimensional grid of bins:
    ``(hist, bin_edges)`` with ``bin_edges`` a tuple of D edge tensors.

    >>> import retrograd as torch
    >>> points = torch.tensor([[0., 1.], [1., 0.], [2., 0.], [2., 2.]])
    >>> hist, edges = torch.histogramdd(points, bins=[2, 2])
    >>> hist
    tensor([[0., 1.],
            [2., 1.]])
    >>> edges
    (tensor([0., 1., 2.]), tensor([0., 1., 2.]))
    """
    from .ops.return_types import histogramdd as result_type

    x = input._data
    if x.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if isinstance(bins, Tensor) or isinstance(bins, (str, bytes)):
        raise _overloads(bins)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(x.dtype)}'")
    if x.ndim < 2:
        raise RuntimeError(_WHERE + "input tensor should have at least 2 dimensions")
    dims = x.shape[-1]
    points = x.reshape(-1, dims)
    given = isinstance(bins, (list, tuple))
    if range is not None and len(range) != 2 * dims and not (given and bins and isinstance(bins[0], Tensor)):
        raise RuntimeError(_WHERE + f"for a {dims}-dimensional histogram range should have {2 * dims} elements, but "
                           f"got {len(range)}")
    if given and all(isinstance(b, Tensor) for b in bins) and bins:
        if len(bins) != dims:
            raise RuntimeError(_WHERE + f"expected {dims} sequences of bin edges for a {dims}-dimensional histogram "
                               f"but got {len(bins)}")
    elif given and len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if weight is not None:
        w = weight._data
        if w.shape != x.shape[:-1]:
            raise RuntimeError(
                _WHERE + "if weight tensor is provided it should have the same shape as the input tensor excluding "
                f"its innermost dimension, but got input with shape {list(x.shape)} and weight with shape "
                f"{list(w.shape)}")
        if w.dtype != x.dtype:
            raise RuntimeError(
                _WHERE + "if weight tensor is provided, input tensor and weight tensor should have the same dtype, "
                f"but got input({_cpp_type_name(x.dtype)}), and weight({_cpp_type_name(w.dtype)})")
    edges: list[np.ndarray] = []
    for d in builtins.range(dims):
        spec = bins[d] if given else bins
        lo_hi = None if range is None or isinstance(spec, Tensor) else (float(range[2 * d]), float(range[2 * d + 1]))
        edges.append(_bin_edges(spec._data if isinstance(spec, Tensor) else int(spec), points[:, d], lo_hi, d,
                                x.dtype))
    counts = [e.size - 1 for e in edges]
    keep = np.ones(points.shape[0], bool)
    positions = []
    for d, e in enumerate(edges):
        column = points[:, d]
        if e.size:
            keep &= (column >= e[0]) & (column <= e[-1])
        else:
            keep[:] = False
    for d, e in enumerate(edges):  # each point's bin: the last edge at or below it (the last bin is closed)
        pos = np.searchsorted(e, points[keep, d], side="right") - 1
        positions.append(np.minimum(pos, max(counts[d] - 1, 0)))
    shape = tuple(max(c, 0) for c in counts)
    total = int(np.prod(shape))
    values = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    if total and keep.any():
        flat = np.ravel_multi_index(tuple(positions), shape)
        hist = np.bincount(flat, weights=values, minlength=total)[:total].astype(x.dtype).reshape(shape)
    else:
        hist = np.zeros(shape, x.dtype)
    if density and total:
        volume = np.ones(shape, np.float64)
        for d, e in enumerate(edges):
            view = [1] * dims
            view[d] = counts[d]
            volume = volume * np.diff(e.astype(np.float64)).reshape(view)
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = (hist / hist.sum(dtype=np.float64) / volume).astype(x.dtype)
    return result_type(Tensor._make(hist), tuple(Tensor._make(e) for e in edges))

