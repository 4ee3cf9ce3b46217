"""NAdam's, RAdam's, Adamax's and Adadelta's NumPy updates (``_nadam_update_arrays``, ...) give
bit for bit the parameters, state and version counters of the tensor-op updates they replace."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim import adadelta as adadelta_module
from retrograd.optim import adamax as adamax_module
from retrograd.optim import nadam as nadam_module
from retrograd.optim import radam as radam_module

FAST = [(nadam_module, "_nadam_update_arrays"), (radam_module, "_radam_update_arrays"),
        (adamax_module, "_adamax_update_arrays"), (adadelta_module, "_adadelta_update_arrays")]

CONFIGS = [  # (name, options, whether the NumPy update is taken)
    ("NAdam", {}, True),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.95), "eps": 1e-4, "momentum_decay": 0.01}, True),
    ("RAdam", {}, True),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "eps": 1e-4}, True),
    ("NAdam", {"weight_decay": 0.1}, False),
    ("RAdam", {"maximize": True}, False),
    ("RAdam", {"lr": rg.tensor(0.01)}, True),  # (read as a number, as PyTorch does)
    ("Adamax", {}, True),
    ("Adamax", {"lr": 0.05, "betas": (0.5, 0.6), "eps": 1e-3}, True),
    ("Adamax", {"weight_decay": 0.1}, False),
    ("Adadelta", {}, True),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3}, True),
    ("Adadelta", {"maximize": True}, False),
]


def _run(name: str, kwargs: dict[str, Any], dtype: str, steps: int = 8) -> tuple[list[Any], Any]:
    rng = np.random.default_rng(0)
    params = [rg.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in [(3, 4), (4,), ()]]
    opt = getattr(rg.optim, name)(params, **kwargs)
    for k in range(steps):
        opt.zero_grad()
        loss = sum(((p * (k + 1.5)).sin() * p).sum() for p in params)
        loss.backward()
        opt.step()
    return params, opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs", "taken"), CONFIGS)
def test_fast_update_is_bitwise_the_tensor_ops(monkeypatch: Any, name: str, kwargs: dict[str, Any], taken: bool,
                                               dtype: str) -> None:
    calls: list[bool] = []
    for module, fn in FAST:
        real = getattr(module, fn)
        monkeypatch.setattr(module, fn, lambda *a, real=real: calls.append(real(*a)) or calls[-1])
    fast, fast_opt = _run(name, kwargs, dtype)
    assert any(calls) == taken
    with monkeypatch.context() as m:
        for module, fn in FAST:
            m.setattr(module, fn, lambda *a: False)
        slow, slow_opt = _run(name, kwargs, dtype)
    for p, q in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), strict=True)
        assert p._version == q._version
        fs, ss = fast_opt.state[p], slow_opt.state[q]
        assert list(fs) == list(ss)
        for key in fs:
            np.testing.assert_array_equal(fs[key].numpy(), ss[key].numpy(), strict=True)
            assert fs[key]._version == ss[key]._version, key
