"""Linear algebra, one block per topic: shared helpers; products (``mm``, ``mv``, ``dot``, ``bmm``,
and ``matmul`` composed from them as PyTorch composes it, so ``grad_fn`` chains match:
``MmBackward0``, ``MvBackward0``, ``DotBackward0``, ``UnsafeViewBackward0`` over
``MmBackward0``/``BmmBackward0`` for batched inputs; ``vdot``/``outer``/``tensordot``/``inner``/
``kron``/``trace``/``matrix_power``); ``addmm``/``addmv``/``baddbmm``;
``inv``/``det``/``slogdet``/``logdet``/``solve``; the factorizations ``cholesky``/``qr``/``svd``/
``eigh``; ``einsum``. Backward rules are written in retrograd ops, so they differentiate again."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import REDUCED_FLOATS, scalar_type_name
from ..tensor import Tensor
from .elementwise import _cj
from .op import Op, broadcast_error, with_array_rule
from .reduce import normalize_dim
from .return_types import linalg_eigh, linalg_qr, linalg_slogdet, linalg_svd  # noqa: F401 - re-exported
from .return_types import slogdet as slogdet_result
from .return_types import svd as svd_result
from .shape import _expand, index_put, squeeze_dim_inplace, unsafe_view
from .shape import cat as _cat_op


# -- shared helpers: dtype checks, LinAlgError, the matrix checks of torch.linalg -------------
def _cat(a: Tensor, b: Tensor, dim: int) -> Tensor:
    return _cat_op(a, b, dim)  # type: ignore[no-any-return]


# The C++ type names PyTorch's mm prints for each dtype.
_C_TYPE_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "int8": "signed char",
                 "uint8": "unsigned char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}


def _same_dtype(a: np.ndarray, b: np.ndarray, name: str) -> None:
    if a.dtype != b.dtype:
        ta, tb = scalar_type_name(a.dtype), scalar_type_name(b.dtype)
        if name == "mm":
            ca, cb = _C_TYPE_NAMES[a.dtype.name], _C_TYPE_NAMES[b.dtype.name]
            message = f"expected m1 and m2 to have the same dtype, but got: {ca} != {cb}"
        elif name == "dot":
            message = f"dot : expected both vectors to have same dtype, but found {ta} and {tb}"
        elif name == "mv":
            message = f"addmv input tensors must have the same dtype, but got {tb}, {ta}, and {tb}"
        else:
            message = f"expected scalar type {ta} but found {tb}"
        raise RuntimeError(message)


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix is singular or not positive-definite."""


LinAlgError.__module__ = "retrograd.linalg"


def _check_float(a: np.ndarray, name: str) -> None:
    if a.dtype.kind not in "fcV":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {scalar_type_name(a.dtype)}"
        )
    if a.dtype == np.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def _check_matrix(a: np.ndarray, name: str, arg: str = "A") -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_square(a: np.ndarray, name: str, arg: str = "A") -> None:
    _check_matrix(a, name, arg)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: {arg} must be batches of square matrices, but they are {a.shape[-2]} by {a.shape[-1]} matrices"
        )


def _first_zero_pivot(a: np.ndarray) -> np.ndarray:
    """Per matrix, the 1-based index of the first exactly-zero pivot of LU with partial pivoting (0: none).

    Only used to word the error for a singular input (LAPACK's ``info``); the loop runs over columns.
    """
    n = a.shape[-1]
    m = np.array(a, dtype=np.float64).reshape(-1, n, n)
    info = np.zeros(m.shape[0], np.int64)
    rows = np.arange(m.shape[0])
    for k in range(n):
        p = np.argmax(np.abs(m[:, k:, k]), axis=1) + k
        top = m[rows, k].copy()
        m[rows, k] = m[rows, p]
        m[rows, p] = top
        pivot = m[:, k, k]
        zero = pivot == 0
        info[(info == 0) & zero] = k + 1
        factor = np.where(zero[:, None], 0.0, m[:, k + 1:, k] / np.where(zero, 1.0, pivot)[:, None])
        m[:, k + 1:, k + 1:] -= factor[:, :, None] * m[:, k, None, k + 1:]
    return info


