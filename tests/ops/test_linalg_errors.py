"""Linear-algebra ops reject bad input with PyTorch's exception type and message; plus the behaviour the
op database cannot check against PyTorch (det's gradient at singular matrices, non-differentiable QR modes).

Each error case runs on retrograd; with PyTorch installed the same case also runs on torch, so the expected
message is checked to be PyTorch's own.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _m(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float64)


def _f(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float32)


def _t(lib: Any, values: Any) -> Any:
    return lib.tensor(values, dtype=lib.float64)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]

CASES: list[tuple[str, Callable[[Any], Any], type, str]] = [
    # products
    ("bmm 2-d", lambda lib: lib.bmm(_m(lib, 2, 3), _m(lib, 2, 3, 4)), RuntimeError, "batch1 must be a 3D tensor"),
    ("bmm sizes", lambda lib: lib.bmm(_m(lib, 2, 2, 3), _m(lib, 2, 4, 4)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    ("bmm batch", lambda lib: lib.bmm(_m(lib, 2, 2, 3), _m(lib, 3, 3, 4)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    ("dot dtype", lambda lib: lib.dot(_m(lib, 3), _f(lib, 3)), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Double and Float"),
    ("vdot sizes", lambda lib: lib.vdot(_m(lib, 3), _m(lib, 4)), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 "
     "elements respectively"),
    ("vdot 2-d", lambda lib: lib.vdot(_m(lib, 3, 1), _m(lib, 3)), RuntimeError,
     "1D tensors expected, but got 2D and 1D tensors"),
    ("vdot dtype", lambda lib: lib.vdot(_m(lib, 3), _f(lib, 3)), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Double and Float"),
    ("mv dtype", lambda lib: lib.mv(_f(lib, 2, 3), _m(lib, 3)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
    ("outer 2-d self", lambda lib: lib.outer(_m(lib, 3, 1), _m(lib, 3)), RuntimeError,
     "outer: Expected 1-D argument self, but got 2-D"),
    ("outer 2-d vec2", lambda lib: lib.outer(_m(lib, 3), _m(lib, 3, 2)), RuntimeError,
     "outer: Expected 1-D argument vec2, but got 2-D"),
    ("inner sizes", lambda lib: lib.inner(_m(lib, 2, 3), _m(lib, 2)), RuntimeError,
     "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [2]"),
    ("inner dtype", lambda lib: lib.inner(_m(lib, 2), _f(lib, 2)), RuntimeError, "both inputs should have same dtype"),
    ("tensordot sizes", lambda lib: lib.tensordot(_m(lib, 2, 3), _m(lib, 4, 5), dims=1), RuntimeError,
     "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 in dim 0"),
    ("tensordot negative", lambda lib: lib.tensordot(_m(lib, 2, 3), _m(lib, 4, 5), dims=-1), RuntimeError,
     "tensordot expects dims >= 0, but got dims=-1"),
    ("tensordot lists", lambda lib: lib.tensordot(_m(lib, 2, 3), _m(lib, 3, 5), dims=([1, 0], [0])), RuntimeError,
     "both dimension lists should have same length"),
    ("einsum sizes", lambda lib: lib.einsum("ij,jk->ik", _m(lib, 2, 3), _m(lib, 4, 4)), RuntimeError,
     "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    ("einsum operands", lambda lib: lib.einsum("ij,jk->ik", _m(lib, 2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    ("einsum output", lambda lib: lib.einsum("ij->ik", _m(lib, 2, 3)), RuntimeError,
     "einsum(): output subscript k does not appear in the equation for any input operand"),
    ("einsum dims", lambda lib: lib.einsum("ijk", _m(lib, 2, 3)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
     "operand 0 and no ellipsis was given"),
    ("einsum dtype", lambda lib: lib.einsum("i,i", _m(lib, 2), _f(lib, 2)), RuntimeError,
     "expected scalar type Double but found Float"),
    ("addmm mat1", lambda lib: lib.addmm(_m(lib, 2, 4), _m(lib, 3), _m(lib, 3, 4)), RuntimeError,
     "mat1 must be a matrix, got 1-D tensor"),
    ("addmm shapes", lambda lib: lib.addmm(_m(lib, 2, 4), _m(lib, 2, 3), _m(lib, 2, 4)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)"),
    ("addmm input", lambda lib: lib.addmm(_m(lib, 3), _m(lib, 2, 3), _m(lib, 3, 4)), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target "
     "sizes: [2, 4].  Tensor sizes: [3]"),
    ("addmm dtype", lambda lib: lib.addmm(_f(lib, 2, 4), _m(lib, 2, 3), _m(lib, 3, 4)), RuntimeError,
     "self and mat2 must have the same dtype, but got Float and Double"),
    ("addmm mat dtypes", lambda lib: lib.addmm(_m(lib, 2, 4), _f(lib, 2, 3), _m(lib, 3, 4)), RuntimeError,
     "mat1 and mat2 must have the same dtype, but got Float and Double"),
    ("addmv sizes", lambda lib: lib.addmv(_m(lib, 3), _m(lib, 2, 3), _m(lib, 3)), RuntimeError,
     "size mismatch, got input (3), mat (2x3), vec (3)"),
    ("addmv vec", lambda lib: lib.addmv(_m(lib, 2), _m(lib, 2, 3), _m(lib, 3, 1)), RuntimeError,
     "vector + matrix @ vector expected, got 1, 2, 2"),
    ("addmv dtype", lambda lib: lib.addmv(_f(lib, 2), _m(lib, 2, 3), _m(lib, 3)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Float, Double, and Double"),
    ("baddbmm sizes", lambda lib: lib.baddbmm(_m(lib, 2, 2, 4), _m(lib, 2, 2, 3), _m(lib, 2, 2, 4)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2]."),
    ("baddbmm input", lambda lib: lib.baddbmm(_m(lib, 3, 4), _m(lib, 2, 2, 3), _m(lib, 2, 3, 4)), RuntimeError,
     "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  Target "
     "sizes: [2, 2, 4].  Tensor sizes: [3, 4]"),
    ("baddbmm dtype", lambda lib: lib.baddbmm(_f(lib, 2, 2, 4), _m(lib, 2, 2, 3), _m(lib, 2, 3, 4)), RuntimeError,
     "Input dtypes must be the same, got: input float, batch1: double, batch2: double"),
    ("trace 3-d", lambda lib: lib.trace(_m(lib, 2, 3, 3)), RuntimeError,
     "trace: expected a matrix, but got tensor with dim 3"),
    ("trace bool", lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)), NotImplementedError,
     "\"trace\" not implemented for 'Bool'"),
    # torch.linalg
    ("inv not square", lambda lib: lib.linalg.inv(_m(lib, 2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("inv 1-d", lambda lib: lib.linalg.inv(_m(lib, 3)), RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("inv int", lambda lib: lib.linalg.inv(lib.tensor([[1, 2], [3, 4]])), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("inv half", lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.float16)), RuntimeError,
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    ("inv singular", lambda lib: lib.linalg.inv(_t(lib, SINGULAR)), RuntimeError,
     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
     "singular."),
    ("inv singular batch", lambda lib: lib.linalg.inv(lib.stack([lib.eye(3, dtype=lib.float64),
                                                               lib.zeros(3, 3, dtype=lib.float64)])), RuntimeError,
     "linalg.inv: (Batch element 1): The diagonal element 1 is zero, the inversion could not be completed because "
     "the input matrix is singular."),
    ("det not square", lambda lib: lib.linalg.det(_m(lib, 2, 3)), RuntimeError,
     "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("det 1-d", lambda lib: lib.det(_m(lib, 3)), RuntimeError,
     "linalg.det: The input tensor A must have at least 2 dimensions."),
    ("det int", lambda lib: lib.linalg.det(lib.ones(2, 3, 3, dtype=lib.int32)), RuntimeError,
     "linalg.det: Expected a floating point or complex tensor as input. Got Int"),
    ("slogdet not square", lambda lib: lib.linalg.slogdet(_m(lib, 2, 3)), RuntimeError,
     "linalg.slogdet: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("solve shapes", lambda lib: lib.linalg.solve(_m(lib, 3, 3), _m(lib, 2, 2)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x2)"),
    ("solve left=False vector", lambda lib: lib.linalg.solve(_m(lib, 3, 3), _m(lib, 3), left=False), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x1)"),
    ("solve left=False 1x1 vector", lambda lib: lib.linalg.solve(_m(lib, 1, 1), _m(lib, 1), left=False), RuntimeError,
     "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
     "linalg.solve is equivalent to B / A.squeeze(-1)"),
    ("solve batch", lambda lib: lib.linalg.solve(lib.eye(3, dtype=lib.float64).expand(2, 3, 3), _m(lib, 4, 3, 2)),
     RuntimeError, "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("solve not a vector batch", lambda lib: lib.linalg.solve(_m(lib, 2, 3, 3), _m(lib, 4, 3)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x3)"),
    ("solve dtype", lambda lib: lib.linalg.solve(_m(lib, 3, 3), _f(lib, 3)), RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of type Float instead"),
    ("solve not square", lambda lib: lib.linalg.solve(_m(lib, 2, 3), _m(lib, 2)), RuntimeError,
     "linalg.solve: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("solve singular", lambda lib: lib.linalg.solve(lib.zeros(3, 3, dtype=lib.float64), _m(lib, 3)), RuntimeError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    ("solve singular batch", lambda lib: lib.linalg.solve(lib.zeros(2, 3, 3, dtype=lib.float64), _m(lib, 3)),
     RuntimeError, "torch.linalg.solve: (Batch element 0): The solver failed because the input matrix is singular."),
    ("cholesky not PD", lambda lib: lib.linalg.cholesky(-lib.eye(3, dtype=lib.float64)), RuntimeError,
     "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
     "leading minor of order 1 is not positive-definite)."),
    ("cholesky minor 2", lambda lib: lib.linalg.cholesky(_t(lib, [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])),
     RuntimeError, "linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    ("cholesky batch", lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2, dtype=lib.float64),
                                                                 -lib.eye(2, dtype=lib.float64)])), RuntimeError,
     "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 1 is not positive-definite)."),
    ("cholesky not square", lambda lib: lib.linalg.cholesky(_m(lib, 2, 3)), RuntimeError,
     "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("qr 1-d", lambda lib: lib.linalg.qr(_m(lib, 3)), RuntimeError,
     "linalg.qr: The input tensor A must have at least 2 dimensions."),
    ("qr mode", lambda lib: lib.linalg.qr(_m(lib, 3, 3), mode="x"), RuntimeError,
     "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"),
    ("svd 1-d", lambda lib: lib.linalg.svd(_m(lib, 3)), RuntimeError,
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    ("svd int", lambda lib: lib.linalg.svd(lib.ones(3, 3, dtype=lib.int32)), RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Int"),
    ("eigh not square", lambda lib: lib.linalg.eigh(_m(lib, 2, 3)), RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("eigh UPLO", lambda lib: lib.linalg.eigh(_m(lib, 3, 3), UPLO="X"), RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("eigh int", lambda lib: lib.linalg.eigh(lib.ones(3, 3, dtype=lib.int32)), NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Int'"),
    ("vector_norm int", lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("vector_norm narrowing dtype", lambda lib: lib.linalg.vector_norm(_m(lib, 3), dtype=lib.float32), RuntimeError,
     "linalg.vector_norm: the dtype of the input (Double) should be convertible without narrowing to the specified "
     "dtype (Float)"),
    ("vector_norm int dtype", lambda lib: lib.linalg.vector_norm(_m(lib, 3), dtype=lib.int64), RuntimeError,
     "linalg.vector_norm: dtype should be floating point or complex, but got Long"),
    ("vector_norm dim", lambda lib: lib.linalg.vector_norm(_m(lib, 3), dim=1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("matrix_norm 1-d", lambda lib: lib.linalg.matrix_norm(_m(lib, 3)), RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("matrix_norm order", lambda lib: lib.linalg.matrix_norm(_m(lib, 3, 3), "abc"), RuntimeError,
     "linalg.matrix_norm: Order abc not supported."),
    ("matrix_norm order 3", lambda lib: lib.linalg.matrix_norm(_m(lib, 3, 3), 3), RuntimeError,
     "linalg.matrix_norm: Order 3 not supported."),
    ("matrix_norm same dims", lambda lib: lib.linalg.matrix_norm(_m(lib, 3, 3), dim=(0, 0)), RuntimeError,
     "linalg.matrix_norm: dims must be different. Got (0, 0)"),
    ("matrix_norm narrowing dtype", lambda lib: lib.linalg.matrix_norm(_m(lib, 3, 3), "nuc", dtype=lib.float32),
     RuntimeError, "linalg.matrix_norm: the dtype of the input (Double) should be convertible without narrowing to "
     "the specified dtype (Float)"),
    ("matrix_power not square", lambda lib: lib.linalg.matrix_power(_m(lib, 2, 3), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("norm 3-d with ord", lambda lib: lib.linalg.norm(_m(lib, 2, 2, 2), 2), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("matrix_norm dim length", lambda lib: lib.linalg.matrix_norm(_m(lib, 2, 2), dim=(0, 1, 2)), RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    ("multi_dot one", lambda lib: lib.linalg.multi_dot([_m(lib, 2, 3)]), RuntimeError,
     "multi_dot(): expected at least 2 tensors but got 1"),
    ("multi_dot first 3-d", lambda lib: lib.linalg.multi_dot([_m(lib, 2, 3, 3), _m(lib, 3, 3)]), RuntimeError,
     "multi_dot(): the first tensor must be 1D or 2D but got 3D"),
    ("multi_dot middle 3-d", lambda lib: lib.linalg.multi_dot([_m(lib, 2, 3), _m(lib, 3, 3, 1), _m(lib, 3, 3)]),
     RuntimeError, "multi_dot(): tensor 1 must be 2D but got 3D"),
    ("multi_dot shapes", lambda lib: lib.linalg.multi_dot([_m(lib, 2, 3), _m(lib, 4, 3)]), RuntimeError,
     "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [4, 3] cannot be multiplied"),
    ("matmul 0-d", lambda lib: lib.matmul(_t(lib, 1.0), _m(lib, 2)), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_error(name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        fn(rg)


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_error_is_pytorchs(torch: Any, name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=re.escape(message)):
            fn(torch)


@pytest.mark.parametrize("fn", [lambda lib: lib.linalg.inv(_t(lib, SINGULAR)),
                                lambda lib: lib.linalg.solve(_t(lib, SINGULAR), _m(lib, 2)),
                                lambda lib: lib.linalg.cholesky(-lib.eye(2, dtype=lib.float64))],
                         ids=["inv", "solve", "cholesky"])
def test_linalg_error_class(fn: Callable[[Any], Any]) -> None:
    with pytest.raises(rg.linalg.LinAlgError):
        fn(rg)
    assert issubclass(rg.linalg.LinAlgError, RuntimeError)


# -- det at singular matrices: the gradient is the cofactor matrix --------------------------------


def _cofactors(a: np.ndarray) -> np.ndarray:
    """The cofactor matrix from its definition (signed minors), independent of the code under test."""
    n = a.shape[0]
    out = np.empty_like(a)
    for i, j in itertools.product(range(n), range(n)):
        minor = np.delete(np.delete(a, i, axis=0), j, axis=1)
        out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if minor.size else 1.0)
    return out


def _singular(rank: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, (n, n))
    a[rank:] = a[np.arange(n - rank) % rank] if rank else 0.0  # rows beyond ``rank`` repeat earlier rows
    return a[rng.permutation(n)]


@pytest.mark.parametrize(("rank", "n"), [(2, 3), (3, 4), (2, 4), (0, 1), (0, 3), (1, 2)])
def test_det_gradient_at_singular_matrices(rank: int, n: int) -> None:
    a = _singular(rank, n, seed=rank * 10 + n)
    assert np.linalg.matrix_rank(a) == rank
    x = rg.tensor(a, requires_grad=True)
    (grad,) = rg.autograd.grad(rg.linalg.det(x), x)
    np.testing.assert_allclose(grad.numpy(), _cofactors(a), atol=1e-10)


def test_det_gradient_batch_mixing_singular_and_regular() -> None:
    mats = np.stack([_singular(2, 3, 0), np.diag([2.0, 3.0, 4.0]), _singular(1, 3, 1)])
    x = rg.tensor(mats, requires_grad=True)
    weights = rg.tensor([1.0, -2.0, 0.5], dtype=rg.float64)
    (grad,) = rg.autograd.grad((rg.linalg.det(x) * weights).sum(), x)
    expected = np.stack([w * _cofactors(m) for w, m in zip([1.0, -2.0, 0.5], mats, strict=True)])
    np.testing.assert_allclose(grad.numpy(), expected, atol=1e-10)


def test_det_second_derivative_at_rank_n_minus_1() -> None:
    x = rg.tensor(_singular(2, 3, 5), requires_grad=True)
    assert rg.autograd.gradgradcheck(rg.linalg.det, (x,))


# -- decompositions whose backward PyTorch refuses -------------------------------------------------


def test_qr_mode_r_is_not_differentiable() -> None:
    x = rg.tensor(np.random.default_rng(0).standard_normal((3, 2)), requires_grad=True)
    q, r = rg.linalg.qr(x, mode="r")
    assert q.shape == (0,) and type(r.grad_fn).__name__ == "LinalgQrBackward0"
    with pytest.raises(RuntimeError, match=re.escape("The derivative of linalg.qr depends on Q, which is not computed "
                                                     "when mode='r'.")):
        r.sum().backward()


def test_qr_complete_tall_is_not_differentiable() -> None:
    x = rg.tensor(np.random.default_rng(0).standard_normal((3, 2)), requires_grad=True)
    q, r = rg.linalg.qr(x, mode="complete")
    assert q.shape == (3, 3)
    with pytest.raises(RuntimeError, match="The QR decomposition is not differentiable when mode='complete' and "
                                           "nrows > ncols."):
        r.sum().backward()


def test_eigh_and_cholesky_read_one_triangle(torch: Any) -> None:
    a = np.random.default_rng(1).standard_normal((4, 4))
    for uplo in ("L", "U"):
        ours = rg.linalg.eigh(rg.tensor(a), UPLO=uplo).eigenvalues.numpy()
        theirs = torch.linalg.eigh(torch.tensor(a), UPLO=uplo).eigenvalues.numpy()
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    spd = np.array([[4.0, 1.0, 0.5], [100.0, 3.0, 0.2], [-50.0, 7.0, 2.0]])  # only the upper triangle is PD
    ours = rg.linalg.cholesky(rg.tensor(spd), upper=True).numpy()
    np.testing.assert_allclose(ours, torch.linalg.cholesky(torch.tensor(spd), upper=True).numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="the leading minor of order 2 is not positive-definite"):
        rg.linalg.cholesky(rg.tensor(spd))


def test_svd_empty_and_reconstruction() -> None:
    u, s, vh = rg.linalg.svd(rg.zeros(0, 3))
    assert u.shape == (0, 0) and s.shape == (0,) and vh.tolist() == np.eye(3).tolist()
    a = rg.tensor(np.random.default_rng(2).standard_normal((2, 4, 3)))
    u, s, vh = rg.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ vh).numpy(), a.numpy(), atol=1e-12)


def test_return_types_and_namespace() -> None:
    a = rg.eye(2, dtype=rg.float64)
    assert type(rg.linalg.slogdet(a)).__name__ == "linalg_slogdet"
    assert type(rg.slogdet(a)).__name__ == "slogdet"
    assert rg.linalg.qr(a)._fields == ("Q", "R")
    assert rg.linalg.svd(a)._fields == ("U", "S", "Vh")
    assert rg.svd(a)._fields == ("U", "S", "V")
    assert rg.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    import retrograd.linalg

    assert rg.linalg is retrograd.linalg


def test_cholesky_legacy_warns() -> None:
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated in favor of torch.linalg.cholesky"):
        out = rg.cholesky(rg.eye(2, dtype=rg.float64) * 4)
    assert out.tolist() == [[2.0, 0.0], [0.0, 2.0]]


# -- whole graphs of composite ops, node by node ----------------------------------------------------


def _graph(node: Any) -> Any:
    """The grad_fn graph below ``node`` as nested (name, children) tuples."""
    if node is None:
        return None
    return (type(node).__name__, tuple(_graph(n) for n, _ in node.next_functions))


COMPOSITES: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("multi_dot 3", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    ("multi_dot 4", lambda lib, a, b, c, d: lib.linalg.multi_dot([a, b, c, d]), [(2, 3), (3, 4), (4, 2), (2, 5)]),
    ("multi_dot vectors", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
    ("matrix_power 5", lambda lib, a: lib.linalg.matrix_power(a, 5), [(3, 3)]),
    ("matrix_power -2", lambda lib, a: lib.linalg.matrix_power(a, -2), [(3, 3)]),
    ("matmul 2d@3d", lambda lib, a, b: a @ b, [(2, 3), (4, 3, 2)]),
    ("matmul 1d@3d", lambda lib, a, b: a @ b, [(3,), (2, 3, 2)]),
    ("matmul 3d@2d", lambda lib, a, b: a @ b, [(2, 2, 3), (3, 2)]),
    ("tensordot lists", lambda lib, a, b: lib.tensordot(a, b, ([1, 2], [2, 0])), [(2, 3, 4), (4, 5, 3)]),
    ("tensordot full", lambda lib, a, b: lib.tensordot(a, b, 2), [(2, 3), (2, 3)]),
    ("inner", lambda lib, a, b: lib.inner(a, b), [(2, 2, 3), (3,)]),
    ("kron", lambda lib, a, b: lib.kron(a, b), [(2,), (2, 3)]),
    ("outer", lambda lib, a, b: lib.outer(a, b), [(2,), (3,)]),
    ("einsum matmul", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    ("einsum batch", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 4)]),
    ("einsum trace", lambda lib, a: lib.einsum("ii", a), [(3, 3)]),
    ("einsum outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), [(2,), (3,)]),
    ("einsum chain", lambda lib, a, b, c: lib.einsum("i,ij,j->", a, b, c), [(2,), (2, 3), (3,)]),
    ("matrix_norm nuc keepdim", lambda lib, a: lib.linalg.matrix_norm(a, "nuc", keepdim=True), [(3, 3)]),
    ("matrix_norm 2", lambda lib, a: lib.linalg.matrix_norm(a, 2), [(3, 3)]),
    ("matrix_norm inf keepdim", lambda lib, a: lib.linalg.matrix_norm(a, float("inf"), keepdim=True), [(3, 3)]),
    ("logdet", lambda lib, a: lib.logdet(a @ a.mT), [(3, 3)]),
    ("svd legacy V", lambda lib, a: lib.svd(a).V.abs(), [(4, 3)]),  # signs are LAPACK's choice
]


@pytest.mark.parametrize(("name", "fn", "shapes"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composite_graph_is_pytorchs(torch: Any, name: str, fn: Callable[..., Any],
                                     shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) + (2 * np.eye(s[-1]) if len(s) == 2 and s[0] == s[1] else 0) for s in shapes]
    graphs, values = [], []
    for lib in (rg, torch):
        out = fn(lib, *[lib.tensor(a, requires_grad=True) for a in arrays])
        graphs.append(_graph(out.grad_fn))
        values.append(out.detach().numpy())
    assert graphs[0] == graphs[1]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-10, atol=1e-12)
