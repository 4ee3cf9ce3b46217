"""``loss.backward()`` starts without counting the edges into each node (engine.run_backward).

It relies on two facts: a node is made after the nodes it points at, so of the nodes that
received a gradient the latest-created has received all of them; and a leaf's AccumulateGrad
that was handed out for a single edge is complete with that edge's gradient. A node for which
neither holds (a leaf reached by several edges, or by a graph that is still alive; a view's node
made while the op using it recorded its edges; edges copied from a node that stays in the graph)
turns the rest of the pass into a counted one. These tests hold each case to PyTorch: the order
in which nodes run (pre-hooks), how often each runs, the gradients, and that a pass that fails
midway leaves grad mode and the collector's thresholds as they were.
"""

from __future__ import annotations

import gc
import random
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _hook_every_node(root: Any, calls: list[str]) -> None:
    """A pre-hook on every node below ``root`` that appends the node's name each time it runs
    (leaves' AccumulateGrads included: a second run of one would show)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = node.name()
        node.register_prehook(lambda grads, name=name: calls.append(name))
        stack.extend(nxt for nxt, _ in node.next_functions)


def _chain(x: Any, n: int) -> Any:
    for i in range(n):
        x = x * 1.01 if i % 2 else x.tanh()
    return x


def _leaf(lib: Any, seed: int, n: int = 4) -> Any:
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.uniform(-1, 1, (n,)), dtype=lib.float64, requires_grad=True)


def _compare(build: Any, torch: Any) -> None:
    """Run ``build(lib) -> (loss, leaves)`` in both libraries with every node hooked; the calls
    (order and number, leaves among them only as a multiset: PyTorch does not fix their mutual
    order) and the leaves' gradients must be PyTorch's."""
    results = {}
    for lib in (rg, torch):
        loss, leaves = build(lib)
        calls: list[str] = []
        _hook_every_node(loss.grad_fn, calls)
        loss.backward()
        ops = [c for c in calls if "AccumulateGrad" not in c]
        accumulations = sorted(c for c in calls if "AccumulateGrad" in c)
        results[lib.__name__] = (ops, accumulations, [None if leaf.grad is None else leaf.grad.numpy().copy() for leaf in leaves])
    (rg_ops, rg_acc, rg_grads), (t_ops, t_acc, t_grads) = results["retrograd"], results["torch"]
    assert rg_ops == t_ops
    assert rg_acc == t_acc
    for a, b in zip(rg_grads, t_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_a_chain_runs_every_node_once_in_pytorchs_order(torch: Any) -> None:
    _compare(lambda lib: ((_chain(_leaf(lib, 0), 60)).sum(), []), torch)


@pytest.mark.parametrize("seed", range(6))
def test_a_chain_into_a_diamond_with_a_reused_leaf_switches_to_counting_as_pytorch_runs(torch: Any, seed: int) -> None:
    # The walk goes uncounted down the chain, then meets a leaf with several edges while diamonds
    # (nodes with several consumers) are waiting in the heap: the switch must leave only the
    # complete ones ready.
    def build(lib: Any) -> tuple[Any, list[Any]]:
        rnd = random.Random(seed)
        x, w = _leaf(lib, seed), _leaf(lib, seed + 1)
        values = [x * w, x.sin()]
        for _ in range(8):
            a, b = rnd.choice(values), rnd.choice(values)
            values.append(a * b.tanh() if rnd.random() < 0.5 else a + b * w)
        y = values[-1] + values[rnd.randrange(len(values) - 1)]
        return _chain(y, 20).sum(), [x, w]

    _compare(build, torch)


def test_a_leaf_whose_accumulator_an_older_live_graph_shares_waits_for_its_edges(torch: Any) -> None:
    # w's AccumulateGrad was handed out for the first graph too (still alive): it is not known
    # to have one edge, so the pass counts; the result must be as if nothing were shared.
    older: list[Any] = []

    def build(lib: Any) -> tuple[Any, list[Any]]:
        x, w = _leaf(lib, 2), _leaf(lib, 3)
        older.append((w * 2.0).sum())  # kept alive
        return (_chain(x * w, 10) + (w * x).exp()).sum(), [x, w]

    _compare(build, torch)


def test_a_view_node_made_while_its_first_consumer_records_waits_for_it(torch: Any) -> None:
    # After base is written in place, v's node is made again on v's next use: while ``v * 2.0``
    # records its edges, so the new node is younger than that consumer. It must not run when
    # the later consumer ``v * 3.0`` has given it its gradient, before ``v * 2.0`` has.
    def build(lib: Any) -> tuple[Any, list[Any]]:
        x = _leaf(lib, 4, 6)
        base = x * 1.0
        v = base[1:4]
        with lib.no_grad():
            base.mul_(1.0)  # bumps the version: v's node is stale
        a = v * 2.0
        b = (v * 3.0).exp()
        return (a * 5.0).sum() + b.sum(), [x]

    _compare(build, torch)


def test_an_in_place_write_into_a_view_of_a_leafs_product_runs_as_in_pytorch(torch: Any) -> None:
    # The base's CopySlices takes over the edges of the in-place op's node (to w's accumulator
    # among them); w is also reached directly.
    def build(lib: Any) -> tuple[Any, list[Any]]:
        x, w = _leaf(lib, 5, 6), _leaf(lib, 6, 3)
        base = x * 1.0
        base[1:4].mul_(w)
        return (_chain(base, 6) * 3.0).sum() + (w * 2.0).sum(), [x, w]

    _compare(build, torch)


def _function_writing_in_grad_mode(counted: bool) -> tuple[list[str], list[float]]:
    """A custom Function whose forward records nodes in grad mode (an in-place write into its
    input, and a use of the result it leaks out): its node, made before the forward ran, points at
    a younger node, which another younger node also points at."""
    leaked: list[Any] = []

    class Scale(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, y: Any) -> Any:
            with rg.enable_grad():
                y.mul_(3.0)
                leaked.append((y * 5.0).exp())
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2.0

    x = rg.tensor([0.1, -0.2, 0.3], dtype=rg.float64, requires_grad=True)
    out = Scale.apply(x * 1.0)
    loss = (out * 7.0).sum() + leaked[0].sum()
    calls: list[str] = []
    _hook_every_node(loss.grad_fn, calls)
    loss.backward(inputs=[x] if counted else None)  # (with inputs: a counted pass)
    return calls, x.grad.tolist()


def test_a_custom_functions_node_older_than_a_node_it_points_at_runs_as_in_a_counted_pass() -> None:
    # (PyTorch itself differs here, for reasons of its own: the oracle is the counted pass.)
    assert _function_writing_in_grad_mode(counted=False) == _function_writing_in_grad_mode(counted=True)


@pytest.fixture
def odd_thresholds() -> Any:
    """Unusual collector thresholds, put back afterwards, so a restore to defaults would show."""
    before = gc.get_threshold()
    gc.set_threshold(699, 9, 11)
    yield gc.get_threshold()
    gc.set_threshold(*before)


@pytest.mark.parametrize("switch", [False, True], ids=["uncounted", "switched"])
def test_a_long_pass_that_fails_midway_restores_grad_mode_and_the_thresholds(odd_thresholds: Any, switch: bool) -> None:
    # The pass holds the collector guard once it has run 1024 nodes (it does not know its size
    # beforehand), or when it switches to counting with as many ahead; a hook then raises.
    x = rg.ones(3, requires_grad=True)
    w = rg.ones(3, requires_grad=True)
    during: list[tuple[int, int, int]] = []
    y = x * w if switch else x * 1.0
    y.register_hook(lambda g: during.append(gc.get_threshold()) or 1 / 0)  # type: ignore[func-returns-value]
    z = _chain(y, 1500)
    loss = (z * w).sum() if switch else z.sum()  # (switch: w is reached by two edges)
    with pytest.raises(ZeroDivisionError):
        loss.backward()
    assert during and during[0][2] > odd_thresholds[2]  # the guard was held
    assert gc.get_threshold() == odd_thresholds
    assert rg.is_grad_enabled()
    # Nothing of the failed pass lingers: a fresh graph's gradients are right.
    x.grad = w.grad = None
    (x * 3.0).sum().backward()
    assert x.grad.tolist() == [3.0] * 3 and w.grad is None
