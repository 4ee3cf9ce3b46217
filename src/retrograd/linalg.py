"""``retrograd.linalg``: PyTorch's ``torch.linalg`` namespace.

Decompositions and solvers run on NumPy's LAPACK; their backward rules are written in retrograd
ops (see ``ops/linalg.py``), so gradients can be differentiated again.

>>> import retrograd as torch
>>> A = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> torch.linalg.det(A)
tensor(5., grad_fn=<LinalgDetBackward0>)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._dtype import FROM_NUMPY, scalar_type_name, to_dtype
from .ops import linalg as _L
from .ops import reduce as _R
from .ops.linalg import LinAlgError
from .ops.op import apply
from .tensor import Tensor

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "multi_dot", "norm", "qr", "slogdet", "solve", "svd", "svdvals", "vecdot", "vector_norm",
]


def _tensor(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's argument names
    """Inverse of a square matrix (or a batch of them).

    >>> import retrograd as torch
    >>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return apply(_L.inv, (_tensor(A, "inv"),))  # type: ignore[no-any-return]


def det(A: Tensor) -> Tensor:  # noqa: N803
    """Determinant; its gradient (the cofactor matrix) is right for singular matrices too.

    >>> import retrograd as torch
    >>> torch.linalg.det(torch.tensor([[2.0, 1.0], [0.0, 3.0]])).item()
    6.0
    """
    return apply(_L.det, (_tensor(A, "det"),))  # type: ignore[no-any-return]


def slogdet(A: Tensor) -> Any:  # noqa: N803
    """``(sign, log|det|)`` as a named tuple ``linalg_slogdet``."""
    return _L.slogdet(_tensor(A, "slogdet"))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """Solve ``A X = B`` (``X A = B`` with ``left=False``); ``B`` may be a (batch of) vector(s).

    >>> import retrograd as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    return apply(_L.solve, (_tensor(A, "solve"), B, bool(left)))  # type: ignore[no-any-return]


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """Cholesky factor ``L`` of a symmetric positive-definite matrix (``L^T`` with ``upper=True``)."""
    return _L.cholesky(_tensor(A, "cholesky"), upper)


def qr(A: Tensor, mode: str = "reduced") -> Any:  # noqa: N803
    """QR decomposition, ``mode`` in ``'reduced'``, ``'complete'``, ``'r'``; a named tuple ``(Q, R)``."""
    return _L.qr(_tensor(A, "qr"), mode)


def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:  # noqa: N803
    """Singular value decomposition ``A = U diag(S) Vh``; a named tuple ``(U, S, Vh)``."""
    u, s, vh = apply(_L.svd, (_tensor(A, "svd"), bool(full_matrices)))
    return _L.linalg_svd(u, s, vh)


def svdvals(A: Tensor, *, driver: Any = None) -> Tensor:  # noqa: N803
    """Singular values, in descending order.

    >>> import retrograd as torch
    >>> torch.linalg.svdvals(torch.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    _, s, _ = apply(_L.svd, (_tensor(A, "svdvals"), False))
    return s  # type: ignore[no-any-return]


def eigh(A: Tensor, UPLO: str = "L") -> Any:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix; reads the ``UPLO`` triangle."""
    return _L.eigh(_tensor(A, "eigh"), UPLO)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """Eigenvalues (ascending) of a symmetric matrix."""
    return _L.eigh(_tensor(A, "eigvalsh"), UPLO).eigenvalues


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Same as ``retrograd.matmul``."""
    return _L.matmul(input, other)  # type: ignore[no-any-return]


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Cross product of 3-vectors along ``dim`` (the last by default), which must have size 3 in both
    inputs; the other dims broadcast (both inputs must have as many dims). ``out``: a tensor of the
    result's dtype to write it into (resized if its shape differs), under no autograd.

    >>> import retrograd as torch
    >>> torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    return _L.cross(input, other, dim, "linalg_cross", out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonal of each matrix (a view), as ``A.diagonal(offset, dim1, dim2)``."""
    return A.diagonal(offset, dim1, dim2)


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` to the integer power ``n`` (``n < 0``: of the inverse)."""
    return _L.matrix_power(_tensor(A, "matrix_power"), n)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot product along ``dim``, with broadcasting."""
    return (x * y).sum(dim)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """Product of a chain of matrices; the first may be a vector (a row), the last a vector (a column)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.dim() not in allowed:
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            if where is not None:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.dim()}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    mats = [first.unsqueeze(0) if first.dim() == 1 else first, *tensors[1:-1],
            last.unsqueeze(-1) if last.dim() == 1 else last]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    out = _chain_product(mats)
    shape = ([first.shape[0]] if first.dim() == 2 else []) + ([last.shape[-1]] if last.dim() == 2 else [])
    return out.view(*shape)


def _chain_product(mats: list[Tensor]) -> Tensor:
    """Multiply in the order with the fewest scalar multiplications (the matrix-chain order)."""
    n = len(mats)
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))

    return product(0, n - 1)


