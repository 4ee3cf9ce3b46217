"""More linear algebra, as PyTorch: ``cdist`` (``CdistBackward0``; ``EuclideanDistBackward0``
when the matrix-product path is taken), triangular solves (``linalg.solve_triangular``,
``triangular_solve``) and the Cholesky solves (``cholesky_solve``, ``cholesky_inverse``).

Backward rules are written in retrograd's own ops (the solves call themselves), so every order
of derivative works. NumPy only: triangular systems are solved by substitution, one row at a
time over the whole batch, so a zero on the diagonal gives inf/nan as PyTorch's does.

Loaded on first use (``retrograd.ops.__getattr__``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..autograd.fp_errors import quiet_forward
from ..tensor import Tensor
from .op import Op, apply

_make = Tensor._make


def _mT(x: Tensor) -> Tensor:  # noqa: N802
    return x.transpose(-2, -1)


def _mH(x: Tensor) -> Tensor:  # noqa: N802
    return x.transpose(-2, -1).conj()


# -- cdist -----------------------------------------------------------------------------------------

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _pair_distances(x1: np.ndarray, x2: np.ndarray, p: float) -> np.ndarray:
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return np.sum(diff != 0, axis=-1).astype(x1.dtype)
    if p == 1:
        return np.sum(diff, axis=-1)  # type: ignore[no-any-return]
    if p == 2:
        return np.sqrt(np.sum(diff * diff, axis=-1))  # type: ignore[no-any-return]
    if p == np.inf:
        return np.max(diff, axis=-1, initial=0.0).astype(x1.dtype)  # type: ignore[no-any-return]
    return np.sum(diff ** p, axis=-1) ** (1.0 / p)  # type: ignore[no-any-return]


def _cdist_pair_grad(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor, p: float) -> Tensor:
    """d loss / d (x1[i] - x2[j]) for every pair: (..., P, R, M)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    g, r = grad.unsqueeze(-1), result.unsqueeze(-1)
    if p == 0:
        return diff * 0.0
    if p == 1:
        return g * diff.sign()
    safe = r.masked_fill(r == 0, 1.0)
    if p == 2:
        return (g * diff / safe).masked_fill(r == 0, 0.0)
    if p == np.inf:
        hit = (diff.abs() == r).to(diff.dtype)
        return g * diff.sign() * hit
    # sign * |d|^(p-1) / r^(p-1): no 0^(negative) for p < 2
    return (g * diff.sign() * diff.abs() ** (p - 1) / safe ** (p - 1)).masked_fill(r == 0, 0.0)


def _cdist_grads(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor, p: float,
                 needs: tuple[bool, ...]) -> tuple[Any, ...]:
    pair = _cdist_pair_grad(grad, x1, x2, result, p)
    return (pair.sum(-2) if needs[0] else None, -pair.sum(-3) if needs[1] else None)


cdist_op = Op("cdist", quiet_forward(lambda x1, x2, p: _pair_distances(x1, x2, p)), node="CdistBackward0",
              inputs=("x1", "x2"), params=("p",), saved=("p", "result", "x1", "x2"), grads=_cdist_grads,
              jvp="transpose")


