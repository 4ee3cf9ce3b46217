"""``Module.zero_grad`` and ``Optimizer.zero_grad`` share one helper (``retrograd._grad_utils``)
and behave as PyTorch's: ``set_to_none=True`` drops the gradients, ``False`` zeroes each in place
(the same tensor), detached from any graph a ``create_graph`` backward gave it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd import _grad_utils
from retrograd.nn.modules import module as module_mod
from retrograd.optim import optimizer as optimizer_mod


def _run(lib: Any, via: str, set_to_none: bool) -> tuple[Any, ...]:
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2).double()
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float64)
    params = list(model.parameters())
    grads = lib.autograd.grad((model(x) ** 2).sum(), params, create_graph=True)
    for p, g in zip(params, grads, strict=True):
        p.grad = g * 1  # a gradient with a graph of its own
    before = [p.grad for p in model.parameters()]
    (model.zero_grad if via == "module" else opt.zero_grad)(set_to_none=set_to_none)
    after = [p.grad for p in model.parameters()]
    if set_to_none:
        return tuple(g is None for g in after)
    return tuple((a is b, a.requires_grad, a.grad_fn is None, a.detach().numpy().tolist())
                 for a, b in zip(after, before, strict=True))


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("via", ["module", "optimizer"])
def test_zero_grad_matches_pytorch(torch: Any, via: str, set_to_none: bool) -> None:
    assert _run(rg, via, set_to_none) == _run(torch, via, set_to_none)


def test_module_and_optimizer_zero_grad_use_the_one_helper() -> None:
    assert module_mod.zero_grads is _grad_utils.zero_grads
    assert optimizer_mod.zero_grads is _grad_utils.zero_grads
    assert not hasattr(module_mod, "_zero_grad")
