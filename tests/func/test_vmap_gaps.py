"""vmap batching rules added for the ops that fell back to a per-sample loop: the elementwise
predicates, ``prod`` over every element, the in-place view ops (``t_``, ``transpose_``,
``swapaxes_``/``swapdims_``, ``squeeze_``, ``unsqueeze_``). Each runs with warnings as errors
(the fallback's performance warning fails the test) and matches ``torch.func.vmap``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd import func as rfunc

_X = np.array([[[1.5, -0.0, np.inf], [np.nan, -np.inf, 2.0]],
               [[0.0, -3.0, 1.0], [4.0, np.nan, -0.5]],
               [[-1.0, 2.5, -np.inf], [0.25, 3.0, -2.0]]])  # batch of 3 samples (2, 3)

_PREDICATES = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not", "isreal"]


def _vmap_both(torch: Any, fn: Callable[[Any, Any], Any], x: np.ndarray, **kw: Any) -> tuple[Any, Any]:
    import torch.func as tfunc
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda t: fn(rg, t), **kw)(rg.tensor(x.copy()))
        want = tfunc.vmap(lambda t: fn(torch, t), **kw)(torch.tensor(x.copy()))
    return got, want


def _same(got: Any, want: Any) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", _PREDICATES)
def test_predicates_batch_without_fallback(torch: Any, name: str) -> None:
    _same(*_vmap_both(torch, lambda lib, t: getattr(lib, name)(t), _X))


@pytest.mark.parametrize("name", _PREDICATES)
def test_predicates_as_methods_under_nested_vmap(torch: Any, name: str) -> None:
    if name == "isreal":
        pytest.skip("isreal has no method form")
    import torch.func as tfunc
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.vmap(lambda t: getattr(t, name)()))(rg.tensor(_X))
        want = tfunc.vmap(tfunc.vmap(lambda t: getattr(t, name)()))(torch.tensor(_X))
    _same(got, want)


@pytest.mark.parametrize("shape", [(3,), (3, 4), (3, 2, 5)])
@pytest.mark.parametrize("dtype", [None, "float32"])
def test_prod_over_every_element(torch: Any, shape: tuple[int, ...], dtype: Any) -> None:
    x = np.random.default_rng(0).uniform(0.5, 1.5, shape)
    got, want = _vmap_both(torch, lambda lib, t: t.prod(dtype=getattr(lib, dtype) if dtype else None), x)
    _same(got, want)


def test_prod_over_every_element_of_a_transposed_batch(torch: Any) -> None:
    x = np.random.default_rng(1).uniform(0.5, 1.5, (4, 3, 2))
    _same(*_vmap_both(torch, lambda lib, t: lib.prod(t), x, in_dims=2))


def test_prod_gradient_per_sample() -> None:
    x = rg.tensor(np.random.default_rng(2).uniform(0.5, 1.5, (4, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(lambda t: t.prod()))(x)
    xs = x.numpy()
    want = np.prod(xs, axis=1, keepdims=True) / xs  # d/dx_i prod(x) = prod(x) / x_i (no zeros)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


_INPLACE_VIEWS: list[tuple[str, tuple[int, ...], Callable[[Any], Any]]] = [
    ("t_-2d", (3, 2, 4), lambda t: t.t_()),
    ("t_-1d", (3, 4), lambda t: t.t_()),
    ("t_-0d", (3,), lambda t: t.t_()),
    ("transpose_", (3, 2, 4, 5), lambda t: t.transpose_(0, -1)),
    ("transpose_-0d", (3,), lambda t: t.transpose_(0, -1)),
    ("swapaxes_", (3, 2, 4), lambda t: t.swapaxes_(1, 0)),
    ("swapdims_", (3, 2, 4), lambda t: t.swapdims_(-1, -2)),
    ("squeeze_-all", (3, 1, 4, 1), lambda t: t.squeeze_()),
    ("squeeze_-dim", (3, 1, 4, 1), lambda t: t.squeeze_(-1)),
    ("squeeze_-dim-not-one", (3, 1, 4, 1), lambda t: t.squeeze_(1)),
    ("squeeze_-dims", (3, 1, 4, 1), lambda t: t.squeeze_((0, 2))),
    ("squeeze_-0d", (3,), lambda t: t.squeeze_(0)),
    ("unsqueeze_", (3, 2, 4), lambda t: t.unsqueeze_(1)),
    ("unsqueeze_-last", (3, 2, 4), lambda t: t.unsqueeze_(-1)),
    ("unsqueeze_-0d", (3,), lambda t: t.unsqueeze_(0)),
]


@pytest.mark.parametrize("case", _INPLACE_VIEWS, ids=[c[0] for c in _INPLACE_VIEWS])
def test_inplace_views_batch_without_fallback(torch: Any, case: Any) -> None:
    _, shape, fn = case
    x = np.arange(float(np.prod(shape))).reshape(shape)

    def body(lib: Any, t: Any) -> Any:
        u = t.clone()
        out = fn(u)
        assert out is u  # (in place: the same tensor, with the new shape)
        return u * 2 + u.sum()  # (the later ops see the new shape)

    _same(*_vmap_both(torch, body, x))


def test_inplace_view_changes_the_batched_input_as_torch(torch: Any) -> None:
    import torch.func as tfunc
    x, tx = rg.zeros(3, 4), torch.zeros(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rfunc.vmap(lambda t: t.unsqueeze_(0))(x)
        tfunc.vmap(lambda t: t.unsqueeze_(0))(tx)
    assert tuple(x.shape) == tuple(tx.shape) == (3, 1, 4)


def test_inplace_view_under_nested_vmap(torch: Any) -> None:
    import torch.func as tfunc
    x = np.arange(24.0).reshape(2, 3, 4, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.vmap(lambda t: t.clone().squeeze_(-1).unsqueeze_(0).t_()))(rg.tensor(x))
        want = tfunc.vmap(tfunc.vmap(lambda t: t.clone().squeeze_(-1).unsqueeze_(0).t_()))(torch.tensor(x))
    _same(got, want)


def test_inplace_view_under_grad_in_vmap() -> None:
    x = rg.tensor(np.random.default_rng(3).normal(size=(4, 2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(lambda t: (t * 1.0).t_().unsqueeze_(0).cumsum(1).pow(2).sum()))(x)
    # d/dt sum_j,k (cumsum over rows of t^T)^2: by hand, per sample
    want = []
    for s in x.numpy():
        c = np.cumsum(s.T, axis=0)  # (3, 2)
        g_t = np.cumsum((2 * c)[::-1], axis=0)[::-1]  # the adjoint of cumsum
        want.append(g_t.T)
    np.testing.assert_allclose(got.numpy(), np.stack(want), rtol=1e-12)


@pytest.mark.parametrize("fn", [lambda t: t.unsqueeze_(5), lambda t: t.transpose_(0, 3),
                                lambda t: t.squeeze_(4)], ids=["unsqueeze_", "transpose_", "squeeze_"])
def test_inplace_view_bad_dim_errors_as_torch(torch: Any, fn: Any) -> None:
    import torch.func as tfunc

    from conftest import outcome
    got = outcome(lambda: rfunc.vmap(lambda t: fn(t.clone()))(rg.zeros(3, 2, 4)))
    want = outcome(lambda: tfunc.vmap(lambda t: fn(t.clone()))(torch.zeros(3, 2, 4)))
    assert got == want


def test_t_of_a_3d_sample_errors_as_torch(torch: Any) -> None:
    import torch.func as tfunc

    from conftest import outcome
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (retrograd reruns per sample to raise: the warning)
        got = outcome(lambda: rfunc.vmap(lambda t: t.clone().t_())(rg.zeros(3, 2, 4, 5)))
    want = outcome(lambda: tfunc.vmap(lambda t: t.clone().t_())(torch.zeros(3, 2, 4, 5)))
    assert got == want


# Reductions and losses found falling back in the op-database scan: now batching rules (dims
# move right; every element: the flattened sample; elementwise losses reduced per sample).
_REDUCTIONS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("median", lambda lib, t: t.median()),
    ("median-dim", lambda lib, t: t.median(dim=1).values),
    ("nanmedian", lambda lib, t: t.nanmedian()),
    ("nanmedian-dim", lambda lib, t: lib.nanmedian(t, 0, keepdim=True).indices),
    ("mode", lambda lib, t: lib.mode(t.round(), -1).values),
    ("sort-stable", lambda lib, t: lib.sort(t, dim=0, stable=True).indices),
    ("kthvalue", lambda lib, t: lib.kthvalue(t, 2, 1).values),
    ("topk", lambda lib, t: lib.topk(t, 2, dim=0).values),
    ("nansum", lambda lib, t: lib.nansum(t)),
    ("nansum-dim", lambda lib, t: lib.nansum(t, dim=1, keepdim=True)),
    ("count_nonzero", lambda lib, t: lib.count_nonzero(t.round())),
    ("count_nonzero-dim", lambda lib, t: lib.count_nonzero(t.round(), dim=0)),
    ("all", lambda lib, t: (t > -1).all()),
    ("any-dim", lambda lib, t: (t > 1).any(dim=1)),
    ("argmax", lambda lib, t: t.argmax()),
    ("argmin-dim", lambda lib, t: t.argmin(dim=0, keepdim=True)),
    ("aminmax", lambda lib, t: lib.aminmax(t).max),
    ("aminmax-dim", lambda lib, t: lib.aminmax(t, dim=1).min),
    ("smooth_l1_loss", lambda lib, t: lib.nn.functional.smooth_l1_loss(t, t.flip(0), beta=0.5)),
    ("huber_loss-sum", lambda lib, t: lib.nn.functional.huber_loss(t, t * 0.5, reduction="sum", delta=0.7)),
    ("huber_loss-none", lambda lib, t: lib.nn.functional.huber_loss(t, t * 0.5, reduction="none")),
    ("binary_cross_entropy", lambda lib, t: lib.nn.functional.binary_cross_entropy(t.sigmoid(), t.tanh().abs())),
    ("bce_with_logits", lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(t, t.sigmoid(),
                                                                                         reduction="sum")),
]


@pytest.mark.parametrize("case", _REDUCTIONS, ids=[c[0] for c in _REDUCTIONS])
def test_reductions_and_losses_batch_without_fallback(torch: Any, case: Any) -> None:
    _, fn = case
    x = np.random.default_rng(4).normal(size=(3, 4, 5)) * 2
    _same(*_vmap_both(torch, fn, x))


def test_loss_with_a_shared_target(torch: Any) -> None:
    import torch.func as tfunc
    x, y = np.random.default_rng(5).normal(size=(3, 4)), np.random.default_rng(6).normal(size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda t: rg.nn.functional.huber_loss(t, rg.tensor(y)))(rg.tensor(x))
        want = tfunc.vmap(lambda t: torch.nn.functional.huber_loss(t, torch.tensor(y)))(torch.tensor(x))
    _same(got, want)


def test_per_sample_gradient_of_a_loss() -> None:
    x = rg.tensor(np.random.default_rng(7).normal(size=(4, 3)))
    target = rg.tensor(np.random.default_rng(8).uniform(0.1, 0.9, size=(4, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(lambda t, y: rg.nn.functional.binary_cross_entropy_with_logits(t, y)))(x, target)
    # d/dx mean(bce_with_logits(x, y)) = (sigmoid(x) - y) / n, per sample of n = 3 elements
    want = (1 / (1 + np.exp(-x.numpy())) - target.numpy()) / 3
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_soft_margin_loss_batches_without_fallback(torch: Any) -> None:
    import torch.func as tfunc
    x = np.random.default_rng(9).normal(size=(3, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (retrograd: a rule; PyTorch falls back here, with its warning)
        got = rfunc.vmap(lambda t: rg.nn.functional.soft_margin_loss(t, -rg.ones(4, 5)))(rg.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = tfunc.vmap(lambda t: torch.nn.functional.soft_margin_loss(t, -torch.ones(4, 5)))(torch.tensor(x))
    _same(got, want)


_MORE: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("vector_norm", lambda lib, t: lib.linalg.vector_norm(t)),
    ("vector_norm-dim", lambda lib, t: lib.linalg.vector_norm(t, ord=1, dim=(0, -1), keepdim=True)),
    ("vector_norm-dtype", lambda lib, t: lib.linalg.vector_norm(t.float(), dim=1, dtype=lib.float64)),
    ("norm", lambda lib, t: t.norm(p=3, dim=0)),
    ("flip", lambda lib, t: lib.flip(t, (0, -1))),
    ("roll", lambda lib, t: lib.roll(t, (1, -2), (0, 1))),
    ("roll-flat", lambda lib, t: lib.roll(t, 3)),
    ("trace", lambda lib, t: lib.trace(t)),
    ("vdot", lambda lib, t: lib.vdot(t[0], t[1])),
    ("dist", lambda lib, t: lib.dist(t, t.flip(0))),
    ("dist-p", lambda lib, t: t.dist(t[0] * 2, 3)),
    ("dist-zero-order", lambda lib, t: lib.dist(t.round(), t.flip(1).round(), 0)),
    ("dist-shared", lambda lib, t: lib.dist(t, lib.ones(5, dtype=t.dtype), 1.5)),
]


@pytest.mark.parametrize("case", _MORE, ids=[c[0] for c in _MORE])
def test_norms_flips_rolls_traces_batch_without_fallback(torch: Any, case: Any) -> None:
    _, fn = case
    x = np.random.default_rng(10).normal(size=(3, 4, 5))
    _same(*_vmap_both(torch, fn, x))



def test_roll_of_a_0d_sample() -> None:
    """A dim of a 0-d sample is refused as the per-sample call refuses it (PyTorch's eager roll;
    its vmap rule raises an IndexError of its own); with no dims each sample rolls to itself."""
    x = rg.arange(3.0)
    message = "Dimension specified as 0 but tensor has no dimensions"
    with pytest.raises(IndexError, match=message):
        rg.roll(x[0], 1, 0)
    with pytest.raises(IndexError, match=message):
        rfunc.vmap(lambda t: rg.roll(t, 1, 0))(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda t: rg.roll(t, 1))(x)
    assert got.tolist() == [rg.roll(s, 1).item() for s in x] and got.data_ptr() != x.data_ptr()


_LINALG_AND_SHAPES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("inv", lambda lib, t: lib.linalg.inv(t @ t.mT + lib.eye(4, dtype=t.dtype))),
    ("det", lambda lib, t: lib.linalg.det(t[:, :4])),
    ("slogdet", lambda lib, t: lib.linalg.slogdet(t[:, :4]).logabsdet),
    ("matrix_exp", lambda lib, t: lib.matrix_exp(t[:, :4] * 0.1)),
    ("cholesky", lambda lib, t: lib.linalg.cholesky(t @ t.mT + lib.eye(4, dtype=t.dtype))),
    ("cholesky-upper", lambda lib, t: lib.linalg.cholesky(t @ t.mT + lib.eye(4, dtype=t.dtype), upper=True)),
    ("eigvalsh", lambda lib, t: lib.linalg.eigh(t @ t.mT).eigenvalues),
    ("svdvals-via-svd", lambda lib, t: lib.linalg.svd(t, full_matrices=False).S),
    ("qr-R-abs", lambda lib, t: lib.linalg.qr(t.mT).R.abs()),
    ("unsafe_split", lambda lib, t: t.unsafe_split(2, 1)[1]),
    ("rot90", lambda lib, t: lib.rot90(t, 1, (1, 0))),
    ("index_select", lambda lib, t: lib.index_select(t, 1, lib.tensor([4, 0, 0]))),
    ("repeat", lambda lib, t: t.repeat(2, 1, 3)),
    ("repeat-same-rank", lambda lib, t: t.repeat(1, 2)),
]


@pytest.mark.parametrize("case", _LINALG_AND_SHAPES, ids=[c[0] for c in _LINALG_AND_SHAPES])
def test_linalg_and_shape_ops_batch_without_fallback(torch: Any, case: Any) -> None:
    _, fn = case
    x = np.random.default_rng(11).normal(size=(3, 4, 5))
    _same(*_vmap_both(torch, fn, x))


def test_unsafe_split_with_sizes_batches_without_fallback() -> None:
    """(PyTorch has no rule and no fallback for it: against the op on each sample.)"""
    x = rg.tensor(np.random.default_rng(12).normal(size=(3, 4, 5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda t: t.unsafe_split_with_sizes([1, 3], 0))(x)
    for k, part in enumerate(got):
        want = np.stack([s.unsafe_split_with_sizes([1, 3], 0)[k].numpy() for s in x])
        np.testing.assert_array_equal(part.numpy(), want)
