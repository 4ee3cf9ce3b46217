"""The batching table: how each op runs on a whole batch inside ``vmap``.

A rule gets the op, its tensor inputs as physical tensors (``batched[i]`` says whether input
``i`` has the batch dimension in front; the others are one sample's, shared by all), its
params and the batch size, and returns the physical output(s), batch dimension in front, or
``NotImplemented`` (then the op runs once per sample). Most rules are free on NumPy:

- ``ELEMENTWISE``: broadcasting does the work; a batched input whose sample has fewer dims than
  the widest input gets singleton dims after its batch dimension, so that the batch dimensions
  line up at the front.
- ``DIMS``: dims move one place to the right (``sum(dim=0)`` of a sample is ``sum(dim=1)`` of the
  batch); ``None`` meaning "every dim" becomes every dim but the batch's.
- ``SHAPES``: a target shape gets the batch size in front (``view``, ``expand``).
- matrix products: NumPy's ``matmul`` takes leading batch dims as they are.
Everything else (no entry) runs per sample, with PyTorch's performance warning.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.forward_ad import DUAL
from ..autograd.grad_mode import is_grad_enabled
from ..ops import conv as _C
from ..ops import elementwise as _E
from ..ops import linalg as _L
from ..ops import nn as _N
from ..ops import reduce as _R
from ..ops import sampling as _SMP
from ..ops import shape as _S
from ..ops.op import Op, apply
from ..tensor import Tensor

Rule = Callable[[Op, list[Any], list[bool], tuple[Any, ...], int], Any]
RULES: dict[Op, Rule] = {}


def _rank(v: Any, batched: bool) -> int:
    if not isinstance(v, Tensor):
        return 0
    return v.dim() - 1 if batched else v.dim()


def _pad(v: Tensor, batched: bool, rank: int) -> Tensor:
    """A batched input with singleton dims after the batch dim, up to ``rank`` sample dims."""
    have = _rank(v, batched)
    if not batched or have >= rank:
        return v
    shape = tuple(v.shape)
    return v.reshape(shape[:1] + (1,) * (rank - have) + shape[1:])


def _expand(v: Tensor, size: int) -> Tensor:
    """An unbatched input as a batch of ``size`` copies (a view)."""
    return v.unsqueeze(0).expand(size, *v.shape)


def elementwise(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    if len(inputs) == 1:  # (batched: nothing to line up)
        return apply(op, (inputs[0], *params))
    ranks = [(v._data.ndim - 1 if b else v._data.ndim) if isinstance(v, Tensor) else 0
             for v, b in zip(inputs, batched)]
    rank = max(ranks)
    values = list(inputs)
    for i, (v, b, have) in enumerate(zip(inputs, batched, ranks)):
        if b and have < rank:  # (the view op itself: reshape's checks are for any shape)
            shape = tuple(v._data.shape)
            values[i] = apply(_S.view, (v, shape[:1] + (1,) * (rank - have) + shape[1:]))
    return apply(op, (*values, *params))


def _shift(d: int, rank: int) -> int:
    return (d + rank if d < 0 else d) + 1


def dims(index: int, kind: str = "int", none_is_all: bool = False) -> Rule:
    """A rule for ops whose param ``index`` names dims (``kind``: ``int``, ``tuple`` or ``perm``):
    every tensor input becomes batched and the dims move right by one."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        rank = next(_rank(v, b) for v, b in zip(inputs, batched) if b)
        values = [v if b or not isinstance(v, Tensor) else _expand(v, size) for v, b in zip(inputs, batched)]
        if rank == 0 and kind != "perm":
            # A 0-d sample's dim 0 (or -1) is the sample itself: run on (batch, 1), drop the 1.
            values = [v.unsqueeze(1) if isinstance(v, Tensor) else v for v in values]
            out = rule(op, values, [True] * len(values), params, size)
            if out is NotImplemented:
                return out
            if isinstance(out, Tensor):
                return out.squeeze(1) if out.dim() == 2 else out
            return type(out)(o.squeeze(1) if isinstance(o, Tensor) and o.dim() == 2 else o for o in out)
        dim = params[index]
        if dim is None:
            if not none_is_all:
                return NotImplemented
            new: Any = tuple(range(1, rank + 1))
            if kind == "int":
                return NotImplemented
        elif kind == "int":
            new = _shift(int(dim), rank)
        elif kind == "tuple":
            if not isinstance(dim, int) and len(dim) == 0:  # (some ops read () as every dim)
                return NotImplemented
            new = tuple(_shift(int(d), rank) for d in ((dim,) if isinstance(dim, int) else dim))
        else:  # a permutation
            new = (0,) + tuple(_shift(int(d), rank) for d in dim)
        params = params[:index] + (new,) + params[index + 1:]
        return apply(op, (*values, *params))
    return rule


