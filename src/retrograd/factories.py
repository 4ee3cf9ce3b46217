"""Creating tensors: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``full``/``empty``
(and ``*_like``), ``arange``, ``linspace``, ``eye``, and random tensors from retrograd's own
generator (``manual_seed``)."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

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
        if data.dtype.kind not in "fcV":  # the factories' wording differs from requires_grad_()'s
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_()
    return t


def _size_args(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    if not size:
        if name in _SAMPLED:
            raise _bad_call(name, (), {})
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) > 1 and isinstance(size[0], (tuple, list)):  # (a sequence, then more)
        if name in _SAMPLED:
            raise _bad_call(name, size, {})
        raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
    if len(size) == 1 and not isinstance(size[0], (tuple, list)):
        if not _int_like(size[0], True):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size[0])}")
    else:
        _check_int_items(name, size[0] if len(size) == 1 else size, 1)
    return _nonnegative(_sizes(size), name)


_NO_SIZE: Any = object()  # (``size=`` not given: the sizes are the positional arguments)


def _keyword_size(name: str, sizes: tuple[Any, ...], size: Any) -> tuple[Any, ...]:
    """The positional sizes, or ``size=`` given as a keyword (a tuple or list of ints), as
    PyTorch's factories take it.

    >>> _keyword_size("zeros", (), (2, 3))
    ((2, 3),)
    """
    if size is _NO_SIZE:
        return sizes
    if sizes:
        if name in _SAMPLED:
            raise _bad_call(name, sizes, {"size": size})
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)) or not all(_int_like(v, i == 0) for i, v in enumerate(size)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {_type_name(size)}")
    return (tuple(size),)


def _type_name(value: Any) -> str:
    from ._factory_args import type_name  # (PyTorch's names: ``torch.dtype``, not ``retrograd.dtype``)

    return type_name(value)


# The factories whose parser lists its overloads on a bad call (zeros/ones/empty: Python's errors).
_SAMPLED = frozenset({"rand", "randn"})
_MISSING: Any = object()  # (an argument not given, where None is a value PyTorch refuses)


def _bad_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], overloads: str = "") -> TypeError:
    """PyTorch's "invalid combination of arguments" TypeError for ``name(*args, **kwargs)``."""
    from ._factory_args import invalid_combination

    return invalid_combination(name, args, kwargs, overloads)


def _int_arg(name: str, arg: str, value: Any, position: int) -> int:
    """``value`` as an int, or PyTorch's TypeError for an ``int`` argument (``randperm(5.0)``) or
    ValueError for one beyond int64 (its parser unpacks a C++ ``long long``)."""
    if type(value) is not int:
        from ._factory_args import check_int_argument

        check_int_argument(name, arg, value, position)
    value = int(value)
    if not -_INT64_END <= value < _INT64_END:
        raise ValueError("Overflow when unpacking long long")
    return value


def _tensor_input(name: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        from ._factory_args import check_tensor_input

        check_tensor_input(name, value)


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


_INT64_END = 1 << 63  # (sizes and int arguments are C++ int64 in PyTorch: -2**63 <= n < 2**63)


def _nonnegative(shape: tuple[int, ...], name: str = "") -> tuple[int, ...]:
    """``shape`` itself, or PyTorch's error for a size its parser cannot unpack into an int64
    (a TypeError naming the entry) or a negative size (not NumPy's ValueError)."""
    for s in shape:
        if not 0 <= s < _INT64_END:
            break
    else:
        return shape
    for pos, s in enumerate(shape, 1):  # (the parser reads every entry before any is checked)
        if not -_INT64_END <= s < _INT64_END:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {pos} with error "
                            '"Overflow when unpacking long long"')
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _check_storage_size(shape: tuple[int, ...], np_dtype: np.dtype) -> None:
    """PyTorch's error for a tensor whose storage would need 2**63 bytes or more (NumPy would
    raise its own ValueError, or a sampler would try to draw that many numbers)."""
    if math.prod(shape) * np_dtype.itemsize >= _INT64_END:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")


