"""The bounded constraints (integer ones built on the real-valued ones) and ``cat``/``stack`` of
constraints against PyTorch: checks at and around the bounds, ``is_discrete``, ``event_dim``, reprs."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg

VALUES = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("nan"), float("inf")]

MAKERS = [
    lambda C: C.integer_interval(-1, 2), lambda C: C.integer_interval(lower_bound=0, upper_bound=1),
    lambda C: C.nonnegative_integer, lambda C: C.positive_integer, lambda C: C.boolean,
    lambda C: C.interval(-1.0, 1.0), lambda C: C.half_open_interval(-1.0, 1.0), lambda C: C.unit_interval,
    lambda C: C.greater_than(0.5), lambda C: C.greater_than_eq(0.5), lambda C: C.less_than(1.0),
    lambda C: C.positive, lambda C: C.nonnegative,
]


def _describe(lib: Any, make: Any) -> Any:
    c = make(lib.distributions.constraints)
    checked = c.check(lib.tensor(VALUES)).tolist()
    return repr(c), c.is_discrete, c.event_dim, checked


@pytest.mark.parametrize("make", MAKERS)
def test_bounded_constraints_match_pytorch(torch: Any, make: Any) -> None:
    assert _describe(rg, make) == _describe(torch, make)


def test_integer_less_than_includes_its_bound_as_pytorch(torch: Any) -> None:
    from torch.distributions import constraints as tc

    from retrograd.distributions import constraints as rc

    ours, theirs = rc._IntegerLessThan(2), tc._IntegerLessThan(2)
    assert repr(ours) == repr(theirs) == "IntegerLessThan(upper_bound=2)"
    assert ours.is_discrete and theirs.is_discrete
    assert ours.check(rg.tensor(VALUES)).tolist() == theirs.check(torch.tensor(VALUES)).tolist()


def _joined(lib: Any) -> Any:
    C = lib.distributions.constraints
    cat = C.cat([C.positive_integer, C.unit_interval], dim=0, lengths=[2, 1])
    stack = C.stack([C.nonnegative_integer, C.real], dim=-1)
    mixed = C.stack([C.real, C.positive], dim=0)
    value = lib.tensor([[1.0, 0.0], [2.0, -1.5], [0.5, 3.0]])
    return (cat.is_discrete, cat.event_dim, cat.check(value).tolist(), stack.is_discrete, stack.event_dim,
            stack.check(value).tolist(), mixed.is_discrete, mixed.event_dim)


def test_cat_and_stack_of_constraints_match_pytorch(torch: Any) -> None:
    assert _joined(rg) == _joined(torch)
