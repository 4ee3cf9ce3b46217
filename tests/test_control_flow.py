"""``torch.cond`` / ``torch.while_loop`` (eager semantics): the branch taken, the loop's result and
their gradients (by hand and gradcheck), and the predicate and metadata errors. PyTorch's eager
calls compile the functions (seconds each), so the oracle is the math written out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


@pytest.mark.parametrize("pred", [True, 1, 2.5, "tensor true"])
def test_cond_takes_the_true_branch(pred: Any) -> None:
    x = rg.tensor([0.5, -1.0], dtype=rg.float64, requires_grad=True)
    p = rg.tensor(True) if pred == "tensor true" else pred
    y = rg.cond(p, lambda t: t.sin(), lambda t: t.cos(), (x,))
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), np.sin([0.5, -1.0]))
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, -1.0]))


def test_cond_false_branch_tensor_predicate_and_list_operands() -> None:
    x = rg.tensor([0.5, -1.0], dtype=rg.float64, requires_grad=True)
    y = rg.cond(x.sum() > 0, lambda a, b: a * b, lambda a, b: a + b, [x, x])
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [1.0, -2.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    assert rg.cond(rg.tensor([[0.0]]), lambda: rg.ones(2), lambda: rg.zeros(2)).tolist() == [0.0, 0.0]


def test_cond_rejects_a_multi_element_predicate_as_torch() -> None:
    with pytest.raises(RuntimeError, match=r"^Expected pred to be bool or single-element tensor, but got "):
        rg.cond(rg.tensor([True, False]), lambda: 1, lambda: 2)


def test_while_loop_result_and_gradient() -> None:
    s0 = rg.tensor([1.0, 3.0], dtype=rg.float64, requires_grad=True)
    i, s = rg.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * s), (rg.tensor(0), s0))
    assert i.item() == 3
    np.testing.assert_allclose(s.detach().numpy(), [1.0, 3.0 ** 8])
    s.sum().backward()
    np.testing.assert_allclose(s0.grad.numpy(), [8.0, 8 * 3.0 ** 7])  # d s^8 / ds
    assert rg.autograd.gradcheck(lambda t: rg.while_loop(lambda i, u: i < 2, lambda i, u: (i + 1, u.sin()),
                                                         (rg.tensor(0), t))[1], (s0,))


def test_while_loop_returns_a_tuple_and_may_not_run() -> None:
    out = rg.while_loop(lambda i: i < 0, lambda i: (i + 1,), [rg.tensor(5)])
    assert isinstance(out, tuple) and out[0].item() == 5


def test_while_loop_refuses_a_body_that_changes_dtype_or_shape() -> None:
    with pytest.raises(RuntimeError, match="^Expected body_fn_output and carried_inputs to have same metadata"):
        rg.while_loop(lambda i: i < 3, lambda i: (i + 1.0,), (rg.tensor(0),))
    with pytest.raises(RuntimeError, match="^Expected body_fn_output and carried_inputs to have same metadata"):
        rg.while_loop(lambda x: x.sum() < 3, lambda x: (rg.cat([x, x]),), (rg.ones(1),))
