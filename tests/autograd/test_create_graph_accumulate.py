"""``backward(create_graph=True)``: the first gradient a leaf or a retained tensor receives is
stored as PyTorch stores it: a leaf's copied into the leaf's layout (``CopyBackwards``), a retained
tensor's or a gappy leaf's cloned (``CloneBackward0``), so ``.grad`` is never a view and
``zero_grad(set_to_none=False)`` works afterwards (it raised "Can't detach views in-place")."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _node_names(fn: Any) -> tuple[str | None, list[str | None]]:
    if fn is None:
        return None, []
    return fn.name(), [None if n is None else n.name() for n, _ in fn.next_functions]


def _cases(lib: Any) -> dict[str, Callable[[], list[Any]]]:
    """Each case builds a graph with ``lib``, runs ``backward(create_graph=True)`` and returns the
    tensors whose ``.grad`` to compare."""
    def leaf_through_transpose() -> list[Any]:
        x = lib.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        (x.t() * w).pow(2).sum().backward(create_graph=True)
        return [x, w]

    def leaf_two_contributions() -> list[Any]:
        q = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        (q * q * q).sum().backward(create_graph=True)
        return [q]

    def transposed_leaf() -> list[Any]:
        p = lib.tensor(np.arange(12.0).reshape(3, 4)).t().detach().requires_grad_()
        (p * p).sum().backward(create_graph=True)
        return [p]

    def gappy_leaf() -> list[Any]:
        v = lib.tensor(np.arange(24.0).reshape(4, 6))[:, ::2].detach().requires_grad_()
        (v * v).sum().backward(create_graph=True)
        return [v]

    def retained() -> list[Any]:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward(create_graph=True)
        return [x, y]

    def non_leaf_input() -> list[Any]:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        (y * y).sum().backward(create_graph=True, inputs=[y])
        return [y]

    def constant_gradient() -> list[Any]:
        c = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        (c * 3).sum().backward(create_graph=True)
        return [c]

    def second_accumulation() -> list[Any]:
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        (x * x).sum().backward(create_graph=True)
        (x * x * x).sum().backward(create_graph=True)
        return [x]

    return {f.__name__: f for f in (leaf_through_transpose, leaf_two_contributions, transposed_leaf, gappy_leaf,
                                    retained, non_leaf_input, constant_gradient, second_accumulation)}


@pytest.mark.parametrize("case", list(_cases(rg)))
def test_first_gradient_under_create_graph_is_stored_as_pytorch_stores_it(torch: Any, case: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the reference-cycle warning, both libraries)
        ours, theirs = _cases(rg)[case](), _cases(torch)[case]()
    for a, b in zip(ours, theirs):
        assert _node_names(a.grad.grad_fn) == _node_names(b.grad.grad_fn)
        assert a.grad.stride() == b.grad.stride()
        assert a.grad._base is None and b.grad._base is None
        assert a.grad.requires_grad == b.grad.requires_grad
        np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.detach().numpy())
        if a.grad.requires_grad:  # differentiable through the stored copy, as PyTorch's
            x_ours, x_theirs = ours[0], theirs[0]
            (g_ours,) = rg.autograd.grad(a.grad.pow(2).sum(), x_ours, allow_unused=True, retain_graph=True)
            (g_theirs,) = torch.autograd.grad(b.grad.pow(2).sum(), x_theirs, allow_unused=True,
                                                retain_graph=True)
            assert (g_ours is None) == (g_theirs is None)
            if g_ours is not None:
                np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy())


def test_zero_grad_without_set_to_none_after_create_graph(torch: Any) -> None:
    def run(lib: Any) -> list[np.ndarray]:
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model(x).pow(2).sum().backward(create_graph=True)
        model.zero_grad(set_to_none=False)
        return [p.grad.numpy().copy() for p in model.parameters()]

    for a, b in zip(run(rg), run(torch)):
        assert a.shape == b.shape and not a.any() and not b.any()


def test_copy_node_has_pytorchs_cpp_name(torch: Any) -> None:
    def run(lib: Any) -> str:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = lib.zeros(2)
        a.copy_(x * 2)
        return a.grad_fn.name()  # type: ignore[no-any-return]

    assert run(rg) == run(torch) == "torch::autograd::CopyBackwards"
