"""The elementwise ops added for issue #12 beyond what the op database checks: accuracy sweeps of
the special functions against PyTorch (and mpmath where PyTorch's own kernel is the less accurate
one), values and gradients at the boundaries, dtype rules and errors of the integer, bitwise and
shift ops, and the in-place forms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

RNG = np.random.default_rng(12)
# Wide ranges: negative non-integers, poles, tiny and huge values, the infinities and NaN.
SWEEP = np.concatenate([
    RNG.uniform(-30, 30, 3000), RNG.uniform(0, 3, 2000), np.exp(RNG.uniform(-20, 40, 1000)),
    -np.exp(RNG.uniform(-10, 9, 500)), [0.0, -0.0, 1.0, 2.0, -1.0, -7.0, 10.0, 0.5, 1e-300, 1e300, 3e307],
    [np.inf, -np.inf, np.nan],
])


def _close(ours: np.ndarray, theirs: np.ndarray, rtol: float, atol: float = 0.0) -> None:
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def _both(torch: Any, name: str, x: np.ndarray, *args: Any) -> tuple[np.ndarray, np.ndarray]:
    ours = getattr(rg, name)(*args, rg.tensor(x, dtype=rg.float64)) if args else getattr(rg, name)(rg.tensor(x, dtype=rg.float64))
    theirs = getattr(torch, name)(*args, torch.tensor(x, dtype=torch.float64)) if args else \
        getattr(torch, name)(torch.tensor(x, dtype=torch.float64))
    return ours.numpy(), theirs.numpy()


@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0"])
def test_special_functions_match_torch_over_wide_ranges(torch: Any, name: str) -> None:
    ours, theirs = _both(torch, name, SWEEP)
    # lgamma has zeros (at 1, 2 and between the negative poles): there only absolute accuracy counts.
    _close(ours, theirs, rtol=1e-12, atol=1e-14 if name == "lgamma" else 0.0)
    numbers = ~np.isnan(theirs)
    assert np.array_equal(np.signbit(ours[numbers]), np.signbit(theirs[numbers]))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_polygamma_matches_torch(torch: Any, n: int) -> None:
    ours, theirs = _both(torch, "polygamma", SWEEP[np.abs(SWEEP) < 1e6], n)
    _close(ours, theirs, rtol=1e-12)
    # far below 0 (the reflection formula): against mpmath
    mpmath = pytest.importorskip("mpmath")
    x = np.array([-12345.25, -20000.7])
    expected = [float(mpmath.polygamma(n, v)) for v in x]
    _close(rg.polygamma(n, rg.tensor(x, dtype=rg.float64)).numpy(), np.array(expected), rtol=1e-9)


def test_polygamma_quirks_are_torch_s(torch: Any) -> None:
    # trigamma(-1) is finite in PyTorch (sin(-pi) is not 0 in floating point); -inf at 0 for n = 2
    x = np.array([0.0, -0.0, -1.0, -2.5, np.inf, -np.inf])
    for n in (1, 2):
        ours, theirs = _both(torch, "polygamma", x, n)
        _close(ours, theirs, rtol=1e-12)


def test_mvlgamma_and_igamma_match_torch(torch: Any) -> None:
    x = RNG.uniform(1.6, 40, 200)
    for p in (1, 2, 5):
        _close(rg.mvlgamma(rg.tensor(x, dtype=rg.float64), p).numpy(),
               torch.mvlgamma(torch.tensor(x, dtype=torch.float64), p).numpy(), rtol=1e-12)
    a = np.concatenate([RNG.uniform(0, 5, 500), [0, 0, 1, 2, np.inf, np.inf, -1, 1, np.nan]])
    z = np.concatenate([RNG.uniform(0, 8, 500), [0, 1, 0, np.inf, 1, np.inf, 1, -1, 1]])
    for name in ("igamma", "igammac"):
        ours = getattr(rg, name)(rg.tensor(a), rg.tensor(z)).numpy()
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(z)).numpy()
        _close(ours, theirs, rtol=1e-12, atol=1e-300)


def test_igamma_is_accurate_where_torch_s_asymptotic_series_is_not(torch: Any) -> None:
    # For 20 < a < 200 near x = a PyTorch switches to a series good to ~1e-9; ours is to 1e-12.
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    a = np.array([20.366042127893053, 24.446623790923397, 150.0, 1000.0, 0.3, 7.5])
    x = np.array([14.347332393979176, 31.454239421914163, 160.0, 990.0, 0.01, 30.0])
    for upper, name in ((False, "igamma"), (True, "igammac")):
        ours = getattr(rg, name)(rg.tensor(a), rg.tensor(x)).numpy()
        expected = [float(mpmath.gammainc(ai, xi, mpmath.inf, regularized=True) if upper
                          else mpmath.gammainc(ai, 0, xi, regularized=True)) for ai, xi in zip(a, x)]
        _close(ours, np.array(expected), rtol=1e-12)
        _close(ours, getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy(), rtol=1e-7)


def test_igamma_input_gradient_is_not_implemented_as_in_torch(torch: Any) -> None:
    for lib in (rg, torch):
        a = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        results = [outcome(lambda lib=lib, f=f: getattr(lib, f)(a, x).sum().backward()) for f in ("igamma", "igammac")]
        if lib is rg:
            ours = results
        else:
            assert ours == results
            assert results[0][0] == "NotImplementedError"
    # the gradient for x alone: the density x^(a-1) e^-x / Gamma(a), against torch
    grads = []
    for lib in (rg, torch):
        a = lib.tensor([0.5, 1.0, 2.5], dtype=lib.float64)
        x = lib.tensor([0.0, 0.0, 3.0], dtype=lib.float64, requires_grad=True)
        lib.igammac(a, x).sum().backward()
        grads.append(x.grad.numpy())
    _close(grads[0], grads[1], rtol=1e-12)


def test_special_function_float32_and_integer_dtypes(torch: Any) -> None:
    for name in ("lgamma", "digamma", "i0", "sinc", "deg2rad", "rad2deg", "angle", "logit"):
        for values, dtype in (([1, 2, 5], "int64"), ([True, False], "bool"), ([0.25, 3.5], "float32")):
            ours = getattr(rg, name)(rg.tensor(values, dtype=getattr(rg, dtype)))
            theirs = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, dtype)))
            assert str(ours.dtype) == str(theirs.dtype), (name, dtype)
            _close(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert outcome(lambda: rg.igamma(rg.tensor([1]), rg.tensor([2]))) == \
        outcome(lambda: torch.igamma(torch.tensor([1]), torch.tensor([2])))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.polygamma(-1, x), lambda lib, x: lib.polygamma(1.5, x), lambda lib, x: x.mvlgamma(p=0),
    lambda lib, x: x.mvlgamma(p=1.5), lambda lib, x: lib.igamma(x, 2.0), lambda lib, x: lib.frexp(x.long()),
    lambda lib, x: lib.heaviside(x, x.long()), lambda lib, x: lib.gcd(x, x), lambda lib, x: lib.nextafter(x.long(), x.long()),
    lambda lib, x: lib.floor_divide(x.long(), lib.tensor([0, 1, 2])), lambda lib, x: lib.isclose(x, x.float()),
])
def test_errors_match_torch(torch: Any, call: Any) -> None:
    ours = outcome(lambda: call(rg, rg.tensor([0.5, 1.5, 2.5], dtype=rg.float64)))
    theirs = outcome(lambda: call(torch, torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64)))
    assert ours == theirs and ours[0] != "ok"


def _grads(lib: Any, fn: Any, *values: Any) -> list[np.ndarray]:
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    fn(lib, *leaves).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


@pytest.mark.parametrize("fn, values", [
    # xlogy: 0 where x == 0 for the x gradient (even at y = 0), inf/NaN from y = 0 as PyTorch
    (lambda lib, x, y: lib.xlogy(x, y), ([0.0, 0.0, 2.0, 0.0, 1.0], [0.0, 3.0, 0.0, np.nan, np.inf])),
    (lambda lib, x: lib.xlogy(x, 0.0), ([0.0, 1.0],)),
    (lambda lib, y: lib.xlogy(0.0, y), ([0.0, 2.0],)),
    (lambda lib, x: lib.sinc(x), ([0.0, -0.0, 1.0, 1e-20, np.inf],)),
    (lambda lib, x: lib.logit(x), ([0.0, 1.0, -0.5, 1.5, 0.5],)),
    (lambda lib, x: lib.logit(x, 0.25), ([0.0, 0.25, 0.75, 1.0, 0.5],)),
    (lambda lib, x, y: lib.copysign(x, y), ([0.0, -0.0, 2.0, -3.0], [-1.0, 1.0, -0.0, np.nan])),
    (lambda lib, x, y: lib.fmax(x, y) + lib.fmin(x, y), ([1.0, 2.0, np.nan, 1.0], [1.0, np.nan, 1.0, 3.0])),
    (lambda lib, x: lib.lgamma(x) + lib.digamma(x), ([0.0, -1.0, 1.0, 2.0],)),
    (lambda lib, x: lib.i0(x), ([0.0, -0.0, 30.5, -40.0],)),
    (lambda lib, x: lib.special_i1(x) if lib is not rg else _i1(x), ([0.0, 1e-20, 2.0, -35.0],)),
    (lambda lib, x, y: lib.ldexp(x, y), ([1.5, -2.0], [3.0, -1.0])),
    (lambda lib, x: lib.frexp(x).mantissa, ([0.0, 3.0, -0.75, np.inf],)),
    (lambda lib, x, y: lib.nextafter(x, y), ([1.0, 0.0], [2.0, -1.0])),
])
def test_boundary_gradients_match_torch(torch: Any, fn: Any, values: tuple[list[float], ...]) -> None:
    lib_torch = torch if fn.__code__.co_names.count("special_i1") == 0 else torch.special
    ours = _grads(rg, fn, *values)
    theirs = _grads(lib_torch if lib_torch is not torch.special else _SpecialShim(torch), fn, *values)
    for g, h in zip(ours, theirs, strict=True):
        _close(g, h, rtol=1e-12)


class _SpecialShim:
    """torch with ``special_i1`` (torch.special.i1), to run one lambda on both libraries."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch

    def __getattr__(self, name: str) -> Any:
        return self._torch.special.i1 if name == "special_i1" else getattr(self._torch, name)


