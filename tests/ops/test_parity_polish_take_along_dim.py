"""``take_along_dim`` as PyTorch 2.13's: along a ``dim`` it takes each index modulo the dim's
size (a negative index counts from the end, one past the end wraps; gather itself would refuse
both), indices must be int64, and a 0-d input names its missing dim; with no ``dim`` (the
flattened input) an index out of range is refused as gather refuses it. Each call is compared
with real PyTorch (values, or exception type and message), gradients by gradcheck and by
PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _t(lib: Any) -> Any:
    return lib.arange(6.0).reshape(2, 3)


_CALLS: list[tuple[str, Any]] = [
    ("index == size, dim 1", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[3], [0]]), 1)),
    ("index -1, dim 1", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[-1], [0]]), 1)),
    ("index -4, dim 1", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[-4], [-7]]), 1)),
    ("index 2**40, dim -1", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[2**40], [100]]), -1)),
    ("index 2, dim 0", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[2, 0, -3]]), 0)),
    ("method, broadcast index", lambda lib: _t(lib).take_along_dim(lib.tensor([[5, -2]]), dim=1)),
    ("empty dim", lambda lib: lib.take_along_dim(lib.zeros(2, 0), lib.tensor([[0], [0]]), 1)),
    ("empty dim, empty index", lambda lib: lib.take_along_dim(lib.zeros(2, 0), lib.zeros(2, 0, dtype=lib.int64), 1)),
    ("int32 index with dim", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([[0], [1]]).int(), 1)),
    ("int32 index, no dim", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([1]).int())),
    ("0-d, dim 0", lambda lib: lib.take_along_dim(lib.tensor(1.0), lib.tensor(0), 0)),
    ("0-d, dim -1", lambda lib: lib.take_along_dim(lib.tensor(1.0), lib.tensor(0), -1)),
    ("0-d, dim 1", lambda lib: lib.take_along_dim(lib.tensor(1.0), lib.tensor(0), 1)),
    # no dim: the flattened input, out-of-range indices refused
    ("no dim, index 6", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([6]))),
    ("no dim, index -1", lambda lib: lib.take_along_dim(_t(lib), lib.tensor([-1]))),
]


def _result(fn: Any, lib: Any) -> Any:
    kind, message = outcome(lambda: fn(lib))
    if kind != "ok":
        return kind, message
    out = fn(lib)
    return tuple(out.shape), str(out.dtype), out.tolist()


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_take_along_dim_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


def test_wrapped_indices_gradient_as_torch(torch: Any) -> None:
    index = [[4, -1, 3], [-6, 2, 7]]

    def grad(lib: Any) -> Any:
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        out = lib.take_along_dim(x, lib.tensor(index), 1)
        (out * lib.arange(1.0, 7.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return out.grad_fn.name(), x.grad.numpy()

    (ours_name, ours), (theirs_name, theirs) = grad(rg), grad(torch)
    assert ours_name == theirs_name
    np.testing.assert_allclose(ours, theirs)

    x = rg.randn(2, 3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: rg.take_along_dim(t, rg.tensor(index), 1), (x,))
    assert rg.autograd.gradgradcheck(lambda t: rg.take_along_dim(t, rg.tensor(index), 1), (x,))
