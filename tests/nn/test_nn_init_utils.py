"""nn.init (gains, fans, distributions, errors) and nn.utils (clipping, vector conversion)
against real PyTorch."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

# -- init --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("nonlinearity", "param"), [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None), ("leaky_relu", True), ("leaky_relu", "x"), ("gelu", None),
])
def test_calculate_gain(torch: Any, nonlinearity: str, param: Any) -> None:
    ours = outcome(lambda: rg.nn.init.calculate_gain(nonlinearity, param))
    theirs = outcome(lambda: torch.nn.init.calculate_gain(nonlinearity, param))
    assert ours == theirs
    if ours[0] == "ok":
        a = rg.nn.init.calculate_gain(nonlinearity, param)
        b = torch.nn.init.calculate_gain(nonlinearity, param)
        assert a == pytest.approx(b) and type(a) is type(b)


@pytest.mark.parametrize("shape", [(3, 5), (4, 2, 3), (6, 3, 2, 2), (5,), ()])
def test_fans_and_errors(torch: Any, shape: tuple[int, ...]) -> None:
    ours = outcome(lambda: rg.nn.init._calculate_fan_in_and_fan_out(rg.zeros(shape)))
    theirs = outcome(lambda: torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape)))
    assert ours == theirs
    if ours[0] == "ok":
        assert rg.nn.init._calculate_fan_in_and_fan_out(rg.zeros(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    for name in ("xavier_uniform_", "kaiming_normal_", "eye_", "dirac_", "orthogonal_"):
        ours = outcome(lambda: getattr(rg.nn.init, name)(rg.zeros(shape)))
        theirs = outcome(lambda: getattr(torch.nn.init, name)(torch.zeros(shape)))
        assert ours[0] == theirs[0], name
        if ours[0] != "ok":
            assert ours[1] == theirs[1]
    assert outcome(lambda: rg.nn.init.kaiming_uniform_(rg.empty(2, 2), mode="fan_avg")) == \
        outcome(lambda: torch.nn.init.kaiming_uniform_(torch.empty(2, 2), mode="fan_avg"))
    assert outcome(lambda: rg.nn.init.dirac_(rg.empty(3, 2, 3), groups=2)) == \
        outcome(lambda: torch.nn.init.dirac_(torch.empty(3, 2, 3), groups=2))


def _stats(t: Any) -> tuple[float, float, float, float]:
    a = np.array(t.tolist())
    return float(a.mean()), float(a.std()), float(a.min()), float(a.max())


@pytest.mark.parametrize(("call", "mean", "std", "low", "high"), [
    ("uniform_(t, -2.0, 1.0)", -0.5, 3 / math.sqrt(12), -2.0, 1.0),
    ("normal_(t, 1.0, 0.5)", 1.0, 0.5, None, None),
    ("xavier_uniform_(t, gain=2.0)", 0.0, 2 * math.sqrt(2 / 600), -2 * math.sqrt(6 / 600), 2 * math.sqrt(6 / 600)),
    ("xavier_normal_(t)", 0.0, math.sqrt(2 / 600), None, None),
    ("kaiming_uniform_(t, nonlinearity='relu')", 0.0, math.sqrt(2 / 200), -math.sqrt(6 / 200), math.sqrt(6 / 200)),
    ("kaiming_normal_(t, mode='fan_out')", 0.0, math.sqrt(2 / 1.0001) / math.sqrt(400), None, None),
    ("trunc_normal_(t, 0.0, 1.0, -1.0, 2.0)", None, None, -1.0, 2.0),
])
def test_random_initialisers(call: str, mean: Any, std: Any, low: Any, high: Any) -> None:
    t = rg.nn.Parameter(rg.empty(400, 200))
    rg.manual_seed(1)
    out = eval(f"rg.nn.init.{call}", {"rg": rg, "t": t})
    # trunc_normal_'s rejection sampler writes twice (normal_, then copy_ of the redrawn), as PyTorch's does
    assert out is t and t.requires_grad and t.is_leaf and t._version == (2 if call.startswith("trunc") else 1)
    m, s, lo, hi = _stats(t)
    if mean is not None:
        assert abs(m - mean) < 0.01 * max(1.0, abs(mean)) + 3 * (std or 1) / 283
    if std is not None:
        assert abs(s - std) < 0.01 * std
    if low is not None:
        assert lo >= low and hi <= high
        assert lo < low + 0.05 * (high - low) and hi > high - 0.05 * (high - low)
    first = t.tolist()
    rg.manual_seed(1)
    eval(f"rg.nn.init.{call}", {"rg": rg, "t": t})
    assert t.tolist() == first
    g = rg.Generator().manual_seed(1)
    eval(f"rg.nn.init.{call[:-1]}, generator=g)", {"rg": rg, "t": t, "g": g})
    assert t.tolist() == first  # an explicit generator seeded alike gives the same draw


def test_trunc_normal_matches_truncated_moments() -> None:
    rg.manual_seed(2)
    t = rg.nn.init.trunc_normal_(rg.empty(100000), mean=0.5, std=1.0, a=0.0, b=1.0)
    a = np.array(t.tolist())
    # moments of N(0.5, 1) truncated to [0, 1]: symmetric around 0.5, variance ~0.0793
    assert abs(a.mean() - 0.5) < 0.005 and abs(a.var() - 0.0793) < 0.002
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        rg.nn.init.trunc_normal_(rg.empty(10), mean=10.0, std=1.0)


def test_deterministic_initialisers(torch: Any) -> None:
    for call in ("constant_(t, 0.3)", "ones_(t)", "zeros_(t)", "eye_(t)"):
        r = eval(f"rg.nn.init.{call}", {"rg": rg, "t": rg.empty(3, 4)})
        s = eval(f"torch.nn.init.{call}", {"torch": torch, "t": torch.empty(3, 4)})
        assert r.tolist() == s.tolist() and r.dtype == rg.float32
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 1, 3, 3), 1)):
        r = rg.nn.init.dirac_(rg.empty(*shape), groups)
        s = torch.nn.init.dirac_(torch.empty(*shape), groups)
        assert r.tolist() == s.tolist()


def test_orthogonal() -> None:
    for shape in ((4, 6), (6, 4), (3, 2, 2)):
        rg.manual_seed(0)
        w = rg.nn.init.orthogonal_(rg.empty(*shape), gain=2.0)
        m = np.array(w.tolist()).reshape(shape[0], -1)
        gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)


def test_zero_element_warning_and_no_grad(torch: Any) -> None:
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        rg.nn.init.kaiming_uniform_(rg.empty(0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = rg.nn.Parameter(rg.empty(2, 2))
        rg.nn.init.normal_(p)
        assert p.grad_fn is None and p.is_leaf


# -- utils -------------------------------------------------------------------------------------


def _grads_pair(torch: Any) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(4)
    values = [rng.standard_normal(s).astype(np.float32) * 3 for s in ((3, 2), (4,), (2, 2, 2))]
    ours, theirs = [], []
    for v in values:
        p, q = rg.nn.Parameter(rg.zeros(*v.shape)), torch.nn.Parameter(torch.zeros(*v.shape))
        p.grad, q.grad = rg.tensor(v), torch.tensor(v)
        ours.append(p)
        theirs.append(q)
    unused_r, unused_t = rg.nn.Parameter(rg.ones(2)), torch.nn.Parameter(torch.ones(2))
    return ours + [unused_r], theirs + [unused_t]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1000.0])
def test_clip_grad_norm(torch: Any, norm_type: float, max_norm: float) -> None:
    ours, theirs = _grads_pair(torch)
    total_r = rg.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert type(total_r).__name__ == "Tensor" and total_r.shape == () and total_r.dtype == rg.float32
    assert total_r.item() == pytest.approx(total_t.item(), rel=1e-5)
    for p, q in zip(ours, theirs, strict=True):
        if q.grad is None:
            assert p.grad is None
        else:
            np.testing.assert_allclose(p.grad.tolist(), q.grad.tolist(), rtol=1e-5, atol=1e-7)


def test_clip_grad_misc(torch: Any) -> None:
    assert rg.nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    p = rg.nn.Parameter(rg.ones(2))
    p.grad = rg.tensor([3.0, 4.0])
    assert rg.nn.utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)  # a single tensor works
    p.grad = rg.tensor([float("nan"), 1.0])
    q = torch.nn.Parameter(torch.ones(2))
    q.grad = torch.tensor([float("nan"), 1.0])
    assert outcome(lambda: rg.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)) == \
        outcome(lambda: torch.nn.utils.clip_grad_norm_([q], 1.0, error_if_nonfinite=True))
    with pytest.warns(UserWarning, match="empty generator"):
        rg.nn.utils.clip_grad_norm_((x for x in []), 1.0)
    ours, theirs = _grads_pair(torch)
    assert rg.nn.utils.clip_grad_value_(ours, 0.7) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for a, b in zip(ours, theirs, strict=True):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert a.grad.tolist() == b.grad.tolist()
    assert rg.nn.utils.get_total_norm([rg.tensor([3.0]), rg.tensor([4.0])]).item() == 5.0


def test_parameters_vector_round_trip(torch: Any) -> None:
    r = rg.nn.Sequential(rg.nn.Linear(3, 2), rg.nn.Linear(2, 1))
    t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    r.load_state_dict({k: rg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    vr, vt = rg.nn.utils.parameters_to_vector(r.parameters()), torch.nn.utils.parameters_to_vector(t.parameters())
    assert vr.tolist() == vt.tolist() and type(vr.grad_fn).__name__ == type(vt.grad_fn).__name__
    (vr * vr).sum().backward()
    assert r[0].weight.grad.tolist() == (2 * r[0].weight.detach()).tolist()
    new = rg.arange(float(vr.numel()))
    rg.nn.utils.vector_to_parameters(new, r.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(float(vt.numel())), t.parameters())
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        assert p.tolist() == q.tolist() and type(p) is rg.nn.Parameter
    assert outcome(lambda: rg.nn.utils.vector_to_parameters([1.0], r.parameters())) == \
        outcome(lambda: torch.nn.utils.vector_to_parameters([1.0], t.parameters()))
