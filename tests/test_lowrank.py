"""``svd_lowrank`` / ``pca_lowrank``: on exactly low-rank inputs the factors reconstruct the
matrix, are orthonormal, and (same seed: the same random draws as PyTorch) the singular values
are PyTorch's and the singular vectors PyTorch's up to each column's sign (the SVD's own sign
convention is free); gradients by gradcheck; PyTorch's argument errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _low_rank(shape: tuple[int, ...], rank: int, complex_: bool = False, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    left = rng.standard_normal((*shape[:-1], rank))
    if complex_:
        left = left + 1j * rng.standard_normal(left.shape)
    return np.asarray(left @ rng.standard_normal((*shape[:-2], rank, shape[-1])))


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.resolve_conj().detach().numpy())


def _same_up_to_column_signs(got: np.ndarray, want: np.ndarray) -> None:
    # columns agree up to a unit factor: |<got_j, want_j>| = 1
    overlap = np.abs(np.sum(np.conj(got) * want, axis=-2))
    np.testing.assert_allclose(overlap, 1.0, atol=1e-8)


CASES = [((8, 5), 2, False), ((5, 9), 3, False), ((2, 7, 6), 2, False), ((6, 5), 2, True)]


@pytest.mark.parametrize(("shape", "rank", "complex_"), CASES)
@pytest.mark.parametrize("pca", [False, True], ids=["svd_lowrank", "pca_lowrank"])
def test_lowrank_factors_match_torch_on_low_rank_inputs(torch: Any, shape: tuple[int, ...], rank: int,
                                                         complex_: bool, pca: bool) -> None:
    a = _low_rank(shape, rank, complex_)
    results = []
    for lib in (rg, torch):
        lib.manual_seed(3)
        call = (lambda t: lib.pca_lowrank(t, q=rank)) if pca else (lambda t: lib.svd_lowrank(t, q=rank, niter=2))
        u, s, v = call(lib.tensor(a))
        results.append((_np(u), _np(s), _np(v)))
    (u, s, v), (u_t, s_t, v_t) = results
    assert u.shape == u_t.shape and s.shape == s_t.shape and v.shape == v_t.shape
    np.testing.assert_allclose(s, s_t, rtol=1e-10)
    _same_up_to_column_signs(u, u_t)
    _same_up_to_column_signs(v, v_t)
    target = a - a.mean(axis=-2, keepdims=True) if pca else a
    np.testing.assert_allclose((u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), target, atol=1e-9)
    eye = np.eye(rank)
    np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(eye, u.shape[:-2] + eye.shape),
                               atol=1e-10)


def test_svd_lowrank_with_mean_matrix_factors_the_difference() -> None:
    a = _low_rank((7, 5), 2, seed=1)
    m = np.random.default_rng(2).standard_normal((1, 5))
    u, s, v = rg.svd_lowrank(rg.tensor(a + m), q=2, M=rg.tensor(m))
    np.testing.assert_allclose(_np(u) * _np(s) @ _np(v).T, a, atol=1e-9)


def test_svd_lowrank_singular_values_are_differentiable() -> None:
    a = rg.tensor(_low_rank((6, 4), 2, seed=3), requires_grad=True)

    def values(t: Any) -> Any:
        rg.manual_seed(0)  # (the same random draw on every evaluation)
        return rg.svd_lowrank(t, q=2)[1]

    assert rg.autograd.gradcheck(values, (a,))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"q": 7}, r"^q\(=7\) must be non-negative integer and not greater than min\(m, n\)=4$"),
    ({"q": -1}, r"^q\(=-1\) must be non-negative integer"),
    ({"niter": -1}, r"^niter\(=-1\) must be non-negative integer$"),
])
def test_pca_lowrank_argument_errors_as_torch(torch: Any, kwargs: dict[str, Any], message: str) -> None:
    for lib in (rg, torch):
        with pytest.raises(ValueError, match=message):
            lib.pca_lowrank(lib.ones(5, 4), **kwargs)
