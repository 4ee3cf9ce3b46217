"""MixtureSameFamily against PyTorch (float64)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome, torch_or_skip

W = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
LOC = np.array([[-1.0, 0.5, 2.0], [0.0, 1.0, -2.0]])
SCALE = np.array([[0.5, 1.0, 2.0], [1.5, 0.3, 0.7]])


def _make(L: Any, multivariate: bool) -> tuple[Any, list[Any]]:
    D = L.distributions
    w = L.tensor(W, dtype=L.float64, requires_grad=True)
    loc = L.tensor(LOC, dtype=L.float64, requires_grad=True)
    scale = L.tensor(SCALE, dtype=L.float64, requires_grad=True)
    if multivariate:
        comp = D.Independent(D.Normal(loc.unsqueeze(-1).expand(2, 3, 2), scale.unsqueeze(-1).expand(2, 3, 2)), 1)
    else:
        comp = D.Normal(loc, scale)
    return D.MixtureSameFamily(D.Categorical(probs=w), comp), [w, loc, scale]


@pytest.mark.parametrize("multivariate", [False, True])
def test_values_and_gradients_match_torch(multivariate: bool) -> None:
    torch = torch_or_skip()
    out = []
    for lib in (rg, torch):
        m, leaves = _make(lib, multivariate)
        v = lib.tensor([[0.3, -0.4], [1.0, 2.0]] if multivariate else [0.3, -0.4], dtype=lib.float64)
        q = [m.log_prob(v), m.mean, m.variance]
        if not multivariate:
            q.append(m.cdf(v))
        sum((t * (i + 1)).sum() for i, t in enumerate(q)).backward()
        out.append(([t.detach().numpy() for t in q], [t.grad.numpy() for t in leaves], repr(m),
                    tuple(m.batch_shape), tuple(m.event_shape), tuple(m.sample((4,)).shape),
                    tuple(m.expand((5, 2)).batch_shape)))
    for a, b in zip(out[0][0] + out[0][1], out[1][0] + out[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert out[0][2:] == out[1][2:]


def test_sample_moments() -> None:
    rg.manual_seed(11)
    m, _ = _make(rg, False)
    s = m.sample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), m.mean.detach().numpy(), atol=0.05)
    np.testing.assert_allclose(s.var(0), m.variance.detach().numpy(), rtol=0.05)


def test_errors_match_torch() -> None:
    torch = torch_or_skip()
    for make in (
        lambda L: L.distributions.MixtureSameFamily(L.distributions.Normal(0.0, 1.0), L.distributions.Normal(0.0, 1.0)),
        lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(3)),
                                                    L.distributions.Normal(L.zeros(2), 1.0)),
        lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(3, 2)),
                                                    L.distributions.Normal(L.zeros(4, 2), 1.0)),
    ):
        assert outcome(lambda: make(rg)) == outcome(lambda: make(torch))
