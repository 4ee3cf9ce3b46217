"""A recorded graph keeps few objects for the cycle collector, and the engine walks it once.

Every object a live graph keeps is scanned by CPython's cycle collector, so the per-op cost of a
long chain of small ops grows with the objects each node keeps: nodes share one shape tuple per
distinct output shape (``ops/op.py``, ``intern_shape``). ``autograd.grad`` w.r.t. every leaf a
loss reaches counts dependencies in one walk, without the parent lists a partial backward needs
(``engine._dependencies`` given the captures). Results are PyTorch's either way.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.autograd import engine
from retrograd.ops import op as op_module


def _chain(x: Any, c: Any, d: Any, n_ops: int) -> Any:
    y = x
    for i in range(n_ops):
        k = i % 3
        y = y * c if k == 0 else (y + d if k == 1 else y.tanh())
    return y


def test_nodes_of_equal_output_shapes_share_one_shape_tuple() -> None:
    x = rg.ones(3, 4, requires_grad=True)
    w = rg.ones(5, 4, requires_grad=True)
    a = x * 2  # binary path
    b = a.tanh()  # unary path
    c = rg.where(b > 0, b, a)  # generic path (record)
    d = F.linear(x, w, rg.ones(5))  # three-input path (addmm)
    e = d.relu()
    assert a.grad_fn._shape == (3, 4) and e.grad_fn._shape == (3, 5)
    assert a.grad_fn._shape is b.grad_fn._shape is c.grad_fn._shape
    assert d.grad_fn._shape is e.grad_fn._shape


def test_a_recorded_chain_keeps_at_most_four_and_a_half_collector_objects_per_node() -> None:
    rng = np.random.default_rng(0)
    c = rg.tensor(rng.uniform(0.9, 1.1, 16).astype(np.float32))
    d = rg.tensor(rng.uniform(-0.1, 0.1, 16).astype(np.float32))
    x = rg.tensor(rng.uniform(-1, 1, 16).astype(np.float32), requires_grad=True)
    _chain(x, c, d, 30).sum().backward()  # every node class and call path made
    n_ops = 3000
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        y = _chain(x, c, d, n_ops)
        per_node = (len(gc.get_objects()) - before) / n_ops
    finally:
        if was_enabled:
            gc.enable()
    # node, its edges (outer and inner tuple), saved slots, a SavedTensor for tanh: 4.33 per op
    # (5.33 while each node had its own shape tuple)
    assert per_node <= 4.5, per_node
    y.sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()


def test_the_shape_table_stays_bounded_and_exact() -> None:
    for n in range(op_module._SHAPES_MAX + 10):
        shape = (n, 1)
        assert op_module.intern_shape(shape) == shape
    assert len(op_module._SHAPES) <= op_module._SHAPES_MAX
    t = rg.zeros(op_module._SHAPES_MAX + 20, 2, requires_grad=True)
    assert (t * 2).grad_fn._shape == (op_module._SHAPES_MAX + 20, 2)


def _mlp(lib: Any) -> tuple[Any, list[Any]]:
    rng = np.random.default_rng(3)
    params = [lib.tensor(rng.standard_normal(s).astype(np.float64), requires_grad=True)
              for s in ((4, 6), (6,), (6, 3), (3,))]
    x = lib.tensor(rng.standard_normal((5, 4)))
    y = lib.tensor(np.array([0, 2, 1, 1, 0]))
    h = lib.nn.functional.relu(x @ params[0] + params[1])
    loss = lib.nn.functional.cross_entropy(h @ params[2] + params[3], y)
    return loss, params


def test_grad_wrt_every_leaf_counts_dependencies_in_one_walk(monkeypatch: pytest.MonkeyPatch, torch: Any) -> None:
    def no_parent_lists(roots: Any) -> Any:
        raise AssertionError("autograd.grad w.r.t. every leaf built parent lists")

    loss, params = _mlp(rg)
    t_loss, t_params = _mlp(torch)
    monkeypatch.setattr(engine, "_parents", no_parent_lists)
    grads = rg.autograd.grad(loss, params, create_graph=True)
    t_grads = torch.autograd.grad(t_loss, t_params, create_graph=True)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-12)
    # and the Hessian-vector product through them, again w.r.t. every leaf
    dot = sum((g * g).sum() for g in grads)
    t_dot = sum((g * g).sum() for g in t_grads)
    for h, th in zip(rg.autograd.grad(dot, params), torch.autograd.grad(t_dot, t_params)):
        np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-10, atol=1e-12)


def test_grad_wrt_some_leaves_still_runs_only_the_needed_nodes(torch: Any) -> None:
    loss, params = _mlp(rg)
    t_loss, t_params = _mlp(torch)
    ran = []
    for fn in (loss.grad_fn, loss.grad_fn.next_functions[0][0]):
        fn.register_prehook(lambda grads, fn=fn: ran.append(fn.name()))
    (g,) = rg.autograd.grad(loss, [params[0]])
    (tg,) = torch.autograd.grad(t_loss, [t_params[0]])
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, atol=1e-12)
    assert ran[0] == loss.grad_fn.name()
    assert params[1].grad is None and params[0].grad is None
