"""dtypes named like PyTorch's, and PyTorch's type-promotion rules on top of NumPy dtypes."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class dtype:
    """A retrograd dtype: a NumPy dtype with PyTorch's name (``str(rg.float32) == 'torch.float32'``).

    >>> import retrograd as rg
    >>> rg.float32.is_floating_point
    True
    """

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "category")

    def __init__(self, name: str, np_dtype: Any, category: builtins.int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating, 3 complex: the promotion categories
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "ifcV"
        self.itemsize = self.np.itemsize

    @property
    def is_complex(self) -> bool:
        return self.category == 3

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name


float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
bool_ = dtype("bool", np.bool_, 0)
half, float, double = float16, float32, float64  # noqa: A001 - PyTorch's aliases
short, int, long = int16, int32, int64  # noqa: A001
# complex32 (chalf) is left out: NumPy has no complex type of two float16s.
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
cfloat, cdouble = complex64, complex128

ALL_DTYPES = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_, complex64, complex128)


def __getattr__(name: str) -> dtype:
    # A dtype pickles as its name in this module (``dtype.__reduce__``); ``bool`` is kept as
    # ``bool_`` here so as not to shadow the builtin.
    if name == "bool":
        return bool_
    if name == "bfloat16":
        return load_bfloat16()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
FROM_NUMPY: dict[np.dtype, dtype] = {d.np: d for d in ALL_DTYPES}

# The 16-bit floats PyTorch computes in float32 ("opmath") and rounds once per op: float16, and
# bfloat16 once loaded. Reductions and matmuls test membership here to accumulate in float32.
REDUCED_FLOATS: set[np.dtype] = {float16.np}
# The floating NumPy kinds: ml_dtypes' bfloat16 is a NumPy user dtype, of kind "V".
FLOAT_KINDS = "fV"


def load_bfloat16() -> dtype:
    """``retrograd.bfloat16``: made (and registered for promotion) on first use, from ``ml_dtypes``.

    NumPy has no bfloat16; ``ml_dtypes`` supplies the array dtype, so it is imported only here,
    not at ``import retrograd``.

    >>> import retrograd as rg
    >>> rg.bfloat16, rg.bfloat16.itemsize, rg.bfloat16.is_floating_point
    (torch.bfloat16, 2, True)
    """
    made = globals().get("bfloat16")
    if made is not None:
        return made  # type: ignore[no-any-return]
    try:
        import ml_dtypes
    except ImportError:
        raise ModuleNotFoundError('bfloat16 needs the ml_dtypes package: pip install "retrograd[bfloat16]"') from None
    made = dtype("bfloat16", ml_dtypes.bfloat16, 2)
    made.is_signed = True
    FROM_NUMPY[made.np] = made
    REDUCED_FLOATS.add(made.np)
    _SCALAR_TYPE_NAMES["bfloat16"] = "BFloat16"
    _PROMOTION_CACHE.clear()
    globals()["bfloat16"] = made
    return made


def _lookup(np_dtype: np.dtype) -> dtype:
    """``FROM_NUMPY[np_dtype]``, loading bfloat16 when an ml_dtypes array meets retrograd first."""
    found = FROM_NUMPY.get(np_dtype)
    if found is None and np_dtype.name == "bfloat16":
        found = load_bfloat16()
    if found is None:
        raise KeyError(np_dtype)
    return found

# The single mutable default: Python floats and float factories use it.
_default_float = [float32]


def get_default_dtype() -> dtype:
    """Return the dtype Python floats and float factories get (float32 unless changed).

    >>> import retrograd as rg
    >>> rg.get_default_dtype()
    torch.float32
    """
    return _default_float[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64).

    >>> import retrograd as rg
    >>> rg.set_default_dtype(rg.float64); rg.set_default_dtype(rg.float32)
    """
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d
    _PROMOTION_CACHE.clear()


