"""``retrograd.func``'s forward-mode transforms (``jvp``, ``jacfwd``, ``hessian``, ``linearize``)
against ``torch.func``: values, pytrees, ``argnums``/``has_aux``/``randomness`` and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.func._forward import hessian, jacfwd, jvp, linearize

RNG = np.random.default_rng(1)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((2, 3))


def _np(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_np(v) for v in value]
    if isinstance(value, dict):
        return {k: _np(v) for k, v in value.items()}
    return np.asarray(value.detach().numpy()) if hasattr(value, "detach") else value


def _close(a: Any, b: Any) -> None:
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def _both(fn: Any, torch: Any) -> None:
    """``fn(lib, func_module)`` on retrograd and on torch.func: equal values."""
    import types

    ours = types.SimpleNamespace(jvp=jvp, jacfwd=jacfwd, hessian=hessian, linearize=linearize)
    _close(_np(fn(rg, ours)), _np(fn(torch, torch.func)))


def _f(lib: Any) -> Any:
    return lambda x, m: (m @ x.sin()).tanh() * x[:2] + (x ** 3).sum()


def test_jvp_values_pytrees_and_aux(torch: Any) -> None:
    _both(lambda lib, fn: fn.jvp(_f(lib), (lib.tensor(X), lib.tensor(M)), (lib.tensor(Y), lib.ones(2, 3, dtype=lib.float64))), torch)
    _both(lambda lib, fn: fn.jvp(lambda a: [a.sin(), {"c": a.cos() * 2}], (lib.tensor(X),), (lib.tensor(Y),)), torch)
    _both(lambda lib, fn: fn.jvp(lambda a: (a.exp(), a.sum()), (lib.tensor(X),), (lib.tensor(Y),), has_aux=True),
          torch)
    _both(lambda lib, fn: fn.jvp(lambda d: d["a"] * d["b"], ({"a": lib.tensor(X), "b": lib.tensor(Y)},),
                                 ({"a": lib.ones(3, dtype=lib.float64), "b": lib.zeros(3, dtype=lib.float64)},)), torch)


def test_jvp_errors_match_torch_func(torch: Any) -> None:
    def errors(lib: Any, f: Any) -> list[tuple[str, str]]:
        x = lib.tensor(X)
        return [outcome(lambda: f(lib.sin, x, x)),
                outcome(lambda: f(lib.sin, (x,), x)),
                outcome(lambda: f(lib.sin, (x,), (x, x))),
                outcome(lambda: f(lib.sin, (x,), (lib.ones(4),))),
                outcome(lambda: f(lambda a: (a.sin(), 2), (x,), (x,), has_aux=True)),
                outcome(lambda: f(lambda a: a.sin(), (x,), (x,), has_aux=True)),
                outcome(lambda: f(lambda a: 3, (x,), (x,))),
                outcome(lambda: f(lib.sin, (lib.arange(3),), (lib.arange(3),)))]

    assert errors(rg, jvp) == errors(torch, torch.func.jvp)


def test_jacfwd_argnums_aux_and_outputs(torch: Any) -> None:
    _both(lambda lib, fn: fn.jacfwd(_f(lib))(lib.tensor(X), lib.tensor(M)), torch)
    _both(lambda lib, fn: fn.jacfwd(_f(lib), argnums=(0, 1))(lib.tensor(X), lib.tensor(M)), torch)
    # argnums=-1 is the last argument (PyTorch 2.13's jacfwd returns zeros there: not compared).
    _close(_np(jacfwd(_f(rg), argnums=-1)(rg.tensor(X), rg.tensor(M))),
           _np(jacfwd(_f(rg), argnums=1)(rg.tensor(X), rg.tensor(M))))
    _both(lambda lib, fn: fn.jacfwd(lambda a: (a.sin(), a.sum()))(lib.tensor(X)), torch)
    _both(lambda lib, fn: fn.jacfwd(lambda a: (a.sin(), {"n": a.norm()}), has_aux=True)(lib.tensor(X)), torch)
    _both(lambda lib, fn: fn.jacfwd(lambda a: a * 2)(lib.tensor(X[:0])), torch)  # no input element


def test_jacfwd_randomness(torch: Any) -> None:
    def errors(lib: Any, f: Any) -> list[tuple[str, str]]:
        x = lib.tensor(X)
        return [outcome(lambda: f(lambda a: a * lib.rand(3))(x)),
                outcome(lambda: f(lib.sin, randomness="bad")(x)),
                outcome(lambda: f(lib.sin, argnums=1)(x)),
                outcome(lambda: f(lib.sin, argnums=())(x))]

    assert errors(rg, jacfwd) == errors(torch, torch.func.jacfwd)
    rg.manual_seed(0)
    same = jacfwd(lambda a: a * rg.rand(3), randomness="same")(rg.tensor(X))
    rg.manual_seed(0)
    draws = rg.rand(3)
    np.testing.assert_allclose(_np(same), np.diag(_np(draws)))  # every column saw the same draws
    different = jacfwd(lambda a: a * rg.rand(3), randomness="different")(rg.tensor(X))
    assert _np(different).shape == (3, 3)


def test_hessian_matches_torch_func(torch: Any) -> None:
    _both(lambda lib, fn: fn.hessian(lambda a: (a.sin() * a.exp()).sum() + (a ** 2).prod())(lib.tensor(X)), torch)
    _both(lambda lib, fn: fn.hessian(lambda a, m: (m @ a).tanh().sum(), argnums=(0, 1))(lib.tensor(X),
                                                                                       lib.tensor(M)), torch)


def test_hessian_against_hand_derived_math() -> None:
    """f(x) = sum(x^3) / 3 + x0 * x1: H = diag(2x) + [[0, 1], [1, 0]]."""
    x = rg.tensor([0.5, -1.5])
    h = hessian(lambda a: (a ** 3).sum() / 3 + a[0] * a[1])(x)
    np.testing.assert_allclose(_np(h), [[1.0, 1.0], [1.0, -3.0]])


def test_linearize(torch: Any) -> None:
    def run(lib: Any, fn: Any) -> Any:
        out, jvp_fn = fn.linearize(lambda a: (a.sin() * a).exp(), lib.tensor(X))
        return [out, jvp_fn(lib.tensor(Y)), jvp_fn(lib.ones(3, dtype=lib.float64))]

    _both(run, torch)

    def errors(lib: Any, f: Any) -> list[tuple[str, str]]:
        _, jvp_fn = f(lib.sin, lib.tensor(X))
        return [outcome(lambda: jvp_fn(lib.ones(4))), outcome(lambda: jvp_fn(lib.ones(3), lib.ones(3))),
                outcome(lambda: jvp_fn(lib.ones(3, dtype=lib.float32)))]

    assert errors(rg, linearize) == errors(torch, torch.func.linearize)


def test_transforms_nest(torch: Any) -> None:
    """jvp of jvp (a second directional derivative) and jacfwd of jacfwd."""
    _both(lambda lib, fn: fn.jvp(lambda a: fn.jvp(lambda b: (b ** 4).sum(), (a,), (lib.tensor(Y),))[1],
                                 (lib.tensor(X),), (lib.tensor(Y),)), torch)
    _both(lambda lib, fn: fn.jacfwd(fn.jacfwd(lambda a: a.sin() * a.sum()))(lib.tensor(X)), torch)


@pytest.mark.parametrize("size", [1, 4])
def test_jacfwd_of_a_wide_function(torch: Any, size: int) -> None:
    """JAX's cookbook: the Jacobian of a function with more outputs than inputs."""
    w = np.arange(size * 12, dtype=np.float64).reshape(12, size) / 10
    _both(lambda lib, fn: fn.jacfwd(lambda a: (lib.tensor(w) @ a).sigmoid())(lib.tensor(X[:1].repeat(size))), torch)
