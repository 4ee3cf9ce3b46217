"""The engine's shortcuts keep PyTorch's order and results exactly.

The engine hands a node that became ready straight to the next step, bypassing the heap, when
the heap would pop it next anyway (nothing else ready, or only nodes of lower sequence number),
and a partial backward (``autograd.grad``) whose every path ends at a requested input tests no
visit set. These tests build random graphs with fan-out, in retrograd and in PyTorch, and
compare the order in which backward nodes run (PyTorch's engine runs ready nodes latest-created
first) and the gradients, for ``backward``, ``autograd.grad`` w.r.t. all or some leaves, and a
Hessian-vector product through ``create_graph=True``.

A leaf with no hooks accumulates as soon as the node that completes its gradient has run,
outside the heap; the tests at the end hold that to PyTorch with hooks registered before and
after the graph is built, leaves hooked and not side by side, retain_grad, leaves reached
twice, a ``.grad`` accumulated into, and anomaly mode.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import retrograd as rg

UNARY = ("tanh", "sin", "exp")
BINARY = ("mul", "add")


def _program(seed: int, n_leaves: int = 3, n_ops: int = 14) -> list[tuple[str, int, int]]:
    """A random straight-line program: each step applies an op to earlier values (fan-out)."""
    rnd = random.Random(seed)
    steps = []
    for k in range(n_ops):
        available = n_leaves + k
        if rnd.random() < 0.4:
            steps.append((rnd.choice(UNARY), rnd.randrange(available), -1))
        else:
            steps.append((rnd.choice(BINARY), rnd.randrange(available), rnd.randrange(available)))
    return steps


def _build(lib: Any, seed: int, leaves: list[Any]) -> tuple[Any, list[Any]]:
    values = list(leaves)
    for name, i, j in _program(seed, len(leaves)):
        x = values[i]
        if j < 0:
            values.append(getattr(x, name)() * 0.5)  # (keeps exp from growing)
        else:
            values.append(getattr(x, name)(values[j]))
    rnd = random.Random(seed + 1)
    picked = rnd.sample(values[len(leaves):], 3)
    loss = picked[0].sum() + (picked[1] * picked[2]).sum()
    return loss, values


def _record_order(loss: Any) -> list[str]:
    """Register a pre-hook on every node (but leaves' accumulators, whose mutual order PyTorch
    does not fix) that appends the node's name to the returned list when it runs."""
    order: list[str] = []
    seen: set[int] = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__ if not hasattr(node, "name") else node.name()
        if "AccumulateGrad" not in name:
            node.register_prehook(lambda grads, name=name: order.append(name))
        stack.extend(nxt for nxt, _ in node.next_functions)
    return order


def _leaves(lib: Any, seed: int, n: int = 3) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.uniform(-1, 1, (4,)), requires_grad=True) for _ in range(n)]


