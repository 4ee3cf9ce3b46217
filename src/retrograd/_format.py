"""``repr`` of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``.

Same rules as PyTorch's printing: one formatter (integer, fixed or scientific notation, one width)
per tensor, chosen from its nonzero finite values; tensors over ``threshold`` elements are
summarised with ``...`` and only their ``edgeitems`` first and last entries per dimension are
ever formatted (so printing a million elements costs no more than printing a few dozen).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtype

if TYPE_CHECKING:
    from .tensor import Tensor


class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print (``torch.set_printoptions``): digits after the point, the element count
    above which a tensor is summarised, how many items show at each edge when it is, the line width,
    a ``profile`` (``"default"``, ``"short"``, ``"full"``), and ``sci_mode`` (None: automatic).

    >>> import retrograd as rg
    >>> rg.set_printoptions(precision=2)
    >>> rg.tensor([1.12345])
    tensor([1.12])
    >>> rg.set_printoptions(threshold=5)
    >>> rg.arange(10)
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> rg.set_printoptions(profile="default")
    >>> rg.tensor([1.12345])
    tensor([1.1235])
    """
    if profile is not None and profile in _PROFILES:
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode  # as in PyTorch: every call sets it (None: automatic)


def get_printoptions() -> dict[str, Any]:
    """The current print options as a dict (``torch._tensor_str.get_printoptions``).

    >>> get_printoptions()["threshold"]
    1000
    """
    return {name: getattr(PRINT_OPTS, name) for name in ("precision", "threshold", "edgeitems", "linewidth",
                                                          "sci_mode")}


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Change the print options inside a ``with`` block only (``torch._tensor_str.printoptions``).

    >>> import retrograd as rg
    >>> with printoptions(precision=1):
    ...     print(rg.tensor([0.25, 1.5]))
    tensor([0.2, 1.5])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One notation and width for all the elements of a tensor."""

    def __init__(self, data: np.ndarray) -> None:
        self.floating = data.dtype.kind in "fV"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = data.reshape(-1)
        if not self.floating:
            if flat.size:
                self.max_width = max(len(str(v)) for v in flat.tolist())
            return
        values = flat[np.isfinite(flat) & (flat != 0)]
        if values.size == 0:
            return
        magnitude = np.abs(values).astype(np.float64)
        vmin, vmax = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(values == np.ceil(values)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        precision = PRINT_OPTS.precision
        floats = values.astype(np.float64).tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{precision}e}") for v in floats)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in floats)
        else:
            self.max_width = max(len(f"{v:.{precision}f}") for v in floats)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(data: np.ndarray) -> np.ndarray:
    """Only the entries a summarised print shows: the first and last ``edgeitems`` of every dim."""
    edge = PRINT_OPTS.edgeitems
    if not edge:  # PyTorch's edge case: nothing for 2-D and up, everything for 1-D
        return data[(slice(0, 0),) * data.ndim] if data.ndim >= 2 else data
    for axis, n in enumerate(data.shape):
        if n > 2 * edge:
            keep = np.r_[0:edge, n - edge:n]
            data = np.take(data, keep, axis=axis)
    return data


def _values(data: np.ndarray) -> list[Any]:
    return data.astype(np.float64).tolist() if data.dtype.kind in "fV" else data.tolist()


class _ComplexFormatter:
    """PyTorch's complex printing: the real and the imaginary parts each get their own formatter,
    and an element is ``real`` then the signed imaginary part and ``j`` (``1.5000-2.2500e+00j``)."""

    def __init__(self, data: np.ndarray) -> None:
        self.real = _Formatter(np.ascontiguousarray(data.real))
        self.imag = _Formatter(np.ascontiguousarray(data.imag))
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value: Any) -> str:
        value = complex(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(data: np.ndarray, indent: int, summarize: bool, fmt: Any) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = ([fmt.format(v) for v in _values(data[:edge])] + [" ..."]
                 + [fmt.format(v) for v in _values(data[data.shape[0] - edge:])])
    else:
        items = [fmt.format(v) for v in _values(data)]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(data: np.ndarray, indent: int, summarize: bool, fmt: Any) -> str:
    # recursion depth is the number of dims, never the number of elements
    if data.ndim == 0:
        return fmt.format(_values(data))
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = data.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_tensor_str(data[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                  + [_tensor_str(data[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        slices = [_tensor_str(data[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Tensor) -> str:
    data = t._data
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    default_float = _dtype.get_default_dtype().np
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype != default_float:  # nothing to tell an int from a float: always named
            suffixes.append(f"dtype={_dtype.FROM_NUMPY[data.dtype]!r}")
    else:
        if data.dtype not in (default_float, np.dtype(np.int64), np.dtype(np.bool_), _dtype.default_complex().np):
            suffixes.append(f"dtype={_dtype.FROM_NUMPY[data.dtype]!r}")
        shown = data.astype(np.float32) if data.dtype == np.float16 else data
        summarize = data.size > PRINT_OPTS.threshold
        fmt: Any = (_ComplexFormatter if data.dtype.kind == "c" else _Formatter)(
            _summarized(shown) if summarize else shown)
        body = _tensor_str(shown, indent, summarize, fmt)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
