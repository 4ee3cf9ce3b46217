"""Strided views over a tensor's storage and the in-place view ops.

``as_strided(size, stride, storage_offset)`` views the memory of the tensor's *storage* (the
array that owns it, found through NumPy's ``.base`` chain), with PyTorch's absolute storage
offset; its backward (``AsStridedBackward0``) adds the output gradient into storage positions
and reads them back in the input's geometry, dividing by how many input elements share a
position when the input overlaps itself (PyTorch's ``as_strided_backward``). The in-place view
ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``swapaxes_``/``swapdims_``,
``as_strided_``) change a tensor's own shape and strides: the tensor takes the view's array and,
when it requires grad, the view's node (``TBackward1``...), and its version is bumped.

Loaded on first use (``retrograd.ops.__getattr__``), like ``linalg``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autograd.forward_ad import DUAL, tangent_of
from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from .forward import inplace_view_dual
from .inplace import OVERLAP_ERROR, check_inplace
from .op import Op, apply, forward_arrays
from .reduce import normalize_dim
from .shape import (  # (the in-place view ops' nodes live with the shape ops: reduce and linalg use them too)
    put_positions,
    squeeze_all_inplace,
    squeeze_dim_inplace,
    squeeze_dims_inplace,
    t_inplace,
    transpose_inplace,
    unsqueeze_inplace,
)

_make = Tensor._make

# -- storage ------------------------------------------------------------------------------------


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]  # type: ignore[no-any-return]


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (through NumPy ``as_strided``'s ``DummyArray`` too)."""
    root = a
    while True:
        base = root.base
        if isinstance(base, np.ndarray):
            root = base
        elif isinstance(getattr(base, "base", None), np.ndarray) and hasattr(base, "__array_interface__"):
            root = base.base  # type: ignore[attr-defined]
        else:
            return root


def storage_of(a: np.ndarray) -> tuple[np.ndarray, int]:
    """The storage of ``a`` as a 1-d array of ``a``'s dtype over all of its root's memory, and
    ``a``'s offset in it, in elements (PyTorch's ``storage_offset()``)."""
    root, item = _root(a), a.itemsize
    if root.size == 0:
        return a.reshape(-1)[:0] if a.flags.c_contiguous else np.empty(0, a.dtype), 0
    low = root[tuple(n - 1 if s < 0 else 0 for n, s in zip(root.shape, root.strides)) + (Ellipsis,)]
    span = sum(abs(s) * (n - 1) for n, s in zip(root.shape, root.strides)) + root.itemsize
    raw = np.lib.stride_tricks.as_strided(low.reshape(1).view(np.uint8), (span,), (1,),
                                          writeable=root.flags.writeable)
    store = raw[: span - span % item].view(a.dtype)
    return store, (_address(a) - _address(low)) // item


def storage_offset(x: Tensor) -> int:
    """The offset of the tensor's first element in its storage, in elements.

    >>> import retrograd as rg
    >>> rg.arange(6.0)[2:].storage_offset()
    2
    """
    return storage_of(x._data)[1]


