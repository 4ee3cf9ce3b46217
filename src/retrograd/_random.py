"""PyTorch's CPU random stream on NumPy: the mt19937 engine and the sampling transforms on top.

PyTorch's ``CPUGeneratorImpl`` is a standard mt19937 seeded with ``init_genrand(seed)``; NumPy's
``MT19937`` bit generator is the same engine, so its raw 32-bit outputs are PyTorch's ``random()``
and two of them (high word first) one ``random64()``. What follows reproduces, vectorised, the
transforms of ATen's ``DistributionsHelper.h``/``TransformationHelper.h`` and the CPU kernels
(``DistributionTemplates.h``): 24-bit floats and 53-bit doubles for uniforms, the 16-at-a-time
Box-Muller for ``normal_`` on contiguous tensors of 16 elements or more (for float32 the AVX2
``log256_ps``/``sincos256_ps`` polynomials), the scalar Box-Muller with a cached second normal
otherwise, ``val % range + base`` for integers, and the Fisher-Yates swaps of ``randperm``.

This module knows no ``Tensor``: it turns the stream into NumPy arrays. ``numpy.random`` is
imported on first use only (``import retrograd`` need not pay for it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_F32 = np.float32
_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_MASK21 = np.uint64((1 << 21) - 1)
_BERNOULLI_BLOCK = 1 << 15  # draws per block: their 64 K words (512 KB) stay in cache
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState): PyTorch's get_rng_state() layout


def _fma32(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """float32 fused multiply-add (the product is exact in float64, then one rounding there)."""
    return (a.astype(np.float64) * np.float64(_F32(b)) + np.float64(_F32(c))).astype(_F32)


def _fma64(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """float64 ``std::fma`` by error-free transformations (TwoProduct + TwoSum)."""
    if b == 1.0 and c == 0.0:
        return a
    p = a * b
    split = 134217729.0  # 2**27 + 1: Veltkamp's splitter
    ta = split * a
    ahi = ta - (ta - a)
    alo = a - ahi
    tb = split * b
    bhi = tb - (tb - b)
    blo = b - bhi
    e = ((ahi * bhi - p) + ahi * blo + alo * bhi) + alo * blo
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


# -- the AVX2 float kernels PyTorch's normal_ uses for float32 (avx_mathfun.h, Cephes) ------------

_LOG_P = [7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1]


def _f(a: Any, b: Any, c: Any, buf: np.ndarray) -> np.ndarray:
    """``a * b + c`` as the one fused instruction GCC contracts the intrinsics' pair into: the
    float32 product is exact in float64 (``buf``), then one rounding."""
    np.multiply(a, b, out=buf, dtype=np.float64)
    np.add(buf, c, out=buf)
    return buf.astype(_F32)


def _log256(x: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` for x in (0, 1] (what PyTorch's Box-Muller feeds it), with the
    multiply-adds fused as PyTorch's build compiles them."""
    x = np.maximum(x, np.array(0x00800000, np.uint32).view(_F32))
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | np.uint32(0x3F000000)).view(_F32)
    mask = x < _F32(0.707106781186547524)
    x -= _F32(1)
    e[mask] -= _F32(1)
    x[mask] += x[mask] + _F32(1)  # x + x - 1 where x < sqrt(1/2)
    z = x * x
    y = _f(_F32(_LOG_P[0]), x, _F32(_LOG_P[1]), buf)
    for coef in _LOG_P[2:]:
        y = _f(y, x, _F32(coef), buf)
    y *= x
    y = _f(y, z, e * _F32(-2.12194440e-4), buf)
    y -= z * _F32(0.5)
    x += y
    return _f(e, _F32(0.693359375), x, buf)