def _batch_prefix(a: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def _raise_singular(a: np.ndarray, name: str, message: str) -> None:
    info = _first_zero_pivot(a)
    bad = np.flatnonzero(info)
    b = int(bad[0]) if bad.size else 0
    raise LinAlgError(f"{name}: {_batch_prefix(a, b)}" + message.format(int(info[b]) if bad.size else 1))


# -- products ---------------------------------------------------------------------------------
# mm, mv, dot, bmm, matmul (composed as PyTorch does), vdot, outer, tensordot, inner, kron,
# trace, matrix_power.
def _opmath_product(fn: Any, name: str, a: np.ndarray, b: np.ndarray, rank_error: str | None, size_error: str,
                    dtype_first: bool = False) -> Any:
    """The body mm, mv and dot share: PyTorch's rank message (``None`` when the ranks fit), then the
    inner-size check (``size_error``, formatted with ``a`` and ``b`` only when raised) and the dtype
    check, in PyTorch's order (dot checks dtypes first), and ``fn`` in opmath."""
    if rank_error is not None:
        raise RuntimeError(rank_error)
    if dtype_first:
        _same_dtype(a, b, name)
    if a.shape[-1] != b.shape[0]:
        raise RuntimeError(size_error.format(a=a, b=b))
    if not dtype_first:
        _same_dtype(a, b, name)
    return _in_opmath(fn, a, b)


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dtype = a.dtype
    if (a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and dtype is b.dtype
            and dtype not in REDUCED_FLOATS):
        # Every product a backward rule makes (and most others): nothing for the checks below to
        # refuse and no opmath widening, so NumPy's product at once, two Python calls fewer.
        return np.matmul(a, b)  # type: ignore[no-any-return]
    rank_error = "self must be a matrix" if a.ndim != 2 else "mat2 must be a matrix" if b.ndim != 2 else None
    return _opmath_product(np.matmul, "mm", a, b, rank_error, "mat1 and mat2 shapes cannot be multiplied "
                           "({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")


def _mv(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    rank_ok = a.ndim == 2 and v.ndim == 1
    return _opmath_product(np.matmul, "mv", a, v, None if rank_ok else (
        f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}"),
        "size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})")


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rank_ok = a.ndim == 1 and b.ndim == 1
    return np.asarray(_opmath_product(np.dot, "dot", a, b, None if rank_ok else (
        f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors"),
        "inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same number "
        "of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively", dtype_first=True))


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] but "
            f"got: [{b.shape[0]}, {b.shape[1]}]."
        )
    _same_dtype(a, b, "bmm")
    return _in_opmath(np.matmul, a, b)


def _in_opmath(fn: Any, *arrays: np.ndarray) -> Any:
    """A product of float16/bfloat16 arrays accumulated in float32 and rounded once, as PyTorch's
    CPU kernels do (NumPy would accumulate a bfloat16 product in bfloat16)."""
    dtype = arrays[0].dtype
    if dtype not in REDUCED_FLOATS:
        return fn(*arrays)
    return np.asarray(fn(*(a.astype(np.float32) for a in arrays))).astype(dtype)


def _mm_mat2_rule_tangent(tangents: Any, grad: np.ndarray, self: np.ndarray) -> Any:
    # The tangent of ``self.t().mm(grad)`` as mm's multilinear JVP sums it: its first operand's
    # term first (the order of the sum decides which NaN a NaN + NaN keeps).
    tangent_grad, tangent_self = tangents
    total = None if tangent_self is None else _mm(tangent_self.T, grad)
    if tangent_grad is not None:
        part = _mm(self.T, tangent_grad)
        total = part if total is None else np.add(total, part)
    return total


mm = Op("mm", _mm, node="MmBackward0", inputs=("self", "mat2"),
        saved=("self", "mat2", "self_sym_sizes", "mat2_sym_sizes"),  # (not the strides: NumPy's are not PyTorch's)
        grads=(with_array_rule(lambda grad, mat2: grad.mm(_cj(mat2).t()), lambda grad, mat2: _mm(grad, mat2.T),
                               "multilinear"),
               with_array_rule(lambda grad, self: _cj(self).t().mm(grad), lambda grad, self: _mm(self.T, grad),
                               _mm_mat2_rule_tangent)),
        jvp="multilinear")

mv = Op("mv", _mv, node="MvBackward0", inputs=("self", "vec"),
        grads=(lambda grad, vec: grad.unsqueeze(-1) * _cj(vec),
               lambda grad, self: _cj(self).t().mv(grad)), jvp="multilinear")

dot = Op("dot", _dot, node="DotBackward0", inputs=("self", "tensor"),
         grads=(lambda grad, tensor: grad * _cj(tensor),
                lambda grad, self: grad * _cj(self)), jvp="multilinear")

bmm = Op("bmm", _bmm, node="BmmBackward0", inputs=("self", "mat2"),
         grads=(lambda grad, mat2: grad.bmm(_cj(mat2).transpose(1, 2)),
                lambda grad, self: _cj(self).transpose(1, 2).bmm(grad)), jvp="multilinear")


def matmul(a: Tensor, b: Tensor) -> Any:
    """``a @ b`` with NumPy/PyTorch semantics for 1-D, 2-D and batched (broadcast) operands,
    decomposed into the same ops as PyTorch so the ``grad_fn`` chain matches.

    >>> import retrograd as rg
    >>> rg.matmul(rg.ones(2, 3), rg.ones(3)).tolist()
    [3.0, 3.0]
    """
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        return squeeze_dim_inplace(mm(a.unsqueeze(0), b), 0)  # (PyTorch's ``squeeze_(0)``)
    if da == 2 and db == 2:
        return mm(a, b)
    if db >= 3 and da <= 2:
        if a.shape[-1] != b.shape[-2]:
            count = int(np.prod(b.shape[:-2], dtype=np.int64))
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{count}, "
                               f"{a.shape[-1]}] but got: [{count}, {b.shape[-2]}].")
        # Fold the batch of ``b`` into rows of ``b.mT``, as PyTorch does: (b.mT @ a.mT).mT.
        bt = b.mT
        rows = tuple(bt.shape[:-1])
        folded = bt.reshape(-1, bt.shape[-1])
        if da == 1:
            return unsafe_view(mv(folded, a), rows)
        return unsafe_view(mm(folded, a.t()), rows + (a.shape[0],)).mT.contiguous()
    if da >= 3 and db <= 2:
        # Fold the batch into the rows: one mm (or mv) instead of a batched product.
        folded = a.reshape(-1, a.shape[-1])
        if db == 1:
            return unsafe_view(mv(folded, b), tuple(a.shape[:-1]))
        return unsafe_view(mm(folded, b), tuple(a.shape[:-1]) + (b.shape[-1],))
    # Broadcast the batch dims, then one bmm.
    a3 = a.unsqueeze(0) if da == 1 else a
    b3 = b.unsqueeze(-1) if db == 1 else b
    n, m = a3.shape[-2], a3.shape[-1]
    m2, p = b3.shape[-2], b3.shape[-1]
    batch = _matmul_batch(tuple(a3.shape[:-2]), tuple(b3.shape[:-2]))
    count = int(np.prod(batch, dtype=np.int64))
    if m != m2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m}] but got: [{count}, {m2}]."
        )
    a_full = a3 if tuple(a3.shape[:-2]) == batch else a3.expand(*batch, n, m)
    b_full = b3 if tuple(b3.shape[:-2]) == batch else b3.expand(*batch, m2, p)
    a_flat = a_full if a_full.dim() == 3 else a_full.reshape(count, n, m)
    b_flat = b_full if b_full.dim() == 3 else b_full.reshape(count, m2, p)
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return unsafe_view(bmm(a_flat, b_flat), out_shape)


def _matmul_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast batch shape of ``matmul``'s operands, with PyTorch's error when they do not fit."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise RuntimeError(broadcast_error([a, b])) from None


vdot = Op("vdot", _dot, node="VdotBackward0", inputs=("self", "other"),
          grads=(lambda grad, other: grad * other,
                 lambda grad, self: grad * self), jvp="multilinear")


def outer(a: Tensor, b: Tensor) -> Tensor:
    """``a[:, None] * b``, as PyTorch composes it (``MulBackward0`` over a view)."""
    if a.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {a.dim()}-D")
    if b.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {b.dim()}-D")
    return a.reshape(a.shape[0], 1) * b


