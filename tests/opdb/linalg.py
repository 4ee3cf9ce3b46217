"""Op database entries for linear algebra: products (bmm, dot, vdot, mv, outer, inner, einsum, tensordot,
kron, addmm, addmv, baddbmm, matmul folding), ``torch.linalg`` (inv, det, slogdet, solve, cholesky, qr,
svd, eigh, norms, matrix_power, multi_dot, vecdot) and diagonals/triangles (trace, diag, diagonal,
diag_embed, tril, triu).

Decompositions are sampled away from their singular points (distinct singular values/eigenvalues,
well-conditioned matrices), and their outputs are made sign-invariant where the decomposition is only
defined up to signs (``U @ Vh``, ``Q * Q``), so values and gradients compare with PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import OpInfo, Sample, uniform


def _idx(*values: object) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _with(args: tuple[object, ...], name: str = "", **kwargs: object) -> Sample:
    return Sample(args, kwargs, name=name)


def _noncontig(args: tuple[object, ...], **kwargs: object) -> Sample:
    return Sample(args, kwargs, name="noncontiguous", noncontiguous=True)


def zero_d(sample: Sample, *positions: int) -> Sample:
    """Mark arguments the op's fn gets as 0-d tensors (the harness makes tensors at least 1-d)."""
    sample.kwargs["_0d"] = positions
    return sample


def _accepting_zero_d(fn):  # type: ignore[no-untyped-def]
    def wrapped(lib, *args, _0d=(), **kwargs):  # type: ignore[no-untyped-def]
        return fn(lib, *(a.reshape(()) if i in _0d else a for i, a in enumerate(args)), **kwargs)

    return wrapped


def regular(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Well-conditioned square matrices: random plus a multiple of the identity."""
    n = shape[-1]
    return uniform(rng, *shape, low=-1.0, high=1.0) + 2.5 * np.eye(n) * rng.choice([-1.0, 1.0], size=shape[:-1] + (1,))


def spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Symmetric positive-definite matrices."""
    b = uniform(rng, *shape, low=-1.0, high=1.0)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def rank_deficient(rng: np.random.Generator, n: int, rank: int) -> np.ndarray:
    """An n x n matrix of the given rank, exactly singular (its last rows are zero), then mixed by a permutation."""
    a = uniform(rng, n, n)
    a[rank:] = 0.0
    return a[rng.permutation(n)]


def near_singular(rng: np.random.Generator, n: int) -> np.ndarray:
    """A product of n x (n-1) and (n-1) x n matrices: rank n-1 up to rounding (det ~ 1e-16, not 0)."""
    return uniform(rng, n, n - 1) @ uniform(rng, n - 1, n)


def _square(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((regular(rng, 3, 3),), name="matrix"),
        Sample((regular(rng, 2, 3, 3),), name="batch"),
        Sample((regular(rng, 1, 1),), name="1x1"),
        Sample((regular(rng, 3, 3),), name="noncontiguous", noncontiguous=True),
        Sample((np.zeros((0, 0)),), name="empty"),
    ]


def _products(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 4)), name="batch"),
        Sample((uniform(rng, 1, 0, 3), uniform(rng, 1, 3, 2)), name="empty"),
        Sample((uniform(rng, 2, 3, 2), uniform(rng, 2, 3, 4)), name="noncontiguous", noncontiguous=True),
    ]


def _vectors(rng: np.random.Generator) -> list[Sample]:
    return [Sample((uniform(rng, 4), uniform(rng, 4))), Sample((uniform(rng, 0), uniform(rng, 0)), name="empty")]


EINSUM_CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)),
    ("ij,jk", (2, 3), (3, 4)),
    ("i,i->", (3,), (3,)),
    ("i,j->ij", (2,), (3,)),
    ("ij->ji", (2, 3)),
    ("ij->", (2, 3)),
    ("ij->j", (2, 3)),
    ("ii->i", (3, 3)),
    ("ii", (3, 3)),
    ("bij,bjk->bik", (2, 2, 3), (2, 3, 4)),
    ("ij,ij->ij", (2, 3), (2, 3)),
    ("ij,ij->i", (2, 3), (2, 3)),
    ("ij,kj->ik", (2, 3), (4, 3)),
    ("i,ij,j->", (2,), (2, 3), (3,)),
    ("...ij,...jk->...ik", (2, 2, 3), (3, 4)),
    ("b...,b...->b", (2, 3, 2), (2, 3, 2)),
    ("iij->j", (2, 2, 3)),
    ("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
    ("ba", (2, 3)),
    ("ij,j", (2, 0), (0,)),
    ("ij,jk->ik", (2, 1), (1, 4)),
    ("ij,jk->ik", (2, 3), (1, 4)),
    ("bij,bjk->bik", (1, 2, 3), (4, 3, 2)),
    ("iji->j", (2, 3, 2)),
    ("aBc,cBa->B", (2, 3, 4), (4, 3, 2)),
    ("i...,i...->...", (2, 3, 4), (2, 4)),
    ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)),
]


def _einsum(rng: np.random.Generator) -> list[Sample]:
    return [Sample((eq, *[uniform(rng, *s) for s in shapes]), name=eq) for eq, *shapes in EINSUM_CASES]


