"""``max_pool2d``'s backward when its windows do not overlap (stride >= dilation * (kernel - 1) + 1,
as ``max_pool2d(x, k)``): the maxima sit at distinct positions, so the gradient is one write
(``plane_put``) without the scan for repeats; overlapping windows still sum their repeats."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.ops import conv

CASES = [  # (input shape, options); the first ones have windows apart, the last ones overlap
    ((2, 3, 8, 8), {"kernel_size": 2}),
    ((2, 2, 9, 7), {"kernel_size": 3, "stride": 3, "ceil_mode": True}),
    ((1, 2, 10, 9), {"kernel_size": (2, 3), "stride": (3, 4), "padding": 1}),
    ((3, 9, 11), {"kernel_size": 2, "stride": 3, "dilation": 2}),
    ((2, 2, 7, 7), {"kernel_size": 3, "stride": 1}),
    ((2, 2, 9, 8), {"kernel_size": 2, "stride": 2, "dilation": 2}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "kw"), CASES)
def test_max_pool2d_gradient_matches_pytorch(torch: Any, shape: tuple[int, ...], kw: dict[str, Any],
                                             dtype: str) -> None:
    rng = np.random.default_rng(12)
    x = rng.integers(-2, 3, shape).astype(dtype)  # many ties: each library's first maximum
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yr, yt = F.max_pool2d(xr, **kw), torch.nn.functional.max_pool2d(xt, **kw)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    yr.backward(rg.tensor(g))
    yt.backward(torch.tensor(g))
    if CASES.index((shape, kw)) < 4:  # one gradient per position: exact
        np.testing.assert_array_equal(xr.grad.numpy(), xt.grad.numpy(), strict=True)
    else:  # repeats are summed in float64 bins here, in float32 by PyTorch
        np.testing.assert_allclose(xr.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6, strict=True)


@pytest.mark.parametrize(("kw", "apart"), [({"kernel_size": 2}, True), ({"kernel_size": 3, "stride": 3}, True),
                                           ({"kernel_size": 2, "stride": 3, "dilation": 2}, True),
                                           ({"kernel_size": 2, "stride": 2, "dilation": 2}, False),
                                           ({"kernel_size": 3, "stride": 2}, False)])
def test_the_plain_write_is_taken_only_for_windows_apart(monkeypatch: pytest.MonkeyPatch, kw: dict[str, Any],
                                                        apart: bool) -> None:
    used: list[str] = []
    put, scatter = conv._plane_put, conv._plane_scatter
    monkeypatch.setattr(conv, "_plane_put", lambda *a: used.append("put") or put(*a))
    monkeypatch.setattr(conv, "_plane_scatter", lambda *a: used.append("scatter") or scatter(*a))
    # (the pair's ops hold the kernels: rebuild them around the wrapped functions)
    monkeypatch.setattr(conv, "plane_put", conv.linear_pair("plane_gather", conv._plane_gather, conv._plane_put,
                                                            "GatherBackward0", "MaxPool2DWithIndicesBackwardBackward0")[1])
    monkeypatch.setattr(conv, "plane_scatter", conv.linear_pair(
        "plane_gather", conv._plane_gather, conv._plane_scatter, "GatherBackward0",
        "MaxPool2DWithIndicesBackwardBackward0")[1])
    x = rg.tensor(np.random.default_rng(13).standard_normal((1, 2, 9, 9)), requires_grad=True)
    F.max_pool2d(x, **kw).sum().backward()
    assert used == (["put"] if apart else ["scatter"])


def test_repeated_maxima_of_overlapping_windows_are_summed(torch: Any) -> None:
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 1] = 5.0  # the maximum of all four 3x3 windows (stride 1)
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.max_pool2d(xr, 3, 1).sum().backward()
    torch.nn.functional.max_pool2d(xt, 3, 1).sum().backward()
    assert xr.grad.numpy()[0, 0, 1, 1] == 4.0
    np.testing.assert_array_equal(xr.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize(("shape", "kw"), CASES[:4])
def test_plain_write_gradgradcheck(shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    # distinct values: the maxima stay put under gradcheck's small steps
    x = rg.tensor(np.random.default_rng(14).permutation(int(np.prod(shape))).reshape(shape) / 7.0,
                  requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, **kw), (x,))
    assert gradgradcheck(lambda t: F.max_pool2d(t, **kw), (x,))
