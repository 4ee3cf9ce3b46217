"""Complex inputs to the ops that order values (comparisons, max/min, maximum/minimum, fmax/fmin,
sort/argsort/msort/topk/kthvalue/median/mode, cummax/cummin, argmax/argmin, amax/amin/aminmax,
clamp, searchsorted, unique) are refused with PyTorch's error (NumPy orders complex numbers
lexicographically and would answer), after the checks PyTorch makes first (an empty reduction
dim, k out of range) and not where PyTorch answers (0-d kthvalue/mode/cummax, empty median).
Each call is compared with real PyTorch: exception type and message, or values, shape and dtype."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def _c(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.complex64)


def _z(lib: Any) -> Any:
    return lib.tensor(1j)


_CALLS: list[tuple[str, Any]] = [
    # comparisons: the promoted type is named
    ("c < c", lambda lib: _c(lib, 2) < _c(lib, 2)),
    ("c <= number", lambda lib: _c(lib, 2) <= 1),
    ("c > 1j", lambda lib: _c(lib, 2) > 1j),
    ("c >= real", lambda lib: _c(lib, 2) >= lib.ones(2)),
    ("real >= c", lambda lib: lib.ones(2) >= _c(lib, 2)),
    ("real < 1j", lambda lib: lib.ones(2) < 1j),
    ("int64 < 1j", lambda lib: lib.ones(2, dtype=lib.int64).lt(1j)),
    ("float64 < complex64", lambda lib: lib.ones(2, dtype=lib.float64).lt(_c(lib, 2))),
    ("float32 < 0-d complex128", lambda lib: lib.ones(2, 2) < lib.tensor(1j, dtype=lib.complex128)),
    ("int32 >= 0-d complex", lambda lib: lib.ones(2, 2, dtype=lib.int32) >= _z(lib)),
    ("lt function", lambda lib: lib.lt(_c(lib, 2), 1)),
    ("gt complex128", lambda lib: lib.ones(2, dtype=lib.complex128).gt(1)),
    ("le method", lambda lib: _c(lib, 2).le(1)),
    ("greater_equal alias", lambda lib: _c(lib, 2).greater_equal(1)),
    ("lt empty", lambda lib: _c(lib, 0).lt(1)),
    ("lt_ in place", lambda lib: _c(lib, 2).lt_(1)),
    ("lt_ real with 1j", lambda lib: lib.ones(2).lt_(1j)),
    ("ge_ tensor", lambda lib: _c(lib, 2, 2).ge_(lib.ones(2, 2))),
    ("eq answers", lambda lib: _c(lib, 2).eq(1)),
    ("real comparisons answer", lambda lib: lib.tensor([1.0, 2.0]) < lib.tensor([2.0, 1.0])),
    # max / min
    ("max()", lambda lib: _c(lib, 2).max()),
    ("min()", lambda lib: _c(lib, 2).min()),
    ("max() empty", lambda lib: _c(lib, 0).max()),
    ("max(0)", lambda lib: _c(lib, 2).max(0)),
    ("min(0)", lambda lib: _c(lib, 2).min(0)),
    ("max(0) 0-d", lambda lib: _z(lib).max(0)),
    ("max(0) empty dim first", lambda lib: _c(lib, 0).max(0)),
    ("max(1) of (0, 2)", lambda lib: _c(lib, 0, 2).max(1)),
    ("max(dim, keepdim)", lambda lib: _c(lib, 2, 2).max(dim=1, keepdim=True)),
    ("max(a, b)", lambda lib: lib.max(_c(lib, 2), _c(lib, 2))),
    ("maximum", lambda lib: lib.maximum(_c(lib, 2), _c(lib, 2))),
    ("minimum promoted", lambda lib: lib.minimum(_c(lib, 2), lib.ones(2))),
    ("maximum 0-d complex", lambda lib: lib.maximum(lib.ones(2), _z(lib))),
    ("max(bool, complex)", lambda lib: lib.ones(2, dtype=lib.bool).max(_c(lib, 2))),
    ("fmax", lambda lib: lib.fmax(_c(lib, 2), lib.ones(2))),
    ("fmin", lambda lib: lib.fmin(_c(lib, 2), lib.ones(2))),
    ("fmax real, complex", lambda lib: lib.ones(2).fmax(_c(lib, 2))),
    ("argmax", lambda lib: _c(lib, 2).argmax()),
    ("argmin", lambda lib: _c(lib, 2).argmin()),
    ("argmax empty", lambda lib: _c(lib, 0).argmax()),
    ("argmax(0) 0-d", lambda lib: _z(lib).argmax(0)),
    ("amax", lambda lib: _c(lib, 2).amax()),
    ("amin", lambda lib: _c(lib, 2).amin()),
    ("amax(1)", lambda lib: _c(lib, 2, 2).amax(1)),
    ("amax empty first", lambda lib: _c(lib, 0).amax()),
    ("aminmax", lambda lib: _c(lib, 2).aminmax()),
    ("aminmax(dim=1)", lambda lib: _c(lib, 2, 2).aminmax(dim=1)),
    ("aminmax empty first", lambda lib: _c(lib, 0).aminmax()),
    # sorting and selecting
    ("sort", lambda lib: _c(lib, 2).sort()),
    ("sort 0-d", lambda lib: _z(lib).sort()),
    ("sort empty", lambda lib: _c(lib, 0).sort()),
    ("sort stable", lambda lib: _c(lib, 2).sort(stable=True)),
    ("sort descending", lambda lib: _c(lib, 2, 2).sort(0, descending=True)),
    ("argsort", lambda lib: _c(lib, 2).argsort()),
    ("argsort stable", lambda lib: _c(lib, 2).argsort(stable=True)),
    ("msort", lambda lib: _c(lib, 2).msort()),
    ("topk", lambda lib: _c(lib, 2).topk(1)),
    ("topk 0-d", lambda lib: _z(lib).topk(1)),
    ("topk k out of range first", lambda lib: _z(lib).topk(2)),
    ("topk empty", lambda lib: _c(lib, 0).topk(1)),
    ("kthvalue", lambda lib: _c(lib, 2).kthvalue(1)),
    ("kthvalue dim 0", lambda lib: _c(lib, 2, 2).kthvalue(1, 0)),
    ("kthvalue 0-d answers", lambda lib: _z(lib).kthvalue(1)),
    ("kthvalue empty first", lambda lib: _c(lib, 0).kthvalue(1)),
    ("median()", lambda lib: _c(lib, 2).median()),
    ("median() 0-d", lambda lib: _z(lib).median()),
    ("median(0)", lambda lib: _c(lib, 2).median(0)),
    ("median(0) 0-d", lambda lib: _z(lib).median(0)),
    ("median(0) empty first", lambda lib: _c(lib, 0).median(0)),
    ("nanmedian()", lambda lib: _c(lib, 2).nanmedian()),
    ("nanmedian(1)", lambda lib: _c(lib, 2, 2).nanmedian(1)),
    ("nanmedian(0) 0-d", lambda lib: _z(lib).nanmedian(0)),
    ("mode", lambda lib: _c(lib, 2).mode()),
    ("mode 0-d answers", lambda lib: _z(lib).mode()),
    ("mode empty first", lambda lib: _c(lib, 0).mode(0)),
    ("cummax", lambda lib: _c(lib, 2).cummax(0)),
    ("cummin", lambda lib: _c(lib, 2, 2).cummin(1)),
    ("cummax 0-d answers", lambda lib: _z(lib).cummax(0)),
    ("cummax empty answers", lambda lib: _c(lib, 0).cummax(0)),
    ("unique", lambda lib: _c(lib, 2).unique()),
    ("unique empty", lambda lib: _c(lib, 0).unique()),
    ("unique counts", lambda lib: lib.unique(_c(lib, 2), return_counts=True)),
    ("unique dim", lambda lib: _c(lib, 2).unique(dim=0)),
    ("unique_consecutive", lambda lib: _c(lib, 2).unique_consecutive()),
    ("searchsorted complex values", lambda lib: lib.searchsorted(lib.ones(2), _c(lib, 2))),
    ("searchsorted complex boundaries", lambda lib: lib.searchsorted(_c(lib, 2), lib.ones(2))),
    ("searchsorted number", lambda lib: lib.searchsorted(_c(lib, 2), 1)),
    ("bucketize", lambda lib: lib.bucketize(_c(lib, 2), _c(lib, 2))),
    # clamp
    ("clamp", lambda lib: _c(lib, 2).clamp(0, 1)),
    ("clamp min", lambda lib: _c(lib, 2).clamp(min=0)),
    ("clamp 0-d complex bound", lambda lib: _z(lib).clamp(min=1j)),
    ("clamp tensor max", lambda lib: _c(lib, 2).clamp(max=lib.ones(2))),
    ("clamp tensors", lambda lib: lib.clamp(_c(lib, 2), lib.zeros(2), lib.ones(2))),
    ("clamp no bounds first", lambda lib: _c(lib, 2).clamp()),
    ("clip", lambda lib: _c(lib, 2).clip(0, 1)),
    ("clamp_", lambda lib: _c(lib, 2).clamp_(0)),
    ("clamp_min", lambda lib: _c(lib, 2).clamp_min(0)),
    ("clamp_min_", lambda lib: _c(lib, 2).clamp_min_(0)),
    ("clamp_max", lambda lib: _c(lib, 2).clamp_max(0)),
    ("clamp_min real with 1j", lambda lib: lib.ones(2).clamp_min(1j)),
    ("clamp_min tensor", lambda lib: _c(lib, 2).clamp_min(lib.ones(2))),
    ("clamp_max tensor", lambda lib: _c(lib, 2).clamp_max(_c(lib, 2))),
    ("clamp_min real with complex tensor", lambda lib: lib.ones(2).clamp_min(_c(lib, 2))),
    ("clamp_max real with complex tensor", lambda lib: lib.ones(2).clamp_max(lib.tensor([1j, 1]))),
]


def _result(fn: Any, lib: Any) -> Any:
    kind, message = outcome(lambda: fn(lib))
    if kind != "ok":
        return kind, message
    out = fn(lib)
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    return [(str(t.tolist()), tuple(t.shape), str(t.dtype)) for t in outs]  # (str: nan == nan)


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_complex_ordering_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)