def _i1(x: Any) -> Any:
    from retrograd.ops import elementwise as E
    from retrograd.ops.op import apply

    return apply(E.special_i1, (x,))


def test_ldexp_integer_exponent_gradient_is_torch_s(torch: Any) -> None:
    # PyTorch's input gradient is grad * 2 ** other in integer arithmetic: 0 for a negative exponent.
    grads = []
    for lib in (rg, torch):
        x = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        lib.ldexp(x, lib.tensor([-2, 3])).sum().backward()
        grads.append(x.grad.numpy())
    _close(grads[0], grads[1], rtol=0)


def test_gradients_of_gradients_at_boundaries(torch: Any) -> None:
    results = []
    for lib in (rg, torch):
        x = lib.tensor([0.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
        out = (lib.sinc(x) + lib.xlogy(x, y) + lib.i0(x) + lib.lgamma(y)).sum()
        (gx, gy) = lib.autograd.grad(out, (x, y), create_graph=True)
        (hx, hy) = lib.autograd.grad((gx * gx).sum() + gy.sum(), (x, y))
        results.append([g.detach().numpy() for g in (gx, gy, hx, hy)])
    for g, h in zip(*results, strict=True):
        _close(g, h, rtol=1e-10)


# -- integer, bitwise and shift ops: dtypes and errors ------------------------------------------
_INT_CASES = [
    ("bitwise_and", [12, -5, 7], [10, 3, -1]), ("bitwise_or", [12, -5, 7], [10, 3, -1]),
    ("bitwise_xor", [12, -5, 7], [10, 3, -1]), ("gcd", [12, -18, 0], [8, 12, 0]), ("lcm", [4, -6, 0], [6, 4, 3]),
    ("bitwise_left_shift", [1, -3, 5], [0, 63, 64]), ("bitwise_right_shift", [-8, 8, -1], [70, 1, -1]),
    ("floor_divide", [7, -7, 5], [2, 2, -3]), ("logical_xor", [0, 2, 3], [1, 0, 5]),
]


@pytest.mark.parametrize("name, a, b", _INT_CASES)
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int8", "int16"), ("uint8", "uint8"), ("bool", "bool"),
                                    ("int32", "float32"), ("float64", "float64")])
