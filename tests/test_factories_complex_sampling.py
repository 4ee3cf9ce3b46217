"""Complex ``rand``/``randn``/``*_like`` draw their real and imaginary parts as PyTorch does: the
same numbers after the same seed (they had zero imaginary parts, or were refused)."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("size", [(3,), (17,), (4, 5)])
def test_complex_samples_equal_pytorchs(torch, dtype: str, size: tuple[int, ...]) -> None:
    for name in ("rand", "randn"):
        rg.manual_seed(7)
        torch.manual_seed(7)
        ours = getattr(rg, name)(*size, dtype=getattr(rg, dtype))
        theirs = getattr(torch, name)(*size, dtype=getattr(torch, dtype))
        assert ours.dtype == getattr(rg, dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for name in ("rand_like", "randn_like"):
        rg.manual_seed(3)
        torch.manual_seed(3)
        ours = getattr(rg, name)(rg.zeros(*size, dtype=getattr(rg, dtype)))
        theirs = getattr(torch, name)(torch.zeros(*size, dtype=getattr(torch, dtype)))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_complex_normal_has_unit_variance_split_evenly() -> None:
    rg.manual_seed(0)
    z = rg.randn(200_000, dtype=rg.complex128).numpy()
    assert abs(np.var(z) - 1.0) < 0.02
    assert abs(np.var(z.real) - 0.5) < 0.01 and abs(np.var(z.imag) - 0.5) < 0.01