def _allocated(fill: Callable[..., np.ndarray], shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """``fill(shape, np_dtype)``, or PyTorch's error where NumPy refuses a size as too big."""
    try:
        return fill(shape, np_dtype)
    except ValueError:
        _check_storage_size(shape, np_dtype)
        raise


def _into_out(name: str, out: Any, dtype: Any, requires_grad: bool, fill: Callable[[np.dtype], np.ndarray],
              writes: bool = True) -> Tensor:
    """A factory's ``out=``: ``out`` resized to the result's shape and filled in place (its dtype
    unless ``dtype`` is given, which must then be the same), as PyTorch's out variants do;
    ``empty``'s only resizes (``writes=False``: its values and version stay)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    if dtype is not None and to_dtype(dtype).np != out._data.dtype:
        raise RuntimeError(f"dtype {scalar_type_name(to_dtype(dtype).np)} does not match dtype of out parameter "
                           f"({scalar_type_name(out._data.dtype)})")
    if out._requires_grad and STATE.grad_enabled:
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    data = fill(out._data.dtype)
    if data.shape != out._data.shape:
        from .ops.strided import resize_

        resize_(out, data.shape)  # (bumps the version once, a write included, as PyTorch's)
    elif writes:
        out._counter().bump(name)
    if writes:
        out._data[...] = data
    if out._requires_grad != requires_grad and out._grad_fn is None:  # (PyTorch sets out's flag to requires_grad)
        out.requires_grad_(requires_grad)
    return out


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


def _check_options(name: str, layout: Any, pin_memory: Any, requires_grad: Any) -> None:
    """PyTorch's errors for ``layout=``, ``pin_memory=`` and ``requires_grad=`` values a CPU tensor
    cannot take (the caller tests for the defaults first: a bool flag, no layout, no pinning)."""
    from ._factory_args import check_options

    check_options(name, layout, pin_memory, requires_grad)


def _sort_options(unknown: dict[str, Any], requires_grad: Any) -> None:
    """``unknown`` keeps the keywords a factory with overloads refuses (see ``sort_options``)."""
    from ._factory_args import sort_options

    sort_options(unknown, requires_grad)


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
    if kind in "fV":
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
    if requires_grad.__class__ is not bool or pin_memory is not False:
        from ._factory_args import check_options

        check_options("tensor", None, pin_memory, requires_grad, grad_may_be_none=False)
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


_F = TypeVar("_F", bound=Callable[..., Any])


def _named(function: _F, name: str, doc: str) -> _F:
    """``function`` (made by one of the factories below) as the public function ``name``: its own
    ``__name__``, ``__qualname__``, code name and docstring (doctest included); its signature is the factory's."""
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    # Its code object too: tracebacks and the debugging tools' "created by zeros()" read co_name.
    function.__code__ = function.__code__.replace(co_name=name, co_qualname=name)
    return function


def _filled(name: str, fill: Callable[..., np.ndarray], doc: str, fills_out: bool = True) -> Callable[..., Tensor]:
    """``zeros``/``ones``/``empty``: ``fill(shape, dtype)`` for a size given as ints, one sequence or
    ``size=``; an ``out=`` is filled unless ``fills_out`` is False (``empty``)."""

    def factory(*sizes: Any, size: Any = _NO_SIZE, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                out: Any = None, layout: Any = None, pin_memory: bool = False, **unknown: Any) -> Tensor:
        shape = _size_args(name, _keyword_size(name, sizes, size))
        if unknown:  # (after the size: PyTorch's parser names a missing or bad size first)
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(unknown))}'")
        if requires_grad.__class__ is not bool or layout is not None or pin_memory is not False:
            _check_options(name, layout, pin_memory, requires_grad)
        _check_device(device)
        if out is not None:
            return _into_out(name, out, dtype, requires_grad, lambda np_dtype: _allocated(fill, shape, np_dtype),
                             fills_out)
        return _finish(_allocated(fill, shape, _factory_dtype(dtype)), requires_grad)

    return _named(factory, name, doc)


zeros = _filled("zeros", np.zeros,
    """A tensor of zeros.

    >>> import retrograd as rg
    >>> rg.zeros(2, 2).shape
    torch.Size([2, 2])
    """)


ones = _filled("ones", np.ones,
    """A tensor of ones.

    >>> import retrograd as rg
    >>> rg.ones(3).tolist()
    [1.0, 1.0, 1.0]
    """)


empty = _filled("empty", np.zeros,
    """An uninitialised tensor (zero-filled here, for reproducibility).

    >>> import retrograd as rg
    >>> rg.empty(2).shape
    torch.Size([2])
    """, fills_out=False)


def _scalar_np_dtype(value: Any) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (complex, np.complexfloating)):
        return default_complex().np
    return get_default_dtype().np


