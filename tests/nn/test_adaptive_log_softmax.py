"""``nn.AdaptiveLogSoftmaxWithLoss`` against real PyTorch on the same seeded weights: output,
loss, gradients of the input and every weight, grad_fn names, ``log_prob``, ``predict`` (all in
the shortlist, none, mixed), unbatched input, repr and state_dict, constructor and forward
errors; gradcheck and gradgradcheck of the loss in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _make(lib: Any, **kwargs: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [3, 6, 10], div_value=2.0, dtype=lib.float64, **kwargs)


@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_backward_log_prob_and_predict_match_torch(torch: Any, head_bias: bool) -> None:
    x = np.random.default_rng(0).normal(size=(7, 8))
    t = np.array([0, 5, 9, 3, 12, 1, 7])
    found = []
    for lib in (rg, torch):
        m = _make(lib, head_bias=head_bias)
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt, lib.tensor(t))
        (out.output.sum() * 0.5 + out.loss).backward()
        grads = [p.grad.numpy() for _, p in sorted(m.named_parameters())]
        found.append(([out.output.detach().numpy(), out.loss.detach().numpy(), xt.grad.numpy(), *grads,
                       m.log_prob(lib.tensor(x)).detach().numpy(), m.predict(lib.tensor(x)).numpy()],
                      (type(out.output.grad_fn).__name__, type(out.loss.grad_fn).__name__, type(out).__name__,
                       out._fields, repr(m), sorted(m.state_dict()))))
    for a, b in zip(found[0][0], found[1][0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert found[0][1] == found[1][1]


def test_unbatched_and_predict_paths_match_torch(torch: Any) -> None:
    x = np.random.default_rng(1).normal(size=(8,))
    batch = np.random.default_rng(2).normal(size=(6, 8)) * 3
    found = []
    for lib in (rg, torch):
        m = _make(lib)
        out = m(lib.tensor(x), lib.tensor(11))
        preds = []
        for bias in (10.0, -10.0, 0.0):  # head favours: the shortlist, the clusters, a mix
            with lib.no_grad():
                m.head.weight[:3] += bias
            preds.append(m.predict(lib.tensor(batch)).numpy())
        found.append((out.output.detach().numpy(), out.loss.item(), tuple(out.output.shape), preds))
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-12)
    assert found[0][1] == pytest.approx(found[1][1], rel=1e-12)
    assert found[0][2] == found[1][2] == ()
    for a, b in zip(found[0][3], found[1][3], strict=True):
        np.testing.assert_array_equal(a, b)


def test_gradcheck_and_gradgradcheck() -> None:
    m = _make(rg)
    t = rg.tensor([0, 4, 8, 12, 2])
    x = rg.tensor(np.random.default_rng(3).normal(size=(5, 8)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda a: m(a, t).loss, (x,))
    assert rg.autograd.gradgradcheck(lambda a: m(a, t).loss, (x,))


ERRORS = [
    ("no cutoffs", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])),
    ("unsorted", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])),
    ("too large", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [10])),
    ("repeated", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3])),
    ("fractional", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5])),
    ("batch sizes", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(L.ones(3, 8), L.tensor([0, 1]))),
    ("3-D input", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(L.ones(2, 3, 8), L.tensor([0, 1]))),
    ("0-D target", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(L.ones(2, 8), L.tensor(1))),
    ("2-D target", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(L.ones(2, 8), L.zeros(2, 1, dtype=L.int64))),
    ("target range", lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(L.ones(2, 8), L.tensor([3, 10]))),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
