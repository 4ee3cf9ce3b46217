"""Relaxed (Concrete / Gumbel-softmax) distributions against PyTorch (float64)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip

MODULE = {"RelaxedOneHotCategorical": "relaxed_categorical", "ExpRelaxedCategorical": "relaxed_categorical",
          "RelaxedBernoulli": "relaxed_bernoulli", "LogitRelaxedBernoulli": "relaxed_bernoulli"}
CASES = [
    ("RelaxedOneHotCategorical", {"probs": np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])},
     np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])),
    ("ExpRelaxedCategorical", {"logits": np.array([0.3, -1.0, 2.0])}, np.log(np.array([0.1, 0.2, 0.7]))),
    ("RelaxedBernoulli", {"probs": np.array([0.2, 0.9])}, np.array([0.3, 0.95])),
    ("LogitRelaxedBernoulli", {"logits": np.array([0.3, -1.2])}, np.array([0.5, -2.0])),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_log_prob_and_gradients_match_torch(case: Any) -> None:
    torch = torch_or_skip()
    name, params, value = case
    out = []
    for lib in (rg, torch):
        temp = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        (k, v), = params.items()
        p = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        d = getattr(getattr(lib.distributions, MODULE[name]), name)(temp, **{k: p})
        lp = d.log_prob(lib.tensor(value, dtype=lib.float64))
        lp.sum().backward()
        lib.manual_seed(0)
        s = d.rsample((5,))
        out.append((lp.detach().numpy(), temp.grad.numpy(), p.grad.numpy(), tuple(s.shape), s.requires_grad,
                    tuple(d.batch_shape), tuple(d.event_shape), repr(d.support)))
    for a, b in zip(out[0][:3], out[1][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert out[0][3:] == out[1][3:]


def test_relaxed_one_hot_samples_approach_one_hot_at_low_temperature() -> None:
    rg.manual_seed(2)
    p = np.array([0.2, 0.3, 0.5])
    s = rg.distributions.RelaxedOneHotCategorical(rg.tensor(0.05), probs=rg.tensor(p)).sample((20000,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.bincount(s.argmax(-1), minlength=3) / 20000, p, atol=0.015)
    b = rg.distributions.RelaxedBernoulli(rg.tensor(0.05), probs=rg.tensor([0.3])).sample((20000,)).numpy()
    assert abs((b > 0.5).mean() - 0.3) < 0.015
