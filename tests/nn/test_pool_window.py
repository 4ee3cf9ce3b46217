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


# avg_pool2d/3d share one body (_avg_pool), adaptive_max_pool2d/3d another (_adaptive_max_pool)
def _shared_body_cases() -> list[tuple[str, tuple[int, ...], str, dict[str, Any]]]:
    out = []
    for nd in (2, 3):
        shape, small = (1, 2) + (4,) * nd, (1, 2) + (1,) * nd
        out += [(f"avg_pool{nd}d", shape, "float64", {"kernel_size": 2, "divisor_override": 0}),
                (f"avg_pool{nd}d", shape, "float64", {"kernel_size": 3, "stride": 1, "padding": 1,
                                                      "count_include_pad": False, "divisor_override": 5}),
                (f"avg_pool{nd}d", shape, "bool", {"kernel_size": 2}),
                (f"avg_pool{nd}d", small, "float64", {"kernel_size": 2}),
                (f"adaptive_max_pool{nd}d", shape, "float64", {"output_size": 3, "return_indices": True}),
                (f"adaptive_max_pool{nd}d", shape, "float64", {"output_size": (2,) * (nd - 1) + (-1,)}),
                (f"adaptive_max_pool{nd}d", shape, "int64", {"output_size": 2}),
                (f"adaptive_max_pool{nd}d", shape[1:], "float64", {"output_size": (None,) + (2,) * (nd - 1)}),
                (f"adaptive_max_pool{nd}d", (2,) * nd, "float64", {"output_size": 1})]
    return out


@pytest.mark.parametrize(("fn", "shape", "dtype", "kw"), _shared_body_cases(), ids=lambda v: str(v))
def test_shared_pool_bodies_parity(torch: Any, fn: str, shape: tuple[int, ...], dtype: str,
                                   kw: dict[str, Any]) -> None:
    data = np.random.default_rng(0).standard_normal(shape)
    data = data > 0 if dtype == "bool" else data.astype(dtype)

    def run(lib: Any) -> Any:
        x = lib.tensor(data, requires_grad=dtype == "float64")
        got = getattr(lib.nn.functional, fn)(x, **kw)
        values = got[0] if isinstance(got, tuple) else got
        values.sum().backward()
        return [t.detach().numpy() for t in (got if isinstance(got, tuple) else (got,))] + [x.grad.numpy()]

    ours, theirs = outcome(lambda: run(rg)), outcome(lambda: run(torch))
    assert ours == theirs
    if ours[0] == "ok":
        for a, b in zip(run(rg), run(torch), strict=True):
            np.testing.assert_allclose(a, b)
        assert type(getattr(rg.nn.functional, fn)(rg.tensor(data, requires_grad=True), **kw)).__name__ in (
            "Tensor", "tuple")
