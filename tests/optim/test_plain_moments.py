"""Adamax and RAdam start their NumPy update with one shared step (``_plain_moments``: the step
count and ``exp_avg.lerp_``): parameters, state and version counters as PyTorch's after a few steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim._common import _plain_moments


@pytest.mark.parametrize(("name", "second", "kw"), [
    ("Adamax", "exp_inf", {"lr": 0.1, "betas": (0.8, 0.9)}),
    ("RAdam", "exp_avg_sq", {"lr": 0.1, "betas": (0.7, 0.9)}),
    ("RAdam", "exp_avg_sq", {"lr": 0.1, "betas": (0.9, 0.3)}),  # rho_t > 5 early: the rectified branch
])
def test_adam_family_numpy_path_matches_torch(torch: Any, name: str, second: str, kw: dict[str, Any]) -> None:
    start = np.random.default_rng(1).standard_normal((3, 4))
    grads = np.random.default_rng(2).standard_normal((7, 3, 4))

    def run(lib: Any) -> tuple[Any, Any]:
        p = lib.tensor(start.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([p], **kw)
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        return p, opt.state[p]

    (p_ours, s_ours), (p_theirs, s_theirs) = run(rg), run(torch)
    np.testing.assert_allclose(p_ours.detach().numpy(), p_theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    for key in ("exp_avg", second):
        np.testing.assert_allclose(s_ours[key].numpy(), s_theirs[key].numpy(), rtol=1e-12, atol=1e-12)
        assert s_ours[key]._version == s_theirs[key]._version
    assert s_ours["step"].item() == s_theirs["step"].item() == len(grads)
    assert p_ours._version == p_theirs._version


def test_refused_arrays_leave_state_untouched() -> None:
    p = rg.zeros(())  # 0-d: the tensor ops run instead, so nothing may be counted or mixed here
    p.grad = rg.ones(())
    state = {"step": rg.tensor(0.0), "exp_avg": rg.zeros(()), "exp_inf": rg.zeros(())}
    before = [t._version for t in state.values()]
    assert _plain_moments(p, state, "exp_inf", 0.9) is None
    assert state["step"].item() == 0.0 and state["exp_avg"].item() == 0.0
    assert [t._version for t in state.values()] == before
