"""``torch.testing``: ``assert_close`` with PyTorch's tolerances and messages, and ``make_tensor``.

>>> import retrograd as rg
>>> rg.testing.assert_close(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 2.0 + 1e-7]))
>>> rg.testing.assert_close(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 3.0]))
Traceback (most recent call last):
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.3333333432674408 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import collections.abc
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtype
from .tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) by dtype, PyTorch's table; other dtypes compare exactly.
_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A mismatch: the exception type to raise, its message and where in nested inputs it was."""

    def __init__(self, kind: type[Exception], msg: str, id: tuple[Any, ...] = ()) -> None:  # noqa: A002
        super().__init__(msg)
        self.kind, self.msg, self.id = kind, msg, id

    def to_error(self, msg: str | Callable[[str], str] | None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
        return self.kind(msg(text) if callable(msg) else text)


def _tolerances(names: list[str], rtol: float | None, atol: float | None,
                id: tuple[Any, ...]) -> tuple[float, float]:  # noqa: A002
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                       f"{'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(identifier: str, equality: bool, extra: str, abs_diff: Any, abs_idx: Any, atol: float,
                  rel_diff: Any, rel_idx: Any, rtol: float) -> str:
    def line(kind: str, diff: Any, idx: Any, tol: float) -> str:
        text = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", rtol == 0 and atol == 0, f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _compare_numbers(actual: Any, expected: Any, id: tuple[Any, ...], rtol: float | None,  # noqa: A002
                     atol: float | None, equal_nan: bool, check_dtype: bool) -> None:
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rt, at = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, id)
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
    if actual == expected:
        return
    if equal_nan and _isnan(actual) and _isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if math.isfinite(abs(abs_diff)) and abs_diff <= at + rt * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_msg(actual, expected, rt, at), id)


def _isnan(x: Any) -> bool:
    return bool(np.isnan(x))


def _dtype_name(t: Tensor) -> str:
    return t.dtype.name  # type: ignore[no-any-return]