def full(size: Any, fill_value: Any, *, out: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype inferred from the value, as in PyTorch).

    >>> import retrograd as rg
    >>> rg.full((2,), 7).tolist()
    [7, 7]
    """
    if requires_grad.__class__ is not bool or layout is not None or pin_memory is not False:
        _check_options("full", layout, pin_memory, requires_grad)
    _check_device(device)
    if isinstance(size, (tuple, list)):
        _check_int_items("full", size, 1)
    else:  # (``full(2, 1)``: PyTorch's full takes a sequence only, unlike zeros)
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}")
    _check_number("full", fill_value)
    if type(fill_value) is int:
        from .ops.op import check_int_scalar

        if not -(1 << 63) <= fill_value < 1 << 64:
            check_int_scalar(fill_value)  # PyTorch's OverflowError
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _nonnegative(_sizes((size,)), "full")

    def filled(np_dtype: np.dtype) -> np.ndarray:
        value = fill_value
        if type(value) is complex:
            from ._factory_args import check_fill

            value = check_fill(value, np_dtype)
        return _allocated(lambda shp, dt: np.full(shp, value, dt), shape, np_dtype)

    if out is not None:
        return _into_out("full", out, dtype, requires_grad, filled)
    return _finish(filled(_factory_dtype(dtype, _scalar_np_dtype(fill_value))), requires_grad)


def _like(t: Tensor, dtype: Any) -> np.dtype:
    return to_dtype(dtype).np if dtype is not None else t._data.dtype


def _filled_like(name: str, fill: Callable[..., np.ndarray], doc: str) -> Callable[..., Tensor]:
    """``zeros_like``/``ones_like``/``empty_like``: ``fill(shape, dtype)`` with ``input``'s shape and
    (unless ``dtype`` is given) dtype."""

    def like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
             memory_format: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
        _tensor_input(name, input)
        if requires_grad.__class__ is not bool or layout is not None or pin_memory is not False:
            _check_options(name, layout, pin_memory, requires_grad)
        return _finish(fill(input._data.shape, _like(input, dtype)), requires_grad)

    return _named(like, name, doc)


zeros_like = _filled_like("zeros_like", np.zeros,
    """Zeros with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.zeros_like(rg.ones(2)).tolist()
    [0.0, 0.0]
    """)


ones_like = _filled_like("ones_like", np.ones,
    """Ones with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.ones_like(rg.zeros(2)).tolist()
    [1.0, 1.0]
    """)


empty_like = _filled_like("empty_like", np.zeros,
    """An uninitialised (zero-filled) tensor like ``input``.""")


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None, layout: Any = None,
              pin_memory: bool = False) -> Tensor:
    """``fill_value`` with ``input``'s shape and dtype.

    >>> import retrograd as rg
    >>> rg.full_like(rg.zeros(2), 3.0).tolist()
    [3.0, 3.0]
    """
    _tensor_input("full_like", input)
    _check_number("full_like", fill_value)
    if requires_grad.__class__ is not bool or layout is not None or pin_memory is not False:
        _check_options("full_like", layout, pin_memory, requires_grad)
    if type(fill_value) is complex:
        from ._factory_args import check_fill

        fill_value = check_fill(fill_value, _like(input, dtype))
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad)


def _check_arange_call(start: Any, end: Any, step: Any, dtype: Any, unknown: dict[str, Any]) -> tuple[Any, Any]:
    """``arange``'s (start, end) as its body takes them (``end`` None: one bound), or PyTorch's
    error for a call none of its overloads takes (a non-number, ``None``, a bool dtype)."""
    from ._factory_args import is_number

    default_step = type(step) is int and step == 1
    if start is _MISSING:  # arange(end=5)
        if end is _MISSING or not default_step:
            raise _bad_call("arange", (), {**({"end": end} if end is not _MISSING else {}),
                                           **({"step": step} if not default_step else {}), **unknown})
        start = 0
    if end is _MISSING:
        if not unknown and not is_number(start):
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not {_type_name(start)}")
        end = None
    else:
        args = (start, end) if default_step else (start, end, step)
        if unknown or not all(map(is_number, args)):
            raise _bad_call("arange", args, unknown)
    if unknown:
        raise _bad_call("arange", (start,), unknown)
    if dtype is not None and to_dtype(dtype).np.kind == "b":
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    return start, end


def _arange_bound(value: Any) -> Any:
    """A bound or step as ``arange`` computes with it, or PyTorch's error for one it cannot take:
    a complex number with an imaginary part, an int beyond 64 bits."""
    if isinstance(value, (complex, np.complexfloating)):
        if value.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return value.real
    if type(value) is int and not -_INT64_END <= value < _INT64_END:
        if value < 0:  # (its parser tries a signed, then an unsigned 64-bit int)
            raise OverflowError("can't convert negative int to unsigned")
        if value >= 2 * _INT64_END:
            raise OverflowError("int too big to convert")
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return value


def arange(start: Any = _MISSING, end: Any = _MISSING, step: Any = 1, *extra: Any, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, out: Any = None, **unknown: Any) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for ints, else the default float.

    >>> import retrograd as rg
    >>> rg.arange(4).tolist(), rg.arange(0, 1, 0.5).tolist()
    ([0, 1, 2, 3], [0.0, 0.5])
    """
    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    if extra:
        raise _bad_call("arange", (start, end, step, *extra), unknown)
    start, end = _check_arange_call(start, end, step, dtype, unknown)
    _check_device(device)
    if end is None:
        start, end = 0, start
    values = [_arange_bound(v.item() if isinstance(v, Tensor) else v) for v in (start, end, step)]
    if values[2] == 0 or values[2] != values[2]:
        raise RuntimeError("step must be nonzero")
    if not all(np.isfinite(values[:2])):
        raise RuntimeError(f"unsupported range: {_cpp(values[0])} -> {_cpp(values[1])}")
    if abs((values[1] - values[0]) / values[2]) >= 2**63:
        raise RuntimeError("invalid size, possible overflow?")
    if (values[1] - values[0]) * values[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    is_int = all(isinstance(v, (int, np.integer)) for v in values)  # bools too (PyTorch: int64)
    count = max(int(np.ceil((values[1] - values[0]) / values[2])), 0)

    def spaced(np_dtype: np.dtype) -> np.ndarray:
        return (values[0] + np.arange(count, dtype=np.float64 if not is_int else np.int64) * values[2]).astype(np_dtype)

    if out is not None:
        return _into_out("arange", out, dtype, requires_grad, spaced)
    return _finish(spaced(_factory_dtype(dtype, np.dtype(np.int64) if is_int else None)), requires_grad)


def _linspace_array(start: float, end: float, steps: int, device: Any) -> np.ndarray:
    """``linspace``'s values in float64, after its checks: also ``logspace``'s exponents."""
    _check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return np.linspace(start, end, steps)


def _check_linspace_call(name: str, start: Any, end: Any, steps: Any, unknown: dict[str, Any]) -> tuple[Any, Any]:
    """``linspace``/``logspace``'s bounds as numbers, or PyTorch's error for a call none of their
    overloads takes (``steps`` not an int, a bound that is no number, a bound tensor with dims)."""
    from ._factory_args import is_int, is_number

    given = tuple(v for v in (start, end, steps) if v is not _MISSING)
    if (unknown or steps is _MISSING or not is_int(steps)
            or not all(isinstance(v, Tensor) or is_number(v) for v in (start, end))):
        raise _bad_call(name, given, unknown)
    if not -_INT64_END <= int(steps) < _INT64_END:
        raise ValueError("Overflow when unpacking long long")
    for arg, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v._data.ndim:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {arg} with "
                               f"{v._data.ndim} dimension(s).")
    return tuple(v.item() if isinstance(v, Tensor) else v for v in (start, end))  # type: ignore[return-value]


