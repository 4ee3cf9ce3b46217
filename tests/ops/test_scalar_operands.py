"""Python numbers as the other operand of arithmetic: values, dtypes and gradients as PyTorch's,
including the numbers the 0-d-array fast path must get right (signed zero, NaN, overflow)."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

SCALARS = [3, 0.1, -2.5, -0.0, 0.0, float("nan"), float("inf"), 1e300, 2**40, 7]
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "radd": lambda t, s: s + t, "rmul": lambda t, s: s * t, "pow": operator.pow,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", OPERATORS)
def test_number_operands_match_pytorch(torch: Any, name: str, dtype: str) -> None:
    values = np.array([-1.5, -0.0, 0.5, 2.0], dtype)
    fn = OPERATORS[name]
    for scalar in SCALARS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = fn(rg.tensor(values), scalar)
            theirs = fn(torch.tensor(values), scalar)
        assert str(ours.dtype) == str(theirs.dtype)
        expected = theirs.numpy()
        np.testing.assert_array_equal(np.signbit(ours.numpy()), np.signbit(expected), err_msg=f"{name} {scalar!r}")
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-6, equal_nan=True, err_msg=f"{name} {scalar!r}")


def test_number_operand_gradients_and_repeated_use(torch: Any) -> None:
    grads = []
    for lib in (rg, torch):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * 0.1
        for _ in range(3):  # the same number again: the cached operand serves every call
            y = (y + 0.1) * 0.1 - 2 / (x * x + 1.0)
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