@pytest.mark.parametrize("seed", range(12))
def test_backward_runs_nodes_in_pytorchs_order(torch: Any, seed: int) -> None:
    results = {}
    for lib in (rg, torch):
        leaves = _leaves(lib, seed)
        loss, _ = _build(lib, seed, leaves)
        order = _record_order(loss)
        loss.backward()
        results[lib.__name__] = (order, [None if leaf.grad is None else leaf.grad.numpy() for leaf in leaves])
    (rg_order, rg_grads), (t_order, t_grads) = results["retrograd"], results["torch"]
    assert rg_order == t_order
    for a, b in zip(rg_grads, t_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("which", ["all", "some"])
def test_autograd_grad_runs_the_needed_nodes_in_pytorchs_order(torch: Any, seed: int, which: str) -> None:
    results = {}
    for lib in (rg, torch):
        leaves = _leaves(lib, seed)
        loss, _ = _build(lib, seed, leaves)
        order = _record_order(loss)
        # "some": a leaf left out, so the pass runs only the nodes from which the rest is reached.
        inputs = leaves if which == "all" else leaves[:2]
        grads = lib.autograd.grad(loss, inputs, allow_unused=True)
        results[lib.__name__] = (order, [None if g is None else g.numpy() for g in grads],
                                 [leaf.grad for leaf in leaves])
    (rg_order, rg_grads, rg_dot_grads), (t_order, t_grads, _) = results["retrograd"], results["torch"]
    assert rg_order == t_order
    assert all(g is None for g in rg_dot_grads)  # autograd.grad leaves .grad alone
    for a, b in zip(rg_grads, t_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_hessian_vector_product_matches_pytorch(torch: Any, seed: int) -> None:
    results = {}
    for lib in (rg, torch):
        leaves = _leaves(lib, seed)
        loss, _ = _build(lib, seed, leaves)
        grads = lib.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
        rng = np.random.default_rng(seed + 100)
        vectors = [lib.tensor(rng.uniform(-1, 1, (4,))) for _ in grads]
        dot = sum((g * v).sum() for g, v in zip(grads, vectors) if g is not None and g.requires_grad)
        order = _record_order(dot)
        hvp = lib.autograd.grad(dot, leaves, allow_unused=True)
        results[lib.__name__] = (order, [None if h is None else h.numpy() for h in hvp])
    (rg_order, rg_hvp), (t_order, t_hvp) = results["retrograd"], results["torch"]
    assert sorted(rg_order) == sorted(t_order)  # the same nodes ran (the double-backward graphs match)
    for a, b in zip(rg_hvp, t_hvp):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_node_handed_over_past_waiting_nodes_runs_before_them() -> None:
    # b's node is created after a's and both wait on the sum: when ``y``'s node makes the later
    # one ready while the earlier one is already in the heap, it must still run first.
    x = rg.ones(2, requires_grad=True)
    order: list[str] = []
    a = x * 2
    b = x * 3
    y = a + b
    z = (y * y).sum() + a.sum()
    a.grad_fn.register_prehook(lambda g: order.append("a"))
    b.grad_fn.register_prehook(lambda g: order.append("b"))
    y.grad_fn.register_prehook(lambda g: order.append("y"))
    z.backward()
    assert order == ["y", "b", "a"]
    assert x.grad.tolist() == [2 * 5 * (2 + 3) + 2] * 2  # d/dx of sum((5x)²) + sum(2x)


@pytest.mark.parametrize("kind", ["tensor_hook", "post_accumulate_hook"])
@pytest.mark.parametrize("hooked", [0, 1, 2])
def test_leaves_accumulate_in_edge_order_around_a_hooked_leaf(torch: Any, hooked: int, kind: str) -> None:
    # A leaf with a tensor hook goes through the heap, one with a post-accumulate hook does not:
    # either way the leaves must accumulate in edge order around it, as the hook, which looks
    # at every leaf's .grad (before or after its own accumulation), sees in PyTorch.
    seen = {}
    for lib in (rg, torch):
        leaves = [lib.ones(2, requires_grad=True) for _ in range(3)]
        looks: list[list[bool]] = []

        def look(*_: Any, leaves: list[Any] = leaves, looks: list[list[bool]] = looks) -> None:
            looks.append([leaf.grad is not None for leaf in leaves])

        if kind == "tensor_hook":
            leaves[hooked].register_hook(look)
        else:
            leaves[hooked].register_post_accumulate_grad_hook(look)
        lib.stack(leaves).sum().backward()
        seen[lib.__name__] = looks
    assert seen["retrograd"] == seen["torch"]


@pytest.mark.parametrize("kind", ["tensor_hook", "prehook", "posthook", "post_accumulate_hook"])
def test_a_hook_registered_on_one_leaf_after_the_graph_was_built_runs_as_in_pytorch(torch: Any, kind: str) -> None:
    results = {}
    for lib in (rg, torch):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.5, 0.25], dtype=lib.float64, requires_grad=True)
        loss = (x * w).sum()
        calls: list[Any] = []
        w_acc = loss.grad_fn.next_functions[0][0].next_functions[1][0]  # sum <- mul(x, w) <- w
        if kind == "tensor_hook":
            w.register_hook(lambda g, calls=calls: calls.append(g.tolist()) or g * 3)
        elif kind == "prehook":
            w_acc.register_prehook(lambda gs, calls=calls: calls.append(gs[0].tolist()) or (gs[0] * 3,))
        elif kind == "posthook":
            w_acc.register_hook(lambda gi, go, calls=calls: calls.append((len(gi), go[0].tolist())))
        else:
            w.register_post_accumulate_grad_hook(lambda t, calls=calls: calls.append(t.grad.tolist()))
        loss.backward()
        results[lib.__name__] = (calls, x.grad.tolist(), w.grad.tolist())
    assert results["retrograd"] == results["torch"]


