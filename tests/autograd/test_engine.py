"""The engine: backward and autograd.grad semantics, accumulation, hooks, create_graph, deep graphs."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def test_scalar_backward_and_accumulation_across_calls() -> None:
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    assert x.grad is first  # accumulated in place, like PyTorch
    assert x.grad.tolist() == [5.0, 7.0, 9.0]


def test_nonscalar_backward_needs_gradient() -> None:
    x = rg.ones(2, 2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[2\]\)"):
        y.backward(rg.ones(2))
    y.backward(rg.full((2, 2), 0.5))
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_backward_without_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        rg.tensor([1.0, 2.0]).sum().backward()


def test_user_gradient_is_not_aliased_into_grad() -> None:
    x = rg.ones(3, requires_grad=True)
    v = rg.tensor([1.0, 2.0, 3.0])
    (x + 0).backward(v)
    v.mul_(100)
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


def test_two_leaves_sharing_an_incoming_gradient_do_not_alias() -> None:
    a = rg.ones(2, requires_grad=True)
    b = rg.ones(2, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(5)
    assert b.grad.tolist() == [1.0, 1.0]


def test_gradients_from_several_paths_are_summed() -> None:
    x = rg.tensor(2.0, requires_grad=True)
    y = x * x
    z = y + y * x + x.exp()
    z.backward()
    assert np.isclose(x.grad.item(), 2 * 2 + 3 * 4 + np.exp(2.0))


def test_autograd_grad_leaves_grad_untouched_and_runs_only_needed_nodes() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    w = rg.tensor([3.0, 4.0], requires_grad=True)
    ran: list[str] = []
    y = x * w
    y.grad_fn.register_prehook(lambda g: ran.append("mul"))
    z = (y.sum() + (w * 5).sum())
    (gw,) = rg.autograd.grad(z, w, retain_graph=True)
    assert gw.tolist() == [6.0, 7.0] and x.grad is None and w.grad is None
    ran.clear()
    side = w * 5
    side.grad_fn.register_prehook(lambda g: ran.append("side"))
    (gx,) = rg.autograd.grad(y.sum() + side.exp().sum(), x)
    assert gx.tolist() == [3.0, 4.0]
    assert ran == ["mul"]  # the branch that cannot reach x never ran


def test_autograd_grad_errors_and_unused_inputs() -> None:
    x = rg.ones(2, requires_grad=True)
    unused = rg.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used"):
        rg.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = rg.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None and gx.tolist() == [2.0, 2.0]
    _, gu = rg.autograd.grad(y, [x, unused], materialize_grads=True, retain_graph=True)
    assert gu.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        rg.autograd.grad(y, rg.ones(2))


def _every_end_requested(lib: Any) -> list[list[float]]:
    """autograd.grad where every path ends at a requested input (the engine skips its partial-
    graph pass then), with a non-leaf input in the middle and a leaf used twice."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([0.5, -1.0], requires_grad=True)
    h = x * w
    out = (h * h).sum() + (w * 3).sum()
    grads = lib.autograd.grad(out, [h, x, w], retain_graph=True)
    again = lib.autograd.grad(out, [w, x])  # the same graph, the inputs in another order
    (x * w).sum().backward(inputs=[x, w])  # accumulating into every end
    return [g.tolist() for g in (*grads, *again, x.grad, w.grad)]


def test_grad_when_every_path_ends_at_an_input_matches_pytorch(torch: Any) -> None:
    ours, theirs = _every_end_requested(rg), _every_end_requested(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_grad_wrt_nonleaf_input() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    out = (h * h).sum()
    (gh,) = rg.autograd.grad(out, h)
    assert gh.tolist() == [6.0, 12.0]


def test_backward_inputs_limits_accumulation() -> None:
    x = rg.ones(2, requires_grad=True)
    w = rg.ones(2, requires_grad=True)
    (x * w * 3).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [3.0, 3.0]


def test_create_graph_second_and_third_derivatives() -> None:
    x = rg.tensor(1.5, dtype=rg.float64, requires_grad=True)
    y = x ** 4
    (g1,) = rg.autograd.grad(y, x, create_graph=True)
    (g2,) = rg.autograd.grad(g1, x, create_graph=True)
    (g3,) = rg.autograd.grad(g2, x)
    assert np.allclose([g1.item(), g2.item(), g3.item()], [4 * 1.5**3, 12 * 1.5**2, 24 * 1.5])


def test_create_graph_accumulated_grad_is_differentiable() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_retain_grad_and_nonleaf_grad_warning() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert "not a leaf Tensor is being accessed" in str(caught[0].message)
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]


def test_tensor_hooks_run_in_order_and_replace() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    order: list[str] = []
    x.register_hook(lambda g: order.append("a"))
    x.register_hook(lambda g: g * 10)
    (x * 1).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        rg.ones(1).register_hook(lambda g: g)


def test_engine_order_follows_sequence_numbers() -> None:
    x = rg.tensor(1.0, requires_grad=True)
    order: list[str] = []
    a = x * 2
    b = x * 3
    a.grad_fn.register_prehook(lambda g: order.append("a"))
    b.grad_fn.register_prehook(lambda g: order.append("b"))
    (a + b).backward()
    assert order == ["b", "a"]  # the later node runs first


def test_gradient_dtype_follows_input_dtype() -> None:
    x = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    (x.float() * 2).sum().backward()
    assert x.grad.dtype == rg.float64


def _chain(n: int) -> tuple[rg.Tensor, rg.Tensor]:
    x = rg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    return x, y


@pytest.mark.slow
def test_million_op_chain_backward_and_free_without_recursion() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # nothing in backward or freeing may recurse per node
    try:
        x, y = _chain(1_000_000)
        y.sum().backward()
        assert x.grad.tolist() == [1.0]
        del y  # freeing the chain must not recurse either
    finally:
        sys.setrecursionlimit(limit)


def test_deep_chain_backward_without_recursion() -> None:
    x, y = _chain(20_000)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        y.sum().backward()
        del y
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.tolist() == [1.0]


def test_leaf_gradient_is_kept_without_copy_when_private() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    produced: list[int] = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: produced.append(id(grad_inputs[0]._data)))
    y.sum().backward()
    assert produced == [id(x.grad._data)]  # the engine's buffer became .grad


def test_hook_that_keeps_the_gradient_forces_a_copy() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    kept: list[rg.Tensor] = []
    x.register_hook(lambda g: kept.append(g))
    (x * 3).sum().backward()
    x.grad.add_(1)
    assert kept[0].tolist() == [3.0, 3.0]


def test_large_graphs_make_full_collections_rarer_while_the_graph_lives() -> None:
    import gc

    before = gc.get_threshold()
    x = rg.ones(2, requires_grad=True)
    y = x
    for _ in range(70_000):  # more than one guard period of recorded nodes
        y = y * 1.0
    assert gc.get_threshold()[2] > before[2]
    y.sum().backward()
    del y  # the graph is freed
    assert gc.get_threshold() == before
