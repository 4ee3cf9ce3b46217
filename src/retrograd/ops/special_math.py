"""NumPy kernels of the special functions (no SciPy): lgamma, digamma, trigamma, polygamma (the
Hurwitz zeta function), i0/i1, and the regularized incomplete gamma functions. Each takes and
returns float64 arrays; the op entries (``elementwise.py``) cast.

Where PyTorch's own CPU kernel is a known textbook algorithm whose rounding differs visibly from the
true value (trigamma's short asymptotic series, good to about 1e-9), the same algorithm is used, so
that results agree with PyTorch's, quirks included (``polygamma(1, -1.0)`` is 6.6e32, not inf,
because ``sin(-pi)`` is not 0 in floating point).

>>> import numpy as np
>>> float(lgamma(np.array(5.0)))  # log(4!)
3.1780538303479458
>>> f"{float(digamma(np.array(1.0))):.14f}"  # -Euler's gamma
'-0.57721566490153'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_PI = math.pi
_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
_EPS = float(np.finfo(np.float64).eps)


# B_2, B_4, ..., B_24 as exact (numerator, denominator) pairs: constants, written out (computing
# them at import, by the Akiyama-Tanigawa recurrence, cost a hundredth of ``import retrograd``;
# tests/ops/test_import_time.py derives them again). Python's ``int / int`` below rounds each
# coefficient correctly, as float(Fraction) would.
_B2K = [(1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510), (43867, 798),
        (-174611, 330), (854513, 138), (-236364091, 2730)]
# Stirling's series for lgamma: sum B_2k / (2k (2k - 1) x^(2k - 1)).
_STIRLING = [p / (q * 2 * k * (2 * k - 1)) for k, (p, q) in enumerate(_B2K[:9], start=1)]
# The asymptotic series of digamma: sum B_2k / (2k x^2k), k = 1..7 (PyTorch's, so the same rounding).
_DIGAMMA_SERIES = [p / (q * 2 * k) for k, (p, q) in enumerate(_B2K[:7], start=1)]
# Euler-Maclaurin tail of the Hurwitz zeta function: (2j)! / B_2j, j = 1..12.
_ZETA_TAIL = [math.factorial(2 * j) * q / p for j, (p, q) in enumerate(_B2K[:12], start=1)]
_PSI_10 = 2.251752589066721107647456163885  # digamma(10) = H_9 - Euler's gamma


def _horner(z: np.ndarray, coefficients: list[float]) -> np.ndarray:
    """sum c_k z^k (c_0 first)."""
    out = np.full_like(z, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        out = out * z + c
    return out


def _sin_pi(x: np.ndarray) -> np.ndarray:
    """|sin(pi x)|, accurate for large |x| and near the integers (``x - round(x)`` is exact)."""
    return np.sin(_PI * np.abs(x - np.round(x)))


# -- lgamma ------------------------------------------------------------------------------------
def _zeta_minus_one() -> list[float]:
    """zeta(k) - 1 for k = 2..40 (the Taylor coefficients of lgamma about 2)."""
    return [float(hurwitz_zeta(np.array(float(k)), np.array(2.0))) for k in range(2, 41)]


_LGAMMA_TAYLOR: list[float] = []


def _lgamma_near_two(z: np.ndarray) -> np.ndarray:
    """lgamma(2 + z) for |z| <= 1/2: (1 - gamma) z + sum_k (-1)^k (zeta(k) - 1) z^k / k."""
    if not _LGAMMA_TAYLOR:
        _LGAMMA_TAYLOR.extend((-1.0) ** k * c / k for k, c in enumerate(_zeta_minus_one(), start=2))
    return z * ((1.0 - 0.5772156649015329) + z * _horner(z, _LGAMMA_TAYLOR))


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """lgamma for x > 0 (finite)."""
    out = np.empty_like(x)
    large = x >= 13.0
    xl = x[large]
    inv = 1.0 / xl
    out[large] = (xl - 0.5) * np.log(xl) - xl + _LOG_2PI_HALF + inv * _horner(inv * inv, _STIRLING)
    small = ~large
    y = x[small]  # shifted into [1.5, 2.5): Gamma(y + 1) = y Gamma(y)
    log_factor = np.zeros_like(y)
    while True:
        down = y >= 2.5
        if not down.any():
            break
        y[down] -= 1.0
        log_factor[down] += np.log(y[down])
    up = y < 1.5  # (x >= 0.5: one step)
    log_factor[up] -= np.log(y[up])
    y[up] += 1.0
    out[small] = _lgamma_near_two(y - 2.0) + log_factor
    return out


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| (inf at the poles and at +-inf, NaN for NaN)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.inf)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x) & ~((x <= 0) & (x == np.floor(x)))
        out[np.isnan(x)] = np.nan
        positive = finite & (x >= 0.5)
        out[positive] = _lgamma_positive(x[positive])
        negative = finite & (x < 0.5)
        xn = x[negative]
        # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
        out[negative] = np.log(_PI / _sin_pi(xn)) - _lgamma_positive(1.0 - xn)
    return out


# -- digamma, trigamma, polygamma --------------------------------------------------------------
def _digamma_positive(x: np.ndarray) -> np.ndarray:
    result = np.zeros_like(x)
    x = x.copy()
    for _ in range(10):  # up to x >= 10 by digamma(x) = digamma(x + 1) - 1 / x
        low = x < 10
        if not low.any():
            break
        result[low] -= 1.0 / x[low]
        x[low] += 1.0
    ten = x == 10.0
    z = 1.0 / (x * x)
    y = np.where(x < 1e17, z * _horner(z, _DIGAMMA_SERIES), 0.0)
    return np.where(ten, result + _PSI_10, result + np.log(x) - 0.5 / x - y)


def digamma(x: np.ndarray) -> np.ndarray:
    """d/dx lgamma(x): -inf at +0, +inf at -0, NaN at the negative integers and -inf (as PyTorch)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        zero = x == 0
        out[zero] = np.copysign(np.inf, -x[zero])
        negative = x < 0
        pole = negative & (x == np.trunc(x))
        out[pole] = np.nan
        reflect = negative & ~pole
        xr = x[reflect]
        # digamma(1 - x) - digamma(x) = pi / tan(pi x), with x's fractional part (exact) in the tan.
        out[reflect] = _digamma_positive(1.0 - xr) - _PI / np.tan(_PI * (xr - np.trunc(xr)))
        rest = ~(zero | negative)  # positive, +inf and NaN
        out[rest] = _digamma_positive(x[rest])
    return out