def to_dtype(d: Any) -> dtype:
    """Accept a retrograd dtype, a NumPy dtype or type, or Python's ``float``/``int``/``bool``."""
    if isinstance(d, dtype):
        return d
    if d is _py_float:  # (Python's float is a double: float64 whatever the default dtype, as in PyTorch)
        return float64
    if d is _py_int:
        return int64
    if d is _py_bool:
        return bool_
    try:
        return _lookup(np.dtype(d))
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}") from None


_py_float, _py_int, _py_bool = (1.0).__class__, (1).__class__, True.__class__


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    try:
        return _lookup(np_dtype)
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def _promote_pair(a: np.dtype | None, b: np.dtype) -> np.dtype:
    """PyTorch's promote_types: the higher category wins outright, else NumPy's widening."""
    if a is None or a == b:
        return b
    ca: builtins.int = FROM_NUMPY[a].category
    cb: builtins.int = FROM_NUMPY[b].category
    if ca != cb:
        if ca + cb == 5:  # complex and floating: NumPy widens as PyTorch does (complex64 + float64)
            return np.promote_types(a, b)
        return a if ca > cb else b
    return np.promote_types(a, b)


_PROMOTION_CACHE: dict[tuple[Any, ...], np.dtype] = {}


def _category(np_dtype: np.dtype) -> builtins.int:
    """0 bool, 1 integer, 2 floating."""
    return FROM_NUMPY[np_dtype].category
_py_complex = (1j).__class__
_SCALAR_CATEGORY = {_py_bool: 0, _py_int: 1, _py_float: 2, _py_complex: 3}


def default_complex() -> dtype:
    """The complex dtype matching the default float (complex64 for float32, complex128 for float64)."""
    return complex128 if _default_float[0] is float64 else complex64


def _higher_group(result: np.dtype, lower: np.dtype) -> np.dtype:
    """A lower-priority group's complex dtype over a floating one keeps the floating one's width
    (PyTorch: float64 tensor + complex scalar is complex128)."""
    if lower.kind == "c" and result.kind in "fV":
        return np.promote_types(np.dtype(np.complex64), result)
    return lower


def result_type(operands: tuple[Any, ...]) -> np.dtype:
    """The NumPy dtype PyTorch gives an op over these tensors and Python scalars.

    Three priority groups, as in PyTorch: tensors with dimensions, 0-dim tensors, then
    Python numbers; a lower group only matters when it brings a higher category.
    """
    dims: np.dtype | None = None
    zeros: np.dtype | None = None
    scalar_cat = -1
    for x in operands:
        data = getattr(x, "_data", None)
        if data is not None:
            if data.ndim:
                dims = _promote_pair(dims, data.dtype)
            else:
                zeros = _promote_pair(zeros, data.dtype)
        elif x is not None:
            cat = _SCALAR_CATEGORY.get(type(x))
            if cat is None:
                if isinstance(x, np.generic):
                    cat = FROM_NUMPY[x.dtype].category
                else:
                    raise TypeError(f"unsupported operand type {type(x).__name__}")
            scalar_cat = max(scalar_cat, cat)
    key = (dims, zeros, scalar_cat)
    cached = _PROMOTION_CACHE.get(key)
    if cached is not None:
        return cached
    result = dims
    if zeros is not None and (result is None or _category(zeros) > _category(result)):
        result = zeros if result is None else _higher_group(result, zeros)
    if scalar_cat >= 0 and (result is None or scalar_cat > _category(result)):
        wrapped = (bool_, int64, get_default_dtype(), default_complex())[scalar_cat].np
        result = wrapped if result is None else _higher_group(result, wrapped)
    assert result is not None
    _PROMOTION_CACHE[key] = result
    return result


_SCALAR_TYPE_NAMES = {
    "float16": "Half", "float32": "Float", "float64": "Double", "uint8": "Byte", "int8": "Char",
    "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def scalar_type_name(np_dtype: np.dtype) -> str:
    """PyTorch's ScalarType name used in messages: ``Float``, ``Long``, ``Bool``..."""
    return _SCALAR_TYPE_NAMES.get(np.dtype(np_dtype).name, str(np_dtype))