def test_integer_ops_dtypes_values_and_errors(torch: Any, name: str, a: list[int], b: list[int],
                                              dtypes: tuple[str, str]) -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(a).to(getattr(lib, dtypes[0]))
        y = lib.tensor(b).to(getattr(lib, dtypes[1]))
        return getattr(lib, name)(x, y)

    ours, theirs = outcome(lambda: run(rg)), outcome(lambda: run(torch))
    assert ours == theirs
    if ours[0] == "ok":
        r, t = run(rg), run(torch)
        assert str(r.dtype) == str(t.dtype)
        assert r.tolist() == t.tolist()


@pytest.mark.parametrize("op", ["__and__", "__or__", "__xor__", "__lshift__", "__rshift__"])
@pytest.mark.parametrize("other", [1, 2.5, True, "tensor"])
def test_operators_follow_torch(torch: Any, op: str, other: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([5, -6, 3])
        return getattr(x, op)(x if other == "tensor" else other)

    ours, theirs = outcome(lambda: run(rg)), outcome(lambda: run(torch))
    assert ours == theirs
    if ours[0] == "ok":
        assert run(rg).tolist() == run(torch).tolist() and str(run(rg).dtype) == str(run(torch).dtype)
    for lib in (rg, torch):  # floats are refused
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            getattr(lib.tensor([1.0]), op)(lib.tensor([1.0]))


def test_predicates_match_torch(torch: Any) -> None:
    values = [1.5, np.nan, np.inf, -np.inf, -0.0, 0.0]
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"):
        for dtype in ("float32", "float64"):
            assert getattr(rg.tensor(values, dtype=getattr(rg, dtype)), name)().tolist() == \
                getattr(torch.tensor(values, dtype=getattr(torch, dtype)), name)().tolist(), name
        assert getattr(rg, name)(rg.tensor([1, -2])).tolist() == getattr(torch, name)(torch.tensor([1, -2])).tolist()
    x = [1.0, 2.0, np.nan]
    y = [1.0 + 1e-7, 2.1, np.nan]
    assert rg.tensor(x).isclose(rg.tensor(y), equal_nan=True).tolist() == \
        torch.tensor(x).isclose(torch.tensor(y), equal_nan=True).tolist()


# -- in-place forms and aliases -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lt_", "le_", "gt_", "ge_", "less_", "less_equal_", "greater_", "greater_equal_"])
@pytest.mark.parametrize("other", [0.5, "tensor"])
def test_inplace_comparisons_keep_dtype_and_record_torch_s_node(torch: Any, name: str, other: Any) -> None:
    results = []
    for lib in (rg, torch):
        x = lib.tensor([0.25, 0.5, 1.0], requires_grad=True)
        o = lib.tensor([0.5, 0.5, 0.5], requires_grad=True) if other == "tensor" else other
        y = x * 1
        assert getattr(y, name)(o) is y
        y.sum().backward()
        results.append((y.tolist(), str(y.dtype), type(y.grad_fn).__name__, x.grad.tolist()))
        ints = lib.tensor([0, 1, 2])
        getattr(ints, name)(1)
        results.append(ints.tolist())
    assert results[:2] == results[2:]


@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "sqrt_", "abs_", "neg_", "clamp_min_", "fill_", "zero_", "fix_",
                                  "logit_", "i0_", "xlogy_", "deg2rad_", "square_", "nan_to_num_"])