def _elem_strides(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def _positions(shape: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    """The storage position of each element of a geometry, flattened in C order."""
    pos = np.asarray(offset, np.int64)
    for n, s in zip(shape, strides):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * s
    return pos.reshape(-1)


def _shape_str(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _int_tuple(value: Any, fname: str, arg: str, position: int) -> tuple[int, ...]:
    """PyTorch's parsing of an ``int[]`` argument (a tuple, list or Size of ints)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) or not isinstance(value, (tuple, list)):
        kind = type(value).__name__
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be tuple of ints, not {kind}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Tensor) and v._data.ndim == 0 and v._data.dtype.kind in "iu":
            v = int(v._data)
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {i}")
        out.append(int(v))
    return tuple(out)


def _check_geometry(size: tuple[int, ...], stride: tuple[int, ...], offset: int, storage_bytes: int,
                    itemsize: int) -> None:
    """PyTorch's checks of an ``as_strided`` geometry against a storage of ``storage_bytes``."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{_shape_str(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_shape_str(size)} and "
                           f"strides={_shape_str(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if 0 in size:
        return
    needed = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * itemsize
    if needed > storage_bytes:
        raise RuntimeError(
            f"setStorage: sizes {_shape_str(size)}, strides {_shape_str(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage of size "
            f"{storage_bytes}")


# -- as_strided and its backward ---------------------------------------------------------------


def _as_strided_forward(x: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                        geometry: Any) -> np.ndarray:
    item = x.itemsize
    byte_strides = tuple(s * item for s in stride)
    store, _ = storage_of(x)
    if 0 in size:  # nothing is read: a view of no memory (an offset past the end is allowed)
        return np.lib.stride_tricks.as_strided(store[min(storage_offset, store.size):], size, byte_strides)
    return np.lib.stride_tricks.as_strided(store[storage_offset:], size, byte_strides,
                                           writeable=store.flags.writeable)


def _plan(geometry: Any) -> tuple[int, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """How output positions map onto the input's distinct storage positions: their number, each
    input element's one (``inv``), their multiplicities (None when the input does not overlap
    itself), each output element's one (``idx``) and whether the input has it at all (``hit``)."""
    in_geometry, out_geometry = geometry
    in_pos, out_pos = _positions(*in_geometry), _positions(*out_geometry)
    uniq, inv, counts = np.unique(in_pos, return_inverse=True, return_counts=True)
    idx = np.searchsorted(uniq, out_pos)
    hit = idx < uniq.size
    hit[hit] = uniq[idx[hit]] == out_pos[hit]
    return uniq.size, inv.reshape(-1), (counts if counts.size and counts.max() > 1 else None), idx, hit


def _as_strided_backward_forward(grad: np.ndarray, geometry: Any) -> np.ndarray:
    # Output values the input does not see are dropped (PyTorch treats them as constants).
    n, inv, counts, idx, hit = _plan(geometry)
    acc = np.zeros(n, grad.dtype)
    np.add.at(acc, idx[hit], grad.reshape(-1)[hit])
    if counts is not None:  # an overlapping input: each element gets its share
        acc = acc / counts
    return acc[inv].reshape(geometry[0][0])


def _as_strided_adjoint_forward(grad: np.ndarray, geometry: Any) -> np.ndarray:
    n, inv, counts, idx, hit = _plan(geometry)
    acc = np.zeros(n, grad.dtype)
    np.add.at(acc, inv, grad.reshape(-1))
    if counts is not None:
        acc = acc / counts
    out = np.zeros(hit.shape, grad.dtype)
    out[hit] = acc[idx[hit]]
    return out.reshape(geometry[1][0])


as_strided_adjoint: Op
# The two linear maps are each other's transpose, so every order of derivative is one of them.
as_strided_backward = Op("as_strided_backward", _as_strided_backward_forward, node="AsStridedBackward0",
                         params=("geometry",),
                         grads=(lambda grad, geometry: as_strided_adjoint(grad, geometry),), jvp="linear")
as_strided_adjoint = Op("as_strided_adjoint", _as_strided_adjoint_forward, node="AsStridedBackward0",
                        params=("geometry",),
                        grads=(lambda grad, geometry: as_strided_backward(grad, geometry),), jvp="linear")

_AS_STRIDED_GRADS = (lambda grad, geometry: as_strided_backward(grad, geometry),)


def _as_strided_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    """The tangent read through the geometry (the transpose of the backward, ``auto_linear`` in
    PyTorch): not ``as_strided`` of the tangent, whose storage need not be laid out as the
    input's; positions the input does not cover get zero, as the backward drops them."""
    return [as_strided_adjoint(tangents[0], params[3])]


as_strided_op = Op("as_strided", _as_strided_forward, node="AsStridedBackward0",
                   params=("size", "stride", "storage_offset", "geometry"), view=True,
                   saved=("size", "storage_offset", "stride"), grads=_AS_STRIDED_GRADS, jvp=_as_strided_jvp)
as_strided_inplace = Op("as_strided_", _as_strided_forward, node="AsStridedBackward1",
                        params=("size", "stride", "storage_offset", "geometry"), view=True,
                        saved=("size", "storage_offset", "stride"), grads=_AS_STRIDED_GRADS, jvp=_as_strided_jvp)


def _as_strided_args(x: Tensor, size: Any, stride: Any, storage_offset: Any, fname: str,
                     first: int) -> tuple[Any, ...]:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    size = _int_tuple(size, fname, "size", first)
    stride = _int_tuple(stride, fname, "stride", first + 1)
    data = x._data
    store, own_offset = storage_of(data)
    if storage_offset is None:
        offset = own_offset
    elif isinstance(storage_offset, (int, np.integer)) and not isinstance(storage_offset, bool):
        offset = int(storage_offset)
    else:
        raise TypeError(f"{fname}(): argument 'storage_offset' (position {first + 2}) must be int, not "
                        f"{type(storage_offset).__name__}")
    _check_geometry(size, stride, offset, store.nbytes, data.itemsize)
    geometry = None
    if STATE.grad_enabled and x._requires_grad or DUAL[0] is not None and tangent_of(x) is not None:
        geometry = ((data.shape, _elem_strides(data), own_offset), (size, stride, offset))
    return size, stride, offset, geometry


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:  # noqa: A002
    """A view of ``input``'s storage with the given sizes, strides (in elements) and storage
    offset (absolute; by default ``input``'s own).

    >>> import retrograd as rg
    >>> rg.arange(6.0).as_strided((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    return apply(as_strided_op, (input, *_as_strided_args(input, size, stride, storage_offset, "as_strided", 2)))


def as_strided_method(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """``Tensor.as_strided``: see ``retrograd.as_strided``."""
    return apply(as_strided_op, (self, *_as_strided_args(self, size, stride, storage_offset, "as_strided", 1)))


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """Give the tensor itself the sizes, strides and storage offset (``AsStridedBackward1``).

    >>> import retrograd as rg
    >>> x = rg.arange(6.0); x.as_strided_((2,), (2,), 1)
    tensor([1., 3.])
    """
    args = _as_strided_args(self, size, stride, storage_offset, "as_strided_", 1)
    return _inplace_view(self, as_strided_inplace, args, "as_strided_")


def _scatter_layout(x: np.ndarray) -> tuple[tuple[int, ...], int]:
    """The strides (in elements) and storage length of PyTorch's copy for ``as_strided_scatter``:
    the input's own strides (a strided input leaves gaps in the copy's storage), contiguous for
    an input that overlaps itself; the geometry then addresses this copy's storage."""
    strides = _elem_strides(x)
    if not x.size or any(s < 0 for s in strides) or not _non_overlapping(x.shape, strides):
        strides = tuple(int(s) for s in np.cumprod((1,) + x.shape[:0:-1])[::-1]) if x.ndim else ()
    return strides, (sum((n - 1) * s for n, s in zip(x.shape, strides)) + 1 if x.size else 0)


def _non_overlapping(shape: Sequence[int], strides: Sequence[int]) -> bool:
    reach = 0
    for s, n in sorted((s, n) for s, n in zip(strides, shape) if n > 1):
        if s <= reach:
            return False
        reach += s * (n - 1)
    return True


def _as_strided_scatter_forward(x: np.ndarray, src: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...],
                                storage_offset: int, geometry: Any, covered: np.ndarray) -> np.ndarray:
    (shape, strides, _), region = geometry
    store = np.zeros(max(_layout_storage(shape, strides), region_end(region)), x.dtype)
    out = np.lib.stride_tricks.as_strided(store, shape, tuple(s * x.itemsize for s in strides))
    out[...] = x
    store[_positions(*region)] = src.reshape(-1)
    return out


def _layout_storage(shape: Sequence[int], strides: Sequence[int]) -> int:
    return sum((n - 1) * s for n, s in zip(shape, strides)) + 1 if all(shape) else 0


def region_end(region: Any) -> int:
    size, stride, offset = region
    return offset + _layout_storage(size, stride) if all(size) else 0


as_strided_scatter_op = Op(
    "as_strided_scatter", _as_strided_scatter_forward, node="AsStridedScatterBackward0", inputs=("self", "src"),
    params=("size", "stride", "storage_offset", "geometry", "covered"), saved=("size", "storage_offset", "stride"),
    # ``input``'s gradient: the output's gradient where the region does not cover it; ``src``'s:
    # the output's gradient read through the region (none where the copy's gaps hide it).
    grads=(lambda grad, covered: put_positions(grad, _make(np.zeros(covered.shape, grad._data.dtype)), covered),
           lambda grad, geometry: as_strided_adjoint(grad, geometry)), jvp="transpose")


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,  # noqa: A002
                       storage_offset: Any = None) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``as_strided(size, stride, storage_offset)``
    of the copy (which has ``input``'s strides).

    >>> import retrograd as rg
    >>> rg.as_strided_scatter(rg.zeros(4), rg.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    fname = "as_strided_scatter"
    for arg, value, position in (("input", input, 1), ("src", src, 2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    size = _int_tuple(size, fname, "size", 3)
    stride = _int_tuple(stride, fname, "stride", 4)
    if storage_offset is None:
        offset = 0
    elif isinstance(storage_offset, (int, np.integer)) and not isinstance(storage_offset, bool):
        offset = int(storage_offset)
    else:
        raise TypeError(f"{fname}(): argument 'storage_offset' (position 5) must be int, not "
                        f"{type(storage_offset).__name__}")
    data = input._data
    strides, storage = _scatter_layout(data)
    _check_geometry(size, stride, offset, storage * data.itemsize, data.itemsize)
    if tuple(src._data.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src._data.shape)}, slice size = {_shape_str(size)}")
    positions = _positions(size, stride, offset)
    if np.unique(positions).size != positions.size:
        raise RuntimeError(OVERLAP_ERROR)
    out_positions = _positions(data.shape, strides, 0)
    covered = np.flatnonzero(np.isin(out_positions, positions))  # C-order indices the region overwrites
    geometry = ((data.shape, strides, 0), (size, stride, offset))
    if src._data.dtype != data.dtype:
        src = src.to(input.dtype)
    return apply(as_strided_scatter_op, (input, src, size, stride, offset, geometry,  # type: ignore[no-any-return]
                                         covered))


# -- in-place view ops --------------------------------------------------------------------------


def _inplace_view(self: Tensor, op: Op, params: Sequence[Any], name: str) -> Tensor:
    """Give ``self`` the array (and, when it is tracked, the node) of ``op``'s view of it."""
    check_inplace(self, (), fill=True)  # (no element is written: an expanded tensor is fine)
    if DUAL[0] is not None and tangent_of(self) is not None:  # its tangent changes the same way
        return inplace_view_dual(self, op, params, name, _inplace_view,  # type: ignore[no-any-return]
                                 op.jvp == "linear" or _same_layout(self._data, tangent_of(self)._data))
    counter = self._counter()  # (before its array changes: a node that saved it as output shares it)
    if STATE.grad_enabled and self._requires_grad:
        view = apply(op, (self, *params))
        self._data, self._grad_fn, self._output_nr = view._data, view._grad_fn, 0
    else:
        self._data = forward_arrays(op, (self,), params)
    counter.bump(name)
    if self._base is not None:  # its own history is current: not regenerated from the base
        self._view_version = counter.value
    return self


def _same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``b`` sits in its storage as ``a`` in its own (an absolute geometry reads the same
    elements of both)."""
    if a.shape != b.shape or _elem_strides(a) != _elem_strides(b):
        return False
    (store_a, offset_a), (store_b, offset_b) = storage_of(a), storage_of(b)
    return offset_a == offset_b and store_a.size == store_b.size


def t_(self: Tensor) -> Tensor:
    """Transpose a matrix in place (``TBackward1``); 0-d and 1-d tensors stay as they are.

    >>> import retrograd as rg
    >>> rg.zeros(2, 3).t_().shape
    torch.Size([3, 2])
    """
    return _inplace_view(self, t_inplace, (), "t_")


def transpose_(self: Tensor, dim0: Any, dim1: Any) -> Tensor:
    """Swap two dimensions in place (``TransposeBackward1``).

    >>> import retrograd as rg
    >>> rg.zeros(2, 3, 4).transpose_(0, 2).shape
    torch.Size([4, 3, 2])
    """
    ndim = self._data.ndim
    normalize_dim(dim0, ndim)
    normalize_dim(dim1, ndim)
    return _inplace_view(self, transpose_inplace, (dim0, dim1), "transpose_")


def swapaxes_(self: Tensor, axis0: Any, axis1: Any) -> Tensor:
    """``transpose_`` under NumPy's name.

    >>> import retrograd as rg
    >>> rg.zeros(2, 3).swapaxes_(0, 1).shape
    torch.Size([3, 2])
    """
    return transpose_(self, axis0, axis1)


def swapdims_(self: Tensor, dim0: Any, dim1: Any) -> Tensor:
    """``transpose_`` under another name.

    >>> import retrograd as rg
    >>> rg.zeros(2, 3).swapdims_(0, 1).shape
    torch.Size([3, 2])
    """
    return transpose_(self, dim0, dim1)


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """Remove dimensions of size 1 in place: all of them, one (``dim``) or several (a tuple).

    >>> import retrograd as rg
    >>> rg.zeros(1, 3, 1).squeeze_(0).shape
    torch.Size([3, 1])
    """
    ndim = self._data.ndim
    if dim is None:
        return _inplace_view(self, squeeze_all_inplace, (), "squeeze_")
    if isinstance(dim, (tuple, list)):
        dims = tuple(dim)
        normalized = [normalize_dim(d, ndim) for d in dims]
        for i, d in enumerate(normalized):
            if d in normalized[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return _inplace_view(self, squeeze_dims_inplace, (dims if ndim else (),), "squeeze_")
    normalize_dim(dim, ndim)
    return _inplace_view(self, squeeze_dim_inplace, (dim,), "squeeze_")


def unsqueeze_(self: Tensor, dim: Any) -> Tensor:
    """Insert a dimension of size 1 in place (``UnsqueezeBackward1``).

    >>> import retrograd as rg
    >>> rg.zeros(3).unsqueeze_(0).shape
    torch.Size([1, 3])
    """
    d = normalize_dim(dim, self._data.ndim + 1)
    return _inplace_view(self, unsqueeze_inplace, (d,), "unsqueeze_")


# -- resize_, resize_as_ and the deprecated resize/resize_as ---------------------------------------

RESIZE_GRAD_ERROR = "cannot resize variables that require grad"


def _resize_sizes(sizes: tuple[Any, ...], fname: str) -> tuple[int, ...]:
    if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)):
        return _int_tuple(sizes[0], fname, "size", 1)
    for i, n in enumerate(sizes):
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(n).__name__}\"")
    return tuple(int(n) for n in sizes)


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give the tensor these sizes, contiguous from its storage offset: the storage's elements are
    kept in order, and it grows (with zeros) when it is too small.

    >>> import retrograd as rg
    >>> rg.arange(6.0).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    size = _resize_sizes(sizes, "resize_")
    if self._requires_grad:
        raise RuntimeError(RESIZE_GRAD_ERROR)
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    data = self._data
    if size == data.shape:
        return self
    store, offset = storage_of(data)
    numel = int(np.prod(size, dtype=np.int64))
    if offset + numel > store.size:  # a bigger storage: PyTorch grows it in place, NumPy cannot
        grown = np.zeros(offset + numel, data.dtype)
        grown[:store.size] = store
        store = grown
        if self._base is not None:
            self._base = None  # (its memory is its own now)
    self._data = store[offset:offset + numel].reshape(size) if numel else \
        np.lib.stride_tricks.as_strided(store[min(offset, store.size):], size, (0,) * len(size))
    self._counter().bump("resize_")
    return self


def resize_as_(self: Tensor, the_template: Any, memory_format: Any = None) -> Tensor:
    """``resize_`` to the sizes of ``the_template``.

    >>> import retrograd as rg
    >>> rg.arange(4.0).resize_as_(rg.ones(2, 2)).shape
    torch.Size([2, 2])
    """
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    return resize_(self, the_template._data.shape)


def _resize_function() -> Any:
    from ..autograd.function import Function

    class Resize(Function):
        """PyTorch's legacy autograd resize: a new shape with the same number of elements."""

        @staticmethod
        def forward(ctx: Any, tensor: Tensor, sizes: tuple[int, ...]) -> Tensor:
            numel = int(np.prod(sizes, dtype=np.int64))
            if tensor._data.size != numel:
                raise RuntimeError(
                    f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the given "
                    f"tensor has a size of {'x'.join(map(str, tensor._data.shape))} ({tensor._data.size} elements). "
                    "autograd's resize can only change the shape of a given tensor, while preserving the number of "
                    "elements. ")
            ctx.input_sizes = tensor._data.shape
            return tensor.contiguous().view(*sizes)  # type: ignore[no-any-return]

        @staticmethod
        def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor, None]:
            return grad_output.contiguous().view(*ctx.input_sizes), None

    return Resize


_RESIZE: list[Any] = []


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated: a tensor of these sizes with the same elements (warns, as PyTorch does).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.arange(4.0).resize(2, 2).shape
    torch.Size([2, 2])
    """
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=3)
    if not _RESIZE:
        _RESIZE.append(_resize_function())
    return _RESIZE[0].apply(self, sizes)  # type: ignore[no-any-return]


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: ``resize`` to the sizes of ``tensor`` (warns, as PyTorch does).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.arange(4.0).resize_as(rg.ones(2, 2)).shape
    torch.Size([2, 2])
    """
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=3)
    if not _RESIZE:
        _RESIZE.append(_resize_function())
    return _RESIZE[0].apply(self, tuple(tensor._data.shape))  # type: ignore[no-any-return]