def _euclidean(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    # ||a||^2 + ||b||^2 - 2 a.b, as PyTorch's matrix-product path (clamped at 0 before the root)
    sq = (x1 * x1).sum(-1)[..., :, None] + (x2 * x2).sum(-1)[..., None, :] - 2 * (x1 @ np.swapaxes(x2, -1, -2))
    return np.sqrt(np.maximum(sq, 0))  # type: ignore[no-any-return]


def _euclidean_grads(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor, needs: tuple[bool, ...]) -> tuple[Any, ...]:
    ratio = (grad / result.masked_fill(result == 0, 1.0)).masked_fill(result == 0, 0.0)
    g1 = x1 * ratio.sum(-1).unsqueeze(-1) - ratio @ x2 if needs[0] else None
    g2 = x2 * ratio.sum(-2).unsqueeze(-1) - _mT(ratio) @ x1 if needs[1] else None
    return g1, g2


euclidean_dist_op = Op("_euclidean_dist", quiet_forward(_euclidean), node="EuclideanDistBackward0",
                       inputs=("x1", "x2"), saved=("result", "x1", "x2"), grads=_euclidean_grads, jvp="transpose")


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: Any = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each pair of rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).

    >>> import retrograd as rg
    >>> rg.cdist(rg.tensor([[0.0, 0.0]]), rg.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[5., 1.]])
    """
    mode = compute_mode
    if mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x._data.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_type_name(x._data.dtype)}")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(x1._data.dtype)} but found "
                           f"{scalar_type_name(x2._data.dtype)}")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                           f"X2: {x2._data.shape[-1]}")
    p = float(p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = np.broadcast_shapes(x1._data.shape[:-2], x2._data.shape[:-2])
    rows1, rows2 = x1._data.shape[-2], x2._data.shape[-2]
    use_mm = p == 2 and (mode == "use_mm_for_euclid_dist" or (
        mode == "use_mm_for_euclid_dist_if_necessary" and (rows1 > 25 or rows2 > 25)))
    if use_mm:
        if batch != x1._data.shape[:-2]:
            x1 = x1.expand(*batch, *x1._data.shape[-2:])
        if batch != x2._data.shape[:-2]:
            x2 = x2.expand(*batch, *x2._data.shape[-2:])
        flat1 = x1.reshape(-1, rows1, x1._data.shape[-1]) if batch else x1
        flat2 = x2.reshape(-1, rows2, x2._data.shape[-1]) if batch else x2
        return apply(euclidean_dist_op, (flat1, flat2)).view(*batch, rows1, rows2)  # type: ignore[no-any-return]
    return apply(cdist_op, (x1, x2, p))  # type: ignore[no-any-return]


# -- triangular solves ---------------------------------------------------------------------------------


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool, unitriangular: bool) -> np.ndarray:
    """Solve ``a x = b`` for triangular ``a`` (..., n, n), ``b`` (..., n, k), batches broadcast."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    n = a.shape[-1]
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        rest = slice(i + 1, n) if upper else slice(0, i)
        row = x[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, rest], x[..., rest, :])
        x[..., i, :] = row if unitriangular else row / a[..., i, i][..., None]
    return x


def _solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, left: bool, unitriangular: bool) -> np.ndarray:
    if left:
        return _substitute(a, b, upper, unitriangular)
    # X A = B  <=>  A^T X^T = B^T (the triangle flips)
    return np.swapaxes(_substitute(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, unitriangular), -1, -2)


def _triangle(m: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    return m.triu(1 if unitriangular else 0) if upper else m.tril(-1 if unitriangular else 0)  # type: ignore[attr-defined]


solve_triangular_op: Op


def _solve_triangular_grads(grad: Tensor, self: Tensor, result: Tensor, upper: bool, left: bool, unitriangular: bool,
                            needs: tuple[bool, ...]) -> tuple[Any, ...]:
    # X = A^-1 B (left) or B A^-1: B's gradient is a solve with A^H, A's the outer product masked
    # to A's triangle (its diagonal too unless unit).
    g_b = apply(solve_triangular_op, (self, grad, not upper, left, unitriangular, True))
    g_a = None
    if needs[0]:
        g_a = _triangle(-(g_b @ _mH(result)) if left else -(_mH(result) @ g_b), upper, unitriangular)
    return g_a, g_b if needs[1] else None


def _solve_triangular_forward(a: np.ndarray, b: np.ndarray, upper: bool, left: bool, unitriangular: bool,
                              adjoint: bool) -> np.ndarray:
    if adjoint:  # (the backward's solve with A^H, without materialising it as a tensor)
        a = np.conj(np.swapaxes(a, -1, -2))
    return _solve_triangular(a, b.astype(a.dtype, copy=False), upper, left, unitriangular)  # (A's dtype wins)


solve_triangular_op = Op("linalg_solve_triangular", quiet_forward(_solve_triangular_forward),
                         node="LinalgSolveTriangularBackward0", inputs=("self", "B"),
                         params=("upper", "left", "unitriangular", "adjoint"),
                         saved=("left", "result", "self", "unitriangular", "upper"),
                         grads=lambda grad, self, result, upper, left, unitriangular, adjoint, needs:
                         _adjoint_aware_grads(grad, self, result, upper, left, unitriangular, adjoint, needs),
                         jvp="transpose")


def _adjoint_aware_grads(grad: Tensor, self: Tensor, result: Tensor, upper: bool, left: bool, unitriangular: bool,
                         adjoint: bool, needs: tuple[bool, ...]) -> tuple[Any, ...]:
    if not adjoint:
        return _solve_triangular_grads(grad, self, result, upper, left, unitriangular, needs)
    # X = (A^H)^-1 B, with A^H triangular the other way: as above for A^H, then A's is its adjoint.
    a_h = _mH(self)
    g_a, g_b = _solve_triangular_grads(grad, a_h, result, upper, left, unitriangular, needs)
    return (None if g_a is None else _mH(g_a)), g_b


def _check_solve_args(a: Tensor, b: Tensor, left: bool, name: str) -> None:
    for arg, x in (("A", a), ("B", b)):
        if x._data.ndim < 2:
            raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    n = a._data.shape[-1]
    if a._data.shape[-2] != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {a._data.shape[-2]} by "
                           f"{n} matrices")
    rows = b._data.shape[-2] if left else b._data.shape[-1]
    if rows != n:
        shape_a = "x".join(map(str, a._data.shape))
        shape_b = "x".join(map(str, b._data.shape))
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({shape_a} and {shape_b})")
    _check_kind(a, "triangular_solve_cpu")