def variadic_dims(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``cat``/``stack``: unbatched inputs become batches of copies; the dim moves right."""
    rank = next(_rank(v, b) for v, b in zip(inputs, batched) if b)
    if op.name == "stack":
        rank += 1
    values = [v if b else _expand(v, size) for v, b in zip(inputs, batched)]
    return apply(op, (*values, _shift(int(params[0]), rank), *params[1:]))


def free(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """One input, an op that treats leading dims as batch dims already."""
    return apply(op, (*inputs, *params))


def reduce_all(target: Op, extra: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> Rule:
    """A reduction over every dim as ``target`` over every dim but the batch's."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        v = inputs[0]
        return apply(target, (v, tuple(range(1, v.dim())), *extra(params)))
    return rule


def view(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    v = inputs[0]
    shape = tuple(params[0])
    if -1 in shape:
        numel = v.numel() // size
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape = tuple(numel // known if s == -1 else s for s in shape)
    return v.reshape((size,) + shape)


def expand(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    target = tuple(params[0])
    v = _pad(inputs[0], True, len(target))
    return apply(op, (v, (size,) + target))


def sum_to_size(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    target = tuple(params[0])
    v = inputs[0]
    lead = v.dim() - 1 - len(target)
    if lead > 0:
        v = apply(_R.sum_dim, (v, tuple(range(1, 1 + lead)), False, None))
    return apply(op, (v, (size,) + target))


def transpose_2d(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    v = inputs[0]
    if v.dim() - 1 < 2:
        return apply(_S.alias, (v,))
    return apply(_S.transpose, (v, v.dim() - 2, v.dim() - 1))


def squeeze_all(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    v = inputs[0]
    ones = tuple(i + 1 for i, s in enumerate(v.shape[1:]) if s == 1)
    return apply(_S.squeeze_dims, (v, ones)) if ones else apply(_S.alias, (v,))


def _matmul(a: Tensor, ba: bool, b: Tensor, bb: bool) -> Tensor:
    """A matrix product of samples (each at least 2-d) on the physical tensors."""
    if (ba and bb and type(a) is Tensor and type(b) is Tensor and a._data.ndim == 3 and b._data.ndim == 3
            and a._data.shape[1] == 1 and a._data.shape[2] == b._data.shape[1] and a._data.dtype == b._data.dtype):
        return apply(row_times_matrix, (a, b))
    return _L.matmul(a, b)  # leading dims broadcast as batch dims


# Memory for the per-sample weight gradients (a batch of outer products, megabytes each), kept
# after their arrays die: a fresh block of that size costs one page fault per 4 KiB on every
# call (the kernel zero-fills it), which was half the time of vmap(grad) of a small MLP. A
# block is reused only once nothing but this pool refers to it (its arrays and their views hold
# it through ``.base``); a few blocks at most.
_POOL: list[np.ndarray] = []
_POOL_BLOCKS = 4
_POOL_MIN_BYTES = 1 << 17  # (smaller arrays come from malloc's reused heap anyway)
# Still needed without the reference cycles (which only delayed the blocks' return): glibc's
# malloc keeps freed blocks of up to 32 MiB for reuse once one such block has been unmapped, but
# bigger ones (a 784-128 layer's gradients, batch 128: 51 MB) are mapped afresh on every call,
# and a fixed MALLOC_MMAP_THRESHOLD_ does the same to every size. One lock around the look-up and
# the take, taken only for blocks this big (nothing beside a multi-megabyte product): under the
# GIL a thread's loop variable already keeps another from taking the block it is taking, but
# that is CPython's reference counting, not a guarantee, and the eviction (count, pop, append)
# raced, letting threads grow the pool past its bound.
_POOL_LOCK = threading.Lock()


def _free_refs() -> int:
    """What ``sys.getrefcount`` says of a pooled block nothing else refers to, measured the way
    ``_recycled`` asks (the count depends on the interpreter)."""
    pool = [np.empty(1, np.uint8)]
    for block in pool:
        return sys.getrefcount(block)
    raise AssertionError


_FREE_REFS = _free_refs()


def _recycled(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array of ``shape``, in a free pooled block of its size when there is one.

    >>> a = _recycled((64, 64, 16), np.dtype(np.float32))
    >>> b = _recycled((64, 64, 16), np.dtype(np.float32))  # (``a`` is alive: another block)
    >>> np.shares_memory(a, b)
    False
    >>> address = b.__array_interface__["data"][0]
    >>> del b  # (its block is free again)
    >>> _recycled((64, 64, 16), np.dtype(np.float32)).__array_interface__["data"][0] == address
    True
    """
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < _POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    with _POOL_LOCK:
        for block in _POOL:
            if block.nbytes == nbytes and sys.getrefcount(block) == _FREE_REFS:
                return block.view(dtype).reshape(shape)
        block = np.empty(nbytes, np.uint8)
        if len(_POOL) >= _POOL_BLOCKS:
            _POOL.pop(0)
        _POOL.append(block)
        return block.view(dtype).reshape(shape)


def _row_times_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if b.strides[0] == 0:  # one matrix for the whole batch (a weight lifted by grad): one product
        return np.matmul(a[:, 0], b[0])[:, None]
    return np.matmul(a, b)


def _row_times_matrix_grad_rows(grad: Tensor, mat2: Tensor) -> Tensor:
    # In differentiable ops under create_graph, and under forward AD (whose tangents only ops carry).
    if is_grad_enabled() or DUAL[0] is not None:
        return grad @ mat2.mT
    g, b = grad._data, mat2._data
    if b.strides[0] == 0:  # (as in forward: one product with the shared matrix)
        return Tensor._make(np.matmul(g[:, 0], b[0].T)[:, None])
    return Tensor._make(np.matmul(g, np.swapaxes(b, 1, 2)))


def _row_times_matrix_grad_matrices(grad: Tensor, self: Tensor) -> Tensor:
    if is_grad_enabled() or DUAL[0] is not None:  # (as above)
        return self.mT * grad
    g, a = grad._data, self._data
    # The outer products with NumPy's inner loop over the longer side (a broadcast product runs
    # one short loop per row), into recycled memory (see _recycled).
    if g.shape[2] < a.shape[2]:
        out = _recycled((g.shape[0], g.shape[2], a.shape[2]), g.dtype)
        return Tensor._make(np.swapaxes(np.multiply(np.swapaxes(g, 1, 2), a, out=out), 1, 2))
    out = _recycled((g.shape[0], a.shape[2], g.shape[2]), g.dtype)
    return Tensor._make(np.einsum("bik,bkj->bij", np.swapaxes(a, 1, 2), g, out=out))


# A batch of row vectors times a batch of matrices, ``(B, 1, k) @ (B, k, m)`` of one dtype: what a
# linear layer is per sample when ``grad`` under ``vmap`` makes its weight per-sample. As ``bmm``
# (its node's name too), but its weight gradient (a batch of outer products) is a broadcast
# product, which NumPy runs several times faster than ``matmul`` with an inner dimension of 1, and
# a matrix shared by the batch (stride 0) is one 2-d product. An op, not a ``Function``: its
# node is recorded and run at an op's cost, and only the gradients needed are computed.
row_times_matrix = Op("bmm", _row_times_matrix, node="BmmBackward0", inputs=("self", "mat2"),
                      grads=(_row_times_matrix_grad_rows, _row_times_matrix_grad_matrices), jvp="multilinear")


def mm(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    return _matmul(inputs[0], batched[0], inputs[1], batched[1])


def mv(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    a, v = inputs
    if batched[1]:
        return _matmul(a, batched[0], v.unsqueeze(-1), True).squeeze(-1)
    return _matmul(a, batched[0], v, False)


def dot(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    a, b = inputs
    if batched[0] and batched[1]:
        return apply(_R.sum_dim, (a * b, (1,), False, None))
    if batched[0]:
        return _matmul(a, True, b, False)
    return _matmul(b, True, a, False)


def addmm(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    bias, m1, m2 = inputs
    beta, alpha = (params + (1, 1))[:2]
    prod = _matmul(m1, batched[1], m2, batched[2])
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # (the bias is ignored, NaN included: the batch comes from the products alone)
        return prod if batched[1] or batched[2] else _expand(prod, size)
    if beta != 1:
        bias = bias * beta
    return prod + _pad(bias, batched[0], 2)


def mse_loss(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    reduction = params[0]
    rank = max(_rank(v, b) for v, b in zip(inputs, batched))
    out = apply(op, (*[_pad(v, b, rank) for v, b in zip(inputs, batched)], "none"))
    if reduction == "none":
        return out
    target = _R.mean_dim if reduction == "mean" else _R.sum_dim
    dims_ = tuple(range(1, out.dim()))
    if not dims_:
        return out
    return apply(target, (out, dims_, False)) if reduction == "mean" else apply(target, (out, dims_, False, None))


def nll_loss(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """The samples' rows folded into one batch of rows, reduced per sample afterwards."""
    from ._vmap import BatchedParam
    target, weight, reduction, ignore_index = params
    if isinstance(target, Tensor):  # (the op's ``versioned=`` params, given as tensors)
        target = target._data
    if isinstance(weight, Tensor):
        weight = weight._data
    x = inputs[0] if batched[0] else _expand(inputs[0], size)
    if x.dim() > 3:
        return NotImplemented
    t = target.array if type(target) is BatchedParam else np.broadcast_to(target, (size,) + np.shape(target))
    rows = x.reshape(-1, x.shape[-1]) if x.dim() == 3 else x
    losses = apply(op, (rows, t.reshape(-1), weight, "none", ignore_index))
    if rows.shape[0] == size and (reduction == "sum" or (
            reduction == "mean" and weight is None and not (t == ignore_index).any())):
        # One row per sample (as a per-sample loss of one input): its loss is the sum, and the
        # mean too unless weighted or ignored (their mean divides by the row's weight or is NaN).
        return losses
    losses = losses.reshape(size, -1)
    if reduction == "none":
        return losses.reshape((size,) + t.shape[1:])
    total = apply(_R.sum_dim, (losses, (1,), False, None))
    if reduction == "sum":
        return total
    # "mean": over the weights of the targets not ignored (NaN where every one is, as PyTorch)
    counted = (t != ignore_index).astype(x._data.dtype)
    if weight is not None:
        counted = counted * weight[np.where(t == ignore_index, 0, t)]
    counted = counted.reshape(size, -1).sum(1)
    if counted.all():
        return total / Tensor._make(counted)
    # A sample whose targets are all ignored: a NaN loss but a zero gradient, as PyTorch's (its
    # total, zero, is divided by one and the NaN added as a constant).
    nans = np.where(counted == 0, np.nan, 0).astype(counted.dtype)
    return total / Tensor._make(np.where(counted == 0, 1, counted).astype(counted.dtype)) + Tensor._make(nans)


def shape_then_dims(*dim_indices: int) -> Rule:
    """Backward ops that write a gradient into a zero tensor of ``shape`` (param 0): the batch
    size goes in front of the shape and the dims (params ``dim_indices``) move right by one."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        shape = tuple(params[0])
        new = list(params)
        new[0] = (size,) + shape
        for i in dim_indices:
            new[i] = _shift(int(params[i]), len(shape))
        return apply(op, (inputs[0], *new))
    return rule


def convolution(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """The samples' images folded into the image batch; per-sample weights (as ``grad`` under
    ``vmap`` makes them) become groups of one grouped convolution."""
    x, weight, bias = inputs
    bx, bw, bb = batched
    transposed, groups = params[3], params[5]
    if transposed:
        return NotImplemented
    if not bx:
        x = _expand(x, size)
    n, rest = x.shape[1], tuple(x.shape[2:])
    if not (bw or bb):  # shared weights: one convolution over size * n images
        out = apply(op, (x.reshape((size * n,) + rest), weight, bias, *params))
        return out.reshape((size, n) + tuple(out.shape[1:]))
    if not bw:
        weight = _expand(weight, size)
    if bias is not None and not bb:
        bias = _expand(bias, size)
    channels = rest[0]
    images = x.movedim(0, 1).reshape((n, size * channels) + rest[1:])
    filters = weight.reshape((size * weight.shape[1],) + tuple(weight.shape[2:]))
    shifts = None if bias is None else bias.reshape(-1)
    out = apply(op, (images, filters, shifts, *params[:5], groups * size))
    out = out.reshape((n, size, out.shape[1] // size) + tuple(out.shape[2:]))
    return out.movedim(1, 0)


def fold_images(spatial: int) -> Rule:
    """Pooling of (N, C, *spatial) or (C, *spatial) input: the samples' images folded into N."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        x = inputs[0]
        if x.dim() == spatial + 2:  # one (C, ...) image per sample: the batch is N
            return apply(op, (x, *params))
        n = x.shape[1]
        out = apply(op, (x.reshape((size * n,) + tuple(x.shape[2:])), *params))
        if isinstance(out, Tensor):
            return out.reshape((size, n) + tuple(out.shape[1:]))
        return tuple(o.reshape((size, n) + tuple(o.shape[1:])) for o in out)
    return rule


def pointwise_loss(index: int) -> Rule:
    """A loss computed elementwise then reduced (``reduction``: param ``index``): the elementwise
    losses of the whole batch (``"none"``), then each sample's mean or sum."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        rank = max(_rank(v, b) for v, b in zip(inputs, batched))
        values = [_pad(v, b, rank) for v, b in zip(inputs, batched)]
        out = apply(op, (*values, *params[:index], "none", *params[index + 1:]))
        if params[index] == "none":
            return out if out.shape[0] == size else _expand(out, size)
        dims_ = tuple(range(1, out.dim()))
        if out.dim() == 0 or out.shape[0] != size:
            return NotImplemented
        if not dims_:
            return out
        if params[index] == "mean":
            return apply(_R.mean_dim, (out, dims_, False))
        return apply(_R.sum_dim, (out, dims_, False, None))
    return rule


def flat_then(target: Op, pick: int | None = None) -> Rule:
    """An op over every element (no dim, or ``dim=None`` and no ``keepdim``) as ``target`` over
    dim 1 of the samples flattened; ``pick``: which of its outputs (``median``'s values)."""
    def rule(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
        if params and (params[0] is not None or any(params[1:])):
            return NotImplemented  # (a dim, or keepdim: the dims rule's, or the loop's)
        out = apply(target, (inputs[0].reshape(size, -1), 1, False))
        return out if pick is None else out[pick]
    return rule


def roll(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``roll`` over dims (they move right), or with no dims over the flattened sample."""
    v, (shifts, dims_) = inputs[0], params
    if dims_ is None:
        flat = apply(op, (v.reshape(size, -1), tuple(shifts), (1,)))
        return flat.reshape(tuple(v.shape))
    if v.dim() == 1:  # (a 0-d sample rolls to a copy of itself)
        return apply(op, (v.unsqueeze(1), tuple(shifts), (1,) * len(dims_))).squeeze(1)
    return apply(op, (v, tuple(shifts), tuple(_shift(int(d), v.dim() - 1) for d in dims_)))


def trace(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """The sum of each sample's diagonal."""
    diag = apply(_S.diagonal, (inputs[0], 0, 1, 2))
    return apply(_R.sum_dim, (diag, (1,), False, None))


def repeat(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``repeat``: the sample padded to as many dims as repeats (PyTorch's leading ones), the
    batch dimension repeated once."""
    reps = tuple(params[0])
    v = inputs[0]
    if len(reps) < v.dim() - 1:
        return NotImplemented  # (the per-sample error)
    return apply(op, (_pad(v, True, len(reps)), (1,) + reps))


def dist(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``dist(a, b, p)``: the p-norm of each sample's ``a - b`` (over every element)."""
    rank = max(_rank(v, b) for v, b in zip(inputs, batched))
    a, b = (_pad(v, bt, rank) for v, bt in zip(inputs, batched))
    diff = a - b
    if diff.dim() < 2 or diff.shape[0] != size or not (diff.is_floating_point() or diff.is_complex()):
        return NotImplemented  # (0-d samples, and integers: the op's own error, per sample)
    return apply(_R.vector_norm, (diff, params[0], tuple(range(1, diff.dim())), False))


_DIM0 = dims(0)


def dim_or_flat(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``argmax``/``argmin``/``aminmax``: over a dim (it moves right), or with ``dim=None`` over the
    flattened sample."""
    if params[0] is not None:
        return _DIM0(op, inputs, batched, params, size)
    return flat_then(op)(op, inputs, batched, params, size)


def _ops_of(module: Any) -> list[Op]:
    return [v for v in vars(module).values() if isinstance(v, Op)]


# Random ops: refused under randomness="error" (batched inputs give each sample its own draw).
RANDOM_OPS = frozenset(_ops_of(_SMP))

# -- the table --------------------------------------------------------------------------------
# Elementwise (free: broadcasting): every entry of ops/elementwise.py, and the activations of
# ops/nn.py that take no dim.
for _op in _ops_of(_E):
    RULES[_op] = elementwise
_NN_ELEMENTWISE = {"erf", "rsqrt", "where", "clamp_min", "add", "mul", "sub", "div", "xlogy", "hardtanh",
                   "leaky_relu", "elu", "celu", "threshold", "gelu", "softplus", "log_sigmoid", "silu", "mish",
                   "hardsigmoid", "hardswish", "hardshrink", "softshrink"}
for _op in _ops_of(_N):  # (several entries share a name: the in-place twins)
    if _op.name in _NN_ELEMENTWISE:
        RULES[_op] = elementwise
for _op in _ops_of(_SMP):
    if _op in RULES:
        del RULES[_op]

# Dims shift right by one.
RULES[_R.sum_dim] = dims(0, "tuple", none_is_all=True)
RULES[_R.mean_dim] = dims(0, "tuple", none_is_all=True)
RULES[_R.sum_all] = reduce_all(_R.sum_dim, lambda p: (False, *p))
RULES[_R.mean_all] = reduce_all(_R.mean_dim, lambda p: (False,))
RULES[_R.max_all] = reduce_all(_R.amax, lambda p: (False,))
RULES[_R.min_all] = reduce_all(_R.amin, lambda p: (False,))
for _name in ("max_dim", "min_dim", "argmax", "argmin", "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin",
              "sort", "argsort", "prod_dim"):
    if hasattr(_R, _name):
        RULES[getattr(_R, _name)] = dims(0)
for _name in ("amax", "amin", "logsumexp"):
    RULES[getattr(_R, _name)] = dims(0, "tuple", none_is_all=True)
for _name in ("var", "std", "var_mean", "std_mean"):
    if hasattr(_R, _name):
        RULES[getattr(_R, _name)] = dims(0, "tuple", none_is_all=True)
_SOFTMAX_LIKE: tuple[Any, ...] = (_N.softmax, _N.log_softmax, _N._safe_softmax, _N.softmax_backward,
                                 _N.log_softmax_backward, _N.glu)
for _op in _SOFTMAX_LIKE:
    RULES[_op] = dims(0)
RULES[_S.permute] = dims(0, "perm")
RULES[_S.squeeze_dim_inplace] = dims(0)
RULES[_S.unsqueeze_inplace] = lambda op, i, b, p, n: apply(op, (i[0], _shift(p[0], i[0].dim())))
RULES[_S.transpose_inplace] = RULES[_S.transpose] = lambda op, i, b, p, n: apply(op, (i[0], _shift(p[0], i[0].dim() - 1),
                                                                               _shift(p[1], i[0].dim() - 1)))
RULES[_S.unsqueeze] = lambda op, i, b, p, n: apply(op, (i[0], _shift(p[0], i[0].dim())))
RULES[_S.select] = dims(0)
RULES[_S.slice_op] = dims(0)
RULES[_S.unbind] = dims(0)
RULES[_S.flip] = dims(0, "tuple")
RULES[_S.squeeze_all] = squeeze_all
RULES[_S.squeeze_dims] = dims(0, "tuple")
if hasattr(_S, "squeeze_dim"):
    RULES[_S.squeeze_dim] = dims(0, "tuple")
RULES[_S.split] = dims(1)
RULES[_S.split_with_sizes] = dims(1)
RULES[_S.cat] = variadic_dims
RULES[_S.stack] = variadic_dims
for _module in (_L, _N):
    for _op in _ops_of(_module):
        if _op.name == "cat":
            RULES[_op] = variadic_dims
RULES[_S.diagonal] = lambda op, i, b, p, n: apply(op, (i[0], p[0], _shift(p[1], i[0].dim() - 1),
                                                       _shift(p[2], i[0].dim() - 1)))
# Target shapes get the batch size in front.
RULES[_S.view] = view
RULES[_S.select_backward] = shape_then_dims(1)
RULES[_S.slice_backward] = shape_then_dims(1)
RULES[_S.diagonal_backward] = shape_then_dims(2, 3)
RULES[_S.unsafe_view] = view
RULES[_S.reshape_alias] = view
RULES[_S.expand] = expand
RULES[_R.sum_to_size] = sum_to_size
RULES[_S.t] = transpose_2d
RULES[_S.alias] = free
# Leading dims are batch dims already.
for _name in ("tril", "triu"):
    RULES[getattr(_S, _name)] = free
for _name in ("linalg_inv", "linalg_det", "linalg_slogdet", "linalg_matrix_exp"):
    if hasattr(_L, _name):
        RULES[getattr(_L, _name)] = free
# Matrix products: NumPy's matmul broadcasts leading batch dims.
RULES[_L.mm] = mm
RULES[_L.bmm] = mm
RULES[_L.mv] = mv
RULES[_L.dot] = dot
RULES[_L.addmm] = addmm
for _op in _ops_of(_N):
    if _op.name == "addmm":
        RULES[_op] = addmm
RULES[_N.mse_loss] = mse_loss
RULES[_N.nll_loss] = nll_loss
RULES[_C.convolution] = convolution
for _op, _spatial in ((_C.max_pool2d, 2), (_C.adaptive_max_pool2d, 2), (_C.max_pool3d, 3), (_C.adaptive_max_pool3d, 3)):
    RULES[_op] = fold_images(_spatial)
# Products over every dim: over the sample's elements flattened into one dim. The in-place view
# ops' nodes (as ``quantile`` applies them to fresh results): their out-of-place twins' rules.
RULES[_R.prod_all] = lambda op, i, b, p, n: apply(_R.prod_dim, (i[0].reshape(n, -1), 1, False, *p))
RULES[_S.t_inplace] = lambda op, i, b, p, n: NotImplemented if i[0].dim() > 3 else transpose_2d(op, i, b, p, n)
RULES[_S.squeeze_all_inplace] = squeeze_all
RULES[_S.squeeze_dims_inplace] = dims(0, "tuple")
# Reductions over dims, and over every element as over the flattened sample.
for _name in ("median_dim", "nanmedian_dim", "mode", "sort_stable"):
    RULES[getattr(_R, _name)] = dims(0)
for _name in ("kthvalue", "topk"):
    RULES[getattr(_R, _name)] = dims(1)
for _op in (_R.nansum, _R.count_nonzero, _R.all_op, _R.any_op):
    RULES[_op] = dims(0, "tuple", none_is_all=True)
RULES[_R.median_all] = flat_then(_R.median_dim, 0)
RULES[_R.nanmedian_all] = flat_then(_R.nanmedian_dim, 0)
for _op in (_R.argmax, _R.argmin, _R.aminmax):
    RULES[_op] = dim_or_flat
# Elementwise losses, reduced per sample.
RULES[_N.smooth_l1_loss] = pointwise_loss(0)
RULES[_N.huber_loss] = pointwise_loss(0)
RULES[_N.binary_cross_entropy] = pointwise_loss(1)
RULES[_N.binary_cross_entropy_with_logits] = pointwise_loss(2)
RULES[_N.soft_margin_loss] = pointwise_loss(1)
# Norms over dims; flips, rolls, traces; vdot of real vectors is dot.
for _op in (_R.vector_norm, _R.vector_norm_dtype, _N.norm):
    RULES[_op] = dims(1, "tuple", none_is_all=True)
RULES[_R.flip] = dims(0, "tuple")
RULES[_S.roll] = roll
RULES[_L.trace] = trace
# Linear algebra that takes leading dims as batch dims (NumPy's stacks of matrices).
for _op in (_L.inv, _L.det, _L.slogdet_op, _L.matrix_exp_op, _L.cholesky_op, _L.qr_op, _L.svd, _L.eigh_op):
    RULES[_op] = free
RULES[_N.safe_softmax] = dims(0)
RULES[_S.unsafe_split] = dims(1)
RULES[_S.unsafe_split_with_sizes] = dims(1)
RULES[_S.diagonal_copy] = RULES[_S.diagonal]
RULES[_S.rot90] = dims(1, "tuple")
RULES[_S.index_select] = dims(0)
RULES[_S.repeat] = repeat
RULES[_R.dist] = dist
RULES[_L.vdot] = lambda op, i, b, p, n: NotImplemented if i[0].is_complex() or i[1].is_complex() else dot(op, i, b, p, n)
# Rules that take a batched param (BatchedParam); other ops given one run per sample.
PARAM_RULES = frozenset((_N.nll_loss,))

# Average pools, as the max pools: the samples' images folded into the image batch.
for _op, _spatial in ((_C.avg_pool2d, 2), (_C.adaptive_avg_pool2d, 2), (_C.avg_pool3d, 3),
                      (_C.adaptive_avg_pool3d, 3)):
    RULES[_op] = fold_images(_spatial)


def trailing_pad(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """Padding of the trailing dims (constant, reflect, replicate): the batch dim in front is not
    among them while the pad covers no more dims than a sample has."""
    pads = params[0]
    if len(pads) // (1 if op is _C.constant_pad else 2) > inputs[0].dim() - 1:
        return NotImplemented  # (the per-sample error)
    return apply(op, (inputs[0], *params))


RULES[_N.constant_pad_nd] = trailing_pad
RULES[_C.constant_pad] = trailing_pad
for _op in _N.PAD_OPS.values():
    RULES[_op] = trailing_pad


def _batched_index(index: Any, size: int) -> Any:
    """An index param as a batch: a batched one's physical tensor, a shared one expanded (a
    view). Either shares the version of the caller's index, which the op keeps (``versioned=``):
    written before backward, PyTorch's error, naming the batch as PyTorch's does."""
    from ._vmap import BatchedParam
    if type(index) is BatchedParam:
        return index.tensor
    if isinstance(index, Tensor):
        return index.expand(size, *index.shape)
    return np.broadcast_to(index, (size,) + np.shape(index))


def gather_scatter(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``gather``/``scatter``/``scatter_add`` (params ``dim, index, ...``): every tensor and the
    index get the batch dim in front, the dim moves right by one."""
    values = [v if b or not isinstance(v, Tensor) else _expand(v, size) for v, b in zip(inputs, batched)]
    rank = values[0].dim() - 1
    index = _batched_index(params[1], size)
    if rank == 0 or index.ndim != rank + 1:
        return NotImplemented  # (0-d samples, and indices the op refuses: its own error, per sample)
    return apply(op, (*values, _shift(int(params[0]), rank), index, *params[2:]))


def index_select(op: Op, inputs: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    """``index_select`` with a batched index: each sample's rows as a ``gather`` along the dim
    (the index broadcast over the other dims); a shared index: the dims rule."""
    from ._vmap import BatchedParam
    if type(params[1]) is not BatchedParam:
        return _DIM0(op, inputs, batched, params, size)
    x = inputs[0] if batched[0] else _expand(inputs[0], size)
    index = params[1].tensor  # (views of it keep its version: ``_batched_index``)
    rank = x.dim() - 1
    if rank == 0 or index.ndim > 2:
        return NotImplemented  # (the op's own errors, per sample; a float index: gather's, as PyTorch's)
    dim = _shift(int(params[0]), rank)
    index = index.reshape(size, -1)
    along = [1] * (rank + 1)
    along[0], along[dim] = size, index.shape[1]
    shape = list(x.shape)
    shape[dim] = index.shape[1]
    return apply(_S.gather, (x, dim, index.reshape(along).expand(shape)))


for _op in (_S.gather, _S.scatter, _S.scatter_add, _S.scatter_value):
    RULES[_op] = gather_scatter
RULES[_S.index_select] = index_select
PARAM_RULES = PARAM_RULES | {_S.gather, _S.scatter, _S.scatter_add, _S.scatter_value, _S.index_select}