def _dims_arg(dims: Any) -> Any:
    if isinstance(dims, Tensor):
        return dims.tolist()
    return dims


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract ``dims`` of ``a`` with ``dims`` of ``b``: permute, fold to matrices, one ``mm`` (or ``dot``)."""
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims = _dims_arg(dims)
    if isinstance(dims, (int, np.integer)):
        k = int(dims)
        if k < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={k}")
        if k > a.dim() or k > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={k}")
        dims_a, dims_b = list(range(-k, 0)), list(range(k))
    else:
        dims_a, dims_b = dims
        dims_a = [int(dims_a)] if isinstance(dims_a, (int, np.integer)) else [int(d) for d in dims_a]
        dims_b = [int(dims_b)] if isinstance(dims_b, (int, np.integer)) else [int(d) for d in dims_b]
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    ca = [normalize_dim(d, a.dim()) for d in dims_a]
    cb = [normalize_dim(d, b.dim()) for d in dims_b]
    for da_, db_, xa, xb in zip(dims_a, dims_b, ca, cb, strict=True):
        if a.shape[xa] != b.shape[xb]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[xa]} in dim {da_} and second has "
                f"size {b.shape[xb]} in dim {db_}"
            )
    free_a = [d for d in range(a.dim()) if d not in ca]
    free_b = [d for d in range(b.dim()) if d not in cb]
    pa = a.permute(*free_a, *ca)
    pb = b.permute(*cb, *free_b)
    csize = int(np.prod([a.shape[d] for d in ca], dtype=np.int64))
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    if not free_a and not free_b:
        va = pa if pa.dim() == 1 else pa.reshape(csize)
        vb = pb if pb.dim() == 1 else pb.reshape(csize)
        return dot(va, vb).reshape(out_shape)
    size_a = int(np.prod([a.shape[d] for d in free_a], dtype=np.int64))
    size_b = int(np.prod([b.shape[d] for d in free_b], dtype=np.int64))
    return mm(pa.reshape(size_a, csize), pb.reshape(csize, size_b)).reshape(out_shape)


def inner(a: Tensor, b: Tensor) -> Tensor:
    """Sum over the last dims of ``a`` and ``b``; a product when either is 0-d."""
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(a.shape)} and "
            f"{list(b.shape)}"
        )
    return tensordot(a, b, ([-1], [-1]))


def kron(a: Tensor, b: Tensor) -> Tensor:
    """Kronecker product: interleave the dims of ``a`` and ``b``, multiply, fold (as PyTorch)."""
    for arg, pos, v in (("input", 1, a), ("other", 2, b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"kron(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}")
    nd = max(a.dim(), b.dim())
    sa = (1,) * (nd - a.dim()) + tuple(a.shape)
    sb = (1,) * (nd - b.dim()) + tuple(b.shape)
    ra = unsafe_view(a, tuple(x for s in sa for x in (s, 1)))
    rb = unsafe_view(b, tuple(x for s in sb for x in (1, s)))
    return unsafe_view(ra * rb, tuple(x * y for x, y in zip(sa, sb, strict=True)))  # type: ignore[no-any-return]


def _trace(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    out = np.trace(x)
    return np.asarray(out, dtype=np.int64 if x.dtype.kind in "iu" else x.dtype)


trace = Op("trace", _trace, node="TraceBackward0",
           grads=(lambda grad, self_shape: grad * Tensor._make(np.eye(*self_shape, dtype=grad._data.dtype)),),
           jvp="linear")


def matrix_power(a: Tensor, n: int) -> Tensor:
    """Repeated squaring, composed of ``mm``/``matmul`` as PyTorch does (``n < 0`` inverts first)."""
    data = a._data
    _check_square(data, "linalg.matrix_power")
    n = int(n)
    if n == 0:
        eye = np.broadcast_to(np.eye(data.shape[-1], dtype=data.dtype), data.shape)
        return a.clone().copy_(Tensor._make(eye))
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a.clone()
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    result: Tensor | None = None
    z = a
    while True:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if not n:
            return result  # type: ignore[return-value]
        z = matmul(z, z)


# -- addmm / addmv / baddbmm ------------------------------------------------------------------


def _combine(x: np.ndarray, product: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # ``input`` is ignored (NaN in it does not propagate), as in PyTorch
        return np.asarray(product, dtype=x.dtype)
    return np.asarray((x if beta == 1 else x * beta) + product, dtype=x.dtype)


def _addmm_dtypes(x: np.ndarray, m1: np.ndarray, m2: np.ndarray) -> None:
    """addmm's and addbmm's dtype checks, in PyTorch's order: ``self`` against ``mat2``, then the two factors."""
    for pair, a in (("self and mat2", x), ("mat1 and mat2", m1)):
        if a.dtype != m2.dtype:
            raise RuntimeError(f"{pair} must have the same dtype, but got {scalar_type_name(a.dtype)} and "
                               f"{scalar_type_name(m2.dtype)}")


