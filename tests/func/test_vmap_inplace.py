"""In-place arithmetic inside ``vmap`` runs once on the whole batch (PyTorch's batching rule for
in-place ops), not once per sample: results, gradients and shape errors match ``torch.func``,
and the fallback's performance warning (an error here) never fires."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd import func as rfunc

RS = np.random.RandomState(0)
X = RS.randn(3, 4, 5)
Y = RS.randn(3, 4, 5)
ROW = RS.randn(3, 5)
SCALARS = RS.randn(3)

# name: (fn(lib, *inputs), inputs, in_dims)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], Any]] = {
    "add_scalar": (lambda L, t: t.clone().add_(1.5), (X,), 0),
    "add_alpha": (lambda L, t, u: t.clone().add_(u, alpha=-0.5), (X, Y), 0),
    "sub_": (lambda L, t, u: t.clone().sub_(u), (X, Y), 0),
    "mul_self": (lambda L, t: t.clone().mul_(t), (X,), 0),
    "div_": (lambda L, t, u: t.clone().div_(u.abs() + 1), (X, Y), 0),
    "mul_by_sample_scalar": (lambda L, t, s: t.clone().mul_(s), (X, SCALARS), 0),
    "mul_by_sample_row": (lambda L, t, r: t.clone().mul_(r), (X, ROW), 0),
    "mul_by_shared_row": (lambda L, t, r: t.clone().mul_(r), (X, ROW[0]), (0, None)),
    "iadd_operator": (lambda L, t, u: _iadd(t.clone(), u), (X, Y), 0),
    "clamp_": (lambda L, t: t.clone().clamp_(-0.5, 0.5), (X,), 0),
    "relu_inplace": (lambda L, t: L.nn.functional.relu(t.clone(), inplace=True), (X,), 0),
    "zero_": (lambda L, t: t.clone().zero_(), (X,), 0),
    "fill_": (lambda L, t: t.clone().fill_(2.5), (X,), 0),
    "copy_": (lambda L, t, u: t.clone().copy_(u), (X, Y), 0),
    "on_a_view": (lambda L, t: _on_view(t.clone()), (X,), 0),
    "batch_in_dim_1": (lambda L, t, u: t.clone().mul_(u), (X, Y), (1, 1)),
}


def _iadd(t: Any, u: Any) -> Any:
    t += u
    return t


def _on_view(t: Any) -> Any:
    t[1].mul_(3.0)
    return t


def _both(torch: Any, name: str) -> tuple[Any, Any]:
    import torch.func as tfunc
    fn, inputs, in_dims = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(lambda *a: fn(rg, *a), in_dims=in_dims)(*[rg.tensor(a) for a in inputs])
    want = tfunc.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*[torch.tensor(a) for a in inputs])
    return got, want


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_runs_on_the_batch(torch: Any, name: str) -> None:
    got, want = _both(torch, name)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["add_alpha", "div_", "mul_self", "mul_by_sample_row", "on_a_view", "relu_inplace"])
def test_per_sample_gradients_through_inplace_ops(torch: Any, name: str) -> None:
    """``vmap(grad(f))`` with ``f`` writing in place: each sample's gradient, as torch.func's."""
    import torch.func as tfunc
    fn, inputs, in_dims = CASES[name]

    def loss(L: Any) -> Callable[..., Any]:
        return lambda t, *rest: (fn(L, t * 1.0, *rest) ** 2).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.grad(loss(rg)), in_dims=in_dims)(*[rg.tensor(a) for a in inputs])
    want = tfunc.vmap(tfunc.grad(loss(torch)), in_dims=in_dims)(*[torch.tensor(a) for a in inputs])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)


def test_nested_vmap_inplace(torch: Any) -> None:
    import torch.func as tfunc

    def fn(L: Any) -> Callable[..., Any]:
        return lambda t, u: t.clone().mul_(u).add_(1.0)

    nested = RS.randn(2, 3, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rfunc.vmap(rfunc.vmap(fn(rg)), in_dims=(0, None))(rg.tensor(nested), rg.tensor(ROW))
    want = tfunc.vmap(tfunc.vmap(fn(torch)), in_dims=(0, None))(torch.tensor(nested), torch.tensor(ROW))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


ERRORS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], Any]] = {
    # a batched sample narrower than the other input's (PyTorch's shapes: the physical ones)
    "narrow_self": (lambda L, t, u: t.clone().add_(u), (ROW, X), 0),
    "shared_other_wider": (lambda L, t, u: t.clone().add_(u), (X, RS.randn(2, 4, 5)), (0, None)),
    # an integer tensor cannot take a float result
    "int_self": (lambda L, t: t.clone().add_(1.5), (np.arange(6).reshape(3, 2),), 0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_inplace_errors_match_torch(torch: Any, name: str) -> None:
    import torch.func as tfunc
    fn, inputs, in_dims = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = outcome(lambda: rfunc.vmap(lambda *a: fn(rg, *a), in_dims=in_dims)(*[rg.tensor(a) for a in inputs]))
    want = outcome(lambda: tfunc.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*[torch.tensor(a) for a in inputs]))
    assert want[0] != "ok"
    assert got == want


def test_unbatched_written_to_tensor_reruns_per_sample() -> None:
    """A batched value written into a tensor that is not batched (PyTorch refuses; library code
    such as circular padding does it into fresh buffers): the function runs once per sample,
    with the fallback's warning, and each sample's result is its own."""
    with pytest.warns(UserWarning, match="performance drop"):
        got = rfunc.vmap(lambda t, u: u.clone().mul_(t), in_dims=(0, None))(rg.tensor(X), rg.tensor(Y[0]))
    np.testing.assert_allclose(got.numpy(), X * Y[0], rtol=1e-12)