# -- norms ------------------------------------------------------------------------------------


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements by default); ``ord`` may be ``inf``, ``-inf``, 0.

    >>> import retrograd as torch
    >>> torch.linalg.vector_norm(torch.tensor([3.0, -4.0])).item()
    5.0
    """
    dims = _R.normalize_dims(dim, x._data.ndim)
    if dtype is not None:
        target = _check_norm_dtype(x, dtype, "vector_norm")
        if target != x._data.dtype:  # computed in ``dtype`` inside the one op, as PyTorch does
            return apply(_R.vector_norm_dtype, (x, float(ord), dims, bool(keepdim), target))  # type: ignore[no-any-return]
    return apply(_R.vector_norm, (x, float(ord), dims, bool(keepdim)))  # type: ignore[no-any-return]


def _check_norm_dtype(x: Tensor, dtype: Any, name: str) -> np.dtype:
    target = to_dtype(dtype)
    if not target.is_floating_point:
        raise RuntimeError(f"linalg.{name}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(target.np)}")
    source = x._data.dtype
    if source.kind in "fV" and target.np.itemsize < source.itemsize:
        raise RuntimeError(
            f"linalg.{name}: the dtype of the input ({scalar_type_name(source)}) should be convertible without "
            f"narrowing to the specified dtype ({scalar_type_name(target.np)})"
        )
    return target.np


def _ord_str(ord: Any) -> str:  # noqa: A002
    if isinstance(ord, float) and math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(ord)


def _matrix_dims(A: Tensor, dim: Any) -> tuple[int, int]:  # noqa: N803
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    d0, d1 = (_R.normalize_dim(int(d), A._data.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    return d0, d1


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: N803, A002
                dtype: Any = None) -> Tensor:
    """Matrix norm over the two dims ``dim``: ``'fro'``, ``'nuc'``, 1, -1, 2, -2, ``inf``, ``-inf``.

    >>> import retrograd as torch
    >>> torch.linalg.matrix_norm(torch.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
    6.0
    """
    if dtype is not None:
        target = FROM_NUMPY[_check_norm_dtype(A, dtype, "matrix_norm")]
        if ord == "fro":
            return vector_norm(A, 2, _matrix_dims(A, dim), keepdim, dtype=target)
        A = A.to(target)
    data = A._data
    if data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if data.dtype != np.float16 or ord in ("nuc", 2, -2):  # half: only the SVD orders are refused (PyTorch)
        _L._check_float(data, "linalg.matrix_norm")
    d0, d1 = _matrix_dims(A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2, 2.0, -2.0):
        rest = [d for d in range(data.ndim) if d not in (d0, d1)]
        s = svdvals(A.permute(*rest, d0, d1))
        if ord == "nuc":
            out = s.sum(-1, keepdim=keepdim)
        else:
            out = s.amax(-1, keepdim) if ord > 0 else s.amin(-1, keepdim)
        if keepdim:
            order = rest + [d0, d1]
            return out.unsqueeze(-1).permute(*np.argsort(order).tolist())
        return out  # type: ignore[no-any-return]
    if ord in (1, -1, math.inf, -math.inf):
        if ord in (math.inf, -math.inf):
            d0, d1 = d1, d0
        col = vector_norm(A, 1, d0, keepdim)
        reduce_dim = d1 if keepdim or d1 < d0 else d1 - 1
        return col.amax(reduce_dim, keepdim) if ord > 0 else col.amin(reduce_dim, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {_ord_str(ord)} not supported.")


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: N803, A002
         dtype: Any = None) -> Tensor:
    """A vector norm or a matrix norm, chosen as ``torch.linalg.norm`` chooses.

    >>> import retrograd as torch
    >>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
    5.0
    """
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if dim is not None:
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(
        f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
    )


_NOT_GIVEN: Any = object()


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool = _NOT_GIVEN, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """The solution of ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``.

    >>> import retrograd as torch
    >>> torch.linalg.solve_triangular(torch.tensor([[2.0, 1.0], [0.0, 1.0]]), torch.tensor([[3.0], [1.0]]),
    ...                               upper=True)
    tensor([[1.],
            [1.]])
    """
    from .ops import linalg_extra

    if upper is _NOT_GIVEN:  # (PyTorch's TypeError, worded by the op)
        return linalg_extra.solve_triangular(A, B, left=left, unitriangular=unitriangular)
    return linalg_extra.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


__all__.append("solve_triangular")


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential ``sum_k A**k / k!`` of a square matrix (or a batch of them).

    >>> import retrograd as torch
    >>> torch.linalg.matrix_exp(torch.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_exp(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    return apply(_L.matrix_exp_op, (A,))  # type: ignore[no-any-return]


__all__.append("matrix_exp")


def householder_product(A: Tensor, tau: Tensor) -> Tensor:  # noqa: N803
    """The product of the Householder reflectors ``geqrf`` stores (see ``ops/householder.py``).

    >>> import retrograd as torch
    >>> a, tau = torch.geqrf(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    >>> torch.linalg.householder_product(a, tau)  # the Q of A = QR, as PyTorch gives it
    tensor([[ 0., -1.],
            [-1.,  0.]])
    """
    from .ops.householder import householder_product as product

    return product(A, tau)


__all__.append("householder_product")
