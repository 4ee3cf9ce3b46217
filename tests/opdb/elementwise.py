"""Op database entries for the elementwise ops: arithmetic variants, unary math, the erf family,
rounding, fmod/remainder, three-input ops, clamp with tensor bounds, nan_to_num, in-place forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import OpInfo, Sample, away_from_zero

Domain = Callable[..., np.ndarray]


def _arr(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)  # 0-d samples stay arrays (tensors), not Python floats


def _in(low: float, high: float) -> Domain:
    def domain(rng: np.random.Generator, *shape: int) -> np.ndarray:
        return _arr(rng.uniform(low, high, size=shape))

    return domain


def _off_grid(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values at least 0.1 away from integers and half-integers: rounding ops are flat there."""
    whole = rng.integers(-3, 3, size=shape).astype(np.float64)
    return _arr(whole + rng.choice([0.15, 0.3, 0.65, 0.8], size=shape) + rng.uniform(-0.02, 0.02, size=shape))


def _off_decimal_grid(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values 0.02 away from the x.x5 boundaries of ``round(decimals=1)``."""
    return _arr(np.round(rng.uniform(-3, 3, size=shape), 1) + rng.choice([-0.02, 0.02], size=shape))


def _unary(domain: Domain) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((domain(rng, 4),), name="vector"),
            Sample((domain(rng, 2, 3),), name="matrix"),
            Sample((_arr(domain(rng)),), name="0-d"),
            Sample((domain(rng, 3, 2),), name="noncontiguous", noncontiguous=True),
            Sample((domain(rng, 0),), name="empty"),
        ]

    return samples


def _unary_int(values: list[int]) -> Callable[[np.random.Generator], list[Sample]]:
    """The float domain samples plus an integer tensor (dtype parity: ints become the default float)."""
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [Sample((np.array(values, dtype=np.int64),), name="int64")]

    return samples


def _binary(lhs: Domain, rhs: Domain, scalar: float | None = None) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        out = [
            Sample((lhs(rng, 3), rhs(rng, 3)), name="same shape"),
            Sample((lhs(rng, 2, 3), rhs(rng, 3)), name="broadcast rhs"),
            Sample((lhs(rng, 2, 1), rhs(rng, 1, 3)), name="broadcast both"),
            Sample((_arr(lhs(rng)), rhs(rng, 2)), name="0-d lhs"),
            Sample((lhs(rng, 3, 2), rhs(rng, 3, 2)), name="noncontiguous", noncontiguous=True),
            Sample((lhs(rng, 0, 3), rhs(rng, 3)), name="empty"),
        ]
        if scalar is not None:
            out.append(Sample((lhs(rng, 3), scalar), name="python scalar"))
        return out

    return samples


_U = _in(-2.0, 2.0)
_POS = _in(0.2, 2.0)


def _nonzero(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return _arr(away_from_zero(rng, *shape))


def _lerp_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((_U(rng, 3), _U(rng, 3), 0.3), name="small weight"),
        Sample((_U(rng, 2, 3), _U(rng, 3), 0.8), name="large weight, broadcast"),
        Sample((_U(rng, 3, 2), _U(rng, 3, 2), -0.25), name="noncontiguous", noncontiguous=True),
        Sample((_arr(_U(rng)), _arr(_U(rng)), 2.0), name="0-d"),
    ]


def _lerp_tensor_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((_U(rng, 3), _U(rng, 3), _in(0.0, 1.0)(rng, 3)), name="same shape"),
        Sample((_U(rng, 2, 3), _U(rng, 3), _in(0.0, 1.0)(rng, 2, 1)), name="broadcast"),
        Sample((_U(rng, 4), _U(rng, 4), _arr(0.6)), name="0-d weight"),
    ]


def _ternary(third: Domain) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((_U(rng, 3), _U(rng, 3), third(rng, 3)), name="same shape"),
            Sample((_U(rng, 2, 3), _U(rng, 3), third(rng, 2, 1)), name="broadcast"),
            Sample((_U(rng, 1, 2), _U(rng, 2), third(rng, 2)), name="leading 1"),
            Sample((_U(rng, 3, 2), _U(rng, 3, 2), third(rng, 3, 2)), name="noncontiguous", noncontiguous=True),
        ]

    return samples


def _clamp_tensor_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((_U(rng, 2, 4), _in(-1.5, -0.2)(rng, 4), _in(0.2, 1.5)(rng, 2, 1)), name="broadcast bounds"),
        Sample((_U(rng, 5), _in(-0.5, 0.5)(rng, 5), _in(-0.5, 0.5)(rng, 5)), name="crossed bounds"),
    ]


def _with_nonfinite(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((np.array([1.5, np.nan, np.inf, -np.inf, -0.5]),), name="nan and inf"),
        Sample((_U(rng, 2, 3),), name="finite"),
    ]


def _int(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


OPS: list[OpInfo] = [
    # -- arithmetic variants --
    OpInfo("sub", lambda lib, a, b: lib.sub(a, b, alpha=2.5), _binary(_U, _U, 1.5), covers=("sub",), variant_test_name="alpha"),
    OpInfo("subtract", lambda lib, a, b: lib.subtract(a, b), _binary(_U, _U, 1.5), covers=("subtract",), variant_test_name="fn"),
    OpInfo("rsub", lambda lib, a, b: lib.rsub(a, b), _binary(_U, _U), covers=("rsub",), variant_test_name="tensor"),
    OpInfo("rsub", lambda lib, a, b: lib.rsub(a, b, alpha=0.5), _binary(_U, _U, 3.0), covers=("rsub",), variant_test_name="alpha"),
    OpInfo("true_divide", lambda lib, a, b: lib.true_divide(a, b), _binary(_U, _nonzero, 2.5),
           covers=("true_divide", "divide")),
    OpInfo("div", lambda lib, a, b: lib.div(a, b),
           lambda rng: [Sample((_int([1, 4, -7]), _int([2, 3, 2])), name="int64 / int64")], covers=("div",), variant_test_name="int"),
    OpInfo("pow", lambda lib, a: lib.pow(2.5, a), _unary(_U), covers=("pow",), variant_test_name="scalar_base"),
    OpInfo("pow", lambda lib, a, b: lib.pow(a, b), _binary(_POS, _U), covers=("pow",), variant_test_name="tensor_fn"),
    OpInfo("pow", lambda lib, a, b: a.pow(b),
           lambda rng: [Sample((_POS(rng, 2, 3), _arr(1.7)), name="0-d exponent")], covers=("pow",), variant_test_name="0d_exponent"),
    OpInfo("pow", lambda lib, a: lib.pow(a, -2), _unary(_nonzero), covers=("pow",), variant_test_name="negative"),
    OpInfo("pow", lambda lib, a: lib.pow(a, 2),
           lambda rng: [Sample((_int([1, -2, 3]),), name="int64")], covers=("pow",), variant_test_name="int"),
    OpInfo("square", lambda lib, a: lib.square(a), _unary(_U)),
    OpInfo("square", lambda lib, a: a.square(),
           lambda rng: [Sample((_int([1, -2, 3]),)), Sample((np.array([True, False]),), name="bool")],
           covers=("square",), variant_test_name="int"),
    OpInfo("float_power", lambda lib, a: lib.float_power(a, 2), _unary(_U), covers=("float_power",)),
    OpInfo("float_power", lambda lib, a, b: a.float_power(b), _binary(_POS, _U), covers=("float_power",), variant_test_name="tensor"),
    OpInfo("float_power", lambda lib, a: lib.float_power(2, a), _unary(_U), covers=("float_power",), variant_test_name="scalar_base"),
    # -- unary math --
    OpInfo("rsqrt", lambda lib, a: a.rsqrt(), _unary(_POS)),
    OpInfo("expm1", lambda lib, a: lib.expm1(a), _unary(_U)),
    OpInfo("log1p", lambda lib, a: lib.log1p(a), _unary(_in(-0.8, 2.0))),
    OpInfo("log2", lambda lib, a: a.log2(), _unary(_POS)),
    OpInfo("log10", lambda lib, a: lib.log10(a), _unary(_POS)),
    OpInfo("exp2", lambda lib, a: lib.exp2(a), _unary(_U)),
    OpInfo("sinh", lambda lib, a: lib.sinh(a), _unary(_U)),
    OpInfo("cosh", lambda lib, a: a.cosh(), _unary(_U)),
    OpInfo("tan", lambda lib, a: lib.tan(a), _unary(_in(-1.2, 1.2))),
    OpInfo("asin", lambda lib, a: lib.asin(a), _unary(_in(-0.9, 0.9)), covers=("asin", "arcsin")),
    OpInfo("acos", lambda lib, a: a.arccos(), _unary(_in(-0.9, 0.9)), covers=("acos", "arccos")),
    OpInfo("atan", lambda lib, a: lib.arctan(a), _unary(_U), covers=("atan", "arctan")),
    OpInfo("asinh", lambda lib, a: lib.asinh(a), _unary(_U), covers=("asinh", "arcsinh")),
    OpInfo("acosh", lambda lib, a: a.acosh(), _unary(_in(1.2, 3.0)), covers=("acosh", "arccosh")),
    OpInfo("atanh", lambda lib, a: lib.atanh(a), _unary(_in(-0.9, 0.9)), covers=("atanh", "arctanh")),
    OpInfo("rsqrt", lambda lib, a: (a.rsqrt(), a.log2(), a.exp2(), a.tan(), a.erf(), a.atan()),
           _unary_int([1, 2, 5]), covers=("rsqrt", "log2", "exp2", "tan", "erf", "atan"), variant_test_name="unary_int_to_float"),
    OpInfo("atan2", lambda lib, a, b: lib.atan2(a, b), _binary(_U, _nonzero), covers=("atan2", "arctan2")),
    OpInfo("atan2", lambda lib, a, b: a.atan2(b),
           lambda rng: [Sample((np.array([0.0, 1.0]), np.array([0.0, 2.0])))], covers=("atan2",),
           gradcheck=False, variant_test_name="at_origin"),
    OpInfo("hypot", lambda lib, a, b: lib.hypot(a, b), _binary(_nonzero, _nonzero)),
    OpInfo("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), _binary(_U, _U)),
    OpInfo("logaddexp", lambda lib, a, b: a.logaddexp(b),
           lambda rng: [Sample((np.array([1e4, -1e4, 3.0]), np.array([1e4 + 1, -1e4, -800.0])))],
           covers=("logaddexp",), variant_test_name="large"),
    OpInfo("logaddexp2", lambda lib, a, b: lib.logaddexp2(a, b), _binary(_U, _U)),
    # -- erf family --
    OpInfo("erf", lambda lib, a: lib.erf(a), _unary(_in(-3.0, 3.0))),
    OpInfo("erf", lambda lib, a: a.erf(),
           lambda rng: [Sample((np.array([-6.0, -2.5, -1e-8, 0.0, 0.3, 1.9, 2.1, 4.5, 27.0]),))], covers=("erf",),
           gradcheck=False, gradgradcheck=False, parity_rtol=1e-14, parity_atol=0.0, variant_test_name="wide"),
    OpInfo("erfc", lambda lib, a: lib.erfc(a), _unary(_in(-3.0, 3.0))),
    OpInfo("erfc", lambda lib, a: a.erfc(),
           lambda rng: [Sample((np.array([-3.0, 0.2, 1.4, 1.6, 2.5, 5.0, 10.0, 25.0]),))], covers=("erfc",),
           gradcheck=False, gradgradcheck=False, parity_rtol=1e-12, parity_atol=0.0, variant_test_name="tail"),
    OpInfo("erfinv", lambda lib, a: lib.erfinv(a), _unary(_in(-0.95, 0.95))),
    OpInfo("erfinv", lambda lib, a: a.erfinv(),
           lambda rng: [Sample((np.array([-1.0, -0.999999, -0.97, -1e-300, 0.0, 1e-10, 0.5, 0.99, 1 - 1e-12, 1.0,
                                          1.5]),))],
           covers=("erfinv",), gradcheck=False, gradgradcheck=False, parity_rtol=1e-12, parity_atol=0.0, variant_test_name="tails"),
    # -- rounding: zero gradients --
    OpInfo("floor", lambda lib, a: a.floor(), _unary(_off_grid)),
    OpInfo("ceil", lambda lib, a: lib.ceil(a), _unary(_off_grid)),
    OpInfo("round", lambda lib, a: lib.round(a), _unary(_off_grid)),
    OpInfo("round", lambda lib, a: lib.round(a, decimals=1), _unary(_off_decimal_grid), covers=("round",), variant_test_name="decimals"),
    OpInfo("round", lambda lib, a: a.round(decimals=-1),
           lambda rng: [Sample((np.array([14.0, 16.0, -26.0, 251.0]),))], covers=("round",), variant_test_name="negative_decimals"),
    OpInfo("trunc", lambda lib, a: lib.trunc(a), _unary(_off_grid), covers=("trunc", "fix")),
    OpInfo("fix", lambda lib, a: a.fix(), _unary(_off_grid)),
    OpInfo("frac", lambda lib, a: lib.frac(a), _unary(_off_grid)),
    OpInfo("sign", lambda lib, a: lib.sign(a),
           lambda rng: [Sample((np.array([-1.5, 0.0, np.nan, 2.0]),))], covers=("sign",), gradcheck=False, variant_test_name="nan"),
    OpInfo("floor", lambda lib, a: (a.floor(), a.ceil(), a.round(), a.trunc(), a.sign()),
           lambda rng: [Sample((_int([-3, 0, 4]),))], covers=("floor", "ceil", "round", "trunc", "sign"), variant_test_name="rounding_int"),
    # -- fmod / remainder --
    OpInfo("fmod", lambda lib, a, b: lib.fmod(a, b), _binary(_U, _nonzero)),
    OpInfo("fmod", lambda lib, a: a.fmod(-0.7), _unary(_U), covers=("fmod",), variant_test_name="scalar"),
    OpInfo("fmod", lambda lib, a, b: a.fmod(b), lambda rng: [Sample((_int([5, -5, 7]), _int([3, 3, -2])))],
           covers=("fmod",), variant_test_name="int"),
    OpInfo("remainder", lambda lib, a, b: lib.remainder(a, b), _binary(_U, _nonzero), covers=("remainder",)),
    OpInfo("remainder", lambda lib, a: a % 0.7, _unary(_U), covers=("remainder", "__mod__"), variant_test_name="scalar"),
    OpInfo("remainder", lambda lib, a, b: lib.remainder(a, b),
           lambda rng: [Sample((_int([5, -5, 7]), _int([3, 3, -2])))], covers=("remainder",), variant_test_name="int"),
    OpInfo("remainder", lambda lib, a: lib.remainder(5, a),
           lambda rng: [Sample((_int([3, -2, 4]),))], covers=("remainder", "__rmod__"), variant_test_name="scalar_self"),
    # -- three-input ops --
    OpInfo("lerp", lambda lib, a, b, w: lib.lerp(a, b, w), _lerp_samples),
    OpInfo("lerp", lambda lib, a, b, w: a.lerp(b, w), _lerp_tensor_samples, covers=("lerp",), variant_test_name="tensor_weight"),
    OpInfo("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c), _ternary(_U)),
    OpInfo("addcmul", lambda lib, a, b, c: a.addcmul(b, c, value=-0.5), _ternary(_U), covers=("addcmul",), variant_test_name="value"),
    OpInfo("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=2),
           lambda rng: [Sample((_int([1, 2]), _int([3, 4]), _int([5, -6])))], covers=("addcmul",), variant_test_name="int"),
    OpInfo("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c), _ternary(_nonzero)),
    OpInfo("addcdiv", lambda lib, a, b, c: a.addcdiv(b, c, value=2.0), _ternary(_nonzero), covers=("addcdiv",), variant_test_name="value"),
    # -- clamp with tensor bounds, clamp_min / clamp_max --
    OpInfo("clamp", lambda lib, a, lo, hi: lib.clamp(a, min=lo, max=hi), _clamp_tensor_samples,
           covers=("clamp",), variant_test_name="tensor"),
    OpInfo("clamp", lambda lib, a, lo: a.clamp(min=lo),
           lambda rng: [Sample((_U(rng, 2, 3), _U(rng, 3)))], covers=("clamp",), variant_test_name="tensor_min"),
    OpInfo("clamp", lambda lib, a, hi: lib.clip(a, max=hi),
           lambda rng: [Sample((_U(rng, 2, 3), _U(rng, 2, 1)))], covers=("clip",), variant_test_name="tensor_max"),
    OpInfo("clamp_min", lambda lib, a: lib.clamp_min(a, 0.3), _unary(_U), covers=("clamp_min",), variant_test_name="scalar"),
    OpInfo("clamp_max", lambda lib, a: a.clamp_max(-0.3), _unary(_U), covers=("clamp_max",), variant_test_name="scalar"),
    OpInfo("clamp_min", lambda lib, a, b: a.clamp_min(b), _binary(_U, _U), covers=("clamp_min",), variant_test_name="tensor"),
    OpInfo("clamp_max", lambda lib, a, b: lib.clamp_max(a, b), _binary(_U, _U), covers=("clamp_max",), variant_test_name="tensor"),
    OpInfo("clamp", lambda lib, a: lib.clamp(a, 0.5),
           lambda rng: [Sample((_int([0, 1, 2]),))], covers=("clamp",), variant_test_name="int_float_bound"),
    # -- nan_to_num --
    OpInfo("nan_to_num", lambda lib, a: lib.nan_to_num(a), _with_nonfinite),
    OpInfo("nan_to_num", lambda lib, a: a.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), _with_nonfinite,
           covers=("nan_to_num",), variant_test_name="values"),
    # -- in-place forms (same nodes; history rewritten on a non-leaf) --
    # (an op that saves its result must come last: a later in-place write would invalidate it)
    OpInfo("sinh_", lambda lib, a: (a * 1).sinh_().erf_().exp2_(), _unary(_in(-1.0, 1.0)),
           covers=("sinh_", "erf_", "exp2_"), variant_test_name="inplace_unary"),
    OpInfo("asin_", lambda lib, a: (a * 0.5).asin_().atan_().cosh_().tan_(), _unary(_in(-1.0, 1.0)),
           covers=("asin_", "atan_", "cosh_", "tan_"), variant_test_name="inplace_trig"),
    OpInfo("log1p_", lambda lib, a: (a * 1).log1p_().log2_().expm1_(), _unary(_in(0.1, 1.0)),
           covers=("log1p_", "log2_", "expm1_"), variant_test_name="inplace_logs"),
    OpInfo("log10_", lambda lib, a: (a + 1).log10_().rsqrt_(), _unary(_in(0.1, 1.0)),
           covers=("log10_", "rsqrt_"), variant_test_name="inplace_rsqrt"),
    OpInfo("reciprocal_", lambda lib, a: (a * 1).reciprocal_(), _unary(_nonzero), covers=("reciprocal_",), variant_test_name="inplace_reciprocal"),
    OpInfo("floor_", lambda lib, a: (a * 1).floor_().add(a.clone().frac_()).add(a.clone().round_()),
           _unary(_off_grid), covers=("floor_", "frac_", "round_"), variant_test_name="inplace_rounding"),
    OpInfo("atan2_", lambda lib, a, b: (a * 1).atan2_(b).lerp_(b, 0.3).fmod_(1.5).hypot_(b),
           lambda rng: [Sample((_U(rng, 2, 3), _nonzero(rng, 3)))], covers=("atan2_", "lerp_", "fmod_", "hypot_"), variant_test_name="inplace_binary"),
    OpInfo("addcmul_", lambda lib, a, b, c: (a * 1).addcmul_(b, c, value=0.5).addcdiv_(b, c),
           _ternary(_nonzero), covers=("addcmul_", "addcdiv_"), variant_test_name="inplace_addc"),
    OpInfo("clamp_", lambda lib, a, lo, hi: (a * 1).clamp_(lo, hi).clamp_min_(lo).clamp_max_(0.5),
           _clamp_tensor_samples, covers=("clamp_", "clamp_min_", "clamp_max_"), variant_test_name="inplace_clamp_tensor"),
    OpInfo("square_", lambda lib, a: (a * 1).square_().nan_to_num_().erfinv_(), _unary(_in(-0.9, 0.9)),
           covers=("square_", "nan_to_num_", "erfinv_"), variant_test_name="inplace_square"),
    # -- writes of one value on a non-leaf: the result does not depend on the input (zero gradients) --
    OpInfo("fill_", lambda lib, a: (a * 1).fill_(0.5), _unary(_U)),
    OpInfo("zero_", lambda lib, a: (a * 1).zero_(), _unary(_U)),
    # a 0-d tensor value is an input (FillBackward3): it gets the sum of the gradient
    OpInfo("fill_", lambda lib, a, v: (a * 1).fill_(v) * a, lambda rng: [Sample((_U(rng, 2, 3), _U(rng)))],
           variant_test_name="tensor_value"),
    # -- dtype conversion (ToCopyBackward0), through float32 and back: below 1/64 float32 rounds to
    # 2**-30, which keeps central differences within 5e-4 of the true slope 1. No gradgradcheck:
    # the cotangent itself is rounded to float32 on its way back.
    OpInfo("to", lambda lib, a: a.to(lib.float32).to(lib.float64), _unary(_in(-0.015, 0.015)),
           variant_test_name="float32_round_trip", gradgradcheck=False),
    # -- special functions (issue #12) --
    OpInfo("lgamma", lambda lib, a: lib.lgamma(a), _unary(_off_grid)),
    OpInfo("lgamma", lambda lib, a: a.lgamma(), _unary_int([1, 4, 7]), covers=("lgamma",), variant_test_name="int",
           gradcheck=False),
    OpInfo("digamma", lambda lib, a: lib.digamma(a), _unary(_off_grid)),
    OpInfo("polygamma", lambda lib, a: lib.polygamma(2, a), _unary(_in(0.3, 3.0))),
    OpInfo("polygamma", lambda lib, a: a.polygamma(1), _unary(_off_grid), covers=("polygamma",),
           variant_test_name="trigamma", parity_rtol=1e-7),
    OpInfo("mvlgamma", lambda lib, a: lib.mvlgamma(a, p=3), _unary(_in(1.3, 4.0))),
    OpInfo("i0", lambda lib, a: lib.i0(a), _unary(_in(-3.0, 3.0))),
    OpInfo("igamma", lambda lib, a, x: lib.igamma(a, x),
           lambda rng: [Sample((_POS(rng, 3), _POS(rng, 3)), grad=(False, True)),
                        Sample((_POS(rng, 2, 3), _in(0.5, 4.0)(rng, 3)), grad=(False, True), name="broadcast")],
           parity_rtol=1e-7),
    OpInfo("igammac", lambda lib, a, x: a.igammac(x),
           lambda rng: [Sample((_POS(rng, 3), _in(0.5, 4.0)(rng, 3)), grad=(False, True))], parity_rtol=1e-7),
    OpInfo("xlogy", lambda lib, a, b: lib.xlogy(a, b), _binary(_nonzero, _POS)),
    OpInfo("xlogy", lambda lib, a: a.xlogy(2.5), _unary(_U), covers=("xlogy",), variant_test_name="scalar_other"),
    OpInfo("xlogy", lambda lib, b: lib.xlogy(2.5, b), _unary(_POS), covers=("xlogy",), variant_test_name="scalar_self"),
    OpInfo("xlogy_", lambda lib, a, b: lib.xlogy_(a * 1, b).mul(a.clone().xlogy_(1.5)),
           lambda rng: [Sample((_nonzero(rng, 2, 3), _POS(rng, 3)))], covers=("xlogy_",)),
    OpInfo("sinc", lambda lib, a: lib.sinc(a), _unary(_U)),
    OpInfo("logit", lambda lib, a: lib.logit(a), _unary(_in(0.1, 0.9))),
    OpInfo("logit", lambda lib, a: a.logit(eps=0.2), _unary(_in(0.3, 0.7)), covers=("logit",), variant_test_name="eps"),
    OpInfo("sgn", lambda lib, a: lib.sgn(a) * a, _unary(away_from_zero)),
    OpInfo("angle", lambda lib, a: lib.angle(a) + a, _unary(_nonzero)),
    OpInfo("deg2rad", lambda lib, a: lib.deg2rad(a), _unary(_U)),
    OpInfo("rad2deg", lambda lib, a: lib.rad2deg(a), _unary(_U)),
    OpInfo("copysign", lambda lib, a, b: lib.copysign(a, b), _binary(_nonzero, _nonzero, -2.0)),
    OpInfo("fmax", lambda lib, a, b: lib.fmax(a, b), _binary(_U, _U)),
    OpInfo("fmin", lambda lib, a, b: a.fmin(b), _binary(_U, _U), covers=("fmin",)),
    OpInfo("maximum", lambda lib, a, b: a.maximum(b).mul(a.minimum(b)), _binary(_U, _U), covers=("maximum", "minimum"),
           variant_test_name="method"),
    OpInfo("nextafter", lambda lib, a, b: lib.nextafter(a, b), _binary(_U, _U)),
    OpInfo("ldexp", lambda lib, a, b: lib.ldexp(a, b),
           lambda rng: [Sample((_U(rng, 3), _int([1, 0, 3])), name="int exponent"),
                        Sample((_U(rng, 2, 3), _in(-1.0, 1.0)(rng, 3)), name="float exponent")]),
    OpInfo("frexp", lambda lib, a: lib.frexp(a)[0] * a.frexp().exponent, _unary(_nonzero)),
    # -- not differentiable: values and dtypes against PyTorch --
    OpInfo("heaviside", lambda lib, a, b: lib.heaviside(a, b),
           lambda rng: [Sample((np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.25, 3.0])), grad=(False, False))]),
    OpInfo("floor_divide", lambda lib, a, b: lib.floor_divide(a, b),
           lambda rng: [Sample((_U(rng, 2, 3), _nonzero(rng, 3)), grad=(False, False)),
                        Sample((_int([7, -7, 5]), _int([2, 2, -3])), name="int")]),
    OpInfo("gcd", lambda lib, a, b: lib.gcd(a, b).add(lib.lcm(a, b)).add(a.gcd_(b)).add(b.lcm_(a)),
           lambda rng: [Sample((_int([12, -18, 0, 7]), _int([8, 12, 5, 0])))], covers=("gcd", "lcm", "gcd_", "lcm_")),
    OpInfo("bitwise_and", lambda lib, a, b: lib.stack([lib.bitwise_and(a, b), lib.bitwise_or(a, b), lib.bitwise_xor(a, 3),
                                                      lib.bitwise_not(a), lib.bitwise_left_shift(a, 2),
                                                      lib.bitwise_right_shift(a, b.abs()), lib.logical_xor(a, b).long(),
                                                      lib.signbit(a).long()]),
           lambda rng: [Sample((_int([12, -18, 0, 7]), _int([8, 12, 5, -1])))],
           covers=("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                   "bitwise_right_shift", "logical_xor", "signbit")),
    OpInfo("isnan", lambda lib, a: lib.stack([lib.isnan(a), lib.isinf(a), lib.isfinite(a), lib.isposinf(a),
                                              lib.isneginf(a), lib.isreal(a), lib.isclose(a, a * 1.000001),
                                              lib.signbit(a)]),
           lambda rng: [Sample((np.array([1.5, np.nan, np.inf, -np.inf, -0.0]),), grad=(False,))],
           covers=("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isclose")),
    OpInfo("greater_equal", lambda lib, a, b: lib.stack([lib.greater_equal(a, b), lib.less_equal(a, b)]).long(),
           _binary(_U, _U), covers=("greater_equal", "less_equal")),
    OpInfo("fill", lambda lib, a: lib.fill(a, 0.5) * a, _unary(_U)),
    OpInfo("fill", lambda lib, a, v: lib.fill(a, v) * a, lambda rng: [Sample((_U(rng, 2, 3), _U(rng)))],
           covers=("fill",), variant_test_name="tensor_value"),
    # -- in-place comparisons record a node with zero gradients (LtBackward0/1) --
    OpInfo("lt_", lambda lib, a, b: (a * 1).lt_(b).add(a.clone().ge_(0.1)).add(a.clone().greater_(b)).add(a.clone().lt_(0.2))
           .add(a.clone().le_(b)).add(a.clone().le_(0.3)).add(a.clone().gt_(0.1)).add(a.clone().ge_(b)).mul(a),
           lambda rng: [Sample((_U(rng, 2, 3), _U(rng, 3)), name="broadcast rhs"), Sample((_U(rng, 4), _U(rng, 4)))],
           covers=("lt_", "ge_", "greater_")),
    # -- PyTorch's in-place functions (torch.exp_(x) is x.exp_()) --
    # (an op that saves its result comes last in its chain: a later write would invalidate it)
    OpInfo("exp_", lambda lib, a: lib.exp_(lib.log2_(lib.log_(a + 3))).mul(lib.exp2_(a * 1)).mul(lib.sqrt_(lib.square_(a + 2))),
           _unary(_in(-1.0, 1.0)), covers=("exp_", "exp2_", "log_", "log2_", "sqrt_", "square_")),
    OpInfo("sin_", lambda lib, a: lib.tan_(lib.sinh_(lib.sin_(lib.asin_(lib.arcsin_(lib.atan_(lib.arctan_(a * 0.5))))))),
           _unary(_in(-1.0, 1.0)), covers=("sin_", "sinh_", "tan_", "asin_", "arcsin_", "atan_", "arctan_")),
    OpInfo("cos_", lambda lib, a: lib.acos_(lib.arccos_(lib.cos_(a * 1)) * 0.3).add(lib.cosh_(a * 1)).add(lib.tanh_(a * 1)),
           _unary(_in(0.2, 1.0)), covers=("cos_", "acos_", "arccos_", "cosh_", "tanh_")),
    OpInfo("expm1_", lambda lib, a: lib.expm1_(lib.log1p_(a * 1)).mul(lib.log10_(a + 1)).mul(lib.rsqrt_(a + 1))
           .mul(lib.reciprocal_(a * 1)),
           _unary(_in(0.2, 2.0)), covers=("expm1_", "log1p_", "log10_", "rsqrt_", "reciprocal_")),
    OpInfo("sigmoid_", lambda lib, a: lib.sigmoid_(lib.logit_(a * 0.4 + 0.5)).add(lib.erfc_(lib.erf_(a * 1))).add(lib.i0_(a * 1)),
           _unary(_in(-1.0, 1.0)), covers=("sigmoid_", "logit_", "erf_", "erfc_", "i0_")),
    OpInfo("abs_", lambda lib, a: lib.abs_(a * 1).add((a * 1).absolute_()).add(lib.neg_(a * 1)).add(lib.negative_(a * 1))
           .add(lib.relu_(a * 1)).add(lib.deg2rad_(a * 1)).add(lib.rad2deg_(a * 1)).add(lib.sinc_(a * 1)),
           _unary(_nonzero), covers=("abs_", "absolute_", "neg_", "negative_", "relu_", "deg2rad_", "rad2deg_", "sinc_")),
    OpInfo("clamp_", lambda lib, a: lib.clamp_(a * 1, -0.5, 0.5).add(lib.clip_(a * 1, max=0.4)).add(lib.clamp_min_(a * 1, 0.1))
           .add(lib.clamp_max_(a * 1, -0.1)).add(lib.nan_to_num_(a * 1)).add(lib.frac_(a * 1)),
           _unary(_off_grid), covers=("clamp_", "clip_", "clamp_min_", "clamp_max_", "nan_to_num_", "frac_")),
    OpInfo("floor_", lambda lib, a: lib.floor_(a * 1).add(lib.ceil_(a * 1)).add(lib.round_(a * 1)).add(lib.trunc_(a * 1))
           .add(lib.fix_(a * 1)).add(lib.zero_(a * 1)).add(lib.fill_(a * 1, 2.0)).mul(a),
           _unary(_off_grid), covers=("floor_", "ceil_", "round_", "trunc_", "fix_", "zero_", "fill_")),
    OpInfo("ldexp_", lambda lib, a, b: lib.ldexp_(a * 1, b), lambda rng: [Sample((_U(rng, 3), _int([1, 0, 3])))]),
    # (asinh_/acosh_/atanh_ record nodes whose backward PyTorch does not implement: values only)
    OpInfo("asinh_", lambda lib, a: lib.stack([lib.asinh_(a * 1), lib.arcsinh_(a * 1), lib.atanh_(a * 0.5),
                                               lib.arctanh_(a * 0.5), lib.acosh_(a + 2), lib.arccosh_(a + 2)]),
           lambda rng: [Sample((_in(-1.0, 1.0)(rng, 3),), grad=(False,))],
           covers=("asinh_", "arcsinh_", "atanh_", "arctanh_", "acosh_", "arccosh_")),
    # in-place equality records EqBackward0/1, NeBackward0/1 with zero gradients (as lt_ above)
    OpInfo("eq_", lambda lib, a, b: (a * 1).eq_(b).add(a.clone().eq_(0.5)).add(a.clone().ne_(b))
           .add(a.clone().not_equal_(0.5)).mul(a),
           lambda rng: [Sample((_U(rng, 2, 3), _U(rng, 3)), name="broadcast rhs"),
                        Sample((np.array([0.5, 1.0, -1.0]), np.array([0.5, 2.0, -1.0])), name="some equal")],
           covers=("eq_", "ne_", "not_equal_")),
    # an explicit rounding_mode=None is PyTorch's DivBackward2 overload (true division)
    OpInfo("div", lambda lib, a, b: lib.div(a, b, rounding_mode=None),
           _binary(_U, _nonzero, 2.5), covers=("div",), variant_test_name="rounding_mode_none"),
]
