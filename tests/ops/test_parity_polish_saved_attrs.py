"""The saved attributes of the index_copy / index_add / scatter nodes are PyTorch's: the names
``dir()`` lists (``_saved_source_dim`` included, no attribute of ours that PyTorch lacks) and
their values, whichever inputs require grad. Compared with real PyTorch's nodes."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg

# What PyTorch's node keeps that ours does not: index_add's whole source (ours keeps its shape).
_NOT_KEPT = {"IndexAddBackward0": {"_saved_source"}}


def _saved(lib: Any, node: Any) -> dict[str, Any]:
    values = {}
    for name in dir(node):
        if name.startswith("_saved_") and name not in _NOT_KEPT.get(type(node).__name__, ()):
            value = getattr(node, name)
            values[name] = value.tolist() if isinstance(value, lib.Tensor) else value
    return values


_NODES: list[tuple[str, Any]] = [
    ("index_copy, both require grad", lambda lib: lib.zeros(3, 2, requires_grad=True).index_copy(
        0, lib.tensor([0, 2]), lib.ones(2, 2, requires_grad=True)).grad_fn),
    ("index_copy, source requires grad", lambda lib: lib.zeros(3, 2).index_copy(
        1, lib.tensor([1]), lib.ones(3, 1, requires_grad=True)).grad_fn),
    ("index_copy_, self requires grad", lambda lib: (lib.zeros(3, 2, requires_grad=True) * 1).index_copy_(
        0, lib.tensor([0, 2]), lib.ones(2, 2)).grad_fn),
    ("index_copy, 0-d", lambda lib: lib.zeros((), requires_grad=True).index_copy(
        0, lib.tensor([0]), lib.ones((), requires_grad=True)).grad_fn),
    ("index_add, alpha", lambda lib: lib.zeros(3, 2, requires_grad=True).index_add(
        0, lib.tensor([0, 2]), lib.ones(2, 2, requires_grad=True), alpha=2).grad_fn),
    ("scatter", lambda lib: lib.zeros(3, 2, requires_grad=True).scatter(
        0, lib.tensor([[0, 2]]), lib.ones(1, 2, requires_grad=True)).grad_fn),
    ("scatter_add", lambda lib: lib.zeros(3, 2, requires_grad=True).scatter_add(
        0, lib.tensor([[0, 2]]), lib.ones(1, 2, requires_grad=True)).grad_fn),
]


@pytest.mark.parametrize("make", _NODES, ids=[n[0] for n in _NODES])
def test_saved_attributes_as_torch(torch: Any, make: Any) -> None:
    ours, theirs = make[1](rg), make[1](torch)
    assert type(ours).__name__ == type(theirs).__name__
    assert _saved(rg, ours) == _saved(torch, theirs)


def test_index_copy_gradients_unchanged() -> None:
    x = rg.randn(3, 2, dtype=rg.float64, requires_grad=True)
    for source in (rg.randn(2, 2, dtype=rg.float64, requires_grad=True),):
        def f(a: rg.Tensor, s: rg.Tensor) -> rg.Tensor:
            return a.index_copy(0, rg.tensor([2, 0]), s)
        assert rg.autograd.gradcheck(f, (x, source))
        assert rg.autograd.gradgradcheck(f, (x, source))
    scalar = rg.randn((), dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda a, s: a.index_copy(0, rg.tensor([0]), s),
                                     (rg.randn((), dtype=rg.float64, requires_grad=True), scalar))
