"""``expand`` (and ``broadcast_to``, ``expand_as``) of a tensor with a zero-size dim, or to a size
with one, reports PyTorch's strides: a kept dim keeps its stride, an expanded or new one steps by
0 (NumPy's broadcast zeroes them all, which read as a new empty tensor's contiguous strides). A
new empty tensor's strides stay contiguous. Compared with real PyTorch's ``stride()``."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg

CASES = [((0,), (3, 0)), ((0,), (0,)), ((2, 0), (2, 0)), ((2, 0), (3, 2, 0)), ((1, 0), (4, 0)), ((0, 1), (0, 5)),
         ((0, 3), (2, 0, 3)), ((1,), (0,)), ((1, 1), (0, 3)), ((2, 1), (2, 0)), ((3,), (0, 3)), ((1, 3), (0, 3)),
         ((), (0,)), ((), (2, 0)), ((0, 2, 1), (0, 2, 4)), ((2, 0, 3), (-1, -1, -1)), ((0,), (2, -1))]


def _source(lib: Any, shape: tuple[int, ...]) -> Any:
    return lib.zeros(*shape) if shape else lib.tensor(0.0)


@pytest.mark.parametrize(("shape", "size"), CASES, ids=[f"{s}->{z}" for s, z in CASES])
def test_expand_with_zero_size_strides_as_torch(torch: Any, shape: tuple[int, ...], size: tuple[int, ...]) -> None:
    def strides(lib: Any) -> Any:
        out = _source(lib, shape).expand(*size)
        return tuple(out.shape), out.stride(), out.is_contiguous()
    assert strides(rg) == strides(torch)


@pytest.mark.parametrize("form", ["broadcast_to", "expand_as", "new empty", "expand, then contiguous"])
def test_neighbours_of_expand_strides_as_torch(torch: Any, form: str) -> None:
    def strides(lib: Any) -> Any:
        x = lib.zeros(1, 0)
        if form == "broadcast_to":
            return lib.broadcast_to(x, (3, 0)).stride()
        if form == "expand_as":
            return x.expand_as(lib.zeros(2, 3, 0)).stride()
        if form == "new empty":
            return lib.zeros(2, 0, 3).stride(), lib.empty(0).stride()
        return x.expand(4, 0).contiguous().stride()
    assert strides(rg) == strides(torch)


def test_expand_to_empty_backward_as_torch(torch: Any) -> None:
    def grads(lib: Any) -> Any:
        x = lib.ones(2, 1, dtype=lib.float64, requires_grad=True)
        x.expand(3, 2, 0).sum().backward()
        return x.grad.tolist(), x.grad.stride()
    assert grads(rg) == grads(torch)


def test_backward_through_empty_expands_as_torch(torch: Any) -> None:
    """An empty gradient expanded in backward (sum of an empty leaf) becomes the leaf's ``.grad``."""
    def grads(lib: Any) -> Any:
        x = lib.zeros(0, 3, dtype=lib.float64, requires_grad=True)
        x.sum().backward()
        y = lib.zeros(2, 0, dtype=lib.float64, requires_grad=True)
        y.mean(1).sum().backward()
        return tuple(x.grad.shape), x.grad.stride(), tuple(y.grad.shape)
    assert grads(rg) == grads(torch)