def linspace(start: float, end: float, steps: int = _MISSING, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None, **unknown: Any) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import retrograd as rg
    >>> rg.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    start, end = _check_linspace_call("linspace", start, end, steps, unknown)
    values = _linspace_array(start, end, int(steps), device)
    if out is not None:
        return _into_out("linspace", out, dtype, requires_grad, values.astype)
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        dtype = default_complex()  # (a complex bound: a complex result, as PyTorch's)
    return _finish(values.astype(_factory_dtype(dtype)), requires_grad)


def eye(n: int = _MISSING, m: Any = _MISSING, *extra: Any, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, out: Any = None, **unknown: Any) -> Tensor:
    """The identity matrix.

    >>> import retrograd as rg
    >>> rg.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    if m is _MISSING:
        m = None
        if n is _MISSING or unknown:
            raise _bad_call("eye", () if n is _MISSING else (n,), unknown)
        n = _int_arg("eye", "n", n, 1)
    elif type(n) is not int or type(m) is not int or extra or unknown:
        from ._factory_args import is_int

        if extra or unknown or not (is_int(n) and is_int(m)):
            raise _bad_call("eye", (n, m, *extra), unknown)
        n, m = int(n), int(m)
    _check_device(device)
    for arg, v in (("n", n), ("m", m)):
        if v is not None and not -_INT64_END <= v < _INT64_END:
            raise ValueError("Overflow when unpacking long long")
        if v is not None and v < 0:
            raise RuntimeError(f"{arg} must be greater or equal to 0, got {v}")
    if out is not None:
        return _into_out("eye", out, dtype, requires_grad, lambda np_dtype: np.eye(n, m, dtype=np_dtype))
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
    if dtype is not None and to_dtype(dtype).np.kind not in "fcV":
        raise NotImplementedError(f'"{kernel}" not implemented for {scalar_type_name(to_dtype(dtype).np)!r}')


def _empty(shape: tuple[int, ...], np_dtype: np.dtype) -> Tensor:
    return Tensor._make(np.empty(shape, np_dtype))


def _draw(generator: Generator | None, draw: str, shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """``shape`` samples of the generator's ``draw``. A complex dtype draws its real and imaginary
    parts as PyTorch does, as one run of floats over the interleaved pairs (normal: each part
    with variance 1/2, so the complex sample has variance 1)."""
    n = math.prod(shape)
    if n * np_dtype.itemsize >= _INT64_END:
        _check_storage_size(shape, np_dtype)
    if np_dtype.kind != "c":
        return getattr(_rng(generator), draw)(n, np_dtype, 0.0, 1.0).reshape(shape)  # type: ignore[no-any-return]
    part = np.dtype(f"f{np_dtype.itemsize // 2}")
    spread = 1 / math.sqrt(2) if draw == "normal" else 1.0
    pairs = getattr(_rng(generator), draw)(2 * n, part, 0.0, spread)
    return np.ascontiguousarray(pairs).view(np_dtype).reshape(shape)


def _sampled(name: str, draw: str, kernel: str, doc: str) -> Callable[..., Tensor]:
    """``rand``/``randn``: the generator's ``draw`` (``uniform`` on [0, 1), ``normal``) for a size given as
    ints, one sequence or ``size=``; PyTorch's ``kernel`` error for a dtype that is not floating."""

    def factory(*sizes: Any, size: Any = _NO_SIZE, generator: Generator | None = None, dtype: Any = None,
                device: Any = None, requires_grad: bool = False, out: Any = None, **unknown: Any) -> Tensor:
        if unknown or requires_grad.__class__ is not bool:
            _sort_options(unknown, requires_grad)
        if unknown or generator is not None and not isinstance(generator, Generator):
            given = {"size": size} if size is not _NO_SIZE else {}
            raise _bad_call(name, sizes, {**given, **({"generator": generator} if generator is not None else {}),
                                          **unknown})
        _check_device(device)
        _check_float_sampling(dtype, kernel)
        shape = _size_args(name, _keyword_size(name, sizes, size))
        if out is not None:
            def drawn(np_dtype: np.dtype) -> np.ndarray:
                _check_float_sampling(np_dtype, kernel)
                return _draw(generator, draw, shape, np_dtype)

            return _into_out(name, out, dtype, requires_grad, drawn)
        np_dtype = _factory_dtype(dtype)
        return _finish(_draw(generator, draw, shape, np_dtype), requires_grad)

    return _named(factory, name, doc)