def _compare_tensors(actual: Tensor, expected: Tensor, id: tuple[Any, ...], rtol: float | None,  # noqa: A002
                     atol: float | None, equal_nan: bool, check_dtype: bool, check_stride: bool) -> None:
    rt, at = _tolerances([_dtype_name(actual), _dtype_name(expected)], rtol, atol, id)

    def mismatch(name: str, a: Any, b: Any) -> _Failure:
        return _Failure(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.", id)

    if actual.shape != expected.shape:
        raise mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        raise mismatch("stride()", actual.stride(), expected.stride())
    if check_dtype and actual.dtype != expected.dtype:
        raise mismatch("dtype", actual.dtype, expected.dtype)
    a, e = actual._data, expected._data
    if a.dtype != e.dtype:  # compared in the promoted dtype, as torch.promote_types gives it
        common = _dtype._promote_pair(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fV" or rt or at:
            diff = np.abs(a - e) if a.dtype.kind in "fV" else np.abs(a.astype(np.int64) - e.astype(np.int64))
            matches = (a == e) | (np.isfinite(diff) & (diff <= at + rt * np.abs(e)))
            if equal_nan and a.dtype.kind in "fV":
                matches |= np.isnan(a) & np.isnan(e)
        else:
            matches = a == e
        if bool(np.all(matches)):
            return
        if a.ndim == 0:
            raise _Failure(AssertionError, _scalar_msg(a.item(), e.item(), rt, at), id)
        total = matches.size
        wrong = total - int(np.count_nonzero(matches))
        extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
        flat_a, flat_e, flat_m = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
        if flat_a.dtype.kind not in "fV":  # integers and bools: differences in int64, ratios in the default float
            flat_a, flat_e = flat_a.astype(np.int64), flat_e.astype(np.int64)
        abs_diff = np.abs(flat_a - flat_e)
        abs_diff[flat_m] = 0
        denominator = np.abs(flat_e)
        if flat_a.dtype.kind not in "fV":
            float_np = _dtype.get_default_dtype().np
            rel_diff = abs_diff.astype(float_np) / denominator.astype(float_np)
        else:
            rel_diff = abs_diff / denominator
        rel_diff[flat_m] = 0
        abs_i, rel_i = _argmax(abs_diff), _argmax(rel_diff)
        shape = matches.shape
        raise _Failure(AssertionError, _mismatch_msg(
            "Tensor-likes", rt == 0 and at == 0, extra, abs_diff[abs_i].item(), _unravel(abs_i, shape), at,
            rel_diff[rel_i].item(), _unravel(rel_i, shape), rt), id)


def _argmax(values: np.ndarray) -> int:
    """The first greatest element, NaN counting as greatest (as torch.max along a dimension)."""
    nan = np.isnan(values) if values.dtype.kind in "fV" else None
    if nan is not None and nan.any():
        return int(np.argmax(nan))
    return int(np.argmax(values))


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _compare(actual: Any, expected: Any, id: tuple[Any, ...], options: dict[str, Any]) -> None:  # noqa: A002
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError,
                           f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id)
        for i in range(len(expected)):
            _compare(actual[i], expected[i], (*id, i), options)
        return
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}"), id)
        keys: Any = expected.keys()
        try:
            keys = sorted(keys)
        except Exception:  # noqa: BLE001 - unorderable keys keep their order, as in PyTorch
            keys = list(keys)
        for key in keys:
            _compare(actual[key], expected[key], (*id, key), options)
        return
    if actual is None or expected is None:
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)
        return
    bools = (bool, np.bool_)
    if isinstance(actual, bools) and isinstance(expected, bools):
        if bool(actual) is not bool(expected):
            raise _Failure(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", id)
        return
    numbers = (int, float, complex, np.number)
    if isinstance(actual, numbers) and isinstance(expected, numbers) and not isinstance(actual, bool) \
            and not isinstance(expected, bool):
        _compare_numbers(actual, expected, id, options["rtol"], options["atol"], options["equal_nan"],
                         options["check_dtype"])
        return
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and (not options["allow_subclasses"] and type(actual) is not type(expected)):
        related = False
    if related and isinstance(actual, (Tensor, np.ndarray)):
        from .factories import as_tensor
        a, e = (x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected))
        _compare_tensors(a, e, id, options["rtol"], options["atol"], options["equal_nan"], options["check_dtype"],
                         options["check_stride"])
        return
    raise _Failure(TypeError,
                   f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", id)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close: same shape (and dtype,
    unless ``check_dtype=False``) and ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with PyTorch's default tolerances by dtype (float32: rtol 1.3e-6, atol 1e-5;
    float64: 1e-7, 1e-7; integers and bools: exact). Tensors, NumPy arrays, Python numbers and
    nested sequences or mappings of them are compared; ``msg`` (a string, or a function of the
    generated message) replaces the message.

    >>> import retrograd as rg
    >>> rg.testing.assert_close({"w": rg.ones(2)}, {"w": rg.ones(2)})
    >>> rg.testing.assert_close(1.0, 1, check_dtype=False)
    """
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _compare(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error(msg) from None


_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (defaults: [-9, 9)
    for floats, [-9, 10) for integers, [0, 10) for uint8, {False, True} for bool), from
    retrograd's generator.

    >>> import retrograd as rg
    >>> t = rg.testing.make_tensor(2, 3, dtype=rg.float64, device="cpu", low=0, high=1)
    >>> t.shape, t.dtype, bool(((t >= 0) & (t < 1)).all())
    (torch.Size([2, 3]), torch.float64, True)
    """
    from . import factories
    from ._porting import _check_default_device, finfo, iinfo
    d = _dtype.to_dtype(dtype)
    _check_default_device(device)
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    size = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    integral = d.name in _INTEGRAL or d is _dtype.bool_
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={d}")
    noncontiguous = noncontiguous and math.prod(size) > 1
    if noncontiguous:
        size = (*size[:-1], 2 * size[-1])

    def limits(lowest: float, highest: float, default_low: float, default_high: float) -> tuple[Any, Any]:
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and d.is_floating_point:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                          "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                          FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), but {d} only "
                             f"supports [{lowest}, {highest})")
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        return (math.ceil(lo), math.ceil(hi)) if integral else (lo, hi)

    if d is _dtype.bool_:
        lo, hi = limits(0, 2, 0, 2)
        result = factories.randint(lo, hi, size, dtype=d)
    elif integral:
        info = iinfo(d)
        lo, hi = limits(info.min, info.max + (d is not _dtype.int64), -9, 10)
        result = factories.randint(lo, hi, size, dtype=d)
    elif d.is_floating_point:
        f = finfo(d)
        lo, hi = limits(f.min, f.max, -9, 9)
        # drawn in float64 and rounded: ranges as wide as the dtype's stay finite
        u = factories.rand(size, dtype=_dtype.float64)._data
        values = ((lo + (hi - lo) * u) if hi - lo < f.max else 2 * (lo / 2 + (hi / 2 - lo / 2) * u)).astype(d.np)
        if lo < hi:  # rounding to the dtype must not leave [low, high)
            top, bottom = d.np.type(hi), d.np.type(lo)
            top = np.nextafter(top, d.np.type(-np.inf)) if top >= hi else top
            bottom = np.nextafter(bottom, d.np.type(np.inf)) if bottom < lo else bottom
            values = np.clip(values, bottom, top)
        result = Tensor._make(values)
    else:
        raise TypeError(f"The requested dtype '{d}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = Tensor._make(result._data[..., 1::2])
    if exclude_zero:
        data = result._data
        data[data == 0] = 1 if integral else finfo(d).tiny
    if d.is_floating_point and requires_grad:
        result.requires_grad_()
    return result