def _sincos256(x: np.ndarray, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps`` (Cephes sinf/cosf with one range reduction), fused likewise."""
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(_F32)
    swap_sin = ((j & 4) << 29).view(np.uint32)
    poly = (j & 2) == 0
    x = _f(y, _F32(-0.78515625), x, buf)
    x = _f(y, _F32(-2.4187564849853515625e-4), x, buf)
    x = _f(y, _F32(-3.77489497744594108e-8), x, buf)
    sign_cos = ((~(j - 2) & 4) << 29).view(np.uint32)
    sign_sin ^= swap_sin
    z = x * x
    c = _f(_F32(2.443315711809948E-005), z, _F32(-1.388731625493765E-003), buf)
    c = _f(c, z, _F32(4.166664568298827E-002), buf)
    c *= z
    c = _f(c, z, -(z * _F32(0.5)), buf)
    c += _F32(1)
    s = _f(_F32(-1.9515295891E-4), z, _F32(8.3321608736E-3), buf)
    s = _f(s, z, _F32(-1.6666654611E-1), buf)
    s *= z
    s = _f(s, x, x, buf)
    sin = np.where(poly, s, c)
    cos = np.where(poly, c, s)
    sin = (sin.view(np.uint32) ^ sign_sin).view(_F32)
    cos = (cos.view(np.uint32) ^ sign_cos).view(_F32)
    return sin, cos


def _box_muller16_f32(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """PyTorch's AVX2 ``NormalFill16<float>`` on rows of 16 uniforms."""
    u1 = (_F32(1) - blocks[:, :8]).reshape(-1)
    u2 = np.ascontiguousarray(blocks[:, 8:]).reshape(-1)
    buf = np.empty(u1.size)
    radius = np.sqrt(_F32(-2) * _log256(u1, buf))
    sin, cos = _sincos256(_F32(2.0 * math.pi) * u2, buf)
    out = np.empty_like(blocks)
    out[:, :8] = _fma32(radius * cos, std, mean).reshape(-1, 8)
    out[:, 8:] = _fma32(radius * sin, std, mean).reshape(-1, 8)
    return out


def _box_muller16_f64(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """PyTorch's scalar ``NormalFill16<double>`` on rows of 16 uniforms."""
    u1 = 1.0 - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(-2.0 * np.log(u1))
    theta = (2.0 * math.pi) * u2
    out = np.empty_like(blocks)
    out[:, :8] = _fma64(radius * np.cos(theta), std, mean)
    out[:, 8:] = _fma64(radius * np.sin(theta), std, mean)
    return out


class CPUStream:
    """The state of one PyTorch CPU generator: the mt19937 engine, its seed, the cached normals."""

    __slots__ = ("_bits", "_fresh", "next_double", "next_float", "seed")

    def __init__(self, seed: int) -> None:
        self._bits: Any = None
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """``CPUGeneratorImpl::set_current_seed``: a new engine, the cached normals dropped."""
        from numpy.random import MT19937

        bits = MT19937()
        bits._legacy_seeding(seed & 0xFFFFFFFF)
        self._bits = bits
        self.seed = seed
        self._fresh = True  # PyTorch reports next=0 (not 624) until the first draw
        self.next_double: float | None = None
        self.next_float: float | None = None

    # -- raw words -------------------------------------------------------------------------------

    def random(self, n: int) -> np.ndarray:
        """``n`` outputs of ``random()`` (32-bit words, as uint64)."""
        if n <= 0:
            return np.zeros(0, np.uint64)
        self._fresh = False
        return self._bits.random_raw(n)  # type: ignore[no-any-return]

    def random64(self, n: int) -> np.ndarray:
        """``n`` outputs of ``random64()``: two words each, the first the high half."""
        raw = self.random(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    # -- uniforms --------------------------------------------------------------------------------

    def unit_float(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<float>(0, 1)``: 24 random bits over 2**24."""
        return (self.random(n) & _MASK24).astype(_F32) * _F32(2.0**-24)

    def unit_double(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<double>(0, 1)``: 53 random bits over 2**53."""
        return (self.random64(n) & _MASK53).astype(np.float64) * 2.0**-53

    def uniform(self, n: int, dtype: np.dtype, low: float, high: float) -> np.ndarray:
        """``uniform_kernel``: U[low, high) in ``dtype`` (float math for float16/float32)."""
        if dtype == np.float64:
            x = self.unit_double(n)
            out = _fma64(x, high - low, low)
            top, bottom = high, low
        else:
            lo, hi = _F32(low), _F32(high)
            out = _fma32(self.unit_float(n), hi - lo, lo).astype(dtype)
            top, bottom = dtype.type(high), dtype.type(low)
        # the kernel's clamp: a value rounded up onto the (excluded) upper bound becomes ``low``
        return np.where(out == top, bottom, out).astype(dtype, copy=False)

    # -- normals ---------------------------------------------------------------------------------

    def normal_pairs(self, n: int) -> np.ndarray:
        """``n`` draws of ``normal_distribution<double>(0, 1)`` in order, honouring and leaving
        the generator's cached second normal as PyTorch does (one element at a time)."""
        out = np.empty(n)
        if n == 0:
            return out
        start = 0
        if self.next_double is not None:
            out[0] = self.next_double
            self.next_double = None
            start = 1
        k = n - start
        pairs = (k + 1) // 2
        if pairs:
            u = self.unit_double(2 * pairs)
            u1, u2 = u[0::2], u[1::2]
            r = np.sqrt(-2.0 * np.log1p(-u2))
            theta = 2.0 * math.pi * u1
            both = np.empty(2 * pairs)
            both[0::2] = r * np.cos(theta)
            both[1::2] = r * np.sin(theta)
            out[start:] = both[:k]
            if k % 2:
                self.next_double = float(both[-1])
        return out

    def normal(self, n: int, dtype: np.dtype, mean: float, std: float, contiguous: bool = True) -> np.ndarray:
        """``normal_kernel``: the 16-wide Box-Muller for contiguous tensors of 16 elements or
        more, else one cached-pair draw per element."""
        if n >= 16 and contiguous:
            full = n // 16 * 16
            # float/double draw all n uniforms before the tail's 16; float16 works in 16-wide
            # buffers and draws only the full blocks' first
            drawn = full if dtype == np.float16 else n
            if dtype == np.float64:
                data = self.unit_double(drawn)
                fill = _box_muller16_f64
            else:
                data = self.unit_float(drawn)
                fill = _box_muller16_f32
            out = np.empty(n, np.float64 if dtype == np.float64 else _F32)
            out[:full] = fill(data[:full].reshape(-1, 16), mean, std).reshape(-1)
            if n % 16:
                tail = self.unit_double(16) if dtype == np.float64 else self.unit_float(16)
                out[n - 16:] = fill(tail.reshape(1, 16), mean, std).reshape(-1)
            return out.astype(dtype, copy=False)
        out = _fma64(self.normal_pairs(n), std, mean)
        return (out.astype(_F32) if dtype == np.float16 else out).astype(dtype)  # Half from float

    # -- integers --------------------------------------------------------------------------------

    def random_from_to(self, n: int, range_: int, base: int) -> np.ndarray:
        """``uniform_int_from_to_distribution``: ``val % range + base`` as int64 (64-bit words
        when the range reaches 2**28)."""
        raw = self.random64(n) if range_ >= 1 << 28 else self.random(n)
        with np.errstate(over="ignore"):
            val = raw % np.uint64(range_) + np.uint64(base & 0xFFFFFFFFFFFFFFFF)
        return val.view(np.int64)

    def random_full(self, n: int) -> np.ndarray:
        """``uniform_int_full_range_distribution``: a random64 word as int64."""
        return self.random64(n).view(np.int64)

    def random_default(self, n: int, dtype: np.dtype) -> np.ndarray:
        """``uniform_int_distribution``: ``random_()`` with no bounds, per dtype."""
        if dtype == np.bool_:
            return (self.random(n) & np.uint64(1)).astype(np.bool_)
        if dtype in (np.float64, np.int64):
            raw = self.random64(n)
        else:
            raw = self.random(n)
        if dtype.kind in "fV":
            modulus = (1 << np.finfo(dtype).nmant + 1) + 1
        else:
            modulus = int(np.iinfo(dtype).max) + 1
        return (raw % np.uint64(modulus)).astype(dtype)

    def randperm(self, n: int) -> np.ndarray:
        """``randperm_cpu``: Fisher-Yates with ``random() % (n - i)`` (64-bit words past 2**32/20)."""
        perm = list(range(n))
        if n > 1:
            bounds = np.arange(n, 1, -1, dtype=np.uint64)
            if n < 0xFFFFFFFF // 20:
                z = (self.random(n - 1) % bounds).tolist()
            else:
                z = (self.random64(n - 1) % bounds).tolist()
            for i, step in enumerate(z):  # the swaps depend on each other: no vector form
                j = i + step
                perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64)

    # -- other distributions (each per element: ``cpu_serial_kernel`` with a double sampler) ----

    def bernoulli_scalar(self, n: int, p: float) -> np.ndarray:
        """``bernoulli_distribution<double>(p)``: a 53-bit uniform below p.

        Compared as integers: ``k * 2**-53 < p`` is ``k < ceil(p * 2**53)`` exactly, so no
        float64 uniforms are made; the words are drawn a cache-sized block at a time."""
        out = np.empty(n, np.bool_)
        # the last 53-bit integer kept: -1 keeps none (p <= 0 or NaN), 2**53 - 1 keeps all
        last = (1 << 53) - 1 if p >= 1 else math.ceil(p * 2.0**53) - 1 if p > 0 else -1
        top, bottom = divmod(last, 1 << 32)
        for start in range(0, n, _BERNOULLI_BLOCK):
            words = self.random(2 * min(_BERNOULLI_BLOCK, n - start)).reshape(-1, 2)
            part = out[start:start + len(words)]
            if last < 0:
                part.fill(False)
                continue
            high = np.bitwise_and(words[:, 0], _MASK21)  # the high word's 21 bits of the 53
            np.less(high, np.uint64(top), out=part)
            ties = np.flatnonzero(high == np.uint64(top))  # (about one draw in 2**21)
            if ties.size:
                part[ties] = words[ties, 1] <= np.uint64(bottom)
        return out

    def bernoulli_probs(self, probs: np.ndarray) -> np.ndarray:
        """Per-element probabilities: double ones draw 53-bit uniforms, others 24-bit floats."""
        flat = probs.reshape(-1)
        if probs.dtype == np.float64:
            return (self.unit_double(flat.size) < flat).reshape(probs.shape)
        return (self.unit_float(flat.size) < flat.astype(_F32)).reshape(probs.shape)

    def exponential(self, n: int, lambd: float) -> np.ndarray:
        return (-1.0 / lambd) * np.log1p(-self.unit_double(n))

    def geometric(self, n: int, p: float) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.ceil(np.log(self.unit_double(n)) / math.log1p(-p))

    def cauchy(self, n: int, median: float, sigma: float) -> np.ndarray:
        return median + sigma * np.tan(math.pi * (self.unit_double(n) - 0.5))

    def log_normal(self, n: int, mean: float, std: float) -> np.ndarray:
        return np.exp(_fma64(self.normal_pairs(n), std, mean))

    def multinomial_with_replacement(self, probs: np.ndarray, n_sample: int) -> np.ndarray:
        """``multinomial_with_replacement_apply``: a running sum in the input's dtype, normalised,
        the last bucket set to 1, and a binary search per 53-bit uniform (row by row)."""
        rows = probs.reshape(-1, probs.shape[-1])
        acc = np.float32 if rows.dtype == np.float16 else rows.dtype
        out = np.empty((rows.shape[0], n_sample), np.int64)
        for i, row in enumerate(rows):
            cum = np.cumsum(row.astype(acc), dtype=acc)
            cum = cum / cum[-1]
            cum[-1] = 1
            u = self.unit_double(n_sample)
            out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
        return out.reshape(probs.shape[:-1] + (n_sample,))

    def poisson(self, rates: np.ndarray) -> np.ndarray:
        """``sample_poisson`` per element (Hoermann's transformed rejection from rate 10 on)."""
        flat = rates.reshape(-1).astype(np.float64).tolist()
        out = [float(self._poisson_one(lam)) for lam in flat]
        return np.array(out, dtype=np.float64).reshape(rates.shape)

    def _uniform1(self) -> float:
        return float(self.unit_double(1)[0])

    def _poisson_one(self, lam: float) -> int:
        if lam >= 10:
            slam = math.sqrt(lam)
            loglam = math.log(lam)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            while True:
                u = self._uniform1() - 0.5
                v = self._uniform1()
                us = 0.5 - abs(u)
                k = math.floor((2 * a / us + b) * u + lam + 0.43)
                if us >= 0.07 and v <= vr:
                    return k
                if k < 0 or (us < 0.013 and v > us):
                    continue
                if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                        <= -lam + k * loglam - math.lgamma(k + 1.0)):
                    return k
        if lam == 0:
            return 0
        enlam = math.exp(-lam)
        x, prod = 0, 1.0
        while True:
            prod *= self._uniform1()
            if prod > enlam:
                x += 1
            else:
                return x

    # -- state -----------------------------------------------------------------------------------

    def get_state(self) -> np.ndarray:
        """The 5056 bytes of PyTorch's ``CPUGeneratorImplState`` (x86-64 layout)."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        buf = np.zeros(_STATE_BYTES, np.uint8)
        head = np.array([self.seed & 0xFFFFFFFFFFFFFFFF], np.uint64)
        buf[0:8] = head.view(np.uint8)
        buf[8:16] = np.array([625 - pos, 1], np.int32).view(np.uint8)  # left, seeded
        buf[16:24] = np.array([0 if self._fresh else pos], np.uint64).view(np.uint8)
        buf[24:5016] = st["key"].astype(np.uint64).view(np.uint8)
        if self.next_double is not None:
            buf[5024:5032] = np.array([self.next_double], np.float64).view(np.uint8)
            buf[5040:5044] = np.array([1], np.int32).view(np.uint8)
        if self.next_float is not None:
            buf[5048:5052] = np.array([self.next_float], _F32).view(np.uint8)
            buf[5052] = 1
        return buf

    def set_state(self, buf: np.ndarray) -> None:
        """Load PyTorch's 5056-byte layout after validating it."""
        if buf.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {buf.size}")
        buf = np.ascontiguousarray(buf, np.uint8)
        seed = int(buf[0:8].view(np.uint64)[0])
        left, seeded = (int(v) for v in buf[8:16].view(np.int32))
        nxt = int(buf[16:24].view(np.uint64)[0])
        if not seeded or not 1 <= left <= 624 + 1 or nxt > 624:
            raise RuntimeError("Invalid mt19937 state")
        key = buf[24:5016].view(np.uint64).astype(np.uint32)
        from numpy.random import MT19937

        bits = MT19937()
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 625 - left}}
        next_double = float(buf[5024:5032].view(np.float64)[0]) if buf[5040:5044].view(np.int32)[0] else None
        next_float = None
        if buf[5052]:
            next_float = float(buf[5048:5052].view(_F32)[0])
        self._bits, self.seed, self._fresh = bits, seed, nxt == 0
        self.next_double, self.next_float = next_double, next_float