rand = _sampled("rand", "uniform", "check_uniform_bounds",
    """Uniform samples on [0, 1): PyTorch's numbers after the same ``manual_seed``.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> [round(v, 4) for v in rg.rand(2).tolist()]
    [0.4963, 0.7682]
    """)


randn = _sampled("randn", "normal", "normal_kernel_cpu",
    """Standard normal samples: PyTorch's numbers after the same ``manual_seed``.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> [round(v, 4) for v in rg.randn(3).tolist()]
    [1.541, -0.2934, -2.1788]
    """)


def _check_randint_call(low: Any, high: Any, size: Any, generator: Any, unknown: dict[str, Any]) -> None:
    """PyTorch's TypeError for a ``randint`` call that matches none of its overloads
    (``randint(0, 5, 3)``, ``randint(5, size=2)``, ``randint(5.5, (2,))``), before NumPy would take it."""
    from ._factory_args import is_int

    given = tuple(v for v in (low, high, size) if v is not None)
    if unknown or generator is not None and not isinstance(generator, Generator):
        raise _bad_call("randint", given, {**({"generator": generator} if generator is not None else {}), **unknown})
    if size is None:
        if high is None:  # randint() or randint(5): no size
            raise _bad_call("randint", given, {})
        if low is None:  # randint(high=5)
            raise _bad_call("randint", (), {"high": high})
        if isinstance(high, (tuple, list)):  # randint(high, size)
            _int_arg("randint", "high", low, 1)
        return
    if low is not None and high is not None:  # randint(low, high, size)
        if not (is_int(low) and is_int(high) and isinstance(size, (tuple, list))
                and all(_int_like(v, i == 0) for i, v in enumerate(size))):
            raise _bad_call("randint", given, {})
        return
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {_type_name(size)}")
    _int_arg("randint", "high", high if low is None else low, 1)


def randint(low: Any = None, high: int | None = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None,
            **unknown: Any) -> Tensor:
    """Integers uniformly from [low, high) (``randint(high, size)`` starts at 0), PyTorch's numbers.

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.randint(0, 10, (4,)).tolist()
    [4, 9, 3, 0]
    """
    from ._sampling import random_

    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    _check_randint_call(low, high, size, generator, unknown)
    low, high = (int(v) if isinstance(v, Tensor) else v for v in (low, high))
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
    shape = _nonnegative(_sizes((size,)), "randint")

    def drawn(np_dtype: np.dtype) -> np.ndarray:
        return random_(_empty(shape, np_dtype), low, high, generator=generator)._data  # type: ignore[no-any-return]

    if out is not None:
        return _into_out("randint", out, dtype, requires_grad, drawn)
    return _finish(drawn(_factory_dtype(dtype, np.dtype(np.int64))), requires_grad)


