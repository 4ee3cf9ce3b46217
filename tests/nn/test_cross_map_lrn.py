"""``nn.CrossMapLRN2d`` against real PyTorch (values for many channel counts and window sizes,
including PyTorch's channel-0 window quirk, float32, repr, grad_fn name, the 4-D check) and its
gradient against gradcheck/gradgradcheck: PyTorch's own hand-written backward fails gradcheck,
so the gradient is checked against the derivative of PyTorch's values, not PyTorch's backward."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

SHAPES = [(1, 1), (2, 3), (6, 3), (7, 5), (5, 2), (9, 4), (3, 7), (8, 1)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("channels", "size"), SHAPES)
def test_values_match_torch(torch: Any, channels: int, size: int, dtype: str) -> None:
    x = np.random.default_rng(channels * 10 + size).normal(size=(2, channels, 3, 2)).astype(dtype)
    outs = []
    for lib in (rg, torch):
        y = lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)(lib.tensor(x, requires_grad=True))
        outs.append((y.detach().numpy(), str(y.dtype), type(y.grad_fn).__name__))
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=tol, atol=tol)
    assert outs[0][1:] == outs[1][1:]


@pytest.mark.parametrize(("channels", "size"), SHAPES)
def test_gradient_is_the_derivative_of_the_values(channels: int, size: int) -> None:
    x = rg.tensor(np.random.default_rng(channels + size).normal(size=(1, channels, 2, 2)), requires_grad=True)
    layer = rg.nn.CrossMapLRN2d(size, alpha=0.4, beta=0.7, k=1.2)
    assert rg.autograd.gradcheck(layer, (x,))
    assert rg.autograd.gradgradcheck(layer, (x,))


def test_channel_zero_stays_in_later_windows_as_in_torch(torch: Any) -> None:
    # size 3 over 5 channels: channel 3's scale holds x0**2 (never subtracted) + x2**2 + x3**2 + x4**2
    x = np.zeros((1, 5, 1, 1))
    x[0, 0] = 2.0
    x[0, 3] = 1.0
    ours = rg.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=1.0)(rg.tensor(x)).flatten().tolist()
    theirs = torch.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=1.0)(torch.tensor(x)).flatten().tolist()
    assert ours == pytest.approx(theirs)
    assert ours[3] == pytest.approx(1.0 / (1.0 + (4.0 + 1.0)))


def test_repr_and_errors_match_torch(torch: Any) -> None:
    assert repr(rg.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    assert repr(rg.nn.CrossMapLRN2d(5, 0.1, 0.5, 2.0)) == repr(torch.nn.CrossMapLRN2d(5, 0.1, 0.5, 2.0))
    for shape in [(4, 2, 2), (1, 2, 2, 2, 2)]:
        assert outcome(lambda s=shape: rg.nn.CrossMapLRN2d(3)(rg.ones(*s))) == \
            outcome(lambda s=shape: torch.nn.CrossMapLRN2d(3)(torch.ones(*s)))
