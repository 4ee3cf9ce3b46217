"""Shape ops and indexing: views (``view``, ``transpose``, ``permute``, ``expand``, ``select``,
slicing...), ``cat``/``stack``/``unbind``, advanced indexing, ``gather``/``scatter``.

View ops (``view=True``) return NumPy views: the output shares memory and version counter with
its input, and records the root ``_base`` (see "Views" in docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor
from .op import Op
from .reduce import normalize_dim

_make = Tensor._make

# Defined below; backward rules above their definitions refer to them.
slice_op: Op
index: Op
index_put: Op
put_positions: Op
scatter: Op
scatter_add: Op


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """Resolve one -1 in a requested shape; PyTorch's error when the sizes do not fit."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    return shape


def _view(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    shape = infer_size(shape, x.size)
    out = x.view()
    try:
        out.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


def can_view(x: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether ``x`` can take ``shape`` without copying (NumPy's own test)."""
    try:
        x.view().shape = infer_size(shape, x.size)
    except AttributeError:
        return False
    return True


view = Op("view", _view, node="ViewBackward0", params=("shape",), view=True,
          grads=(lambda grad, self_shape: grad.reshape(self_shape),))

# reshape that has to copy: PyTorch records a clone, then ``_unsafe_view`` of it (which is not
# tracked as a view: nobody else holds the clone).
unsafe_view = Op("_unsafe_view", lambda x, shape: np.reshape(x, infer_size(shape, x.size)),
                 node="UnsafeViewBackward0", params=("shape",),
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),))


def _transpose(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    if x.ndim < 2:
        return x.view()
    return np.swapaxes(x, dim0, dim1)


transpose = Op("transpose", _transpose, node="TransposeBackward0", params=("dim0", "dim1"), view=True,
               grads=(lambda grad, dim0, dim1: grad.transpose(dim0, dim1),))


def _t(x: np.ndarray) -> np.ndarray:
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T


t = Op("t", _t, node="TBackward0", view=True, grads=(lambda grad: grad.t(),))


def _permute(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    if len(dims) != x.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}"
        )
    if sorted(dims) != list(range(x.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(x, dims)


permute = Op("permute", _permute, node="PermuteBackward0", params=("dims",), view=True,
             grads=(lambda grad, dims: grad.permute(*np.argsort(dims).tolist()),))

squeeze_all = Op("squeeze", lambda x: np.squeeze(x) if x.ndim else x.view(), node="SqueezeBackward0", view=True,
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),))


def _squeeze_dims(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    keep = tuple(d for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, axis=keep) if keep else x.view()


squeeze_dim = Op("squeeze", _squeeze_dims, node="SqueezeBackward1", params=("dims",), view=True,
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),))
squeeze_dims = Op("squeeze", _squeeze_dims, node="SqueezeBackward2", params=("dims",), view=True,
                  grads=(lambda grad, self_shape: grad.reshape(self_shape),))
# ``squeeze_(dim)`` on a private intermediate (matmul of a 1-D by a 2-D tensor does this).
squeeze_inplace = Op("squeeze_", _squeeze_dims, node="SqueezeBackward4", params=("dims",),
                     grads=(lambda grad, self_shape: grad.reshape(self_shape),))

unsqueeze = Op("unsqueeze", lambda x, dim: np.expand_dims(x, dim), node="UnsqueezeBackward0", params=("dim",),
               view=True, grads=(lambda grad, dim: grad.squeeze(dim),))


def _expand(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = len(shape) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{_shape_str(x.shape)}}}, size={_shape_str(shape)}): the number of "
            "sizes provided must be greater or equal to the number of dimensions in the tensor"
        )
    target = list(shape)
    for i, s in enumerate(shape):
        if i >= lead:
            have = x.shape[i - lead]
            if s == -1:
                target[i] = have
            elif have != 1 and have != s:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                    f"non-singleton dimension {i}.  Target sizes: {_shape_str(shape)}.  Tensor sizes: "
                    f"{_shape_str(x.shape)}"
                )
        elif s < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}"
            )
    return np.broadcast_to(x, tuple(target))


expand = Op("expand", _expand, node="ExpandBackward0", params=("size",), view=True,
            grads=(lambda grad, self_shape: grad.sum_to_size(self_shape),))

