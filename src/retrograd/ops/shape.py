"""Shape ops and indexing, one block per topic: helpers; views (``view``, ``transpose``,
``permute``, ``squeeze``, ``expand``, ``movedim``, ``unflatten``...); basic indexing (``select``,
slicing); advanced indexing (``index``, ``index_put``, ``index_select``/``index_add``,
``masked_select``, ``take``, ``take_along_dim``); ``gather``/``scatter``; joining and splitting
(``cat``/``stack``/``unbind``, ``split``/``chunk``, ``tensor_split``); ``flip``/``roll``/``repeat``/
``repeat_interleave``; diagonals and triangles; ``block_diag``; the nodes of the in-place view ops
(``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``; their functions are in ``strided.py``). Composites (several ops, as PyTorch
composes them) sit in their topic's block, built from the ops above them.

View ops (``view=True``) return NumPy views: the output shares memory and version counter with
its input, and records the root ``_base`` (see "Views" in docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..tensor import Tensor, element_strides
from .op import Op, apply, broadcast_error, with_array_rule
from .op import versioned_array as _array
from .reduce import normalize_dim
from .saved_attrs import derived

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
    shape = tuple(map(int, shape))
    if -1 in shape:  # the common case first: one -1, the other sizes positive and dividing numel
        i = shape.index(-1)
        rest = shape[:i] + shape[i + 1:]
        if not rest or min(rest) > 0:
            known = prod(rest)
            if not numel % known:
                return shape[:i] + (numel // known,) + shape[i + 1:]
    elif prod(shape) == numel and (not shape or min(shape) >= 0):
        return shape
    # Anything else: the checks in PyTorch's order, for its error.
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {shape.index(s)} of shape {_shape_str(shape)}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    return shape


def normalize_dim_list(dims: Sequence[int], ndim: int) -> tuple[int, ...]:
    """Wrap each dim; PyTorch's error when one repeats."""
    out: list[int] = []
    for d in dims:
        n = normalize_dim(int(d), ndim)
        if n in out:
            raise RuntimeError(f"dim {n} appears multiple times in the list of dims")
        out.append(n)
    return tuple(out)


def _index_array(index: Any) -> np.ndarray:
    return index._data if isinstance(index, Tensor) else np.asarray(index)


def versioned_index(index: Any) -> Any:
    """An index for an op that declares it ``versioned=``: a tensor as itself (its node keeps it
    with its version: written in place before backward, PyTorch's error), anything else as an
    array (a batched tensor's logical array, for vmap's batching rule)."""
    if isinstance(index, Tensor) and type(index._data) is np.ndarray:
        return index
    return _index_array(index)


# -- views ------------------------------------------------------------------------------------
# view, reshape, transpose, permute, squeeze, unsqueeze, expand, alias; the composites movedim,
# unflatten, and broadcast_shapes.
def _view(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if -1 in shape or prod(shape) != x.size:  # (a shape that fits is kept as it is)
        shape = infer_size(shape, x.size)
    out = x.view()
    try:
        out.shape = shape
    except ValueError:  # a negative size whose product fits, as (-2, -3) for 6 elements
        infer_size(shape, x.size)  # raises PyTorch's error
        raise
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
          grads=(with_array_rule(lambda grad, self_shape: grad.reshape(self_shape),
                                 lambda grad, self_shape: grad.reshape(self_shape), "multilinear"),), jvp="linear")

