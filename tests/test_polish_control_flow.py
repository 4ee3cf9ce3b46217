"""``cond`` with a tensor predicate records one ``CondAutogradOpBackward`` node, as PyTorch's
eager ``torch.cond``: its edges (None for the predicate, then the operands), values and
gradients against real PyTorch, and its gradient not differentiable again (as PyTorch's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _edges(t: Any) -> list[str]:
    return [type(f).__name__ for f, _ in t.grad_fn.next_functions]


@pytest.mark.parametrize("positive", [True, False])
def test_cond_records_one_node_as_torch(torch: Any, positive: bool) -> None:
    seen = []
    for lib in (torch, rg):
        x = lib.tensor([1.0, -2.0] if positive else [-1.0, -2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        out = lib.cond(x.sum() > 0, lambda a, b: (a * b).sin(), lambda a, b: (a - b).exp(), (x, w))
        (out * lib.tensor([2.0, -1.0], dtype=lib.float64)).sum().backward()
        seen.append((type(out.grad_fn).__name__, _edges(out), out.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    (name, edges, *values), (want_name, want_edges, *want_values) = seen[1], seen[0]
    assert (name, edges) == (want_name, want_edges) == ("CondAutogradOpBackward",
                                                        ["NoneType", "AccumulateGrad", "AccumulateGrad"])
    for got, want in zip(values, want_values, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cond_tuple_result_and_non_leaf_operand(torch: Any) -> None:
    seen = []
    for lib in (torch, rg):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * 3
        out = lib.cond(lib.tensor(True), lambda a: (a * a, a + 1), lambda a: (a * 1, a - 1), (y,))
        (out[0].sum() + 2 * out[1].sum()).backward()
        seen.append(([type(o.grad_fn).__name__ for o in out], _edges(out[0]), x.grad.numpy()))
    assert seen[1][:2] == seen[0][:2]
    np.testing.assert_allclose(seen[1][2], seen[0][2])


def test_cond_gradient_is_not_differentiable_again(torch: Any) -> None:
    for lib in (torch, rg):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        out = lib.cond(x.sum() < 0, lambda t: t.exp(), lambda t: t * 2, (x,))
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        assert g.grad_fn is None and not g.requires_grad
        np.testing.assert_allclose(g.detach().numpy(), np.exp([1.0, -2.0]), rtol=1e-6)


def test_cond_with_a_python_bool_or_without_grad_runs_the_branch(torch: Any) -> None:
    for lib in (torch, rg):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert type(lib.cond(True, lambda t: t * 2, lambda t: t.sin(), (x,)).grad_fn).__name__ == "MulBackward0"
        with lib.no_grad():
            assert not lib.cond(lib.tensor(True), lambda t: t * 2, lambda t: t.sin(), (x,)).requires_grad


def test_cond_backward_twice_with_retain_graph() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    out = rg.cond(rg.tensor(True), lambda t: t * t, lambda t: t, (x,))
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