def _check_kind(x: Tensor, kernel: str) -> None:
    if x._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(x._data.dtype)}\'')


def _check_same_dtype(b: Tensor, a: Tensor) -> None:
    if b._data.dtype != a._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(b._data.dtype)} and A of type {scalar_type_name(a._data.dtype)} instead.")


def _check_square_and_sizes(b: Tensor, a: Tensor, name: str) -> None:
    n = a._data.shape[-1]
    if a._data.shape[-2] != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {a._data.shape[-2]} by {n} matrices")
    if b._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                           f"{b._data.shape[-2]} by {b._data.shape[-1]}")


_REQUIRED: Any = object()


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool = _REQUIRED, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``; only
    its ``upper`` (or lower) triangle is read, and its diagonal is taken as ones if ``unitriangular``.

    >>> import retrograd as rg
    >>> rg.linalg.solve_triangular(rg.tensor([[2.0, 0.0], [1.0, 1.0]]), rg.tensor([[2.0], [3.0]]), upper=False)
    tensor([[1.],
            [2.]])
    """
    if upper is _REQUIRED:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    _check_solve_args(A, B, left, "linalg.solve_triangular")
    return apply(solve_triangular_op, (A, B, bool(upper), bool(left), bool(unitriangular), False))  # type: ignore[no-any-return]


def _triangular_solve_forward(b: np.ndarray, a: np.ndarray, upper: bool, transpose: bool,
                              unitriangular: bool) -> tuple[np.ndarray, np.ndarray]:
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    coefficient = np.array(np.broadcast_to(a, batch + a.shape[-2:]))
    op_a = np.swapaxes(a, -1, -2) if transpose else a
    return _substitute(op_a, b, upper != transpose, unitriangular), coefficient


def _triangular_solve_grads(grads: tuple[Tensor, Tensor], self: Tensor, A: Tensor, result0: Tensor,  # noqa: N803
                            upper: bool, transpose: bool, unitriangular: bool,
                            needs: tuple[bool, ...]) -> tuple[Any, ...]:
    g_x, g_m = grads
    op_a = _mT(A) if transpose else A
    op_upper = upper != transpose
    g_b = apply(solve_triangular_op, (op_a, g_x, not op_upper, True, unitriangular, True))
    g_a = None
    if needs[1]:
        g_op = -(g_b @ _mH(result0))
        g_a = _triangle(_mT(g_op) if transpose else g_op, upper, unitriangular)
        g_a = g_a + g_m
    return (g_b if needs[0] else None), g_a


triangular_solve_op = Op("triangular_solve", quiet_forward(_triangular_solve_forward), node="TriangularSolveBackward0",
                         inputs=("self", "A"), params=("upper", "transpose", "unitriangular"), outputs=2,
                         dtype="promote", grads=_triangular_solve_grads, jvp="transpose",
                         saved={"A": "A", "self": "self", "solution": "result0", "transpose": "transpose",
                                "unitriangular": "unitriangular", "upper": "upper"})


_TRIANGULAR_SOLVE: Any = None
_WARNED = False
TRIANGULAR_SOLVE_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one "
    "of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> Any:
    """Deprecated in PyTorch for ``linalg.solve_triangular``: ``(solution, cloned_coefficient)``
    with ``solution`` solving ``op(A) X = b``, ``op`` the transpose when ``transpose``.

    >>> import retrograd as rg
    >>> rg.triangular_solve(rg.tensor([[2.0], [3.0]]), rg.tensor([[2.0, 1.0], [0.0, 1.0]])).solution
    tensor([[-0.5000],
            [ 3.0000]])
    """
    from .return_types import return_type

    global _TRIANGULAR_SOLVE, _WARNED
    if not _WARNED:  # (PyTorch warns once per process)
        _WARNED = True
        warnings.warn(TRIANGULAR_SOLVE_WARNING, UserWarning, stacklevel=3)
    if _TRIANGULAR_SOLVE is None:
        _TRIANGULAR_SOLVE = return_type("triangular_solve", ("solution", "cloned_coefficient"))

    for arg, x in (("b", b), ("A", A)):
        if x._data.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {arg} to have at least 2 dimensions, but it has "
                               f"{x._data.ndim} dimensions instead")
    _check_same_dtype(b, A)
    _check_square_and_sizes(b, A, "triangular_solve")
    _check_kind(A, "triangular_solve_cpu")
    out = apply(triangular_solve_op, (b, A, bool(upper), bool(transpose), bool(unitriangular)))
    return _TRIANGULAR_SOLVE(*out)


# -- Cholesky solves ---------------------------------------------------------------------------------

cholesky_solve_op: Op


def _cholesky_solve_forward(b: np.ndarray, factor: np.ndarray, upper: bool) -> np.ndarray:
    # A = L L^H (or U^H U): two triangular solves
    if upper:
        y = _substitute(np.conj(np.swapaxes(factor, -1, -2)), b, False, False)
        return _substitute(factor, y, True, False)
    y = _substitute(factor, b, False, False)
    return _substitute(np.conj(np.swapaxes(factor, -1, -2)), y, True, False)


def _cholesky_solve_grads(grad: Tensor, self: Tensor, input2: Tensor, result: Tensor, upper: bool,
                          needs: tuple[bool, ...]) -> tuple[Any, ...]:
    g_b = apply(cholesky_solve_op, (grad, input2, upper))
    g_factor = None
    if needs[1]:
        common = g_b @ _mH(result)
        common = common + _mH(common)
        g_factor = -(input2 @ common) if upper else -(common @ input2)
    return (g_b if needs[0] else None), g_factor


cholesky_solve_op = Op("cholesky_solve", quiet_forward(_cholesky_solve_forward), node="CholeskySolveBackward0",
                       inputs=("self", "input2"), params=("upper",), dtype="promote",
                       saved=("input2", "result", "self", "upper"), grads=_cholesky_solve_grads, jvp="transpose")


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The solution of ``A X = input`` given the Cholesky factor ``input2`` of ``A``
    (lower, ``A = L L^H``, or ``upper``, ``A = U^H U``).

    >>> import retrograd as rg
    >>> rg.cholesky_solve(rg.tensor([[4.0], [2.0]]), rg.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[1.],
            [2.]])
    """
    for arg, x in (("b", input), ("u", input2)):
        if x._data.ndim < 2:
            raise RuntimeError(f"{arg} should have at least 2 dimensions, but has {x._data.ndim} dimensions instead")
    _check_same_dtype(input, input2)
    _check_square_and_sizes(input, input2, "cholesky_solve")
    _check_kind(input, "cholesky_solve_cpu")
    return apply(cholesky_solve_op, (input, input2, bool(upper)))  # type: ignore[no-any-return]


