"""The ``*_copy`` functions record one node, as PyTorch's: ``TBackward0_copy`` whose edges lead
straight to the input's node (no view node behind it); the gradients, first and second order,
are the view's, and the result owns its data (writes to it reach nothing else)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

_CALLS: list[tuple[str, Any]] = [
    ("t_copy", lambda lib, x: lib.t_copy(x)),
    ("transpose_copy", lambda lib, x: lib.transpose_copy(x, 0, 1)),
    ("permute_copy", lambda lib, x: lib.permute_copy(x, (1, 0))),
    ("select_copy", lambda lib, x: lib.select_copy(x, 0, 1)),
    ("slice_copy", lambda lib, x: lib.slice_copy(x, 1, 1, 3)),
    ("slice_copy whole", lambda lib, x: lib.slice_copy(x, 0, 0, 3)),
    ("narrow_copy", lambda lib, x: lib.narrow_copy(x, 1, 0, 2)),
    ("squeeze_copy", lambda lib, x: lib.squeeze_copy(x.unsqueeze(0))),
    ("unsqueeze_copy", lambda lib, x: lib.unsqueeze_copy(x, 0)),
    ("view_copy", lambda lib, x: lib.view_copy(x, (12,))),
    ("expand_copy", lambda lib, x: lib.expand_copy(x[0], (2, 4))),
    ("alias_copy", lambda lib, x: lib.alias_copy(x)),
    ("as_strided_copy", lambda lib, x: lib.as_strided_copy(x, (2, 2), (1, 2))),
    ("unfold_copy", lambda lib, x: lib.unfold_copy(x, 1, 2, 1)),
    ("diagonal_copy", lambda lib, x: lib.diagonal_copy(x)),
    ("unbind_copy", lambda lib, x: lib.unbind_copy(x, 1)),
    ("split_copy", lambda lib, x: lib.split_copy(x, 2, 1)),
    ("split_with_sizes_copy", lambda lib, x: lib.split_with_sizes_copy(x, [1, 3], 1)),
]


def _nodes(out: Any) -> list[tuple[str, list[str]]]:
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [(o.grad_fn.name(), [type(f).__name__ for f, _ in o.grad_fn.next_functions]) for o in outs]


def _run(lib: Any, fn: Any, through_op: bool) -> tuple[Any, Any, Any]:
    leaf = lib.arange(12, dtype=lib.float64).reshape(3, 4).requires_grad_()
    x = leaf * 2 if through_op else leaf
    out = fn(lib, x)
    outs = out if isinstance(out, (tuple, list)) else [out]
    weights = [lib.arange(o.numel(), dtype=lib.float64).reshape(o.shape) for o in outs]
    sum(((o * w).sum() for o, w in zip(outs, weights)), lib.zeros((), dtype=lib.float64)).backward()
    return out, _nodes(out), leaf.grad.numpy()


@pytest.mark.parametrize("through_op", [False, True], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_copy_records_one_node_as_torch(torch: Any, call: Any, through_op: bool) -> None:
    _, fn = call
    _, want_nodes, want_grad = _run(torch, fn, through_op)
    _, got_nodes, got_grad = _run(rg, fn, through_op)
    assert got_nodes == want_nodes
    np.testing.assert_array_equal(got_grad, want_grad)


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_copy_owns_its_data(call: Any) -> None:
    _, fn = call
    x = rg.arange(12, dtype=rg.float64).reshape(3, 4).requires_grad_()
    before = x.detach().clone()
    out = fn(rg, x)
    for o in out if isinstance(out, (tuple, list)) else [out]:
        assert o._base is None and not o._is_view()
        o.detach().fill_(-1.0)
    np.testing.assert_array_equal(x.detach().numpy(), before.numpy())


def test_inplace_on_a_copy_then_backward(torch: Any) -> None:
    grads = []
    for lib in (torch, rg):
        x = lib.arange(6, dtype=lib.float64).reshape(2, 3).requires_grad_()
        y = lib.t_copy(x * 1)
        y.mul_(3)
        assert type(y.grad_fn).__name__ == "MulBackward0"
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "TBackward0_copy"
        (y * lib.arange(6, dtype=lib.float64).reshape(3, 2)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("name", ["t_copy", "select_copy", "unbind_copy", "expand_copy"])
def test_copy_second_order(name: str) -> None:
    fn = dict(_CALLS)[name]
    x = rg.randn(3, 4, dtype=rg.float64, requires_grad=True)

    def f(t: Any) -> Any:
        out = fn(rg, t * t)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return rg.stack([o.sum() for o in outs])

    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradgradcheck(f, (x,))