def trigamma(x: np.ndarray) -> np.ndarray:
    """polygamma(1, x), by PyTorch's algorithm (reflection below 1/2, six steps of the recurrence, a
    short asymptotic series): the same values as PyTorch's, about 1e-9 from the true ones."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        s = np.sin(_PI * x)
        result = np.where(reflect, -(_PI * _PI) / (s * s), 0.0)
        x = np.where(reflect, 1.0 - x, x)
        for _ in range(6):
            result = result + 1.0 / (x * x)
            x = x + 1.0
        ixx = 1.0 / (x * x)
        result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
        return np.where(reflect, -result, result)


def hurwitz_zeta(s: Any, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum_k (q + k)^-s for s > 1 (a number): the sum up to q + k > 9, then the
    Euler-Maclaurin tail. Poles (q a non-positive integer) give inf; a negative q needs an
    integer s (else NaN), and q < -1e4 gives NaN (``polygamma`` reflects it instead)."""
    s = float(s)
    # C order throughout: the summing loop writes through flat views (reshape copies otherwise)
    q = np.array(q, dtype=np.float64, order="C")  # (a copy; ascontiguousarray would make 0-d 1-d)
    if s == 1.0:
        return np.full(q.shape, np.inf)
    if s < 1.0 or math.isnan(s):
        return np.full(q.shape, np.nan)
    q_in = q
    pole = (q <= 0) & (q == np.floor(q))
    too_far = q < -1e4  # (|q| terms; polygamma reflects these)
    q = np.where(pole | too_far, 1.0, q)
    with np.errstate(all="ignore"):
        total = np.array(np.power(q, -s), order="C")
        a = q.copy()
        b = np.zeros_like(q)
        done = np.zeros(q.shape, dtype=bool)
        i = 0
        idx = np.flatnonzero(np.ones(q.shape, dtype=bool))
        a_flat, b_flat, t_flat, d_flat = a.reshape(-1), b.reshape(-1), total.reshape(-1), done.reshape(-1)
        while idx.size:  # (only the elements still summing: far below 0 that is |q| steps for a few)
            idx = idx[(i < 9) | (a_flat[idx] <= 9.0)]
            if not idx.size:
                break
            i += 1
            a_flat[idx] += 1.0
            b_flat[idx] = np.power(a_flat[idx], -s)
            t_flat[idx] += b_flat[idx]
            converged = np.abs(b_flat[idx] / t_flat[idx]) < _EPS
            d_flat[idx[converged]] = True
            idx = idx[~converged]
        tail = ~done
        w = a
        t_total = total + b * w / (s - 1.0) - 0.5 * b
        factor = 1.0
        k = 0.0
        bb = b.copy()
        settled = ~tail
        for j in range(12):
            factor *= s + k
            bb = bb / w
            t = factor * bb / _ZETA_TAIL[j]
            t_total = np.where(settled, t_total, t_total + t)
            settled = settled | (np.abs(t / t_total) < _EPS)
            k += 1.0
            factor *= s + k
            bb = bb / w
            k += 1.0
        out = np.where(tail, t_total, total)
        out = np.where(too_far, np.nan, out)
        out = np.where(pole, np.inf, out)
        if s != math.floor(s):
            out = np.where(q_in < 0, np.nan, out)
    return np.asarray(out)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma: digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x)."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        # Far below 0 the zeta sum would take |x| terms: the reflection formula instead.
        far = (x < -1e4) & (x != np.floor(x))
        out = sign * math.exp(math.lgamma(n + 1.0)) * hurwitz_zeta(n + 1.0, np.where(far, 1.0, x))
        if far.any():
            out[far] = _polygamma_reflected(n, x[far])
    return np.asarray(out)


