"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized truncated SVD (Halko, Martinsson &
Tropp 2009, algorithms 4.4 and 5.1) in retrograd ops, so the factors are differentiable. The
random test matrix is drawn by ``randn`` from the default generator, in PyTorch's order, so a
seeded call draws what PyTorch's draws. Loaded on first use.
"""

from __future__ import annotations

from . import _dtype
from .tensor import Tensor


def _h(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    return x.mT.conj() if x._data.dtype.kind == "c" else x.mT


def _basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:  # noqa: N803
    """An orthonormal ``Q`` (``m x q``) whose range approximates that of ``A - M`` (subspace iteration)."""
    import retrograd as rg

    kind = A._data.dtype
    dtype = A.dtype if kind.kind == "c" or kind.name in ("float16", "float32", "float64") else _dtype.float32
    R = rg.randn(A.shape[-1], q, dtype=dtype)  # noqa: N806

    def times(x: Tensor, adjoint: bool = False) -> Tensor:
        out = (_h(A) if adjoint else A) @ x
        return out if M is None else out - (_h(M) if adjoint else M) @ x

    Q = rg.linalg.qr(times(R)).Q  # noqa: N806
    for _ in range(niter):
        Q = rg.linalg.qr(times(Q, adjoint=True)).Q  # noqa: N806
        Q = rg.linalg.qr(times(Q)).Q  # noqa: N806
    return Q  # type: ignore[no-any-return]


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    import retrograd as rg

    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)  # noqa: N806
    wide = m < n
    if wide:  # (the algorithm wants a tall matrix: factor the adjoint, then swap U and V)
        A = _h(A)  # noqa: N806
        M = None if M is None else _h(M)  # noqa: N806
    Q = _basis(A, q, niter, M)  # noqa: N806
    B = _h(Q) @ A  # noqa: N806
    if M is not None:
        B = B - _h(Q) @ M  # noqa: N806
    U, S, Vh = rg.linalg.svd(B, full_matrices=False)  # noqa: N806
    V = _h(Vh)  # noqa: N806
    U = Q @ U  # noqa: N806
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """``(U, S, V)`` of rank ``q`` with ``A ~ U diag(S) V^H`` (of ``A - M`` when ``M`` is given),
    by randomized subspace iteration (``niter`` rounds).

    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0)
    >>> A = torch.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1
    >>> U, S, V = torch.svd_lowrank(A, q=1)
    >>> round(S.item(), 4), bool(torch.allclose(U * S @ V.mT, A, atol=1e-5))
    (8.3666, True)
    """
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """Principal components of ``A``'s rows: ``svd_lowrank`` of ``A`` less its column means
    (``center``); ``q`` defaults to ``min(6, m, n)``.

    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0)
    >>> A = torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> U, S, V = torch.pca_lowrank(A, q=1)
    >>> round(S.item(), 4), [round(abs(v), 4) for v in V[:, 0].tolist()]
    (2.0, [0.7071, 0.7071])
    """
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
