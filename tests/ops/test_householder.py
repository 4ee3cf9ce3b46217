"""``geqrf``, ``orgqr`` / ``linalg.householder_product`` and ``ormqr`` against PyTorch: values,
named tuple, ``grad_fn`` names and gradients for real and complex inputs (every ``left`` /
``transpose``), geqrf's refused backward, the errors, and the QR identities they exist for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _data(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return (a + 1j * rng.standard_normal(shape)) if dtype == "complex128" else a


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_geqrf_and_householder_product_match_torch(torch: Any, dtype: str) -> None:
    a = _data((2, 5, 3), dtype, 0)
    got, want = rg.geqrf(rg.tensor(a)), torch.geqrf(torch.tensor(a))
    assert type(got).__name__ == "geqrf" and got._fields == ("a", "tau")
    np.testing.assert_allclose(got.a.numpy(), want.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(got.tau.numpy(), want.tau.numpy(), atol=1e-12)
    g = _data((2, 5, 3), dtype, 1)
    results = []
    for lib, form in ((rg, "linalg"), (rg, "orgqr"), (rg, "method"), (torch, "linalg")):
        x = lib.tensor(want.a.numpy(), requires_grad=True)
        tau = lib.tensor(want.tau.numpy()[..., :2], requires_grad=True)
        q = {"linalg": lambda: lib.linalg.householder_product(x, tau), "orgqr": lambda: lib.orgqr(x, tau),
             "method": lambda: x.orgqr(tau)}[form]()
        q.backward(lib.tensor(g))
        results.append((q.detach().numpy(), x.grad.numpy(), tau.grad.numpy(), type(q.grad_fn).__name__))
    for got_r in results[:3]:
        assert got_r[3] == results[3][3] == "LinalgHouseholderProductBackward0"
        for u, v in zip(got_r[:3], results[3][:3]):
            np.testing.assert_allclose(u, v, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr_matches_torch(torch: Any, dtype: str, left: bool, transpose: bool) -> None:
    a = torch.geqrf(torch.tensor(_data((2, 5, 3), dtype, 2)))
    c = _data((2, 5, 4) if left else (2, 4, 5), dtype, 3)
    g = _data(c.shape, dtype, 4)
    results = []
    for lib in (rg, torch):
        x = lib.tensor(a.a.numpy(), requires_grad=True)
        tau = lib.tensor(a.tau.numpy(), requires_grad=True)
        other = lib.tensor(c, requires_grad=True)
        y = x.ormqr(tau, other, left=left, transpose=transpose) if lib is rg else lib.ormqr(x, tau, other, left,
                                                                                              transpose)
        y.backward(lib.tensor(g))
        results.append((y.detach().numpy(), x.grad.numpy(), tau.grad.numpy(), other.grad.numpy(),
                        type(y.grad_fn).__name__))
    assert results[0][4] == results[1][4] == "OrmqrBackward0"
    for u, v in zip(results[0][:4], results[1][:4]):
        np.testing.assert_allclose(u, v, atol=1e-12)


def test_complex_gradcheck_and_gradgradcheck() -> None:
    a = rg.tensor(_data((4, 3), "complex128", 5), requires_grad=True)
    tau = rg.tensor(_data((3,), "complex128", 6), requires_grad=True)
    c = rg.tensor(_data((2, 4), "complex128", 7), requires_grad=True)
    assert rg.autograd.gradcheck(rg.linalg.householder_product, (a, tau))
    assert rg.autograd.gradgradcheck(rg.linalg.householder_product, (a, tau))

    def right_adjoint(a: Any, tau: Any, c: Any) -> Any:
        return rg.ormqr(a, tau, c, left=False, transpose=True)

    assert rg.autograd.gradcheck(right_adjoint, (a, tau, c))
    assert rg.autograd.gradgradcheck(right_adjoint, (a, tau, c))


def test_qr_identities() -> None:
    A = rg.tensor(_data((5, 3), "float64", 8))  # noqa: N806
    a, tau = rg.geqrf(A)
    q = rg.linalg.householder_product(a, tau)
    r = a.triu()[:3]
    np.testing.assert_allclose((q @ r).numpy(), A.numpy(), atol=1e-12)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.eye(3), atol=1e-12)
    # Q^T A = R (all 5 rows: zeros below R), without forming Q
    qta = rg.ormqr(a, tau, A, transpose=True).numpy()
    np.testing.assert_allclose(qta[:3], r.numpy(), atol=1e-12)
    np.testing.assert_allclose(qta[3:], 0, atol=1e-12)


def test_geqrf_backward_is_refused_as_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor(_data((3, 3), "float64", 9), requires_grad=True)
        out = lib.geqrf(a)
        assert type(out.a.grad_fn).__name__ == "GeqrfBackward0"
        out.a.sum().backward()

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch)) != ("ok", "")


ERRORS: dict[str, Any] = {
    "geqrf vector": lambda lib: lib.geqrf(lib.ones(3)),
    "geqrf integer": lambda lib: lib.geqrf(lib.ones(3, 3).long()),
    "hp vector": lambda lib: lib.linalg.householder_product(lib.ones(3), lib.ones(1)),
    "hp wide": lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(1)),
    "hp tau too long": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)),
    "hp batch": lambda lib: lib.linalg.householder_product(lib.ones(2, 3, 2), lib.ones(3, 2)),
    "hp dtype": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2).double()),
    "hp integer": lambda lib: lib.linalg.householder_product(lib.ones(3, 2).long(), lib.ones(2).long()),
    "hp 0-d tau": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(())),
    "orgqr wide": lambda lib: lib.orgqr(lib.ones(2, 3), lib.ones(1)),
    "ormqr tau": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(3), lib.ones(3, 2)),
    "ormqr short tau": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(1), lib.ones(3, 4)),
    "ormqr other rows": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(4, 2)),
    "ormqr other cols": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(2, 4), left=False),
    "ormqr vector": lambda lib: lib.ormqr(lib.ones(3), lib.ones(2), lib.ones(2, 4)),
    "ormqr other vector": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(3)),
    "ormqr other dtype": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(3, 2).double()),
    "ormqr tau dtype": lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2).double(), lib.ones(3, 2)),
    "ormqr tau batch": lambda lib: lib.ormqr(lib.ones(2, 3, 2), lib.ones(3, 2), lib.ones(2, 3, 2)),
    "ormqr other batch": lambda lib: lib.ormqr(lib.ones(2, 3, 2), lib.ones(2, 2), lib.ones(3, 3, 2)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(torch: Any, case: str) -> None:
    assert outcome(lambda: ERRORS[case](rg)) == outcome(lambda: ERRORS[case](torch))