# -- basic indexing: select and slice (views) -------------------------------------------------


def _select(x: np.ndarray, dim: int, index: int) -> np.ndarray:
    size = x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    key: list[Any] = [slice(None)] * x.ndim
    key[dim] = index
    return x[(*key, Ellipsis)]  # the Ellipsis keeps a 0-d result a view, not a NumPy scalar


def _select_backward_forward(grad: np.ndarray, shape: tuple[int, ...], dim: int, index: int) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    key: list[Any] = [slice(None)] * len(shape)
    key[dim] = index
    out[tuple(key)] = grad
    return out


select_backward = Op("select_backward", _select_backward_forward, node="SelectBackwardBackward0",
                     params=("shape", "dim", "index"),
                     grads=(lambda grad, dim, index: grad.select(dim, index),))

select = Op("select", _select, node="SelectBackward0", params=("dim", "index"), view=True,
            grads=(lambda grad, self_shape, dim, index: select_backward(grad, self_shape, dim, index),))


def _slice(x: np.ndarray, dim: int, start: int, stop: int, step: int) -> np.ndarray:
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, stop, step)
    return x[tuple(key)]


def _slice_backward_forward(grad: np.ndarray, shape: tuple[int, ...], dim: int, start: int, stop: int,
                            step: int) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    key = [slice(None)] * len(shape)
    key[dim] = slice(start, stop, step)
    out[tuple(key)] = grad
    return out


slice_backward = Op("slice_backward", _slice_backward_forward, node="SliceBackwardBackward0",
                    params=("shape", "dim", "start", "stop", "step"),
                    grads=(lambda grad, dim, start, stop, step: slice_op(grad, dim, start, stop, step),))

slice_op = Op("slice", _slice, node="SliceBackward0", params=("dim", "start", "stop", "step"), view=True,
              grads=(lambda grad, self_shape, dim, start, stop, step:
                     slice_backward(grad, self_shape, dim, start, stop, step),))

# -- advanced indexing ------------------------------------------------------------------------


def _index(x: np.ndarray, key: Any) -> np.ndarray:
    try:
        return np.asarray(x[key])
    except IndexError as err:
        raise IndexError(str(err).replace("axis", "dimension")) from None


