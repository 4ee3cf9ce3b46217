"""relu and threshold_backward on large arrays run a block at a time (the MNIST CNN's speed work):
values, signed zeros, NaN and inf handling and dtypes stay PyTorch's, bit for bit, across block
edges, for contiguous and strided inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops.elementwise import _BLOCK, threshold_backward

SIZES = [_BLOCK, _BLOCK + 1, 3 * _BLOCK + 123]


@pytest.mark.parametrize("n", [1, 100, _BLOCK + 1])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_keeps_negative_zero_as_pytorch(torch: Any, n: int, dtype: str) -> None:
    # NumPy's float16 maximum breaks the (-0.0, 0.0) tie the other way from float32/float64
    x = np.full(n, -0.0, dtype)
    ours, theirs = rg.relu(rg.tensor(x)).numpy(), torch.relu(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


def _values(n: int, dtype: str, seed: int) -> np.ndarray:
    x = (np.random.default_rng(seed).standard_normal(n) * 3).astype(dtype)
    if x.dtype.kind == "f":
        x[::7] = np.nan
        x[1::7] = -0.0
        x[2::7] = np.inf
        x[3::7] = -np.inf
        x[4::11] = 0.0
    return x


def _bits(a: Any) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("strided", [False, True])
def test_relu_forward_backward_bits_match_pytorch(torch: Any, n: int, dtype: str, strided: bool) -> None:
    x_np = _values(2 * n if strided else n, dtype, 0)
    g_np = _values(n, dtype, 1)
    results = []
    for lib in (torch, rg):
        x = lib.tensor(x_np)
        x = (x[::2] if strided else x).reshape(-1, n // _BLOCK if n % _BLOCK == 0 else 1).requires_grad_()
        y = lib.relu(x)
        y.backward(lib.tensor(g_np).reshape(x.shape))
        results.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert _bits(ours) == _bits(theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8"])
def test_relu_large_matches_pytorch_for_each_dtype(torch: Any, dtype: str) -> None:
    x_np = _values(2 * _BLOCK + 5, dtype, 2)
    ours, theirs = rg.relu(rg.tensor(x_np)).numpy(), torch.relu(torch.tensor(x_np)).numpy()
    assert ours.dtype == theirs.dtype and _bits(ours) == _bits(theirs)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_threshold_backward_large_matches_pytorch(torch: Any, dtype: str) -> None:
    # a NaN or inf gradient where the output is <= 0 still gives +0 (PyTorch's select)
    n = 2 * _BLOCK + 7
    grad, out = _values(n, dtype, 3), _values(n, dtype, 4)
    ours = threshold_backward(rg.tensor(grad), rg.tensor(out)).numpy()
    theirs = torch.ops.aten.threshold_backward(torch.tensor(grad), torch.tensor(out), 0).numpy()
    assert ours.dtype == theirs.dtype and _bits(ours) == _bits(theirs)


def test_relu_large_second_order_matches_pytorch(torch: Any) -> None:
    n = _BLOCK + 3
    x_np = np.random.default_rng(5).standard_normal(n)
    grads = []
    for lib in (torch, rg):
        x = lib.tensor(x_np, requires_grad=True)
        (g,) = lib.autograd.grad((lib.relu(x) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        grads.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(grads[1], grads[0], strict=True):
        np.testing.assert_array_equal(ours, theirs)
