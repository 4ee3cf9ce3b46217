"""PyTorch's argument errors for the creation functions: the overloads each one takes, as its
argument parser lists them in "received an invalid combination of arguments", and the checks that
pick that error (or the one naming a single argument) where NumPy would accept or mis-report.

Only called where an argument is already known to be wrong, or on a factory's slow path: the
common calls (``zeros(2, 3)``, ``rand((4,))``) do no more work than before.

>>> import retrograd as rg
>>> try:
...     rg.randint(0, 5, 3)
... except TypeError as e:
...     print(str(e).splitlines()[0])
randint() received an invalid combination of arguments - got (int, int, int), but expected one of:
"""

from __future__ import annotations

from typing import Any

import numpy as np

_REST = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
         "bool pin_memory = False, bool requires_grad = False")
_GEN = "torch.Generator generator, "
_LIKE = "torch.memory_format memory_format = None, "


def _linspace(extra: str) -> tuple[str, ...]:
    pairs = (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number"))
    return tuple(f"{s} start, {e} end, int steps, {extra}*, Tensor out = None, {_REST}" for s, e in pairs)


# Each function's overloads, in the order PyTorch's message lists them.
OVERLOADS: dict[str, tuple[str, ...]] = {
    "rand": (f"tuple of ints size, *, {_GEN}Tensor out = None, {_REST}", f"tuple of ints size, *, Tensor out = None, {_REST}"),
    "randint": tuple(f"{head}tuple of ints size, *, {gen}Tensor out = None, {_REST}"
                     for head in ("int high, ", "int low, int high, ") for gen in (_GEN, "")),
    "randperm": (f"int n, *, {_GEN}Tensor out = None, {_REST}", f"int n, *, Tensor out = None, {_REST}"),
    "arange": (f"Number end, *, Tensor out = None, {_REST}", f"Number start, Number end, *, {_REST}",
               f"Number start, Number end, Number step = 1, *, Tensor out = None, {_REST}"),
    "linspace": _linspace(""),
    "logspace": _linspace("float base = 10.0, "),
    "eye": (f"int n, *, Tensor out = None, {_REST}", f"int n, int m, *, Tensor out = None, {_REST}"),
    "rand_like": (f"Tensor input, *, {_GEN}{_LIKE}{_REST}", f"Tensor input, *, {_LIKE}{_REST}"),
    "randint_like": tuple(f"Tensor input, {head}*, {gen}{_LIKE}{_REST}"
                          for head in ("int low, int high, ", "Tensor high, ", "int high, ") for gen in (_GEN, "")),
    "normal": ("Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None",
               "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               f"float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = None, {_REST}"),
}
OVERLOADS["randn"] = OVERLOADS["rand"]
OVERLOADS["randn_like"] = OVERLOADS["rand_like"]


def type_name(value: Any) -> str:
    """A value's type as PyTorch's argument parser names it (``int``, ``Tensor``, ``torch.dtype``).

    >>> import retrograd as rg
    >>> type_name(rg.float64), type_name(rg.ones(1)), type_name(2.5)
    ('torch.dtype', 'Tensor', 'float')
    """
    from .tensor import Tensor

    if isinstance(value, Tensor):
        return "Tensor"
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__name__
    top = kind.__module__.split(".")[0]
    return f"{'torch' if top == 'retrograd' else top}.{kind.__name__}"


def invalid_combination(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], overloads: str = "") -> TypeError:
    """PyTorch's TypeError for a call of ``name`` that matches none of its overloads.

    >>> print(invalid_combination("eye", (2, 2.0), {}))  # doctest: +ELLIPSIS
    eye() received an invalid combination of arguments - got (int, float), but expected one of:
     * (int n, *, Tensor out = None, ...)
     * (int n, int m, *, Tensor out = None, ...)
    <BLANKLINE>
    """
    got = ", ".join(type_name(a) for a in args)
    keys = list(reversed(kwargs))
    if keys:  # (PyTorch's parser lists keywords last given first; a trailing ", " after no positional one)
        named = [f"{k}={type_name(kwargs[k])}" for k in keys]
        got = f"{got}, {', '.join(named)}" if args else "".join(f"{n}, " for n in named)
    listed = "".join(f" * ({sig})\n" for sig in OVERLOADS[overloads or name])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n{listed}")


def is_int(value: Any) -> bool:
    """What PyTorch's parser takes for an ``int`` argument: a Python or NumPy integer (not a bool),
    or a one-element integer tensor."""
    from .tensor import Tensor

    if isinstance(value, (int, np.integer)):
        return not isinstance(value, bool)
    return isinstance(value, Tensor) and value._data.dtype.kind in "iu" and value._data.size == 1


def is_number(value: Any) -> bool:
    """What PyTorch's parser takes for a ``Number``: a Python or NumPy number, or a one-element tensor."""
    from .tensor import Tensor

    if isinstance(value, (int, float, complex, np.number, np.bool_)):
        return True
    return isinstance(value, Tensor) and value._data.size == 1


def check_int_argument(name: str, arg: str, value: Any, position: int) -> None:
    """PyTorch's TypeError for a non-integer where an ``int`` argument belongs (``randperm(5.0)``).

    >>> check_int_argument("randperm", "n", 5, 1)
    """
    if not is_int(value):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not {type_name(value)}")


def check_tensor_input(name: str, value: Any) -> None:
    """PyTorch's TypeError for a ``*_like`` function given no tensor.

    >>> import retrograd as rg
    >>> check_tensor_input("zeros_like", rg.ones(1))
    """
    from .tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(value)}")