def randperm(n: int = _MISSING, *extra: Any, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **unknown: Any) -> Tensor:
    """A random permutation of 0..n-1 (PyTorch's Fisher-Yates swaps and numbers).

    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.randperm(5).tolist()
    [4, 0, 1, 3, 2]
    """
    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    if n is _MISSING or extra or unknown:
        raise _bad_call("randperm", () if n is _MISSING else (n, *extra), unknown)
    n = _int_arg("randperm", "n", n, 1)
    if dtype is not None and to_dtype(dtype).np.kind == "b":
        raise NotImplementedError('"randperm" not implemented for \'Bool\'')
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
        if not isinstance(size, (tuple, list)):  # (PyTorch's overload with a size takes a sequence only)
            raise _bad_call("normal", (mean, std) if size is None else (mean, std, size), {})
        _check_float_sampling(dtype, "normal_kernel_cpu")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_cpp(std)}")
        shape = _nonnegative(_sizes((size,)), "normal")

        def drawn(np_dtype: np.dtype) -> np.ndarray:
            return normal_(_empty(shape, np_dtype), float(mean), float(std), generator=generator)._data

        if out is not None:
            return _into_out("normal", out, dtype, requires_grad, drawn)
        return _finish(drawn(_factory_dtype(dtype)), requires_grad)
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


def _sampled_like(name: str, draw: str, kernel: str, doc: str) -> Callable[..., Tensor]:
    """``rand_like``/``randn_like``: ``_sampled``'s draw with ``input``'s shape and (unless ``dtype`` is
    given) dtype."""

    def like(input: Tensor = _MISSING, *extra: Any, dtype: Any = None,  # noqa: A002
             generator: Generator | None = None, requires_grad: bool = False, device: Any = None,
             layout: Any = None, memory_format: Any = None, **unknown: Any) -> Tensor:
        if unknown or requires_grad.__class__ is not bool:
            _sort_options(unknown, requires_grad)
        if input is _MISSING or extra or unknown:
            raise _bad_call(name, () if input is _MISSING else (input, *extra), unknown, "rand_like")
        _tensor_input(name, input)
        np_dtype = to_dtype(dtype).np if dtype is not None else input._data.dtype
        if np_dtype.kind not in "fcV":
            raise NotImplementedError(f'"{kernel}" not implemented for {scalar_type_name(np_dtype)!r}')
        return _finish(_draw(generator, draw, input._data.shape, np_dtype), requires_grad)

    return _named(like, name, doc)


rand_like = _sampled_like("rand_like", "uniform", "check_uniform_bounds",
    """Uniform samples shaped like ``input`` (its dtype unless ``dtype`` is given).""")


randn_like = _sampled_like("randn_like", "normal", "normal_kernel_cpu",
    """Normal samples shaped like ``input`` (its dtype unless ``dtype`` is given).""")


def _check_randint_like_call(input: Any, low: Any, high: Any, unknown: dict[str, Any]) -> None:  # noqa: A002
    """PyTorch's errors for a ``randint_like`` call none of its overloads takes (``randint_like(x)``,
    a float bound, no tensor), before NumPy would take it."""
    from ._factory_args import is_int

    given = tuple(v for v in (input, low, high) if v is not None)
    bounds = [v for v in (low, high) if v is not None]
    one_tensor_high = len(bounds) == 1 and isinstance(bounds[0], Tensor) and bounds[0]._data.dtype.kind not in "iu"
    if unknown or not isinstance(input, Tensor) or not bounds or not (one_tensor_high or all(map(is_int, bounds))):
        raise _bad_call("randint_like", given, unknown)
    if one_tensor_high and bounds[0]._data.ndim:
        raise RuntimeError("high must be a scalar tensor and on CPU")


def randint_like(input: Tensor, low: Any = None, high: int | None = None, *, dtype: Any = None,  # noqa: A002
                 generator: Generator | None = None, requires_grad: bool = False, device: Any = None,
                 layout: Any = None, memory_format: Any = None, **unknown: Any) -> Tensor:
    """Random integers in [low, high) shaped like ``input`` (its dtype unless ``dtype`` is given)."""
    from ._sampling import random_

    _check_randint_like_call(input, low, high, unknown)
    if isinstance(low, Tensor) and high is None:
        low = int(low)
    if high is None:
        low, high = 0, low
    if low is None:  # randint_like(x, high=...)
        low = 0
    np_dtype = to_dtype(dtype).np if dtype is not None else input._data.dtype
    out = random_(_empty(input._data.shape, np_dtype), low, high, generator=generator)
    return _finish(out._data, requires_grad)


def _vmap_random(factory: Any) -> Any:
    """``factory`` (a random factory function), drawing one sample per batch element inside a
    ``vmap(randomness='different')`` (``func/_vmap.py``, imported at call time: the flag is set
    only while a vmap runs), as PyTorch's batching rules for random ops do."""
    from .ops import op as _op

    @functools.wraps(factory)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _op._BATCHING:
            from .func._vmap import random_factory

            return random_factory(factory, args, kwargs)
        return factory(*args, **kwargs)

    return wrapper