# reshape of a non-contiguous input whose elements a view can still reach: PyTorch records
# ``_reshape_alias`` (``ReshapeAliasBackward0``, keeping only the input's sizes), not ``view``.
reshape_alias = Op("_reshape_alias", _view, node="ReshapeAliasBackward0", params=("shape",), view=True,
                   grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")

# reshape that has to copy: PyTorch records a clone, then ``_unsafe_view`` of it (which is not
# tracked as a view: nobody else holds the clone).
unsafe_view = Op("_unsafe_view", lambda x, shape: np.reshape(x, infer_size(shape, x.size)),
                 node="UnsafeViewBackward0", params=("shape",),
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")


def _transpose(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    if x.ndim < 2:
        return x.view()
    return x.swapaxes(dim0, dim1)  # (the method: ``np.swapaxes`` wraps it in a Python call)


transpose = Op("transpose", _transpose, node="TransposeBackward0", params=("dim0", "dim1"), view=True,
               grads=(lambda grad, dim0, dim1: grad.transpose(dim0, dim1),), jvp="linear")


def _t(x: np.ndarray) -> np.ndarray:
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T


t = Op("t", _t, node="TBackward0", view=True, grads=(with_array_rule(lambda grad: grad.t(), lambda grad: _t(grad), "multilinear"),),
       variants=("function", "method"),
       jvp="linear")


def _permute(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    if len(dims) != x.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}"
        )
    if sorted(dims) != list(range(x.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return x.transpose(dims)


permute = Op("permute", _permute, node="PermuteBackward0", params=("dims",), view=True,
             grads=(lambda grad, dims: grad.permute(*np.argsort(dims).tolist()),), jvp="linear")

squeeze_all = Op("squeeze", lambda x: x.squeeze() if x.ndim else x.view(), node="SqueezeBackward0", view=True,
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")


def _squeeze_dims(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    if len(dims) == 1:  # (``squeeze(dim)``: no tuple to build)
        return x.squeeze(dims) if x.ndim and x.shape[dims[0]] == 1 else x.view()
    keep = tuple(d for d in dims if x.ndim and x.shape[d] == 1)
    return x.squeeze(keep) if keep else x.view()


squeeze_dim = Op("squeeze", _squeeze_dims, node="SqueezeBackward1", params=("dims",), view=True,
                 grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")
squeeze_dims = Op("squeeze", _squeeze_dims, node="SqueezeBackward2", params=("dims",), view=True,
                  grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")

def _unsqueeze(x: np.ndarray, dim: int) -> np.ndarray:
    shape = x.shape
    if dim < 0:
        dim += len(shape) + 1
    new_shape = shape[:dim] + (1,) + shape[dim:]
    out = x.reshape(new_shape)  # (what ``np.expand_dims`` does, without its checks)
    # PyTorch's strides: the others kept, the new dim's spanning the dim it precedes. NumPy's
    # reshape agrees for a contiguous array, and can give size-1 dims other strides otherwise.
    strides = x.strides
    want = strides[:dim] + (shape[dim] * strides[dim] if dim < len(shape) else x.itemsize,) + strides[dim:]
    if out.strides != want and x.size:
        out = np.lib.stride_tricks.as_strided(x, new_shape, want)  # (writable if ``x`` is)
    return out


unsqueeze = Op("unsqueeze", _unsqueeze, node="UnsqueezeBackward0", params=("dim",),
               view=True, grads=(lambda grad, dim: grad.squeeze(dim),), jvp="linear")


def _type_str(dtype: np.dtype) -> str:
    """How PyTorch names a tensor type in messages: ``torch.FloatTensor`` (``CPUBoolType`` for bool)."""
    return "CPUBoolType" if dtype == np.bool_ else f"torch.{scalar_type_name(dtype)}Tensor"


def _expand_empty(x: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """An expand with no elements, its strides PyTorch's (a kept dim keeps its stride, an expanded
    one steps by 0), which NumPy's broadcast would zero; read-only, which is how ``Tensor.stride``
    tells its all-zero strides from a new empty array's."""
    lead = len(size) - x.ndim
    kept = (step if have == want else 0 for have, want, step in zip(x.shape, size[lead:], element_strides(x)))
    strides = tuple(s * x.itemsize for s in (*(0,) * lead, *kept))
    # (No element is addressed, so any buffer will do: a fresh empty one keeps ``base`` an ndarray.)
    out = np.ndarray(size, x.dtype, np.empty(0, x.dtype), 0, strides)
    out.flags.writeable = False
    return out


def _expand(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if not x.ndim and (not shape or min(shape) >= 0):
        if 0 in shape:
            return _expand_empty(x, tuple(shape))
        # A 0-d value to any shape (``sum()``'s backward): what the loop below ends with, directly.
        return np.ndarray(tuple(shape), x.dtype, x, 0, (0,) * len(shape))
    lead = len(shape) - x.ndim
    if (lead >= 0 and type(shape) is tuple and shape[lead:] == x.shape and x.size and x.flags.c_contiguous
            and (not lead or min(shape[:lead]) >= 0)):  # (``min``'s ``default=`` costs more than the test)
        # New leading dims only (a reduction's gradient, a bias's): nothing for the checks below
        # to refuse, so the strided view at once, as the end of the general path makes it.
        return np.ndarray(shape, x.dtype, x, 0, (0,) * lead + x.strides)
    if lead < 0:
        raise RuntimeError(
            f"expand({_type_str(x.dtype)}{{{_shape_str(x.shape)}}}, size={_shape_str(shape)}): "
            f"the number of sizes provided ({len(shape)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({x.ndim})"
        )
    if lead >= 0 and x.size and (not lead or min(shape[:lead]) > 0):
        # Size-1 dims expanded to positive sizes, the rest kept (a broadcast's): the strides in
        # one pass; anything else (a -1, an empty result, an error) takes the checks below.
        steps = [0] * lead
        for have, want, step in zip(x.shape, shape[lead:], x.strides):
            if have == want:
                steps.append(step)
            elif have == 1 and want > 0:
                steps.append(0)
            else:
                break
        else:
            if x.flags.c_contiguous:
                return np.ndarray(tuple(shape), x.dtype, x, 0, tuple(steps))
            return np.lib.stride_tricks.as_strided(x, tuple(shape), tuple(steps), writeable=False)
    target = list(shape)
    for i, s in reversed(list(enumerate(shape))):  # PyTorch reports the last mismatching dim
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
            if not x.ndim:  # (PyTorch 2.13 skips the leading-dim check for a 0-d tensor: its numel overflows)
                raise RuntimeError("numel: integer multiplication overflow")
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}"
            )
    size = tuple(target)
    if not x.size or 0 in size:
        return _expand_empty(x, size)
    # A dim that keeps its size keeps its stride, a size-1 one too (PyTorch's strides; NumPy's
    # broadcast_to zeroes those); only the expanded dims step by 0.
    strides = (0,) * lead + tuple(step if have == want else 0 for have, want, step in zip(x.shape, size[lead:], x.strides))
    if x.flags.c_contiguous:  # the strided view made directly: a tenth of broadcast_to's cost
        return np.ndarray(size, x.dtype, x, 0, strides)
    return np.lib.stride_tricks.as_strided(x, size, strides, writeable=False)


expand = Op("expand", _expand, node="ExpandBackward0", params=("size",), view=True,
            grads=(lambda grad, self_shape: grad.sum_to_size(self_shape),), jvp="linear")


alias = Op("alias", lambda x: x.view(), node="AliasBackward0", view=True, grads=(lambda grad: grad,), jvp="linear")


def movedim(x: Tensor, source: Any, destination: Any) -> Tensor:
    ndim = x._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_shape_str(src)} dims) should contain the same "
            f"number of dims as destination ({_shape_str(dst)} dims)"
        )
    src = [normalize_dim(int(d), ndim) for d in src]
    dst = [normalize_dim(int(d), ndim) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_shape_str(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_shape_str(dst)})")
    order = [-1] * max(ndim, 1)
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    perm = tuple(o if o != -1 else next(rest) for o in order)[:ndim]
    return apply(permute, (x, perm))  # type: ignore[no-any-return]


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    ndim = x._data.ndim
    d = normalize_dim(dim, ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = x._data.shape[d] if ndim else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in sizes if s != -1]))
    fits = (size % known == 0) if -1 in sizes and known else known == size
    if not fits:
        raise RuntimeError(
            f"unflatten: Provided sizes {_shape_str(sizes)} don't multiply up to the size of dim {dim} "
            f"({size}) in the input tensor"
        )
    shape = x._data.shape[:d] + tuple(sizes) + x._data.shape[d + 1:]
    return apply(view, (x, shape))  # type: ignore[no-any-return]


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """PyTorch's ``broadcast_shapes`` (ints count as 1-d shapes), with its error message."""
    result: list[int] = []
    for i, shape in enumerate(shapes):
        dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(s) for s in shape]
        if len(dims) > len(result):
            result = [1] * (len(dims) - len(result)) + result
        for k in range(1, len(dims) + 1):
            have, new = result[-k], dims[-k]
            if new == have or new == 1:
                continue
            if have == 1:
                result[-k] = new
                continue
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {new} at {-k}! Mismatching argument at index {i} had "
                f"{tuple(dims)}; but expected shape should be broadcastable to {_shape_str(result)}"
            )
    return tuple(result)


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
                     grads=(lambda grad, dim, index: grad.select(dim, index),), jvp="linear")

select = Op("select", _select, node="SelectBackward0", params=("dim", "index"), view=True,
            grads=(lambda grad, self_shape, dim, index: select_backward(grad, self_shape, dim, index),), jvp="linear")


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
                    grads=(lambda grad, dim, start, stop, step: slice_op(grad, dim, start, stop, step),), jvp="linear")

slice_op = Op("slice", _slice, node="SliceBackward0", params=("dim", "start", "stop", "step"), view=True,
              saved={"dim": "dim", "start": "start", "end": "stop", "step": "step", "self_sym_sizes": "self_sym_sizes"},
              grads=(lambda grad, self_shape, dim, start, stop, step:
                     slice_backward(grad, self_shape, dim, start, stop, step),), jvp="linear")


# -- advanced indexing, index_select / index_add, masked_select, take, take_along_dim ---------
def key_arrays(key: Any) -> Any:
    """An index op's key as NumPy reads it. A key of several items holds its index tensors as
    themselves (``indexing.getitem``), so that the node keeps each with its version
    (``op.keep_versioned``); here they become their arrays."""
    if type(key) is tuple:
        return tuple([k._data if isinstance(k, Tensor) else k for k in key])
    return _array(key)


def _index(x: np.ndarray, key: Any) -> np.ndarray:
    try:
        return np.asarray(x[key_arrays(key)])
    except IndexError as err:
        raise IndexError(str(err).replace("axis", "dimension")) from None


def _index_backward_forward(grad: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    np.add.at(out, key_arrays(key), grad)  # repeated indices accumulate
    return out


# (a rule hands the ops of its own graph the index tensors as it read them, so that the second-order
# nodes keep them with their version too: ``create_graph`` and a write before the second backward
# is PyTorch's error; hence ``versioned=`` on the ``*_backward`` ops as well)
index_backward = Op("index_backward", _index_backward_forward, node="IndexPutBackward0",
                    params=("shape", "key"), grads=(lambda grad, key: index(grad, key),), jvp="linear",
                    versioned=("key",))

def torch_indices(key: Any) -> tuple[Tensor | None, ...]:
    """An index op's key as PyTorch's node shows its ``_saved_indices``: one entry per indexed
    dim from the first, the index tensor, or None for a dim taken whole (``x[:, i]``: (None, i))."""
    items = key if type(key) is tuple else (key,)
    return tuple(None if isinstance(k, slice) else k if isinstance(k, Tensor) else Tensor._make(np.asarray(k))
                 for k in items)


# The index tensors of a key (``x[i]``, ``x[mask]``, ``x[:, i]``, ``x[i, j]``) are given as
# themselves: the node keeps each with its version (``versioned=``), as PyTorch's keeps its indices.
index = Op("index", _index, node="IndexBackward0", params=("key",),
           saved={"self_sym_sizes": "self_sym_sizes", "indices": derived("key", torch_indices)},
           grads=(lambda grad, self_shape, key: index_backward(grad, self_shape, key),), jvp="linear",
           versioned=("key",))


def _index_put(x: np.ndarray, values: np.ndarray, key: Any, accumulate: bool) -> np.ndarray:
    key = key_arrays(key)
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
               saved={"accumulate": "accumulate", "indices": derived("key", torch_indices)},
               grads=(lambda grad, key, accumulate: grad if accumulate else index_put(grad, 0.0, key, False),
                      _index_put_values_grad), jvp="linear", versioned=("key",))

