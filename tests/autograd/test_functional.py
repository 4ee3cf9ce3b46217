"""autograd.functional against torch.autograd.functional."""

from __future__ import annotations

from typing import Any

import numpy as np

import retrograd as rg


def _f(lib: Any) -> Any:
    return lambda x, y: ((x * y).sin() + x ** 2 * y).sum()


def _g(lib: Any) -> Any:
    return lambda x: (x.exp() * x[0]).tanh()


def _inputs(lib: Any) -> tuple[Any, Any]:
    return (lib.tensor([0.3, -0.8, 1.1], dtype=lib.float64), lib.tensor([1.2, 0.4, -0.5], dtype=lib.float64))


def _close(a: Any, b: Any) -> None:
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_hessian_products(torch: Any) -> None:
    F = torch.autograd.functional
    R = rg.autograd.functional
    v = (np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, 2.0]))
    _close(R.jacobian(_g(rg), _inputs(rg)[0]), F.jacobian(_g(torch), _inputs(torch)[0]))
    _close(R.jacobian(_f(rg), _inputs(rg)), F.jacobian(_f(torch), _inputs(torch)))
    _close(R.hessian(_f(rg), _inputs(rg)), F.hessian(_f(torch), _inputs(torch)))
    for name in ("vjp", "jvp"):
        ours = getattr(R, name)(_g(rg), _inputs(rg)[0], rg.tensor(v[0]))
        theirs = getattr(F, name)(_g(torch), _inputs(torch)[0], torch.tensor(v[0]))
        _close(ours, theirs)
    for name in ("hvp", "vhp"):
        ours = getattr(R, name)(_f(rg), _inputs(rg), tuple(rg.tensor(a) for a in v))
        theirs = getattr(F, name)(_f(torch), _inputs(torch), tuple(torch.tensor(a) for a in v))
        _close(ours, theirs)
