"""The eager fast paths behind the MNIST CNN's training step, each against real PyTorch and
against retrograd's general path: max_pool2d over non-overlapping tiles (values, indices and
PyTorch's first-maximum rule on ties) and the max pool's backward scatter when no position repeats."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import conv

F = rg.nn.functional

POOLS = list(itertools.product([(2, 3, 8, 8), (2, 3, 9, 7), (3, 6, 6)], [2, 3, (2, 3)], ["float32", "float64"]))


@pytest.mark.parametrize("shape,kernel,dtype", POOLS, ids=str)
def test_non_overlapping_max_pool_matches_pytorch_bitwise(torch: Any, shape: tuple[int, ...], kernel: Any,
                                                          dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal(shape), 1).astype(dtype)  # many ties: PyTorch keeps the first
    r, t = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ro, ri = F.max_pool2d(r, kernel, return_indices=True)
    to, ti = torch.nn.functional.max_pool2d(t, kernel, return_indices=True)
    np.testing.assert_array_equal(ro.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(ri.numpy(), ti.numpy())
    g = rng.standard_normal(tuple(to.shape)).astype(dtype)
    (ro * rg.tensor(g)).sum().backward()
    (to * torch.tensor(g)).sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_non_overlapping_max_pool_with_nan_or_inf_matches_pytorch(torch: Any, special: float) -> None:
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 4)).astype(np.float32)
    x[0, 0, 1, 0] = x[0, 1, 2, 3] = special
    x[0, 0, 0, 1] = np.nan if np.isnan(special) else x[0, 0, 0, 1]
    ro, ri = F.max_pool2d(rg.tensor(x), 2, return_indices=True)
    to, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(ro.numpy(), to.numpy())
    np.testing.assert_array_equal(ri.numpy(), ti.numpy())


def test_max_pool_tiles_agree_with_the_general_scan() -> None:
    x = np.round(np.random.default_rng(5).standard_normal((2, 3, 9, 10)), 1).astype(np.float32)
    fast = conv._max_pool2d_tiles(x, (2, 3), (4, 3))
    win = conv.im2col_windows(x, (2, 3), (2, 3), [(0, 0), (0, 0)], (1, 1), (4, 3), -np.inf, kernel_last=True)
    flat = win.reshape(2, 3, 4, 3, 6)
    arg = flat.argmax(-1)
    np.testing.assert_array_equal(fast[0], flat.max(-1))
    offsets = (np.arange(2)[:, None] * 10 + np.arange(3)).ravel()
    origin = (np.arange(4) * 20)[:, None] + np.arange(3) * 3
    np.testing.assert_array_equal(fast[1], origin + offsets[arg])


def test_plane_scatter_sums_repeated_positions_and_writes_unique_ones() -> None:
    g = np.array([[1.0, 2.0, 3.0]], np.float32)
    repeated = conv._plane_scatter(g, np.array([[0, 0, 3]]), (1, 2, 2))
    np.testing.assert_array_equal(repeated, [[[3.0, 0.0], [0.0, 3.0]]])
    unique = conv._plane_scatter(g, np.array([[2, 0, 3]]), (1, 2, 2))
    np.testing.assert_array_equal(unique, [[[2.0, 0.0], [1.0, 3.0]]])
    assert unique.dtype == repeated.dtype == np.float32