def _cholesky_inverse_forward(factor: np.ndarray, upper: bool) -> np.ndarray:
    eye = np.broadcast_to(np.eye(factor.shape[-1], dtype=factor.dtype), factor.shape)
    return _cholesky_solve_forward(eye, factor, upper)


def _cholesky_inverse_grad(grad: Tensor, self: Tensor, result: Tensor, upper: bool) -> Tensor:
    # X = (L L^H)^-1: dX = -X dA X, dA = dL L^H + L dL^H
    common = result @ (grad + _mH(grad)) @ result
    return -(self @ common) if upper else -(common @ self)


cholesky_inverse_op = Op("cholesky_inverse", quiet_forward(_cholesky_inverse_forward), node="CholeskyInverseBackward0",
                         params=("upper",), saved=("result", "self", "upper"), grads=(_cholesky_inverse_grad,),
                         jvp="transpose")


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The inverse of ``A`` given its Cholesky factor (lower, ``A = L L^H``, or ``upper``).

    >>> import retrograd as rg
    >>> rg.cholesky_inverse(rg.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    if input._data.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    n = input._data.shape[-1]
    if input._data.shape[-2] != n:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they are "
                           f"{input._data.shape[-2]} by {n} matrices")
    _check_kind(input, "cholesky_inverse_out_cpu")
    return apply(cholesky_inverse_op, (input, bool(upper)))  # type: ignore[no-any-return]


