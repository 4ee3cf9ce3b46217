"""``div_``/``divide_`` take ``rounding_mode`` as PyTorch's do (it was a TypeError)."""
from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("method", ["div_", "divide_"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_in_place_rounded_division_matches_pytorch(torch, mode: str, method: str, dtype: str) -> None:
    values = np.array([5, -7, 9, -1]).astype(dtype)
    for other in (2, np.array([2, -3, 4, 2]).astype(dtype)):
        ours, theirs = rg.tensor(values), torch.tensor(values)
        o_r = rg.tensor(other) if isinstance(other, np.ndarray) else other
        o_t = torch.tensor(other) if isinstance(other, np.ndarray) else other
        assert getattr(ours, method)(o_r, rounding_mode=mode) is ours
        getattr(theirs, method)(o_t, rounding_mode=mode)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours.dtype == getattr(rg, dtype)


def test_in_place_rounded_division_records_pytorchs_node_and_rejects_bad_modes(torch) -> None:
    x_r = rg.tensor([5.0, -7.0], requires_grad=True).clone()
    x_t = torch.tensor([5.0, -7.0], requires_grad=True).clone()
    x_r.div_(2.0, rounding_mode="floor")
    x_t.div_(2.0, rounding_mode="floor")
    assert x_r.grad_fn.name() == x_t.grad_fn.name()
    assert outcome(lambda: rg.ones(2).div_(2.0, rounding_mode="bad")) == \
        outcome(lambda: torch.ones(2).div_(2.0, rounding_mode="bad"))