@pytest.mark.parametrize("order", ["hooked_first", "hooked_last"])
def test_a_leaf_hook_sees_the_other_leaf_as_pytorch_does(torch: Any, order: str) -> None:
    seen = {}
    for lib in (rg, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        hooked, other = (a, b) if order == "hooked_first" else (b, a)
        looks: list[bool] = []
        hooked.register_post_accumulate_grad_hook(lambda t, other=other, looks=looks: looks.append(other.grad is None))
        (a * b).sum().backward()
        seen[lib.__name__] = looks
    assert seen["retrograd"] == seen["torch"]


def _leaf_graph(lib: Any) -> tuple[Any, Any, Any, Any]:
    """Two leaves, one reached by three edges (two from one node), a retained intermediate."""
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.5, 0.25, -0.5], dtype=lib.float64, requires_grad=True)
    h = (x * w).tanh()
    h.retain_grad()
    loss = (h * x).sum() + (x * x).sum()
    return x, w, h, loss


def test_hooks_registered_after_the_graph_was_built_run_as_in_pytorch(torch: Any) -> None:
    results = {}
    for lib in (rg, torch):
        x, w, h, loss = _leaf_graph(lib)
        calls: list[Any] = []
        # All registered once the graph exists: on the leaf tensor, on its AccumulateGrad, after accumulation.
        x.register_hook(lambda g, calls=calls: calls.append(("tensor", g.tolist())) or g * 2)
        w_acc = h.grad_fn.next_functions[0][0].next_functions[1][0]  # tanh <- mul(x, w) <- w
        w_acc.register_prehook(lambda gs, calls=calls: calls.append(("pre", gs[0].tolist())))
        w_acc.register_hook(lambda gi, go, calls=calls: calls.append(("post", len(gi), go[0].tolist())))
        w.register_post_accumulate_grad_hook(lambda t, calls=calls: calls.append(("after", t.grad.tolist())))
        loss.backward()
        results[lib.__name__] = (calls, x.grad.tolist(), w.grad.tolist(), h.grad.tolist())
    rg_calls, *rg_grads = results["retrograd"]
    t_calls, *t_grads = results["torch"]
    assert rg_calls == t_calls
    for a, b in zip(rg_grads, t_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("anomaly", [False, True])
def test_leaf_gradients_accumulate_into_an_existing_grad_as_in_pytorch(torch: Any, anomaly: bool) -> None:
    results = {}
    for lib in (rg, torch):
        with lib.autograd.set_detect_anomaly(anomaly):
            x, w, h, loss = _leaf_graph(lib)
            loss.backward()
            first_x, first_w = x.grad.tolist(), w.grad.tolist()
            kept = x.grad
            (((x * w).tanh() * x).sum() + (x * x).sum()).backward()  # the same loss again
            results[lib.__name__] = (first_x, first_w, h.grad.tolist(), x.grad.tolist(), w.grad.tolist(),
                                     x.grad is kept)
    rg_r, t_r = results["retrograd"], results["torch"]
    assert rg_r[-1] is t_r[-1] is True  # accumulated in place into the same tensor
    for a, b in zip(rg_r[:-1], t_r[:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_scalar_leaf_as_the_root_gets_its_gradient(torch: Any) -> None:
    grads = {}
    for lib in (rg, torch):
        x = lib.tensor(3.0, requires_grad=True)
        x.backward()
        x.backward()
        grads[lib.__name__] = x.grad.item()
    assert grads["retrograd"] == grads["torch"] == 2.0
