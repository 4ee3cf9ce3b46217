"""``float_power`` against real PyTorch: the result dtype is float64, or complex128 when either
operand is complex (a tensor of any dtype or a Python number, on either side); ``float_power_``
accepts only a base already of that dtype, with PyTorch's message otherwise; gradients of complex
operands (including the exponent's, through ``pow``'s exponent rule) are PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome_and_value

TENSORS = {
    "int64": lambda L: L.tensor([2, 3]),
    "bool": lambda L: L.tensor([True, False]),
    "float16": lambda L: L.tensor([2.0, 3.0], dtype=L.float16),
    "float32": lambda L: L.tensor([2.0, 3.0]),
    "float64": lambda L: L.tensor([2.0, 3.0], dtype=L.float64),
    "complex64": lambda L: L.tensor([1 + 2j, 3 - 1j], dtype=L.complex64),
    "complex128": lambda L: L.tensor([1 + 2j, 3 - 1j], dtype=L.complex128),
}
NUMBERS = {"int": 2, "float": 0.5, "complex": 1 + 1j, "bool": True}

CASES: list[tuple[str, Any]] = []
for a in TENSORS:
    for b in TENSORS:
        CASES.append((f"{a}**{b}", lambda L, a=a, b=b: L.float_power(TENSORS[a](L), TENSORS[b](L))))
        CASES.append((f"{a}.float_power_({b})", lambda L, a=a, b=b: TENSORS[a](L).float_power_(TENSORS[b](L))))
    for n in NUMBERS:
        CASES.append((f"{a}**{n}", lambda L, a=a, n=n: L.float_power(TENSORS[a](L), NUMBERS[n])))
        CASES.append((f"{n}**{a}", lambda L, a=a, n=n: L.float_power(NUMBERS[n], TENSORS[a](L))))
        CASES.append((f"{a}.float_power_({n})", lambda L, a=a, n=n: TENSORS[a](L).float_power_(NUMBERS[n])))


def _result(lib: Any, call: Any) -> tuple[Any, ...]:
    raised, value = outcome_and_value(lambda: call(lib))
    if value is None:
        return (raised,)
    return raised, str(value.dtype), value.numpy()


@pytest.mark.parametrize(("label", "call"), CASES, ids=[c[0] for c in CASES])
def test_dtype_values_and_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    ours, theirs = _result(rg, call), _result(torch, call)
    assert ours[:2] == theirs[:2]
    if len(ours) == 3:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def _gradients(lib: Any, base: Any, exponent: Any) -> list[Any]:
    x = lib.tensor(base, requires_grad=True) if isinstance(base, np.ndarray) else base
    e = lib.tensor(exponent, requires_grad=True) if isinstance(exponent, np.ndarray) else exponent
    out = lib.float_power(x, e)
    out.backward(lib.tensor(np.array([1 - 0.5j, 2 + 1j, -1 + 0.25j])))
    return [out.detach().numpy()] + [t.grad.numpy() for t in (x, e) if not isinstance(t, (int, float, complex))]


RNG = np.random.default_rng(0)
Z = RNG.normal(size=3) + 1j * RNG.normal(size=3)
R = RNG.uniform(0.5, 2.0, size=3)
GRAD_CASES = {
    "complex**complex": (Z, 0.3 * Z[::-1].copy()),
    "real**complex": (R, 0.3 * Z),
    "complex**real": (Z.astype(np.complex64), R.astype(np.float32)),
    "complex**number": (Z, 0.5 + 1j),
    "number**complex": (0.5 + 1j, Z),
}


@pytest.mark.parametrize("label", GRAD_CASES)
def test_complex_gradients_match_torch(torch: Any, label: str) -> None:
    base, exponent = GRAD_CASES[label]
    ours, theirs = _gradients(rg, base, exponent), _gradients(torch, base, exponent)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_complex_float_power_passes_gradcheck() -> None:
    x = rg.tensor(Z, requires_grad=True)
    e = rg.tensor(0.3 * Z[::-1].copy(), requires_grad=True)
    assert rg.autograd.gradcheck(rg.float_power, (x, e))
    assert rg.autograd.gradgradcheck(rg.float_power, (x, e))
