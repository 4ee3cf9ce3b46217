"""The per-sample linear layer of ``vmap(grad)``: a batch of rows times the weight ``grad`` lifted
(``(B, 1, k) @ (B, k, m)``, ``func/_batching.row_times_matrix``). Its fast paths (one 2-d product
for a weight shared by the batch, outer products in NumPy for the weight gradient) must give
torch.func's results in every mode its backward runs in: plain, under create_graph (``grad`` of
``grad``) and under forward AD (``jvp`` of ``grad``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.func as rfunc

RS = np.random.RandomState(7)
W, X, V = RS.randn(5, 4), RS.randn(3, 5), RS.randn(5, 4)


def _loss(F: Any) -> Any:
    def loss(w: Any, x: Any) -> Any:
        return (F.tanh(x.unsqueeze(0) @ w) ** 2).sum()
    return loss


def _both(torch: Any, compute: Any) -> None:
    ours = compute(rg, rfunc)
    theirs = compute(torch, torch.func)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("weight_dim", [None, 0])
def test_per_sample_weight_gradient_matches_torch(torch: Any, weight_dim: Any) -> None:
    """A weight shared by the batch (in_dims None: a stride-0 lift) and one per sample."""
    w = W if weight_dim is None else np.stack([W * (i + 1) for i in range(len(X))])
    _both(torch, lambda lib, fn: fn.vmap(fn.grad(_loss(lib.nn.functional)), in_dims=(weight_dim, 0))(
        lib.tensor(w), lib.tensor(X)))


def test_per_sample_input_gradient_matches_torch(torch: Any) -> None:
    """The rows' gradient (argnums=1), through the shared weight's transpose."""
    _both(torch, lambda lib, fn: fn.vmap(fn.grad(_loss(lib.nn.functional), argnums=1), in_dims=(None, 0))(
        lib.tensor(W), lib.tensor(X)))


def test_forward_over_reverse_per_sample_matches_torch(torch: Any) -> None:
    """``jvp`` of ``grad`` per sample: the backward's outer products must carry tangents."""
    def compute(lib: Any, fn: Any) -> Any:
        loss = _loss(lib.nn.functional)
        w, v = lib.tensor(W), lib.tensor(V)
        return fn.vmap(lambda x: fn.jvp(lambda w_: fn.grad(loss)(w_, x), (w,), (v,))[1])(lib.tensor(X))
    _both(torch, compute)


def test_per_sample_hessian_vector_product_matches_torch(torch: Any) -> None:
    """``grad`` of ``grad`` per sample: the backward runs in differentiable ops (create_graph)."""
    def compute(lib: Any, fn: Any) -> Any:
        loss = _loss(lib.nn.functional)
        v = lib.tensor(V)
        return fn.vmap(lambda x: fn.grad(lambda w_: (fn.grad(loss)(w_, x) * v).sum())(lib.tensor(W)))(lib.tensor(X))
    _both(torch, compute)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("one_d", [False, True])
def test_nll_loss_of_one_row_per_sample_matches_torch(torch: Any, reduction: str, weighted: bool,
                                                      one_d: bool) -> None:
    """The loss of a per-sample ``(1, C)`` (or ``(C,)``) input is its row's loss in every reduction
    but a weighted or ignored mean (divided by the row's weight; NaN): values and gradients, a
    sample whose target is ignored included."""
    rng = np.random.default_rng(3)
    logits0, w0 = rng.standard_normal((6, 1, 4)), rng.random(4) + 0.5
    t0 = rng.integers(0, 4, (6, 1))
    t0[2] = 1  # ignored below

    def compute(lib: Any, fn: Any) -> Any:
        F = lib.nn.functional
        kw = {"reduction": reduction, "ignore_index": 1, "weight": lib.tensor(w0) if weighted else None}
        logits, t = lib.tensor(logits0), lib.tensor(t0)
        if one_d:
            logits, t = logits[:, 0], t[:, 0]
        loss = lambda a, b: F.nll_loss(F.log_softmax(a, dim=-1), b, **kw)
        value = fn.vmap(loss)(logits, t)
        grads = fn.vmap(fn.grad(lambda a, b: loss(a, b).sum()))(logits, t)
        return lib.cat([value.reshape(-1), grads.reshape(-1)])
    ours, theirs = compute(rg, rfunc), compute(torch, torch.func)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
