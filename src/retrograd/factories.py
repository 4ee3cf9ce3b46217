"""Creating tensors: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``full``/``empty``
(and ``*_like``), ``arange``, ``linspace``, ``eye``, and random tensors from retrograd's own
generator (``manual_seed``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._dtype import _promote_pair, default_complex, from_numpy_dtype, get_default_dtype, scalar_type_name, to_dtype
from .autograd.anomaly_mode import ANOMALY, note_origin
from .autograd.fp_errors import quiet_forward
from .autograd.grad_mode import STATE
from .random import Generator, default_generator, initial_seed, manual_seed, seed  # noqa: F401 - re-exported
from .tensor import Tensor, _sizes, device


def _finish(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data)
    if STATE.inference:
        t._is_inference = True
    if ANOMALY[0]:  # creation sites are recorded (record_sites, anomaly mode)
        t._origin = note_origin("factory")
    if requires_grad:
        if data.dtype.kind not in "fc":  # the factories' wording differs from requires_grad_()'s
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_()
    return t


def _size_args(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and not isinstance(size[0], (tuple, list)):
        if not _int_like(size[0], True):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size[0])}")
    else:
        _check_int_items(name, size[0] if len(size) == 1 else size, 1)
    return _nonnegative(_sizes(size), name)


def _type_name(value: Any) -> str:
    kind = type(value)
    if isinstance(value, Tensor) or kind.__module__ == "builtins":
        return "Tensor" if isinstance(value, Tensor) else kind.__name__
    return f"{kind.__module__.split('.')[0]}.{kind.__name__}"


def _int_like(value: Any, first: bool) -> bool:
    """What PyTorch's argument parser takes as one entry of a size (a bool only after the first)."""
    if isinstance(value, bool):
        return not first
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, Tensor) and value._data.dtype.kind in "iu" and value._data.size == 1


def _check_int_items(name: str, items: Any, position: int) -> None:
    """PyTorch's TypeError for a size with a non-integer entry (NumPy would truncate 2.5 to 2)."""
    for i, v in enumerate(items):
        if not _int_like(v, i == 0):
            if i == 0:
                raise TypeError(f"{name}(): argument 'size' (position {position}) must be tuple of ints, but found "
                                f"element of type {_type_name(v)} at pos 0")
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f'"type must be tuple of ints,but got {_type_name(v)}"')


def _check_number(name: str, value: Any) -> None:
    if not isinstance(value, (int, float, complex, np.number, np.bool_, Tensor)):
        raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not {_type_name(value)}")


def _nonnegative(shape: tuple[int, ...], name: str = "") -> tuple[int, ...]:
    """``shape`` itself, or PyTorch's error for a negative size (not NumPy's ValueError)."""
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _check_nested(data: Any) -> None:
    """Raise PyTorch's error for data that NumPy could not turn into a regular array: ragged nested
    sequences, a sequence where a number belongs (or the reverse), strings, ints beyond int64."""
    shape = []
    first = data
    while isinstance(first, (list, tuple)) or isinstance(first, np.ndarray) and first.ndim:
        shape.append(len(first))
        if not len(first):
            break
        first = first[0]
    stack = [(data, 0)]
    is_float = False
    while stack:  # iterative: nesting depth is the user's
        item, dim = stack.pop()
        if isinstance(item, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        is_seq = isinstance(item, (list, tuple)) or isinstance(item, np.ndarray) and item.ndim > 0
        if dim < len(shape):
            if not is_seq:
                raise TypeError("not a sequence")
            if len(item) != shape[dim]:
                raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(item)})")
            stack.extend((v, dim + 1) for v in reversed(list(item)))
        elif is_seq:
            kind = "'list' object cannot be interpreted as an integer" if not is_float else \
                f"must be real number, not {type(item).__name__}"
            raise TypeError(kind)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and not -2**63 <= item < 2**63:
            raise ValueError("Overflow when unpacking long long")
        elif isinstance(item, (float, np.floating)):
            is_float = True
        elif not isinstance(item, (int, complex, np.generic, np.ndarray)):
            raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def _check_device(dev: Any) -> None:
    if dev is not None:
        device(dev)


