"""The MNIST-CNN kernels (``ops/conv.py``): convolutions walked over the batch in chunks (a small
chunk budget forces several chunks and a ragged last one) give PyTorch's outputs and gradients,
and the 2x2 max-pool tournament gives PyTorch's values and first-maximum indices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.ops import conv

CASES = [  # (input shape, weight shape, options)
    ((5, 4, 9, 8), (6, 4, 3, 3), {}),
    ((7, 4, 9, 8), (6, 2, 3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    ((3, 3, 10, 11), (4, 3, 3, 3), {"dilation": 2, "padding": (2, 1)}),
    ((4, 2, 12), (3, 2, 4), {"stride": 3}),
    ((3, 2, 5, 4, 6), (2, 2, 2, 3, 2), {"padding": 1}),
]


@pytest.mark.parametrize("budget", [1, 3000, 1 << 20])
@pytest.mark.parametrize(("xs", "ws", "kw"), CASES)
def test_chunked_convolution_matches_pytorch(torch: Any, monkeypatch: pytest.MonkeyPatch, budget: int,
                                             xs: tuple[int, ...], ws: tuple[int, ...], kw: dict[str, Any]) -> None:
    monkeypatch.setattr(conv, "_CHUNK_BYTES", budget)
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    fn = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(xs)]
    assert_matches_pytorch(torch, fn, (x, w, b), kw, rng)


def assert_matches_pytorch(torch: Any, fn: str, arrays: tuple[np.ndarray, ...], kw: dict[str, Any],
                           rng: np.random.Generator) -> None:
    """``nn.functional.<fn>(*arrays, **kw)``: retrograd's output and input gradients (for one
    random output gradient) equal PyTorch's in float64."""
    ours = [rg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_r, out_t = getattr(F, fn)(*ours, **kw), getattr(torch.nn.functional, fn)(*theirs, **kw)
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(out_t.shape))
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    for a, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("budget", [1, 1 << 20])
@pytest.mark.parametrize(("xs", "ws", "kw"), [
    ((5, 4, 6, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((3, 4, 5, 5), (4, 1, 2, 3), {"groups": 2, "dilation": (2, 1)}),
])
def test_chunked_transposed_convolution_matches_pytorch(torch: Any, monkeypatch: pytest.MonkeyPatch, budget: int,
                                                        xs: tuple[int, ...], ws: tuple[int, ...],
                                                        kw: dict[str, Any]) -> None:
    monkeypatch.setattr(conv, "_CHUNK_BYTES", budget)
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    ours = [rg.tensor(a, requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    out_r = F.conv_transpose2d(*ours, **kw)
    out_t = torch.nn.functional.conv_transpose2d(*theirs, **kw)
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(out_t.shape))
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    for a, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_chunked_convolution_of_an_empty_batch() -> None:
    x = rg.zeros((0, 3, 5, 5), requires_grad=True)
    w = rg.ones((2, 3, 3, 3), requires_grad=True)
    y = F.conv2d(x, w)
    assert tuple(y.shape) == (0, 2, 3, 3)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 5, 5)
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((2, 3, 3, 3), np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(4, 3, 8, 8), (2, 2, 7, 9), (3, 5, 5)])
def test_max_pool_2x2_tournament_matches_pytorch(torch: Any, shape: tuple[int, ...], dtype: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, shape).astype(dtype)  # mostly ties: PyTorch keeps the first maximum
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (vr, ir), (vt, it) = F.max_pool2d(xr, 2, return_indices=True), torch.nn.functional.max_pool2d(
        xt, 2, return_indices=True)
    np.testing.assert_array_equal(vr.detach().numpy(), vt.detach().numpy(), strict=True)
    np.testing.assert_array_equal(ir.numpy(), it.numpy(), strict=True)
    g = rng.standard_normal(tuple(vt.shape)).astype(dtype)
    vr.backward(rg.tensor(g))
    vt.backward(torch.tensor(g))
    np.testing.assert_array_equal(xr.grad.numpy(), xt.grad.numpy(), strict=True)


def test_max_pool_2x2_tournament_is_the_general_scan() -> None:
    x = np.random.default_rng(3).integers(0, 4, (3, 2, 6, 10)).astype(np.float32)
    fast = conv._max_pool2d_tiles_2x2(x, (3, 5))
    win = conv.im2col_windows(x, (2, 2), (2, 2), [(0, 0), (0, 0)], (1, 1), (3, 5), kernel_last=True)
    flat = win.reshape(3, 2, 3, 5, 4)
    arg = flat.argmax(-1)  # NumPy's argmax also keeps the first maximum
    origin = (np.arange(3) * 2)[:, None] * 10 + np.arange(5) * 2
    np.testing.assert_array_equal(fast[0], np.take_along_axis(flat, arg[..., None], -1)[..., 0])
    np.testing.assert_array_equal(fast[1], origin + np.array([0, 1, 10, 11])[arg])
