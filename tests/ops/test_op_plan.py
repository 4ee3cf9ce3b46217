"""An op is its declaration plus the run plan derived from it at one point (ops/plan.py): the
plan is its own object, built from the declaration alone, never changed afterwards, and what the
call paths read on the op is exactly the plan."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import elementwise as E
from retrograd.ops.op import Op
from retrograd.ops.plan import Plan


def _table() -> list[Op]:
    import retrograd.ops.linalg  # noqa: F401  (the lazily imported topics too)
    import retrograd.ops.nn  # noqa: F401

    return [o for o in gc.get_objects() if type(o) is Op]


def test_every_ops_plan_is_derived_from_its_declaration_alone() -> None:
    ops = _table()
    assert len(ops) > 250
    for op in ops:
        assert isinstance(op.plan, Plan)
        fields = op.plan.fields()
        again = Plan(op.declaration).fields()
        assert fields.keys() == again.keys(), op
        for name, value in fields.items():
            # (rule tuples hold the same callables; everything else compares by value)
            assert value == again[name], (op, name)
            assert op.__dict__[name] is value, (op, name)  # the op reads the plan's own values


def test_the_plan_never_changes() -> None:
    with pytest.raises(AttributeError, match="derived from its declaration"):
        E.mul.plan.binary_fast = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        E.mul.declaration.dtype = "same"  # type: ignore[misc]


def test_the_in_place_ufunc_is_declared_on_the_entry() -> None:
    assert E.mul.declaration.inplace_ufunc is np.multiply and E.mul.inplace_ufunc is np.multiply
    assert E.div.inplace_ufunc is None
    with pytest.raises(TypeError, match="inplace_ufunc must be a NumPy ufunc"):
        Op("twin", np.add, inputs=("self", "other"), inplace_ufunc="add")
    # Used: under no_grad ``add_`` writes into the tensor's own buffer.
    x = rg.ones(3)
    before = x._data
    with rg.no_grad():
        x.add_(rg.ones(3), alpha=2)
    assert x._data is before and x.tolist() == [3.0, 3.0, 3.0]