def _infer_np_dtype(data: Any) -> np.dtype:
    """PyTorch's inference for Python data: bool -> bool, int -> int64, float -> default dtype."""
    arr = np.asarray(data)
    kind = arr.dtype.kind
    if kind == "b":
        return np.dtype(np.bool_)
    if kind in "iu":
        return np.dtype(np.int64)
    if kind == "f":
        return get_default_dtype().np
    if kind == "c":
        return default_complex().np
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


_PY_NUMBERS = frozenset({bool, int, float})


def _leaf_kinds(data: Any, found: set[Any]) -> None:
    """Collect the Python number types and NumPy dtypes of the leaves of nested data (one C-level
    pass per list of numbers)."""
    if isinstance(data, (list, tuple)):
        types = set(map(type, data))
        if types <= _PY_NUMBERS:
            found |= types
            return
        for item in data:
            _leaf_kinds(item, found)
    elif isinstance(data, (np.ndarray, np.generic)):
        found.add(data.dtype)
    else:
        found.add(type(data))


def _infer_leaf_dtype(data: Any) -> np.dtype | None:
    """PyTorch's dtype for nested data from its leaves: Python bools, ints and floats give bool,
    int64 and the default dtype; NumPy scalars and arrays keep their own dtype
    (``tensor(np.int32(3))`` is int32); the leaves promote as tensors do. ``None`` for a leaf that
    is no number (NumPy's conversion then reports it)."""
    found: set[Any] = {type(data)}
    if found <= _PY_NUMBERS:  # a Python number
        pass
    else:
        found = set()
        _leaf_kinds(data, found)
    if found <= _PY_NUMBERS:  # the common case, without a trial conversion by NumPy
        if float in found or not found:
            return get_default_dtype().np
        return np.dtype(np.int64) if int in found else np.dtype(np.bool_)
    result: np.dtype | None = None
    for kind in found:
        if kind is float:
            dt = get_default_dtype().np
        elif kind is int:
            dt = np.dtype(np.int64)
        elif kind is bool:
            dt = np.dtype(np.bool_)
        elif kind is complex:
            dt = default_complex().np
        elif isinstance(kind, np.dtype):
            dt = from_numpy_dtype(kind).np
        else:
            return None  # not a number: NumPy's conversion reports it
        result = dt if result is None else _promote_pair(result, dt)
    return result


def _plain(data: Any) -> Any:
    """Replace tensors inside nested lists by their values."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors).

    >>> import retrograd as rg
    >>> rg.tensor([[1, 2], [3, 4]]).dtype
    torch.int64
    >>> rg.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    _check_device(device)
    if isinstance(data, Tensor):
        arr = np.array(data._data, copy=True)
    elif isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        from_numpy_dtype(arr.dtype)
    else:
        plain = _plain(data)
        try:
            if dtype is None:
                inferred = _infer_leaf_dtype(plain)
                arr = _quiet_array(plain, _infer_np_dtype(plain) if inferred is None else inferred)
            else:
                arr = np.array(plain)
                if arr.dtype.kind in "fuO" and to_dtype(dtype).np.kind in "iu":
                    _check_int64_items(plain)
        except (ValueError, TypeError, OverflowError, RuntimeError):
            _check_nested(plain)  # PyTorch's error where it has one
            raise
    if dtype is not None:
        arr = _quiet_array(arr, to_dtype(dtype).np)
    out = _finish(arr, requires_grad)
    if isinstance(data, Tensor) and not requires_grad:  # a copy that leaves the source's graph behind
        out._origin = note_origin("tensor_copy", data) if ANOMALY[0] else "tensor_copy"
    return out


def _check_int64_items(plain: Any) -> None:
    """PyTorch's ValueError for a Python int beyond int64 in data for an integer dtype (walked
    without recursion: only when NumPy did not make the data an int64 array)."""
    stack = [plain]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif type(item) is int and not -(1 << 63) <= item < 1 << 63:
            raise ValueError("Overflow when unpacking long long")


@quiet_forward
def _quiet_array(data: Any, dtype: Any) -> np.ndarray:
    """``data`` as an array of ``dtype`` (no copy of an array already of it); a number beyond the
    dtype's range becomes inf, as in PyTorch, without NumPy's overflow warning."""
    return data.astype(dtype, copy=False) if isinstance(data, np.ndarray) else np.array(data, dtype=dtype)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when the dtype allows.

    >>> import numpy as np, retrograd as rg
    >>> a = np.zeros(2); t = rg.as_tensor(a); a[0] = 5; t[0].item()
    5.0
    """
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or to_dtype(dtype).np == data.dtype):
        from_numpy_dtype(data.dtype)
        return _finish(data, False)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``.

    >>> import numpy as np, retrograd as rg
    >>> rg.from_numpy(np.arange(3)).dtype
    torch.int64
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    from_numpy_dtype(array.dtype)
    return _finish(array, False)


