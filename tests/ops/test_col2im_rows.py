"""Stride-1 2-D transposed convolutions (so every stride-1 conv's input gradient) overlap-add whole
widened rows (the MNIST CNN's speed work): results against PyTorch for padding, dilation, groups,
batches larger than one chunk, non-finite weights (which take the per-offset path), and gradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

CASES = [  # (n, c_in, h, w, c_out, kh, kw, padding, dilation, groups)
    (2, 4, 5, 6, 3, 3, 3, (0, 0), (1, 1), 1),
    (3, 4, 5, 6, 6, 2, 3, (1, 0), (2, 1), 2),
    (1, 6, 1, 1, 3, 3, 2, (0, 1), (1, 3), 3),
    (5, 2, 7, 4, 2, 1, 1, (0, 0), (1, 1), 1),
    (2, 3, 4, 5, 2, 4, 2, (2, 1), (2, 2), 1),
    (9, 16, 12, 12, 8, 3, 3, (1, 1), (1, 1), 1),  # several images per chunk and a ragged last chunk
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_transpose2d_stride1_matches_pytorch(torch: Any, case: tuple[Any, ...], dtype: str) -> None:
    n, c, h, w, o, kh, kw, padding, dilation, groups = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    weight = rng.standard_normal((c, o // groups, kh, kw)).astype(dtype)
    ours = rg.nn.functional.conv_transpose2d(rg.tensor(x), rg.tensor(weight), padding=padding, dilation=dilation,
                                             groups=groups).numpy()
    theirs = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(weight), padding=padding,
                                                  dilation=dilation, groups=groups).numpy()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_conv2d_input_grad_stride1_matches_pytorch(torch: Any, case: tuple[Any, ...]) -> None:
    n, c, h, w, o, kh, kw, padding, dilation, groups = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, o, h + dilation[0] * (kh - 1), w + dilation[1] * (kw - 1)))
    weight = rng.standard_normal((c, o // groups, kh, kw))
    grads = []
    for lib in (torch, rg):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.conv2d(xt, lib.tensor(weight), padding=padding, dilation=dilation, groups=groups)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def test_conv_transpose2d_nonfinite_weight_matches_pytorch(torch: Any) -> None:
    # the widened columns would meet 0 * inf: such a weight keeps the per-offset adds
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 5))
    weight = rng.standard_normal((3, 2, 3, 3))
    weight[1, 0, 2, 2] = np.inf
    weight[2, 1, 0, 1] = np.nan
    ours = rg.nn.functional.conv_transpose2d(rg.tensor(x), rg.tensor(weight)).numpy()
    theirs = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(weight)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_conv_transpose2d_stride1_gradcheck() -> None:
    rng = np.random.default_rng(3)
    x = rg.tensor(rng.standard_normal((2, 4, 3, 4)), requires_grad=True)
    weight = rg.tensor(rng.standard_normal((4, 3, 2, 3)), requires_grad=True)

    def f(a: rg.Tensor, b: rg.Tensor) -> rg.Tensor:
        return rg.nn.functional.conv_transpose2d(a, b, padding=(1, 0), dilation=(1, 2), groups=2)

    assert rg.autograd.gradcheck(f, (x, weight))
    assert rg.autograd.gradgradcheck(f, (x, weight))
