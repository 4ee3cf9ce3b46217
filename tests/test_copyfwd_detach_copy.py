"""``detach_copy`` as PyTorch 2.13's ``torch.detach_copy``: a fresh contiguous copy; a result that
requires grad has a ``NotImplemented`` node whose backward raises; forward AD raises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD


@pytest.mark.parametrize("requires_grad", [False, True])
def test_detach_copy_values_layout_and_node(torch: Any, requires_grad: bool) -> None:
    data = np.arange(6.0).reshape(2, 3)
    seen = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=requires_grad)
        y = lib.detach_copy(x.t())
        seen.append((y.tolist(), str(y.dtype), y.stride(), y.requires_grad, y.is_leaf,
                     type(y.grad_fn).__name__, len(y.grad_fn.next_functions) if y.grad_fn else 0,
                     y.data_ptr() != x.data_ptr()))
    assert seen[0] == seen[1]


def test_detach_copy_errors_as_torch(torch: Any) -> None:
    for call in (lambda L: L.detach_copy(L.ones(2, requires_grad=True)).sum().backward(),
                 lambda L: L.autograd.grad(L.detach_copy(L.ones(2, requires_grad=True)).sum(),
                                           L.ones(2, requires_grad=True)),
                 lambda L: L.detach_copy(1.0)):
        assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
    results = []
    for lib, fw in ((rg, fwAD), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            results.append(outcome(lambda lib=lib, d=d: lib.detach_copy(d)))
    assert results[0] == results[1] and results[0][0] == "NotImplementedError"


def test_detach_copy_under_no_grad_records_nothing(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            y = lib.detach_copy(x)
        assert y.grad_fn is None and not y.requires_grad
        y.add_(1)  # its own memory: x is unchanged
        assert x.tolist() == [1.0, 1.0]
