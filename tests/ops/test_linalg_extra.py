"""cdist, linalg.solve_triangular, triangular_solve, cholesky_solve and cholesky_inverse against
PyTorch beyond the op database: errors, edge values (zero distances, singular triangles), the
legacy return type and warning, saved attributes, and gradients by gradcheck/gradgradcheck."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _both(torch: Any, fn: Any) -> tuple[Any, Any]:
    return fn(rg), fn(torch)


def _close(mine: Any, ref: Any) -> None:
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)


# -- cdist -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_gradient_at_zero_distance_matches_pytorch(torch: Any, p: float) -> None:
    # Equal rows: distance 0, where the p-norm has no derivative; PyTorch's backward gives 0 there.
    def run(lib: Any) -> Any:
        x1 = lib.tensor([[1.0, 2.0], [0.0, 0.5]], dtype=lib.float64, requires_grad=True)
        x2 = lib.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=lib.float64, requires_grad=True)
        d = lib.cdist(x1, x2, p=p, compute_mode="donot_use_mm_for_euclid_dist")
        d.backward(lib.ones_like(d))
        return d, x1.grad, x2.grad

    for mine, ref in zip(*_both(torch, run)):
        _close(mine, ref)


def test_cdist_matrix_product_path_matches_pytorch(torch: Any) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((30, 3)), rng.standard_normal((4, 3))

    def run(lib: Any) -> Any:
        x1 = lib.tensor(a, requires_grad=True)
        x2 = lib.tensor(b, requires_grad=True)
        d = lib.cdist(x1, x2)  # more than 25 rows: the matrix product
        d.backward(lib.tensor(rng.standard_normal((30, 4)) * 0 + 1))
        return type(d.grad_fn).__name__, type(d.grad_fn.next_functions[0][0]).__name__, d, x1.grad, x2.grad

    mine, ref = _both(torch, run)
    assert mine[:2] == ref[:2] == ("ViewBackward0", "EuclideanDistBackward0")
    for m, r in zip(mine[2:], ref[2:]):
        np.testing.assert_allclose(m.detach().numpy(), r.detach().numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("p", [1.0, 2.0, 0.7, float("inf")])
def test_cdist_gradcheck_and_gradgradcheck(p: float) -> None:
    rng = np.random.default_rng(4)
    x1 = rg.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    x2 = rg.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    fn = lambda a, b: rg.cdist(a, b, p)  # noqa: E731
    assert rg.autograd.gradcheck(fn, (x1, x2))
    assert rg.autograd.gradgradcheck(fn, (x1, x2))


def test_cdist_saved_attributes(torch: Any) -> None:
    def run(lib: Any) -> Any:
        fn = lib.cdist(lib.ones(2, 3, requires_grad=True), lib.zeros(1, 3), 3.0).grad_fn
        return fn._saved_p, fn._saved_result.tolist(), fn._saved_x1.tolist(), fn._saved_x2.tolist()

    assert run(rg) == run(torch)


@pytest.mark.parametrize("case", [
    lambda lib: lib.cdist(lib.ones(3, 4), lib.ones(5, 4), compute_mode="foo"),
    lambda lib: lib.cdist(lib.ones(3, 4), lib.ones(5, 4), compute_mode=None),
    lambda lib: lib.cdist(lib.ones(3, 4), lib.ones(5, 3)),
    lambda lib: lib.cdist(lib.ones(3, 4), lib.ones(5, 4), p=-1),
    lambda lib: lib.cdist(lib.ones(4), lib.ones(5, 4)),
    lambda lib: lib.cdist(lib.ones(3, 4), lib.ones(4)),
    lambda lib: lib.cdist(lib.ones(3, 4, dtype=lib.int64), lib.ones(5, 4, dtype=lib.int64)),
    lambda lib: lib.cdist(lib.ones(3, 4, dtype=lib.float64), lib.ones(5, 4)),
])
def test_cdist_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


# -- triangular solves ---------------------------------------------------------------------------------


def test_solve_triangular_reads_one_triangle_and_a_zero_pivot_gives_inf_as_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([[2.0, 9.0, 9.0], [1.0, 0.0, 9.0], [1.0, 1.0, 1.0]], dtype=lib.float64)
        b = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64)
        return (lib.linalg.solve_triangular(a, b, upper=False), lib.linalg.solve_triangular(a, b, upper=False,
                                                                                          unitriangular=True),
                lib.linalg.solve_triangular(a.tril(), b.mT, upper=False, left=False, unitriangular=True))

    for mine, ref in zip(*_both(torch, run)):
        _close(mine, ref)


def test_triangular_solve_return_type_and_warning_match_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([[2.0, 1.0], [0.0, 4.0]], requires_grad=True)
        b = lib.tensor([[1.0], [2.0]], requires_grad=True)
        out = lib.triangular_solve(b, a)
        (out.solution.sum() + (out.cloned_coefficient * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()).backward()
        return (type(out).__name__, repr(out).split("(")[0], type(out.solution.grad_fn).__name__,
                out.cloned_coefficient.grad_fn is out.solution.grad_fn, out.solution.tolist(),
                out.cloned_coefficient.tolist(), a.grad.tolist(), b.grad.tolist())

    assert run(rg) == run(torch)
    import retrograd.ops.linalg_extra as extra

    extra._WARNED = False
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        rg.triangular_solve(rg.ones(1, 1), rg.ones(1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process, as PyTorch's
        rg.triangular_solve(rg.ones(1, 1), rg.ones(1, 1))


@pytest.mark.parametrize(("upper", "left", "unit"), [(True, True, False), (False, False, True), (False, True, True)])
def test_solve_triangular_gradgradcheck_both_inputs(upper: bool, left: bool, unit: bool) -> None:
    rng = np.random.default_rng(5)
    a = rg.tensor(rng.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3), requires_grad=True)
    b = rg.tensor(rng.uniform(-1, 1, (3, 2) if left else (2, 3)), requires_grad=True)
    fn = lambda a, b: rg.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)  # noqa: E731
    assert rg.autograd.gradcheck(fn, (a, b))
    assert rg.autograd.gradgradcheck(fn, (a, b))


def test_solve_triangular_saved_attributes(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([[2.0, 0.0], [1.0, 1.0]], requires_grad=True)
        fn = lib.linalg.solve_triangular(a, lib.ones(2, 1), upper=False, left=True).grad_fn
        return fn._saved_upper, fn._saved_left, fn._saved_unitriangular, fn._saved_self.tolist(), fn._saved_result.tolist()

    assert run(rg) == run(torch)


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.solve_triangular(lib.ones(3), lib.ones(3, 1), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(2, 3), lib.ones(2, 1), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3), lib.ones(2, 1), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3), lib.ones(3, 2), upper=True, left=False),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3, dtype=lib.int64), lib.ones(3, 1, dtype=lib.int64),
                                            upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 3), lib.ones(3, 1)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(2, 2)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(2, 3)),
    lambda lib: lib.cholesky_solve(lib.ones(3), lib.ones(3, 3)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(3, 3, dtype=lib.float64)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(3)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 1, dtype=lib.int64), lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.cholesky_inverse(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.triangular_solve(lib.ones(3, 1, dtype=lib.float64), lib.ones(3, 3)),
    lambda lib: lib.triangular_solve(lib.ones(3, 1, dtype=lib.int64), lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.triangular_solve(lib.ones(3), lib.ones(3, 3)),
    lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.ones(3)),
    lambda lib: lib.triangular_solve(lib.ones(2, 1), lib.ones(3, 3)),
    lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.ones(2, 3)),
    lambda lib: lib.cholesky_inverse(lib.ones(3)),
    lambda lib: lib.cholesky_inverse(lib.ones(2, 3)),
])
def test_solve_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


# -- Cholesky solves ------------------------------------------------------------------------------------


def test_cholesky_solve_and_inverse_agree_with_the_inverse_of_the_product() -> None:
    # An independent oracle: A = L L^T built explicitly, its inverse by NumPy.
    rng = np.random.default_rng(6)
    low = np.tril(rng.uniform(-1, 1, (3, 3))) + 2 * np.eye(3)
    a_inv = np.linalg.inv(low @ low.T)
    b = rng.standard_normal((3, 2))
    np.testing.assert_allclose(rg.cholesky_solve(rg.tensor(b), rg.tensor(low)).numpy(), a_inv @ b, rtol=1e-10)
    np.testing.assert_allclose(rg.cholesky_solve(rg.tensor(b), rg.tensor(low.T.copy()), upper=True).numpy(),
                               a_inv @ b, rtol=1e-10)
    np.testing.assert_allclose(rg.cholesky_inverse(rg.tensor(low)).numpy(), a_inv, rtol=1e-10)
    np.testing.assert_allclose(rg.tensor(low.T.copy()).cholesky_inverse(upper=True).numpy(), a_inv, rtol=1e-10)


def test_cholesky_saved_attributes(torch: Any) -> None:
    def run(lib: Any) -> Any:
        f = lib.tensor([[2.0, 0.0], [1.0, 1.0]], requires_grad=True)
        s = lib.cholesky_solve(lib.ones(2, 1), f).grad_fn
        i = lib.cholesky_inverse(f, True).grad_fn
        return (s._saved_upper, s._saved_input2.tolist(), s._saved_self.tolist(), s._saved_result.tolist(),
                i._saved_upper, i._saved_self.tolist(), i._saved_result.tolist())

    assert run(rg) == run(torch)


def test_solve_triangular_result_takes_the_dtype_of_a(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([[2.0, 1.0], [0.0, 4.0]])
        b = lib.tensor([[1.0], [2.0]], dtype=lib.float64)
        return (str(lib.linalg.solve_triangular(a, b, upper=True).dtype),
                str(lib.linalg.solve_triangular(a.double(), b.float(), upper=True).dtype))

    assert run(rg) == run(torch)


# -- deprecated spellings: qr, matrix_rank, frobenius_norm, nuclear_norm --------------------------------


def _deprecated(lib: Any) -> Any:
    rng = np.random.default_rng(7)
    a = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    out: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = lib.qr(a)
        out += [type(q).__name__, list(q.Q.shape), list(q.R.shape), type(q.Q.grad_fn).__name__]
        q = lib.qr(a, some=False)
        out += [list(q.Q.shape), list(q.R.shape), type(a.qr()).__name__]
        f = lib.frobenius_norm(a, (0, 1))
        out += [round(f.item(), 12), type(f.grad_fn).__name__, list(lib.frobenius_norm(a, (0, 1), keepdim=True).shape)]
        f.backward()
        out.append(np.round(a.grad.numpy(), 12).tolist())
        a.grad = None
        n = lib.nuclear_norm(a)
        out += [round(n.item(), 12), type(n.grad_fn).__name__, [type(x).__name__ for x, _ in n.grad_fn.next_functions],
                list(lib.nuclear_norm(a, keepdim=True).shape)]
        n.backward()
        out.append(np.round(a.grad.numpy(), 10).tolist())
        b = lib.tensor(rng.standard_normal((2, 3, 4)))
        out += [np.round(lib.nuclear_norm(b).numpy(), 10).tolist(), list(lib.frobenius_norm(b, (1, 2)).shape),
                np.round(lib.nuclear_norm(b, (0, 2)).numpy(), 10).tolist()]
    return out


def test_deprecated_linalg_spellings_match_pytorch(torch: Any) -> None:
    assert _deprecated(rg) == _deprecated(torch)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", [
    lambda lib: lib.matrix_rank(lib.eye(2)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3), (0, 1, 2)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3), (0, 0)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3), (0, -2)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, dtype=lib.int64), (0, 1)),
    lambda lib: lib.nuclear_norm(lib.ones(2, 3), 0),
    lambda lib: lib.nuclear_norm(lib.ones(2, 3), (0, 0)),
])
def test_deprecated_linalg_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


def test_deprecated_spellings_warn_as_pytorch() -> None:
    import retrograd.ops.linalg_extra as extra

    for key, call, text in (("qr", lambda: rg.qr(rg.eye(2)), "torch.qr is deprecated"),
                            ("frobenius_norm", lambda: rg.frobenius_norm(rg.eye(2), (0, 1)), "frobenius_norm is deprec"),
                            ("nuclear_norm", lambda: rg.nuclear_norm(rg.eye(2)), "nuclear_norm is deprecated")):
        extra._WARNED_ONCE.discard(key)
        with pytest.warns(UserWarning, match=text):
            call()


# -- LU -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (4, 3), (3, 4)])
def test_lu_and_lu_unpack_match_pytorch(torch: Any, shape: tuple[int, ...]) -> None:
    data = np.random.default_rng(8).standard_normal(shape)

    def run(lib: Any) -> Any:
        a = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu_, piv = lib.lu(a)
            unpacked = lib.lu_unpack(lu_, piv)
        p, low, up = unpacked
        (low.sum() + (up * up).sum() + (lu_ * 0.5).sum()).backward()
        return (type(unpacked).__name__, piv.tolist(), str(piv.dtype), type(lu_.grad_fn).__name__,
                type(low.grad_fn).__name__, p.grad_fn, [lu_, p, low, up, a.grad])

    mine, ref = _both(torch, run)
    assert mine[:-1] == ref[:-1]
    for m, r in zip(mine[-1], ref[-1]):
        np.testing.assert_allclose(m.detach().numpy(), r.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_lu_solve_matches_pytorch_and_lu_infos(torch: Any) -> None:
    rng = np.random.default_rng(9)
    a_data, b_data = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))

    def run(lib: Any) -> Any:
        a = lib.tensor(a_data, requires_grad=True)
        b = lib.tensor(b_data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu_, piv, info = lib.lu(a, get_infos=True)
            x = lib.lu_solve(b, lu_, piv)
            singular = lib.lu(lib.tensor([[1.0, 2.0], [2.0, 4.0]]), get_infos=True)
        (x * x).sum().backward()
        return (info.tolist(), type(x.grad_fn).__name__, [type(n).__name__ for n, _ in x.grad_fn.next_functions],
                singular[0].tolist(), singular[1].tolist(), singular[2].tolist(), [x, a.grad, b.grad])

    mine, ref = _both(torch, run)
    assert mine[:-1] == ref[:-1]
    for m, r in zip(mine[-1], ref[-1]):
        np.testing.assert_allclose(m.detach().numpy(), r.detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_lu_gradcheck_and_gradgradcheck(shape: tuple[int, ...]) -> None:
    a = rg.tensor(np.random.default_rng(10).standard_normal(shape), requires_grad=True)

    def fn(a: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return rg.lu_unpack(*rg.lu(a))[1:]

    assert rg.autograd.gradcheck(fn, (a,))
    assert rg.autograd.gradgradcheck(fn, (a,))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", [
    lambda lib: lib.lu(lib.ones(3)),
    lambda lib: lib.lu(lib.ones(3, 3), pivot=False),
    lambda lib: lib.lu(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.lu_unpack(lib.ones(3, 3), lib.ones(3, dtype=lib.int64)),
])
def test_lu_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref
