"""``masked_scatter`` and ``masked_scatter_`` check their arguments in PyTorch's order, each its
own: the function broadcasts mask and self first (then source's dtype, then the mask's dtype,
then source's length); the in-place form checks source's dtype first, then expands the mask to
self's shape. Mask and source must be tensors (``masked_select``'s mask too). Each call is compared with real PyTorch: the
exception type and message, or the result; gradients by gradcheck."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome, outcome_and_value


def _bool(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.bool)


def _long(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.int64)


def _f64(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float64)


_CALLS: list[tuple[str, Any]] = [
    # the function: broadcast, then dtypes, then the mask's dtype, then the count
    ("int mask, other dtype", lambda lib: lib.zeros(3).masked_scatter(_long(lib, 3), _f64(lib, 3))),
    ("mask not broadcastable", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 4), lib.ones(4))),
    ("not broadcastable, int mask", lambda lib: lib.zeros(3).masked_scatter(_long(lib, 4), lib.ones(4))),
    ("not broadcastable, other dtype", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 4), _f64(lib, 4))),
    ("not broadcastable, short source", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 4), lib.ones(1))),
    ("int mask, short source", lambda lib: lib.zeros(3).masked_scatter(_long(lib, 3), lib.ones(1))),
    ("short source, other dtype", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 3), _f64(lib, 1))),
    ("function form, int mask, other dtype",
     lambda lib: lib.masked_scatter(lib.zeros(3), _long(lib, 3), _f64(lib, 3))),
    ("mask broadcasts self", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 2, 3), lib.arange(6.0))),
    ("mask (2, 1) broadcasts, other dtype", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 2, 1), _f64(lib, 6))),
    # the in-place form: dtypes, then the mask expanded to self's shape, then its dtype, then the count
    ("_ mask not expandable", lambda lib: lib.zeros(3).masked_scatter_(_bool(lib, 4), lib.ones(4))),
    ("_ int mask not expandable", lambda lib: lib.zeros(3).masked_scatter_(_long(lib, 4), lib.ones(4))),
    ("_ not expandable, other dtype", lambda lib: lib.zeros(3).masked_scatter_(_long(lib, 4), _f64(lib, 4))),
    ("_ mask with more dims", lambda lib: lib.zeros(3).masked_scatter_(_bool(lib, 2, 3), lib.ones(6))),
    ("_ int mask with more dims", lambda lib: lib.zeros(3).masked_scatter_(_long(lib, 2, 3), lib.ones(6))),
    ("_ more dims, other dtype", lambda lib: lib.zeros(3).masked_scatter_(_bool(lib, 2, 3), _f64(lib, 6))),
    ("_ int mask, short source", lambda lib: lib.zeros(3).masked_scatter_(_long(lib, 3), lib.ones(1))),
    ("_ mask expands", lambda lib: lib.zeros(2, 3).masked_scatter_(_bool(lib, 3), lib.arange(6.0))),
    ("_ mask expands, short source", lambda lib: lib.zeros(2, 3).masked_scatter_(_bool(lib, 3), lib.ones(1))),
    # tensors only
    ("mask an int", lambda lib: lib.zeros(3).masked_scatter(1, lib.ones(3))),
    ("mask a list", lambda lib: lib.zeros(3).masked_scatter([True, False, True], lib.ones(3))),
    ("source a float", lambda lib: lib.zeros(3).masked_scatter(_bool(lib, 3), 1.0)),
    ("_ mask a list", lambda lib: lib.zeros(3).masked_scatter_([True, False, True], lib.ones(3))),
    # masked_select takes its mask as masked_scatter does: a tensor only
    ("masked_select mask a list", lambda lib: lib.masked_select(lib.zeros(3), [True, False, True])),
    ("masked_select mask an int", lambda lib: lib.zeros(3).masked_select(1)),
]


def _result(fn: Any, lib: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, out = outcome_and_value(lambda: fn(lib))
    if seen[0] != "ok":
        return seen
    return out.tolist(), str(out.dtype)


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_masked_scatter_checks_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


@pytest.mark.parametrize("in_place", [False, True])
def test_uint8_mask_warns_then_refuses_as_torch(torch: Any, in_place: bool) -> None:
    def run(lib: Any) -> Any:
        x, mask = lib.zeros(3), lib.ones(3, dtype=lib.uint8)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            kind, message = outcome(lambda: (x.masked_scatter_ if in_place else x.masked_scatter)(mask, lib.ones(3)))
        return kind, message, [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in seen]
    assert run(rg) == run(torch)


def test_masked_scatter_gradients_both_forms() -> None:
    mask = rg.tensor([[True, False, True], [False, True, False]])

    def function(x: rg.Tensor, source: rg.Tensor) -> rg.Tensor:
        return x.masked_scatter(mask[0], source)

    def in_place(x: rg.Tensor, source: rg.Tensor) -> rg.Tensor:
        return (x * 1).masked_scatter_(mask[0], source)

    x = rg.randn(2, 3, dtype=rg.float64, requires_grad=True)
    source = rg.randn(5, dtype=rg.float64, requires_grad=True)
    for f in (function, in_place):
        assert rg.autograd.gradcheck(f, (x, source))
        assert rg.autograd.gradgradcheck(f, (x, source))
    assert in_place(x, source).grad_fn.name() == "MaskedScatterBackward0"
