"""PyTorch's behaviour where ours differed (issue #8), compared with real PyTorch: the graph a
second-order backward records (node names and edges), and the errors of ops given dtypes they
have no kernel for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _graph(t: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """Every node reachable from ``t.grad_fn``: its class name and its edges' class names."""
    found, stack, seen = [], [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        found.append((type(fn).__name__,
                      tuple((None if n is None else type(n).__name__, nr) for n, nr in fn.next_functions)))
        stack.extend(n for n, _ in fn.next_functions)
    return sorted(found, key=repr)


@pytest.mark.parametrize("exponent", [0.5, 1.5, 2, 3, -1, -0.5, 2.5])
def test_pow_scalar_backward_graph_is_pytorchs(torch: Any, exponent: float) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor([1.5, 2.0, -0.0, 0.0], dtype=lib.float64, requires_grad=True)
        y = x ** exponent
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.ones_like(g))
        return _graph(g), g.detach().numpy().tolist(), gg.numpy().tolist()

    assert repr(run(rg)) == repr(run(torch))  # (repr: nan == nan, -0.0 != 0.0)


def test_pow_tensor_backward_graph_is_pytorchs(torch: Any) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.5, 3.0], dtype=lib.float64, requires_grad=True)
        gx, gy = lib.autograd.grad((x ** y).sum(), (x, y), create_graph=True)
        return _graph(gx), _graph(gy), gx.detach().numpy().tolist(), gy.detach().numpy().tolist()

    assert run(rg) == run(torch)


def test_pow_second_derivatives() -> None:
    x = rg.tensor([0.7, 1.3, 2.0], dtype=rg.float64, requires_grad=True)
    for e in (0.5, 1.5, 3, -1, 2.5):
        assert rg.autograd.gradgradcheck(lambda a, e=e: a ** e, (x,))
    y = rg.tensor([1.5, -2.0, 0.5], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda a, b: a ** b, (x, y))


def _outcome(fn: Any) -> str:
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
        return f"{type(e).__name__}: {e}"
    return f"ok {str(result.dtype).split('.')[-1]}"


# Ops without a complex kernel in PyTorch: each called on complex tensors (``z``, ``w``), a real
# tensor ``r`` with a complex one (promoted to complex), and in place.
_REAL_ONLY: dict[str, Any] = {
    "floor": lambda L, z, w, r: z.floor(), "ceil_": lambda L, z, w, r: z.clone().ceil_(),
    "trunc": lambda L, z, w, r: L.trunc(z), "fix": lambda L, z, w, r: L.fix(z),
    "round": lambda L, z, w, r: L.round(z), "round_": lambda L, z, w, r: z.clone().round_(),
    "sign": lambda L, z, w, r: L.sign(z), "sign_": lambda L, z, w, r: z.clone().sign_(),
    "sgn": lambda L, z, w, r: L.sgn(z), "signbit": lambda L, z, w, r: L.signbit(z),
    "erf": lambda L, z, w, r: L.erf(z), "erfc_": lambda L, z, w, r: z.clone().erfc_(),
    "erfinv": lambda L, z, w, r: z.erfinv(),
    "lgamma": lambda L, z, w, r: L.lgamma(z), "digamma": lambda L, z, w, r: z.digamma(),
    "polygamma0": lambda L, z, w, r: L.polygamma(0, z), "polygamma1": lambda L, z, w, r: L.polygamma(1, z),
    "polygamma3": lambda L, z, w, r: L.polygamma(3, z), "mvlgamma": lambda L, z, w, r: L.mvlgamma(z, 2),
    "i0": lambda L, z, w, r: L.i0(z), "logit": lambda L, z, w, r: L.logit(z, 0.1),
    "deg2rad": lambda L, z, w, r: L.deg2rad(z), "rad2deg_": lambda L, z, w, r: z.clone().rad2deg_(),
    "isposinf": lambda L, z, w, r: L.isposinf(z), "isneginf": lambda L, z, w, r: L.isneginf(z),
    "relu": lambda L, z, w, r: L.relu(z), "relu_": lambda L, z, w, r: z.clone().relu_(),
    "bitwise_not": lambda L, z, w, r: L.bitwise_not(z),
    "remainder": lambda L, z, w, r: L.remainder(z, w), "remainder_real": lambda L, z, w, r: L.remainder(r, w),
    "remainder_scalar": lambda L, z, w, r: L.remainder(z, 2), "remainder_number": lambda L, z, w, r: L.remainder(2, z),
    "fmod": lambda L, z, w, r: L.fmod(z, w), "fmod_scalar": lambda L, z, w, r: z.fmod(2.5),
    "fmod_": lambda L, z, w, r: z.clone().fmod_(w),
    "atan2": lambda L, z, w, r: L.atan2(z, w), "atan2_real": lambda L, z, w, r: L.atan2(r, w),
    "hypot": lambda L, z, w, r: L.hypot(z, w), "copysign": lambda L, z, w, r: L.copysign(z, w),
    "copysign_scalar": lambda L, z, w, r: L.copysign(z, -1.0), "logaddexp2": lambda L, z, w, r: L.logaddexp2(z, w),
    "floor_divide": lambda L, z, w, r: L.floor_divide(z, w), "floor_divide_scalar": lambda L, z, w, r: z // 2,
    "div_floor": lambda L, z, w, r: L.div(z, w, rounding_mode="floor"),
    "div_trunc": lambda L, z, w, r: L.div(z, w, rounding_mode="trunc"),
    "div_none": lambda L, z, w, r: L.div(z, w, rounding_mode=None),
    "xlogy": lambda L, z, w, r: L.xlogy(z, w), "xlogy_scalar": lambda L, z, w, r: L.xlogy(z, 2.0),
    "xlogy_number": lambda L, z, w, r: L.xlogy(2.0, z), "xlogy_real": lambda L, z, w, r: L.xlogy(r, w),
    "heaviside": lambda L, z, w, r: L.heaviside(z, w),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_REAL_ONLY))
