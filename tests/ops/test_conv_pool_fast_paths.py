"""The eager fast paths behind the MNIST CNN's training step, each against real PyTorch and
against retrograd's general path: the 2-D stride-1 transposed convolution (conv2d's input
gradient) with its whole-run col2im, max_pool2d over non-overlapping tiles (values, indices and
PyTorch's first-maximum rule on ties) and the max pool's backward scatter when no position repeats."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import conv

F = rg.nn.functional

TRANSPOSED = [
    (cin, cout, groups, k, d, p, op)
    for (cin, cout, groups), k, d, p, op in itertools.product(
        [(4, 6, 1), (4, 6, 2)], [(3, 3), (2, 3), (1, 1)], [(1, 1), (2, 1)], [(0, 0), (1, 2)], [(0, 0), (1, 0)])
    if all(o < dd for o, dd in zip(op, d))  # PyTorch: output padding below the dilation (stride 1)
]


@pytest.mark.parametrize("case", TRANSPOSED, ids=str)
def test_stride1_conv_transpose2d_matches_pytorch_and_the_general_path(torch: Any, case: tuple[Any, ...]) -> None:
    cin, cout, groups, k, d, p, op = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, cin, 5, 6))
    w = rng.standard_normal((cin, cout // groups, *k))
    assert conv._rows_fit(x.shape[2:], k, p, d, op) == all(o <= pp for o, pp in zip(op, p))
    ours = F.conv_transpose2d(rg.tensor(x), rg.tensor(w), None, 1, p, op, groups, d).numpy()
    theirs = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), None, 1, p, op, groups, d).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # The general path (the product per position, then col2im row by row) gives the same sums.
    wm = w.reshape(groups, cin // groups, -1).transpose(0, 2, 1)
    cols = np.matmul(wm, x.reshape(2, groups, cin // groups, 30)).reshape((2, cout) + k + (5, 6))
    size = [i - 2 * pp + dd * (kk - 1) + oo for i, pp, dd, kk, oo in zip((5, 6), p, d, k, op)]
    np.testing.assert_allclose(ours, conv.col2im(cols, size, k, (1, 1), [(pp, pp) for pp in p], d), rtol=1e-13,
                               atol=1e-13)


def test_conv2d_input_gradient_float32_matches_pytorch(torch: Any) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8, 12, 12)).astype(np.float32)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    g = rng.standard_normal((4, 16, 10, 10)).astype(np.float32)
    rx, tx = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (F.conv2d(rx, rg.tensor(w)) * rg.tensor(g)).sum().backward()
    (torch.nn.functional.conv2d(tx, torch.tensor(w)) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_stride1_conv_transpose2d_gradgradcheck() -> None:
    rng = np.random.default_rng(2)
    x = rg.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    w = rg.tensor(rng.standard_normal((2, 3, 2, 2)), requires_grad=True)
    fn = lambda a, b: F.conv_transpose2d(a, b, None, 1, 0, 0, 1, (2, 1))  # noqa: E731
    assert rg.autograd.gradcheck(fn, (x, w))
    assert rg.autograd.gradgradcheck(fn, (x, w))


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
