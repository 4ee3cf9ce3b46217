"""The op table, by topic. Every op is an ``Op`` entry (see ``op.py``); ``Tensor`` methods and
the ``retrograd.*`` functions are derived from an entry's declared ``variants`` (``variants.py``, the
one binding point) or are thin hand-written delegations to the entries."""

from __future__ import annotations

import importlib
from typing import Any

from . import elementwise, indexing, inplace, reduce, shape
from .op import Op, apply


def __getattr__(name: str) -> Any:
    # ``nn`` (softmax, losses, normalisation...) loads on first use: import time is a feature.
    if name in ("nn", "linalg", "strided", "inplace_more", "linalg_extra"):  # softmax and losses, matrix products, as_strided...
        return importlib.import_module("." + name, __name__)
    if name == "return_types":  # (its named tuples are made when it loads: on first use)
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Op", "apply", "elementwise", "indexing", "inplace", "linalg", "nn", "reduce", "return_types", "shape", "strided", "inplace_more", "linalg_extra"]


def maximum(a: Any, b: Any) -> Any:
    return apply(elementwise.maximum, (a, b))


def minimum(a: Any, b: Any) -> Any:
    return apply(elementwise.minimum, (a, b))


def extra_div(a: Any, b: Any, rounding_mode: str) -> Any:
    return apply(elementwise.div_rounding, (a, b, rounding_mode))


def clamp_tensor(x: Any, lo: Any, hi: Any) -> Any:
    return apply(elementwise.clamp_tensor, (x, lo, hi))