def _factory_dtype(dtype: Any, default: Any = None) -> np.dtype:
    if dtype is not None:
        return to_dtype(dtype).np
    return default if default is not None else get_default_dtype().np


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """A tensor of zeros.

    >>> import retrograd as rg
    >>> rg.zeros(2, 2).shape
    torch.Size([2, 2])
    """
    _check_device(device)
    return _finish(np.zeros(_size_args("zeros", size), _factory_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """A tensor of ones.

    >>> import retrograd as rg
    >>> rg.ones(3).tolist()
    [1.0, 1.0, 1.0]
    """
    _check_device(device)
    return _finish(np.ones(_size_args("ones", size), _factory_dtype(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """An uninitialised tensor (zero-filled here, for reproducibility).

    >>> import retrograd as rg
    >>> rg.empty(2).shape
    torch.Size([2])
    """
    _check_device(device)
    return _finish(np.zeros(_size_args("empty", size), _factory_dtype(dtype)), requires_grad)


def _scalar_np_dtype(value: Any) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    return get_default_dtype().np


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype inferred from the value, as in PyTorch).

    >>> import retrograd as rg
    >>> rg.full((2,), 7).tolist()
    [7, 7]
    """
    _check_device(device)
    if isinstance(size, (tuple, list)):
        _check_int_items("full", size, 1)
    _check_number("full", fill_value)
    if type(fill_value) is int:
        from .ops.op import check_int_scalar

        if not -(1 << 63) <= fill_value < 1 << 64:
            check_int_scalar(fill_value)  # PyTorch's OverflowError
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    np_dtype = _factory_dtype(dtype, _scalar_np_dtype(fill_value))
    return _finish(np.full(_nonnegative(_sizes((size,))), fill_value, np_dtype), requires_grad)


def _like(t: Tensor, dtype: Any) -> np.dtype:
    return to_dtype(dtype).np if dtype is not None else t._data.dtype


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
               memory_format: Any = None) -> Tensor:
    """Zeros with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.zeros_like(rg.ones(2)).tolist()
    [0.0, 0.0]
    """
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
              memory_format: Any = None) -> Tensor:
    """Ones with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.ones_like(rg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return _finish(np.ones(input._data.shape, _like(input, dtype)), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
               memory_format: Any = None) -> Tensor:
    """An uninitialised (zero-filled) tensor like ``input``."""
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """``fill_value`` with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.full_like(rg.zeros(2), 3.0).tolist()
    [3.0, 3.0]
    """
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for ints, else the default float.

    >>> import retrograd as rg
    >>> rg.arange(4).tolist(), rg.arange(0, 1, 0.5).tolist()
    ([0, 1, 2, 3], [0.0, 0.5])
    """
    _check_device(device)
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if values[2] == 0 or values[2] != values[2]:
        raise RuntimeError("step must be nonzero")
    if not all(np.isfinite(values[:2])):
        raise RuntimeError(f"unsupported range: {_cpp(values[0])} -> {_cpp(values[1])}")
    if abs((values[1] - values[0]) / values[2]) >= 2**63:
        raise RuntimeError("invalid size, possible overflow?")
    if (values[1] - values[0]) * values[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    is_int = all(isinstance(v, (int, np.integer)) for v in values)  # bools too (PyTorch: int64)
    np_dtype = _factory_dtype(dtype, np.dtype(np.int64) if is_int else None)
    count = max(int(np.ceil((values[1] - values[0]) / values[2])), 0)
    data = (values[0] + np.arange(count, dtype=np.float64 if not is_int else np.int64) * values[2]).astype(np_dtype)
    return _finish(data, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import retrograd as rg
    >>> rg.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    _check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_factory_dtype(dtype)), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The identity matrix.

    >>> import retrograd as rg
    >>> rg.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_device(device)
    for arg, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{arg} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_factory_dtype(dtype)), requires_grad)


# -- random -----------------------------------------------------------------------------------


def _fresh_seed() -> int:
    from .random import _fresh_seed as fresh

    return fresh()


def _rng(generator: Generator | None) -> Any:
    """The PyTorch-compatible engine behind ``generator`` (the default generator's for None)."""
    from ._sampling import stream

    return stream(generator)


def _cpp(value: Any) -> str:
    """A number as PyTorch's C++ messages print it (``0``, ``-0.5``, ``inf``, ``1e+20``)."""
    return str(value) if isinstance(value, (int, np.integer)) else f"{value:g}"


def _check_float_sampling(dtype: Any, kernel: str) -> None:
    """rand/randn only sample floating dtypes: PyTorch's error instead of truncated integers."""
    if dtype is not None and to_dtype(dtype).np.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for {scalar_type_name(to_dtype(dtype).np)!r}')


def _empty(shape: tuple[int, ...], np_dtype: np.dtype) -> Tensor:
    return Tensor._make(np.empty(shape, np_dtype))


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1): PyTorch's numbers after the same ``manual_seed``.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> [round(v, 4) for v in rg.rand(2).tolist()]
    [0.4963, 0.7682]
    """
    _check_device(device)
    _check_float_sampling(dtype, "check_uniform_bounds")
    shape = _size_args("rand", size)
    np_dtype = _factory_dtype(dtype)
    data = _rng(generator).uniform(math.prod(shape), np_dtype, 0.0, 1.0).reshape(shape)
    return _finish(data, requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples: PyTorch's numbers after the same ``manual_seed``.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> [round(v, 4) for v in rg.randn(3).tolist()]
    [1.541, -0.2934, -2.1788]
    """
    _check_device(device)
    _check_float_sampling(dtype, "normal_kernel_cpu")
    shape = _size_args("randn", size)
    np_dtype = _factory_dtype(dtype)
    data = _rng(generator).normal(math.prod(shape), np_dtype, 0.0, 1.0).reshape(shape)
    return _finish(data, requires_grad)


def randint(low: Any = None, high: int | None = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniformly from [low, high) (``randint(high, size)`` starts at 0), PyTorch's numbers.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.randint(0, 10, (4,)).tolist()
    [4, 9, 3, 0]
    """
    from ._sampling import random_

    _check_device(device)
    if low is None:  # randint(high=..., size=...)
        if high is None:
            raise TypeError("randint() missing required argument 'high'")
        low = 0
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        if not isinstance(high, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {_type_name(high)}")
        low, high, size = 0, low, high
        _check_int_items("randint", size, 2)
    elif high is None:
        low, high = 0, low
    elif isinstance(size, (tuple, list)):
        _check_int_items("randint", size, 3)
    for bound in (low, high):
        if not -2**63 <= bound < 2**63:
            raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape = _nonnegative(_sizes((size,)))
    out = random_(_empty(shape, _factory_dtype(dtype, np.dtype(np.int64))), low, high, generator=generator)
    return _finish(out._data, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1 (PyTorch's Fisher-Yates swaps and numbers).

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.randperm(5).tolist()
    [4, 0, 1, 3, 2]
    """
    _check_device(device)
    _nonnegative((n,))
    perm = _rng(generator).randperm(int(n))
    return _finish(perm.astype(_factory_dtype(dtype, np.dtype(np.int64))), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """Normal samples; ``mean``/``std`` may be numbers (then ``size`` is needed) or tensors
    (PyTorch's four overloads and numbers: a standard normal draw scaled by ``std``, plus ``mean``).

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> [round(v, 4) for v in rg.normal(2.0, 3.0, (2,)).tolist()]
    [6.623, 1.1197]
    """
    from ._sampling import normal_

    _check_device(device)
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not m_t and not s_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of the overloads with a size")
        _check_float_sampling(dtype, "normal_kernel_cpu")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_cpp(std)}")
        shape = _nonnegative(_sizes((size,)))
        result = normal_(_empty(shape, _factory_dtype(dtype)), float(mean), float(std), generator=generator)
        return _finish(result._data, requires_grad)
    if s_t and std._data.size and (std._data < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not s_t and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_cpp(std)}")
    if m_t and s_t:
        shape = np.broadcast_shapes(mean._data.shape, std._data.shape)
        base = mean._data.dtype
    else:
        shape = (mean if m_t else std)._data.shape
        base = (mean if m_t else std)._data.dtype
    from ._sampling import _result

    draw = _empty(shape, base)
    if m_t and not s_t:
        normal_(draw, 0.0, float(std), generator=generator)
        data = draw._data + mean._data
    else:
        normal_(draw, 0.0, 1.0, generator=generator)
        shift = mean._data if m_t else np.asarray(mean, base)
        data = draw._data * std._data + shift
    if m_t and s_t:  # NormalBackward3/1/2: the output's node, zero gradients (as PyTorch's)
        return _result(np.asarray(data, base), "normal_tensor_tensor", (mean, std))
    if m_t:
        return _result(np.asarray(data, base), "normal_tensor_float", (mean,))
    return _result(np.asarray(data, base), "normal_float_tensor", (std,))


def rand_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None,  # noqa: A002
              requires_grad: bool = False, device: Any = None, layout: Any = None,
              memory_format: Any = None) -> Tensor:
    """Uniform samples shaped like ``input`` (its dtype unless ``dtype`` is given)."""
    np_dtype = to_dtype(dtype).np if dtype is not None else input._data.dtype
    if np_dtype.kind != "f":
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for {scalar_type_name(np_dtype)!r}')
    data = _rng(generator).uniform(input._data.size, np_dtype, 0.0, 1.0).reshape(input._data.shape)
    return _finish(data, requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None,  # noqa: A002
               requires_grad: bool = False, device: Any = None, layout: Any = None,
               memory_format: Any = None) -> Tensor:
    """Normal samples shaped like ``input`` (its dtype unless ``dtype`` is given)."""
    np_dtype = to_dtype(dtype).np if dtype is not None else input._data.dtype
    if np_dtype.kind != "f":
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for {scalar_type_name(np_dtype)!r}')
    data = _rng(generator).normal(input._data.size, np_dtype, 0.0, 1.0).reshape(input._data.shape)
    return _finish(data, requires_grad)


def randint_like(input: Tensor, low: Any = None, high: int | None = None, *, dtype: Any = None,  # noqa: A002
                 generator: Generator | None = None, requires_grad: bool = False, device: Any = None,
                 layout: Any = None, memory_format: Any = None) -> Tensor:
    """Random integers in [low, high) shaped like ``input`` (its dtype unless ``dtype`` is given)."""
    from ._sampling import random_

    if high is None:
        low, high = 0, low
    if low is None:  # randint_like(x, high=...)
        low = 0
    np_dtype = to_dtype(dtype).np if dtype is not None else input._data.dtype
    out = random_(_empty(input._data.shape, np_dtype), low, high, generator=generator)
    return _finish(out._data, requires_grad)