# Positions of a view's elements in its base (see inplace.py): gather and scatter by them.
take_positions = Op("take_positions", lambda x, positions: x.reshape(-1)[positions], node="AsStridedBackward0",
                    params=("positions",),
                    grads=(lambda grad, self_shape, positions: put_positions(
                        _make(np.zeros(self_shape, grad._data.dtype)), grad, positions),), jvp="linear")


def _put_positions(x: np.ndarray, values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    out = x.copy()
    out.reshape(-1)[positions] = values
    return out


def _zeros_const(shape: tuple[int, ...], dtype: Any) -> Tensor:
    # Zeros for the overwritten region, not ``src * 0``: an inf or NaN in src would leave NaN there.
    return Tensor._make(np.zeros(shape, dtype))


put_positions = Op("put_positions", _put_positions, node="AsStridedScatterBackward0", inputs=("self", "src"),
                   params=("positions",), dtype="promote",
                   grads=(lambda grad, src_shape, src_dtype, positions:
                          put_positions(grad, _zeros_const(src_shape, src_dtype), positions),
                          lambda grad, positions: take_positions(grad, positions)), jvp="transpose")


def _check_index_vector(index: np.ndarray, name: str) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _index_select(x: np.ndarray, dim: int, index: Any) -> np.ndarray:
    index = _array(index)
    _check_index_vector(index, "index_select")
    size = x.shape[dim] if x.ndim else 1
    if index.size:
        bad = (index < 0) | (index >= size)
        if bad.any():
            if dim == 0:  # PyTorch's kernel along the first dim words it differently
                raise IndexError("index out of range in self")
            raise RuntimeError(
                f"INDICES element is out of DATA bounds, id={int(index[bad].flat[0])} axis_dim={size}"
            )
    if x.ndim == 0:
        if index.size != 1:
            raise IndexError("index_select(): Index to scalar can have only 1 value, got "
                             f"{index.size} value(s)")
        return x.copy()
    return np.take(x, index.reshape(-1), axis=dim)


def _index_add(x: np.ndarray, src: np.ndarray, dim: int, index: Any, alpha: Any) -> np.ndarray:
    # (PyTorch's index_add_ kernel words these unlike index_select's)
    index = _array(index)
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {scalar_type_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {list(index.shape)}")
    if src.dtype != x.dtype:
        raise RuntimeError(
            f"index_add_(): self ({scalar_type_name(x.dtype)}) and source ({scalar_type_name(src.dtype)}) must "
            "have the same scalar type"
        )
    xs, ss = x.shape or (1,), src.shape or (1,)
    idx = index.reshape(-1)
    if src.ndim and len(ss) != len(xs) or any(a != b for d, (a, b) in enumerate(zip(xs, ss, strict=False)) if d != dim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{_shape_str(x.shape)} source.shape = {_shape_str(src.shape)}"
        )
    if idx.size != ss[dim]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): ({ss[dim]}), "
            f"for dim: {dim}"
        )
    if idx.size:
        bad = (idx < 0) | (idx >= xs[dim])
        if bad.any():
            raise RuntimeError(f"index {int(idx[bad][0])} is out of bounds for dimension {dim} with size {xs[dim]}")
    out = x.copy()
    values = src.reshape(ss) if alpha == 1 else (src * alpha).astype(x.dtype).reshape(ss)
    key: Any = (slice(None),) * dim + (idx,)
    np.add.at(out.reshape(xs), key, values)
    return out


index_add: Op = Op("index_add", _index_add, node="IndexAddBackward0", inputs=("self", "source"),
               params=("dim", "index", "alpha"), saved=("alpha", "dim", "index", "source_dim"),
               grads=(lambda grad: grad,
                      lambda grad, source_shape, dim, index, alpha: _index_add_source_grad(
                          grad, source_shape, dim, index, alpha)), jvp="linear", versioned=("index",))


def _index_add_source_grad(grad: Tensor, source_shape: tuple[int, ...], dim: int, index: Any,
                           alpha: Any) -> Tensor:
    g = index_select(grad, dim, index).reshape(source_shape)
    return g if alpha == 1 else g * alpha


index_select: Op = Op("index_select", _index_select, node="IndexSelectBackward0", params=("dim", "index"),
                  variants=("function", "method"), convert={"dim": "dim", "index": "versioned_index"},
                  grads=(lambda grad, self_shape, dim, index: _index_select_grad(grad, self_shape, dim, index),),
                  jvp="linear", versioned=("index",))


def _index_select_grad(grad: Tensor, self_shape: tuple[int, ...], dim: int, index: Any) -> Tensor:
    return index_add(_make(np.zeros(self_shape, grad._data.dtype)),  # type: ignore[no-any-return]
                     grad.reshape(_index_select_shape(self_shape, dim, _array(index))), dim, index, 1)


def _index_select_shape(shape: tuple[int, ...], dim: int, index: np.ndarray) -> tuple[int, ...]:
    if not shape:
        return ()
    return shape[:dim] + (index.size,) + shape[dim + 1:]


def _mask_shape(shape: tuple[int, ...], mask: np.ndarray) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(shape, mask.shape))
    except ValueError:
        raise RuntimeError(broadcast_error([mask.shape, shape])) from None


def _masked_select(x: np.ndarray, mask: Any) -> np.ndarray:
    mask = _array(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _mask_shape(x.shape, mask)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def _masked_select_backward(grad: np.ndarray, shape: tuple[int, ...], mask: Any) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    out[np.broadcast_to(_array(mask), shape)] = grad
    return out


masked_select_backward: Op = Op("masked_select_backward", _masked_select_backward, node="MaskedScatterBackward0",
                            params=("shape", "mask"), grads=(lambda grad, mask: masked_select(grad, mask),),
                                jvp="transpose", versioned=("mask",))

# The mask is read again by backward: kept with its version (``versioned=``), as PyTorch's.
masked_select: Op = Op("masked_select", _masked_select, node="MaskedSelectBackward0", params=("mask",),
                   variants=("function", "method"), convert={"mask": "versioned_mask"},
                   grads=(lambda grad, self_shape, mask: masked_select_backward(
                       grad, _mask_shape(self_shape, _array(mask)), mask),), jvp="linear",
                   versioned=("mask",))


def _take(x: np.ndarray, index: Any) -> np.ndarray:
    index = _array(index)
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    n = x.size
    if index.size:
        bad = (index < -n) | (index >= n)
        if bad.any():
            raise IndexError(
                f"out of range: tried to access index {int(index[bad].flat[0])} on a tensor of {n} elements."
            )
    return x.reshape(-1)[index]


def _take_backward(grad: np.ndarray, shape: tuple[int, ...], index: Any) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    np.add.at(out.reshape(-1), _array(index), grad)
    return out


take_backward: Op = Op("take_backward", _take_backward, node="PutBackward0", params=("shape", "index"),
                   grads=(lambda grad, index: take(grad, index),), jvp="transpose", versioned=("index",))
take: Op = Op("take", _take, node="TakeBackward0", params=("index",), variants=("function", "method"),
          convert={"index": "versioned_index"},
          grads=(lambda grad, self_shape, index: take_backward(grad, self_shape, index),), jvp="linear",
          versioned=("index",))


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None) -> Tensor:
    # A copy: PyTorch's gather keeps an index computed from ``indices`` (taken modulo the size),
    # not the tensor, so writing ``indices`` in place afterwards neither raises nor changes the
    # gradient; gather's node reads the array it is given.
    idx = indices._data.copy()
    if dim is None:
        return apply(gather, (x.reshape(-1), 0, idx.reshape(-1)))  # type: ignore[no-any-return]
    ndim = x._data.ndim
    d = normalize_dim(dim, ndim)
    if idx.ndim != ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{ndim} dimensions for input, and {idx.ndim} dimensions for indices"
        )
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {scalar_type_name(idx.dtype)}"
        )
    if not ndim:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    size = x._data.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        # PyTorch 2.13 takes an index along ``dim`` modulo the dim's size (-1 is the last, and
        # so is size - 1 + size), where gather would refuse it; an empty dim divides by zero.
        if not size:
            raise RuntimeError("ZeroDivisionError")
        idx = np.remainder(idx, size)
    shape_x, shape_i = list(x._data.shape), list(idx.shape)
    shape_x[d] = shape_i[d] = 1
    try:
        common = list(np.broadcast_shapes(tuple(shape_x), tuple(shape_i)))
    except ValueError:
        raise RuntimeError(broadcast_error([x._data.shape, idx.shape])) from None
    target_x = common.copy()
    target_x[d] = x._data.shape[d]
    target_i = common.copy()
    target_i[d] = idx.shape[d]
    return apply(gather, (x.expand(*target_x), d, np.broadcast_to(idx, target_i)))  # type: ignore[no-any-return]


