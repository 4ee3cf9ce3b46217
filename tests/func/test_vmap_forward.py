"""``vmap`` over forward mode (``vmap(jvp)``, ``vmap(jacfwd)``, ``vmap(hessian)``): tangents batch
like primals, so the function runs once on the whole batch (no per-sample fallback), with
torch.func's values."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.func as rfunc
from retrograd.autograd import forward_ad
from retrograd.func._pytree import tree_flatten

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.1, 0.2, -0.3], [-2.0, 1.0, 0.7]])
V = X[::-1].copy()
W = np.arange(6.0).reshape(3, 2) / 5


def _g(x: Any, y: Any) -> Any:
    return (x.sin() * y.exp()).sum() + (x * y).sum() ** 2


CASES = {
    "vmap(jvp)": lambda fn, lib: fn.vmap(lambda v: fn.jvp(lambda y: y.sin() * y, (v,), (lib.ones_like(v),))[1])(
        lib.tensor(X)),
    "vmap(jvp) batched tangent": lambda fn, lib: fn.vmap(lambda v, t: fn.jvp(lambda y: (y.sin() * y).sum(), (v,), (t,)))(
        lib.tensor(X), lib.tensor(V)),
    "vmap(jvp) shared primal": lambda fn, lib: fn.vmap(lambda t: fn.jvp(lambda y: y.exp() * y, (lib.tensor(X[0]),), (t,)))(
        lib.tensor(V)),
    "vmap(jvp) in_dims=1": lambda fn, lib: fn.vmap(lambda v: fn.jvp(lambda y: y.sin().sum(0), (v,), (v * 2,))[1],
                                                   in_dims=1)(lib.tensor(X)),
    "vmap(jvp has_aux)": lambda fn, lib: fn.vmap(lambda v: fn.jvp(lambda y: (y.tanh(), y.cos()), (v,), (v,),
                                                                  has_aux=True))(lib.tensor(X)),
    "vmap(vmap(jvp))": lambda fn, lib: fn.vmap(fn.vmap(lambda v: fn.jvp(lambda y: y.cos() * 3, (v,), (v,))[1]))(
        lib.tensor(X)),
    "vmap(jacfwd)": lambda fn, lib: fn.vmap(fn.jacfwd(lambda y: y.exp() * y))(lib.tensor(X)),
    "vmap(jacfwd) argnums": lambda fn, lib: fn.vmap(fn.jacfwd(_g, argnums=(0, 1)))(lib.tensor(X), lib.tensor(V)),
    "vmap(jacfwd) linear layer": lambda fn, lib: fn.vmap(fn.jacfwd(lambda x, w: (x @ w).tanh(), argnums=1),
                                                         in_dims=(0, None))(lib.tensor(X), lib.tensor(W)),
    "vmap(hessian)": lambda fn, lib: fn.vmap(fn.hessian(_g))(lib.tensor(X), lib.tensor(V)),
    "vmap(jvp(grad))": lambda fn, lib: fn.vmap(lambda a, b: fn.jvp(fn.grad(_g), (a, b), (b, a)))(
        lib.tensor(X), lib.tensor(V)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_forward_mode_is_batched_and_matches_torch_func(torch: Any, name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the per-sample fallback warns: it must not run
        ours = tree_flatten(CASES[name](rfunc, rg))[0]
    theirs = tree_flatten(CASES[name](torch.func, torch))[0]
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.requires_grad == t.requires_grad
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_the_function_runs_once_for_the_whole_batch() -> None:
    calls = []

    def f(y: Any) -> Any:
        calls.append(tuple(y.shape))
        return y.sin() * y

    x, v = rg.tensor(X), rg.tensor(V)
    out, tangent = rfunc.vmap(lambda a, b: rfunc.jvp(f, (a,), (b,)))(x, v)
    assert calls == [(3,)]  # one call, seeing one sample's shape
    # Against hand-derived math: d/dx (x sin x) = sin x + x cos x.
    np.testing.assert_allclose(tangent.numpy(), (np.sin(X) + X * np.cos(X)) * V, rtol=1e-14)
    calls.clear()
    jac = rfunc.vmap(rfunc.jacfwd(f))(x)
    assert len(calls) == 3  # one batched jvp per input element (column), not one per sample
    expected = np.stack([np.diag(np.sin(r) + r * np.cos(r)) for r in X])
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-14)


def test_batched_tangent_shape_mismatch_is_refused_with_torchs_message(torch: Any) -> None:
    def run(fn: Any, lib: Any) -> str:
        try:
            fn.vmap(lambda v, t: fn.jvp(lambda y: y * 2, (v,), (t,)))(lib.tensor(X), lib.tensor(X[:, :2].copy()))
        except RuntimeError as e:
            return str(e)
        return "ok"

    assert run(rfunc, rg) == run(torch.func, torch)


def test_make_dual_of_a_batched_tensor_still_falls_back_per_sample() -> None:
    """``forward_ad.make_dual`` called directly on a batched tensor (not through ``func.jvp``)
    keeps the exact per-sample fallback, with PyTorch's performance warning."""
    def f(v: Any) -> Any:
        with forward_ad.dual_level():
            return forward_ad.unpack_dual(forward_ad.make_dual(v, v) * v).tangent

    with pytest.warns(UserWarning, match="performance drop"):
        out = rfunc.vmap(f)(rg.tensor(X))
    np.testing.assert_allclose(out.numpy(), X * X, rtol=1e-14)  # (v is the primal, not the dual)
