"""``as_strided`` under ``vmap``: PyTorch's batching rule (each sample's view shifted by the
batch dimension's stride; a view reaching outside the sample refused), against torch.vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.func as rfunc
from conftest import outcome

A = np.arange(24.0)

CASES = {
    "offset": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2,), (1,), 1))(lib.tensor(A[:12]).view(3, 4)),
    "overlapping windows": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2, 2), (1, 1), 0))(
        lib.tensor(A[:12]).view(3, 4)),
    "default offset": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2,), (2,)))(lib.tensor(A[:12]).view(3, 4)),
    "function form": lambda lib, fn: fn.vmap(lambda s: lib.as_strided(s, (2, 2), (1, 2), 1))(
        lib.tensor(A[:18]).view(3, 6)),
    "batch of a wider storage": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2,), (1,), 3))(
        lib.tensor(A).view(3, 8)[:, 2:6]),
    "batch dim not outermost in memory": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2,), (1,), 0))(
        lib.tensor(A[:12]).view(4, 3).t()),
    "in_dims=1": lambda lib, fn: fn.vmap(lambda s: s.as_strided((2,), (1,), 1), in_dims=1)(
        lib.tensor(A[:12]).view(4, 3)),
    "nested": lambda lib, fn: fn.vmap(fn.vmap(lambda s: s.as_strided((2,), (2,), 1)))(lib.tensor(A).view(2, 3, 4)),
    "of a slice": lambda lib, fn: fn.vmap(lambda s: s[1:].as_strided((2, 2), (1, 1), 3))(
        lib.tensor(A[:18]).view(3, 6)),
    "out of the sample": lambda lib, fn: fn.vmap(lambda s: s.as_strided((4,), (1,), 2))(
        lib.tensor(A[:12]).view(3, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_strided_under_vmap_matches_torch(torch: Any, name: str) -> None:
    assert outcome(lambda: CASES[name](rg, rfunc)) == outcome(lambda: CASES[name](torch, torch.func))
    if outcome(lambda: CASES[name](torch, torch.func))[0] == "ok":
        np.testing.assert_array_equal(CASES[name](rg, rfunc).numpy(), CASES[name](torch, torch.func).numpy())


def test_per_sample_gradients_through_as_strided(torch: Any) -> None:
    """``vmap(grad)`` through the batching rule: each sample's own gradient (overlapping windows
    count an element once per window)."""
    def run(lib: Any, fn: Any) -> Any:
        def loss(x: Any) -> Any:
            return (x.as_strided((3, 2), (1, 1), 0) ** 2).sum()
        return fn.vmap(fn.grad(loss))(lib.tensor(A[:12] / 7).view(3, 4))

    np.testing.assert_allclose(run(rg, rfunc).numpy(), run(torch, torch.func).numpy(), rtol=1e-14)
