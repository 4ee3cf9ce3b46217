"""Reverse-mode transforms inside forward-mode ones (forward over reverse): ``jvp(grad(f))`` (the
Hessian-vector product), ``jacfwd(jacrev(f))`` (``hessian``), ``jacfwd(grad(f))``, ``jvp`` of a
``vjp``, with pytrees, ``argnums``, ``has_aux`` and under ``vmap``, against torch.func."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.func as rfunc
from retrograd.func._pytree import tree_flatten

RS = np.random.RandomState(0)
W1, B1, W2, B2 = RS.randn(4, 3), RS.randn(4), RS.randn(2, 4), RS.randn(2)
XB, YB = RS.randn(5, 3), RS.randn(5, 2)
V = [RS.randn(*a.shape) for a in (W1, B1, W2, B2)]
NAMES = ["w1", "b1", "w2", "b2"]


def _params(lib: Any, arrays: Any) -> dict[str, Any]:
    return {k: lib.tensor(a) for k, a in zip(NAMES, arrays)}


def _mlp_loss(p: Any, x: Any, y: Any) -> Any:
    h = (x @ p["w1"].T + p["b1"]).tanh()
    return (((h @ p["w2"].T + p["b2"]) - y) ** 2).mean()


def _mlp_loss_aux(p: Any, x: Any, y: Any) -> Any:
    loss = _mlp_loss(p, x, y)
    return loss, loss * 2


def _g(x: Any, y: Any) -> Any:
    return (x.sin() * y.exp()).sum() + (x * y).prod()


def _cube_aux(x: Any) -> Any:
    return (x ** 3).sum(), x.cos()


def _row(r: Any) -> Any:
    return (r.sin() * r ** 2).sum()


CASES = {
    "jvp(grad) mlp hvp": lambda fn, lib: fn.jvp(lambda p: fn.grad(_mlp_loss)(p, lib.tensor(XB), lib.tensor(YB)),
                                                (_params(lib, (W1, B1, W2, B2)),), (_params(lib, V),)),
    "jvp(grad_and_value has_aux)": lambda fn, lib: fn.jvp(
        lambda p: fn.grad_and_value(_mlp_loss_aux, has_aux=True)(p, lib.tensor(XB), lib.tensor(YB)),
        (_params(lib, (W1, B1, W2, B2)),), (_params(lib, V),)),
    "jvp(grad argnums)": lambda fn, lib: fn.jvp(fn.grad(_g, argnums=(0, 1)), (lib.tensor(XB[0]), lib.tensor(XB[1])),
                                                (lib.tensor(XB[2]), lib.tensor(XB[3]))),
    "jacfwd(jacrev) argnums": lambda fn, lib: fn.jacfwd(fn.jacrev(_g, argnums=(0, 1)), argnums=(0, 1))(
        lib.tensor(XB[0]), lib.tensor(XB[1])),
    "jacfwd(jacrev chunk_size)": lambda fn, lib: fn.jacfwd(fn.jacrev(lambda x: x.sin() * x.sum(), chunk_size=2))(
        lib.tensor(XB[0])),
    "jacfwd(grad has_aux)": lambda fn, lib: fn.jacfwd(fn.grad(_cube_aux, has_aux=True), has_aux=True)(
        lib.tensor(XB[0])),
    "jacfwd(grad) mlp": lambda fn, lib: fn.jacfwd(lambda w: fn.grad(_mlp_loss)(
        {"w1": w, **{k: lib.tensor(a) for k, a in zip(NAMES[1:], (B1, W2, B2))}}, lib.tensor(XB), lib.tensor(YB))["w1"])(
        lib.tensor(W1)),
    "hessian": lambda fn, lib: fn.hessian(_g)(lib.tensor(XB[0]), lib.tensor(XB[1])),
    "hessian argnums": lambda fn, lib: fn.hessian(_g, argnums=(0, 1))(lib.tensor(XB[0]), lib.tensor(XB[1])),
    "hessian mlp": lambda fn, lib: fn.hessian(_mlp_loss)(_params(lib, (W1, B1, W2, B2)), lib.tensor(XB[:2]),
                                                         lib.tensor(YB[:2])),
    "jvp(vjp)": lambda fn, lib: fn.jvp(lambda x, v: fn.vjp(lambda y: y.sin() * y, x)[1](v)[0],
                                       (lib.tensor(XB[0]), lib.tensor(XB[1])), (lib.tensor(XB[2]), lib.tensor(XB[3]))),
    "jacfwd(jacfwd(jacrev))": lambda fn, lib: fn.jacfwd(fn.jacfwd(fn.jacrev(lambda x: (x.sin() * x.sum()).sum())))(
        lib.tensor(XB[0])),
    "grad(jvp(grad))": lambda fn, lib: fn.grad(lambda x: fn.jvp(fn.grad(_g), (x, x), (x, x))[1][0].sum())(
        lib.tensor(XB[0])),
    "vmap(jvp(grad))": lambda fn, lib: fn.vmap(lambda a, b: fn.jvp(fn.grad(_g), (a, b), (b, a)))(
        lib.tensor(XB), lib.tensor(XB[::-1].copy())),
    "vmap(hessian)": lambda fn, lib: fn.vmap(fn.hessian(_g))(lib.tensor(XB), lib.tensor(XB[::-1].copy())),
    "vmap(jacfwd(jacrev)) in_dims": lambda fn, lib: fn.vmap(fn.jacfwd(fn.jacrev(_g, argnums=1), argnums=1),
                                                            in_dims=(None, 0))(lib.tensor(XB[0]), lib.tensor(XB)),
    "jvp(vmap(grad))": lambda fn, lib: fn.jvp(fn.vmap(fn.grad(_row)), (lib.tensor(XB),),
                                              (lib.tensor(XB[::-1].copy()),)),
    "jacfwd(vmap(grad))": lambda fn, lib: fn.jacfwd(fn.vmap(fn.grad(_row)))(lib.tensor(XB[:2])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_over_reverse_matches_torch_func(torch: Any, name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (a vmap's per-sample fallback, where there is one)
        ours = tree_flatten(CASES[name](rfunc, rg))[0]
        theirs = tree_flatten(CASES[name](torch.func, torch))[0]
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.requires_grad == t.requires_grad  # (a transform's private graph does not leak out)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_hvp_is_the_hessian_times_the_vector() -> None:
    """Against hand-derived math: f(x) = sum(x_i^3) + x_0 x_1, H = diag(6 x) + [[0, 1], [1, 0]]."""
    x, v = rg.tensor([1.5, -2.0], dtype=rg.float64), rg.tensor([0.5, 3.0], dtype=rg.float64)
    f = lambda t: (t ** 3).sum() + t[0] * t[1]  # noqa: E731
    _, hvp = rfunc.jvp(rfunc.grad(f), (x,), (v,))
    h = np.diag(6 * x.numpy()) + np.array([[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(hvp.numpy(), h @ v.numpy(), rtol=1e-14)
    np.testing.assert_allclose(rfunc.hessian(f)(x).numpy(), h, rtol=1e-14)
    np.testing.assert_allclose(rfunc.jacfwd(rfunc.jacrev(f))(x).numpy(), h, rtol=1e-14)


def test_a_tangent_that_requires_grad_stays_differentiable(torch: Any) -> None:
    def run(fn: Any, lib: Any) -> Any:
        v = lib.tensor(XB[1], requires_grad=True)
        _, hvp = fn.jvp(fn.grad(_row), (lib.tensor(XB[0]),), (v,))
        (g,) = lib.autograd.grad((hvp * lib.tensor(XB[2])).sum(), v)
        return hvp.requires_grad, g.detach().numpy()

    ours, theirs = run(rfunc, rg), run(torch.func, torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_nested_jvp_returns_no_graph(torch: Any) -> None:
    """A ``jvp`` inside another one (the double-vjp path) returned results that required grad."""
    def run(fn: Any, lib: Any) -> Any:
        return fn.jacfwd(fn.jacfwd(lambda x: x.sin() * x.sum()))(lib.tensor(XB[0]))

    ours, theirs = run(rfunc, rg), run(torch.func, torch)
    assert ours.requires_grad is theirs.requires_grad is False
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
