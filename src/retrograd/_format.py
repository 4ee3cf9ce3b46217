"""``repr`` of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _dtype

if TYPE_CHECKING:
    from .tensor import Tensor


def _float_formatter(values: np.ndarray) -> tuple[str, int]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return "fixed0", 0
    if np.all(finite == np.round(finite)) and (finite.size == 0 or np.abs(finite).max() < 1e8):
        return "int", 0
    nonzero = np.abs(finite[finite != 0])
    if nonzero.size and (nonzero.max() > 1e8 or nonzero.min() < 1e-4 or nonzero.max() / nonzero.min() > 1e3):
        return "sci", 4
    return "fixed", 4


def _format_float(v: float, mode: str, precision: int) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if mode == "int":
        return f"{v:.0f}."
    if mode == "sci":
        return f"{v:.{precision}e}"
    return f"{v:.{precision}f}"


def _format_elements(data: np.ndarray) -> list[str]:
    flat = data.reshape(-1)
    if data.dtype.kind == "b":
        return ["True" if v else "False" for v in flat.tolist()]
    if data.dtype.kind in "iu":
        return [str(v) for v in flat.tolist()]
    mode, precision = _float_formatter(flat.astype(np.float64))
    return [_format_float(v, mode, precision) for v in flat.astype(np.float64).tolist()]


def _nest(items: list[str], shape: tuple[int, ...], indent: int) -> str:
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    parts = [_nest(items[i * step:(i + 1) * step], shape[1:], indent + 1) for i in range(shape[0])]
    sep = "," + "\n" * (len(shape) - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def tensor_repr(t: Tensor) -> str:
    data = t._data
    prefix = "tensor("
    suffixes = []
    if data.size == 0:
        body = "[]"
        if data.shape != (0,):
            suffixes.append(f"size={tuple(data.shape)}")
    else:
        items = _format_elements(data)
        width = max(len(s) for s in items)
        items = [s.rjust(width) for s in items]
        body = _nest(items, data.shape, len(prefix))
    kind = data.dtype.kind
    default = _dtype.get_default_dtype().np if kind == "f" else np.dtype(np.int64) if kind in "iu" else np.dtype(bool)
    if data.dtype != default:
        suffixes.append(f"dtype={_dtype.FROM_NUMPY[data.dtype]!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body] + suffixes) + ")"
