"""Tensor ``repr`` string-for-string as PyTorch prints it (summaries, notation, widths, suffixes),
``set_printoptions``, and format specs on tensors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd
from retrograd._format import get_printoptions, printoptions

_rng = np.random.default_rng(0)
NORMAL = _rng.standard_normal(3000)
INTS = _rng.integers(-500, 500, 3000)
BOOLS = _rng.random(3000) > 0.5


def arr(values: np.ndarray, *shape: int) -> Any:
    return lambda lib: lib.from_numpy(values[: int(np.prod(shape))].reshape(shape).copy())


ARRAYS: list[tuple[str, Any]] = [
    ("float 1000 (at threshold)", arr(NORMAL.astype(np.float32), 1000)),
    ("float 1001 (over)", arr(NORMAL.astype(np.float32), 1001)),
    ("float 2-d under", arr(NORMAL.astype(np.float32), 30, 30)),
    ("float 2-d over", arr(NORMAL.astype(np.float32), 40, 41)),
    ("float 3-d over", arr(NORMAL.astype(np.float32), 10, 10, 11)),
    ("float 3-d small", arr(NORMAL.astype(np.float32), 2, 3, 4)),
    ("float64", arr(NORMAL, 2, 5)),
    ("float64 over", arr(NORMAL, 1200)),
    ("float16", arr(NORMAL.astype(np.float16), 7)),
    ("int64 under", arr(INTS, 25, 4)),
    ("int64 over", arr(INTS, 2000)),
    ("int64 3-d over", arr(INTS, 12, 12, 12)),
    ("int32", arr(INTS.astype(np.int32), 3, 4)),
    ("uint8", arr(np.abs(INTS).astype(np.uint8), 9)),
    ("bool under", arr(BOOLS, 40)),
    ("bool over", arr(BOOLS, 50, 30)),
    ("sci small", lambda lib: lib.tensor([1e-5, 0.5, 2.0])),
    ("sci large", lambda lib: lib.tensor([1e9, 1.5, -3.25])),
    ("sci ratio", lambda lib: lib.tensor([0.001, 2.0, 5000.0])),
    ("int-valued floats", lambda lib: lib.tensor([1.0, -20.0, 300.0])),
    ("int-valued floats sci", lambda lib: lib.tensor([1.0, 2e9])),
    ("nan and inf", lambda lib: lib.tensor([float("nan"), float("inf"), -float("inf"), 1.5])),
    ("nan with ints", lambda lib: lib.tensor([float("nan"), 2.0, float("-inf")])),
    ("nan in sci", lambda lib: lib.tensor([float("nan"), 1e-7, 3.0])),
    ("only nan", lambda lib: lib.tensor([float("nan"), float("nan")])),
    ("zeros", lambda lib: lib.zeros(2, 3)),
    ("negative zero", lambda lib: lib.tensor([-0.0, 0.0])),
    ("0-d float", lambda lib: lib.tensor(3.5)),
    ("0-d tiny", lambda lib: lib.tensor(1e-8)),
    ("0-d int", lambda lib: lib.tensor(7)),
    ("0-d bool", lambda lib: lib.tensor(True)),
    ("0-d float64", lambda lib: lib.tensor(2.0, dtype=lib.float64)),
    ("empty", lambda lib: lib.zeros(0)),
    ("empty 2-d", lambda lib: lib.zeros(0, 3)),
    ("empty int", lambda lib: lib.zeros(0, dtype=lib.int64)),
    ("empty bool 2-d", lambda lib: lib.zeros(2, 0, dtype=lib.bool)),
    ("empty float64", lambda lib: lib.zeros(0, dtype=lib.float64)),
    ("requires_grad", lambda lib: lib.tensor([1.0, 2.0], requires_grad=True)),
    ("grad_fn", lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2),
    ("grad_fn 0-d", lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).sum()),
    ("float64 requires_grad", lambda lib: lib.ones(2, dtype=lib.float64, requires_grad=True)),
    ("suffixes wrap", lambda lib: lib.from_numpy(NORMAL[:9].copy()).requires_grad_() * 2),
    ("over with grad_fn", lambda lib: lib.from_numpy(NORMAL[:2000].astype(np.float32)).requires_grad_() + 1),
]

OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("precision 2", {"precision": 2}),
    ("threshold 5", {"threshold": 5}),
    ("edgeitems 1", {"edgeitems": 1, "threshold": 10}),
    ("linewidth 40", {"linewidth": 40}),
    ("short", {"profile": "short"}),
    ("full", {"profile": "full"}),
    ("sci on", {"sci_mode": True}),
    ("sci off", {"sci_mode": False}),
]


@pytest.fixture
def restore_options(torch: Any) -> Iterator[None]:
    yield
    torch.set_printoptions(profile="default", sci_mode=None)
    retrograd.set_printoptions(profile="default", sci_mode=None)


@pytest.mark.parametrize("make", [a[1] for a in ARRAYS], ids=[a[0] for a in ARRAYS])
@pytest.mark.parametrize("options", [o[1] for o in OPTIONS], ids=[o[0] for o in OPTIONS])
def test_repr_matches_pytorch(torch: Any, restore_options: None, make: Any, options: dict[str, Any]) -> None:
    if options.get("profile") == "full" and make(retrograd).numel() > 1500:
        pytest.skip("full print of a big tensor: covered by the smaller ones")
    torch.set_printoptions(**options)
    retrograd.set_printoptions(**options)
    assert repr(make(retrograd)) == repr(make(torch))
    assert str(make(retrograd)) == str(make(torch))


def test_parameter_repr(torch: Any) -> None:
    assert repr(retrograd.nn.Parameter(retrograd.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))


def test_options_roundtrip(torch: Any, restore_options: None) -> None:
    expected = torch._tensor_str.get_printoptions()
    assert get_printoptions() == expected
    retrograd.set_printoptions(precision=2, threshold=10, edgeitems=1, linewidth=50, sci_mode=True)
    torch.set_printoptions(precision=2, threshold=10, edgeitems=1, linewidth=50, sci_mode=True)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    with printoptions(precision=6):
        assert get_printoptions()["precision"] == 6
    assert get_printoptions()["precision"] == 2


def test_million_elements_print_fast() -> None:
    t = retrograd.ones(1_000_000)
    start = time.process_time()
    text = repr(t)
    assert time.process_time() - start < 0.5
    assert text == "tensor([1., 1., 1.,  ..., 1., 1., 1.])"


FORMATS: list[tuple[str, Any]] = [
    ("0-d .4f", lambda lib: f"{lib.tensor(0.123456):.4f}"),
    ("0-d +.2f", lambda lib: "{:+.2f}".format(lib.tensor([1.5, 2.0])[0])),  # noqa: UP032 - the str.format path
    ("0-d int d", lambda lib: f"{lib.tensor(42):5d}"),
    ("0-d requires grad", lambda lib: f"{(lib.ones(2, requires_grad=True) * 3).sum():.1e}"),
    ("0-d empty spec", lambda lib: f"{lib.tensor(2.5)}"),
    ("0-d bool", lambda lib: f"{lib.tensor(True)}"),
    ("1-d empty spec", lambda lib: f"{lib.tensor([1.0, 2.0])}"),
    ("1-d spec", lambda lib: f"{lib.tensor([1.0, 2.0]):.2f}"),
    ("1-element 1-d spec", lambda lib: f"{lib.tensor([1.0]):.2f}"),
    ("0-d parameter spec", lambda lib: f"{lib.nn.Parameter(lib.tensor(1.0)):.2f}"),
]


@pytest.mark.parametrize("call", [f[1] for f in FORMATS], ids=[f[0] for f in FORMATS])
def test_format_spec_matches_pytorch(torch: Any, call: Any) -> None:
    expected = outcome(lambda: call(torch))
    assert outcome(lambda: call(retrograd)) == expected
    if expected[0] == "ok":
        assert call(retrograd) == call(torch)
