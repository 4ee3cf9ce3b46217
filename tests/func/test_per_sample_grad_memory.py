"""Per-sample gradients (``vmap(grad)``) put the batch of weight gradients in recycled memory
(a fresh multi-megabyte block page-faults on every call): a block is reused only once nothing
refers to it, so results that are kept (or views of them) are never overwritten."""

from __future__ import annotations

from typing import Any

import numpy as np

import retrograd as rg
import retrograd.func as rfunc

RS = np.random.RandomState(0)
W1, B1 = RS.randn(64, 128).astype(np.float32) / 8, RS.randn(128).astype(np.float32)
W2, B2 = RS.randn(128, 10).astype(np.float32) / 8, RS.randn(10).astype(np.float32)


def _loss(F: Any) -> Any:
    def loss(params: Any, x: Any, y: Any) -> Any:
        h = F.relu(x.unsqueeze(0) @ params[0] + params[1])
        return F.nll_loss(F.log_softmax(h @ params[2] + params[3], dim=1), y.unsqueeze(0))
    return loss


def _per_sample(lib: Any, fn: Any, seed: int) -> list[Any]:
    rs = np.random.RandomState(seed)
    x, y = lib.tensor(rs.randn(64, 64).astype(np.float32)), lib.tensor(rs.randint(0, 10, 64))
    params = [lib.tensor(p) for p in (W1, B1, W2, B2)]
    return list(fn.vmap(fn.grad(_loss(lib.nn.functional)), in_dims=(None, 0, 0))(params, x, y))


def _address(t: Any) -> int:
    return t.numpy().__array_interface__["data"][0]  # type: ignore[no-any-return]


def test_kept_results_and_their_views_are_not_overwritten(torch: Any) -> None:
    first = _per_sample(rg, rfunc, 1)
    view = first[0][3]  # a view of the first call's weight gradients
    first_copy = [g.numpy().copy() for g in first]
    second = _per_sample(rg, rfunc, 2)
    third_view_only = view.numpy().copy()
    del first
    _per_sample(rg, rfunc, 3)  # (the block the view holds is still in use)
    theirs1, theirs2 = _per_sample(torch, torch.func, 1), _per_sample(torch, torch.func, 2)
    for ours, t in zip(first_copy, theirs1):
        np.testing.assert_allclose(ours, t.numpy(), rtol=1e-5, atol=1e-6)
    for ours, t in zip(second, theirs2):
        np.testing.assert_allclose(ours.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(view.numpy(), third_view_only)
    np.testing.assert_allclose(view.numpy(), theirs1[0][3].numpy(), rtol=1e-5, atol=1e-6)


def test_memory_of_dropped_results_is_reused() -> None:
    from retrograd.func import _batching

    _batching._POOL.clear()  # (from a known state: earlier calls' blocks would be evicted in between)
    first = _per_sample(rg, rfunc, 1)
    held = _per_sample(rg, rfunc, 2)
    assert _address(held[0]) != _address(first[0])  # (the first is alive)
    del first  # (freed by reference counting: no cycle waits for the collector)
    pooled = {block.__array_interface__["data"][0] for block in _batching._POOL}
    again = _per_sample(rg, rfunc, 3)
    assert _address(again[0]) in pooled  # (already faulted-in memory, no fresh block)
    assert len(_batching._POOL) <= _batching._POOL_BLOCKS
