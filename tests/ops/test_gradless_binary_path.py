"""The inline path of binary ops that never record a node (``x < y``, ``x == 0.5``, ``a & b``,
``a ^ b``: ``ops/op.binary_path``'s ``gradless``): the same results, dtypes, errors and flags as
PyTorch over the cases it takes inline (one dtype, a float tensor and a Python number) and the
ones it hands to the general path (promotion, inference mode, vmap, shapes that do not broadcast)."""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg

_OPS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
        "ne": operator.ne, "and": operator.and_, "xor": operator.xor}
_VALUES = {"float32": [0.1, -2.0, np.nan, 3.0], "float64": [0.1, -2.0, np.inf, 0.0], "int64": [1, -2, 7, 0],
           "bool": [True, False, True, False]}


def _outcome(fn: Any) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (NumPy's warnings must stay quiet under any filter)
            out = fn()
    except Exception as e:  # noqa: BLE001 - the error's type is what is compared
        return type(e).__name__
    return str(out.dtype).replace("torch.", ""), out.tolist(), out.requires_grad


def _both(torch: Any, fn: Any) -> None:
    ours, theirs = _outcome(lambda: fn(rg)), _outcome(lambda: fn(torch))
    if isinstance(theirs, tuple) and isinstance(ours, tuple):
        assert ours[0] == theirs[0] and ours[2] == theirs[2]
        np.testing.assert_array_equal(np.array(ours[1]), np.array(theirs[1]))
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", list(_OPS))
@pytest.mark.parametrize("dtype", list(_VALUES))
@pytest.mark.parametrize("other", ["same", "scalar_float", "scalar_int", "int_beyond_int64", "broadcast", "promoted",
                                   "bad_shape"])
def test_gradless_binary_ops_match_torch(torch: Any, name: str, dtype: str, other: str) -> None:
    op = _OPS[name]
    values = _VALUES[dtype]

    def run(lib: Any) -> Any:
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        y = {"same": lambda: lib.tensor(values[::-1], dtype=getattr(lib, dtype)),
             "scalar_float": lambda: 0.1, "scalar_int": lambda: 2, "int_beyond_int64": lambda: 2**64,
             "broadcast": lambda: lib.tensor([values[0]], dtype=getattr(lib, dtype)),
             "promoted": lambda: lib.tensor([1.5, 0.0, -1.0, 2.0], dtype=lib.float64),
             "bad_shape": lambda: lib.tensor(values[:3], dtype=getattr(lib, dtype))}[other]()
        return op(x, y)

    _both(torch, run)


def test_gradless_path_keeps_inference_and_no_node(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert (x < 1.5).grad_fn is None and not (x < 1.5).requires_grad
        with lib.inference_mode():
            assert (x < x).is_inference()
        assert not (x < x).is_inference()


def test_gradless_path_under_vmap_and_forward_ad(torch: Any) -> None:
    a = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]])
    ours = rg.func.vmap(lambda r: r > 0.25)(rg.tensor(a))
    theirs = torch.func.vmap(lambda r: r > 0.25)(torch.tensor(a))
    assert ours.tolist() == theirs.tolist()
    for lib in (rg, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor(a), lib.ones(2, 3, dtype=lib.float64))
            out = d < 1.0
            assert fwad.unpack_dual(out).tangent is None and out.dtype == lib.bool
