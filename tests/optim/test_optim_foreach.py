"""The multi-tensor (``foreach``) updates of SGD, Adam and AdamW (``optim/_foreach.py``): bit for bit
the parameters, state and version counters of the per-parameter path, PyTorch's results (its own
``foreach=True``), the automatic choice of ``foreach=None``, and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.optim import _foreach

SHAPES = [(3, 4), (4,), (), (2, 1, 3)]

SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "weight_decay": 0.1},
    {"lr": 0.05, "momentum": 1.0, "nesterov": True, "weight_decay": 1.0},
    {"lr": 0.1, "momentum": 0.9, "maximize": True},
]
ADAM_CONFIGS = [
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "betas": (0.5, 0.6), "eps": 1e-4}),
    ("Adam", {"weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"maximize": True, "weight_decay": 1.0}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.5, "amsgrad": True, "maximize": True}),
]
CONFIGS = [("SGD", c) for c in SGD_CONFIGS] + ADAM_CONFIGS


def _grads(steps: int, dtype: str) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(1)
    return [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]


def _run(lib: Any, name: str, kwargs: dict[str, Any], foreach: bool | None, dtype: str = "float32",
         steps: int = 4) -> tuple[list[Any], Any]:
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]
    opt = getattr(lib.optim, name)(params, foreach=foreach, **kwargs)
    for grads in _grads(steps, dtype):
        for p, g in zip(params, grads, strict=True):
            p.grad = lib.tensor(g)
        opt.step()
    return params, opt


def _state_arrays(opt: Any, params: list[Any]) -> list[tuple[str, np.ndarray]]:
    return [(k, np.asarray(v.detach().numpy() if hasattr(v, "detach") else v))
            for p in params for k, v in opt.state[p].items()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
def test_foreach_is_bitwise_the_per_parameter_path(name: str, kwargs: dict[str, Any], dtype: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    taken = []
    flat = _foreach.sgd_foreach if name == "SGD" else _foreach.adam_foreach

    def spy(*args: Any) -> bool:
        taken.append(flat(*args))
        return taken[-1]

    module = rg.optim.sgd if name == "SGD" else rg.optim.adam
    monkeypatch.setattr(module, "sgd_foreach" if name == "SGD" else "adam_foreach", spy)
    p_flat, o_flat = _run(rg, name, kwargs, foreach=True, dtype=dtype)
    assert taken and all(taken)  # the flat path ran on every step, none fell back
    taken.clear()
    p_loop, o_loop = _run(rg, name, kwargs, foreach=False, dtype=dtype)
    assert not taken
    for a, b in zip(p_flat, p_loop, strict=True):
        assert a._data.dtype == b._data.dtype and a._data.shape == b._data.shape
        np.testing.assert_array_equal(a._data, b._data, strict=True)
        assert a._version == b._version
    s_flat, s_loop = _state_arrays(o_flat, p_flat), _state_arrays(o_loop, p_loop)
    assert [k for k, _ in s_flat] == [k for k, _ in s_loop]
    for (_, a), (_, b) in zip(s_flat, s_loop, strict=True):
        np.testing.assert_array_equal(a, b, strict=True)
    for p, q in zip(p_flat, p_loop, strict=True):
        for key in o_flat.state[p]:
            assert o_flat.state[p][key]._version == o_loop.state[q][key]._version, key


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
def test_foreach_matches_pytorch_foreach(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    ours, o_ours = _run(rg, name, kwargs, foreach=True, dtype="float64")
    theirs, o_theirs = _run(torch, name, kwargs, foreach=True, dtype="float64")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)
    for (ka, a), (kb, b) in zip(_state_arrays(o_ours, ours), _state_arrays(o_theirs, theirs), strict=True):
        assert ka == kb
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_foreach_none_takes_adams_flat_path_for_small_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    real_adam, real_sgd = _foreach.adam_foreach, _foreach.sgd_foreach
    monkeypatch.setattr(rg.optim.adam, "adam_foreach", lambda o, g, ps: calls.append(("adam", len(ps))) or real_adam(o, g, ps))
    monkeypatch.setattr(rg.optim.sgd, "sgd_foreach", lambda o, g, ps: calls.append(("sgd", len(ps))) or real_sgd(o, g, ps))
    small = [rg.nn.Parameter(rg.ones(3)) for _ in range(3)]
    big = [rg.nn.Parameter(rg.ones(_foreach.ADAM_SMALL + 1)) for _ in range(2)]
    single = [rg.nn.Parameter(rg.ones(2))]
    for p in small + big + single:
        p.grad = rg.ones_like(p)
    rg.optim.Adam([{"params": small}, {"params": big}, {"params": single}], lr=0.1).step()
    assert calls == [("adam", 3)]  # the small group only: not the large parameters, not a single one
    for p in small:  # Adam's first step moves each element by lr against the gradient's sign
        np.testing.assert_allclose(p._data, 0.9, rtol=1e-6)
    calls.clear()
    rg.optim.SGD(small, lr=0.1, momentum=0.9).step()  # SGD keeps PyTorch's CPU choice: the loop
    assert calls == []
    rg.optim.SGD(small, lr=0.1, momentum=0.9, foreach=True).step()
    assert calls == [("sgd", 3)]


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_foreach_falls_back_where_flat_is_not_exact(name: str) -> None:
    """Mixed dtypes and parameters that are views of one array run the per-parameter path, with its results."""
    base = rg.arange(6.0).reshape(2, 3)
    cases = [
        [rg.ones(3, requires_grad=True), rg.ones(3, dtype=rg.float64, requires_grad=True)],
        [base[0].detach().requires_grad_(), base[1].detach().requires_grad_()],
    ]
    for params in cases:
        copies = [p.detach().clone().requires_grad_() for p in params]
        for ps, foreach in ((params, True), (copies, False)):
            opt = getattr(rg.optim, name)(ps, lr=0.1, foreach=foreach)
            for p in ps:
                p.grad = rg.full_like(p, 0.5)
            for _ in range(2):
                opt.step()
        for a, b in zip(params, copies, strict=True):
            np.testing.assert_array_equal(a._data, b._data)


def test_sgd_foreach_buffers_own_their_memory() -> None:
    params = [rg.nn.Parameter(rg.ones(2)), rg.nn.Parameter(rg.ones(3))]
    opt = rg.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True)
    for p in params:
        p.grad = rg.ones_like(p)
    opt.step()
    bufs = [opt.state[p]["momentum_buffer"] for p in params]
    assert bufs[0]._data.base is None and bufs[1]._data.base is None
    bufs[0].zero_()  # state edited in place is what the next step reads
    opt.step()
    np.testing.assert_allclose(params[0]._data, 1 - 0.1 - 0.1, rtol=1e-6)
    np.testing.assert_allclose(params[1]._data, 1 - 0.1 - 0.1 * 1.9, rtol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_fused_and_foreach_refused_as_pytorch(torch: Any, name: str) -> None:
    ours = outcome(lambda: getattr(rg.optim, name)([rg.nn.Parameter(rg.ones(2))], lr=0.1, foreach=True, fused=True))
    theirs = outcome(lambda: getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], lr=0.1, foreach=True,
                                                       fused=True))
    assert ours == theirs
    assert ours[0] == "RuntimeError"


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_foreach_differentiable_refused_as_pytorch(torch: Any, name: str) -> None:
    def run(lib: Any) -> None:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        getattr(lib.optim, name)([p], foreach=True, differentiable=True).step()

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch)) == ("AssertionError",
                                                                       "_foreach ops don't support autograd")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("lr", [0.1, [0.1, 0.2], -1.0])
@pytest.mark.parametrize("foreach", [True, False])
def test_tensor_lr_checks_as_pytorch(torch: Any, name: str, lr: Any, foreach: bool) -> None:
    def run(lib: Any) -> list[float]:
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        getattr(lib.optim, name)([p], lr=lib.tensor(lr), foreach=foreach).step()
        return p.tolist()

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch))
    if outcome(lambda: run(torch))[0] == "ok":
        np.testing.assert_allclose(run(rg), run(torch), rtol=1e-6)


def test_foreach_gradient_aliasing_state_as_pytorch(torch: Any) -> None:
    """A gradient that is another parameter's momentum buffer: the writes of one parameter's update
    are seen by the next one's, as PyTorch's per-parameter order gives (the flat path steps aside)."""
    def run(lib: Any) -> list[list[float]]:
        ps = [lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, -1.0], requires_grad=True)]
        opt = lib.optim.SGD(ps, lr=0.1, momentum=0.5, foreach=True)
        for p in ps:
            p.grad = lib.tensor([1.0, 1.0])
        opt.step()
        ps[1].grad = opt.state[ps[0]]["momentum_buffer"]
        ps[0].grad = opt.state[ps[0]]["momentum_buffer"]
        opt.step()
        return [p.tolist() for p in ps]

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-6)