def _addmm(x: np.ndarray, m1: np.ndarray, m2: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    for name, m in (("mat1", m1), ("mat2", m2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({m1.shape[0]}x{m1.shape[1]} and {m2.shape[0]}x{m2.shape[1]})"
        )
    _addmm_dtypes(x, m1, m2)
    target = _expand(x, (m1.shape[0], m2.shape[1]))
    return _in_opmath(lambda t, p, q: _combine(t, p @ q, beta, alpha), target, m1, m2)


def _addmv(x: np.ndarray, mat: np.ndarray, vec: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    if mat.ndim != 2 or vec.ndim != 1 or x.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {x.ndim}, {mat.ndim}, {vec.ndim}")
    n = mat.shape[0]
    if mat.shape[1] != vec.shape[0] or (x.ndim == 1 and x.shape[0] not in (1, n)):
        size = x.shape[0] if x.ndim else 1
        raise RuntimeError(
            f"size mismatch, got input ({size}), mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    if not x.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {scalar_type_name(x.dtype)}, "
            f"{scalar_type_name(mat.dtype)}, and {scalar_type_name(vec.dtype)}"
        )
    return _in_opmath(lambda t, p, q: _combine(t, p @ q, beta, alpha), np.broadcast_to(x, (n,)), mat, vec)


def _baddbmm(x: np.ndarray, b1: np.ndarray, b2: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    if not x.dtype == b1.dtype == b2.dtype:
        names = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {names.get(x.dtype, x.dtype.name)}, batch1: "
            f"{names.get(b1.dtype, b1.dtype.name)}, batch2: {names.get(b2.dtype, b2.dtype.name)}"
        )
    if x.dtype in REDUCED_FLOATS:  # (one rounding of the whole expression, as PyTorch's kernel)
        return _in_opmath(lambda t, p, q: _combine(_expand(t, (p.shape[0], p.shape[1], q.shape[2])), _bmm(p, q), beta,
                                                   alpha), x, b1, b2)
    product = _bmm(b1, b2)
    return _combine(_expand(x, product.shape), product, beta, alpha)


def _scaled(grad: Tensor, factor: Any) -> Tensor:
    return grad if factor == 1 else grad * factor


addmm = Op("addmm", _addmm, node="AddmmBackward0", inputs=("self", "mat1", "mat2"), params=("beta", "alpha"),
           grads=(lambda grad, beta: _scaled(grad, beta),
                  lambda grad, mat2, alpha: _scaled(grad.mm(_cj(mat2).t()), alpha),
                  lambda grad, mat1, alpha: _scaled(_cj(mat1).t().mm(grad), alpha)), jvp="affine_multilinear")

addmv = Op("addmv", _addmv, node="AddmvBackward0", inputs=("self", "mat", "vec"), params=("beta", "alpha"),
           grads=(lambda grad, beta: _scaled(grad, beta),
                  lambda grad, vec, alpha: _scaled(grad.unsqueeze(-1) * vec, alpha),
                  lambda grad, mat, alpha: _scaled(mat.t().mv(grad), alpha)), jvp="affine_multilinear")

baddbmm = Op("baddbmm", _baddbmm, node="BaddbmmBackward0", inputs=("self", "batch1", "batch2"),
             params=("beta", "alpha"),
             grads=(lambda grad, beta: _scaled(grad, beta),
                    lambda grad, batch2, alpha: _scaled(grad.bmm(batch2.transpose(1, 2)), alpha),
                    lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).bmm(grad), alpha)),
             jvp="affine_multilinear")


# -- inverse, determinants, solve -------------------------------------------------------------


def _inv(a: np.ndarray) -> np.ndarray:
    _check_square(a, "linalg.inv")  # (PyTorch checks the shape before the dtype)
    _check_float(a, "linalg.inv")
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        _raise_singular(a, "linalg.inv", "The diagonal element {} is zero, the inversion could not be completed "
                        "because the input matrix is singular.")
        raise


inv = Op("linalg_inv", _inv, node="LinalgInvExBackward0", saved={"inverse": "result"},
         grads=(lambda grad, result: -matmul(matmul(result.mT, grad), result.mT),), jvp="transpose")


def _det(a: np.ndarray) -> np.ndarray:
    _check_square(a, "linalg.det")  # (PyTorch checks the shape before the dtype)
    _check_float(a, "linalg.det")
    return np.asarray(np.linalg.det(a), dtype=a.dtype)


def _near_singular(a: np.ndarray) -> np.ndarray:
    """Which matrices are (numerically) singular: there ``det * A^{-T}`` is inaccurate or undefined."""
    s = np.linalg.svd(a, compute_uv=False)
    return s[..., -1] <= s[..., 0] * np.sqrt(np.finfo(a.dtype).eps)  # type: ignore[no-any-return]


def _prod_last(m: Tensor) -> Tensor:
    """Product over the last dim by pairwise halving, in differentiable ops (no division: zeros are fine)."""
    while m.shape[-1] > 1:
        if m.shape[-1] % 2:
            one = Tensor._make(np.ones(tuple(m.shape[:-1]) + (1,), m._data.dtype))
            m = _cat(m, one, -1)
        m = m[..., 0::2] * m[..., 1::2]
    return m.select(-1, 0)


def _cofactor_svd(a: Tensor, grad: Tensor) -> Tensor:
    """``grad * cofactor(A)`` for any rank, from the SVD: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh."""
    u, s, vh = svd(a, True)
    alpha = det(u) * det(vh)
    n = s.shape[-1]
    others = s.unsqueeze(-2).expand(*s.shape[:-1], n, n).masked_fill(Tensor._make(np.eye(n, dtype=bool)), 1.0)
    d = (grad * alpha).unsqueeze(-1) * _prod_last(others)
    return matmul(u * d.unsqueeze(-2), vh)


def _det_grad(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    data = self._data
    n = data.shape[-1]
    if data.size == 0:
        return Tensor._make(np.zeros(data.shape, data.dtype))
    singular = _near_singular(data)
    if not singular.any():
        return (grad * result).unsqueeze(-1).unsqueeze(-1) * inv(self).mT
    if singular.all():
        return _cofactor_svd(self, grad)
    # A batch with both: each part by its own formula, then put back together.
    flat, g, r = self.reshape(-1, n, n), grad.reshape(-1), result.reshape(-1)
    sing = np.flatnonzero(singular.reshape(-1))
    regular = np.flatnonzero(~singular.reshape(-1))
    part_regular = (g[regular] * r[regular]).unsqueeze(-1).unsqueeze(-1) * inv(flat[regular]).mT
    part_singular = _cofactor_svd(flat[sing], g[sing])
    out = Tensor._make(np.zeros(flat.shape, data.dtype))
    out = index_put(index_put(out, part_regular, regular, False), part_singular, sing, False)
    return out.reshape(self.shape)


det = Op("linalg_det", _det, node="LinalgDetBackward0", saved={"A": "self", "result": "result"},
          grads=(_det_grad,), jvp="transpose")


def _slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _check_square(a, "linalg.slogdet")  # (PyTorch checks the shape before the dtype)
    _check_float(a, "linalg.slogdet")
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign, dtype=a.dtype), np.asarray(logabsdet, dtype=a.dtype)


def _slogdet_grad(grads: tuple[Tensor, Tensor], self: Tensor) -> tuple[Tensor]:
    return (grads[1].unsqueeze(-1).unsqueeze(-1) * inv(self).mT,)


slogdet_op = Op("linalg_slogdet", _slogdet, node="LinalgSlogdetBackward0", outputs=2, grads=_slogdet_grad,
                saved={"A": "self"},
                jvp="transpose")


def slogdet(a: Tensor, name: str = "linalg_slogdet") -> Any:
    sign, logabsdet = slogdet_op(a)
    return (linalg_slogdet if name == "linalg_slogdet" else slogdet_result)(sign, logabsdet)


# ``logdet``: NaN for a negative determinant; PyTorch's where() over slogdet has two edges.
_nan_where = Op("where", lambda nan, x, condition: np.where(condition, nan, x), node="WhereBackward0",
                inputs=("self", "other"), params=("condition",),
                grads=(lambda grad, condition: grad.masked_fill(Tensor._make(~condition), 0.0),
                       lambda grad, condition: grad.masked_fill(Tensor._make(condition), 0.0)), jvp="transpose")


def logdet(a: Tensor) -> Tensor:
    sign, logabsdet = slogdet_op(a)
    nan = Tensor._make(np.array(np.nan, dtype=a._data.dtype))
    return _nan_where(nan, logabsdet, sign._data < 0)  # type: ignore[no-any-return]


def _solve_shapes(a: np.ndarray, b: np.ndarray, left: bool) -> tuple[np.ndarray, bool]:
    if a.dtype.kind not in "fcV":  # (PyTorch refuses an integer A first, a half one after its shape)
        _check_float(a, "linalg.solve")
    _check_square(a, "linalg.solve")
    _check_float(a, "linalg.solve")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {scalar_type_name(a.dtype)} "
            f"and B of type {scalar_type_name(b.dtype)} instead"
        )
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    bm = b[..., None] if vector or b.ndim == 1 else b
    n = a.shape[-1]
    if (bm.shape[-2] if left else bm.shape[-1]) != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
            f"({a.shape[-2]}x{a.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})"
        )
    if not left and b.ndim == 1:
        raise RuntimeError(
            "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
            "linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    try:
        np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise RuntimeError(broadcast_error([bm.shape[:-2], a.shape[:-2]])) from None
    return bm, vector


def _solve(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    bm, vector = _solve_shapes(a, b, left)
    try:
        if left:
            x = np.linalg.solve(a, bm)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)), -1, -2)
    except np.linalg.LinAlgError:
        _raise_singular(a, "torch.linalg.solve", "The solver failed because the input matrix is singular.")
        raise
    return x[..., 0] if vector else x


