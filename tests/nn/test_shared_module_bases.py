"""Modules that share a private base (the 2-D and 3-D average pools, the adaptive pools,
LocalResponseNorm and CrossMapLRN2d) against PyTorch: constructor signatures, the attributes they
keep, reprs and outputs."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import retrograd as rg

CASES = [
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, (1, 2, 9)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (1, 2, 4, 4)),
    ("AvgPool2d", ((3, 1),), {"stride": (1, 1), "padding": (1, 0), "count_include_pad": False}, (2, 4, 5)),
    ("AvgPool3d", (2,), {"ceil_mode": True}, (1, 1, 3, 3, 3)),
    ("AvgPool3d", (2,), {"stride": 1, "divisor_override": 5}, (1, 2, 3, 3, 3)),
    ("AdaptiveMaxPool1d", (2,), {"return_indices": True}, (1, 2, 5)),
    ("AdaptiveMaxPool2d", ((1, None),), {}, (1, 2, 5, 3)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 1, 4, 4, 4)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 7)),
    ("AdaptiveAvgPool2d", ((2, None),), {}, (1, 2, 5, 3)),
    ("AdaptiveAvgPool3d", (1,), {}, (1, 2, 3, 3, 3)),
    ("LocalResponseNorm", (2,), {"alpha": 0.5, "k": 2.0}, (1, 4, 3, 3)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)),
    ("CrossMapLRN2d", (3,), {"alpha": 0.5, "beta": 0.5}, (1, 4, 3, 3)),
    ("CrossMapLRN2d", (1,), {"k": 2}, (2, 3, 2, 2)),
]

ATTRIBUTES = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override",
              "output_size", "return_indices", "size", "alpha", "beta", "k")


def _run(lib: Any, name: str, args: Any, kwargs: Any, shape: Any) -> Any:
    cls = getattr(lib.nn, name)
    m = cls(*args, **kwargs)
    x = lib.tensor(np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape), dtype=lib.float64)
    out = m(x)
    outs = out if isinstance(out, tuple) else (out,)
    kept = {a: repr(getattr(m, a)) for a in ATTRIBUTES if hasattr(m, a)}
    params = list(inspect.signature(cls).parameters.items())
    return (repr(m), kept, [(n, repr(p.default)) for n, p in params],
            [np.round(o.tolist(), 12).tolist() for o in outs])


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_modules_on_shared_bases_match_pytorch(torch: Any, case: Any) -> None:
    assert _run(rg, *case) == _run(torch, *case)