def _index_backward_forward(grad: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    np.add.at(out, key, grad)  # repeated indices accumulate
    return out


index_backward = Op("index_backward", _index_backward_forward, node="IndexPutBackward0",
                    params=("shape", "key"), grads=(lambda grad, key: index(grad, key),))

index = Op("index", _index, node="IndexBackward0", params=("key",),
           grads=(lambda grad, self_shape, key: index_backward(grad, self_shape, key),))


def _index_put(x: np.ndarray, values: np.ndarray, key: Any, accumulate: bool) -> np.ndarray:
    out = x.copy()
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _index_put_values_grad(grad: Tensor, values_shape: tuple[int, ...], key: Any) -> Tensor:
    return index(grad, key).sum_to_size(values_shape)


index_put = Op("index_put", _index_put, node="IndexPutBackward0", inputs=("self", "values"),
               params=("key", "accumulate"), dtype="promote",
               grads=(lambda grad, key, accumulate: grad if accumulate else index_put(grad, 0.0, key, False),
                      _index_put_values_grad))

# Positions of a view's elements in its base (see inplace.py): gather and scatter by them.
take_positions = Op("take_positions", lambda x, positions: x.reshape(-1)[positions], node="AsStridedBackward0",
                    params=("positions",),
                    grads=(lambda grad, self_shape, positions: put_positions(
                        _make(np.zeros(self_shape, grad._data.dtype)), grad, positions),))


def _put_positions(x: np.ndarray, values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    out = x.copy()
    out.reshape(-1)[positions] = values
    return out


put_positions = Op("put_positions", _put_positions, node="AsStridedScatterBackward0", inputs=("self", "src"),
                   params=("positions",), dtype="promote",
                   grads=(lambda grad, src, positions: put_positions(grad, src * 0, positions),
                          lambda grad, positions: take_positions(grad, positions)))

# -- gather / scatter -------------------------------------------------------------------------


def _check_index(index: np.ndarray, name: str) -> None:
    if index.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")


def _gather(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    _check_index(index, "gather")
    if index.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    return np.take_along_axis(x, index, axis=dim)


def _scatter_add_forward(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, _along_axis_key(index, dim), src[tuple(slice(0, s) for s in index.shape)])
    return out


def _along_axis_key(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    grids: list[Any] = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _scatter_forward(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    _check_index(index, "scatter")
    out = x.copy()
    out[_along_axis_key(index, dim)] = src[tuple(slice(0, s) for s in index.shape)]
    return out


def _src_grad(grad: Tensor, src_shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
    g = grad.gather(dim, index)
    if tuple(g.shape) != tuple(src_shape):  # src may be larger than index: the rest gets zero
        region = tuple(slice(0, s) for s in g.shape)
        return index_put(_make(np.zeros(src_shape, g._data.dtype)), g, region, False)
    return g


gather = Op("gather", _gather, node="GatherBackward0", params=("dim", "index"),
            grads=(lambda grad, self_shape, dim, index: scatter_add(
                _make(np.zeros(self_shape, grad._data.dtype)), grad, dim, index),))

scatter = Op("scatter", _scatter_forward, node="ScatterBackward0", inputs=("self", "src"), params=("dim", "index"),
             grads=(lambda grad, dim, index: scatter(grad, _make(np.zeros(tuple(index.shape), grad._data.dtype)),
                                                     dim, index),
                    lambda grad, src_shape, dim, index: _src_grad(grad, src_shape, dim, index)))

scatter_add = Op("scatter_add", _scatter_add_forward, node="ScatterAddBackward0", inputs=("self", "src"),
                 params=("dim", "index"),
                 grads=(lambda grad: grad,
                        lambda grad, src_shape, dim, index: _src_grad(grad, src_shape, dim, index)))

# -- joining and splitting --------------------------------------------------------------------


def _cat(*arrays_and_dim: Any) -> np.ndarray:
    *arrays, dim = arrays_and_dim
    if not arrays:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((a for a in arrays if a.ndim), arrays[0])
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = normalize_dim(dim, ref.ndim)
    kept = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or arrays[:1]
    for i, a in enumerate(kept):
        if a.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}"
            )
        for d in range(ref.ndim):
            if d != dim and a.shape[d] != ref.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {ref.shape[d]} "
                    f"but got size {a.shape[d]} for tensor number {i} in the list."
                )
    return np.concatenate(kept, axis=dim)


def _cat_grad(grad: Tensor, tensors_shapes: tuple[tuple[int, ...], ...], dim: int) -> tuple[Tensor | None, ...]:
    ndim = grad.dim()
    d = normalize_dim(dim, ndim)
    out: list[Tensor | None] = []
    start = 0
    for shape in tensors_shapes:
        if len(shape) == 1 and shape[0] == 0 and ndim != 1:
            out.append(_make(np.zeros(shape, grad._data.dtype)))
            continue
        out.append(grad.narrow(d, start, shape[d]))
        start += shape[d]
    return tuple(out)


cat = Op("cat", _cat, node="CatBackward0", inputs=("*tensors",), params=("dim",), dtype="promote",
         grads=_cat_grad)


def _stack(*arrays_and_dim: Any) -> np.ndarray:
    *arrays, dim = arrays_and_dim
    if not arrays:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, a in enumerate(arrays):
        if a.shape != arrays[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {_shape_str(arrays[0].shape)} at entry 0 "
                f"and {_shape_str(a.shape)} at entry {i}"
            )
    return np.stack(arrays, axis=normalize_dim(dim, arrays[0].ndim + 1))


stack = Op("stack", _stack, node="StackBackward0", inputs=("*tensors",), params=("dim",), dtype="promote",
           grads=lambda grad, dim: grad.unbind(dim))


def _unbind(x: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    key: list[Any] = [slice(None)] * x.ndim
    out = []
    for i in range(x.shape[dim]):
        key[dim] = i
        out.append(x[(*key, Ellipsis)])
    return tuple(out)


def _unbind_grad(grads: tuple[Tensor, ...], dim: int) -> tuple[Tensor]:
    return (stack(*grads, dim),)


unbind = Op("unbind", _unbind, node="UnbindBackward0", params=("dim",), outputs=-1, view=True, grads=_unbind_grad)

alias = Op("alias", lambda x: x.view(), node="AliasBackward0", view=True, grads=(lambda grad: grad,))
