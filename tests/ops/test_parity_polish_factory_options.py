"""The creation functions' ``out=`` (``eye``, ``arange``, ``linspace``, ``logspace``, ``rand``,
``randn``, ``randint``), ``layout=`` and ``pin_memory=`` (``torch.strided`` and ``False``/``None``
taken, ``pin_memory=True`` refused: there is no accelerator), and flags that are no bool
(``requires_grad=1``), as PyTorch's parser takes or refuses them. Each call is compared with real
PyTorch: exception type and message (the first line: the overload list follows), or the result's
values, dtype and flag, and for ``out=`` whether the call returned ``out``."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def _into(make: Any, call: Any, values: bool = True) -> Any:
    """``call(lib, out)`` on a fresh ``make(lib)``: out afterwards (its values unless the call
    draws at random), and whether the call returned it."""
    def run(lib: Any) -> Any:
        out = make(lib)
        result = call(lib, out)
        return (out.tolist() if values else tuple(out.shape)), str(out.dtype), out.requires_grad, result is out
    return run


def _f32(lib: Any) -> Any:
    return lib.empty(0)


def _i64(lib: Any) -> Any:
    return lib.empty(0, dtype=lib.int64)


_OUT_CALLS: list[tuple[str, Any]] = [
    ("eye(2, out=)", _into(_f32, lambda lib, o: lib.eye(2, out=o))),
    ("eye(2, 3, out=int64)", _into(_i64, lambda lib, o: lib.eye(2, 3, out=o))),
    ("eye(2, dtype=float64, out=float32)", _into(_f32, lambda lib, o: lib.eye(2, dtype=lib.float64, out=o))),
    ("eye(2, out=, requires_grad=True)", _into(_f32, lambda lib, o: lib.eye(2, out=o, requires_grad=True))),
    ("arange(3, out=float32)", _into(_f32, lambda lib, o: lib.arange(3, out=o))),
    ("arange(1, 4, out=int64)", _into(_i64, lambda lib, o: lib.arange(1, 4, out=o))),
    ("arange(0, 1, 0.25, out=)", _into(_f32, lambda lib, o: lib.arange(0, 1, 0.25, out=o))),
    ("arange(3, dtype=float64, out=float32)", _into(_f32, lambda lib, o: lib.arange(3, dtype=lib.float64, out=o))),
    ("arange(3, out= requiring grad)", _into(lambda lib: lib.zeros(1, requires_grad=True),
                                             lambda lib, o: lib.arange(3, out=o))),
    ("linspace(0, 1, 5, out=)", _into(_f32, lambda lib, o: lib.linspace(0, 1, 5, out=o))),
    ("linspace(0, 2, 3, out=int64)", _into(_i64, lambda lib, o: lib.linspace(0, 2, 3, out=o))),
    ("logspace(0, 1, 5, out=)", _into(_f32, lambda lib, o: lib.logspace(0, 1, 5, out=o))),
    ("logspace(0, 2, 3, out=int64)", _into(_i64, lambda lib, o: lib.logspace(0, 2, 3, out=o))),
    ("logspace(0, 2, 3, base=2, out=float64[5])", _into(lambda lib: lib.zeros(5, dtype=lib.float64),
                                                        lambda lib, o: lib.logspace(0, 2, 3, base=2, out=o))),
    ("randn(2, out=float64)", _into(lambda lib: lib.empty(0, dtype=lib.float64),
                                    lambda lib, o: lib.randn(2, out=o), values=False)),
    ("rand(2, 3, out=)", _into(_f32, lambda lib, o: lib.rand(2, 3, out=o), values=False)),
    ("rand(2, out=int64)", _into(_i64, lambda lib, o: lib.rand(2, out=o), values=False)),
    ("rand(2, dtype=float64, out=float32)", _into(_f32, lambda lib, o: lib.rand(2, dtype=lib.float64, out=o),
                                                  values=False)),
    ("randint(3, (2,), out=int64)", _into(_i64, lambda lib, o: lib.randint(3, (2,), out=o), values=False)),
    ("randint(3, (2,), out=float32)", _into(_f32, lambda lib, o: lib.randint(3, (2,), out=o), values=False)),
    ("full((2,), 3.0, out=)", _into(_f32, lambda lib, o: lib.full((2,), 3.0, out=o))),
    ("empty(2, out=)", _into(_f32, lambda lib, o: lib.empty(2, out=o), values=False)),
]

_OPTION_CALLS: list[tuple[str, Any]] = [
    *((f"{name} layout=strided pin_memory=False", call) for name, call in [
        ("zeros", lambda lib, **kw: lib.zeros(2, **kw)),
        ("ones", lambda lib, **kw: lib.ones(2, **kw)),
        ("empty", lambda lib, **kw: lib.empty(2, **kw).shape),
        ("full", lambda lib, **kw: lib.full((2,), 1.0, **kw)),
        ("eye", lambda lib, **kw: lib.eye(2, **kw)),
        ("arange", lambda lib, **kw: lib.arange(3, **kw)),
        ("linspace", lambda lib, **kw: lib.linspace(0, 1, 3, **kw)),
        ("logspace", lambda lib, **kw: lib.logspace(0, 1, 3, **kw)),
        ("randn", lambda lib, **kw: lib.randn(2, **kw).shape),
        ("rand", lambda lib, **kw: lib.rand(2, **kw).shape),
        ("randint", lambda lib, **kw: lib.randint(3, (2,), **kw).shape),
        ("randperm", lambda lib, **kw: lib.randperm(3, **kw).shape),
        ("zeros_like", lambda lib, **kw: lib.zeros_like(lib.ones(2), **kw)),
        ("ones_like", lambda lib, **kw: lib.ones_like(lib.ones(2), **kw)),
        ("empty_like", lambda lib, **kw: lib.empty_like(lib.ones(2), **kw).shape),
        ("full_like", lambda lib, **kw: lib.full_like(lib.ones(2), 3, **kw)),
        ("rand_like", lambda lib, **kw: lib.rand_like(lib.ones(2), **kw).shape),
    ] for call in [lambda lib, c=call: c(lib, layout=lib.strided, pin_memory=False)]),
    ("zeros layout=None pin_memory=None", lambda lib: lib.zeros(2, layout=None, pin_memory=None)),
    ("zeros_like layout=None pin_memory=None",
     lambda lib: lib.zeros_like(lib.ones(2), layout=None, pin_memory=None)),
    ("tensor pin_memory=False", lambda lib: lib.tensor([1.0], pin_memory=False)),
    # refused: pinned memory needs an accelerator
    ("zeros pin_memory=True", lambda lib: lib.zeros(2, pin_memory=True)),
    ("full pin_memory=True", lambda lib: lib.full((2,), 1.0, pin_memory=True)),
    ("empty pin_memory=True", lambda lib: lib.empty(2, pin_memory=True)),
    ("zeros_like pin_memory=True", lambda lib: lib.zeros_like(lib.ones(2), pin_memory=True)),
    ("tensor pin_memory=True", lambda lib: lib.tensor([1.0], pin_memory=True)),
    ("arange pin_memory=True", lambda lib: lib.arange(3, pin_memory=True)),
    ("randn pin_memory=True", lambda lib: lib.randn(2, pin_memory=True)),
    ("rand_like pin_memory=True", lambda lib: lib.rand_like(lib.ones(1), pin_memory=True)),
    # refused: an argument of the wrong type (one overload: the argument named; several: all listed)
    ("zeros layout=str", lambda lib: lib.zeros(2, layout="strided")),
    ("zeros layout=dtype", lambda lib: lib.zeros(2, layout=lib.float32)),
    ("zeros pin_memory=1", lambda lib: lib.zeros(2, pin_memory=1)),
    ("zeros pin_memory=1 before requires_grad=1",
     lambda lib: lib.zeros(2, layout=lib.strided, pin_memory=1, requires_grad=1)),
    ("zeros layout=1 before requires_grad=1", lambda lib: lib.zeros(2, layout=1, requires_grad=1)),
    ("zeros requires_grad=1 before pin_memory=True", lambda lib: lib.zeros(2, requires_grad=1, pin_memory=True)),
    ("eye pin_memory=1", lambda lib: lib.eye(2, pin_memory=1)),
    ("eye layout=1", lambda lib: lib.eye(2, layout=1)),
    ("tensor pin_memory=1", lambda lib: lib.tensor([1.0], pin_memory=1)),
    # requires_grad: a bool (None where the parser takes an optional bool)
    ("zeros requires_grad=1", lambda lib: lib.zeros(2, requires_grad=1)),
    ("zeros requires_grad=0", lambda lib: lib.zeros(2, requires_grad=0)),
    ("zeros requires_grad=1.0", lambda lib: lib.zeros(2, requires_grad=1.0)),
    ("zeros requires_grad=None", lambda lib: lib.zeros(2, requires_grad=None)),
    ("ones requires_grad=1", lambda lib: lib.ones(2, requires_grad=1)),
    ("empty requires_grad=1", lambda lib: lib.empty(2, requires_grad=1)),
    ("full requires_grad=1", lambda lib: lib.full((2,), 1.0, requires_grad=1)),
    ("zeros_like requires_grad=1", lambda lib: lib.zeros_like(lib.ones(2), requires_grad=1)),
    ("empty_like requires_grad=1", lambda lib: lib.empty_like(lib.ones(2), requires_grad=1)),
    ("full_like requires_grad=1", lambda lib: lib.full_like(lib.ones(2), 2, requires_grad=1)),
    ("tensor requires_grad=1", lambda lib: lib.tensor([1.0], requires_grad=1)),
    ("tensor requires_grad=None", lambda lib: lib.tensor([1.0], requires_grad=None)),
    ("eye requires_grad=1", lambda lib: lib.eye(2, requires_grad=1)),
    ("eye requires_grad=None", lambda lib: lib.eye(2, requires_grad=None)),
    ("arange requires_grad=1", lambda lib: lib.arange(2.0, requires_grad=1)),
    ("linspace requires_grad=1", lambda lib: lib.linspace(0, 1, 2, requires_grad=1)),
    ("logspace requires_grad=1", lambda lib: lib.logspace(0, 1, 2, requires_grad=1)),
    ("randn requires_grad=1", lambda lib: lib.randn(2, requires_grad=1)),
    ("randn requires_grad=None", lambda lib: lib.randn(2, requires_grad=None).shape),
    ("randint requires_grad=1", lambda lib: lib.randint(2, (2,), requires_grad=1)),
    ("randperm requires_grad=1", lambda lib: lib.randperm(2, requires_grad=1)),
    ("rand_like requires_grad=1", lambda lib: lib.rand_like(lib.ones(1), requires_grad=1)),
]


def _result(fn: Any, lib: Any) -> Any:
    kind, message = outcome(lambda: fn(lib))
    if kind != "ok":
        return kind, message.splitlines()[0]
    out = fn(lib)
    if isinstance(out, lib.Tensor):
        return out.tolist(), str(out.dtype), out.requires_grad
    return out if isinstance(out, tuple) else tuple(out)


_CALLS = _OUT_CALLS + _OPTION_CALLS


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_factory_option_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


def test_out_draws_as_without_it(torch: Any) -> None:
    """``rand``/``randn``/``randint`` into ``out=`` draw the numbers the call without it draws
    after the same seed, in out's dtype, as PyTorch's."""
    def draws(lib: Any) -> Any:
        lib.manual_seed(3)
        a = lib.randn(3, out=lib.empty(0, dtype=lib.float64))
        b = lib.rand(2, out=lib.empty(0))
        c = lib.randint(0, 10, (4,), out=lib.empty(0, dtype=lib.int32))
        return [(t.tolist(), str(t.dtype)) for t in (a, b, c)]

    ours, theirs = draws(rg), draws(torch)
    assert [d for _, d in ours] == [d for _, d in theirs]
    assert ours[2] == theirs[2]
    for (x, _), (y, _) in zip(ours[:2], theirs[:2], strict=True):
        assert x == pytest.approx(y, rel=1e-6)
