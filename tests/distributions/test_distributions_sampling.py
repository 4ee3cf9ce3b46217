"""Sample statistics (fixed seeds, generous tolerances) and reparameterised gradients."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip
from retrograd import distributions as D

N = 20000


def f64(*v: Any) -> Any:
    return rg.tensor(np.array(v, dtype=np.float64))


MOMENT_CASES = [
    lambda: D.Normal(f64(0.5, -2.0), f64(1.5, 0.3)),
    lambda: D.Uniform(f64(-1.0, 2.0), f64(3.0, 2.5)),
    lambda: D.Exponential(f64(0.5, 3.0)),
    lambda: D.Laplace(f64(1.0, -1.0), f64(0.5, 2.0)),
    lambda: D.Gamma(f64(0.3, 4.0), f64(2.0, 0.5)),
    lambda: D.Beta(f64(0.5, 3.0), f64(2.0, 0.7)),
    lambda: D.Dirichlet(f64(0.4, 2.0, 5.0)),
    lambda: D.Poisson(f64(0.7, 12.0)),
    lambda: D.Bernoulli(f64(0.1, 0.6)),
    lambda: D.Binomial(f64(10.0, 3.0), f64(0.3, 0.9)),
    lambda: D.OneHotCategorical(f64(0.1, 0.3, 0.6)),
    lambda: D.Multinomial(7, f64(0.1, 0.3, 0.6)),
    lambda: D.MultivariateNormal(f64(1.0, -1.0), rg.tensor([[2.0, 0.6], [0.6, 0.5]], dtype=rg.float64)),
    lambda: D.Chi2(f64(1.0, 6.0)),
    lambda: D.StudentT(f64(8.0, 12.0), f64(1.0, -1.0), f64(0.5, 2.0)),
    lambda: D.Gumbel(f64(1.0, -1.0), f64(0.5, 2.0)),
    lambda: D.Geometric(f64(0.2, 0.7)),
    lambda: D.HalfNormal(f64(0.5, 2.0)),
    lambda: D.LogNormal(f64(0.0, -1.0), f64(0.3, 0.5)),
    lambda: D.NegativeBinomial(f64(3.0, 0.7), f64(0.4, 0.8)),
    lambda: D.LowRankMultivariateNormal(f64(1.0, -1.0), rg.tensor([[1.0], [0.5]], dtype=rg.float64), f64(0.3, 2.0)),
]


@pytest.mark.parametrize("i", range(len(MOMENT_CASES)))
def test_sample_moments(i: int) -> None:
    rg.manual_seed(1234 + i)
    d = MOMENT_CASES[i]()
    s = d.sample((N,)).to(rg.float64).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    # mean within 5 standard errors; variance within 10%
    np.testing.assert_array_less(np.abs(s.mean(0) - mean), 5 * np.sqrt(var / N) + 1e-12)
    np.testing.assert_allclose(s.var(0), var, rtol=0.1, atol=1e-3)
    rg.manual_seed(1234 + i)
    assert np.array_equal(d.sample((N,)).to(rg.float64).numpy(), s)  # the seed decides the samples


def test_categorical_frequencies_and_mvn_covariance() -> None:
    rg.manual_seed(7)
    p = np.array([0.1, 0.2, 0.7])
    s = D.Categorical(rg.tensor(p)).sample((N,)).numpy()
    np.testing.assert_allclose(np.bincount(s, minlength=3) / N, p, atol=0.015)
    L = np.array([[1.0, 0.0, 0.0], [0.5, 0.8, 0.0], [-0.3, 0.2, 0.4]])
    x = D.MultivariateNormal(rg.zeros(3, dtype=rg.float64), scale_tril=rg.tensor(L)).sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), L @ L.T, atol=0.05)


def test_location_scale_rsample_gradients() -> None:
    # d sample / d loc = 1 and d sample / d scale = (sample - loc) / scale for location-scale families
    for cls in (D.Normal, D.Laplace):
        loc = rg.tensor([0.3, -1.0], dtype=rg.float64, requires_grad=True)
        scale = rg.tensor([0.5, 2.0], dtype=rg.float64, requires_grad=True)
        x = cls(loc, scale).rsample((100,))
        x.sum().backward()
        assert loc.grad.tolist() == [100.0, 100.0]
        expected = ((x.detach() - loc.detach()) / scale.detach()).sum(0).numpy()
        np.testing.assert_allclose(scale.grad.numpy(), expected, rtol=1e-12)
    low = rg.tensor([0.0], dtype=rg.float64, requires_grad=True)
    high = rg.tensor([2.0], dtype=rg.float64, requires_grad=True)
    u = D.Uniform(low, high).rsample((50,))
    u.sum().backward()
    np.testing.assert_allclose(high.grad.numpy(), (u.detach().numpy() / 2).sum(0), rtol=1e-12)
    rate = rg.tensor([2.0], dtype=rg.float64, requires_grad=True)
    e = D.Exponential(rate).rsample((50,))
    e.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), (-e.detach().numpy() / 2).sum(0), rtol=1e-12)


def test_mvn_rsample_gradient() -> None:
    loc = rg.zeros(2, dtype=rg.float64, requires_grad=True)
    L = rg.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=rg.float64, requires_grad=True)
    rg.manual_seed(3)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((10,))
    x.sum().backward()
    assert loc.grad.tolist() == [10.0, 10.0]
    rg.manual_seed(3)
    eps = rg.empty(10, 2, dtype=rg.float64).normal_().numpy()
    np.testing.assert_allclose(x.detach().numpy(), eps @ L.detach().numpy().T, rtol=1e-12)
    expected = np.tril(np.ones((2, 1)) @ eps.sum(0, keepdims=True))
    np.testing.assert_allclose(np.tril(L.grad.numpy()), expected, rtol=1e-12)


def test_gamma_implicit_gradient_matches_torch_formula() -> None:
    torch = torch_or_skip()
    rg.manual_seed(0)
    alpha = rg.tensor([0.2, 0.9, 1.0, 3.5, 20.0], dtype=rg.float64, requires_grad=True)
    x = D.Gamma(alpha, rg.ones(5, dtype=rg.float64)).rsample()
    x.sum().backward()
    expected = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()), torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=5e-4)


def test_gamma_dirichlet_beta_gradients_of_expectations() -> None:
    # the pathwise gradient of E[x] averages to the analytic one
    rg.manual_seed(5)
    c = rg.tensor([0.5, 3.0], dtype=rg.float64, requires_grad=True)
    r = rg.tensor([2.0, 0.5], dtype=rg.float64, requires_grad=True)
    D.Gamma(c, r).rsample((N,)).mean(0).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), 1 / r.detach().numpy(), rtol=0.05)
    np.testing.assert_allclose(r.grad.numpy(), -(c / r**2).detach().numpy(), rtol=0.05)
    a = rg.tensor([1.5, 0.8, 3.0], dtype=rg.float64, requires_grad=True)
    D.Dirichlet(a).rsample((N,)).mean(0)[0].backward()
    a0 = 5.3
    np.testing.assert_allclose(a.grad.numpy(), [1 / a0 - 1.5 / a0**2, -1.5 / a0**2, -1.5 / a0**2], atol=0.01)
    c1 = rg.tensor(2.0, dtype=rg.float64, requires_grad=True)
    c0 = rg.tensor(3.0, dtype=rg.float64, requires_grad=True)
    D.Beta(c1, c0).rsample((N,)).mean().backward()
    np.testing.assert_allclose([c1.grad.item(), c0.grad.item()], [3 / 25, -2 / 25], atol=0.01)


def test_sample_has_no_graph() -> None:
    loc = rg.zeros(2, requires_grad=True)
    assert not D.Normal(loc, 1.0).sample().requires_grad
    assert D.Normal(loc, 1.0).rsample().requires_grad
    c = rg.ones(2, requires_grad=True)
    assert not D.Gamma(c, 1.0).sample().requires_grad
    assert D.Gamma(c, 1.0).rsample().requires_grad
