"""The tiled max pool (``max_pool2d(x, k)``) runs on infinities too and falls back to the general
scan only when a tile's maximum is NaN (checked on the pooled values): PyTorch's values and
first-maximum indices either way, for 2x2 (the tournament) and other tiles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F


@pytest.mark.parametrize("kernel", [2, 3, (2, 3)])
@pytest.mark.parametrize("fill", ["inf", "-inf", "mixed", "nan", "nan_and_inf", "inf_tile"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_tiled_max_pool_with_non_finite_values_matches_pytorch(torch: Any, kernel: Any, fill: str,
                                                               dtype: str) -> None:
    rng = np.random.default_rng(15)
    x = rng.integers(-2, 3, (2, 3, 7, 8)).astype(dtype)  # ties everywhere
    spots = rng.random(x.shape)
    if fill in ("inf", "mixed", "nan_and_inf"):
        x[spots < 0.15] = np.inf
    if fill in ("-inf", "mixed"):
        x[spots > 0.8] = -np.inf
    if fill in ("nan", "nan_and_inf"):
        x[(spots > 0.5) & (spots < 0.53)] = np.nan
    if fill == "inf_tile":
        x[:, :, :3, :3] = -np.inf  # whole tiles of -inf: the first element's index
        x[:, 1, 3:6, 3:6] = np.inf  # whole tiles of +inf: the first one
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (vr, ir), (vt, it) = (F.max_pool2d(xr, kernel, return_indices=True),
                          torch.nn.functional.max_pool2d(xt, kernel, return_indices=True))
    np.testing.assert_array_equal(vr.detach().numpy(), vt.detach().numpy(), strict=True)
    np.testing.assert_array_equal(ir.numpy(), it.numpy(), strict=True)
    g = rng.standard_normal(tuple(vt.shape)).astype(dtype)
    vr.backward(rg.tensor(g))
    vt.backward(torch.tensor(g))
    np.testing.assert_array_equal(xr.grad.numpy(), xt.grad.numpy(), strict=True)
