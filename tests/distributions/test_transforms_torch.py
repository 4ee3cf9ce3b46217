"""retrograd.distributions.transforms and TransformedDistribution against PyTorch (float64)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome, torch_or_skip

X = np.array([[0.3, -1.2, 0.8], [2.0, 0.1, -0.4]])

TRANSFORMS = [
    lambda L, T: T.ExpTransform(),
    lambda L, T: T.AffineTransform(0.5, -2.0),
    lambda L, T: T.AffineTransform(L.tensor([0.5, 1.0, -1.0], dtype=L.float64),
                                   L.tensor([2.0, -0.5, 3.0], dtype=L.float64), event_dim=1),
    lambda L, T: T.SigmoidTransform(),
    lambda L, T: T.TanhTransform(),
    lambda L, T: T.StickBreakingTransform(),
    lambda L, T: T.ComposeTransform([T.AffineTransform(0.2, 3.0), T.SigmoidTransform()]),
    lambda L, T: T.ComposeTransform([T.StickBreakingTransform(), T.ExpTransform().inv]),
    lambda L, T: T.ExpTransform().inv.inv,
]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy(), dtype=np.float64)


@pytest.mark.parametrize("i", range(len(TRANSFORMS)))
def test_transform_values_and_gradients(i: int) -> None:
    torch = torch_or_skip()
    res = []
    for lib in (rg, torch):
        t = TRANSFORMS[i](lib, lib.distributions.transforms)
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = t(x)
        x_back = t.inv(y.detach().clone())
        ladj = t.log_abs_det_jacobian(x, y)
        (y.sum() + 2 * ladj.sum()).backward()
        res.append((_np(y), _np(x_back), _np(ladj), _np(x.grad), t.bijective, repr(t.domain), repr(t.codomain),
                    tuple(t.forward_shape((2, 3))), tuple(t.inverse_shape(tuple(y.shape))), repr(t)))
    ours, theirs = res
    for k in range(4):
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-12, err_msg=str(k))
    assert ours[4:] == theirs[4:]


def test_inverse_cache_and_sign() -> None:
    torch = torch_or_skip()
    for lib in (rg, torch):
        T = lib.distributions.transforms
        t = T.SigmoidTransform(cache_size=1)
        x = lib.tensor([40.0], dtype=lib.float64)
        assert t.inv(t(x)) is x  # the cache returns the exact input, past sigmoid saturation
        assert T.ExpTransform().inv.inv == T.ExpTransform()
        assert T.ExpTransform().sign == 1
    assert rg.distributions.transforms.AffineTransform(0.0, -3.0).sign == \
        torch.distributions.transforms.AffineTransform(0.0, -3.0).sign


def test_softmax_transform() -> None:
    torch = torch_or_skip()
    y = [lib.distributions.transforms.SoftmaxTransform()(lib.tensor(X)) for lib in (rg, torch)]
    np.testing.assert_allclose(_np(y[0]), _np(y[1]), rtol=1e-12)


TD_CASES = [
    lambda L, D, T: D.TransformedDistribution(D.Normal(L.tensor([0.3, -0.2], dtype=L.float64),
                                                        L.tensor([1.5, 0.5], dtype=L.float64)),
                                              [T.AffineTransform(1.0, 2.0), T.SigmoidTransform()]),
    lambda L, D, T: D.TransformedDistribution(D.Normal(L.tensor([0.3, -0.2], dtype=L.float64),
                                                        L.tensor([1.5, 0.5], dtype=L.float64)),
                                              T.AffineTransform(1.0, -2.0)),
    lambda L, D, T: D.TransformedDistribution(
        D.Normal(L.tensor([[0.3, -0.2], [0.1, 0.4]], dtype=L.float64), L.tensor(1.2, dtype=L.float64)),
        [T.StickBreakingTransform()]),
    lambda L, D, T: D.TransformedDistribution(D.Uniform(L.zeros(2, dtype=L.float64), L.ones(2, dtype=L.float64)),
                                              [T.SigmoidTransform().inv]),
]
TD_VALUES = [np.array([0.3, 0.9]), np.array([0.3, 0.9]), np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
             np.array([-1.0, 2.0])]


@pytest.mark.parametrize("i", range(len(TD_CASES)))
def test_transformed_distribution(i: int) -> None:
    torch = torch_or_skip()
    res = []
    for lib in (rg, torch):
        d = TD_CASES[i](lib, lib.distributions, lib.distributions.transforms)
        leaf = d.base_dist.base_dist if hasattr(d.base_dist, "base_dist") else d.base_dist
        params = [p for p in vars(leaf).values() if lib.is_tensor(p) and p.is_floating_point()]
        for p in params:
            p.requires_grad_(True)
        d = TD_CASES[i](lib, lib.distributions, lib.distributions.transforms)
        v = lib.tensor(TD_VALUES[i], dtype=lib.float64)
        out = {"log_prob": d.log_prob(v)}
        if i in (0, 1, 3):
            out["cdf"] = d.cdf(v)
            out["icdf"] = d.icdf(lib.tensor([0.25, 0.6], dtype=lib.float64))
        res.append(({k: _np(t) for k, t in out.items()}, tuple(d.batch_shape), tuple(d.event_shape),
                    repr(d.support), d.has_rsample, tuple(d.sample((3,)).shape),
                    tuple(d.expand((4,) + tuple(d.batch_shape)).batch_shape)))
    ours, theirs = res
    for k in theirs[0]:
        np.testing.assert_allclose(ours[0][k], theirs[0][k], rtol=1e-10, atol=1e-12, err_msg=k)
    assert ours[1:] == theirs[1:]


def test_transformed_distribution_gradients() -> None:
    torch = torch_or_skip()
    grads = []
    for lib in (rg, torch):
        D, T = lib.distributions, lib.distributions.transforms
        loc = lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True)
        scale = lib.tensor([1.5, 0.5], dtype=lib.float64, requires_grad=True)
        d = D.TransformedDistribution(D.Normal(loc, scale), [T.AffineTransform(1.0, 2.0), T.TanhTransform()])
        v = lib.tensor([0.3, -0.9], dtype=lib.float64, requires_grad=True)
        (d.log_prob(v).sum() + d.cdf(v).sum()).backward()
        grads.append([_np(loc.grad), _np(scale.grad), _np(v.grad)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_transformed_distribution_errors_match_torch() -> None:
    torch = torch_or_skip()
    for make in (
        lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), "exp"),
        lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0),
                                                          [L.distributions.transforms.StickBreakingTransform()]),
        lambda L: L.distributions.LogNormal(0.0, 1.0).log_prob(L.tensor(-1.0)),
    ):
        assert outcome(lambda: make(rg)) == outcome(lambda: make(torch))
