"""The forward-mode transforms use the package's one pytree and one ``argnums`` check: their
structure messages print PyTorch's nested TreeSpec, and ``argnums`` is checked as torch.func
checks it (duplicates refused, a bool is an int), the same for every transform."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
import retrograd.func as rfunc
from conftest import outcome
from retrograd.func import _forward


def _f(a: Any, b: Any) -> Any:
    return (a * b).sum()


def _cases(lib: Any, fn: Any) -> dict[str, Any]:
    x = lib.ones(2)
    return {
        "jvp nested structure": lambda: fn.jvp(lambda a, b: a, (x, (x, {"k": [x, x]})), (x, (x, {"k": [x]}))),
        "jvp dict structure": lambda: fn.jvp(lambda a: a["p"], ({"p": x, "q": (x,)},), ({"p": x, "q": [x]},)),
        "linearize structure": lambda: fn.linearize(lambda a, b: a * b[0], x, (x, x))[1](x, (x, (x,))),
        "jacfwd duplicate argnums": lambda: fn.jacfwd(_f, argnums=(0, 0))(x, x),
        "jacfwd bool argnums": lambda: fn.jacfwd(_f, argnums=True)(x, x),
        "jacfwd bool in a tuple": lambda: fn.jacfwd(_f, argnums=(0, False))(x, x),
        "jacfwd (True,)": lambda: fn.jacfwd(_f, argnums=(True,))(x, x),
        "hessian duplicate argnums": lambda: fn.hessian(_f, argnums=(1, 1))(x, x),
        "grad bool argnums": lambda: fn.grad(_f, argnums=True)(x, x),
        "jacrev bool in a tuple": lambda: fn.jacrev(_f, argnums=(0, False))(x, x),
        "jacfwd argnums list": lambda: fn.jacfwd(_f, argnums=[0])(x, x),
    }


@pytest.mark.parametrize("name", sorted(_cases(rg, rfunc)))
def test_structure_and_argnums_checks_match_torch(torch: Any, name: str) -> None:
    assert outcome(_cases(rg, rfunc)[name]) == outcome(_cases(torch, torch.func)[name])


def test_one_implementation_of_each() -> None:
    from retrograd.func import _check_argnums, _pytree

    assert _forward._flatten is _pytree.tree_flatten
    assert _forward._unflatten is _pytree.tree_unflatten
    assert not hasattr(_forward, "_check_argnums")
    assert _check_argnums(True, 2) == 1