def _solve_grad(grad: Tensor, A: Tensor, result: Tensor, left: bool, needs: tuple[bool, ...]) -> tuple[Any, ...]:  # noqa: N803
    grad_b = solve(A.mT, grad, left)
    if not needs[0]:
        return (None, grad_b)
    if not left:
        grad_a = -matmul(result.mT, grad_b)
    elif result.dim() < A.dim():  # a batch of vectors
        grad_a = -(grad_b.unsqueeze(-1) * result.unsqueeze(-2))
    else:
        grad_a = -matmul(grad_b, result.mT)
    return (grad_a, grad_b)


solve = Op("linalg_solve", _solve, node="LinalgSolveExBackward0", inputs=("A", "B"), params=("left",),
           grads=_solve_grad, jvp="transpose")


# -- factorizations ---------------------------------------------------------------------------


def _cholesky(a: np.ndarray, upper: bool) -> np.ndarray:
    _check_square(a, "linalg.cholesky")  # (PyTorch checks the shape before the dtype)
    _check_float(a, "linalg.cholesky")
    if upper:  # PyTorch reads the upper triangle then
        a = np.swapaxes(a, -1, -2)
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        flat = a.reshape(-1, a.shape[-2], a.shape[-1])
        for b, m in enumerate(flat):
            for k in range(1, m.shape[0] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    raise LinAlgError(
                        f"linalg.cholesky: {_batch_prefix(a, b)}The factorization could not be completed because the "
                        f"input is not positive-definite (the leading minor of order {k} is not positive-definite)."
                    ) from None
        raise
    return np.swapaxes(low, -1, -2).copy() if upper else low


def _cholesky_grad(grad: Tensor, result: Tensor, upper: bool) -> Tensor:
    low = result.mT if upper else result
    g = grad.mT if upper else grad
    p = matmul(low.mT, g).tril()
    p = (p + p.tril(-1).mT) * 0.5  # symmetric; the diagonal counts once
    return solve(low, solve(low.mT, p, True), False)  # type: ignore[no-any-return]


cholesky_op = Op("linalg_cholesky", _cholesky, node="LinalgCholeskyExBackward0", params=("upper",),
                 saved={"L": "result", "upper": "upper"},
                 grads=(_cholesky_grad,), jvp="transpose")


# The deprecated ``torch.cholesky`` / ``Tensor.cholesky``: same factorization, its own node name.
cholesky_legacy_op = Op("cholesky", _cholesky, node="CholeskyBackward0", params=("upper",), grads=(_cholesky_grad,),
                        jvp="transpose")

CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs."
)


def cholesky(a: Tensor, upper: bool = False, legacy: bool = False) -> Tensor:
    if legacy:
        import warnings

        warnings.warn(CHOLESKY_WARNING, UserWarning, stacklevel=3)
        return cholesky_legacy_op(a, bool(upper))  # type: ignore[no-any-return]
    return cholesky_op(a, bool(upper))  # type: ignore[no-any-return]


def _qr(a: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _check_matrix(a, "linalg.qr")  # (PyTorch checks the shape before the dtype)
    if a.dtype == np.float16:  # (its kernel refuses half, where the others check the precision)
        raise NotImplementedError("\"geqrf_cpu\" not implemented for 'Half'")
    _check_float(a, "linalg.qr")
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k)).copy()
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
        return (np.zeros((0,), a.dtype) if mode == "r" else q), r
    if mode == "r":
        return np.zeros((0,), a.dtype), np.asarray(np.linalg.qr(a, mode="r"))
    q, r = np.linalg.qr(a, mode=mode)  # type: ignore[call-overload]
    return q, r


def _copyltu(m: Tensor) -> Tensor:
    """The symmetric matrix with ``m``'s lower triangle."""
    return m.tril() + m.tril(-1).mT


def _qr_square_grad(gq: Tensor, gr: Tensor, q: Tensor, r: Tensor) -> Tensor:
    # A = QR with m >= n: gA = (gQ + Q copyltu(M)) R^{-T},  M = R gR^T - gQ^T Q.
    m = matmul(r, gr.mT) - matmul(gq.mT, q)
    b = gq + matmul(q, _copyltu(m))
    return solve(r.mT, b, False)  # type: ignore[no-any-return]


def _qr_grad(grads: tuple[Tensor, Tensor], result0: Tensor, result1: Tensor, mode: str) -> tuple[Tensor]:
    gq, gr = grads
    q, r = result0, result1
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
            "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return (_qr_square_grad(gq, gr, q, r),)
    # m < n: A = [X | Y] with X = Q U square and Y = Q V.
    u, v = r.narrow(-1, 0, m), r.narrow(-1, m, n - m)
    gu, gv = gr.narrow(-1, 0, m), gr.narrow(-1, m, n - m)
    y = matmul(q, v)
    gx = _qr_square_grad(gq + matmul(y, gv.mT), gu, q, u)
    return (_cat(gx, matmul(q, gv), -1),)


qr_op = Op("linalg_qr", _qr, node="LinalgQrBackward0", params=("mode",), outputs=2, grads=_qr_grad,
            saved={"Q": "result0", "R": "result1", "mode": "mode"}, jvp="transpose")


def qr(a: Tensor, mode: str = "reduced") -> linalg_qr:
    q, r = qr_op(a, mode)
    return linalg_qr(q, r)


def _svd(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _check_matrix(a, "linalg.svd")  # (PyTorch checks the shape before the dtype)
    if a.dtype == np.float16:  # (its kernel refuses half, where the others check the precision)
        raise NotImplementedError("\"linalg_svd_cpu\" not implemented for 'Half'")
    _check_float(a, "linalg.svd")
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        batch = a.shape[:-2]
        u = np.broadcast_to(np.eye(m, m if full_matrices else k, dtype=a.dtype), batch + (m, m if full_matrices else k))
        vh = np.broadcast_to(np.eye(n if full_matrices else k, n, dtype=a.dtype),
                             batch + (n if full_matrices else k, n))
        return u.copy(), np.zeros(batch + (k,), a.dtype), vh.copy()
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def _active(g: Tensor) -> bool:
    """Whether an output's gradient can contribute (missing outputs get constant zeros)."""
    return bool(g._requires_grad or g._data.any())


def _off_diagonal_inverse(e: Tensor) -> Tensor:
    """1 / e off the diagonal, 0 on it."""
    eye = Tensor._make(np.eye(e.shape[-1], dtype=bool))
    return e.masked_fill(eye, 1.0).reciprocal().masked_fill(eye, 0.0)


def _svd_grad(grads: tuple[Tensor, Tensor, Tensor], result0: Tensor, result1: Tensor, result2: Tensor,
              full_matrices: bool) -> tuple[Tensor]:
    gu, gs, gvh = grads
    u, s, vh = result0, result1, result2
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full_matrices and m != n:  # only the first k singular vectors are determined by A
        u, gu = u.narrow(-1, 0, k), gu.narrow(-1, 0, k)
        vh, gvh = vh.narrow(-2, 0, k), gvh.narrow(-2, 0, k)
    use_u, use_v = _active(gu), _active(gvh)
    if not use_u and not use_v:
        return (matmul(u * gs.unsqueeze(-2), vh),)
    s2 = s * s
    f = _off_diagonal_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1))  # 1 / (s_j^2 - s_i^2)
    inner = gs.diag_embed()
    if use_u:
        j = matmul(u.mT, gu)
        inner = inner + f * (j - j.mT) * s.unsqueeze(-2)
    if use_v:
        kk = matmul(vh, gvh.mT)
        inner = inner + s.unsqueeze(-1) * (f * (kk - kk.mT))
    grad_a = matmul(matmul(u, inner), vh)
    if use_u and m > k:
        grad_a = grad_a + matmul((gu - matmul(u, matmul(u.mT, gu))) / s.unsqueeze(-2), vh)
    if use_v and n > k:
        grad_a = grad_a + matmul(u, (gvh - matmul(matmul(gvh, vh.mT), vh)) / s.unsqueeze(-1))
    return (grad_a,)


