"""``index_copy`` / ``Tensor.index_copy`` / ``index_copy_`` against PyTorch: values, PyTorch's argument
checks and messages (in its order), repeated indices, the node, its saved attributes and gradients,
the in-place form's graph, and forward AD. (gradcheck, gradgradcheck, third order and parity of the
op database's samples: ``tests/opdb/shape.py``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD

# Each call, run on retrograd and on PyTorch (``L``): the same outcome, values, dtype and shape.
CALLS: dict[str, Callable[[Any], Any]] = {
    "rows": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([4, 1]), L.ones(2, 3)),
    "negative dim": lambda L: L.zeros(5, 3).index_copy(-1, L.tensor([2, 0]), L.ones(5, 2)),
    "dim out of range": lambda L: L.zeros(5, 3).index_copy(2, L.tensor([0, 1]), L.ones(2, 3)),
    "0-d self, dim 1": lambda L: L.tensor(1.0).index_copy(1, L.tensor([0]), L.ones(1)),
    "int32 index": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1], dtype=L.int32), L.ones(2, 3)),
    "float index": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0.0, 1.0]), L.ones(2, 3)),
    "2-d index": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([[0, 1]]), L.ones(2, 3)),
    "2-d int32 index (ndim first)": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([[0]], dtype=L.int32), L.ones(1, 3)),
    "int32 index and dtype (index first)": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0], dtype=L.int32),
                                                                                L.ones(1, 3, dtype=L.float64)),
    "count mismatch": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1, 2]), L.ones(2, 3)),
    "count mismatch and out of bounds": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([9, 9, 9]), L.ones(2, 3)),
    "slice shape mismatch": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1]), L.ones(2, 4)),
    "slice shape mismatch 3-d": lambda L: L.zeros(5, 3, 4).index_copy(1, L.tensor([0, 1]), L.ones(2, 2, 5)),
    "dimensionality mismatch": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1]), L.ones(6)),
    "out of bounds": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 5]), L.ones(2, 3)),
    "negative index": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, -1]), L.ones(2, 3)),
    "dtype mismatch": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1]), L.ones(2, 3, dtype=L.float64)),
    "dtype and slice mismatch": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0]), L.ones(1, 4, dtype=L.float64)),
    "0-d self and source": lambda L: L.tensor(1.0).index_copy(0, L.tensor([0]), L.tensor(5.0)),
    "0-d self, 1-d source": lambda L: L.tensor(1.0).index_copy(0, L.tensor([0]), L.tensor([5.0])),
    "0-d self, 2-d source": lambda L: L.tensor(1.0).index_copy(0, L.tensor([0]), L.ones(1, 1)),
    "0-d self, index 1": lambda L: L.tensor(1.0).index_copy(0, L.tensor([1]), L.ones(1)),
    "0-d source, 2 indices": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0, 1]), L.tensor(1.0)),
    "0-d source, matrix self": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0]), L.tensor(1.0)),
    "0-d source, vector self": lambda L: L.zeros(3).index_copy(0, L.tensor([2]), L.tensor(7.0)),
    "0-d index": lambda L: L.zeros(5, 3).index_copy(0, L.tensor(1), L.ones(1, 3)),
    "0-d index, 1-d source": lambda L: L.zeros(5, 3).index_copy(0, L.tensor(1), L.ones(3)),
    "empty": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([], dtype=L.int64), L.ones(0, 3)),
    "empty slice, index out of bounds": lambda L: L.zeros(2, 0).index_copy(0, L.tensor([5]), L.ones(1, 0)),
    "repeated index: the last row": lambda L: L.zeros(5, 3).index_copy(
        0, L.tensor([1, 1]), L.tensor([[1.0, 1, 1], [2, 2, 2]])),
    "int64 tensors": lambda L: L.zeros(3, dtype=L.int64).index_copy(0, L.tensor([0]), L.tensor([4])),
    "bool tensors": lambda L: L.zeros(3, dtype=L.bool).index_copy(0, L.tensor([2]), L.tensor([True])),
    "keywords": lambda L: L.index_copy(L.zeros(5, 3), dim=0, index=L.tensor([0]), source=L.ones(1, 3)),
    "number source": lambda L: L.zeros(5, 3).index_copy(0, L.tensor([0]), 1.0),
    "in place": lambda L: L.zeros(5, 3).index_copy_(1, L.tensor([2]), L.ones(5, 1)),
    "in place on a leaf that requires grad": lambda L: L.zeros(3, requires_grad=True).index_copy_(
        0, L.tensor([0]), L.ones(1)),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_index_copy_as_torch(torch: Any, case: str) -> None:
    call = CALLS[case]
    ours, theirs = outcome(lambda: call(rg)), outcome(lambda: call(torch))
    assert ours == theirs
    if ours[0] == "ok":
        a, b = call(rg), call(torch)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert str(a.dtype) == str(b.dtype) and a.shape == b.shape


def test_index_copy_node_saved_and_gradients(torch: Any) -> None:
    rng = np.random.default_rng(0)
    x0, s0, g0 = rng.random((5, 3)), rng.random((2, 3)), rng.random((5, 3))
    res = []
    for lib in (rg, torch):
        x, s = lib.tensor(x0, requires_grad=True), lib.tensor(s0, requires_grad=True)
        idx = lib.tensor([4, 1])
        y = x.index_copy(0, idx, s)
        fn = y.grad_fn
        res.append((type(fn).__name__, fn._saved_dim, fn._saved_index.tolist(), fn._saved_source.tolist(),
                    len(fn.next_functions)))
        y.backward(lib.tensor(g0))
        res.append((x.grad.numpy().copy(), s.grad.numpy().copy()))
    assert res[0] == res[2] and res[0][0] == "IndexCopyBackward0"
    np.testing.assert_array_equal(res[1][0], res[3][0])
    np.testing.assert_array_equal(res[1][1], res[3][1])
    # hand-derived: self's gradient has the copied rows zeroed, source's is those rows of grad
    expected = g0.copy()
    expected[[4, 1]] = 0
    np.testing.assert_array_equal(res[1][0], expected)
    np.testing.assert_array_equal(res[1][1], g0[[4, 1]])


def test_index_copy_repeated_index_gradients_as_torch(torch: Any) -> None:
    grads = []
    for lib in (rg, torch):
        x = lib.zeros(4, 2, dtype=lib.float64, requires_grad=True)
        s = lib.ones(3, 2, dtype=lib.float64, requires_grad=True)
        x.index_copy(0, lib.tensor([1, 1, 3]), s).backward(lib.arange(8.0, dtype=lib.float64).view(4, 2))
        grads.append((x.grad.numpy().copy(), s.grad.numpy().copy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_index_copy_inplace_graph_and_version_check(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.zeros(5, 3, dtype=lib.float64, requires_grad=True)
        s = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        y = x * 1
        out = y.index_copy_(0, lib.tensor([0, 2]), s)
        assert out is y and type(y.grad_fn).__name__ == "IndexCopyBackward0"
        y.sum().backward()
        assert x.grad.sum().item() == 9.0 and s.grad.sum().item() == 6.0
    # the saved source is version-checked as PyTorch's
    msgs = []
    for lib in (rg, torch):
        s = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        src = s * 1
        y = lib.zeros(5, 3, dtype=lib.float64).index_copy(0, lib.tensor([0, 2]), src)
        src.add_(1)
        msgs.append(outcome(lambda y=y: y.sum().backward())[0])
    assert msgs[0] == msgs[1] == "RuntimeError"


def test_index_copy_forward_ad_as_torch(torch: Any) -> None:
    rng = np.random.default_rng(2)
    x0, tx, s0, ts = rng.random((4, 3)), rng.random((4, 3)), rng.random((2, 3)), rng.random((2, 3))
    out = []
    for lib, fw in ((rg, fwAD), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(x0), lib.tensor(tx))
            s = fw.make_dual(lib.tensor(s0), lib.tensor(ts))
            out.append(fw.unpack_dual(lib.index_copy(x, 0, lib.tensor([3, 0]), s)).tangent.numpy().copy())
    expected = tx.copy()
    expected[[3, 0]] = ts  # hand-derived: the op is linear in (self, source)
    np.testing.assert_array_equal(out[0], expected)
    np.testing.assert_array_equal(out[1], expected)


def test_index_copy_into_empty_self_is_a_clear_index_error(torch: Any) -> None:
    # PyTorch fails here inside its copy (a RuntimeError about storage sizes); ours names the index.
    with pytest.raises(IndexError, match=r"index_copy_\(\): index 0 is out of bounds for dimension 0 with size 0"):
        rg.zeros(0, 3).index_copy(0, rg.tensor([0]), rg.ones(1, 3))
    with pytest.raises(RuntimeError):
        torch.zeros(0, 3).index_copy(0, torch.tensor([0]), torch.ones(1, 3))


def test_index_copy_failure_leaves_self_unchanged() -> None:
    x = rg.arange(6.0).view(3, 2)
    with pytest.raises(IndexError):
        x.index_copy_(0, rg.tensor([0, 7]), rg.ones(2, 2))
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(3, 2))
    assert x._version == 0


def test_index_copy_double_backward_nodes_as_torch(torch: Any) -> None:
    names = []
    for lib in (rg, torch):
        x = lib.ones(4, 2, dtype=lib.float64, requires_grad=True)
        s = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        gx, gs = lib.autograd.grad((x.index_copy(0, lib.tensor([0, 3]), s) ** 2).sum(), (x, s), create_graph=True)
        names.append((type(gx.grad_fn).__name__, type(gs.grad_fn).__name__))
    assert names[0] == names[1]
