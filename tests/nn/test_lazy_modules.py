"""Lazy modules (``nn/modules/lazy.py``, ``UninitializedParameter``/``UninitializedBuffer``)
against real PyTorch: repr and ``state_dict`` before the first call, the class, repr, parameter
shapes and values (the same seed gives the same initialisation: retrograd reproduces PyTorch's
CPU random stream) and the output after it, loading a checkpoint, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("LazyLinear", (4,), {}, (5, 3)),
    ("LazyLinear", (2, False), {}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("LazyConv2d", (4, 3, 1, 1, 1, 2), {}, (1, 2, 5, 5)),
    ("LazyConv3d", (2, 2), {"bias": False}, (3, 4, 4, 4)),
    ("LazyConvTranspose1d", (5, 2), {}, (1, 3, 4)),
    ("LazyConvTranspose2d", (4, 3, 2, 1, 1, 2), {}, (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {"dilation": 2}, (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (1e-3, 0.2), {}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"affine": False}, (2, 3, 2, 3, 2)),
]


def _state(module: Any) -> list[tuple[str, str, tuple[int, ...] | None]]:
    out = []
    for key, value in module.state_dict().items():
        lazy = type(value).__name__.startswith("Uninitialized")
        out.append((key, type(value).__name__ if lazy else "Tensor", None if lazy else tuple(value.shape)))
    return out


@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_lazy_module_matches_torch(torch: Any, name: str, args: Any, kwargs: Any, shape: Any) -> None:
    rg.manual_seed(3)
    torch.manual_seed(3)
    ours, theirs = getattr(rg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert _state(ours) == _state(theirs)
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    assert [type(p).__name__ for p in ours.parameters()] == [type(p).__name__ for p in theirs.parameters()]
    x = np.random.default_rng(0).standard_normal(shape)
    out_a, out_b = ours(rg.tensor(x, dtype=rg.float32)), theirs(torch.tensor(x, dtype=torch.float32))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert repr(ours) == repr(theirs)
    assert _state(ours) == _state(theirs)
    assert not hasattr(ours, "has_uninitialized_params") and not hasattr(theirs, "has_uninitialized_params")
    for (ka, va), (kb, vb) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert ka == kb and type(va).__name__ == type(vb).__name__
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert [type(p).__name__ for p in ours.parameters()] == [type(p).__name__ for p in theirs.parameters()]


def test_load_state_dict_materialises(torch: Any) -> None:
    source = rg.nn.Linear(3, 4)
    lazy = rg.nn.LazyLinear(4)
    lazy.load_state_dict(source.state_dict())
    assert type(lazy).__name__ == "LazyLinear" and not lazy.has_uninitialized_params()
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), source.weight.detach().numpy())
    x = rg.ones(2, 3)
    np.testing.assert_array_equal(lazy(x).detach().numpy(), source(x).detach().numpy())
    t = torch.nn.LazyLinear(4)
    t.load_state_dict(torch.nn.Linear(3, 4).state_dict())
    t(torch.ones(2, 3))
    assert repr(lazy) == repr(t) == "Linear(in_features=3, out_features=4, bias=True)"


def test_uninitialized_parameter(torch: Any) -> None:
    ours, theirs = rg.nn.parameter.UninitializedParameter(), torch.nn.parameter.UninitializedParameter()
    assert repr(ours) == repr(theirs) == "<UninitializedParameter>"
    assert outcome(lambda: ours.shape) == outcome(lambda: theirs.shape)
    assert ours.requires_grad and isinstance(ours, rg.nn.Parameter)
    ours.materialize((2, 3), dtype=rg.float64)
    theirs.materialize((2, 3), dtype=torch.float64)
    assert type(ours).__name__ == type(theirs).__name__ == "Parameter"
    assert ours.shape == (2, 3) and ours.dtype == rg.float64 and ours.requires_grad
    buf = rg.nn.parameter.UninitializedBuffer()
    assert repr(buf) == "<UninitializedBuffer>" and not buf.requires_grad
    buf.materialize(4)
    assert type(buf) is rg.Tensor and buf.shape == (4,)


ERRORS = [
    ("conv rank", lambda L: L.nn.LazyConv2d(4, 3)(L.ones(5, 5))),
    ("conv groups", lambda L: L.nn.LazyConv1d(4, 1, groups=2)(L.ones(1, 3, 5))),
    ("transpose rank", lambda L: L.nn.LazyConvTranspose3d(4, 1)(L.ones(1, 5, 5))),
    ("linear shape before", lambda L: L.nn.LazyLinear(4).weight.shape),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    ours, theirs = outcome(lambda: call(rg)), outcome(lambda: call(torch))
    assert theirs[0] != "ok"
    assert ours == theirs


def test_optimizer_and_deepcopy_before_the_first_call(torch: Any) -> None:
    import copy

    for lib in (rg, torch):
        m = lib.nn.LazyLinear(3)
        lib.optim.SGD(m.parameters(), lr=0.1).step()  # (PyTorch accepts the placeholders; no grad, no step)
        twin = copy.deepcopy(m)
        assert type(twin.weight).__name__ == "UninitializedParameter"
        assert tuple(twin(lib.ones(2, 5)).shape) == (2, 3)
        assert repr(twin) == "Linear(in_features=5, out_features=3, bias=True)"
        assert m.has_uninitialized_params()