# The C++ type names PyTorch's checked scalar conversion prints.
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def check_fill(value: Any, np_dtype: np.dtype) -> Any:
    """A complex fill value as a real ``np_dtype`` takes it, or PyTorch's error for one with an
    imaginary part (NumPy would drop it with a warning). A bool dtype takes its truth, as in PyTorch.

    >>> check_fill(1 + 0j, np.dtype(np.float32))
    1.0
    >>> check_fill(1j, np.dtype(np.float32))
    Traceback (most recent call last):
    ...
    RuntimeError: value cannot be converted to type float without overflow
    """
    if not isinstance(value, (complex, np.complexfloating)) or np_dtype.kind == "c":
        return value
    if np_dtype.kind == "b":
        return bool(value)
    if value.imag:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(np_dtype.name, np_dtype.name)} "
                           "without overflow")
    return value.real


PIN_MEMORY_ERROR = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
                    "available on this system.")


def check_options(name: str, layout: Any, pin_memory: Any, requires_grad: Any, grad_may_be_none: bool = True) -> None:
    """PyTorch's errors for the creation options a CPU tensor cannot take, in its parser's order: a
    ``layout`` that is no ``torch.layout``, a flag that is no bool (``requires_grad=1``; ``None``
    where the parser takes an optional bool), then ``pin_memory=True`` (no accelerator, so no
    pinned memory). ``torch.strided`` is the one layout there is.

    >>> import retrograd as rg
    >>> check_options("zeros", rg.strided, False, None)
    >>> check_options("zeros", None, False, 1)
    Traceback (most recent call last):
    ...
    TypeError: zeros(): argument 'requires_grad' must be bool, not int
    """
    from ._porting import layout as layout_type

    if layout is not None and not isinstance(layout, layout_type):
        raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not {type_name(layout)}")
    for arg, value, may_be_none in (("pin_memory", pin_memory, True), ("requires_grad", requires_grad,
                                                                       grad_may_be_none)):
        if not isinstance(value, bool) and not (value is None and may_be_none):
            raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type_name(value)}")
    if pin_memory:
        raise RuntimeError(PIN_MEMORY_ERROR)


def sort_options(unknown: dict[str, Any], requires_grad: Any) -> None:
    """For a factory whose parser lists its overloads on a bad call (``eye``, ``arange``, ``rand``...):
    a ``layout=`` / ``pin_memory=`` that every overload takes leaves ``unknown`` (the keywords the
    caller refuses), one of another type stays, and a ``requires_grad`` that is no bool joins it, so
    the call is refused as PyTorch's "invalid combination of arguments"; a call left with no
    unknown keyword and ``pin_memory=True`` gets PyTorch's error for that.

    >>> unknown = {"layout": None, "pin_memory": False}
    >>> sort_options(unknown, 1)
    >>> unknown
    {'requires_grad': 1}
    """
    from ._porting import layout as layout_type

    pin_memory = False
    if "layout" in unknown and (unknown["layout"] is None or isinstance(unknown["layout"], layout_type)):
        del unknown["layout"]
    if "pin_memory" in unknown and (unknown["pin_memory"] is None or isinstance(unknown["pin_memory"], bool)):
        pin_memory = unknown.pop("pin_memory")
    if not isinstance(requires_grad, bool) and requires_grad is not None:
        unknown["requires_grad"] = requires_grad
    if pin_memory and not unknown:
        raise RuntimeError(PIN_MEMORY_ERROR)
