"""Pooling and padding inside ``vmap`` run once on the whole batch (the samples' images folded
into the image batch; padding of trailing dims as it is): values and per-sample gradients match
``torch.func``, and the fallback's performance warning (an error here) never fires."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd import func as rfunc

RS = np.random.RandomState(0)
IMAGES = RS.randn(3, 2, 6, 6)  # a batch of 3 samples, each one (C, H, W) image
IMAGE_BATCHES = RS.randn(3, 2, 2, 6, 6)  # each sample an (N, C, H, W) batch
VOLUMES = RS.randn(3, 2, 4, 4, 4)
SIGNALS = RS.randn(3, 2, 8)

CASES: dict[str, tuple[Callable[[Any, Any], Any], np.ndarray]] = {
    "avg_pool2d": (lambda L, t: L.nn.functional.avg_pool2d(t, 2), IMAGES),
    "avg_pool2d_nchw": (lambda L, t: L.nn.functional.avg_pool2d(t, 3, stride=2, padding=1), IMAGE_BATCHES),
    "avg_pool2d_ceil_no_pad_count": (lambda L, t: L.nn.functional.avg_pool2d(
        t, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=False), IMAGES),
    "avg_pool1d": (lambda L, t: L.nn.functional.avg_pool1d(t, 2), SIGNALS),
    "adaptive_avg_pool2d": (lambda L, t: L.nn.functional.adaptive_avg_pool2d(t, (4, 3)), IMAGES),
    "adaptive_avg_pool2d_nchw": (lambda L, t: L.nn.functional.adaptive_avg_pool2d(t, 3), IMAGE_BATCHES),
    "avg_pool3d": (lambda L, t: L.nn.functional.avg_pool3d(t, 2), VOLUMES),
    "adaptive_avg_pool3d": (lambda L, t: L.nn.functional.adaptive_avg_pool3d(t, 3), VOLUMES),
    "pad_constant": (lambda L, t: L.nn.functional.pad(t, (1, 2, 0, 1), value=0.5), IMAGES),
    "pad_constant_crop": (lambda L, t: L.nn.functional.pad(t, (-1, 2)), SIGNALS),
    "pad_constant_every_dim": (lambda L, t: L.nn.functional.pad(t, (1, 1, 1, 1)), SIGNALS),
    "pad_reflect_1d": (lambda L, t: L.nn.functional.pad(t, (2, 1), mode="reflect"), SIGNALS),
    "pad_reflect_2d": (lambda L, t: L.nn.functional.pad(t, (2, 1, 1, 2), mode="reflect"), IMAGES),
    "pad_replicate_2d": (lambda L, t: L.nn.functional.pad(t, (1, 3, 2, 0), mode="replicate"), IMAGE_BATCHES),
    "pad_replicate_3d": (lambda L, t: L.nn.functional.pad(t, (1, 1, 0, 2, 1, 0), mode="replicate"), VOLUMES),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch_func(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, x = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda t: fn(rg, t))(rg.tensor(x))
    want = tfunc.vmap(lambda t: fn(torch, t))(torch.tensor(x))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(CASES))
def test_per_sample_gradients_match_torch_func(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, x = CASES[name]

    def loss(L: Any) -> Callable[[Any], Any]:
        return lambda t: (fn(L, t) ** 2 * L.arange(1.0, 1.0 + fn(L, t).numel(), dtype=t.dtype)
                          .reshape(fn(L, t).shape)).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(loss(rg)))(rg.tensor(x))
    want = tfunc.vmap(tfunc.grad(loss(torch)))(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_pad_wider_than_a_sample_is_refused_as_per_sample(torch: Any) -> None:
    """Padding more dims than a sample has: each sample's own error (the batch dim is no
    sample dim to pad), as PyTorch's."""
    import torch.func as tfunc

    from conftest import outcome
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = outcome(lambda: rfunc.vmap(lambda t: rg.nn.functional.pad(t, (1, 1, 1, 1, 1, 1)))(rg.tensor(SIGNALS)))
    want = outcome(lambda: tfunc.vmap(lambda t: torch.nn.functional.pad(t, (1, 1, 1, 1, 1, 1)))(torch.tensor(SIGNALS)))
    assert want[0] != "ok"
    assert got == want