svd = Op("linalg_svd", _svd, node="LinalgSvdBackward0", params=("full_matrices",), outputs=3, grads=_svd_grad,
         saved={"U": "result0", "S": "result1", "Vh": "result2", "full_matrices": "full_matrices"},
         jvp="transpose")


def svd_legacy(a: Tensor, some: bool = True, compute_uv: bool = True) -> svd_result:
    """``torch.svd``: returns ``V`` (not ``Vh``); ``compute_uv=False`` gives zero-filled U and V."""
    if not compute_uv:
        _, s, _ = svd(a, False)
        m, n = a.shape[-2], a.shape[-1]
        batch = tuple(a.shape[:-2])
        return svd_result(Tensor._make(np.zeros(batch + (m, m), a._data.dtype)), s,
                          Tensor._make(np.zeros(batch + (n, n), a._data.dtype)))
    u, s, vh = svd(a, not some)
    return svd_result(u, s, vh.mT)


def _eigh(a: np.ndarray, uplo: str) -> tuple[np.ndarray, np.ndarray]:
    _check_square(a, "linalg.eigh")  # (PyTorch checks the shape before the dtype)
    if a.dtype.kind in "biu":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")
    _check_float(a, "linalg.eigh")
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), np.zeros(a.shape, a.dtype)
    values, vectors = np.linalg.eigh(a, UPLO=uplo)  # type: ignore[call-overload]
    return values, vectors


def _eigh_grad(grads: tuple[Tensor, Tensor], result0: Tensor, result1: Tensor) -> tuple[Tensor]:
    gl, gq = grads
    values, q = result0, result1
    inner = gl.diag_embed()
    if _active(gq):
        f = _off_diagonal_inverse(values.unsqueeze(-2) - values.unsqueeze(-1))  # 1 / (l_j - l_i)
        j = matmul(q.mT, gq)
        inner = inner + f * (j - j.mT) * 0.5
    return (matmul(matmul(q, inner), q.mT),)


eigh_op = Op("linalg_eigh", _eigh, node="LinalgEighBackward0", params=("UPLO",), outputs=2, grads=_eigh_grad,
             saved={"eigenvalues": "result0", "eigenvectors": "result1"},
             jvp="transpose")


def eigh(a: Tensor, UPLO: str = "L") -> linalg_eigh:  # noqa: N803
    values, vectors = eigh_op(a, UPLO)
    return linalg_eigh(values, vectors)


# -- einsum -----------------------------------------------------------------------------------
# Operands are aligned on one label order (output labels, then contracted ones): repeated labels
# become diagonals, missing ones size-1 dims. They are then combined left to right: a product when
# nothing is summed, else a batched matmul (permute, fold, bmm, unfold, permute back).