# -- deprecated torch.* spellings: qr, matrix_rank, frobenius_norm, nuclear_norm ------------------------

_WARNED_ONCE: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED_ONCE:  # (PyTorch's TORCH_WARN_ONCE)
        _WARNED_ONCE.add(key)
        warnings.warn(message, UserWarning, stacklevel=4)


QR_WARNING = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
_QR: Any = None


def qr(input: Tensor, some: bool = True) -> Any:  # noqa: A002
    """Deprecated ``torch.qr``: ``linalg.qr(input, 'reduced' if some else 'complete')`` as ``(Q, R)``.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.qr(rg.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    from . import linalg
    from .return_types import return_type

    global _QR
    _warn_once("qr", QR_WARNING)
    if _QR is None:
        _QR = return_type("qr", ("Q", "R"))
    return _QR(*linalg.qr(input, "reduced" if some else "complete"))


MATRIX_RANK_REMOVED = (
    "This function was deprecated since version 1.9 and is now removed.\nPlease use the `torch.linalg.matrix_rank` "
    "function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """Removed from PyTorch (1.9): raises PyTorch's RuntimeError pointing at ``linalg.matrix_rank``.

    >>> import retrograd as rg
    >>> rg.matrix_rank(rg.eye(2))
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(MATRIX_RANK_REMOVED)


def _frobenius_grad(grad: Tensor, self: Tensor, result: Tensor, dim: tuple[int, ...], keepdim: bool) -> Tensor:
    if not keepdim:
        for d in sorted(dim):
            grad, result = grad.unsqueeze(d), result.unsqueeze(d)
    return (grad * self / result.masked_fill(result == 0, 1.0)).masked_fill(result == 0, 0.0)


frobenius_norm_op = Op("norm", quiet_forward(lambda x, p, dim, keepdim: np.sqrt(np.sum(
    np.abs(x) ** 2, axis=dim, keepdims=keepdim))), node="NormBackward1", params=("p", "dim", "keepdim"),
    saved=("dim", "keepdim", "p", "result", "self"),
    grads=(lambda grad, self, result, dim, keepdim: _frobenius_grad(grad, self, result, dim, keepdim),),
                       jvp="transpose")

FROBENIUS_WARNING = (
    "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a future "
    "PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead")