rand = _vmap_random(rand)
randn = _vmap_random(randn)
randint = _vmap_random(randint)
randperm = _vmap_random(randperm)
normal = _vmap_random(normal)
rand_like = _vmap_random(rand_like)
randn_like = _vmap_random(randn_like)
randint_like = _vmap_random(randint_like)


# -- more creation functions (issue #12): index grids, vander, logspace, range, scalar_tensor,
# signal windows, strided / permuted empty tensors ---------------------------------------------
def _tri_indices(row: int, col: int, offset: int, dtype: Any, upper: bool, name: str) -> Tensor:
    for arg, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{arg} must be non-negative, got{v}")
    np_dtype = _factory_dtype(dtype, np.dtype(np.int64))
    if np_dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(np_dtype)}\'')
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(np_dtype).reshape(2, -1), False)


def _tri_indices_function(name: str, upper: bool, doc: str) -> Callable[..., Tensor]:
    """``tril_indices``/``triu_indices``."""

    def indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                layout: Any = None) -> Tensor:
        _check_device(device)
        return _tri_indices(int(row), int(col), int(offset), dtype, upper, name)

    return _named(indices, name, doc)


tril_indices = _tri_indices_function("tril_indices", False,
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix, as a 2 x N tensor.

    >>> import retrograd as rg
    >>> rg.tril_indices(2, 2).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """)


triu_indices = _tri_indices_function("triu_indices", True,
    """The (row, column) indices of the upper triangle of a ``row`` x ``col`` matrix, as a 2 x N tensor.

    >>> import retrograd as rg
    >>> rg.triu_indices(2, 2).tolist()
    [[0, 0, 1], [0, 1, 1]]
    """)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803 (PyTorch's name)
    """The Vandermonde matrix of a vector: columns ``x**(N-1) ... x**0`` (``increasing`` reverses them).

    Differentiable in ``x`` (PyTorch's construction: cumulative products written into a tensor of
    ones, then flipped).

    >>> import retrograd as rg
    >>> rg.vander(rg.tensor([1, 2, 3]), N=3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    kind = x._data.dtype.kind
    out_dtype = np.dtype(np.int64) if kind in "biu" else x._data.dtype
    result = _finish(np.empty((x._data.shape[0], n), out_dtype), False)
    result.fill_(1)  # as PyTorch's ``ones`` (empty, then fill_): the version count its errors show
    if n > 1:
        cols = result.narrow(1, 1, n - 1)
        cols.copy_(x.unsqueeze(1).expand(x._data.shape[0], n - 1))
        cols.copy_(cols.cumprod(1))
    return result if increasing else result.flip(1)


def logspace(start: float, end: float, steps: int = _MISSING, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, out: Any = None, **unknown: Any) -> Tensor:
    """``steps`` values from ``base**start`` to ``base**end``, evenly spaced in the exponent.

    >>> import retrograd as rg
    >>> rg.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    if unknown or requires_grad.__class__ is not bool:
        _sort_options(unknown, requires_grad)
    start, end = _check_linspace_call("logspace", start, end, steps, unknown)
    exponents = _linspace_array(start, end, int(steps), device)
    with np.errstate(over="ignore"):
        data = np.power(float(base), exponents)

    def powers(np_dtype: np.dtype) -> np.ndarray:
        return (np.round(data) if np_dtype.kind in "iub" else data).astype(np_dtype)

    if out is not None:
        return _into_out("logspace", out, dtype, requires_grad, powers)
    return _finish(powers(_factory_dtype(dtype)), requires_grad)


RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                 "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                 "[start, end).")


def range_inclusive(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """Deprecated: values from ``start`` to ``end`` *inclusive* by ``step`` (the default float dtype).

    >>> import warnings, retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.range(0, 2).tolist()
    [0.0, 1.0, 2.0]
    """
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(RANGE_WARNING, UserWarning, stacklevel=2)
    _check_device(device)
    values = [_arange_bound(v.item() if isinstance(v, Tensor) else v) for v in (start, end, step)]
    if values[2] == 0:
        raise RuntimeError("step must be nonzero")
    if not all(np.isfinite(values[:2])):
        raise RuntimeError(f"unsupported range: {_cpp(values[0])} -> {_cpp(values[1])}")
    if (values[1] - values[0]) * values[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    np_dtype = _factory_dtype(dtype)
    count = int(np.floor((values[1] - values[0]) / values[2])) + 1
    data = values[0] + np.arange(count, dtype=np.float64) * values[2]
    return _finish(data.astype(np_dtype), requires_grad)


# Public as ``retrograd.range``; named otherwise here so that this module's ``range`` stays the builtin.
range_inclusive.__name__ = range_inclusive.__qualname__ = "range"


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` says otherwise.

    >>> import retrograd as rg
    >>> rg.scalar_tensor(3).dtype
    torch.float32
    """
    _check_device(device)
    if isinstance(s, Tensor):
        s = s.item()
    return _finish(np.array(s).astype(_factory_dtype(dtype)), requires_grad)


_CPP_TYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                   "uint8": "unsigned char", "bool": "bool"}


def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool,
            symmetric: Any) -> Tensor:
    """A window from ``symmetric(n, dtype)`` (the symmetric window of n >= 2 points, computed in the
    dtype as PyTorch does): a periodic window of length N is the symmetric one of N + 1 points
    without its last."""
    _check_device(device)
    np_dtype = _factory_dtype(dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if np_dtype.kind not in "fV":
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_TYPE_NAMES.get(np_dtype.name)}, "
            "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))"
        )
    if window_length <= 1:
        data = np.ones(window_length, np_dtype)
    else:
        data = symmetric(window_length + 1, np_dtype)[:-1] if periodic else symmetric(window_length, np_dtype)
    return _finish(np.ascontiguousarray(data, np_dtype), requires_grad)


