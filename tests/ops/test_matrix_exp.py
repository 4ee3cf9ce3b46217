"""``linalg.matrix_exp`` / ``matrix_exp`` / ``Tensor.matrix_exp``: the three forms, complex inputs
(forward and the conjugate-transposed backward), large norms, errors, against PyTorch and gradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _complex(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_matrix_exp_matches_torch_for_each_dtype(torch: Any, dtype: str) -> None:
    a = _complex(np.random.default_rng(0), 2, 4, 4) * 3
    a = (a if dtype.startswith("complex") else a.real).astype(dtype)
    want = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    for form in (rg.linalg.matrix_exp, rg.matrix_exp, rg.Tensor.matrix_exp):
        got = form(rg.tensor(a)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_matrix_exp_large_norm_matches_torch(torch: Any) -> None:
    a = np.random.default_rng(1).standard_normal((5, 5)) * 10
    want = torch.matrix_exp(torch.tensor(a)).numpy()
    np.testing.assert_allclose(rg.matrix_exp(rg.tensor(a)).numpy(), want, rtol=1e-10)


def test_matrix_exp_complex_gradient_matches_torch(torch: Any) -> None:
    rng = np.random.default_rng(2)
    a, g = _complex(rng, 2, 3, 3), _complex(rng, 2, 3, 3)
    x, y = torch.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
    out_t, out_r = torch.linalg.matrix_exp(x), rg.linalg.matrix_exp(y)
    assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__ == "LinalgMatrixExpBackward0"
    out_t.backward(torch.tensor(g))
    out_r.backward(rg.tensor(g))
    np.testing.assert_allclose(y.grad.numpy(), x.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_matrix_exp_complex_gradcheck_and_gradgradcheck() -> None:
    a = rg.tensor(_complex(np.random.default_rng(3), 3, 3) * 0.7, requires_grad=True)
    assert rg.autograd.gradcheck(rg.linalg.matrix_exp, (a,))
    assert rg.autograd.gradgradcheck(rg.linalg.matrix_exp, (a,))


def test_matrix_exp_of_a_rotation_generator_is_a_rotation() -> None:
    # exp([[0, t], [-t, 0]]) = [[cos t, sin t], [-sin t, cos t]]; exp(i*t*I) = e^{it} I
    t = 0.9
    got = rg.linalg.matrix_exp(rg.tensor([[0.0, t], [-t, 0.0]], dtype=rg.float64)).numpy()
    np.testing.assert_allclose(got, [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]], rtol=1e-14)
    got_c = rg.linalg.matrix_exp(rg.tensor(np.eye(2) * 1j * t)).numpy()
    np.testing.assert_allclose(got_c, np.eye(2) * np.exp(1j * t), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("case", ["int", "bool", "vector", "not square", "list"])
def test_linalg_matrix_exp_errors_match_torch(torch: Any, case: str) -> None:
    def call(lib: Any) -> Any:
        arg = {"int": lambda: lib.ones(2, 2, dtype=lib.int64), "bool": lambda: lib.ones(2, 2, dtype=lib.bool),
               "vector": lambda: lib.ones(3), "not square": lambda: lib.ones(2, 3),
               "list": lambda: [[1.0]]}[case]()
        return lib.linalg.matrix_exp(arg)

    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