def _polygamma_reflected(n: int, x: np.ndarray) -> np.ndarray:
    """psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)), with d^n/dx^n cot(pi x) =
    pi^n P_n(cot(pi x)): P_0(c) = c, P_(k+1)(c) = -(1 + c^2) P_k'(c)."""
    poly = [0, 1]  # coefficients of P_k, c^0 first (exact integers)
    for _ in range(n):
        deriv = [i * poly[i] for i in range(1, len(poly))] + [0]
        nxt = [0] * (len(deriv) + 2)
        for i, coefficient in enumerate(deriv):
            nxt[i] -= coefficient
            nxt[i + 2] -= coefficient
        poly = nxt
    c = 1.0 / np.tan(_PI * (x - np.round(x)))
    value = _horner(c, [float(v) for v in poly])
    return (-1.0) ** n * polygamma(n, 1.0 - x) - _PI ** (n + 1) * value


# -- modified Bessel functions i0, i1 ------------------------------------------------------------
def _bessel_i(x: np.ndarray, order: int) -> np.ndarray:
    """I_0 or I_1 of |x| (I_1 odd: the caller restores the sign): the power series up to 30, the
    asymptotic series e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (mu - (2j - 1)^2) / (k! (8x)^k) above
    (inf past float64's range; NaN at inf, as PyTorch's Chebyshev form gives)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        small = a <= 30.0
        h = a[small] * 0.5
        h2 = h * h
        term = np.ones_like(h) if order == 0 else h.copy()
        total = term.copy()
        for k in range(1, 200):
            term = term * h2 / (k * (k + order))
            total += term
            if not np.any(term > 1e-17 * total):
                break
        out[small] = total
        big = ~small
        xb = a[big]
        mu = 4.0 * order * order
        term = np.ones_like(xb)
        series = term.copy()
        for k in range(1, 40):
            term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * xb)
            series += term
        out[big] = np.exp(xb) / np.sqrt(xb) * series / math.sqrt(2.0 * _PI)
        out[np.isinf(a)] = np.nan
    return out


def i0(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 0 (even)."""
    return _bessel_i(x, 0)