# -- gather / scatter -------------------------------------------------------------------------


def _check_index(index: np.ndarray, name: str) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_along(index: np.ndarray, x: np.ndarray, dim: int, src: np.ndarray | None = None,
                 scatter: bool = False) -> None:
    """Index and shape checks shared by gather, scatter and scatter_add (``scatter``: a scatter
    with a value, no ``src``)."""
    if max(index.ndim, 1) != max(x.ndim, 1):
        what = "self" if scatter or src is not None else "input"  # (PyTorch's scatters say self)
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    xs = x.shape or (1,)
    ishape = index.shape or (1,)
    for d, (i, s) in enumerate(zip(ishape, xs, strict=True)):
        too_big = i > s and d != dim
        if src is not None:
            srcs = src.shape or (1,)
            too_big = too_big or (d < len(srcs) and i > srcs[d])
        if too_big:
            if scatter:
                raise RuntimeError(f"Expected index {_shape_str(index.shape)} to be no larger than self "
                                   f"{_shape_str(x.shape)} apart from dimension {dim}")
            if src is None:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {_shape_str(index.shape)} to be no larger "
                    f"than self {_shape_str(x.shape)} apart from dimension {dim}"
                )
            raise RuntimeError(
                f"Expected index {_shape_str(index.shape)} to be no larger than self {_shape_str(x.shape)} apart "
                f"from dimension {dim} and to be no larger size than src {_shape_str(src.shape)}"
            )
    size = xs[dim]
    if index.size:
        bad = (index < 0) | (index >= size)
        if bad.any():
            raise RuntimeError(
                f"index {int(index[bad].flat[0])} is out of bounds for dimension {dim} with size {size}"
            )


def _gather(x: np.ndarray, dim: int, index: Any) -> np.ndarray:
    index = _array(index)
    _check_index(index, "gather")
    _check_along(index, x, dim)
    if x.ndim == 0:
        return x.reshape(index.shape).copy() if index.size else np.zeros(index.shape, x.dtype)
    if index.ndim == 0:  # a 0-d index picks one element of a 1-d input, as a 0-d result
        return np.take_along_axis(x, index.reshape(1), axis=dim).reshape(())
    region = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(index.shape))
    return np.take_along_axis(x[region], index, axis=dim)


def _scatter_add_forward(x: np.ndarray, src: np.ndarray, dim: int, index: Any) -> np.ndarray:
    index = _array(index)
    _check_scatter(x, src, dim, index, "scatter")
    out = x.copy()
    if index.size:
        np.add.at(out.reshape(x.shape or (1,)), _along_axis_key(index.reshape(index.shape or (1,)), dim),
                  _src_region(src, index))
    return out


def _check_scatter(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray, name: str) -> None:
    _check_index(index, name)
    if src.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_along(index, x, dim, src)


def _src_region(src: np.ndarray, index: np.ndarray) -> np.ndarray:
    return src.reshape(src.shape or (1,))[tuple(slice(0, s) for s in (index.shape or (1,)))]


def _along_axis_key(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    grids: list[Any] = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _scatter_forward(x: np.ndarray, src: np.ndarray, dim: int, index: Any) -> np.ndarray:
    index = _array(index)
    _check_scatter(x, src, dim, index, "scatter")
    out = x.copy()
    if index.size:
        out.reshape(x.shape or (1,))[_along_axis_key(index.reshape(index.shape or (1,)), dim)] = \
            _src_region(src, index)
    return out


def _src_grad(grad: Tensor, src_shape: tuple[int, ...], dim: int, index: Any, node: str = "") -> Tensor:
    g = gather(grad, dim, index)
    if tuple(g.shape) != tuple(src_shape):  # src may be larger than index: the rest gets zero
        if node:
            check_src_grad_shape(node, tuple(g.shape), tuple(src_shape))
        region = tuple(slice(0, s) for s in g.shape)
        return index_put(_make(np.zeros(src_shape, g._data.dtype)), g, region, False)
    return g


def check_src_grad_shape(node: str, got: tuple[int, ...], src_shape: tuple[int, ...]) -> None:
    """PyTorch's error when a scatter's ``src`` is larger than ``index``: the forward takes it, but
    the gradient for ``src`` has ``index``'s shape, which its engine refuses for ``src``.

    >>> check_src_grad_shape("ScatterBackward0", (1, 2), (1, 2))
    >>> check_src_grad_shape("ScatterBackward0", (1, 2), (3, 5))
    Traceback (most recent call last):
    ...
    RuntimeError: Function ScatterBackward0 returned an invalid gradient at index 1 - got [1, 2] but expected shape compatible with [3, 5]
    """
    # (PyTorch's engine sums a gradient down to its input's shape only when that shape expands to it)
    lead = len(got) - len(src_shape)
    if lead < 0 or any(s not in (1, g) for s, g in zip(src_shape, got[lead:], strict=True)):
        raise RuntimeError(f"Function {node} returned an invalid gradient at index 1 - got {list(got)} but expected "
                           f"shape compatible with {list(src_shape)}")


# The index is read again by backward: the node keeps a tensor given there with its version
# (``versioned=``), as PyTorch's, and the rules hand it on as they read it (a second-order node keeps it too).
gather: Op = Op("gather", _gather, node="GatherBackward0", params=("dim", "index"), saved=("dim", "index"),
            grads=(lambda grad, self_shape, dim, index: scatter_add(
                _make(np.zeros(self_shape, grad._data.dtype)), grad, dim, index),), jvp="linear",
            versioned=("index",))

scatter = Op("scatter", _scatter_forward, node="ScatterBackward0", inputs=("self", "src"), params=("dim", "index"),
             saved=("dim", "index"),
             grads=(lambda grad, dim, index: _scatter_self_grad(grad, dim, index),
                    lambda grad, src_shape, dim, index: _src_grad(grad, src_shape, dim, index, "ScatterBackward0")),
             jvp="transpose", versioned=("index",))


def _scatter_self_grad(grad: Tensor, dim: int, index: Any) -> Tensor:
    return scatter(grad, _make(np.zeros(_array(index).shape, grad._data.dtype)), dim, index)  # type: ignore[no-any-return]



def _scatter_value(x: np.ndarray, dim: int, index: Any, value: Any) -> np.ndarray:
    index = _array(index)
    _check_index(index, "scatter")
    _check_along(index, x, dim, scatter=True)  # (first: its message names no src)
    return _scatter_forward(x, np.full(index.shape, value, x.dtype), dim, index)


scatter_value: Op = Op("scatter", _scatter_value, node="ScatterBackward1", params=("dim", "index", "value"),
                   grads=(lambda grad, dim, index: scatter_value(grad, dim, index, 0),), jvp="transpose",
                   versioned=("index",))


def _scatter_reduce_forward(x: np.ndarray, src: np.ndarray, dim: int, index: np.ndarray, reduce: str) -> np.ndarray:
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    _check_scatter(x, src, dim, index, "scatter")
    out = x.copy()
    if index.size:
        ufunc = np.add if reduce == "add" else np.multiply
        ufunc.at(out.reshape(x.shape or (1,)), _along_axis_key(index.reshape(index.shape or (1,)), dim),
                 _src_region(src, index))
    return out


def _not_implemented(grad: Any) -> Any:
    raise RuntimeError("derivative for aten::scatter is not implemented")


# ``scatter(..., reduce=)``: PyTorch records a node whose backward is not implemented.
scatter_reduce_legacy = Op("scatter", _scatter_reduce_forward, node="NotImplemented", inputs=("self", "src"),
                           params=("dim", "index", "reduce"), grads=_not_implemented, jvp="transpose")

scatter_value_reduce_legacy = Op(
    "scatter", lambda x, dim, index, value, reduce: _scatter_reduce_forward(
        x, np.full(index.shape, value, x.dtype), dim, index, reduce),
    node="NotImplemented", params=("dim", "index", "value", "reduce"), grads=_not_implemented, jvp="transpose")

scatter_add = Op("scatter_add", _scatter_add_forward, node="ScatterAddBackward0", inputs=("self", "src"),
                 params=("dim", "index"), saved=("dim", "index"),
                 grads=(lambda grad: grad,
                        lambda grad, src_shape, dim, index: _src_grad(grad, src_shape, dim, index,
                                                                      "ScatterAddBackward0")), jvp="linear",
                 versioned=("index",))


SCATTER_REDUCE_WARNING = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future PyTorch "
    "release. Use torch.scatter_reduce instead for more reduction options."
)


