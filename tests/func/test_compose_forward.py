"""Forward-mode transforms composed with vmap and the reverse-mode ones, against torch.func."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _f(x: Any) -> Any:
    return (x.sin() * x ** 2).sum()


CASES = {
    "vmap(jvp)": lambda fn, x, lib: fn.vmap(lambda v: fn.jvp(lambda y: (y.sin() * y), (v,), (lib.ones_like(v),))[1])(x),
    "vmap(jacfwd)": lambda fn, x, lib: fn.vmap(fn.jacfwd(lambda y: y.exp() * y))(x),
    "vmap(hessian)": lambda fn, x, lib: fn.vmap(fn.hessian(_f))(x),
    "vmap(grad)": lambda fn, x, lib: fn.vmap(fn.grad(_f))(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composition_matches_torch_func(torch: Any, name: str) -> None:
    import retrograd.func as rfunc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (a per-op fallback, where an op has no batching rule)
        ours = CASES[name](rfunc, rg.tensor(X), rg)
        theirs = CASES[name](torch.func, torch.tensor(X), torch)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