def _hamming(alpha: float, beta: float) -> Any:
    def symmetric(n: int, dt: np.dtype) -> np.ndarray:
        return np.cos(np.arange(n, dtype=dt) * dt.type(2 * np.pi / (n - 1))) * dt.type(-beta) + dt.type(alpha)

    return symmetric


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                layout: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (periodic by default).

    >>> import retrograd as rg
    >>> rg.hann_window(3, periodic=False, dtype=rg.float64).tolist()
    [0.0, 1.0, 0.0]
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _hamming(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, device: Any = None, layout: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (periodic by default).

    >>> import retrograd as rg
    >>> round(rg.hamming_window(4, False, dtype=rg.float64)[0].item(), 2)
    0.08
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _hamming(alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                    layout: Any = None, requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    >>> import retrograd as rg
    >>> rg.blackman_window(3, False, dtype=rg.float64).tolist()
    [0.0, 1.0, 0.0]
    """
    def symmetric(n: int, dt: np.dtype) -> np.ndarray:
        w = np.arange(n, dtype=dt) * dt.type(np.pi / (n - 1))
        return np.cos(w * dt.type(4)) * dt.type(0.08) - np.cos(w * dt.type(2)) * dt.type(0.5) + dt.type(0.42)

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, symmetric)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                    layout: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangular (Bartlett) window ``1 - |2n / (N - 1) - 1|`` (periodic by default).

    >>> import retrograd as rg
    >>> rg.bartlett_window(3, False).tolist()
    [0.0, 1.0, 0.0]
    """
    def symmetric(n: int, dt: np.dtype) -> np.ndarray:
        w = np.arange(n, dtype=dt) * dt.type(2 / (n - 1))
        half = ((n - 1) >> 1) + 1
        w[half:] = w[half:] * dt.type(-1) + dt.type(2)
        return w

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, symmetric)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  device: Any = None, layout: Any = None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (N - 1) - 1)**2)) / I0(beta)`` (periodic by default).

    >>> import retrograd as rg
    >>> rg.kaiser_window(3, False).tolist()[1]
    1.0
    """
    def symmetric(n: int, dt: np.dtype) -> np.ndarray:
        alpha = (n - 1) / 2.0
        ratio = (np.arange(n, dtype=np.float64) - alpha) / alpha
        return (np.i0(beta * np.sqrt(np.clip(1 - ratio * ratio, 0, None))) / np.i0(beta)).astype(dt)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, symmetric)


def _strided(size: Any, stride: Any, np_dtype: np.dtype) -> np.ndarray:
    shape, strides = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides ({len(strides)})"
        )
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    if any(s < 0 for s in strides):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(strides)}"
        )
    storage = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    # Zeros rather than uninitialised memory: the values are unspecified either way.
    buffer = np.zeros(storage, np_dtype)
    return np.lib.stride_tricks.as_strided(buffer, shape, tuple(s * np_dtype.itemsize for s in strides))


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, device: Any = None, layout: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` laid out with the given ``stride`` (in elements).

    >>> import retrograd as rg
    >>> rg.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    _check_device(device)
    return _finish(_strided(size, stride, _factory_dtype(dtype)), requires_grad)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, device: Any = None, layout: Any = None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose dims lie in memory in the order ``physical_layout``
    (outermost first).

    >>> import retrograd as rg
    >>> rg.empty_permuted((2, 3, 4), (2, 0, 1)).stride()
    (3, 1, 6)
    """
    _check_device(device)
    shape, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(shape) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = "
            f"{len(shape)} is not equal to len(physical_layout) = {len(order)}"
        )
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    physical = np.zeros(tuple(shape[d] for d in order), _factory_dtype(dtype))
    return _finish(np.transpose(physical, np.argsort(order)), requires_grad)
