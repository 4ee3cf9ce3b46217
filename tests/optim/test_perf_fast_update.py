"""SGD's and Adam's NumPy update (``_sgd_update_arrays``, ``_adam_update_arrays``: the common
configurations written straight into the arrays) gives bit for bit the parameters, state and
version counters of the tensor-op update it replaces, and PyTorch's values; anything it does not
cover (weight decay, amsgrad, maximize, shared memory, tensors as hyper-parameters, inference
tensors) takes the tensor ops, with their errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim import adam as adam_module
from retrograd.optim import sgd as sgd_module

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=1, nesterov=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("AdamW", dict(lr=0.01, weight_decay=0)),
]


def _run(lib: Any, name: str, kwargs: dict[str, Any], dtype: str, steps: int = 4) -> tuple[list[np.ndarray], Any]:
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in [(3, 4), (4,), ()]]
    opt = getattr(lib.optim, name)(params, foreach=False, **kwargs)  # (the per-parameter path)
    for k in range(steps):
        opt.zero_grad()
        loss = sum(((p * (k + 1.5)).sin() * p).sum() for p in params)
        loss.backward()
        opt.step()
    return [p.detach().numpy().copy() for p in params], (params, opt)


def _tensor_op_path(monkeypatch: Any) -> None:
    monkeypatch.setattr(sgd_module, "_sgd_update_arrays", lambda *args: False)
    monkeypatch.setattr(adam_module, "_adam_update_arrays", lambda *args: False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
def test_fast_update_is_bitwise_the_tensor_ops(monkeypatch: Any, name: str, kwargs: dict[str, Any], dtype: str) -> None:
    fast, (fast_params, fast_opt) = _run(rg, name, kwargs, dtype)
    with monkeypatch.context() as m:
        _tensor_op_path(m)
        slow, (slow_params, slow_opt) = _run(rg, name, kwargs, dtype)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b, strict=True)
    assert [p._version for p in fast_params] == [p._version for p in slow_params]
    for p, q in zip(fast_params, slow_params):
        fs, ss = fast_opt.state[p], slow_opt.state[q]
        assert fs.keys() == ss.keys()
        for key in fs:
            np.testing.assert_array_equal(fs[key].numpy(), ss[key].numpy(), strict=True)
            assert fs[key]._version == ss[key]._version, key


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
def test_fast_update_matches_pytorch(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    ours, _ = _run(rg, name, kwargs, "float64")
    ref, _ = _run(torch, name, kwargs, "float64")
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_fast_update_runs_on_the_common_path(monkeypatch: Any) -> None:
    # The benchmark's configurations do take the NumPy update (from the second step for momentum).
    calls: list[bool] = []
    original = sgd_module._sgd_update_arrays
    monkeypatch.setattr(sgd_module, "_sgd_update_arrays", lambda *a: calls.append(original(*a)) or calls[-1])
    _run(rg, "SGD", dict(lr=0.1, momentum=0.9), "float32", steps=2)
    assert calls == [False] * 3 + [True] * 3
    done: list[bool] = []
    original_adam = adam_module._adam_update_arrays
    monkeypatch.setattr(adam_module, "_adam_update_arrays", lambda *a: done.append(original_adam(*a)) or done[-1])
    _run(rg, "Adam", dict(lr=0.1), "float32", steps=1)
    assert done == [True, True, False]  # (the 0-d parameter takes the tensor ops)


def test_uncovered_cases_take_the_tensor_ops(torch: Any) -> None:
    # A gradient that is the momentum buffer itself, an lr given as a tensor, an inference
    # parameter: the tensor ops decide (here: PyTorch's results and error).
    def shared(lib: Any) -> np.ndarray:
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.5)
        p.grad = lib.tensor([1.0, 1.0])
        opt.step()
        p.grad = opt.state[p]["momentum_buffer"]
        opt.step()
        return p.detach().numpy().copy()

    np.testing.assert_allclose(shared(rg), shared(torch), rtol=1e-6)

    def tensor_lr(lib: Any) -> np.ndarray:
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=lib.tensor(0.1), momentum=0.5)
        for _ in range(2):
            p.grad = lib.tensor([1.0, -1.0])
            opt.step()
        return p.detach().numpy().copy()

    np.testing.assert_allclose(tensor_lr(rg), tensor_lr(torch), rtol=1e-6)

    def inference(lib: Any) -> tuple[str, str]:
        with lib.inference_mode():
            p = lib.ones(2)
        p.grad = lib.ones(2)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.5)
        try:
            opt.step()
            opt.step()
        except RuntimeError as e:
            return "RuntimeError", str(e)
        return "ok", ""

    assert inference(rg) == inference(torch)


def test_zero_grad_to_none_resets_every_gradient_and_names_its_line_for_explain_grad(torch: Any) -> None:
    # Optimizer.zero_grad's inline set_to_none path: as PyTorch's (every .grad None, a
    # parameter without one untouched), and debug.explain_grad's note of the call (its line when
    # sites are recorded) on each parameter it reset.
    import sys

    from retrograd.debug import explain_grad, record_sites

    ps = [rg.nn.Parameter(rg.ones(2)), rg.nn.Parameter(rg.ones(3)), rg.nn.Parameter(rg.ones(1))]
    tps = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(1))]
    opt = rg.optim.SGD([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.5}], lr=0.1)
    topt = torch.optim.SGD([{"params": tps[:2]}, {"params": tps[2:], "lr": 0.5}], lr=0.1)
    for params, o in ((ps, opt), (tps, topt)):
        (params[0].sum() + params[2].sum()).backward()  # (params[1] gets no gradient)
        o.zero_grad()
        assert [p.grad for p in params] == [None, None, None]
    assert explain_grad(ps[0]).cause == "zero_grad" and explain_grad(ps[2]).cause == "zero_grad"
    (ps[0].sum() + ps[2].sum()).backward()
    with record_sites():
        opt.zero_grad(); line = sys._getframe().f_lineno  # noqa: E702
    for p in (ps[0], ps[2]):
        e = explain_grad(p)
        assert (e.cause, e.line) == ("zero_grad", line) and p.grad is None