def scatter_args(x: Tensor, dim: int, index: Tensor, src: Any, value: Any, reduce: Any) -> tuple[Op, tuple[Any, ...]]:
    """Which scatter op and arguments ``x.scatter(dim, index, src | value, reduce=)`` runs."""
    d = normalize_dim(dim, x._data.ndim)
    idx = versioned_index(index)
    source = src if src is not None else value
    if isinstance(source, Tensor):
        if reduce is None:
            return scatter, (x, source, d, idx)
        if reduce not in ("add", "multiply"):  # (refused before the deprecation warning, as PyTorch)
            raise RuntimeError("reduce argument must be either add or multiply.")
        import warnings

        warnings.warn(SCATTER_REDUCE_WARNING, UserWarning, stacklevel=3)
        return scatter_reduce_legacy, (x, source, d, _array(idx), reduce)  # (no derivative: nothing kept)
    number = source.item() if isinstance(source, np.generic) else source
    if reduce is None:
        return scatter_value, (x, d, idx, number)
    return scatter_value_reduce_legacy, (x, d, _array(idx), number, reduce)


# -- joining and splitting: cat, stack, unbind, split / chunk (several views), tensor_split ---
def _cat(*arrays_and_dim: Any) -> np.ndarray:
    *arrays, dim = arrays_and_dim
    if not arrays:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((a for a in arrays if a.ndim and a.shape != (0,)), None)  # legacy empty (0,) tensors are skipped
    if ref is None:  # (only those: PyTorch checks no dim, the result is one of them)
        return arrays[0].copy()
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
    if all(shape == (0,) for shape in tensors_shapes):  # (legacy empty tensors only: ``dim`` was never checked)
        return tuple(grad for _ in tensors_shapes)
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
         grads=_cat_grad, jvp="linear")


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
           grads=lambda grad, dim: grad.unbind(dim), jvp="linear")


