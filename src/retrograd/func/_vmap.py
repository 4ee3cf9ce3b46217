"""``vmap`` as a batching transform.

Inside ``vmap`` a batched input is a ``BatchedTensor``: a ``Tensor`` whose ``_value`` is the whole
batch (a plain tensor, or under nested ``vmap`` a ``BatchedTensor`` of the enclosing level) with
the batch dimension moved to the front, and whose shape (``.shape``, ``.dim()``, ``.size()``) is
one sample's. Every op reached with one runs once on the whole batch through its batching rule
(``func/_batching.py``): the op dispatch (``ops/op.py``) checks one flag, set only while a ``vmap``
runs. An op without a rule runs once per sample (PyTorch's performance warning says which); code
that reads a batched tensor's array directly (outside the op table) makes the whole function run
once per sample, with the same warning.

Autograd sees only the physical (batched) tensors, so ``grad`` inside ``vmap`` differentiates
the whole batch at once: the samples are independent, so the gradient of the sum of the
per-sample outputs is each sample's own gradient.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops import inplace as _inplace
from ..ops import op as _op
from ..ops.shape import expand as _expand_op
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten, treespec_repr

# The batch size of each running vmap, outermost first; a BatchedTensor's ``_level`` indexes it.
_LEVELS: list[int] = []
_RANDOMNESS: list[str] = []


class Unbatchable(Exception):
    """Raised when code reads a batched tensor's array outside a batching rule: the ``vmap``
    that owns it reruns its function once per sample."""


class _LogicalArray:
    """What a BatchedTensor's ``_data`` is: one sample's shape and dtype, for the code that reads
    them there (dims normalised against ``_data.ndim``); anything else raises ``Unbatchable``."""

    __slots__ = ("shape", "dtype", "ndim", "size", "itemsize", "value", "level")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, value: Tensor, level: int) -> None:
        # An op given this as a param (as nll_loss its target) finds the batch here: the physical
        # tensor and its level, not the BatchedTensor itself, which holds this (a reference cycle
        # would keep every batched result, its graph and its memory alive until the collector runs).
        self.value = value
        self.level = level
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = math.prod(shape)
        self.itemsize = dtype.itemsize

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (protocol probes: copy, inspect)
            raise AttributeError(name)
        raise Unbatchable(name)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise Unbatchable("__array__")

    def __array_ufunc__(self, ufunc: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        raise Unbatchable(getattr(ufunc, "__name__", str(ufunc)))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise Unbatchable(getattr(func, "__name__", str(func)))

    def __getitem__(self, key: Any) -> Any:
        raise Unbatchable("__getitem__")

    def _refuse(self, *args: Any) -> Any:
        raise Unbatchable("an array operator")

    # Operators are looked up on the type, not through ``__getattr__``.
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _refuse
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __neg__ = __pos__ = __abs__ = _refuse
    __invert__ = __iter__ = __float__ = __int__ = __index__ = __bool__ = __contains__ = _refuse
    __hash__ = object.__hash__


class BatchedTensor(Tensor):
    """One sample's view of a batch inside ``vmap`` (see the module's docstring)."""

    __slots__ = ("_value", "_level")
    _value: Tensor
    _level: int

    @staticmethod
    def refuse_forward_ad() -> None:
        """``forward_ad.make_dual`` called directly on a batched tensor: the ``vmap`` reruns its
        function once per sample (values exact, PyTorch's warning). ``func.jvp`` does not come
        here: it makes the dual of the physical tensors, so tangents batch like primals."""
        raise Unbatchable("forward-mode AD (make_dual) of a batched tensor")

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._level + 1}, bdim=0, value=\n{self._value!r}\n)"

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        raise RuntimeError("vmap: setting requires_grad on a batched tensor inside vmap is not supported")

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return True

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return self

    def detach(self) -> Tensor:
        return wrap(self._value.detach(), self._level)

    def item(self) -> Any:
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                           "bug report.")

    def __bool__(self) -> bool:
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please file an issue at "
                           "https://github.com/pytorch/pytorch/issues .")

    def reshape(self, *shape: Any) -> Tensor:
        size = _resolve_shape(shape, self._data.size)
        return wrap(self._value.reshape((_LEVELS[self._level],) + size), self._level)

    def __getitem__(self, key: Any) -> Tensor:
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if not (k is None or k is Ellipsis or isinstance(k, (int, slice))) or isinstance(k, bool):
                raise Unbatchable("__getitem__")
        return wrap(self._value[(slice(None),) + keys], self._level)

    def as_strided(self, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
        """PyTorch's batching rule: each sample's view of the storage is shifted by the batch
        dimension's stride, as if the sample were ``as_strided`` alone in its own memory; a view
        reaching outside what the sample itself can reach is refused (PyTorch's error)."""
        return _as_strided(self, size, stride, storage_offset)

    as_strided_batched = as_strided  # (what ``retrograd.as_strided`` calls for a batched tensor)

    # The in-place view ops: PyTorch's batching rules run the same op in place on the physical
    # tensor (dims one place to the right), so the batch itself changes shape, as in PyTorch.
    def t_(self) -> Tensor:
        if self._data.ndim > 2:
            raise Unbatchable("t_")  # (the per-sample rerun raises PyTorch's error)
        return self._physical_view("transpose_", (1, 2) if self._data.ndim == 2 else None)

    def transpose_(self, dim0: Any, dim1: Any) -> Tensor:
        from ..ops.reduce import normalize_dim
        ndim = self._data.ndim
        d0, d1 = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)
        return self._physical_view("transpose_", (d0 + 1, d1 + 1) if ndim else None)

    swapaxes_ = swapdims_ = transpose_

    def squeeze_(self, dim: Any = None) -> Tensor:
        from ..ops.shape import normalize_dim_list
        shape = self._data.shape
        if dim is None:
            dims: tuple[int, ...] = tuple(i for i, s in enumerate(shape) if s == 1)
        else:
            dims = normalize_dim_list(tuple(dim) if isinstance(dim, (tuple, list)) else (dim,), len(shape))
            dims = tuple(d for d in dims if shape and shape[d] == 1)
        return self._physical_view("squeeze_", (tuple(d + 1 for d in dims),) if dims else None)

    def unsqueeze_(self, dim: Any) -> Tensor:
        from ..ops.reduce import normalize_dim
        return self._physical_view("unsqueeze_", (normalize_dim(dim, self._data.ndim + 1) + 1,))

    def _physical_view(self, name: str, args: tuple[Any, ...] | None) -> Tensor:
        """Run the in-place view ``name(*args)`` on the physical tensor (``None``: nothing to
        change) and give this tensor the sample shape that results."""
        if args is not None:
            getattr(self._value, name)(*args)
            self._data = _LogicalArray(tuple(self._value.shape)[1:], self._data.dtype, self._value,  # type: ignore[assignment]
                                       self._level)
        return self

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("backward() called inside a functorch transform. This is not supported, please use "
                           "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
                           "transforms.")


def _as_strided(t: BatchedTensor, size: Any, stride: Any, storage_offset: Any) -> Tensor:
    from .._functions import as_strided
    from ..ops.strided import _int_tuple, storage_of
    size = _int_tuple(size, "as_strided", "size", 1)
    stride = _int_tuple(stride, "as_strided", "stride", 2)
    depth, physical = 0, t._value
    while type(physical) is BatchedTensor:
        depth += 1
        physical = physical._value
    depth += 1  # (the sample's dims follow every batch dim)
    data = physical._data
    item = data.itemsize
    offset = storage_of(data)[1]  # the first sample's own offset
    if (storage_offset is not None and isinstance(storage_offset, int) and len(size) == len(stride)
            and math.prod(size) and data.size):
        reach = sum((n - 1) * s for n, s in zip(size, stride)) + 1
        own = sum((n - 1) * abs(s) // item for n, s in zip(data.shape[depth:], data.strides[depth:])) + 1
        if storage_offset < offset or storage_offset + reach > offset + own:
            raise RuntimeError(
                f"result = tensor.as_strided({list(size)}, {list(stride)}, {storage_offset}) can access memory "
                f"outside of `tensor`. `result` can access some memory in range [{storage_offset}, "
                f"{storage_offset + reach}], but `tensor` can only access some memory in range [{offset}, "
                f"{offset + own}]. This is not supported inside of vmap, please try to rewrite the `as_strided` "
                "call as a sequence of PyTorch view operations")
    batch_stride = data.strides[depth - 1] // item
    return wrap(as_strided(t._value, (_LEVELS[t._level],) + size, (batch_stride,) + stride, storage_offset), t._level)


def _resolve_shape(shape: Any, numel: int) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    size = tuple(int(s) for s in shape)
    if -1 in size:
        known = int(np.prod([s for s in size if s != -1], dtype=np.int64))
        size = tuple(numel // known if s == -1 and known else s for s in size)
    return size


def wrap(value: Tensor, level: int) -> BatchedTensor:
    """``value`` (batch dimension first) as a BatchedTensor of ``level``."""
    t = object.__new__(BatchedTensor)
    data = value._data  # (an array, or under nested vmap the enclosing level's _LogicalArray)
    t._data = _LogicalArray(tuple(data.shape[1:]), data.dtype, value, level)  # type: ignore[assignment]
    t._requires_grad = False
    t._grad_fn = None
    t._value = value
    t._level = level
    return t


def _levels_of(t: Any) -> list[int]:
    levels = []
    while type(t) is BatchedTensor:
        levels.append(t._level)
        t = t._value
    return levels


def levels_of(t: Any) -> list[int]:
    """The vmap levels ``t`` is batched at, innermost wrapper last (outermost level first).

    >>> levels_of(object())
    []
    """
    return _levels_of(t)


def materialize(t: Tensor, levels: list[int]) -> Tensor:
    """``t`` batched at each of ``levels`` (ascending), expanding where it is not: the physical
    tensor, with those batch dimensions first in order."""
    if levels and type(t) is not BatchedTensor:  # batched at none of them: one expand, the sizes in front
        return _op.apply(_expand_op, (t, tuple(_LEVELS[level] for level in levels) + tuple(t._data.shape)))
    present = _levels_of(t)
    physical = t
    while type(physical) is BatchedTensor:
        physical = physical._value
    for i, level in enumerate(levels):
        if level not in present:
            physical = physical.unsqueeze(i)
            size = list(physical.shape)
            size[i] = _LEVELS[level]
            physical = physical.expand(size)
    return physical


def rewrap(physical: Tensor, levels: list[int]) -> Tensor:
    for level in levels:
        physical = wrap(physical, level)
    return physical


def active_levels() -> list[int]:
    return list(range(len(_LEVELS)))


def lift(t: Tensor) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
    """For the reverse-mode transforms: the physical tensor autograd differentiates (``t``
    batched at every running level) and the function that turns such a tensor back into what
    the transformed function sees."""
    if not _LEVELS:
        return t, _identity
    levels = active_levels()
    return materialize(t, levels), functools.partial(rewrap, levels=levels)


def _identity(t: Tensor) -> Tensor:
    return t


def full_physical(t: Tensor, levels: list[int] | None = None) -> Tensor:
    return materialize(t, active_levels() if levels is None else levels)


def extra_levels(tensors: list[Tensor], others: list[Tensor]) -> list[int]:
    """Levels some of ``tensors`` are batched at that none of ``others`` is."""
    seen = {lv for t in others for lv in _levels_of(t)}
    return sorted({lv for t in tensors for lv in _levels_of(t)} - seen)


def loop_over(levels: list[int], fn: Callable[..., Any], tensors: list[Tensor]) -> Any:
    """``fn(*tensors)`` once per sample of the highest of ``levels``, the results stacked."""
    from .. import stack
    level = levels[-1]
    size = _LEVELS[level]
    values = [t._value if type(t) is BatchedTensor and t._level == level else t for t in tensors]
    batched = [type(t) is BatchedTensor and t._level == level for t in tensors]
    results = []
    for i in range(size):
        results.append(fn(*[v.select(0, i) if b else v for v, b in zip(values, batched)]))
    leaves = [tree_flatten(r)[0] for r in results]
    spec = tree_flatten(results[0])[1]
    stacked = [wrap(stack([r[k] for r in leaves]), level) for k in range(len(leaves[0]))]
    return tree_unflatten(stacked, spec)


# -- dispatch ------------------------------------------------------------------------------------

FALLBACK_MESSAGE = ("There is a performance drop because we have not yet implemented the batching rule for {}. "
                    "Please file us an issue on GitHub so that we can prioritize its implementation.")


def batched_apply(op: Any, args: tuple[Any, ...]) -> Any:
    """Run ``op`` on arguments some of which are BatchedTensors: its batching rule on the
    physical tensors of the innermost level among them, or a loop over that level's samples."""
    rules, param_rules, random_ops = _TABLES or _load_tables()
    n = len(args) - len(op.params) if op.variadic else op.n_inputs
    inputs, params = args[:n], args[n:]
    has_param_batch = False
    for p in params:
        kind = type(p)
        if kind is BatchedTensor:
            raise Unbatchable(op.name)
        if kind is _LogicalArray or kind is BatchedParam:  # a batched array given as a param (a target)
            has_param_batch = True
    level = max(x._level for x in inputs if type(x) is BatchedTensor)
    if has_param_batch:
        params = tuple(_batched_param(p, level) for p in params)
    if op in random_ops and _RANDOMNESS[level] == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    values, batched = [], []
    for x in inputs:
        if type(x) is BatchedTensor and x._level == level:
            values.append(x._value)
            batched.append(True)
        else:
            values.append(x)
            batched.append(False)
    rule = rules.get(op)
    if has_param_batch and op not in param_rules:
        rule = None
    out = NotImplemented if rule is None else rule(op, values, batched, params, _LEVELS[level])
    if out is NotImplemented:
        warnings.warn(FALLBACK_MESSAGE.format(f"aten::{op.name}"), UserWarning, stacklevel=3)
        out = _per_sample(op, values, batched, params, _LEVELS[level])
    if isinstance(out, Tensor):
        return wrap(out, level)
    return type(out)(wrap(o, level) if isinstance(o, Tensor) else o for o in out)


# The batching table (RULES, PARAM_RULES, RANDOM_OPS), loaded on the first batched op: importing
# it builds the table, which ``grad`` alone does not need.
_TABLES: tuple[Any, Any, Any] | None = None


def _load_tables() -> tuple[Any, Any, Any]:
    global _TABLES
    from ._batching import PARAM_RULES, RANDOM_OPS, RULES
    _TABLES = (RULES, PARAM_RULES, RANDOM_OPS)
    return _TABLES


def batched_apply_inplace(op: Any, args: tuple[Any, ...]) -> Any:
    """``op`` in place on ``args[0]`` where some arguments are BatchedTensors: an elementwise op
    runs in place on the physical tensors of the innermost level among them, as PyTorch's
    batching rule for in-place arithmetic: every batched input padded with singleton dims after
    its batch dim up to the widest sample, so that the batch dims line up (a written-to tensor
    whose padded shape is not the broadcast shape gets the in-place op's own shape error, in
    physical shapes, as PyTorch's). Other ops, and a written-to tensor that is not batched, rerun
    the function once per sample."""
    from ..ops.inplace import apply_inplace
    from ._batching import RULES, elementwise
    n = op.n_inputs
    inputs, params = args[:n], args[n:]
    level = max(x._level for x in args if type(x) is BatchedTensor)
    self = inputs[0]
    if not (type(self) is BatchedTensor and self._level == level):
        # The written-to tensor is not batched, another input is: PyTorch refuses (its error depends
        # on the op), but library code writes batched values into fresh buffers this way (circular
        # padding): the function reruns once per sample, as before.
        raise Unbatchable(op.name + "_")
    if RULES.get(op) is not elementwise or any(type(p) is BatchedTensor for p in params):
        raise Unbatchable(op.name + "_")
    rank = max(x.dim() if isinstance(x, Tensor) else 0 for x in inputs)
    values = []
    for x in inputs:
        if type(x) is BatchedTensor and x._level == level:
            v = x._value
            have = v.dim() - 1
            if have < rank:
                shape = tuple(v.shape)
                v = v.reshape(shape[:1] + (1,) * (rank - have) + shape[1:])
            values.append(v)
        else:
            values.append(x)
    apply_inplace(op, (*values, *params))
    return inputs[0]


class BatchedParam:
    """A param holding a batch of arrays (batch dimension first): a batched tensor given to an
    op as a param (``nll_loss``'s target). ``tensor`` is the physical tensor whose data ``array``
    is, for an op that keeps the param with its version (``versioned=``), as PyTorch's keeps it."""

    __slots__ = ("array", "tensor")

    def __init__(self, array: np.ndarray, tensor: Tensor) -> None:
        self.array = array
        self.tensor = tensor


def _batched_param(p: Any, level: int) -> Any:
    if type(p) is not _LogicalArray:
        return p
    if p.level != level or type(p.value) is BatchedTensor:
        raise Unbatchable("a batched param")
    return BatchedParam(p.value._data, p.value)


def _per_sample(op: Any, values: list[Any], batched: list[bool], params: tuple[Any, ...], size: int) -> Any:
    from .. import stack
    versioned = op.versioned_params or ()  # (those take each sample's tensor, a view: kept with its version)
    outs = [_op.apply(op, (*[v.select(0, i) if b else v for v, b in zip(values, batched)],
                           *[(p.tensor.select(0, i) if k in versioned else p.array[i]) if type(p) is BatchedParam
                             else p for k, p in enumerate(params)]))
            for i in range(size)]
    if isinstance(outs[0], Tensor):
        return stack(outs)
    return tuple(stack([o[k] for o in outs]) for k in range(len(outs[0])))


RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                    "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def random_factory(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A random factory (``randn``, ``rand_like``...) called inside ``vmap``: under
    ``randomness='different'`` one draw per sample of each such level, in one call of the
    factory with the batch sizes in front (PyTorch's numbers for the same seed); under
    ``'same'`` one draw shared by the batch; ``'error'`` refuses in the generator itself."""
    if "error" in _RANDOMNESS:  # (also with an explicit generator, which the guard does not cover)
        raise RuntimeError(RANDOMNESS_ERROR)
    levels = [lv for lv in active_levels() if _RANDOMNESS[lv] == "different"]
    if not levels:
        return factory(*args, **kwargs)
    batch = tuple(_LEVELS[lv] for lv in levels)
    name = factory.__name__
    if name == "randperm":  # (no batched form: one permutation per sample, in order)
        from .. import stack
        draws = [factory(*args, **kwargs) for _ in range(math.prod(batch))]
        return rewrap(stack(draws).reshape(batch + tuple(draws[0].shape)), levels)
    new_args, new_kwargs = list(args), dict(kwargs)
    if name in ("rand", "randn") and "size" not in new_kwargs:  # (size= keyword: the branch below)
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        new_args = [batch + tuple(shape)]
    elif name.endswith("_like"):
        from .. import empty
        source = new_kwargs.pop("input") if "input" in new_kwargs else new_args.pop(0)
        if not isinstance(source, Tensor):
            return factory(*args, **kwargs)  # (the factory's own error)
        new_args.insert(0, empty(batch + tuple(source.shape), dtype=source.dtype))
    elif isinstance(new_kwargs.get("size"), (tuple, list)):
        new_kwargs["size"] = batch + tuple(new_kwargs["size"])
    else:  # randint(low, high, size) / randint(high, size) / normal(mean, std, size): the size is a tuple
        sizes = [i for i, a in enumerate(args) if isinstance(a, (tuple, list))]
        if not sizes:
            return factory(*args, **kwargs)  # (normal of tensors: its own path; a bad call: its error)
        new_args[sizes[-1]] = batch + tuple(args[sizes[-1]])
    return rewrap(factory(*new_args, **new_kwargs), levels)


class _NoDraws:
    """Stands in for the default generator's engine while a ``vmap(randomness='error')`` runs:
    every draw (``randn``, ``dropout``, ``bernoulli``...) goes through it and is refused."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (protocol probes: copy, inspect)
            raise AttributeError(name)
        raise RuntimeError(RANDOMNESS_ERROR)


_NO_DRAWS = _NoDraws()
_SAVED_STREAM: list[Any] = []  # the engine put aside while the guard is in


def _guard_randomness(on: bool) -> None:
    if on == bool(_SAVED_STREAM):  # (nothing to change: no import, as on every call of vmap)
        return
    from ..random import default_generator
    if on and not _SAVED_STREAM:
        _SAVED_STREAM.append(default_generator._stream)
        default_generator._stream = _NO_DRAWS  # type: ignore[assignment]
    elif not on and _SAVED_STREAM:
        default_generator._stream = _SAVED_STREAM.pop()


def _enter(size: int, randomness: str) -> int:
    _LEVELS.append(size)
    _RANDOMNESS.append(randomness)
    _op._BATCHING = True
    _guard_randomness("error" in _RANDOMNESS)
    return len(_LEVELS) - 1


def _exit() -> None:
    _LEVELS.pop()
    _RANDOMNESS.pop()
    _op._BATCHING = bool(_LEVELS)
    _guard_randomness("error" in _RANDOMNESS)


_op._BatchedTensor = BatchedTensor
_op._batched_apply = batched_apply
_inplace._batched_apply_inplace = batched_apply_inplace


# -- vmap ----------------------------------------------------------------------------------------

def _name(func: Any) -> str:
    return getattr(func, "__name__", repr(func))


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` mapped over a dimension of its inputs (``in_dims``: an int, or a tuple/dict
    structure matching the arguments, ``None`` for arguments not mapped), its outputs stacked
    along ``out_dims``, as ``torch.vmap``. Each op runs once on the whole batch (see the module's
    docstring); ``chunk_size`` limits how many samples run at once; ``randomness`` is
    ``'error'``, ``'different'`` or ``'same'``.

    >>> import retrograd as rg
    >>> vmap(lambda row: row.dot(rg.tensor([1.0, 10.0])))(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([21., 43.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims_type(func, out_dims)

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        flat_args, args_spec = tree_flatten(args)
        flat_dims = _flat_in_dims(func, in_dims, args, args_spec)
        size = _batch_size(func, in_dims, flat_args, flat_dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_dims, args_spec, kwargs, size, out_dims, randomness)
        from .. import cat
        pieces = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            part = [a.narrow(d, start, stop - start) if d is not None else a for a, d in zip(flat_args, flat_dims)]
            pieces.append(_run(func, part, flat_dims, args_spec, kwargs, stop - start, out_dims, randomness))
        out_leaves = [tree_flatten(p)[0] for p in pieces]
        out_spec = tree_flatten(pieces[0])[1]
        dims = _flat_out_dims(func, out_dims, out_spec, len(out_leaves[0]))
        joined = [cat([p[k] for p in out_leaves], dim=d) if d is not None else out_leaves[0][k]
                  for k, d in enumerate(dims)]
        return tree_unflatten(joined, out_spec)

    return wrapped


def _check_out_dims_type(func: Any, out_dims: Any) -> None:
    leaves = tree_flatten(out_dims)[0] if isinstance(out_dims, (tuple, list, dict)) else [out_dims]
    if not all(d is None or (isinstance(d, int) and not isinstance(d, bool)) for d in leaves):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                         "python collection of ints representing where in the outputs the vmapped dimension "
                         "should appear.")


def _flat_in_dims(func: Any, in_dims: Any, args: tuple[Any, ...], args_spec: Any) -> list[Any]:
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        return [in_dims] * _n_leaves(args_spec)
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
                         "a (potentially nested) tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                         f"the structure of `inputs`. in_dims has structure {treespec_repr(tree_flatten(in_dims)[1])} "
                         f"but inputs has structure {treespec_repr(args_spec)}.")
    flat: list[Any] = []
    for dim, spec in zip(in_dims, args_spec[2]):  # (each argument's spec: counted, not flattened again)
        if dim is None or isinstance(dim, int):
            flat += [dim] * _n_leaves(spec)
            continue
        dim_leaves, dim_spec = tree_flatten(dim)
        if dim_spec != spec:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                             f"with the structure of `inputs`. in_dims has structure "
                             f"{treespec_repr(tree_flatten(in_dims)[1])} but inputs has structure "
                             f"{treespec_repr(args_spec)}.")
        flat += dim_leaves
    return flat


def _batch_size(func: Any, in_dims: Any, flat_args: list[Any], flat_dims: list[Any]) -> int:
    if not flat_args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    sizes = []
    for arg, dim in zip(flat_args, flat_dims):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims must be int or None "
                             f"for each input, got {dim}")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                             f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        n = arg.dim()
        if not -n <= dim < n:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some "
                             f"input, but that input is a Tensor of dimensionality {n} so expected in_dim to "
                             f"satisfy -{n} <= in_dim < {n}.")
        sizes.append(arg._data.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be "
                         "batched (in_dims must not be all None)")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return int(sizes[0])


def _flat_out_dims(func: Any, out_dims: Any, out_spec: Any, n: int) -> list[Any]:
    """One out_dim per output leaf: an int or None for all, or a tuple with one per output."""
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * n
    if out_spec is None or out_spec[0] not in (tuple, list) or len(out_dims) != len(out_spec[2]):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {treespec_repr(tree_flatten(out_dims)[1])}"
                         f" but outputs has structure {treespec_repr(out_spec)}.")
    flat: list[Any] = []
    for d, child in zip(out_dims, out_spec[2]):
        flat += [d] * _n_leaves(child) if d is None or isinstance(d, int) else tree_flatten(d)[0]
    return flat


def _n_leaves(spec: Any) -> int:
    count, stack = 0, [spec]
    while stack:
        s = stack.pop()
        if s is None:
            count += 1
        else:
            stack += s[2]
    return count


def _run(func: Any, flat_args: list[Any], flat_dims: list[Any], args_spec: Any, kwargs: dict[str, Any], size: int,
         out_dims: Any, randomness: str) -> Any:
    level = _enter(size, randomness)
    try:
        try:
            inner = [wrap(a.movedim(d, 0) if d % max(a.dim(), 1) else a, level) if d is not None else a
                     for a, d in zip(flat_args, flat_dims)]
            out = func(*tree_unflatten(inner, args_spec), **kwargs)
            return _unwrap_outputs(func, out, out_dims, level, size)
        except Unbatchable as err:
            reason = str(err)
    finally:
        _exit()
    warnings.warn(FALLBACK_MESSAGE.format(reason), UserWarning, stacklevel=3)
    guarded = randomness == "error" and not _SAVED_STREAM
    if guarded:
        _guard_randomness(True)
    try:
        return _loop(func, flat_args, flat_dims, args_spec, kwargs, size, out_dims, randomness)
    finally:
        if guarded:
            _guard_randomness(False)


def _unwrap_outputs(func: Any, out: Any, out_dims: Any, level: int, size: int) -> Any:
    leaves, spec = tree_flatten(out)
    dims = _flat_out_dims(func, out_dims, spec, len(leaves))
    result = []
    for leaf, d in zip(leaves, dims):
        if not isinstance(leaf, Tensor):
            if d is None:
                result.append(leaf)
                continue
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
        batched = type(leaf) is BatchedTensor and leaf._level == level
        if d is None:
            if batched:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                 "out_dim is None")
            result.append(leaf)
            continue
        value = leaf._value if batched else leaf.unsqueeze(0).expand(size, *leaf.shape)  # type: ignore[attr-defined]
        result.append(value.movedim(0, d) if d != 0 else value)
    return tree_unflatten(result, spec)


def _loop(func: Any, flat_args: list[Any], flat_dims: list[Any], args_spec: Any, kwargs: dict[str, Any], size: int,
          out_dims: Any, randomness: str) -> Any:
    """The whole function once per sample, its outputs stacked (the fallback); under
    ``randomness='same'`` each sample starts from the same generator state."""
    from .. import stack
    from ..random import default_generator
    state = default_generator.get_state() if randomness == "same" else None
    outs = []
    for i in range(size):
        if state is not None:
            default_generator.set_state(state)
        sample = [a.select(d, i) if d is not None else a for a, d in zip(flat_args, flat_dims)]
        outs.append(func(*tree_unflatten(sample, args_spec), **kwargs))
    leaves = [tree_flatten(o)[0] for o in outs]
    spec = tree_flatten(outs[0])[1]
    dims = _flat_out_dims(func, out_dims, spec, len(leaves[0]))
    result = []
    for k, d in enumerate(dims):
        if d is None:
            result.append(leaves[0][k])
        elif not isinstance(leaves[0][k], Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(leaves[0][k])}. Did you mean to set out_dims= to None for output?")
        else:
            result.append(stack([lv[k] for lv in leaves], dim=d))
    return tree_unflatten(result, spec)


__all__ = ["BatchedTensor", "vmap"]
