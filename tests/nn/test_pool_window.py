"""The 2-D and 3-D pools read ``kernel_size``/``stride``/``padding``/``dilation`` through one
helper (``_pool_window``): each pool's wording for a tuple of the wrong length, and the omitted
stride, as PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

_POOLS = {  # fn -> (spatial dims, takes dilation)
    "max_pool2d": (2, True), "avg_pool2d": (2, False), "max_pool3d": (3, True), "avg_pool3d": (3, False),
}


def _call(lib: Any, fn: str, **kw: Any) -> Any:
    nd, _ = _POOLS[fn]
    x = lib.tensor(np.arange(2 * 6 ** nd, dtype=np.float64).reshape(1, 2, *([6] * nd)))
    return getattr(lib.nn.functional, fn)(x, **kw)


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for fn, (nd, dilates) in _POOLS.items():
        bad = (2,) * (nd + 1)
        out += [(fn, {"kernel_size": bad}), (fn, {"kernel_size": 2, "stride": bad}),
                (fn, {"kernel_size": 2, "padding": bad}),
                (fn, {"kernel_size": (2,)}), (fn, {"kernel_size": 2, "stride": []}),
                (fn, {"kernel_size": [3] * nd, "stride": (1,), "padding": [1] * nd}),
                (fn, {"kernel_size": np.int64(2), "stride": 2})]
        if dilates:
            out += [(fn, {"kernel_size": 2, "dilation": bad}), (fn, {"kernel_size": 2, "dilation": (2,)})]
    return out


@pytest.mark.parametrize(("fn", "kw"), _cases(), ids=lambda v: str(v))
def test_pool_window_parity(torch: Any, fn: str, kw: dict[str, Any]) -> None:
    ours, theirs = outcome(lambda: _call(rg, fn, **kw)), outcome(lambda: _call(torch, fn, **kw))
    assert ours == theirs
    if ours[0] == "ok":
        np.testing.assert_allclose(_call(rg, fn, **kw).detach().numpy(), _call(torch, fn, **kw).detach().numpy())