def i1(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 1 (odd)."""
    x = np.asarray(x, dtype=np.float64)
    return np.copysign(_bessel_i(x, 1), x)


# -- regularized incomplete gamma functions -----------------------------------------------------
def _log_prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """log(x^a e^-x / Gamma(a)). Near x = a for large a, from Stirling's series with
    a (log1p(t) - t), t = (x - a) / a, summed as a series: no cancellation of large terms."""
    with np.errstate(all="ignore"):
        out = a * np.log(x) - x - lgamma(a)
        near = (a >= 13.0) & (np.abs(x - a) < 0.4 * a)
        if near.any():
            an, t = a[near], (x[near] - a[near]) / a[near]
            # log1p(t) - t = sum_{k>=2} (-1)^(k+1) t^k / k, |t| < 0.4
            term = -t * t
            series = 0.5 * term
            for k in range(3, 60):
                term = term * -t
                series += term / k
            inv = 1.0 / an
            stirling = inv * _horner(inv * inv, _STIRLING)
            out[near] = an * series + 0.5 * np.log(an) - _LOG_2PI_HALF - stirling
    return out


def _lower_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)) (for x < a + 1)."""
    term = np.ones_like(a)
    total = term.copy()
    denominator = a.copy()
    active = np.ones(a.shape, dtype=bool)
    for _ in range(100000):
        if not active.any():
            break
        denominator = denominator + 1.0
        term = np.where(active, term * x / denominator, term)
        total = np.where(active, total + term, total)
        active &= term > _EPS * 0.25 * total
    return np.exp(_log_prefactor(a, x)) * total / a


def _upper_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) from its continued fraction, by the modified Lentz method (for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full_like(a, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    active = np.ones(a.shape, dtype=bool)
    for i in range(1, 100000):
        if not active.any():
            break
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = np.where(active, h * delta, h)
        active &= np.abs(delta - 1.0) > _EPS * 0.25
    return np.exp(_log_prefactor(a, x)) * h


def gammainc(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """P(a, x) (``upper`` False) or Q(a, x) = 1 - P(a, x), with PyTorch's values at the edges:
    NaN for a < 0 or x < 0 or a = x = 0 or a = x = inf; a = 0 is P = 1; x = 0 is P = 0; a = inf
    is P = 0; x = inf is P = 1."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a >= 0) & (x >= 0)  # (NaN fails both)
        edge_p = np.full(a.shape, np.nan)
        edge_p = np.where(ok & (x == 0) & (a > 0), 0.0, edge_p)
        edge_p = np.where(ok & (a == 0) & (x > 0), 1.0, edge_p)
        edge_p = np.where(ok & np.isinf(a) & ~np.isinf(x), 0.0, edge_p)
        edge_p = np.where(ok & np.isinf(x) & ~np.isinf(a) & (a > 0), 1.0, edge_p)
        edge = ~ok | (a == 0) | (x == 0) | np.isinf(a) | np.isinf(x)
        out[edge] = edge_p[edge] if not upper else 1.0 - edge_p[edge]
        regular = ~edge
        series = regular & (x < a + 1.0)
        fraction = regular & ~series
        p = _lower_series(a[series], x[series])
        q = _upper_fraction(a[fraction], x[fraction])
        out[series] = 1.0 - p if upper else p
        out[fraction] = q if upper else 1.0 - q
    return out
