"""A convolution's bias is added to each chunk of the output right after its matmul (``_conv_nd``),
not in a pass of its own: the same elementwise add, so bit for bit ``conv(x, w) + b``, in every
chunking, with groups, and for 1-d/3-d; float16/bfloat16 still add it after rounding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.ops import conv

CASES = [  # (input shape, weight shape, options)
    ((5, 4, 9, 8), (6, 4, 3, 3), {}),
    ((4, 4, 9, 8), (6, 2, 3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    ((3, 2, 12), (3, 2, 4), {"stride": 3}),
    ((2, 2, 5, 4, 6), (2, 2, 2, 3, 2), {"padding": 1}),
]


@pytest.mark.parametrize("budget", [1, 3000, 1 << 20])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("xs", "ws", "kw"), CASES)
def test_bias_in_chunks_is_bitwise_conv_plus_bias(monkeypatch: pytest.MonkeyPatch, budget: int, dtype: str,
                                                  xs: tuple[int, ...], ws: tuple[int, ...], kw: dict[str, Any]) -> None:
    monkeypatch.setattr(conv, "_CHUNK_BYTES", budget)
    rng = np.random.default_rng(16)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in (xs, ws, (ws[0],)))
    fn = getattr(F, {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(xs)])
    with_bias = fn(rg.tensor(x), rg.tensor(w), rg.tensor(b), **kw).numpy()
    without = fn(rg.tensor(x), rg.tensor(w), **kw).numpy()
    expected = without + b.reshape((-1,) + (1,) * (len(xs) - 2))
    np.testing.assert_array_equal(with_bias, expected, strict=True)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_bias_matches_pytorch(torch: Any, dtype: str) -> None:
    rng = np.random.default_rng(17)
    x, w, b = rng.standard_normal((3, 32, 8, 7)), rng.standard_normal((5, 32, 3, 3)) / 10, rng.standard_normal(5)
    ours = F.conv2d(*(rg.tensor(a).to(getattr(rg, dtype)) for a in (x, w, b)))
    theirs = torch.nn.functional.conv2d(*(torch.tensor(a).to(getattr(torch, dtype)) for a in (x, w, b)))
    tol = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 5e-2}[dtype]
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=tol, atol=tol)
