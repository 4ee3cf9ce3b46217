"""``Tensor._is_view()``: True exactly for the tensors PyTorch says are views, against real
PyTorch on the same expressions (views, copies, detached aliases, grad and no-grad views)."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg

_CASES: list[tuple[str, Any]] = [
    ("leaf", lambda lib, x, xr: lib.ones(2)),
    ("reshape-of-arange", lambda lib, x, xr: x),
    ("slice", lambda lib, x, xr: x[0]),
    ("t", lambda lib, x, xr: x.t()),
    ("view", lambda lib, x, xr: x.view(6)),
    ("detach", lambda lib, x, xr: x.detach()),
    ("detach-of-view", lambda lib, x, xr: x[0].detach()),
    ("clone", lambda lib, x, xr: x.clone()),
    ("contiguous-noop", lambda lib, x, xr: x.contiguous()),
    ("contiguous-copy", lambda lib, x, xr: x.t().contiguous()),
    ("expand", lambda lib, x, xr: x[0].expand(2, 3)),
    ("diagonal", lambda lib, x, xr: x.diagonal()),
    ("unbind", lambda lib, x, xr: x.unbind()[0]),
    ("split", lambda lib, x, xr: x.split(1)[0]),
    ("flatten", lambda lib, x, xr: x.flatten()),
    ("real", lambda lib, x, xr: lib.ones(2, dtype=lib.complex64).real),
    ("grad-view", lambda lib, x, xr: xr[0]),
    ("grad-op", lambda lib, x, xr: xr * 2),
    ("grad-op-view", lambda lib, x, xr: (xr * 2).t()),
    ("data", lambda lib, x, xr: xr.data),
    ("mT", lambda lib, x, xr: x.mT),
    ("as_strided", lambda lib, x, xr: x.as_strided((2,), (1,))),
    ("inplace-view-of-leaf", lambda lib, x, xr: lib.ones(2, 3).t_()),
    ("advanced-index", lambda lib, x, xr: x[[0, 1]]),
    ("none-index", lambda lib, x, xr: x[None]),
]


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_is_view_as_torch(torch: Any, case: Any) -> None:
    _, fn = case
    got = fn(rg, rg.arange(6.0).reshape(2, 3), rg.ones(2, 3, requires_grad=True))
    want = fn(torch, torch.arange(6.0).reshape(2, 3), torch.ones(2, 3, requires_grad=True))
    assert got._is_view() is want._is_view()


def test_view_made_under_no_grad_is_a_view(torch: Any) -> None:
    results = []
    for lib in (rg, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with lib.no_grad():
            v = x[0]
        results.append((v._is_view(), v._base is x))
    assert results[0] == results[1] == (True, True)
