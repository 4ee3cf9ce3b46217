"""The creation functions take and refuse arguments as PyTorch's do: a size given as an int where
PyTorch wants a sequence, a float where it wants an int, one argument too many, an unknown
keyword, no tensor for a ``*_like`` function. Each call is compared against real PyTorch: the
exception type and message, or (when both accept it) the shape and dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _x(lib: Any) -> Any:
    return lib.ones(2, 3)


_CALLS: list[tuple[str, Any]] = [
    # full takes a sequence only (unlike zeros); a complex value is complex
    ("full(2, 1)", lambda lib: lib.full(2, 1)),
    ("full(2, 3, 1)", lambda lib: lib.full(2, 3, 1)),
    ("full((2,), 1j)", lambda lib: lib.full((2,), 1j)),
    ("full((2,), 1j, float32)", lambda lib: lib.full((2,), 1j, dtype=lib.float32)),
    ("full((2,), 1+0j, float64)", lambda lib: lib.full((2,), 1 + 0j, dtype=lib.float64)),
    ("full((2,), 'a')", lambda lib: lib.full((2,), "a")),
    # zeros/ones/empty: one sequence, then nothing; PyTorch's type names in messages
    ("zeros((2,), 3)", lambda lib: lib.zeros((2,), 3)),
    ("ones([2], 3)", lambda lib: lib.ones([2], 3)),
    ("empty((2,), 3)", lambda lib: lib.empty((2,), 3)),
    ("zeros(2, float64)", lambda lib: lib.zeros(2, lib.float64)),
    ("ones(2, 3, float64)", lambda lib: lib.ones(2, 3, lib.float64)),
    # rand/randn: PyTorch's overload list for any call that matches none
    ("rand()", lambda lib: lib.rand()),
    ("randn()", lambda lib: lib.randn()),
    ("rand(2, size=(2,))", lambda lib: lib.rand(2, size=(2,))),
    ("randn(2, 3, size=(2,))", lambda lib: lib.randn(2, 3, size=(2,))),
    ("rand((2,), 3)", lambda lib: lib.rand((2,), 3)),
    ("rand(2, foo=1)", lambda lib: lib.rand(2, foo=1)),
    ("randn(2, foo=1, bar=2.0)", lambda lib: lib.randn(2, foo=1, bar=2.0)),
    ("rand(2, generator=1)", lambda lib: lib.rand(2, generator=1)),
    ("rand(2, float64)", lambda lib: lib.rand(2, lib.float64)),
    ("rand(2, generator=None)", lambda lib: lib.rand(2, generator=None)),
    # randint
    ("randint(5, size=2)", lambda lib: lib.randint(5, size=2)),
    ("randint(0, 5, 3)", lambda lib: lib.randint(0, 5, 3)),
    ("randint(5)", lambda lib: lib.randint(5)),
    ("randint()", lambda lib: lib.randint()),
    ("randint(high=5)", lambda lib: lib.randint(high=5)),
    ("randint(5.5, (2,))", lambda lib: lib.randint(5.5, (2,))),
    ("randint(True, (2,))", lambda lib: lib.randint(True, (2,))),
    ("randint(float tensor, (2,))", lambda lib: lib.randint(lib.tensor(3.0), (2,))),
    ("randint(int tensor, (3,))", lambda lib: lib.randint(lib.tensor(5), (3,))),
    ("randint(0, 5.5, (2,))", lambda lib: lib.randint(0, 5.5, (2,))),
    ("randint(0.5, 5, (2,))", lambda lib: lib.randint(0.5, 5, (2,))),
    ("randint(0, 5, (2.0,))", lambda lib: lib.randint(0, 5, (2.0,))),
    ("randint(5, (2,), int32)", lambda lib: lib.randint(5, (2,), lib.int32)),
    ("randint(5, (2,), foo=1)", lambda lib: lib.randint(5, (2,), foo=1)),
    ("randint(5, (2,), generator=1)", lambda lib: lib.randint(5, (2,), generator=1)),
    ("randint(5, (2.0,))", lambda lib: lib.randint(5, (2.0,))),
    ("randint(5, 5)", lambda lib: lib.randint(5, 5)),
    ("randint(high=5, size=(2,))", lambda lib: lib.randint(high=5, size=(2,))),
    ("randint(np.int64(5), (2,))", lambda lib: lib.randint(np.int64(5), (2,))),
    # randint_like
    ("randint_like(x)", lambda lib: lib.randint_like(_x(lib))),
    ("randint_like(x, 5.5)", lambda lib: lib.randint_like(_x(lib), 5.5)),
    ("randint_like(x, 0.5, 5)", lambda lib: lib.randint_like(_x(lib), 0.5, 5)),
    ("randint_like(2, 5)", lambda lib: lib.randint_like(2, 5)),
    ("randint_like(x, x)", lambda lib: lib.randint_like(_x(lib), _x(lib))),
    ("randint_like(x, 5, foo=1)", lambda lib: lib.randint_like(_x(lib), 5, foo=1)),
    ("randint_like(x, int tensor)", lambda lib: lib.randint_like(_x(lib), lib.tensor(5))),
    ("randint_like(x, 1, 5)", lambda lib: lib.randint_like(_x(lib), 1, 5)),
    # randperm
    ("randperm(5.0)", lambda lib: lib.randperm(5.0)),
    ("randperm((5,))", lambda lib: lib.randperm((5,))),
    ("randperm(True)", lambda lib: lib.randperm(True)),
    ("randperm(5, int32)", lambda lib: lib.randperm(5, lib.int32)),
    ("randperm()", lambda lib: lib.randperm()),
    ("randperm(5, foo=1)", lambda lib: lib.randperm(5, foo=1)),
    ("randperm(5, dtype=bool)", lambda lib: lib.randperm(5, dtype=lib.bool)),
    ("randperm(int tensor)", lambda lib: lib.randperm(lib.tensor(3))),
    ("randperm(n=5)", lambda lib: lib.randperm(n=5)),
    # arange
    ("arange()", lambda lib: lib.arange()),
    ("arange((5,))", lambda lib: lib.arange((5,))),
    ("arange('a')", lambda lib: lib.arange("a")),
    ("arange(None)", lambda lib: lib.arange(None)),
    ("arange(end=5)", lambda lib: lib.arange(end=5)),
    ("arange(1, end=5)", lambda lib: lib.arange(1, end=5)),
    ("arange(end=5, step=2)", lambda lib: lib.arange(end=5, step=2)),
    ("arange(1, 'a')", lambda lib: lib.arange(1, "a")),
    ("arange(1, 5, None)", lambda lib: lib.arange(1, 5, None)),
    ("arange(1, None)", lambda lib: lib.arange(1, None)),
    ("arange(1, 5, 2, int32)", lambda lib: lib.arange(1, 5, 2, lib.int32)),
    ("arange(5, foo=1)", lambda lib: lib.arange(5, foo=1)),
    ("arange(5, dtype=bool)", lambda lib: lib.arange(5, dtype=lib.bool)),
    ("arange(1, 5, step=2)", lambda lib: lib.arange(1, 5, step=2)),
    # linspace / logspace
    ("linspace(0, 1)", lambda lib: lib.linspace(0, 1)),
    ("linspace(0, 1, 5.0)", lambda lib: lib.linspace(0, 1, 5.0)),
    ("linspace(0, 1, True)", lambda lib: lib.linspace(0, 1, True)),
    ("linspace(0, 1, (5,))", lambda lib: lib.linspace(0, 1, (5,))),
    ("linspace('a', 1, 5)", lambda lib: lib.linspace("a", 1, 5)),
    ("linspace(0, None, 3)", lambda lib: lib.linspace(0, None, 3)),
    ("linspace(1-d tensor, 1, 5)", lambda lib: lib.linspace(lib.tensor([0.0, 1.0]), 1, 5)),
    ("linspace(0, 1-d tensor, 3)", lambda lib: lib.linspace(0, lib.ones(2), 3)),
    ("linspace(0, 1, 3, foo=1)", lambda lib: lib.linspace(0, 1, 3, foo=1)),
    ("linspace(0, 1j, 3)", lambda lib: lib.linspace(0, 1j, 3)),
    ("linspace(0-d tensor, 1, 5)", lambda lib: lib.linspace(lib.tensor(0.0), 1, 5)),
    ("linspace(0, 1, int tensor)", lambda lib: lib.linspace(0, 1, lib.tensor(3))),
    ("logspace(0, 1)", lambda lib: lib.logspace(0, 1)),
    ("logspace(0, 1, 5.0)", lambda lib: lib.logspace(0, 1, 5.0)),
    ("logspace(1-d tensor, 1, 3)", lambda lib: lib.logspace(lib.ones(2), 1, 3)),
    ("logspace(0, 1, 3, 2)", lambda lib: lib.logspace(0, 1, 3, 2)),
    # eye
    ("eye(2.0)", lambda lib: lib.eye(2.0)),
    ("eye(2, 3.0)", lambda lib: lib.eye(2, 3.0)),
    ("eye((2,))", lambda lib: lib.eye((2,))),
    ("eye()", lambda lib: lib.eye()),
    ("eye(2, None)", lambda lib: lib.eye(2, None)),
    ("eye(True)", lambda lib: lib.eye(True)),
    ("eye(2, 2, 2)", lambda lib: lib.eye(2, 2, 2)),
    ("eye(2, m=3)", lambda lib: lib.eye(2, m=3)),
    ("eye(int tensor)", lambda lib: lib.eye(lib.tensor(2))),
    # *_like
    ("zeros_like(2)", lambda lib: lib.zeros_like(2)),
    ("ones_like((2,))", lambda lib: lib.ones_like((2,))),
    ("empty_like(2)", lambda lib: lib.empty_like(2)),
    ("rand_like(2)", lambda lib: lib.rand_like(2)),
    ("randn_like((2,))", lambda lib: lib.randn_like((2,))),
    ("rand_like()", lambda lib: lib.rand_like()),
    ("rand_like(x, float64)", lambda lib: lib.rand_like(_x(lib), lib.float64)),
    ("randn_like(x, x)", lambda lib: lib.randn_like(_x(lib), _x(lib))),
    ("rand_like(x, size=2)", lambda lib: lib.rand_like(_x(lib), size=2)),
    ("randn_like(x, foo=1)", lambda lib: lib.randn_like(_x(lib), foo=1)),
    ("full_like(2, 2)", lambda lib: lib.full_like(2, 2)),
    ("full_like(x, 'a')", lambda lib: lib.full_like(_x(lib), "a")),
    ("full_like(x, None)", lambda lib: lib.full_like(_x(lib), None)),
    ("full_like(x, 1j)", lambda lib: lib.full_like(_x(lib), 1j)),
    ("full_like(int x, 1j)", lambda lib: lib.full_like(lib.tensor([1, 2]), 1j)),
    ("full_like(bool x, 1j)", lambda lib: lib.full_like(lib.tensor([True]), 1j)),
    ("full_like(x, 1+0j)", lambda lib: lib.full_like(_x(lib), 1 + 0j)),
    # normal with numbers: a sequence size only
    ("normal(0., 1.)", lambda lib: lib.normal(0.0, 1.0)),
    ("normal(0., 1., 2)", lambda lib: lib.normal(0.0, 1.0, 2)),
    ("normal(0., 1., (2,))", lambda lib: lib.normal(0.0, 1.0, (2,))),
]


def _result(fn: Any, lib: Any) -> Any:
    kind, message = outcome(lambda: fn(lib))
    if kind != "ok":
        return kind, message
    out = fn(lib)
    return tuple(out.shape), str(out.dtype)


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_factory_arguments_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


def test_linspace_complex_bounds_values(torch: Any) -> None:
    got, want = rg.linspace(0, 1 + 2j, 5), torch.linspace(0, 1 + 2j, 5)
    assert got.dtype == rg.complex64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_randint_tensor_bound_draws_torchs_numbers(torch: Any) -> None:
    rg.manual_seed(5)
    torch.manual_seed(5)
    assert rg.randint(rg.tensor(7), (6,)).tolist() == torch.randint(torch.tensor(7), (6,)).tolist()