OPS: list[OpInfo] = [
    # -- products --
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b), _products, covers=("bmm",), variant_test_name="more"),
    OpInfo("dot", lambda lib, a, b: a.dot(b), _vectors, covers=("dot",), variant_test_name="more"),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), _vectors, covers=("vdot",)),
    OpInfo("mv", lambda lib, a, b: a.mv(b),
           lambda rng: [Sample((uniform(rng, 3, 2), uniform(rng, 3)), name="noncontiguous", noncontiguous=True),
                        Sample((uniform(rng, 0, 2), uniform(rng, 2)), name="empty")],
           covers=("mv",), variant_test_name="more"),
    OpInfo("outer", lambda lib, a, b: a.outer(b),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 2))), Sample((uniform(rng, 0), uniform(rng, 2)),
                                                                          name="empty")],
           covers=("outer",)),
    OpInfo("ger", lambda lib, a, b: lib.ger(a, b), lambda rng: [Sample((uniform(rng, 3), uniform(rng, 2)))],
           covers=("ger", "outer")),
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3)), name="vectors"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 4, 3)), name="matrices"),
                        Sample((uniform(rng, 2, 2, 3), uniform(rng, 3)), name="3-d and vector"),
                        zero_d(Sample((uniform(rng), uniform(rng, 3)), name="0-d"), 0),
                        Sample((uniform(rng, 3, 2), uniform(rng, 3, 4)), name="noncontiguous", noncontiguous=True)],
           covers=("inner",)),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, *ops), _einsum, covers=("einsum",)),
    OpInfo("einsum", lambda lib, a, b: lib.einsum("ij,jk->ik", [a, b]),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)))], covers=("einsum",), variant_test_name="list"),
    OpInfo("einsum", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)))], covers=("einsum",), variant_test_name="sublist"),
    OpInfo("tensordot", lambda lib, a, b, dims: lib.tensordot(a, b, dims=dims),
           lambda rng: [_with((uniform(rng, 2, 3, 4), uniform(rng, 3, 4, 5)), "two", dims=2),
                        _with((uniform(rng, 2, 3), uniform(rng, 3, 4)), "one", dims=1),
                        _with((uniform(rng, 2, 3), uniform(rng, 4, 5)), "outer", dims=0),
                        _with((uniform(rng, 3), uniform(rng, 3)), "vectors", dims=1),
                        _with((uniform(rng, 2, 3), uniform(rng, 2, 3)), "full", dims=2),
                        _with((uniform(rng, 2, 3, 4), uniform(rng, 4, 5, 3)), "lists", dims=([1, 2], [2, 0])),
                        _with((uniform(rng, 2, 3), uniform(rng, 3)), "one side free", dims=([1], [0])),
                        _noncontig((uniform(rng, 3, 2), uniform(rng, 4, 3)), dims=1)],
           covers=("tensordot",)),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)), name="matrices"),
                        Sample((uniform(rng, 2), uniform(rng, 2, 3)), name="vector and matrix"),
                        zero_d(Sample((uniform(rng), uniform(rng, 2)), name="0-d"), 0),
                        Sample((uniform(rng, 3, 2), uniform(rng, 2, 2)), name="noncontiguous", noncontiguous=True)],
           covers=("kron",)),
    OpInfo("addmm", lambda lib, x, a, b, beta, alpha: lib.addmm(x, a, b, beta=beta, alpha=alpha),
           lambda rng: [Sample((uniform(rng, 2, 4), uniform(rng, 2, 3), uniform(rng, 3, 4), 1, 1), name="plain"),
                        Sample((uniform(rng, 4), uniform(rng, 2, 3), uniform(rng, 3, 4), 0.5, 2.0), name="broadcast"),
                        zero_d(Sample((uniform(rng), uniform(rng, 2, 3), uniform(rng, 3, 4), 0, 1), name="beta 0"), 0),
                        Sample((uniform(rng, 4, 2), uniform(rng, 3, 2), uniform(rng, 4, 3), 1, -1),
                               name="noncontiguous", noncontiguous=True)],
           covers=("addmm",)),
    OpInfo("addmm", lambda lib, x, a, b: x.addmm(a, b, alpha=0.5),
           lambda rng: [Sample((uniform(rng, 2, 2), uniform(rng, 2, 3), uniform(rng, 3, 2)))], covers=("addmm",), variant_test_name="method"),
    OpInfo("addmm", lambda lib, x, a, b: (x * 1).addmm_(a, b, beta=0.5),
           lambda rng: [Sample((uniform(rng, 2, 2), uniform(rng, 2, 3), uniform(rng, 3, 2)))], covers=("addmm_",), variant_test_name="inplace"),
    OpInfo("addmv", lambda lib, x, a, v, beta, alpha: lib.addmv(x, a, v, beta=beta, alpha=alpha),
           lambda rng: [Sample((uniform(rng, 2), uniform(rng, 2, 3), uniform(rng, 3), 1, 1), name="plain"),
                        Sample((uniform(rng, 1), uniform(rng, 2, 3), uniform(rng, 3), 2.0, 0.5), name="broadcast"),
                        Sample((uniform(rng, 2), uniform(rng, 3, 2), uniform(rng, 3), 0, 1), name="noncontiguous", noncontiguous=True)],
           covers=("addmv",)),
    OpInfo("baddbmm", lambda lib, x, a, b, beta, alpha: x.baddbmm(a, b, beta=beta, alpha=alpha),
           lambda rng: [Sample((uniform(rng, 2, 2, 4), uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 4), 1, 1)),
                        Sample((uniform(rng, 4), uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 4), 0.5, 2), name="bcast")],
           covers=("baddbmm",)),
    OpInfo("baddbmm", lambda lib, x, a, b: lib.baddbmm(x, a, b),
           lambda rng: [Sample((uniform(rng, 1, 2, 1), uniform(rng, 3, 2, 3), uniform(rng, 3, 3, 1)))],
           covers=("baddbmm",), variant_test_name="fn"),
    OpInfo("matmul", lambda lib, a, b: a @ b,
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3, 2)), name="1d@2d"),
                        Sample((uniform(rng, 3), uniform(rng, 2, 3, 2)), name="1d@3d"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 4, 3, 2)), name="2d@3d"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 2, 4, 3, 2)), name="2d@4d")],
           covers=("matmul", "__matmul__"), variant_test_name="fold"),
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 4, 3, 2)), grad=(True, False))],
           covers=("matmul",), variant_test_name="fold_one_grad"),
    # -- diagonals, triangles, trace --
    OpInfo("trace", lambda lib, a: a.trace(),
           lambda rng: [Sample((uniform(rng, 3, 3),), name="square"), Sample((uniform(rng, 2, 4),), name="wide"),
                        Sample((uniform(rng, 3, 2),), name="noncontiguous", noncontiguous=True),
                        Sample((np.arange(6).reshape(2, 3).astype(np.int32),), name="int")],
           covers=("trace",)),
    OpInfo("trace", lambda lib, a: lib.trace(a), lambda rng: [Sample((uniform(rng, 2, 2),))], covers=("trace",), variant_test_name="fn"),
    OpInfo("diagonal", lambda lib, a, offset, dim1, dim2: a.diagonal(offset, dim1, dim2),
           lambda rng: [Sample((uniform(rng, 3, 4), 0, 0, 1), name="main"),
                        Sample((uniform(rng, 3, 4), 2, 0, 1), name="above"),
                        Sample((uniform(rng, 3, 4), -1, 1, 0), name="below, swapped dims"),
                        Sample((uniform(rng, 2, 3, 4), 1, -1, 0), name="batched"),
                        Sample((uniform(rng, 3, 4), 5, 0, 1), name="empty"),
                        Sample((uniform(rng, 4, 3), 1, 0, 1), name="noncontiguous", noncontiguous=True)],
           covers=("diagonal",)),
    OpInfo("diagonal", lambda lib, a: lib.diagonal(a, 0, -2, -1), lambda rng: [Sample((uniform(rng, 2, 3, 3),))],
           covers=("diagonal",), variant_test_name="fn"),
    OpInfo("linalg.diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=-1),
           lambda rng: [Sample((uniform(rng, 2, 3, 3),))], covers=("linalg.diagonal",)),
    OpInfo("diag", lambda lib, a, k: lib.diag(a, k),
           lambda rng: [Sample((uniform(rng, 3), 0), name="vector"),
                        Sample((uniform(rng, 3), -2), name="vector offset"),
                        Sample((uniform(rng, 3, 4), 1), name="matrix"),
                        Sample((uniform(rng, 4, 3), -1), name="noncontiguous", noncontiguous=True)],
           covers=("diag",)),
    OpInfo("diag_embed", lambda lib, a, offset, dim1, dim2: lib.diag_embed(a, offset, dim1, dim2),
           lambda rng: [Sample((uniform(rng, 2, 3), 0, -2, -1), name="default"),
                        Sample((uniform(rng, 2, 3), 1, 0, 2), name="offset, outer dims"),
                        Sample((uniform(rng, 2, 3), -1, 2, 0), name="swapped"),
                        Sample((uniform(rng, 3, 2), 0, -2, -1), name="noncontiguous", noncontiguous=True)],
           covers=("diag_embed",)),
    OpInfo("tril", lambda lib, a, k: a.tril(k),
           lambda rng: [Sample((uniform(rng, 3, 4), 0), name="main"), Sample((uniform(rng, 2, 3, 3), -1), name="batch"),
                        Sample((uniform(rng, 3, 4), 5), name="all"), Sample((uniform(rng, 4, 3), 1),
                                                                            name="noncontiguous", noncontiguous=True)],
           covers=("tril",)),
    OpInfo("triu", lambda lib, a, k: lib.triu(a, k),
           lambda rng: [Sample((uniform(rng, 3, 4), 0), name="main"), Sample((uniform(rng, 2, 3, 3), 1), name="batch"),
                        Sample((uniform(rng, 0, 3), 0), name="empty")],
           covers=("triu",)),
    OpInfo("tril", lambda lib, a: a.clone().tril_(-1), lambda rng: [Sample((uniform(rng, 3, 3),))],
           covers=("tril_",), variant_test_name="inplace"),
    OpInfo("triu", lambda lib, a: (a * 2).triu_(), lambda rng: [Sample((uniform(rng, 3, 3),))],
           covers=("triu_",), variant_test_name="inplace"),
    # -- torch.linalg: inverse, determinants, solve --
    OpInfo("linalg.inv", lambda lib, a: lib.linalg.inv(a), _square, covers=("linalg.inv",)),
    OpInfo("inverse", lambda lib, a: lib.inverse(a), lambda rng: [Sample((regular(rng, 3, 3),))],
           covers=("inverse",)),
    OpInfo("inverse", lambda lib, a: a.inverse(), lambda rng: [Sample((regular(rng, 2, 2),))],
           covers=("inverse",), variant_test_name="method"),
    OpInfo("linalg.det", lambda lib, a: lib.linalg.det(a), _square, covers=("linalg.det",)),
    # Exactly singular inputs: PyTorch 2.13 returns a zero gradient there (wrong: the gradient of det is the
    # cofactor matrix, nonzero at rank n-1), so these are checked by gradcheck and against explicit cofactors
    # (tests/ops/test_linalg_errors.py), not against PyTorch.
    OpInfo("det", lambda lib, a: lib.det(a),
           lambda rng: [Sample((rank_deficient(rng, 3, 2),), name="rank n-1"),
                        Sample((rank_deficient(rng, 4, 3),), name="rank n-1, 4x4"),
                        Sample((np.stack([rank_deficient(rng, 3, 2), regular(rng, 3, 3)]),), name="mixed batch")],
           parity=False, covers=("det",), variant_test_name="singular"),
    OpInfo("det", lambda lib, a: lib.linalg.det(a),
           lambda rng: [Sample((near_singular(rng, 3),), name="rank n-1 product"),
                        Sample((np.stack([near_singular(rng, 4), regular(rng, 4, 4)]),), name="mixed batch"),
                        Sample((np.zeros((1, 1)),), name="zero 1x1")],
           covers=("linalg.det",), variant_test_name="near_singular"),
    OpInfo("det", lambda lib, a: a.det(), lambda rng: [Sample((regular(rng, 2, 3, 3),))], covers=("det",), variant_test_name="method"),
    OpInfo("det", lambda lib, a: a.det(), lambda rng: [Sample((rank_deficient(rng, 4, 2),))],
           gradgradcheck=False, covers=("det",), variant_test_name="rank_n_minus_2"),
    OpInfo("linalg.slogdet", lambda lib, a: tuple(lib.linalg.slogdet(a)), _square, covers=("linalg.slogdet",)),
    OpInfo("slogdet", lambda lib, a: lib.slogdet(a).logabsdet, lambda rng: [Sample((regular(rng, 2, 3, 3),))],
           covers=("slogdet",)),
    OpInfo("logdet", lambda lib, a: lib.logdet((a + a.mT) / 2),
           lambda rng: [Sample((spd(rng, 3, 3),)), Sample((spd(rng, 2, 2, 2),), name="batch")],
           covers=("logdet",)),
    OpInfo("logdet", lambda lib, a: a.logdet(), lambda rng: [Sample((np.diag([1.0, -2.0, 3.0]),))],
           gradcheck=False, covers=("logdet",), variant_test_name="negative"),
    OpInfo("linalg.solve", lambda lib, a, b, left: lib.linalg.solve(a, b, left=left),
           lambda rng: [Sample((regular(rng, 3, 3), uniform(rng, 3, 2), True), name="matrix"),
                        Sample((regular(rng, 3, 3), uniform(rng, 3), True), name="vector"),
                        Sample((regular(rng, 2, 3, 3), uniform(rng, 2, 3), True), name="batch of vectors"),
                        Sample((regular(rng, 2, 3, 3), uniform(rng, 3, 1), True), name="broadcast B"),
                        Sample((regular(rng, 3, 3), uniform(rng, 2, 3, 2), True), name="broadcast A"),
                        Sample((regular(rng, 3, 3), uniform(rng, 2, 3), False), name="left=False"),
                        Sample((regular(rng, 3, 3), uniform(rng, 2, 3), True), name="noncontiguous", noncontiguous=True)],
           covers=("linalg.solve",)),
    OpInfo("linalg.cholesky", lambda lib, a, upper: lib.linalg.cholesky((a + a.mT) / 2, upper=upper),
           lambda rng: [Sample((spd(rng, 3, 3), False), name="lower"), Sample((spd(rng, 2, 3, 3), True), name="upper"),
                        Sample((spd(rng, 1, 1), False), name="1x1")],
           covers=("linalg.cholesky",)),
    OpInfo("cholesky", lambda lib, a: _quiet(lambda: ((a + a.mT) / 2).cholesky()),
           lambda rng: [Sample((spd(rng, 3, 3),))], covers=("cholesky",), variant_test_name="legacy"),
    # -- factorizations --
    OpInfo("linalg.qr", lambda lib, a, mode: tuple(lib.linalg.qr(a, mode=mode)),
           lambda rng: [Sample((uniform(rng, 4, 3), "reduced"), name="tall"),
                        Sample((uniform(rng, 3, 3), "reduced"), name="square"),
                        Sample((uniform(rng, 2, 4), "reduced"), name="wide"),
                        Sample((uniform(rng, 2, 3, 2), "reduced"), name="batch"),
                        Sample((uniform(rng, 2, 4), "complete"), name="complete wide"),
                        Sample((uniform(rng, 3, 4), "reduced"), name="noncontiguous", noncontiguous=True)],
           covers=("linalg.qr",)),
    OpInfo("linalg.qr", lambda lib, a: lib.linalg.qr(a, mode="r").R,
           lambda rng: [Sample((uniform(rng, 4, 3),), grad=(False,))], covers=("linalg.qr",), variant_test_name="linalg_qr_r"),
    OpInfo("linalg.svd", lambda lib, a, full: _svd_invariants(lib, a, full),
           lambda rng: [Sample((uniform(rng, 4, 3), False), name="tall"),
                        Sample((uniform(rng, 3, 3), True), name="square"),
                        Sample((uniform(rng, 2, 4), False), name="wide"),
                        Sample((uniform(rng, 4, 3), True), name="tall full"),
                        Sample((uniform(rng, 2, 4), True), name="wide full"),
                        Sample((uniform(rng, 2, 3, 2), False), name="batch"),
                        Sample((uniform(rng, 3, 4), False), name="noncontiguous", noncontiguous=True)],
           covers=("linalg.svd",)),
    OpInfo("linalg.svd", lambda lib, a: lib.linalg.svd(a).S,
           lambda rng: [Sample((uniform(rng, 4, 3),)), Sample((uniform(rng, 2, 3, 2),), name="batch")],
           covers=("linalg.svd",), variant_test_name="linalg_svd_S"),
    OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a),
           lambda rng: [Sample((uniform(rng, 4, 3),)), Sample((uniform(rng, 2, 2, 5),), name="batch")],
           covers=("linalg.svdvals",), variant_test_name="svdvals"),
    OpInfo("svd", lambda lib, a: _svd_legacy_invariants(lib, a),
           lambda rng: [Sample((uniform(rng, 4, 3),))], covers=("svd",), variant_test_name="legacy"),
    OpInfo("linalg.eigh", lambda lib, a, uplo: _eigh_invariants(lib, a, uplo),
           lambda rng: [Sample((uniform(rng, 3, 3), "L"), name="lower"),
                        Sample((uniform(rng, 3, 3), "U"), name="upper"),
                        Sample((uniform(rng, 2, 4, 4), "L"), name="batch")],
           covers=("linalg.eigh",)),
    OpInfo("linalg.eigh", lambda lib, a: lib.linalg.eigh(a).eigenvalues,
           lambda rng: [Sample((spd(rng, 3, 3),), name="not symmetrised")], gradcheck=False, covers=("linalg.eigh",), variant_test_name="linalg_eigh_raw"),
    OpInfo("linalg.eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a + a.mT),
           lambda rng: [Sample((uniform(rng, 3, 3),)), Sample((uniform(rng, 2, 3, 3),), name="batch")],
           covers=("linalg.eigvalsh",)),
    # -- norms --
    OpInfo("linalg.vector_norm", lambda lib, a, order, dim, keepdim: lib.linalg.vector_norm(a, order, dim, keepdim),
           lambda rng: [Sample((uniform(rng, 3, 4), 2, None, False), name="all"),
                        Sample((uniform(rng, 3, 4), 1, 1, False), name="ord 1"),
                        Sample((uniform(rng, 3, 4), float("inf"), (0,), True), name="inf keepdim"),
                        Sample((uniform(rng, 3, 4), -float("inf"), -1, False), name="-inf"),
                        Sample((uniform(rng, 2, 3, 4), 3, (0, 2), False), name="ord 3"),
                        Sample((uniform(rng, 3, 4), 0, 1, False), grad=(False,), name="ord 0"),
                        zero_d(Sample((uniform(rng), 2, None, False), name="0-d"), 0),
                        Sample((uniform(rng, 4, 3), 2, 0, True), name="noncontiguous", noncontiguous=True)],
           covers=("linalg.vector_norm",)),
    OpInfo("linalg.vector_norm", lambda lib, a: lib.linalg.vector_norm(a.float(), dtype=lib.float64),
           lambda rng: [Sample((uniform(rng, 3),))], covers=("linalg.vector_norm",), gradcheck=False, variant_test_name="linalg_vector_norm_dtype"),
    OpInfo("linalg.matrix_norm",
           lambda lib, a, order: lib.linalg.matrix_norm(a.float(), order, dtype=lib.float64),
           lambda rng: [Sample((uniform(rng, 3, 3), "fro")), Sample((uniform(rng, 3, 3), 1), name="1")],
           covers=("linalg.matrix_norm",), gradcheck=False, variant_test_name="linalg_matrix_norm_dtype"),
    OpInfo("linalg.matrix_norm", lambda lib, a, order, keepdim: lib.linalg.matrix_norm(a, order, keepdim=keepdim),
           lambda rng: [Sample((uniform(rng, 3, 4), ord_, keepdim), name=f"{ord_} keepdim={keepdim}")
                        for ord_ in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf"))
                        for keepdim in (False, True)],
           covers=("linalg.matrix_norm",)),
    OpInfo("linalg.matrix_norm", lambda lib, a, order: lib.linalg.matrix_norm(a, order, dim=(2, 0)),
           lambda rng: [Sample((uniform(rng, 3, 2, 4), ord_), name=str(ord_)) for ord_ in ("fro", "nuc", 1, -2)],
           covers=("linalg.matrix_norm",), variant_test_name="linalg_matrix_norm_dims"),
    OpInfo("linalg.norm", lambda lib, a, order, dim: lib.linalg.norm(a, order, dim),
           lambda rng: [Sample((uniform(rng, 3, 4), None, None), name="default"),
                        Sample((uniform(rng, 2, 3, 4), None, None), name="3-d default"),
                        Sample((uniform(rng, 3, 4), 2, None), name="matrix 2"),
                        Sample((uniform(rng, 3, 4), "fro", None), name="fro"),
                        Sample((uniform(rng, 4), 1, None), name="vector 1"),
                        Sample((uniform(rng, 3, 4), 1, 0), name="dim int"),
                        Sample((uniform(rng, 2, 3, 4), "nuc", (1, 2)), name="dim pair")],
           covers=("linalg.norm",)),
    # -- more --
    OpInfo("matrix_power", lambda lib, a, n: lib.linalg.matrix_power(a, n),
           lambda rng: [Sample((regular(rng, 3, 3), n), name=str(n)) for n in (0, 1, 2, 3, 5, -2)]
           + [Sample((regular(rng, 2, 2, 2), 4), name="batch")],
           covers=("linalg.matrix_power",)),
    OpInfo("matrix_power", lambda lib, a: a.matrix_power(3), lambda rng: [Sample((uniform(rng, 2, 2),))],
           covers=("matrix_power",), variant_test_name="method"),
    OpInfo("linalg.multi_dot", lambda lib, *ts: lib.linalg.multi_dot(ts),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 4), uniform(rng, 4, 2)), name="matrices"),
                        Sample((uniform(rng, 3), uniform(rng, 3, 4), uniform(rng, 4)), name="vectors at ends"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 3, 4), uniform(rng, 4, 2), uniform(rng, 2, 5)),
                               name="four")],
           covers=("linalg.multi_dot",), variant_test_name="multi_dot"),
    OpInfo("linalg.vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0),
           lambda rng: [Sample((uniform(rng, 3, 2), uniform(rng, 3, 1)))], covers=("linalg.vecdot",), variant_test_name="vecdot"),
    OpInfo("linalg.matmul", lambda lib, a, b: lib.linalg.matmul(a, b),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)))], covers=("linalg.matmul",)),
    OpInfo("addr", lambda lib, x, a, b, beta, alpha: lib.addr(x, a, b, beta=beta, alpha=alpha),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 2), uniform(rng, 3), 1, 1), name="plain"),
                        Sample((uniform(rng, 3), uniform(rng, 2), uniform(rng, 3), 0.5, 2.0), name="broadcast"),
                        zero_d(Sample((uniform(rng), uniform(rng, 2), uniform(rng, 3), 0, -1), name="beta 0"), 0),
                        Sample((uniform(rng, 3, 2), uniform(rng, 2), uniform(rng, 3), 2, 1),
                               name="noncontiguous", noncontiguous=True)],
           covers=("addr",)),
    OpInfo("addr", lambda lib, x, a, b: (x * 1).addr_(a, b, alpha=0.5),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 2), uniform(rng, 3)))], covers=("addr_",),
           variant_test_name="inplace"),
    OpInfo("addbmm", lambda lib, x, a, b, beta, alpha: lib.addbmm(x, a, b, beta=beta, alpha=alpha),
           lambda rng: [Sample((uniform(rng, 2, 4), uniform(rng, 3, 2, 3), uniform(rng, 3, 3, 4), 1, 1), name="plain"),
                        Sample((uniform(rng, 4), uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 4), 0.5, 2), name="bcast"),
                        Sample((uniform(rng, 2, 2), uniform(rng, 2, 2, 3), uniform(rng, 3, 2, 2), 0, 1),
                               name="noncontiguous", noncontiguous=True)],
           covers=("addbmm",)),
    OpInfo("addbmm", lambda lib, x, a, b: (x * 1).addbmm_(a, b, beta=0.5),
           lambda rng: [Sample((uniform(rng, 2, 4), uniform(rng, 3, 2, 3), uniform(rng, 3, 3, 4)))],
           covers=("addbmm_",), variant_test_name="inplace"),
    OpInfo("addmv", lambda lib, x, a, v: lib.addmv_(x * 1, a, v, alpha=2),
           lambda rng: [Sample((uniform(rng, 2), uniform(rng, 2, 3), uniform(rng, 3)))], covers=("addmv_",),
           variant_test_name="inplace"),
    OpInfo("baddbmm", lambda lib, x, a, b: (x * 1).baddbmm_(a, b, alpha=-1),
           lambda rng: [Sample((uniform(rng, 2, 2, 4), uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 4)))],
           covers=("baddbmm_",), variant_test_name="inplace"),
    OpInfo("cross", lambda lib, a, b, dim: lib.cross(a, b, dim=dim),
           lambda rng: [Sample((uniform(rng, 4, 3), uniform(rng, 4, 3), 1), name="rows"),
                        Sample((uniform(rng, 3, 2), uniform(rng, 3, 1), 0), name="broadcast"),
                        Sample((uniform(rng, 3, 2), uniform(rng, 3, 2), -1), name="noncontiguous",
                               noncontiguous=True)],
           covers=("cross",)),
    OpInfo("cross", lambda lib, a, b: a.cross(b, 0), lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3)))],
           covers=("cross",), variant_test_name="method"),
    OpInfo("linalg.cross", lambda lib, a, b, **kw: lib.linalg.cross(a, b, **kw),
           lambda rng: [Sample((uniform(rng, 4, 3), uniform(rng, 4, 3)), name="last dim"),
                        _with((uniform(rng, 2, 1, 3), uniform(rng, 1, 4, 3)), "broadcast"),
                        _with((uniform(rng, 3, 2), uniform(rng, 3, 2)), "dim 0", dim=0),
                        _with((uniform(rng, 3, 5), uniform(rng, 3, 1)), "negative dim broadcast", dim=-2),
                        _noncontig((uniform(rng, 3, 2), uniform(rng, 3, 2)))],
           covers=("linalg.cross",)),
    OpInfo("chain_matmul", lambda lib, a, b, c: _quiet(lambda: lib.chain_matmul(a, b, c)),
           lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 4), uniform(rng, 4, 2)))], covers=("chain_matmul",)),
    OpInfo("pinverse", lambda lib, a: lib.pinverse(a),
           lambda rng: [Sample((regular(rng, 3, 3),), name="square"),
                        Sample((uniform(rng, 2, 4),), name="wide"),
                        Sample((uniform(rng, 2, 4, 3),), name="tall batch")],
           covers=("pinverse",), atol=1e-4),
    OpInfo("matrix_exp", lambda lib, a: lib.matrix_exp(a),
           lambda rng: [Sample((uniform(rng, 3, 3),), name="matrix"),
                        Sample((uniform(rng, 2, 2, 2) * 3,), name="batch, scaled"),
                        Sample((uniform(rng, 1, 1),), name="1x1")],
           covers=("matrix_exp",)),
    OpInfo("matrix_exp", lambda lib, a: a.matrix_exp(), lambda rng: [Sample((uniform(rng, 2, 2),))],
           covers=("matrix_exp",), variant_test_name="method"),
    # cdist: every p PyTorch special-cases, and the matrix-product path (more than 25 rows)
    OpInfo("cdist", lambda lib, a, b, p, *mode: lib.cdist(a, b, p, *mode),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 5, 4), 2.0), name="p=2"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 2, 4), 1.0), name="p=1"),
                        Sample((uniform(rng, 3, 2), uniform(rng, 2, 2), 0.0), name="p=0"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 2, 4), float("inf")), name="p=inf"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 2, 4), 3.0), name="p=3"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 2, 4), 1.5), name="p=1.5"),
                        Sample((uniform(rng, 2, 3, 4), uniform(rng, 1, 2, 4), 2.0), name="batch broadcast"),
                        Sample((uniform(rng, 3, 4), uniform(rng, 5, 4), 2.0, "use_mm_for_euclid_dist"),
                               name="matrix product"),
                        Sample((uniform(rng, 2, 26, 3), uniform(rng, 2, 4, 3), 2.0), name="matrix product if necessary"),
                        Sample((uniform(rng, 26, 3), uniform(rng, 4, 3), 2.0, "donot_use_mm_for_euclid_dist"),
                               name="no matrix product")],
           covers=("cdist",)),
    OpInfo("linalg.solve_triangular",
           lambda lib, a, b, upper, left, unit: lib.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                                            unitriangular=unit),
           lambda rng: [Sample((regular(rng, 3, 3), uniform(rng, 3, 2), False, True, False), name="lower"),
                        Sample((regular(rng, 3, 3), uniform(rng, 3, 2), True, True, False), name="upper"),
                        Sample((regular(rng, 3, 3), uniform(rng, 2, 3), True, False, False), name="right"),
                        Sample((regular(rng, 3, 3), uniform(rng, 4, 3), False, False, True), name="right, unit"),
                        Sample((regular(rng, 2, 3, 3), uniform(rng, 3, 1), False, True, True), name="batch, unit")],
           covers=("linalg.solve_triangular",)),
    OpInfo("triangular_solve", lambda lib, b, a, upper, transpose, unit: lib.triangular_solve(b, a, upper, transpose,
                                                                                             unit),
           lambda rng: [Sample((uniform(rng, 3, 2), regular(rng, 3, 3), True, False, False), name="upper"),
                        Sample((uniform(rng, 3, 2), regular(rng, 3, 3), False, True, False), name="lower, transposed"),
                        Sample((uniform(rng, 2, 3, 1), regular(rng, 3, 3), True, True, True),
                               name="batch, transposed, unit")],
           covers=("triangular_solve",)),
    OpInfo("triangular_solve", lambda lib, b, a: b.triangular_solve(a, upper=False).solution,
           lambda rng: [Sample((uniform(rng, 3, 2), regular(rng, 3, 3)))], variant_test_name="method"),
    # (the factor's other triangle is never read: the samples keep the one triangle, as PyTorch's tests)
    OpInfo("cholesky_solve", lambda lib, b, a, upper: lib.cholesky_solve(b, a.triu() if upper else a.tril(), upper),
           lambda rng: [Sample((uniform(rng, 3, 2), regular(rng, 3, 3), False), name="lower"),
                        Sample((uniform(rng, 3, 2), regular(rng, 3, 3), True), name="upper"),
                        Sample((uniform(rng, 2, 3, 1), regular(rng, 3, 3), False), name="batch")],
           covers=("cholesky_solve",)),
    OpInfo("cholesky_inverse", lambda lib, a, upper: lib.cholesky_inverse(a.triu() if upper else a.tril(), upper),
           lambda rng: [Sample((regular(rng, 3, 3), False), name="lower"),
                        Sample((regular(rng, 3, 3), True), name="upper"),
                        Sample((regular(rng, 2, 2, 2), False), name="batch")],
           covers=("cholesky_inverse",)),
    OpInfo("cholesky_inverse", lambda lib, a: a.tril().cholesky_inverse(),
           lambda rng: [Sample((regular(rng, 3, 3),))], variant_test_name="method"),
    # deprecated torch.* spellings (they warn once, as PyTorch's)
    OpInfo("qr", lambda lib, a, some: _quiet(lambda: (lambda q: (q.Q @ q.R, q.R * q.R))(lib.qr(a, some))),
           lambda rng: [Sample((uniform(rng, 4, 3), True), name="reduced"),
                        Sample((uniform(rng, 3, 3), False), name="complete, square"),
                        Sample((uniform(rng, 2, 3, 3), True), name="batch")],
           covers=("qr",)),
    OpInfo("qr", lambda lib, a: _quiet(lambda: (lambda q: q.Q @ q.R)(a.qr())), lambda rng: [Sample((uniform(rng, 3, 2),))],
           variant_test_name="method"),
    OpInfo("frobenius_norm", lambda lib, a, dim, keepdim: _quiet(lambda: lib.frobenius_norm(a, dim, keepdim)),
           lambda rng: [Sample((uniform(rng, 3, 4), (0, 1), False), name="matrix"),
                        Sample((uniform(rng, 2, 3, 4), (-1, 0), True), name="two dims, keepdim"),
                        Sample((uniform(rng, 3, 4), 1, False), name="one dim")],
           covers=("frobenius_norm",)),
    OpInfo("nuclear_norm", lambda lib, a, *dim: _quiet(lambda: lib.nuclear_norm(a, *dim)),
           lambda rng: [Sample((uniform(rng, 4, 3),), name="matrix"),
                        Sample((uniform(rng, 3, 2, 4), (0, 2)), name="dims"),
                        Sample((uniform(rng, 2, 3, 3),), name="batch")],
           covers=("nuclear_norm",), atol=1e-4),
    # LU: packed factors (pivots as ints), unpacked P L U, and the solve
    OpInfo("lu", lambda lib, a: _quiet(lambda: lib.lu(a)[0]),
           lambda rng: [Sample((uniform(rng, 3, 3),), name="square"), Sample((uniform(rng, 2, 3, 3),), name="batch"),
                        Sample((uniform(rng, 4, 3),), name="tall"), Sample((uniform(rng, 3, 4),), name="wide")],
           covers=("lu",)),
    OpInfo("lu", lambda lib, a: _quiet(lambda: a.lu()[0]), lambda rng: [Sample((uniform(rng, 2, 2),))],
           variant_test_name="method"),
    OpInfo("lu_unpack", lambda lib, a: _quiet(lambda: lib.lu_unpack(*lib.lu(a)))[1:],
           lambda rng: [Sample((uniform(rng, 3, 3),), name="square"), Sample((uniform(rng, 4, 2),), name="tall"),
                        Sample((uniform(rng, 2, 4),), name="wide")],
           covers=("lu_unpack",)),
    OpInfo("lu_solve", lambda lib, b, a: _quiet(lambda: lib.lu_solve(b, *lib.lu(a))),
           lambda rng: [Sample((uniform(rng, 3, 2), regular(rng, 3, 3)), name="matrix"),
                        Sample((uniform(rng, 2, 3, 1), regular(rng, 2, 3, 3)), name="batch")],
           covers=("lu_solve",)),
    OpInfo("lu_solve", lambda lib, b, a: _quiet(lambda: b.lu_solve(*lib.lu(a))),
           lambda rng: [Sample((uniform(rng, 2, 1), regular(rng, 2, 2)))], variant_test_name="method"),
    OpInfo("linalg.matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a),
           lambda rng: [Sample((uniform(rng, 3, 3) * 4,), name="norm above the Taylor radius"),
                        Sample((uniform(rng, 2, 2, 2),), name="batch"),
                        Sample((uniform(rng, 0, 3, 3),), name="empty batch")],
           covers=("linalg.matrix_exp",)),
    OpInfo("linalg.householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau),
           lambda rng: [Sample((uniform(rng, 4, 3), uniform(rng, 2)), name="two reflectors"),
                        Sample((uniform(rng, 2, 3, 3), uniform(rng, 2, 3)), name="batch, square")],
           covers=("linalg.householder_product",)),
    OpInfo("orgqr", lambda lib, a, tau: a.orgqr(tau), lambda rng: [Sample((uniform(rng, 4, 2), uniform(rng, 2)))],
           covers=("orgqr",)),
    OpInfo("ormqr", lambda lib, a, tau, c, left, transpose: lib.ormqr(a, tau, c, left, transpose),
           lambda rng: [Sample((uniform(rng, 4, 3), uniform(rng, 3), uniform(rng, 4, 2), True, False), name="left"),
                        Sample((uniform(rng, 4, 3), uniform(rng, 3), uniform(rng, 4, 2), True, True),
                               name="left, transposed"),
                        Sample((uniform(rng, 2, 3, 3), uniform(rng, 2, 3), uniform(rng, 2, 2, 3), False, False),
                               name="right, batch"),
                        Sample((uniform(rng, 3, 3), uniform(rng, 3), uniform(rng, 2, 3), False, True),
                               name="right, transposed")],
           covers=("ormqr",)),
]


def _svd_invariants(lib, a, full):  # type: ignore[no-untyped-def]
    """S, and U Vh over the first k singular vectors: defined whatever the signs LAPACK picks."""
    u, s, vh = lib.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return s, u[..., :, :k] @ vh[..., :k, :], (u[..., :, :k] * s.unsqueeze(-2)) @ vh[..., :k, :]


def _svd_legacy_invariants(lib, a):  # type: ignore[no-untyped-def]
    u, s, v = lib.svd(a)
    return s, u @ v.mT


def _eigh_invariants(lib, a, uplo):  # type: ignore[no-untyped-def]
    values, vectors = lib.linalg.eigh(a + a.mT, UPLO=uplo)
    return values, vectors * vectors


for _op in OPS:
    _op.fn = _accepting_zero_d(_op.fn)


def _quiet(fn):  # type: ignore[no-untyped-def]
    """Run a deprecated API without its (expected) deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn()
