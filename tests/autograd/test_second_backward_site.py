"""A second backward through a freed graph: PyTorch's message, unchanged, then where the backward
that freed it ran (file:line of the user's backward()/autograd.grad call)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import retrograd as rg
from retrograd.autograd.graph import FREED_MESSAGE, is_released


def here() -> int:
    return sys._getframe(1).f_lineno


def second(lib: Any, first: str) -> tuple[str, int]:
    """Run a first backward (by ``first``), then a second one; the error and the first's line."""
    x = lib.ones(3, requires_grad=True)
    y = (x * x).exp().sum()
    if first == "backward":
        y.backward(); line = here()  # noqa: E702
    else:
        lib.autograd.grad(y, x); line = here()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return str(info.value), line


@pytest.mark.parametrize("first", ["backward", "grad"])
def test_second_backward_names_the_first(torch: Any, first: str) -> None:
    ours, line = second(rg, first)
    theirs, _ = second(torch, first)
    assert ours.startswith(theirs)  # PyTorch's message first, unchanged
    assert ours.startswith(FREED_MESSAGE)
    assert ours[len(theirs):] == f" [retrograd] The graph was freed by the backward call at {__file__}:{line}."


def test_the_backward_that_freed_it_is_named_not_a_retaining_one() -> None:
    x = rg.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward(); line = here()  # noqa: E702
    with pytest.raises(RuntimeError, match=rf"backward call at .*test_second_backward_site.py:{line}\.$"):
        y.backward()


def test_one_marker_per_backward_and_is_released() -> None:
    x = rg.ones(3, requires_grad=True)
    a = x * x
    b = a.exp()
    c = b.sum()
    assert not is_released(a.grad_fn)
    c.backward()
    assert is_released(a.grad_fn) and is_released(b.grad_fn)
    assert a.grad_fn._saved is b.grad_fn._saved  # made once per backward call, not per node
    assert not is_released(c.grad_fn)  # saved nothing: nothing to release


def test_custom_function_and_copy_slices_name_the_site(torch: Any) -> None:
    class Square(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (t,) = ctx.saved_tensors
            return 2 * t * g

    x = rg.ones(3, requires_grad=True)
    y = Square.apply(x).sum()
    y.backward(); line = here()  # noqa: E702
    with pytest.raises(RuntimeError, match=rf"at .*:{line}\.$"):
        y.backward()

    z = x.exp().clone()
    z[0] = z[1] * 2  # CopySlices: its release frees the inner node too
    s = z.exp().sum()
    s.backward(); line = here()  # noqa: E702
    with pytest.raises(RuntimeError, match=rf"at .*:{line}\.$") as info:
        s.backward()
    assert str(info.value).startswith(FREED_MESSAGE)


def test_saved_attribute_access_keeps_pytorchs_exact_message(torch: Any) -> None:
    def read(lib: Any) -> str:
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            y.grad_fn._saved_result  # noqa: B018
        return str(info.value)

    assert read(rg) == read(torch)
