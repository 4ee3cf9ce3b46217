"""relu's backward (``threshold_backward``) selects bit-exactly as PyTorch's: the kept gradient
unchanged (-0.0, inf, NaN included), +0.0 where the output is <= 0 even for a non-finite
gradient, and a NaN output passes its gradient. It is computed on the bits (a fast path), so
these compare the bits of the result with PyTorch's for every dtype the fast path covers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

SPECIAL = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40]


def _cases(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every (output, gradient) pair of special values, plus random ones."""
    rng = np.random.default_rng(0)
    out, grad = np.meshgrid(np.array(SPECIAL), np.array(SPECIAL))
    out = np.concatenate([out.ravel(), rng.standard_normal(64)])
    grad = np.concatenate([grad.ravel(), rng.standard_normal(64)])
    return np.maximum(out, 0, where=~np.isnan(out), out=out.copy()).astype(dtype), grad.astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_backward_bits_match_pytorch(torch: Any, dtype: str) -> None:
    x, g = _cases(np.dtype(dtype))
    ours = rg.tensor(x, requires_grad=True)
    rg.relu(ours).backward(rg.tensor(g))
    ref = torch.tensor(x, requires_grad=True)
    torch.relu(ref).backward(torch.tensor(g))
    assert ours.grad is not None and ref.grad is not None
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize]
    np.testing.assert_array_equal(ours.grad.numpy().view(bits), ref.grad.numpy().view(bits))


def test_relu_double_backward_bits_match_pytorch(torch: Any) -> None:
    # The double backward runs threshold_backward on the grad-of-grad, here with a transposed
    # (non-contiguous) gradient and non-finite entries.
    x, g = _cases(np.float32)
    x, g = x[:80].reshape(8, 10), g[:80].reshape(10, 8).T

    def run(lib: Any) -> np.ndarray:
        t = lib.tensor(x, requires_grad=True)
        v = lib.tensor(g)
        (gx,) = lib.autograd.grad(lib.relu(t * 1.0), t, lib.ones_like(t), create_graph=True)
        (ggx,) = lib.autograd.grad(gx, t, v)
        return np.asarray(ggx.detach().numpy())

    np.testing.assert_array_equal(run(rg).view(np.uint32), run(torch).view(np.uint32))


def test_threshold_backward_broadcast_and_complex_fall_back() -> None:
    # Shapes that differ (broadcast) and 16-byte elements take the select.
    from retrograd.ops.elementwise import _threshold_backward

    out = np.array([[0.0, 1.0, np.nan]])
    grad = np.array([[np.inf], [-0.0]])
    expected = np.array([[0.0, np.inf, np.inf], [0.0, -0.0, -0.0]])
    np.testing.assert_array_equal(_threshold_backward(grad, out).view(np.uint64), expected.view(np.uint64))
    c = np.array([1 + 2j, 3 - 1j], dtype=np.complex128)
    np.testing.assert_array_equal(_threshold_backward(c, np.array([0.0, 2.0])), [0, 3 - 1j])