def _unbind(x: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    key: list[Any] = [slice(None)] * x.ndim
    out = []
    for i in range(x.shape[dim]):
        key[dim] = i
        out.append(x[(*key, Ellipsis)])
    return tuple(out)


def _unbind_grad(grads: tuple[Tensor, ...], dim: int) -> tuple[Tensor]:
    return (stack(*grads, dim),)


unbind = Op("unbind", _unbind, node="UnbindBackward0", params=("dim",), outputs=-1, view=True, grads=_unbind_grad,
            jvp="linear")


def _split_bounds(size: int, split_size: int) -> list[tuple[int, int]]:
    if size == 0:
        return [(0, 0)]
    return [(start, min(start + split_size, size)) for start in range(0, size, split_size)]


def _pieces(x: np.ndarray, dim: int, bounds: Sequence[tuple[int, int]]) -> tuple[np.ndarray, ...]:
    key: list[Any] = [slice(None)] * x.ndim
    out = []
    for start, stop in bounds:
        key[dim] = slice(start, stop)
        out.append(x[tuple(key)])
    return tuple(out)


def _split(x: np.ndarray, split_size: int, dim: int) -> tuple[np.ndarray, ...]:
    size = x.shape[dim]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    return _pieces(x, dim, _split_bounds(size, split_size))


def _split_with_sizes(x: np.ndarray, split_sizes: tuple[int, ...], dim: int) -> tuple[np.ndarray, ...]:
    size = x.shape[dim]
    if any(s < 0 for s in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={_shape_str(split_sizes)}")
    if sum(split_sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension "
            f"{dim}), but got split_sizes={_shape_str(split_sizes)}"
        )
    bounds = []
    start = 0
    for s in split_sizes:
        bounds.append((start, start + s))
        start += s
    return _pieces(x, dim, bounds)


def _split_grad(grads: tuple[Tensor, ...], dim: int) -> tuple[Tensor]:
    return (cat(*grads, dim),)


split: Op = Op("split", _split, node="SplitBackward0", params=("split_size", "dim"), outputs=-1, view=True,
           saved=("dim", "split_size", "self_sym_sizes"),
           grads=lambda grads, dim: _split_grad(grads, dim), jvp="linear")
split_with_sizes: Op = Op("split_with_sizes", _split_with_sizes, node="SplitWithSizesBackward0",
                      params=("split_sizes", "dim"), outputs=-1, view=True,
                      grads=lambda grads, dim: _split_grad(grads, dim), jvp="linear")


def chunk(x: Tensor, chunks: int, dim: int) -> tuple[Tensor, ...]:
    if not x._data.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if size == 0:  # PyTorch returns ``chunks`` empty pieces
        return tuple(apply(split_with_sizes, (x, (0,) * chunks, d)))
    return tuple(apply(split, (x, -(-size // chunks), d)))


def tensor_split(x: Tensor, indices_or_sections: Any, dim: int) -> tuple[Tensor, ...]:
    d = normalize_dim(dim, x._data.ndim)
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        data = spec._data
        if data.dtype != np.int64:
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{scalar_type_name(data.dtype)}"
            )
        if data.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                f"tensor, but got a tensor with {data.ndim} dims"
            )
        spec = int(data) if data.ndim == 0 else [int(i) for i in data]
    if isinstance(spec, (float, bool)) or not isinstance(spec, (int, np.integer, list, tuple)):
        raise TypeError(
            f"tensor_split() received an invalid combination of arguments - got (Tensor, {type(spec).__name__})"
        )
    size = x._data.shape[d]
    if isinstance(spec, (int, np.integer)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        lengths = [base + 1] * extra + [base] * (n - extra)
        bounds, start = [], 0
        for length in lengths:
            bounds.append((start, start + length))
            start += length
    else:
        cuts = [0] + [min(max(int(i) if int(i) >= 0 else int(i) + size, 0), size) for i in spec] + [size]
        bounds = [(cuts[i], max(cuts[i], cuts[i + 1])) for i in range(len(cuts) - 1)]
    return tuple(apply(slice_op, (x, d, start, stop, 1)) for start, stop in bounds)


# -- reordering and repeating: flip, roll, repeat, repeat_interleave --------------------------
def _flip(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    if not dims or x.ndim == 0:
        return x.copy()
    return np.flip(x, axis=dims).copy()


flip: Op = Op("flip", _flip, node="FlipBackward0", params=("dims",), grads=(lambda grad, dims: flip(grad, dims),),
              jvp="linear")


def _roll(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...] | None) -> np.ndarray:
    if dims is None:
        return np.roll(x, shifts[0])
    if x.ndim == 0:
        return x.copy()
    return np.roll(x, shifts, axis=dims)


roll: Op = Op("roll", _roll, node="RollBackward0", params=("shifts", "dims"),
          grads=(lambda grad, shifts, dims: roll(grad, tuple(-s for s in shifts), dims),), jvp="linear")


def _padded_shape(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    return (1,) * (n - len(shape)) + tuple(shape)


def _repeat(x: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = _padded_shape(x.shape, len(repeats))
    target = [p * r for p, r in zip(padded, repeats, strict=True)]
    for t in target:
        if t < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {t}: {_shape_str(target)}")
    return np.tile(x.reshape(padded), repeats)


def _repeat_grad(grad: Tensor, self_shape: tuple[int, ...], repeats: tuple[int, ...]) -> Tensor:
    padded = _padded_shape(self_shape, len(repeats))
    if not repeats:
        return grad
    split: list[int] = []
    for r, s in zip(repeats, padded, strict=True):
        split += [r, s]
    summed = grad.reshape(split).sum(tuple(range(0, 2 * len(repeats), 2)))
    return summed.reshape(self_shape)


repeat: Op = Op("repeat", _repeat, node="RepeatBackward0", params=("repeats",), grads=(_repeat_grad,), jvp="linear")


def repeat_interleave(x: Tensor, repeats: Any, dim: int | None, output_size: int | None) -> Tensor:
    if dim is None:
        x = x.flatten()
        dim = 0
    d = normalize_dim(dim, x._data.ndim)
    if isinstance(repeats, Tensor) and repeats._data.size != 1 or isinstance(repeats, (list, tuple)):
        reps = _index_array(repeats)
        if reps.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        size = x._data.shape[d] if x._data.ndim else 1
        if reps.shape[0] != size:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{reps.shape[0]} and input.size({d}) = {size}"
            )
        if reps.size and reps.min() < 0:
            raise RuntimeError("repeats can not be negative")
        index = np.repeat(np.arange(size, dtype=np.int64), reps)
        if output_size is not None and output_size != index.size:
            raise RuntimeError("allocated size does not match required size")
        return apply(index_select, (x, d, index))  # type: ignore[no-any-return]
    if isinstance(repeats, Tensor):
        if repeats._data.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        index = np.repeat(np.arange(x._data.shape[d] if x._data.ndim else 1, dtype=np.int64),
                          int(repeats._data.reshape(())))
        return apply(index_select, (x, d, index))  # type: ignore[no-any-return]
    r = int(repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    if x._data.ndim == 0:
        x = x.reshape(1)
    shape = list(x._data.shape)
    expanded = x.unsqueeze(d + 1).expand(*shape[:d + 1], r, *shape[d + 1:])
    shape[d] *= r
    return expanded.clone().view(shape)


# -- diagonals and triangles ------------------------------------------------------------------


def diagonal_view(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of a diagonal: the other dims in order, then the diagonal last (as PyTorch)."""
    key: list[Any] = [slice(None)] * x.ndim
    if offset >= 0:
        key[dim2] = slice(min(offset, x.shape[dim2]), None)
    else:
        key[dim1] = slice(min(-offset, x.shape[dim1]), None)
    y = x[tuple(key)]
    n = max(min(y.shape[dim1], y.shape[dim2]), 0)
    keep = [d for d in range(x.ndim) if d not in (dim1, dim2)]
    shape = tuple(y.shape[d] for d in keep) + (n,)
    strides = tuple(y.strides[d] for d in keep) + (y.strides[dim1] + y.strides[dim2],)
    return np.lib.stride_tricks.as_strided(y, shape, strides, writeable=y.flags.writeable)


def _check_diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_backward_forward(grad: np.ndarray, shape: tuple[int, ...], offset: int, dim1: int,
                               dim2: int) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    diagonal_view(out, offset, dim1, dim2)[...] = grad
    return out


diagonal_backward: Op = Op("diagonal_backward", _diagonal_backward_forward, node="DiagonalBackwardBackward0",
                       params=("shape", "offset", "dim1", "dim2"),
                       grads=(lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2),), jvp="transpose")

diagonal: Op = Op("diagonal", diagonal_view, node="DiagonalBackward0", params=("offset", "dim1", "dim2"), view=True,
              grads=(lambda grad, self_shape, offset, dim1, dim2: diagonal_backward(
                  grad, self_shape, offset, dim1, dim2),), jvp="linear")

# ``torch.diag`` of a matrix returns a copy (``diagonal_copy``).
diagonal_copy: Op = Op("diagonal_copy", lambda x, offset, dim1, dim2: diagonal_view(x, offset, dim1, dim2).copy(),
                   node="DiagonalBackward0_copy", params=("offset", "dim1", "dim2"),
                   grads=(lambda grad, self_shape, offset, dim1, dim2: diagonal_backward(
                       grad, self_shape, offset, dim1, dim2),), jvp="linear")


def _diag_embed(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    n = (x.shape[-1] if x.ndim else 1) + abs(offset)
    ndim = x.ndim + 1
    other = list(x.shape[:-1])
    shape = []
    for d in range(ndim):
        shape.append(n if d in (dim1, dim2) else other.pop(0))
    out = np.zeros(shape, x.dtype)
    diagonal_view(out, offset, dim1, dim2)[...] = x
    return out


diag_embed: Op = Op("diag_embed", _diag_embed, node="DiagEmbedBackward0", params=("offset", "dim1", "dim2"),
                grads=(lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2),), jvp="linear")


def _check_matrix_like(x: np.ndarray, name: str) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _tril(x: np.ndarray, diagonal: int) -> np.ndarray:
    _check_matrix_like(x, "tril")
    return np.tril(x, diagonal)


def _triu(x: np.ndarray, diagonal: int) -> np.ndarray:
    _check_matrix_like(x, "triu")
    return np.triu(x, diagonal)


tril: Op = Op("tril", _tril, node="TrilBackward0", params=("diagonal",),
          grads=(lambda grad, diagonal: tril(grad, diagonal),),
          variants=("function", "method", "inplace"), signature="diagonal=0", convert={"diagonal": "int"}, jvp="linear")
triu: Op = Op("triu", _triu, node="TriuBackward0", params=("diagonal",),
          grads=(lambda grad, diagonal: triu(grad, diagonal),),
          variants=("function", "method", "inplace"), signature="diagonal=0", convert={"diagonal": "int"}, jvp="linear")


# -- block_diag -------------------------------------------------------------------------------


def _as_block(a: np.ndarray) -> np.ndarray:
    return a.reshape(1, a.size) if a.ndim < 2 else a


def _block_diag(*arrays: np.ndarray) -> np.ndarray:
    for i, a in enumerate(arrays):
        if a.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {a.ndim} dimensions"
            )
    blocks = [_as_block(a) for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), arrays[0].dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r += b.shape[0]
        c += b.shape[1]
    return out


def _block_diag_grad(grad: Tensor, tensors_shapes: tuple[tuple[int, ...], ...]) -> tuple[Tensor, ...]:
    out = []
    r = c = 0
    for shape in tensors_shapes:
        h, w = shape if len(shape) == 2 else (1, int(np.prod(shape)))
        out.append(grad.narrow(0, r, h).narrow(1, c, w).reshape(shape))
        r += h
        c += w
    return tuple(out)


block_diag: Op = Op("block_diag", _block_diag, node="BlockDiagBackward0", inputs=("*tensors",), dtype="promote",
                grads=_block_diag_grad, jvp="linear")


# -- more shape ops (issue #12): rot90, unsafe_split / unsafe_chunk, diagflat, atleast_*d, the
# stacking composites (hstack ... column_stack), cartesian_prod, combinations, adjoint ---------
def _int_arg(op: str, name: str, value: Any) -> int:
    """PyTorch's TypeError for a non-int where its signature says int."""
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _ints_arg(op: str, name: str, value: Any) -> tuple[int, ...]:
    """PyTorch's TypeError for a non-sequence (or a non-int element) where it wants a tuple of ints."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    return tuple(int(v) for v in value)


def _rot90(x: np.ndarray, k: int, dims: tuple[int, ...]) -> np.ndarray:
    k = _int_arg("rot90", "k", k)
    dims = _ints_arg("rot90", "dims", dims)
    # PyTorch checks the dims as given (before wrapping them), in this order.
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == x.ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    d0, d1 = normalize_dim(dims[0], x.ndim), normalize_dim(dims[1], x.ndim)
    return np.rot90(x, k, axes=(d0, d1)).copy()


rot90: Op = Op("rot90", _rot90, node="Rot90Backward0", params=("k", "dims"),
           grads=(lambda grad, k, dims: rot90(grad, -k, dims),),
           variants=("function", "method"), signature="k=1, dims=(0, 1)", jvp="linear")


# ``unsafe_split``'s pieces alias the input's memory but are not tracked as views (PyTorch's
# "unsafe": no shared version counter, no view history), hence plain NumPy slices and no view=True.
def _unsafe_split(x: np.ndarray, split_size: int, dim: int) -> tuple[np.ndarray, ...]:
    return _split(x, _int_arg("unsafe_split", "split_size", split_size), dim)


unsafe_split: Op = Op("unsafe_split", _unsafe_split, node="UnsafeSplitBackward0", params=("split_size", "dim"), outputs=-1,
                  saved=("dim", "split_size", "self_sym_sizes"),
                  grads=lambda grads, dim: _split_grad(grads, dim),
                  variants=("function", "method"), signature="split_size, dim=0",
                  convert={"dim": "dim"}, jvp="linear")
def _unsafe_split_with_sizes(x: np.ndarray, split_sizes: tuple[int, ...], dim: int) -> tuple[np.ndarray, ...]:
    normalize_dim(dim, x.ndim)  # PyTorch's IndexError; its messages name the dim as given
    return _split_with_sizes(x, _ints_arg("unsafe_split_with_sizes", "split_sizes", split_sizes), dim)


unsafe_split_with_sizes: Op = Op("unsafe_split_with_sizes", _unsafe_split_with_sizes, node="UnsafeSplitWithSizesBackward0",
                             params=("split_sizes", "dim"), outputs=-1,
                             saved=("dim", "split_sizes", "self_sym_sizes"),
                             grads=lambda grads, dim: _split_grad(grads, dim),
                             variants=("function", "method"), signature="split_sizes, dim=0", jvp="linear")


def unsafe_chunk(x: Tensor, chunks: int, dim: int) -> tuple[Tensor, ...]:
    """``chunk`` made of ``unsafe_split`` pieces (PyTorch's ``unsafe_chunk``)."""
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if size == 0:
        return tuple(apply(unsafe_split_with_sizes, (x, (0,) * chunks, d)))
    return tuple(apply(unsafe_split, (x, -(-size // chunks), d)))


def diagflat(x: Tensor, offset: int) -> Tensor:
    """The flattened input on the ``offset`` diagonal of a square matrix (a ``DiagEmbedBackward0``)."""
    flat = apply(view, (x.contiguous(), (-1,)))  # PyTorch's ``contiguous().view(-1)``
    return apply(diag_embed, (flat, int(offset), 0, 1))  # type: ignore[no-any-return]


_ATLEAST_SHAPES: dict[int, dict[int, Any]] = {
    # ndim wanted -> {input ndim: how to get there}
    1: {0: "reshape"},
    2: {0: "reshape", 1: (0,)},
    3: {0: "reshape", 1: (0, 2), 2: (2,)},
}


def atleast(x: Tensor, n: int) -> Tensor:
    """``x`` with at least ``n`` dims, as PyTorch's ``atleast_{n}d`` (the tensor itself if it has them)."""
    ndim = x._data.ndim
    how = _ATLEAST_SHAPES[n].get(ndim)
    if how is None:
        return x
    if how == "reshape":
        return apply(view, (x, (1,) * n))  # type: ignore[no-any-return]
    for d in how:
        x = apply(unsqueeze, (x, d))
    return x


def adjoint(x: Tensor, name: str) -> Tensor:
    """The (conjugate) transpose of the last two dims; ``name`` is how PyTorch names it in its error."""
    ndim = x._data.ndim
    if ndim < 2:
        raise RuntimeError(f"{name} is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    swapped: Tensor = apply(transpose, (x, ndim - 2, ndim - 1))
    # Complex: conjugated too (ConjBackward0, as PyTorch's; a copy here, where PyTorch sets its lazy conj bit).
    return swapped.conj() if x._data.dtype.kind == "c" else swapped


def _nonempty(tensors: Sequence[Tensor], name: str) -> list[Tensor]:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [atleast(t, 1) for t in _nonempty(tensors, "hstack")]
    return apply(cat, (*ts, 0 if ts[0]._data.ndim == 1 else 1))  # type: ignore[no-any-return]


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [atleast(t, 2) for t in _nonempty(tensors, "vstack")]
    return apply(cat, (*ts, 0))  # type: ignore[no-any-return]


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [atleast(t, 3) for t in _nonempty(tensors, "dstack")]
    return apply(cat, (*ts, 2))  # type: ignore[no-any-return]


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [apply(view, (t, (t._data.size, 1))) if t._data.ndim <= 1 else t
          for t in _nonempty(tensors, "column_stack")]
    return apply(cat, (*ts, 1))  # type: ignore[no-any-return]


def _check_vector(t: Tensor) -> None:
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t._data.shape)}")


def cartesian_prod(tensors: Sequence[Tensor]) -> Tensor:
    tensors = _nonempty(tensors, "meshgrid")
    for t in tensors:
        _check_vector(t)
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if len(tensors) == 1:
        return tensors[0]
    n = len(tensors)
    sizes = tuple(t._data.shape[0] for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        shape = [1] * n
        shape[i] = -1
        grids.append(apply(expand, (apply(view, (t, tuple(shape))), sizes)).reshape(-1))
    return apply(stack, (*grids, 1))  # type: ignore[no-any-return]


def combinations(x: Tensor, r: int, with_replacement: bool) -> Tensor:
    _check_vector(x)
    r = int(r)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(np.empty(0, x._data.dtype))
    # As PyTorch: each column is the masked_select of one index grid (an expanded view of ``x``) by
    # the mask of increasing (or, with replacement, non-decreasing) index tuples.
    n = x._data.shape[0]
    grid = np.indices((n,) * r)
    ordered = np.ones((n,) * r, dtype=bool)
    for i in range(r - 1):
        ordered &= (grid[i] <= grid[i + 1]) if with_replacement else (grid[i] < grid[i + 1])
    columns = []
    for i in range(r):
        shape = [1] * r
        shape[i] = -1
        columns.append(apply(masked_select, (apply(expand, (apply(view, (x, tuple(shape))), (n,) * r)), ordered)))
    return apply(stack, (*columns, 1))  # type: ignore[no-any-return]


# -- select_scatter / slice_scatter / diagonal_scatter (out of place: ``src`` written into a copy
# of the input's region), and Tensor.unfold (a view) -------------------------------------------
def _scatter_into(x: np.ndarray, src: np.ndarray, region: Any) -> np.ndarray:
    """A copy of ``x`` with ``region(copy)`` (a view of it) overwritten by ``src``, in ``x``'s dtype."""
    out = x.copy()
    view_of_out = region(out)
    if view_of_out.shape != src.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src.shape)}, slice size = {_shape_str(view_of_out.shape)}")
    np.copyto(view_of_out, src, casting="unsafe")
    return out


def _select_scatter(x: np.ndarray, src: np.ndarray, dim: int, index: int) -> np.ndarray:
    size = x.shape[dim]
    index = _int_arg("select_scatter", "index", index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {_shape_str(x.shape)} at "
                         f"dimension {dim}")
    return _scatter_into(x, src, lambda out: _select(out, dim, index))


select_scatter: Op = Op("select_scatter", _select_scatter, node="SelectScatterBackward0", inputs=("self", "src"),
                    params=("dim", "index"),
                    grads=(lambda grad, src_shape, dim, index: select_scatter(
                        grad, grad.new_zeros(src_shape), dim, index),
                        lambda grad, dim, index: select(grad, dim, index)),
                    variants=("function", "method"), signature="src, dim, index", convert={"dim": "dim"}, jvp="linear")


def _slice_bounds(size: int, start: Any, end: Any) -> tuple[int, int]:
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, start), size)
    return start, end


def _slice_scatter(x: np.ndarray, src: np.ndarray, dim: int, start: Any, end: Any, step: int) -> np.ndarray:
    for name, value in (("start", start), ("end", end), ("step", step)):
        if value is not None:
            _int_arg("slice_scatter", name, value)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    lo, hi = _slice_bounds(x.shape[dim], start, end)
    return _scatter_into(x, src, lambda out: _slice(out, dim, lo, hi, int(step)))


def _slice_region_grad(grad: Tensor, dim: int, start: Any, end: Any, step: int) -> Tensor:
    lo, hi = _slice_bounds(grad.shape[dim], start, end)
    return apply(slice_op, (grad, dim, lo, hi, int(step)))  # type: ignore[no-any-return]


slice_scatter: Op = Op("slice_scatter", _slice_scatter, node="SliceScatterBackward0", inputs=("self", "src"),
                   params=("dim", "start", "end", "step"),
                   grads=(lambda grad, src_shape, dim, start, end, step: slice_scatter(
                       grad, grad.new_zeros(src_shape), dim, start, end, step),
                       _slice_region_grad),
                   variants=("function", "method"), signature="src, dim=0, start=None, end=None, step=1",
                   convert={"dim": "dim"}, jvp="linear")


def _diagonal_scatter(x: np.ndarray, src: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    d1, d2 = _check_diagonal_dims(x.ndim, dim1, dim2)
    return _scatter_into(x, src, lambda out: diagonal_view(out, int(offset), d1, d2))


diagonal_scatter: Op = Op("diagonal_scatter", _diagonal_scatter, node="DiagonalScatterBackward0",
                      inputs=("self", "src"), params=("offset", "dim1", "dim2"),
                      grads=(lambda grad, src_shape, offset, dim1, dim2: diagonal_scatter(
                          grad, grad.new_zeros(src_shape), offset, dim1, dim2),
                          lambda grad, offset, dim1, dim2: diagonal_copy(
                              grad, offset, *_check_diagonal_dims(grad.dim(), dim1, dim2))),
                      variants=("function", "method"), signature="src, offset=0, dim1=0, dim2=1", jvp="linear")


def _unfold_shape(shape: tuple[int, ...], dim: int, size: int, step: int) -> tuple[int, ...]:
    if not shape:
        return (size,)
    return shape[:dim] + ((shape[dim] - size) // step + 1,) + shape[dim + 1:] + (size,)


def _unfold(x: np.ndarray, dimension: int, size: int, step: int) -> np.ndarray:
    dimension = normalize_dim(_int_arg("unfold", "dimension", dimension), x.ndim)
    size, step = _int_arg("unfold", "size", size), _int_arg("unfold", "step", step)
    dim_size = x.shape[dimension] if x.ndim else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {dim_size} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if x.ndim == 0:
        return x.reshape(1)[:size]
    strides = x.strides[:dimension] + (x.strides[dimension] * step,) + x.strides[dimension + 1:] + (x.strides[dimension],)
    return np.lib.stride_tricks.as_strided(x, _unfold_shape(x.shape, dimension, size, step), strides,
                                           writeable=x.flags.writeable)


def _unfold_backward_forward(grad: np.ndarray, shape: tuple[int, ...], dimension: int, size: int,
                             step: int) -> np.ndarray:
    out = np.zeros(shape, grad.dtype)
    dimension = normalize_dim(dimension, len(shape))
    if not shape:
        out[...] = grad.sum()
        return out
    # Windows may overlap (step < size): add each one in turn.
    for i in range(grad.shape[dimension]):
        window = np.moveaxis(np.take(grad, i, axis=dimension), -1, dimension)
        key: list[Any] = [slice(None)] * len(shape)
        key[dimension] = slice(i * step, i * step + size)
        out[tuple(key)] += window
    return out


unfold_backward: Op = Op("unfold_backward", _unfold_backward_forward, node="UnfoldBackwardBackward0",
                     params=("shape", "dimension", "size", "step"),
                     grads=(lambda grad, dimension, size, step: unfold(grad, dimension, size, step),), jvp="transpose")

unfold: Op = Op("unfold", _unfold, node="UnfoldBackward0", params=("dimension", "size", "step"), view=True,
            saved=("dimension", "self_sym_sizes", "size", "step"),
            grads=(lambda grad, self_shape, dimension, size, step: unfold_backward(
                grad, self_shape, dimension, size, step),),
            variants=("method",), signature="dimension, size, step", jvp="linear")


def fill_diagonal_(x: Tensor, fill_value: Any, wrap: bool) -> Tensor:
    """PyTorch's ``fill_diagonal_``: the main diagonal of a matrix, or of a tensor whose dims are all
    equal, set to ``fill_value`` in place; ``wrap`` restarts a tall matrix's diagonal every
    ``columns + 1`` rows. Written as ``fill_`` on diagonal views, so the history is ``CopySlices``."""
    shape = x._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if len(shape) > 2:
        view = x
        while view.dim() > 1:
            view = view.diagonal(0, 0, 1)
        view.fill_(fill_value)
        return x
    rows, cols = shape
    if not wrap or rows <= cols:
        x.diagonal().fill_(fill_value)
        return x
    for start in range(0, rows, cols + 1):
        x.narrow(0, start, min(cols, rows - start)).diagonal().fill_(fill_value)
    return x

# -- the in-place view ops' nodes (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) ------------
# One definition each, for ``ops/strided.py``'s in-place view ops and for the composites that end
# in one on a fresh result, as PyTorch's do (``matmul``'s ``squeeze_``, ``quantile``'s last steps).
# Not ``view=True``: the tensor they apply to takes their array and node (``strided._inplace_view``),
# so no new view is made and the result keeps no ``_base``, as in PyTorch.


def _t_forward(x: np.ndarray) -> np.ndarray:
    if x.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T


def _transpose_forward(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    return np.swapaxes(x, dim0, dim1) if x.ndim >= 2 else x.view()


t_inplace = Op("t_", _t_forward, node="TBackward1", grads=(lambda grad: grad.t(),), jvp="linear")
transpose_inplace = Op("transpose_", _transpose_forward, node="TransposeBackward1", params=("dim0", "dim1"),
                       grads=(lambda grad, dim0, dim1: grad.transpose(dim0, dim1),), jvp="linear")
squeeze_all_inplace = Op("squeeze_", lambda x: np.squeeze(x) if x.ndim else x.view(), node="SqueezeBackward3",
                         saved=("self_sym_sizes",),
                         grads=(lambda grad, self_shape: grad.reshape(self_shape),), jvp="linear")
squeeze_dim_inplace = Op("squeeze_", lambda x, dim: _squeeze_dims(x, (dim,)), node="SqueezeBackward4",
                         params=("dim",), saved=("dim", "self_sym_sizes"),
                         grads=(lambda grad, self_shape, dim: grad.reshape(self_shape),), jvp="linear")
squeeze_dims_inplace = Op("squeeze_", _squeeze_dims, node="SqueezeBackward5", params=("dim",),
                          saved=("dim", "self_sym_sizes"),
                          grads=(lambda grad, self_shape, dim: grad.reshape(self_shape),), jvp="linear")
unsqueeze_inplace = Op("unsqueeze_", lambda x, dim: np.expand_dims(x, dim), node="UnsqueezeBackward1",
                       params=("dim",), grads=(lambda grad, dim: grad.squeeze(dim),), jvp="linear")
