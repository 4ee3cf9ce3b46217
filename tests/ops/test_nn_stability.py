"""Numerical stability of the nn functionals: extreme inputs (|x| up to 1e4, probabilities of
exactly 0 and 1) give finite values and gradients, equal to PyTorch's."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip

EXTREME = [-1e4, -1e3, -50.0, -20.0, -1.0, 0.0, 1.0, 20.0, 50.0, 1e3, 1e4]


def _pair(fn: Any, *arrays: Any, dtype: str = "float64") -> tuple[Any, ...]:
    """Run ``fn(lib, *tensors)`` on retrograd and torch; return outputs and input gradients."""
    torch = torch_or_skip()
    results = []
    for lib in (rg, torch):
        leaves = []
        for a, g in arrays:
            data = np.asarray(a)
            floating = data.dtype.kind == "f"
            leaves.append(lib.tensor(data.astype(dtype) if floating else data, requires_grad=floating and g))
        out = fn(lib, *leaves)
        out.sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in leaves]
        results.append((out.detach().numpy(), grads))
    return results[0], results[1]


def _assert_finite_and_equal(ours: Any, theirs: Any, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    (out, grads), (ref, ref_grads) = ours, theirs
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
    for g, r in zip(grads, ref_grads, strict=True):
        assert (g is None) == (r is None)
        if g is not None:
            assert np.all(np.isfinite(g))
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)


UNARY = {
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "softplus_beta": lambda lib, x: lib.nn.functional.softplus(x, beta=0.5, threshold=100.0),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, dim=0),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, dim=0),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x, dim=0),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu_tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "elu": lambda lib, x: lib.nn.functional.elu(x),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "celu": lambda lib, x: lib.nn.functional.celu(x, 0.5),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "sigmoid": lambda lib, x: lib.nn.functional.sigmoid(x),
    "tanh": lambda lib, x: lib.nn.functional.tanh(x),
    "glu": lambda lib, x: lib.nn.functional.glu(x.reshape(1, -1)[:, :10]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_extreme_inputs(name: str, dtype: str) -> None:
    ours, theirs = _pair(UNARY[name], (EXTREME, True), dtype=dtype)
    rtol = 1e-6 if dtype == "float64" else 1e-5
    _assert_finite_and_equal(ours, theirs, rtol=rtol, atol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_large_logits(reduction: str, label_smoothing: float) -> None:
    logits = [[1e4, -1e4, 0.0], [-1e4, 1e4, 5e3], [0.0, 0.0, -1e4], [1e3, -1e3, 1e4]]
    ours, theirs = _pair(
        lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction=reduction, label_smoothing=label_smoothing),
        (logits, True), (np.array([1, 0, 2, 2]), False))
    _assert_finite_and_equal(ours, theirs)


def test_cross_entropy_probabilities_large_logits() -> None:
    logits = [[1e4, -1e4, 0.0], [-1e4, 1e4, 5e3]]
    target = [[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]]
    ours, theirs = _pair(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), (logits, True), (target, True))
    _assert_finite_and_equal(ours, theirs)


@pytest.mark.parametrize("with_weights", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_large_logits(reduction: str, with_weights: bool) -> None:
    x = [[1e4, -1e4, 0.0], [-1e3, 1e3, 50.0]]
    t = [[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]]

    def fn(lib: Any, x: Any, t: Any) -> Any:
        kw = {}
        if with_weights:
            kw = {"weight": lib.tensor([0.5, 2.0, 1.0], dtype=x.dtype), "pos_weight": lib.tensor([3.0, 0.5, 1.0],
                                                                                            dtype=x.dtype)}
        return lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw)

    ours, theirs = _pair(fn, (x, True), (t, True))
    _assert_finite_and_equal(ours, theirs)


def test_binary_cross_entropy_clamps_log_at_minus_100() -> None:
    # log(0) is clamped to -100: confident wrong predictions give 100, not inf.
    x = [0.0, 1.0, 0.0, 1.0, 0.5]
    t = [1.0, 0.0, 0.0, 1.0, 0.5]
    ours, theirs = _pair(lambda lib, x, t: lib.nn.functional.binary_cross_entropy(x, t, reduction="none"),
                         (x, True), (t, True))
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[0][0] == pytest.approx(100.0) and ours[0][1] == pytest.approx(100.0)
    np.testing.assert_allclose(ours[1][0], theirs[1][0])  # gradients, finite thanks to the 1e-12 floor
    assert np.all(np.isfinite(ours[1][0]))


def test_kl_div_zero_target_is_finite() -> None:
    ours, theirs = _pair(lambda lib, x, t: lib.nn.functional.kl_div(x, t, reduction="batchmean"),
                         ([[-1e4, 0.0], [-1.0, -2.0]], True), ([[0.0, 1.0], [0.5, 0.5]], False))
    _assert_finite_and_equal(ours, theirs)


def test_pairwise_distance_and_normalize_at_zero() -> None:
    zeros = [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    ours, theirs = _pair(lambda lib, x: lib.nn.functional.normalize(x), (zeros, True))
    _assert_finite_and_equal(ours, theirs)
    ours, theirs = _pair(lambda lib, x, y: lib.nn.functional.pairwise_distance(x, y), (zeros, True), (zeros, True))
    _assert_finite_and_equal(ours, theirs)
    ours, theirs = _pair(lambda lib, x, y: lib.nn.functional.cosine_similarity(x, y), (zeros, True), (zeros, True))
    _assert_finite_and_equal(ours, theirs)


def test_batch_norm_constant_channel() -> None:
    # Zero variance: eps keeps 1/std finite.
    x = [[1.0, 2.0], [1.0, 3.0], [1.0, -1.0]]
    ours, theirs = _pair(lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True) * lib.tensor(
        [[1.0, 2.0]], dtype=x.dtype), (x, True))
    _assert_finite_and_equal(ours, theirs, atol=1e-7)


def test_gelu_erf_accuracy() -> None:
    # The exact GELU uses a private erf: compare with math.erf to near machine precision.
    x = np.linspace(-8, 8, 4001)
    out = rg.nn.functional.gelu(rg.tensor(x)).numpy()
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-15)


def test_attention_fully_masked_row_is_zero_not_nan() -> None:
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 2))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False  # query 1 may attend to nothing
    ours, theirs = _pair(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=lib.tensor(mask)), (q, True), (k, True), (v, True))
    _assert_finite_and_equal(ours, theirs, atol=1e-12)
    assert not ours[0][:, 1].any()
