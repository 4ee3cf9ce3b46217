"""Dropout's mask drawn a block at a time and compared as integers (the MNIST CNN's speed work):
the masks, scales and the stream's position stay PyTorch's, bit for bit, across block edges,
at the boundary probabilities, and against the 53-bit double formula."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.test_random_stream import skip_if_mkl_bernoulli

import retrograd as rg
from retrograd._random import _BERNOULLI_BLOCK, CPUStream

# sizes around the block edge, and several blocks with a ragged tail
SIZES = [1, _BERNOULLI_BLOCK - 1, _BERNOULLI_BLOCK, _BERNOULLI_BLOCK + 1, 2 * _BERNOULLI_BLOCK + 12345]


def _double_formula(stream: CPUStream, n: int, p: float) -> np.ndarray:
    """``bernoulli_distribution<double>(p)`` as PyTorch writes it: a 53-bit double below p."""
    return stream.unit_double(n) < p


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("p", [0.0, 0.1, 0.25, 0.5, 0.75, 1 / 3, 1.0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_dropout_matches_pytorch_across_blocks(torch: Any, n: int, p: float, dtype: str) -> None:
    skip_if_mkl_bernoulli(torch)
    outs = []
    values = (np.arange(n) % 13 - 6.5).astype(dtype)
    for lib in (torch, rg):
        lib.manual_seed(7)
        x = lib.tensor(values).requires_grad_()
        y = lib.nn.functional.dropout(x, p, training=True)
        y.backward(lib.ones_like(y))
        outs.append((y.detach().numpy(), x.grad.numpy(), lib.rand(5).numpy()))  # then the stream's next draws
    for ours, theirs in zip(outs[1], outs[0], strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.999, 1.0])
def test_bernoulli_scalar_matches_pytorch_across_blocks(torch: Any, p: float) -> None:
    skip_if_mkl_bernoulli(torch)
    n = 2 * _BERNOULLI_BLOCK + 3
    torch.manual_seed(3)
    theirs = (torch.empty(n).bernoulli_(p).numpy(), torch.randint(0, 2**31, (4,)).numpy())
    rg.manual_seed(3)
    ours = (rg.empty(n).bernoulli_(p).numpy(), rg.randint(0, 2**31, (4,)).numpy())
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("p", [-1.0, float("nan"), 5e-324, 2.0**-53, 3 * 2.0**-53, 1e-300, 0.2, 1 - 2.0**-53,
                               1.0, 1.5, float("inf")])
@pytest.mark.parametrize("n", [0, 1, 1000, _BERNOULLI_BLOCK + 17])
def test_bernoulli_scalar_equals_double_formula(p: float, n: int) -> None:
    ours, ref = CPUStream(11), CPUStream(11)
    got = ours.bernoulli_scalar(n, p)
    want = _double_formula(ref, n, p)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ours.random(3), ref.random(3))  # the same words consumed


def test_bernoulli_scalar_at_exact_draw_boundaries() -> None:
    # p exactly at a drawn 53-bit value (kept only strictly below), one ulp either side: the
    # integer comparison's high-word ties and its rounding of p * 2**53 must agree with doubles
    words = CPUStream(5).random(2 * 300).reshape(-1, 2)
    k = ((words[:, 0] & np.uint64((1 << 21) - 1)) << np.uint64(32)) | words[:, 1]
    for kk in k[:40].tolist():
        at = kk * 2.0**-53
        for p in (at, np.nextafter(at, 0.0), np.nextafter(at, 1.0), (kk + 1) * 2.0**-53):
            got = CPUStream(5).bernoulli_scalar(300, float(p))
            np.testing.assert_array_equal(got, _double_formula(CPUStream(5), 300, float(p)))
