"""Standard gamma sampling with implicit reparameterisation gradients.

Samples use retrograd's generator (Marsaglia-Tsang rejection); the gradient of a sample ``x`` with
respect to its concentration ``a`` is the implicit one, ``dx/da = -(dF/da)(a, x) / f(a, x)``
with ``F`` the regularised lower incomplete gamma function and ``f`` the gamma density.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import retrograd as rg
from retrograd.autograd.function import Function


def _draw(shape: tuple[int, ...], kind: str) -> np.ndarray:
    if kind == "normal":
        return np.asarray(rg.randn(shape, dtype=rg.float64).numpy())
    return np.asarray(rg.rand(shape, dtype=rg.float64).numpy())


def _sample_standard_gamma(alpha: np.ndarray) -> np.ndarray:
    alpha = np.asarray(alpha, dtype=np.float64)
    flat = alpha.reshape(-1)
    # alpha < 1 is boosted to alpha + 1 and corrected by U ** (1 / alpha)
    boost = flat < 1
    a = np.where(boost, flat + 1.0, flat)
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = np.empty_like(a)
    todo = np.arange(a.size)
    while todo.size:
        x = _draw((todo.size,), "normal")
        u = _draw((todo.size,), "uniform")
        v = (1.0 + c[todo] * x) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (v > 0) & (np.log(u) < 0.5 * x * x + d[todo] - d[todo] * v + d[todo] * np.log(v))
        out[todo[ok]] = d[todo[ok]] * v[ok]
        todo = todo[~ok]
    if boost.any():
        u = _draw((int(boost.sum()),), "uniform")
        out[boost] = out[boost] * u ** (1.0 / flat[boost])
    return out.reshape(alpha.shape)


def _standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dx/dalpha`` of a standard gamma sample by implicit differentiation of its CDF."""
    a = rg.tensor(alpha, dtype=rg.float64)
    xt = rg.tensor(x, dtype=rg.float64)
    h = 1e-5 * np.maximum(alpha, 1.0)
    ht = rg.tensor(h, dtype=rg.float64)
    dcdf = (rg.igamma(a + ht, xt) - rg.igamma(a - ht, xt)).numpy() / (2 * h)
    log_pdf = (alpha - 1) * np.log(x) - x - np.vectorize(math.lgamma)(alpha)
    return -dcdf / np.exp(log_pdf)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx: Any, concentration: Any) -> Any:
        alpha = np.asarray(concentration.detach().numpy(), dtype=np.float64)
        x = _sample_standard_gamma(alpha)
        tiny = float(np.finfo(concentration.detach().numpy().dtype).tiny)
        x = np.maximum(x, tiny).astype(concentration.detach().numpy().dtype)
        ctx.alpha = alpha
        ctx.x = x
        ctx.dtype = concentration.dtype
        return rg.tensor(x, dtype=concentration.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        dx = _standard_gamma_grad(ctx.alpha, np.asarray(ctx.x, dtype=np.float64))
        return grad * rg.tensor(dx, dtype=ctx.dtype)


def standard_gamma(concentration: Any) -> Any:
    """A sample of Gamma(concentration, 1) per element, differentiable in ``concentration``."""
    if concentration.requires_grad and rg.is_grad_enabled():
        return _StandardGamma.apply(concentration)
    with rg.no_grad():
        alpha = np.asarray(concentration.detach().numpy(), dtype=np.float64)
        x = _sample_standard_gamma(alpha)
        return rg.tensor(x, dtype=concentration.dtype)
