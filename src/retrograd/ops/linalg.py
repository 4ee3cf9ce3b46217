"""Matrix products: ``mm``, ``mv``, ``dot``, ``bmm``, and ``matmul`` composed from them as PyTorch
composes it (so ``grad_fn`` chains match: ``MmBackward0``, ``MvBackward0``, ``DotBackward0``,
``UnsafeViewBackward0`` over ``MmBackward0``/``BmmBackward0`` for batched inputs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from ..tensor import Tensor
from .op import Op
from .shape import can_view, squeeze_inplace, unsafe_view


def _same_dtype(a: np.ndarray, b: np.ndarray, name: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {scalar_type_name(a.dtype).lower()} != "
            f"{scalar_type_name(b.dtype).lower()}"
            if name == "mm" else
            f"expected scalar type {scalar_type_name(a.dtype)} but found {scalar_type_name(b.dtype)}"
        )


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    _same_dtype(a, b, "mm")
    return a @ b


def _mv(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})"
        )
    _same_dtype(a, v, "mv")
    return a @ v


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the "
            f"same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
        )
    _same_dtype(a, b, "dot")
    return np.asarray(np.dot(a, b))


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
    return np.matmul(a, b)


mm = Op("mm", _mm, node="MmBackward0", inputs=("self", "mat2"),
        grads=(lambda grad, mat2: grad.mm(mat2.t()),
               lambda grad, self: self.t().mm(grad)))

mv = Op("mv", _mv, node="MvBackward0", inputs=("self", "vec"),
        grads=(lambda grad, vec: grad.unsqueeze(-1) * vec,
               lambda grad, self: self.t().mv(grad)))

dot = Op("dot", _dot, node="DotBackward0", inputs=("self", "tensor"),
         grads=(lambda grad, tensor: grad * tensor,
                lambda grad, self: grad * self))

bmm = Op("bmm", _bmm, node="BmmBackward0", inputs=("self", "mat2"),
         grads=(lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                lambda grad, self: self.transpose(1, 2).bmm(grad)))


def _foldable(big: Tensor, small: Tensor) -> bool:
    """PyTorch folds the batch of the larger operand into rows (one mm/mv instead of bmm) when the
    smaller one requires grad, or when the fold needs no copy."""
    return small._requires_grad or can_view(big._data, (-1, big._data.shape[-1]))


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
        return squeeze_inplace(mm(a.unsqueeze(0), b), (0,))
    if da == 2 and db == 2:
        return mm(a, b)
    if da >= 3 and db <= 2 and _foldable(a, b):
        folded = a.reshape(-1, a.shape[-1])
        if db == 1:
            return unsafe_view(mv(folded, b), tuple(a.shape[:-1]))
        return unsafe_view(mm(folded, b), tuple(a.shape[:-1]) + (b.shape[-1],))
    if db >= 3 and da <= 2 and (da == 1 or a._requires_grad):
        # (a @ b)^T = b^T @ a^T: fold b's batch into rows of b^T.
        bt = b.mT
        folded = bt.reshape(-1, bt.shape[-1])
        if da == 1:
            return unsafe_view(mv(folded, a), tuple(bt.shape[:-1]))
        return unsafe_view(mm(folded, a.t()), tuple(bt.shape[:-1]) + (a.shape[0],)).mT
    # Broadcast the batch dims, then one bmm.
    a3 = a.unsqueeze(0) if da == 1 else a
    b3 = b.unsqueeze(-1) if db == 1 else b
    n, m = a3.shape[-2], a3.shape[-1]
    m2, p = b3.shape[-2], b3.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(a3.shape[:-2]), tuple(b3.shape[:-2])))
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
