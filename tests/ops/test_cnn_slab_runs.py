"""The stride-1 transposed convolution (``_conv_transpose2d_rows``, also the input gradient of every
stride-1 ``conv2d``): each kernel offset's slab is added to the widened output plane as one
contiguous run. The runs cross channel boundaries and are cut at the plane's end; these tests pin
that only zeros land or are cut there, against PyTorch and against a direct scatter loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.ops.test_cnn_kernels import assert_matches_pytorch

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.ops import conv

CASES = [  # (input shape, weight shape (C_in, C_out / groups, kh, kw), options)
    ((2, 3, 5, 4), (3, 4, 3, 3), {}),
    ((3, 4, 4, 6), (4, 3, 2, 3), {"groups": 2}),
    ((2, 6, 3, 5), (6, 2, 3, 2), {"groups": 3, "dilation": (2, 3)}),
    ((2, 2, 5, 5), (2, 3, 3, 3), {"dilation": 2, "output_padding": 1}),
    ((3, 2, 6, 4), (2, 5, 4, 2), {"padding": (1, 0), "dilation": (1, 2), "output_padding": (0, 1)}),
    ((1, 1, 1, 1), (1, 2, 3, 3), {}),
]


def _direct(x: np.ndarray, w: np.ndarray, groups: int, dilation: tuple[int, int],
            output_padding: tuple[int, int]) -> np.ndarray:
    """Stride-1 transposed convolution without padding, by its definition: every input element
    times the kernel, added at its offset."""
    n, c, h, wd = x.shape
    cg, og, kh, kw = c // groups, w.shape[1], w.shape[2], w.shape[3]
    out = np.zeros((n, groups * og, h + dilation[0] * (kh - 1) + output_padding[0],
                    wd + dilation[1] * (kw - 1) + output_padding[1]))
    for g in range(groups):
        for ci in range(cg):
            for i in range(kh):
                for j in range(kw):
                    taps = w[g * cg + ci, :, i, j]  # (og,)
                    out[:, g * og:(g + 1) * og, i * dilation[0]:i * dilation[0] + h,
                        j * dilation[1]:j * dilation[1] + wd] += x[:, g * cg + ci, None] * taps[:, None, None]
    return out


@pytest.mark.parametrize("budget", [1, 2000, 1 << 20])
@pytest.mark.parametrize(("xs", "ws", "kw"), CASES)
def test_stride1_transposed_convolution_matches_pytorch(torch: Any, monkeypatch: pytest.MonkeyPatch, budget: int,
                                                        xs: tuple[int, ...], ws: tuple[int, ...],
                                                        kw: dict[str, Any]) -> None:
    monkeypatch.setattr(conv, "_CHUNK_BYTES", budget)
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[1] * kw.get("groups", 1))
    assert_matches_pytorch(torch, "conv_transpose2d", (x, w, b), kw, rng)


@pytest.mark.parametrize(("xs", "ws", "kw"), [c for c in CASES if "padding" not in c[2]])
def test_stride1_transposed_kernel_is_the_direct_scatter(xs: tuple[int, ...], ws: tuple[int, ...],
                                                         kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    groups = kw.get("groups", 1)
    dil = kw.get("dilation", 1)
    dilation = (dil, dil) if isinstance(dil, int) else dil
    op = kw.get("output_padding", 0)
    output_padding = (op, op) if isinstance(op, int) else op
    ours = conv._conv_transpose_nd(x, w, (1, 1), (0, 0), dilation, output_padding, groups)
    np.testing.assert_allclose(ours, _direct(x, w, groups, dilation, output_padding), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_conv2d_input_gradient_at_stride_1_matches_pytorch(torch: Any, dtype: str) -> None:
    """The MNIST CNN's second layer in small: 32 channels or more put one batch item per chunk."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, 32, 7, 6)), rng.standard_normal((5, 32, 3, 3)) / 10
    g = rng.standard_normal((3, 5, 5, 4))
    xr, xt = rg.tensor(x).to(getattr(rg, dtype)).requires_grad_(), torch.tensor(x).to(
        getattr(torch, dtype)).requires_grad_()
    wr, wt = rg.tensor(w).to(getattr(rg, dtype)), torch.tensor(w).to(getattr(torch, dtype))
    F.conv2d(xr, wr).backward(rg.tensor(g).to(getattr(rg, dtype)))
    torch.nn.functional.conv2d(xt, wt).backward(torch.tensor(g).to(getattr(torch, dtype)))
    tol = {"float32": 1e-5, "float16": 2e-2, "bfloat16": 5e-2}[dtype]
    np.testing.assert_allclose(xr.grad.float().numpy(), xt.grad.float().numpy(), rtol=tol, atol=tol)
    assert str(xr.grad.dtype) == str(xt.grad.dtype)


def test_stride1_transposed_convolution_of_infinities_and_nans(torch: Any) -> None:
    """Non-finite inputs spread over their own footprint only: the widened zeros stay exact zeros."""
    x = np.random.default_rng(8).standard_normal((2, 3, 4, 5))
    x[0, 1, 2, 4], x[1, 0, 0, 0], x[1, 2, 3, 2] = np.inf, np.nan, -np.inf
    w = np.random.default_rng(9).standard_normal((3, 2, 3, 2))
    ours = F.conv_transpose2d(rg.tensor(x), rg.tensor(w)).numpy()
    theirs = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