def test_ops_without_complex_kernels_raise_pytorchs_error(torch: Any, name: str, dtype: str) -> None:
    def outcome(lib: Any) -> str:
        z = lib.tensor([1.5 + 2j, -3 - 1j, 0j], dtype=getattr(lib, dtype))
        w = lib.tensor([0.5 + 1j, 2 + 0j, -1j], dtype=getattr(lib, dtype))
        r = lib.tensor([1.5, -2.0, 0.25], dtype=lib.float64 if dtype == "complex128" else lib.float32)
        return _outcome(lambda: _REAL_ONLY[name](lib, z, w, r))

    assert outcome(rg) == outcome(torch)


_FLOAT_BITWISE = {
    "bitwise_or": lambda L, a, b: a.bitwise_or(b), "gcd": lambda L, a, b: L.gcd(a, b), "lcm": lambda L, a, b: L.lcm(a, b),
    "lshift": lambda L, a, b: a << b, "rshift": lambda L, a, b: L.bitwise_right_shift(a, b),
    "and": lambda L, a, b: a & b,
}


@pytest.mark.parametrize("shape", [(3,), (1,)], ids=["mismatched", "broadcast"])
@pytest.mark.parametrize("name", sorted(_FLOAT_BITWISE))
def test_integer_only_ops_check_shapes_before_the_dtype(torch: Any, name: str, shape: tuple[int, ...]) -> None:
    def outcome(lib: Any) -> str:
        return _outcome(lambda: _FLOAT_BITWISE[name](lib, lib.ones(4), lib.ones(shape)))

    assert outcome(rg) == outcome(torch)


@pytest.mark.parametrize("value", [True, False, 1, 0, 1.0, None, "yes", np.True_], ids=repr)
def test_requires_grad_takes_only_a_bool(torch: Any, value: Any) -> None:
    def outcome(lib: Any) -> tuple[str, str]:
        def method() -> Any:
            return lib.ones(2).requires_grad_(value)

        def attribute() -> Any:
            t = lib.ones(2)
            t.requires_grad = value
            return t

        return _outcome(method), _outcome(attribute)

    assert outcome(rg) == outcome(torch)


def _cross_out_cases(lib: Any) -> list[Any]:
    a = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    b = lib.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]])
    return [
        lambda: lib.linalg.cross(a, b, out=lib.empty(2, 3)),
        lambda: lib.linalg.cross(a, b, out=lib.empty(0)),
        lambda: lib.linalg.cross(a, b, out=lib.empty(3, 2).t()),  # (written through its strides)
        lambda: lib.linalg.cross(a, b, dim=0, out=lib.empty(2, 3)),
        lambda: lib.linalg.cross(a, b, out=lib.empty(2, 3, dtype=lib.float64)),
        lambda: lib.linalg.cross(a, b.double(), out=lib.empty(2, 3, dtype=lib.float64)),
        lambda: lib.linalg.cross(a.clone().requires_grad_(), b, out=lib.empty(2, 3)),
        lambda: lib.linalg.cross(a, b, out=lib.empty(2, 3, requires_grad=True)),
        lambda: lib.linalg.cross(a, b, out=3),
    ]


def test_linalg_cross_writes_out_as_pytorch(torch: Any) -> None:
    import warnings

    def run(lib: Any) -> list[Any]:
        results = []
        for case in _cross_out_cases(lib):
            try:
                out = case()
            except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
                results.append(f"{type(e).__name__}: {e}")
            else:
                results.append((out.tolist(), str(out.dtype), out.requires_grad, out.grad_fn))
        out = lib.empty(1)
        version = out._version
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = lib.linalg.cross(lib.ones(3), lib.tensor([0.0, 1.0, 0.0]), out=out)
        with lib.no_grad():
            lib.linalg.cross(lib.ones(3, requires_grad=True), lib.ones(3), out=out)
        results.append((result is out, out.tolist(), out._version - version,
                        [str(w.message).split(" (Triggered")[0] for w in caught]))
        return results

    assert run(rg) == run(torch)