def test_torch_inplace_functions_write_in_place(torch: Any, name: str) -> None:
    args = {"clamp_min_": (0.3,), "fill_": (2.0,), "xlogy_": (3.0,)}.get(name, ())
    results = []
    for lib in (rg, torch):
        x = lib.tensor([0.25, 0.5, 0.75], dtype=lib.float64)
        assert getattr(lib, name)(x, *args) is x
        results.append(x.tolist())
    _close(np.array(results[0]), np.array(results[1]), rtol=1e-12)


def test_aliases_and_new_methods_exist_as_in_torch(torch: Any) -> None:
    for name in ("not_equal", "greater_equal", "less_equal", "greater", "less"):
        if hasattr(torch.Tensor, name) and name not in ("not_equal",):
            assert hasattr(rg.Tensor, name), name
    x, y = rg.tensor([1.0, 2.0]), rg.tensor([2.0, 1.0])
    assert x.maximum(y).tolist() == [2.0, 2.0] and x.minimum(y).tolist() == [1.0, 1.0]
    assert (x * 1).multiply_(y).tolist() == [2.0, 2.0] and (x * 1).negative_().tolist() == [-1.0, -2.0]
    assert (x * -1).absolute_().tolist() == [1.0, 2.0]
    assert outcome(lambda: x.maximum(2)) == outcome(lambda: torch.tensor([1.0, 2.0]).maximum(2))
    assert rg.fill(x, 3).tolist() == torch.fill(torch.tensor([1.0, 2.0]), 3).tolist()
