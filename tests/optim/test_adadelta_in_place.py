"""Adadelta's NumPy update (``_adadelta_update_arrays``) writes its two ``addcmul_`` and the
parameter's ``add_`` in place (one temporary, no copy back): bit for bit the tensor-op update, in
every floating dtype, and PyTorch's figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim import adadelta as adadelta_module

SHAPES = [(5, 3), (7,), (2, 3, 4)]


def _train(lib: Any, dtype: str, fast: bool, kwargs: dict[str, Any], steps: int = 6) -> tuple[list[Any], Any]:
    rng = np.random.default_rng(11)
    params = [lib.tensor(rng.standard_normal(s)).to(getattr(lib, dtype)).requires_grad_() for s in SHAPES]
    opt = lib.optim.Adadelta(params, **kwargs)
    wide = (lambda p: p.float()) if dtype in ("float16", "bfloat16") else (lambda p: p)  # the loss in float32
    for k in range(steps):
        opt.zero_grad()
        sum(((wide(p) * (k + 0.5)).sin() * wide(p)).sum() for p in params).backward()
        opt.step()
    return params, opt


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.3, "rho": 0.6, "eps": 1e-2}])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_in_place_update_is_bitwise_the_tensor_ops(monkeypatch: pytest.MonkeyPatch, dtype: str,
                                                   kwargs: dict[str, Any]) -> None:
    fast, fast_opt = _train(rg, dtype, True, kwargs)
    monkeypatch.setattr(adadelta_module, "_adadelta_update_arrays", lambda *args: False)
    slow, slow_opt = _train(rg, dtype, False, kwargs)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a.detach().float().numpy(), b.detach().float().numpy(), strict=True)
        for key in ("square_avg", "acc_delta"):
            sa, sb = fast_opt.state[a][key], slow_opt.state[b][key]
            np.testing.assert_array_equal(sa.float().numpy(), sb.float().numpy(), strict=True)
            assert sa._version == sb._version
        assert a._version == b._version


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_update_matches_pytorch(torch: Any, dtype: str) -> None:
    ours, _ = _train(rg, dtype, True, {"lr": 0.7})
    theirs, _ = _train(torch, dtype, True, {"lr": 0.7})
    tol = 1e-6 if dtype == "float32" else 1e-12
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
