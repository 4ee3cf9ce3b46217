"""The engine's shortcuts keep PyTorch's order and results exactly.

The engine hands a node that became ready straight to the next step, bypassing the heap, when
the heap would pop it next anyway (nothing else ready, or only nodes of lower sequence number),
and a partial backward (``autograd.grad``) whose every path ends at a requested input tests no
visit set. These tests build random graphs with fan-out, in retrograd and in PyTorch, and
compare the order in which backward nodes run (PyTorch's engine runs ready nodes latest-created
first) and the gradients, for ``backward``, ``autograd.grad`` w.r.t. all or some leaves, and a
Hessian-vector product through ``create_graph=True``.
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
