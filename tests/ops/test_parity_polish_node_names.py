"""Nodes print and name themselves as PyTorch's: the nodes PyTorch writes by hand in C++ give
their C++ names from ``name()`` (``torch::autograd::NotImplemented`` for an op without a
derivative, ``torch::autograd::Error`` for a second derivative that raises), and a custom
``Function``'s node prints with the module PyTorch makes it in. Compared with real PyTorch."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg


def _square(lib: Any) -> Any:
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    return Square.apply(lib.ones(2, requires_grad=True)).grad_fn


def _split(lib: Any) -> Any:
    class Split(lib.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, a: Any, b: Any) -> Any:
            return a * 2 + b * 3

    return Split.apply(lib.ones(2, requires_grad=True))[1].grad_fn


def _second_derivative_error(lib: Any) -> Any:
    """scatter_reduce(prod) with two zeros at one position: the source's gradient's node raises."""
    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    src = lib.tensor([0.0, 0.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
    out = x.scatter_reduce(0, lib.tensor([0, 0, 1, 1]), src, "prod")
    (grad,) = lib.autograd.grad(out.sum(), src, create_graph=True)
    return grad.grad_fn


_NODES: list[tuple[str, Any]] = [
    ("floor_divide (no derivative)", lambda lib: lib.floor_divide(lib.ones(2, requires_grad=True), 2).grad_fn),
    ("heaviside (no derivative)",
     lambda lib: lib.heaviside(lib.ones(2, requires_grad=True), lib.ones(2)).grad_fn),
    ("scatter(reduce=) (no derivative)",
     lambda lib: lib.zeros(3, requires_grad=True).scatter(0, lib.tensor([0]), lib.ones(1), reduce="add").grad_fn),
    ("second derivative that raises", _second_derivative_error),
    ("custom Function", _square),
    ("custom Function, setup_context", _split),
    ("AccumulateGrad", lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0]),
    ("an op's node", lambda lib: lib.ones(2, requires_grad=True).exp().grad_fn),
]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("make", _NODES, ids=[n[0] for n in _NODES])
def test_node_name_and_repr_as_torch(torch: Any, make: Any) -> None:
    def described(lib: Any) -> Any:
        node = make[1](lib)
        return node.name(), type(node).__name__, repr(node).split(" object at ")[0]
    assert described(rg) == described(torch)


def test_error_node_raises_when_reached(torch: Any) -> None:
    def message(lib: Any) -> str:
        try:
            _second_derivative_error(lib)(lib.ones(4, dtype=lib.float64))
        except RuntimeError as e:
            return str(e)
        return "no error"
    assert message(rg) == message(torch)