def frobenius_norm(input: Tensor, dim: Any = _REQUIRED, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated: the 2-norm over one or two dims (``NormBackward1``).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.frobenius_norm(rg.tensor([[3.0, 4.0]]), (0, 1))
    tensor(5.)
    """
    from .reduce import normalize_dim

    if dim is _REQUIRED:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    _warn_once("frobenius_norm", FROBENIUS_WARNING)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    ndim = input._data.ndim
    normalized = tuple(normalize_dim(int(d), ndim) for d in dims)
    if len(set(normalized)) != len(normalized):
        raise RuntimeError(f"dim {normalized[0]} appears multiple times in the list of dims")
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_type_name(input._data.dtype)} instead.")
    return apply(frobenius_norm_op, (input, 2.0, normalized, bool(keepdim)))  # type: ignore[no-any-return]


NUCLEAR_WARNING = (
    "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a future "
    "PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated: the sum of the singular values over two dims (by default the last two).

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.nuclear_norm(rg.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor(7.)
    """
    from . import linalg
    from .reduce import normalize_dim

    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    _warn_once("nuclear_norm", NUCLEAR_WARNING)
    ndim = input._data.ndim
    if dim is None:
        dims: tuple[int, ...] = (ndim - 2, ndim - 1)
    else:
        if isinstance(dim, (int, np.integer)):
            dim = (dim, dim)  # (PyTorch reads one int as that int twice)
        if len(dim) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {len(dim)}")
        dims = tuple(normalize_dim(int(d), ndim) for d in dim)
        if dims[0] == dims[1]:
            raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    rest = [d for d in range(ndim) if d not in dims]
    moved = input if dims == (ndim - 2, ndim - 1) else input.permute(*rest, *dims)
    values = apply(linalg.svd, (moved, False))[1].sum(-1)
    if keepdim:
        for d in sorted(dims):
            values = values.unsqueeze(d)
    return values  # type: ignore[no-any-return]


# -- LU: torch.lu, lu_unpack, lu_solve -------------------------------------------------------------------


def _lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's ``getrf`` over a batch: partial pivoting (the first largest magnitude), LU packed
    in one matrix (L's unit diagonal implied), 1-based int32 pivots, and ``info`` (the 1-based
    index of the first zero pivot, 0 if none)."""
    lu = np.array(a, dtype=a.dtype, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    flat = lu.reshape((-1, m, n))
    pivots = np.zeros((flat.shape[0], k), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    rows = np.arange(flat.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(flat[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        top = flat[rows, j, :].copy()
        flat[rows, j, :] = flat[rows, p, :]
        flat[rows, p, :] = top
        pivot = flat[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        safe = np.where(zero, 1, pivot)
        flat[:, j + 1:, j] = np.where(zero[:, None], flat[:, j + 1:, j], flat[:, j + 1:, j] / safe[:, None])
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j, None] * flat[:, j, None, j + 1:]
    return flat.reshape(batch + (m, n)), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(pivots: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """P with ``A = P L U`` from 1-based LAPACK pivots (row swaps applied in order)."""
    flat = pivots.reshape((-1, pivots.shape[-1]))
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j] - 1
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    eye = np.eye(m, dtype=dtype)
    # row i of P^T A is row perm[i] of A, so P[perm[i], i] = 1
    p_mat = np.swapaxes(eye[perm], -1, -2)
    return p_mat.reshape(pivots.shape[:-1] + (m, m))  # type: ignore[no-any-return]


def _split_lu(lu: Tensor) -> tuple[Tensor, Tensor]:
    m, n = lu._data.shape[-2:]
    k = min(m, n)
    eye = _make(np.eye(m, k, dtype=lu._data.dtype))
    low = lu[..., :, :k].tril(-1) + eye  # type: ignore[attr-defined]
    up = lu[..., :k, :].triu()  # type: ignore[attr-defined]
    return low, up


def _solve_adjoint(a: Tensor, b: Tensor, a_h_upper: bool, left: bool, unit: bool) -> Tensor:
    """``a^-H b`` (or ``b a^-H``); ``a_h_upper``: the triangle of ``a^H``."""
    return apply(solve_triangular_op, (a, b, a_h_upper, left, unit, True))  # type: ignore[no-any-return]


def _lu_square_grad(low: Tensor, up: Tensor, g_low: Tensor, g_up: Tensor) -> Tensor:
    # A = L U: A's gradient is L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H
    phi = (_mH(low) @ g_low).tril(-1) + (g_up @ _mH(up)).triu()  # type: ignore[attr-defined]
    return _solve_adjoint(up, _solve_adjoint(low, phi, True, True, True), False, False, False)


def _lu_factor_grads(grads: tuple[Any, ...], result0: Tensor, result1: Tensor) -> tuple[Tensor]:
    """A = P L U. Wide A = P L [U1 U2]: U2 = L^-1 P^T A2 adds P L^-H gU2 for A2 and moves
    -L^-H gU2 U2^H onto L's gradient; tall P^T A = [L1; L2] U: L2 = B2 U^-1 adds gL2 U^-H for B2
    and moves -L2^H gL2 U^-H onto U's; the square part is then an LU without pivoting."""
    from .linalg import _cat

    grad = grads[0]
    m, n = result0._data.shape[-2:]
    low, up = _split_lu(result0)
    p = _make(_permutation(result1._data, m, result0._data.dtype))
    if m == n:
        return (p @ _lu_square_grad(low, up, grad.tril(-1), grad.triu()),)
    if m < n:
        up1, up2, g2 = up[..., :, :m], up[..., :, m:], grad[..., :, m:]
        w = _solve_adjoint(low, g2, True, True, True)
        g_low = grad[..., :, :m].tril(-1) - (w @ _mH(up2)).tril(-1)
        a1 = _lu_square_grad(low, up1, g_low, grad[..., :, :m].triu())
        return (p @ _cat(a1, w, -1),)
    low1, low2, g2 = low[..., :n, :], low[..., n:, :], grad[..., n:, :]
    w = _solve_adjoint(up, g2, False, False, False)
    g_up = grad[..., :n, :].triu() - (_mH(low2) @ w).triu()
    b1 = _lu_square_grad(low1, up, grad[..., :n, :].tril(-1), g_up)
    return (p @ _cat(b1, w, -2),)


lu_factor_op = Op("linalg_lu_factor_ex", quiet_forward(lambda a, pivot: _lu_factor(a)), node="LinalgLuFactorExBackward0",
                  params=("pivot",), outputs=3, differentiable_outputs=(True, False, False),
                  saved={"LU": "result0", "pivot": "pivot", "pivots": "result1"}, grads=_lu_factor_grads,
                  jvp="transpose")

LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
    "future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:  # noqa: N803
    """Deprecated ``torch.lu``: ``(LU, pivots)`` (``+ infos``) of the partially pivoted factorization.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.lu(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))[1]
    tensor([2, 2], dtype=torch.int32)
    """
    _warn_once("lu", LU_WARNING)
    if A._data.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"[{', '.join(map(str, A._data.shape))}] instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_kind(A, "lu_cpu")
    lu_, pivots, info = apply(lu_factor_op, (A, True))
    return (lu_, pivots, info) if get_infos else (lu_, pivots)


def _lu_unpack_forward(lu_: np.ndarray, pivots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, n = lu_.shape[-2:]
    k = min(m, n)
    low = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=lu_.dtype)
    return _permutation(pivots, m, lu_.dtype), low, np.triu(lu_[..., :k, :])


def _lu_unpack_grads(grads: tuple[Any, ...], LU_data_shape: tuple[int, ...]) -> Tensor:  # noqa: N803
    # L's strict lower triangle and U's upper triangle are the packed matrix's two parts
    low, up = grads[1].tril(-1), grads[2].triu()
    m, n = LU_data_shape[-2:]
    if m < n:  # wide: L is m x m, beside it only U
        return apply(_pad_columns, (low, n)) + up  # type: ignore[no-any-return]
    if m > n:  # tall: U is n x n, below it only L
        return low + apply(_pad_rows, (up, m))  # type: ignore[no-any-return]
    return low + up  # type: ignore[no-any-return]


_pad_columns = Op("pad_columns", lambda x, n: np.concatenate(
    [x, np.zeros(x.shape[:-1] + (n - x.shape[-1],), x.dtype)], axis=-1), node="ConstantPadNdBackward0", params=("n",),
    grads=(lambda grad, self_shape: grad[..., :self_shape[-1]],), jvp="transpose")
_pad_rows = Op("pad_rows", lambda x, m: np.concatenate(
    [x, np.zeros(x.shape[:-2] + (m - x.shape[-2], x.shape[-1]), x.dtype)], axis=-2), node="ConstantPadNdBackward0",
    params=("m",), grads=(lambda grad, self_shape: grad[..., :self_shape[-2], :],), jvp="transpose")

lu_unpack_op = Op("lu_unpack", _lu_unpack_forward, node="LuUnpackBackward0", inputs=("LU_data", "LU_pivots"),
                  outputs=3, differentiable_outputs=(False, True, True),
                  grads=(_lu_unpack_grads, None), jvp="transpose")
_LU_UNPACK: Any = None


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> Any:  # noqa: N803
    """``(P, L, U)`` from ``lu``'s packed factors and pivots, with ``A = P L U``.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     P, L, U = rg.lu_unpack(*rg.lu(rg.tensor([[1.0, 2.0], [3.0, 4.0]])))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    from .return_types import return_type

    global _LU_UNPACK
    if _LU_UNPACK is None:
        _LU_UNPACK = return_type("lu_unpack", ("P", "L", "U"))
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    p, low, up = apply(lu_unpack_op, (LU_data, LU_pivots))
    if not unpack_pivots:
        p = _make(np.empty(0, LU_data._data.dtype))
    if not unpack_data:
        low, up = _make(np.empty(0, LU_data._data.dtype)), _make(np.empty(0, LU_data._data.dtype))
    return _LU_UNPACK(p, low, up)


lu_solve_op: Op


def _lu_solve_forward(lu_: np.ndarray, b: np.ndarray, pivots: np.ndarray, adjoint: bool) -> np.ndarray:
    p, low, up = _lu_unpack_forward(lu_, pivots)
    if adjoint:  # A^H X = B: A^H = U^H L^H P^T
        y = _substitute(np.conj(np.swapaxes(up, -1, -2)), b, False, False)
        return p @ _substitute(np.conj(np.swapaxes(low, -1, -2)), y, True, True)  # type: ignore[no-any-return]
    y = _substitute(low, np.swapaxes(p, -1, -2) @ b, False, True)
    return _substitute(up, y, True, False)


def _lu_solve_grads(grad: Tensor, LU: Tensor, result: Tensor, pivots: np.ndarray, adjoint: bool,  # noqa: N803
                    needs: tuple[bool, ...]) -> tuple[Any, ...]:
    g_b = apply(lu_solve_op, (LU, grad, pivots, not adjoint))
    g_lu = None
    if needs[0]:
        # A's gradient -A^-H G X^H (or its adjoint), mapped through A = P L U onto the packed factors
        g_a = -(g_b @ _mH(result)) if not adjoint else -(result @ _mH(g_b))
        low, up = _split_lu(LU)
        p = _make(_permutation(pivots, LU._data.shape[-2], LU._data.dtype))
        pt_ga = _mT(p) @ g_a
        g_lu = (pt_ga @ _mH(up)).tril(-1) + (_mH(low) @ pt_ga).triu()  # type: ignore[attr-defined]
    return g_lu, (g_b if needs[1] else None)


lu_solve_op = Op("linalg_lu_solve", quiet_forward(_lu_solve_forward), node="LinalgLuSolveBackward0",
                 inputs=("LU", "B"), params=("pivots", "adjoint"), saved=("LU", "adjoint", "pivots", "result"),
                 grads=lambda grad, LU, result, pivots, adjoint, needs: _lu_solve_grads(  # noqa: N803
                     grad, LU, result, pivots, adjoint, needs), jvp="transpose")

LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch release.\n"
    "Note that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """Deprecated ``torch.lu_solve``: the solution of ``A X = b`` from ``lu(A)``.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.lu_solve(rg.tensor([[2.0], [8.0]]), *rg.lu(rg.tensor([[2.0, 0.0], [0.0, 4.0]])))
    tensor([[1.],
            [2.]])
    """
    _warn_once("lu_solve", LU_SOLVE_WARNING)
    return apply(lu_solve_op, (LU_data, b, LU_pivots._data, False))  # type: ignore[no-any-return]
