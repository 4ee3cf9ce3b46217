"""The 3-D pools, LP pools and max_unpool (``nn/_functional_pool.py``, ``nn/modules/pooling3d.py``)
against real PyTorch: the modules' repr, attributes, outputs, indices and input gradients, and the
functionals' errors. Values, gradients and ``grad_fn`` names of the functionals over many
configurations, with gradcheck and gradgradcheck, are the op database's (``tests/opdb/conv.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("AvgPool3d", (2,), {}, (2, 3, 4, 5, 6)),
    ("AvgPool3d", ((2, 1, 2), 1, (1, 0, 1), True, False, 3), {}, (1, 2, 3, 4, 5)),
    ("MaxPool3d", (2,), {}, (2, 3, 4, 5, 6)),
    ("MaxPool3d", (2, 1, 1, 2, True, True), {}, (1, 2, 5, 4, 5)),
    ("MaxPool3d", (3,), {"stride": 2, "ceil_mode": True}, (2, 5, 6, 7)),
    ("AdaptiveAvgPool3d", ((1, None, 2),), {}, (2, 3, 4, 5, 6)),
    ("AdaptiveAvgPool3d", (3,), {}, (3, 4, 5, 6)),
    ("AdaptiveMaxPool3d", (2, True), {}, (2, 3, 4, 5, 6)),
    ("AdaptiveMaxPool3d", ((3, 1, 2),), {}, (3, 4, 5, 6)),
    ("LPPool1d", (2, 3), {}, (2, 3, 7)),
    ("LPPool2d", (2, 3, 1, True), {}, (2, 3, 5, 6)),
    ("LPPool3d", (1.5, 2), {}, (1, 2, 4, 5, 4)),
    ("LPPool2d", (float("inf"), 2), {}, (3, 4, 4)),
]


def _leaf(lib: Any, x: np.ndarray) -> Any:
    return lib.tensor(x, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_matches_torch(torch: Any, name: str, args: Any, kwargs: Any, shape: Any) -> None:
    ours, theirs = getattr(rg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    public = {k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"}
    assert {k: getattr(ours, k) for k in public} == public
    rng = np.random.default_rng(0)
    x = rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 + 0.1  # distinct, positive (LP's x ** p)
    a, b = _leaf(rg, x), _leaf(torch, x)
    out_a, out_b = ours(a), theirs(b)
    if isinstance(out_b, tuple):
        assert out_a[1].tolist() == out_b[1].tolist() and out_a[1].dtype == rg.int64
        out_a, out_b = out_a[0], out_b[0]
    np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-12)
    assert type(out_a.grad_fn).__name__ == type(out_b.grad_fn).__name__
    seed = rng.standard_normal(tuple(out_b.shape))
    out_a.backward(rg.tensor(seed))
    out_b.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_modules_invert_max_pool(torch: Any, nd: int) -> None:
    shape = (2, 3) + (6,) * nd
    x = np.random.default_rng(nd).permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    results = []
    for lib in (rg, torch):
        pool = getattr(lib.nn, f"MaxPool{nd}d")(2, stride=2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2, stride=2)
        values, indices = pool(lib.tensor(x))
        v = values.detach().requires_grad_()
        out = unpool(v, indices, output_size=(7,) * nd)
        out.backward(lib.ones_like(out) * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape))
        results.append((repr(unpool), out.detach().numpy(), type(out.grad_fn).__name__, v.grad.numpy()))
    (ra, oa, na, ga), (rb, ob, nb, gb) = results
    assert ra == rb and na == nb
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_array_equal(ga, gb)


ERRORS = [
    ("max_pool3d 3-D", lambda L: L.nn.functional.max_pool3d(L.ones(4, 4, 4), 2)),
    ("avg_pool3d 3-D", lambda L: L.nn.functional.avg_pool3d(L.ones(1, 4, 4), 2)),
    ("max_pool3d too small", lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 4, 4, 4), 5)),
    ("avg_pool3d too small", lambda L: L.nn.functional.avg_pool3d(L.ones(2, 3, 4, 4, 4), 5)),
    ("max_pool3d padding", lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 4, 4, 4), 2, padding=2)),
    ("avg_pool3d padding", lambda L: L.nn.functional.avg_pool3d(L.ones(2, 3, 4, 4, 4), 2, padding=2)),
    ("max_pool3d kernel pair", lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 4, 4, 4), (2, 2))),
    ("avg_pool3d kernel pair", lambda L: L.nn.functional.avg_pool3d(L.ones(2, 3, 4, 4, 4), (2, 2))),
    ("max_pool3d kernel 0", lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 4, 4, 4), 0)),
    ("avg_pool3d divisor 0", lambda L: L.nn.functional.avg_pool3d(L.ones(2, 3, 4, 4, 4), 2, divisor_override=0)),
    ("adaptive_avg_pool3d 2-D", lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(4, 4), 2)),
    ("adaptive_max_pool3d 2-D", lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(4, 4), 2)),
    ("adaptive_avg_pool3d size", lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 4, 4, 4), (2, 2))),
    ("adaptive_max_pool3d size", lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(2, 3, 4, 4, 4), (2, 2))),
    ("max_unpool2d output_size", lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(9, 9))),
    ("max_unpool2d output_size length", lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(4, 4, 4))),
    ("max_unpool2d indices shape", lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 3, dtype=L.int64), 2)),
    ("max_unpool2d rank", lambda L: L.nn.functional.max_unpool2d(L.ones(2, 2), L.zeros(2, 2, dtype=L.int64), 2)),
    ("max_unpool2d float indices", lambda L: L.nn.functional.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2), 2)),
    ("max_unpool2d bad index", lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.full((1, 1, 2, 2), 16, dtype=L.int64), 2)),
    ("max_unpool3d rank", lambda L: L.nn.functional.max_unpool3d(L.ones(2, 2, 2), L.zeros(2, 2, 2, dtype=L.int64), 2)),
    ("max_unpool1d rank", lambda L: L.nn.functional.max_unpool1d(L.ones(2), L.zeros(2, dtype=L.int64), 2)),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    ours, theirs = outcome(lambda: call(rg)), outcome(lambda: call(torch))
    assert theirs[0] != "ok"
    assert ours == theirs
