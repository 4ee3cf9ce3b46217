"""``retrograd.vmap`` is ``retrograd.func.vmap``, as ``torch.vmap`` is ``torch.func.vmap``."""
from __future__ import annotations

import numpy as np

import retrograd as rg
import retrograd.func


def test_vmap_at_top_level_is_func_vmap() -> None:
    assert rg.vmap is retrograd.func.vmap
    assert "vmap" in dir(rg)


def test_top_level_vmap_maps_over_the_batch(torch) -> None:
    x = np.arange(12.0).reshape(3, 4)
    ours = rg.vmap(lambda row: (row * row).sum())(rg.tensor(x))
    theirs = torch.vmap(lambda row: (row * row).sum())(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
