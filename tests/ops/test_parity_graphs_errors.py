"""PyTorch's behaviour where ours differed (issue #8), compared with real PyTorch: the graph a
second-order backward records (node names and edges), and the errors of ops given dtypes they
have no kernel for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _graph(t: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """Every node reachable from ``t.grad_fn``: its class name and its edges' class names."""
    found, stack, seen = [], [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        found.append((type(fn).__name__,
                      tuple((None if n is None else type(n).__name__, nr) for n, nr in fn.next_functions)))
        stack.extend(n for n, _ in fn.next_functions)
    return sorted(found, key=repr)


@pytest.mark.parametrize("exponent", [0.5, 1.5, 2, 3, -1, -0.5, 2.5])
def test_pow_scalar_backward_graph_is_pytorchs(torch: Any, exponent: float) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor([1.5, 2.0, -0.0, 0.0], dtype=lib.float64, requires_grad=True)
        y = x ** exponent
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.ones_like(g))
        return _graph(g), g.detach().numpy().tolist(), gg.numpy().tolist()

    assert repr(run(rg)) == repr(run(torch))  # (repr: nan == nan, -0.0 != 0.0)


def test_pow_tensor_backward_graph_is_pytorchs(torch: Any) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.5, 3.0], dtype=lib.float64, requires_grad=True)
        gx, gy = lib.autograd.grad((x ** y).sum(), (x, y), create_graph=True)
        return _graph(gx), _graph(gy), gx.detach().numpy().tolist(), gy.detach().numpy().tolist()

    assert run(rg) == run(torch)


def test_pow_second_derivatives() -> None:
    x = rg.tensor([0.7, 1.3, 2.0], dtype=rg.float64, requires_grad=True)
    for e in (0.5, 1.5, 3, -1, 2.5):
        assert rg.autograd.gradgradcheck(lambda a, e=e: a ** e, (x,))
    y = rg.tensor([1.5, -2.0, 0.5], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda a, b: a ** b, (x, y))


def _outcome(fn: Any) -> str:
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
        return f"{type(e).__name__}: {e}"
    return f"ok {result.dtype}"


_ = np
