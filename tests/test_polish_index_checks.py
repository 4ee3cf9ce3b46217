"""Argument checks of ``is_same_size``, ``select`` and the gather/scatter/index_add family as
PyTorch's: the exception type and message (or, where both accept a call, the result's shape,
dtype and node); a ``src`` larger than ``index`` is taken by the forward but its gradient is
refused in backward, as PyTorch's engine refuses it, instead of a padded gradient."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome, outcome_and_value


def _g(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float64, requires_grad=True)


def _backward(fn: Any) -> Any:
    def run(lib: Any) -> Any:
        out = fn(lib)
        out.sum().backward()
        return out
    return run


_CALLS: list[tuple[str, Any]] = [
    ("is_same_size(t, 3)", lambda lib: lib.ones(2).is_same_size(3)),
    ("is_same_size(t, None)", lambda lib: lib.ones(2).is_same_size(None)),
    ("fn is_same_size(t, 3)", lambda lib: lib.is_same_size(lib.ones(2), 3)),
    ("fn is_same_size(3, t)", lambda lib: lib.is_same_size(3, lib.ones(2))),
    ("is_same_size ok", lambda lib: lib.ones(2).is_same_size(lib.zeros(2))),
    ("select(0, 5)", lambda lib: lib.ones(3, 4).select(0, 5)),
    ("select(0, -4)", lambda lib: lib.ones(3, 4).select(0, -4)),
    ("select(1, 4)", lambda lib: lib.ones(3, 4).select(1, 4)),
    ("select(-1, 4)", lambda lib: lib.ones(3, 4).select(-1, 4)),
    ("select(0, 1.0)", lambda lib: lib.ones(3, 4).select(0, 1.0)),
    ("select(0, True)", lambda lib: lib.ones(3, 4).select(0, True)),
    ("select(0.0, 1)", lambda lib: lib.ones(3, 4).select(0.0, 1)),
    ("select(0, float tensor)", lambda lib: lib.ones(3, 4).select(0, lib.tensor(1.0))),
    ("select(0, int tensor)", lambda lib: lib.ones(3, 4).select(0, lib.tensor(1))),
    ("select(0, np.int64)", lambda lib: lib.ones(3, 4).select(0, np.int64(-1))),
    # a src larger than index: forward fine, backward refuses src's gradient
    ("scatter src larger", _backward(lambda lib: _g(lib, 2, 3).scatter(0, lib.tensor([[0, 1]]), _g(lib, 3, 5)))),
    ("scatter src larger in dim", _backward(lambda lib: _g(lib, 2, 3).scatter(0, lib.tensor([[0, 1]]), _g(lib, 2, 2)))),
    ("scatter src larger, no grad", _backward(
        lambda lib: _g(lib, 2, 3).scatter(0, lib.tensor([[0, 1]]), lib.ones(3, 5, dtype=lib.float64)))),
    ("scatter_add src larger", _backward(lambda lib: _g(lib, 2, 3).scatter_add(0, lib.tensor([[0, 1]]), _g(lib, 3, 5)))),
    ("scatter_add_ src larger", _backward(
        lambda lib: (_g(lib, 2, 3) * 1).scatter_add_(0, lib.tensor([[0, 1]]), _g(lib, 3, 5)))),
    ("scatter_reduce sum src larger", _backward(
        lambda lib: _g(lib, 2, 3).scatter_reduce(0, lib.tensor([[0, 1]]), _g(lib, 3, 5), "sum"))),
    ("scatter_reduce mean src larger", _backward(
        lambda lib: _g(lib, 2, 3).scatter_reduce(0, lib.tensor([[0, 1]]), _g(lib, 1, 5), "mean"))),
    ("scatter_reduce src larger, no grad", _backward(
        lambda lib: _g(lib, 2, 3).scatter_reduce(0, lib.tensor([[0, 1]]), lib.ones(3, 5, dtype=lib.float64), "mean"))),
    ("scatter same shape", _backward(lambda lib: _g(lib, 2, 3).scatter(0, lib.tensor([[0, 1]]), _g(lib, 1, 2)))),
    # shape and type checks
    ("scatter index dims", lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([0, 1]), lib.ones(2, 3))),
    ("scatter value index dims", lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([0, 1]), 2.0)),
    ("scatter_add index dims", lambda lib: lib.ones(2, 3).scatter_add(0, lib.tensor([0, 1]), lib.ones(2, 3))),
    ("scatter_reduce index dims", lambda lib: lib.ones(2, 3).scatter_reduce(0, lib.tensor([0, 1]), lib.ones(2, 3), "sum")),
    ("gather index dims", lambda lib: lib.ones(2, 3).gather(0, lib.tensor([0, 1]))),
    ("scatter value index larger", lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0, 1, 0, 1]]), 2.0)),
    ("scatter index larger than src", lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0, 1, 0]]), lib.ones(1, 2))),
    ("scatter index larger than self", lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0, 1, 0, 1]]), lib.ones(2, 4))),
    ("gather index larger", lambda lib: lib.ones(2, 3).gather(0, lib.tensor([[0, 1, 0, 1]]))),
    ("scatter_add float src", lambda lib: lib.ones(2, 3).scatter_add(0, lib.tensor([[0, 1]]), 1.0)),
    ("scatter_add None src", lambda lib: lib.ones(2, 3).scatter_add(0, lib.tensor([[0, 1]]), None)),
    ("scatter_add_ float src", lambda lib: lib.ones(2, 3).scatter_add_(0, lib.tensor([[0, 1]]), 1.0)),
    ("index_add index 2-d", lambda lib: lib.ones(3, 2).index_add(0, lib.tensor([[0, 1]]), lib.ones(2, 2))),
    ("index_add float index", lambda lib: lib.ones(3, 2).index_add(0, lib.tensor([0.0, 1.0]), lib.ones(2, 2))),
    ("index_add int16 index", lambda lib: lib.ones(3, 2).index_add(0, lib.tensor([0, 1], dtype=lib.int16), lib.ones(2, 2))),
    ("index_add_ index 2-d", lambda lib: lib.ones(3, 2).index_add_(0, lib.tensor([[0]]), lib.ones(1, 2))),
]


def _result(fn: Any, lib: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, out = outcome_and_value(lambda: fn(lib))
    if seen[0] != "ok":
        return seen
    if isinstance(out, bool):
        return out
    return tuple(out.shape), str(out.dtype), type(out.grad_fn).__name__


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_index_argument_checks_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


def test_scatter_reduce_with_a_bad_mode_raises_before_the_deprecation_warning(torch: Any) -> None:
    for lib in (torch, rg):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning first would surface as UserWarning
            kind, message = outcome(lambda lib=lib: lib.ones(2, 3).scatter(0, lib.tensor([[0, 1]]), lib.ones(2, 3),
                                                                           reduce="sum"))
        assert (kind, message) == ("RuntimeError", "reduce argument must be either add or multiply.")


def test_scatter_src_gradient_when_shapes_match(torch: Any) -> None:
    grads = []
    for lib in (torch, rg):
        src = lib.arange(6, dtype=lib.float64).reshape(2, 3).requires_grad_()
        out = lib.zeros(3, 3, dtype=lib.float64).scatter(0, lib.tensor([[0, 2, 1], [1, 0, 2]]), src)
        (out * lib.arange(9, dtype=lib.float64).reshape(3, 3)).sum().backward()
        grads.append(src.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