def _sublist_equation(args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` -> ``('ab,bc->ac', (a, b))``."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else letters[int(s)] for s in sub)

    operands = args[0::2]
    subs = args[1::2]
    if len(args) % 2:
        return ",".join(term(s) for s in subs) + "->" + term(args[-1]), operands[:-1]
    return ",".join(term(s) for s in subs), operands


def _parse_term(term: str, ndim: int, index: int, ell: int) -> list[Any]:
    """A term's labels; the ellipsis becomes ('...', k) labels aligned to the right of ``ell`` dims."""
    if term.count("...") > 1 or term.replace("...", "").count("."):
        raise RuntimeError(f"einsum(): found '.' for operand {index} that is not part of any ellipsis")
    for ch in term.replace("...", ""):
        if not ch.isalpha() or not ch.isascii():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {term.index(ch)} in the equation string, subscripts "
                "must be in [a-zA-Z]"
            )
    if "..." not in term:
        if len(term) != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(term)}) does not match the number of "
                f"dimensions ({ndim}) for operand {index} and no ellipsis was given"
            )
        return list(term)
    before, after = term.split("...")
    covered = ndim - len(before) - len(after)
    if covered < 0:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({len(before) + len(after)}) is more than the number "
            f"of dimensions ({ndim}) for operand {index}"
        )
    return list(before) + [("...", k) for k in range(ell - covered, ell)] + list(after)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """Multiply two aligned operands and sum ``sum_dims`` (kept as size 1)."""
    for d in sum_dims:  # a summed label present in one operand only: sum it there first
        if left.shape[d] != right.shape[d]:
            if left.shape[d] == 1:
                right = right.sum(d, keepdim=True)
            else:
                left = left.sum(d, keepdim=True)
    if all(left.shape[d] == 1 for d in sum_dims):  # nothing left to contract: a product
        return left * right
    ndim = left.dim()
    batch, lro, ro = [], [], []
    for d in range(ndim):
        if d in sum_dims:
            continue
        ls, rs = left.shape[d], right.shape[d]
        if ls == rs:
            batch.append(d)
        elif rs == 1:
            lro.append(d)
        else:
            ro.append(d)

    def size(t: Tensor, dims: list[int]) -> int:
        return int(np.prod([t.shape[d] for d in dims], dtype=np.int64))

    lp = left.permute(*batch, *lro, *sum_dims, *ro).reshape(size(left, batch), size(left, lro), size(left, sum_dims))
    rp = right.permute(*batch, *sum_dims, *ro, *lro).reshape(size(right, batch), size(right, sum_dims),
                                                            size(right, ro))
    out = bmm(lp, rp)
    shape = [left.shape[d] for d in batch] + [left.shape[d] for d in lro] + [right.shape[d] for d in ro]
    out = out.view(*shape, *([1] * len(sum_dims)))
    order = batch + lro + ro + sum_dims
    return out.permute(*np.argsort(order).tolist())


def einsum(*args: Any) -> Tensor:
    """Einstein summation (``torch.einsum``): equation string with ``->`` and ``...``, or sublists."""
    if args and not isinstance(args[0], str):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    ell = 0
    for term, op in zip(terms, operands, strict=True):
        if "..." in term:
            ell = max(ell, op.dim() - len(term.replace("...", "")))
    labels = [_parse_term(t, op.dim(), i, ell) for i, (t, op) in enumerate(zip(terms, operands, strict=True))]
    ellipsis = [("...", k) for k in range(ell)]
    if arrow:
        if "..." in rhs:
            before, after = rhs.split("...")
            out_labels: list[Any] = list(before) + ellipsis + list(after)
        else:
            out_labels = list(rhs)
        seen_all = {lab for labs in labels for lab in labs}
        for lab in out_labels:
            if isinstance(lab, str) and lab not in seen_all:
                raise RuntimeError(f"einsum(): output subscript {lab} does not appear in the equation for any input "
                                   "operand")
            if out_labels.count(lab) > 1:
                raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in the output")
    else:
        counts: dict[Any, int] = {}
        for labs in labels:
            for lab in labs:
                counts[lab] = counts.get(lab, 0) + 1
        used_ell = [e for e in ellipsis if e in counts]
        out_labels = used_ell + sorted(lab for lab, c in counts.items() if c == 1 and isinstance(lab, str))
    contracted: list[Any] = []
    for labs in labels:
        for lab in labs:
            if lab not in out_labels and lab not in contracted:
                contracted.append(lab)
    all_labels = out_labels + contracted
    sizes: dict[Any, int] = {}
    for i, (labs, op) in enumerate(zip(labels, operands, strict=True)):
        for lab, s in zip(labs, op.shape, strict=True):
            have = sizes.get(lab, 1)
            if s != have and s != 1 and have != 1:
                name = lab if isinstance(lab, str) else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {s} for operand {i} which does not broadcast "
                                   f"with previously seen size {have}")
            sizes[lab] = s if have == 1 else have  # a size-0 dim wins over a broadcast 1

    aligned = []
    for i, (labs, op) in enumerate(zip(labels, operands, strict=True)):
        labs = list(labs)
        x = op
        for lab in list(dict.fromkeys(labs)):  # repeated labels: take the diagonal
            while labs.count(lab) > 1:
                first = labs.index(lab)
                second = labs.index(lab, first + 1)
                if x.shape[first] != x.shape[second]:
                    raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {i} but the sizes don't "
                                       f"match, {x.shape[first]} != {x.shape[second]}")
                x = x.diagonal(0, first, second).movedim(-1, first)
                del labs[second]
        for lab in all_labels:
            if lab not in labs:
                x = x.unsqueeze(-1)
                labs.append(lab)
        aligned.append(x.permute(*[labs.index(lab) for lab in all_labels]))

    n_out = len(out_labels)
    if len(aligned) == 1:
        if len(all_labels) > n_out:
            return aligned[0].sum(tuple(range(n_out, len(all_labels))))
        return aligned[0]
    last_use = {lab: max(i for i, labs in enumerate(labels) if lab in labs) for lab in contracted}
    result = aligned[0]
    summed: set[Any] = set()
    for i in range(1, len(aligned)):
        now = [lab for lab in contracted if last_use[lab] <= i and lab not in summed]
        summed.update(now)
        result = _sumproduct_pair(result, aligned[i], [all_labels.index(lab) for lab in now])
    if len(all_labels) > n_out:
        result = result.view(*[sizes[lab] for lab in out_labels])
    return result


# -- more linear algebra (issue #12): addr, addbmm, the in-place checks of addmv_/baddbmm_/addbmm_,
# cross, pinverse, matrix_exp, chain_matmul ----------------------------------------------------
def _check_integral_scalars(x: np.ndarray, beta: Any, alpha: Any) -> None:
    if x.dtype.kind in "biu":
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, (float, np.floating)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")


def _addr(x: np.ndarray, v1: np.ndarray, v2: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    for name, v in (("vec1", v1), ("vec2", v2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    _check_integral_scalars(x, beta, alpha)
    return _combine(_expand(x, (v1.shape[0], v2.shape[0])), np.multiply.outer(v1, v2), beta, alpha)


addr = Op("addr", _addr, node="AddrBackward0", inputs=("self", "vec1", "vec2"), params=("beta", "alpha"),
          dtype="promote",
          grads=(lambda grad, beta: _scaled(grad, beta),
                 lambda grad, vec2, alpha: _scaled(grad.mv(vec2), alpha),
                 lambda grad, vec1, alpha: _scaled(grad.t().mv(vec1), alpha)), jvp="affine_multilinear")


def _addbmm(x: np.ndarray, b1: np.ndarray, b2: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    for name, b in (("batch1", b1), ("batch2", b2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b1.shape[0]} and {b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
                           f"{b2.shape[1]}x{b2.shape[2]})")
    _addmm_dtypes(x, b1, b2)
    product = (_in_opmath(lambda p, q: np.einsum("bij,bjk->ik", p, q), b1, b2) if b1.shape[0]
               else np.zeros((b1.shape[1], b2.shape[2]), b1.dtype))
    return _combine(_expand(x, product.shape), product, beta, alpha)


def _batched(grad: Tensor, batch: Tensor) -> Tensor:
    return grad.unsqueeze(0).expand(batch.shape[0], *grad.shape)


addbmm = Op("addbmm", _addbmm, node="AddbmmBackward0", inputs=("self", "batch1", "batch2"), params=("beta", "alpha"),
            grads=(lambda grad, beta: _scaled(grad, beta),
                   lambda grad, batch1, batch2, alpha: _scaled(_batched(grad, batch1).bmm(batch2.transpose(1, 2)),
                                                               alpha),
                   lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).bmm(_batched(grad, batch1)), alpha)),
            jvp="affine_multilinear")


def inplace_product(op: Op, x: Tensor, args: tuple[Any, ...]) -> Tensor:
    """``x.addmv_(...)`` and friends: PyTorch refuses a result that does not have ``x``'s shape
    (it would broadcast ``x``), before anything is written."""
    from .inplace import apply_inplace
    from .op import forward_arrays

    with np.errstate(all="ignore"):
        out = forward_arrays(op, (x, *args[:2]), args[2:])
    if out.shape != x._data.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(x._data.shape)} and output tensor size "
                           f"{list(out.shape)} should match")
    return apply_inplace(op, (x, *args))


def _cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    # PyTorch's order of checks: dims, the dim's size, broadcasting, then the dtypes.
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if not a.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and {b.shape[d]}")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(broadcast_error([a.shape, b.shape])) from None
    if a.dtype.kind == "b":
        raise NotImplementedError('"cross" not implemented for \'Bool\'')
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(a.dtype)} but found {scalar_type_name(b.dtype)}")
    if 0 in shape:
        return np.zeros(shape, a.dtype)
    return np.asarray(np.cross(a, b, axisa=d, axisb=d, axisc=d), dtype=a.dtype)


cross_op: Op = Op("linalg_cross", _cross, node="LinalgCrossBackward0", inputs=("self", "other"), params=("dim",),
              grads=(lambda grad, other, dim: cross_op(other, grad, dim),
                     lambda grad, self, dim: cross_op(grad, self, dim)), jvp="transpose")

CROSS_WARNING = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                 "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                 "that of linalg.cross in a future release.")


OUT_RESIZED_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the required "
    "output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized "
    "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
    "elements with t.resize_(0).")


def check_out(name: str, out: Any, inputs: tuple[Tensor, ...], dtype: np.dtype) -> None:
    """PyTorch's checks of an ``out=`` tensor before the op runs: a Tensor, nothing requiring grad
    while grad mode is on (such functions do not record), the result's dtype ``dtype``."""
    from ..autograd.grad_mode import is_grad_enabled

    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and any(t._requires_grad for t in (*inputs, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if out._data.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_C_TYPE_NAMES.get(dtype.name, dtype.name)}, but got "
                           f"{_C_TYPE_NAMES.get(out._data.dtype.name, out._data.dtype.name)} instead")


def write_out(result: Tensor, out: Tensor, op_name: str) -> Tensor:
    """``result`` written into ``out`` (one version bump), which is resized to the result's shape
    first when it differs (warned, as PyTorch, unless ``out`` was empty), as a factory's ``out=``."""
    import warnings

    from ..autograd.grad_mode import no_grad

    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size:
            warnings.warn(OUT_RESIZED_WARNING.format(old=list(out._data.shape), new=list(shape)), UserWarning,
                          stacklevel=3)
        from .strided import resize_

        resize_(out, shape)  # (bumps the version once, the write included, as PyTorch's)
        out._data[...] = result._data
        return out
    with no_grad():
        out.copy_(result)
    return out


def cross(a: Tensor, b: Tensor, dim: int | None, name: str = "cross", out: Tensor | None = None) -> Tensor:
    """``torch.cross``: without ``dim``, the first dim of size 3 (PyTorch's deprecated default, warned).
    ``name`` is the function PyTorch's argument errors name (``linalg_cross`` for ``torch.linalg.cross``);
    ``out``, a tensor the result is written into (PyTorch's ``out=``)."""
    from .op import apply

    for position, (arg, value) in enumerate((("input", a), ("other", b)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    if dim is not None and (not isinstance(dim, (int, np.integer)) or isinstance(dim, bool)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        import warnings

        if out is None:  # (PyTorch's out= form picks the dim silently)
            warnings.warn(CROSS_WARNING, UserWarning, stacklevel=3)
        sizes = a._data.shape
        found = [i for i, s in enumerate(sizes) if s == 3]
        if not found:
            raise RuntimeError("no dimension of size 3 in input")
        dim = found[0]
    if out is not None:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        # (torch.cross's out= form runs linalg_cross's out kernel: its checks name that function)
        check_out("linalg_cross", out, (a, b), a._data.dtype)
        return write_out(apply(cross_op, (a, b, dim)), out, name)
    return apply(cross_op, (a, b, dim))  # type: ignore[no-any-return]


def _pinv(a: np.ndarray, rcond: float) -> np.ndarray:
    if a.ndim < 2 or a.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.pinv({_type_label(a)}{{{list(a.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    return np.asarray(np.linalg.pinv(a, rcond=rcond), dtype=a.dtype)


def _type_label(a: np.ndarray) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
            "float16": "Half", "int16": "Short", "int8": "Char", "uint8": "Byte"}.get(a.dtype.name, a.dtype.name)


def _pinv_grad(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    # The derivative of the Moore-Penrose inverse for a matrix of constant rank (Golub & Pereyra).
    m, n = self.shape[-2], self.shape[-1]
    pinv_h, grad_h = result.mT, grad.mT
    if m <= n:
        k = grad_h @ result
        k_pinv_h = k @ pinv_h
        return -(result @ k).mT + k_pinv_h - (self @ result) @ k_pinv_h + (pinv_h @ result) @ (grad_h - k @ self)
    k = result @ grad_h
    pinv_h_k = pinv_h @ k
    return -(k @ result).mT + (grad_h - self @ k) @ result @ pinv_h + pinv_h_k - pinv_h_k @ result @ self


pinverse_op = Op("linalg_pinv", _pinv, node="LinalgPinvBackward0", params=("rcond",), saved=("result", "self"),
                 grads=(_pinv_grad,), jvp="transpose")


def _matrix_exp(a: np.ndarray) -> np.ndarray:
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if a.dtype.kind not in "fcV":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{_type_label(a)}")
    if a.size == 0:
        return a.copy()
    # Scaling and squaring: exp(A) = exp(A / 2**s) ** (2**s), with a Taylor series where the norm
    # is below 1/2 (18 terms: below double precision's rounding there).
    work: np.ndarray = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    norm = np.max(np.sum(np.abs(work), axis=-2), axis=-1)
    s = int(max(0, np.ceil(np.log2(max(float(np.max(norm)), 1e-300) / 0.5)))) if np.all(np.isfinite(norm)) else 0
    scaled = work / 2.0**s
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    term = eye.copy()
    total = eye.copy()
    with np.errstate(all="ignore"):
        for k in range(1, 19):
            term = term @ scaled / k
            total = total + term
        for _ in range(s):
            total = total @ total
    return total.astype(a.dtype)


def _matrix_exp_grad(grad: Tensor, self: Tensor) -> Tensor:
    # d exp(A)[G] is the top-right block of exp([[A^H, G], [0, A^H]]) (Mathias 1996): written with
    # this op itself, so the rule is differentiable again.
    n = self.shape[-1]
    at = _cj(self.mT)
    top = _cat(at, grad, -1)
    bottom = _cat(at.new_zeros(at.shape), at, -1)
    return matrix_exp_op(_cat(top, bottom, -2)).narrow(-2, 0, n).narrow(-1, n, n)


matrix_exp_op: Op = Op("linalg_matrix_exp", _matrix_exp, node="LinalgMatrixExpBackward0", grads=(_matrix_exp_grad,),
                       jvp="transpose")

CHAIN_MATMUL_WARNING = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                        "multiple parameters.")


def chain_matmul(*matrices: Tensor) -> Tensor:
    """``torch.chain_matmul``: the product of matrices (deprecated for ``linalg.multi_dot``, warned)."""
    import warnings

    from ..linalg import multi_dot

    warnings.warn(CHAIN_MATMUL_WARNING, UserWarning, stacklevel=3)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].dim()}, expected 2 instead.")
        return matrices[0].clone()
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    return multi_dot(matrices)
