"""The creation functions' ``out=``, out-of-range sizes and bounds, and keyword misuse, as
PyTorch's: ``zeros(2, out=t)`` fills and returns ``t`` (resized, its dtype, its version bumped);
a size or int argument beyond int64 is refused by the argument parser; a tensor of 2**63 bytes
or more is refused before NumPy (or a sampler) is asked for it; ``arange`` takes no complex
bound with an imaginary part. Each call is compared with real PyTorch: exception type and
message, or the result's values, dtype, flag and (for ``out=``) identity."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def _into(make: Any, call: Any) -> Any:
    """``call(lib, out)`` on a fresh ``make(lib)``: the out tensor afterwards, its version, and
    whether the call returned it."""
    def run(lib: Any) -> Any:
        out = make(lib)
        result = call(lib, out)
        return out.tolist(), str(out.dtype), out.requires_grad, out._version, result is out
    return run


def _f32(lib: Any) -> Any:
    return lib.zeros(2)


_CALLS: list[tuple[str, Any]] = [
    # out=: filled in place and returned, resized to the size asked for, out's dtype
    ("ones(2, out=t)", _into(_f32, lambda lib, o: lib.ones(2, out=o))),
    ("ones(3, out=t[2])", _into(_f32, lambda lib, o: lib.ones(3, out=o))),
    ("zeros(size=(1,), out=t[2])", _into(_f32, lambda lib, o: lib.zeros(size=(1,), out=o))),
    ("ones(2, out=int64)", _into(lambda lib: lib.full((2,), 7), lambda lib, o: lib.ones(2, out=o))),
    ("empty(2, out=int32, dtype=int32) keeps its values",
     _into(lambda lib: lib.full((2,), 5, dtype=lib.int32), lambda lib, o: lib.empty(2, out=o, dtype=lib.int32))),
    ("empty(3, out=t[2]) resizes",
     lambda lib: (lambda o: (tuple(lib.empty(3, out=o).shape), o._version, tuple(o.shape)))(lib.zeros(2))),
    ("full((2,), 3.5, out=int32)", _into(lambda lib: lib.zeros(2, dtype=lib.int32),
                                         lambda lib, o: lib.full((2,), 3.5, out=o))),
    ("ones(2, out=t, requires_grad=True)", _into(_f32, lambda lib, o: lib.ones(2, out=o, requires_grad=True))),
    ("no_grad ones(2, out=leaf)", _into(lambda lib: lib.zeros(2, requires_grad=True),
                                        lambda lib, o: lib.no_grad()(lambda: lib.ones(2, out=o))())),
    ("normal(0, 1, (3,), out=float64)",
     _into(lambda lib: (lib.manual_seed(0), lib.zeros(2, dtype=lib.float64))[1],
           lambda lib, o: lib.normal(0.0, 1.0, (3,), out=o))),
    ("ones(2, out=view) writes its base", lambda lib: (lambda b: (lib.ones(2, out=b[:, 0]), b.tolist())[1])(lib.zeros(2, 2))),
    # out=: what it refuses
    ("ones(2, out='a')", lambda lib: lib.ones(2, out="a")),
    ("zeros(size=(2,), out=1)", lambda lib: lib.zeros(size=(2,), out=1)),
    ("ones(2, out=float32, dtype=float64)", lambda lib: lib.ones(2, out=lib.zeros(2), dtype=lib.float64)),
    ("full((2,), 3, out=float32, dtype=int64)", lambda lib: lib.full((2,), 3, out=lib.zeros(2), dtype=lib.int64)),
    ("full((2,), 1j, out=float32)", lambda lib: lib.full((2,), 1j, out=lib.zeros(2))),
    ("normal(0, 1, (2,), out=float32, dtype=float64)",
     lambda lib: lib.normal(0.0, 1.0, (2,), out=lib.zeros(2), dtype=lib.float64)),
    ("ones(2, out=leaf requiring grad)", lambda lib: lib.ones(2, out=lib.zeros(2, requires_grad=True))),
    # keywords: a missing or bad size is named before an unknown keyword
    ("zeros(foo=1)", lambda lib: lib.zeros(foo=1)),
    ("ones(foo=1, bar=2)", lambda lib: lib.ones(foo=1, bar=2)),
    ("ones(2.5, foo=1)", lambda lib: lib.ones(2.5, foo=1)),
    ("zeros(size=2, foo=1)", lambda lib: lib.zeros(size=2, foo=1)),
    ("empty(2, foo=1, out=t)", lambda lib: lib.empty(2, foo=1, out=lib.zeros(2))),
    ("zeros(2, foo=1)", lambda lib: lib.zeros(2, foo=1)),
    # Python's float as a dtype is float64, whatever the default dtype
    ("zeros(2, dtype=float)", lambda lib: lib.zeros(2, dtype=float)),
    ("ones(2).to(float)", lambda lib: lib.ones(2).to(float)),
    # int arguments beyond int64
    ("eye(2**70)", lambda lib: lib.eye(2**70)),
    ("eye(3, 2**70)", lambda lib: lib.eye(3, 2**70)),
    ("randperm(2**63)", lambda lib: lib.randperm(2**63)),
    ("linspace(0, 1, 2**70)", lambda lib: lib.linspace(0, 1, 2**70)),
    # storage of 2**63 bytes or more
    ("zeros(2**62)", lambda lib: lib.zeros(2**62)),
    ("ones(2**40, 2**40)", lambda lib: lib.ones(2**40, 2**40)),
    ("empty(2**63 - 1)", lambda lib: lib.empty(2**63 - 1)),
    ("full((2**62,), 1)", lambda lib: lib.full((2**62,), 1)),
    ("rand(2**62)", lambda lib: lib.rand(2**62)),
    ("randn(2**31, 2**31, 2)", lambda lib: lib.randn(2**31, 2**31, 2)),
    # arange: complex bounds, ints beyond 64 bits
    ("arange(1j)", lambda lib: lib.arange(1j)),
    ("arange(0, 1j)", lambda lib: lib.arange(0, 1j)),
    ("arange(0, 5, 1j)", lambda lib: lib.arange(0, 5, 1j)),
    ("arange(tensor(1j))", lambda lib: lib.arange(lib.tensor(1j))),
    ("arange(1+0j)", lambda lib: lib.arange(1 + 0j)),
    ("arange(0.5+0j, 3)", lambda lib: lib.arange(0.5 + 0j, 3)),
    ("arange(2**63)", lambda lib: lib.arange(2**63)),
    ("arange(0, 2**70)", lambda lib: lib.arange(0, 2**70)),
    ("arange(0, 5, 2**70)", lambda lib: lib.arange(0, 5, 2**70)),
    ("arange(-2**70)", lambda lib: lib.arange(-2**70)),
]


def _result(fn: Any, lib: Any) -> Any:
    kind, message = outcome(lambda: fn(lib))
    if kind != "ok":
        return kind, message
    out = fn(lib)
    if isinstance(out, lib.Tensor):
        return out.tolist(), str(out.dtype), out.requires_grad
    return out


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_factory_call_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


_OVERFLOWING_SIZES: list[tuple[str, Any]] = [
    ("zeros(2**70)", lambda lib: lib.zeros(2**70)),
    ("zeros(2**63)", lambda lib: lib.zeros(2**63)),
    ("zeros(-2**70)", lambda lib: lib.zeros(-2**70)),
    ("ones((2**70,))", lambda lib: lib.ones((2**70,))),
    ("zeros(2, 2**70)", lambda lib: lib.zeros(2, 2**70)),
    ("empty(size=(2**70,))", lambda lib: lib.empty(size=(2**70,))),
    ("full((2, 2**64), 1)", lambda lib: lib.full((2, 2**64), 1)),
    ("rand(2**70)", lambda lib: lib.rand(2**70)),
    ("randint(5, (2**70,))", lambda lib: lib.randint(5, (2**70,))),
]


@pytest.mark.parametrize("call", _OVERFLOWING_SIZES, ids=[c[0] for c in _OVERFLOWING_SIZES])
def test_size_beyond_int64_is_refused_as_torch(torch: Any, call: Any) -> None:
    """PyTorch's message goes on with a C++ traceback of its build after the first line; ours is
    that line, with the closing quote."""
    _, fn = call
    ours, theirs = outcome(lambda: fn(rg)), outcome(lambda: fn(torch))
    assert ours[0] == theirs[0] == "TypeError"
    assert ours[1] == theirs[1].splitlines()[0] + '"'
