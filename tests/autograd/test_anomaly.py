"""Anomaly mode against PyTorch: the forward traceback for a NaN as for an exception, the "no
forward pass information" warning, nested contexts, and the state functions."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import retrograd as rg

# PyTorch's C++ warnings end with where they were raised in its build tree; the text before that
# is the contract.
_CPP_SUFFIX = " (Triggered internally at "


def _run(lib: Any, body: Callable[[Any], None]) -> tuple[Any, list[str], tuple[bool, bool]]:
    """(outcome, warning texts, anomaly state after) of ``body(lib)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            body(lib)
            result: Any = "ok"
        except Exception as e:  # noqa: BLE001
            result = (type(e).__name__, str(e))
    texts = [str(w.message).split(_CPP_SUFFIX)[0] for w in caught
             if w.category is UserWarning]
    return result, texts, (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())


def _nan_graph(lib: Any) -> Any:
    a = lib.tensor([0.0, 1.0], requires_grad=True)
    return (a.sqrt() * 0).sum()  # sqrt's gradient at 0 is inf, times 0: NaN


class _Bad:
    @staticmethod
    def make(lib: Any) -> Any:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x.clone()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                raise ValueError("bad backward")

        return Bad


def nan_made_inside(lib: Any) -> None:
    with lib.autograd.detect_anomaly():
        _nan_graph(lib).backward()


def nan_made_outside(lib: Any) -> None:
    y = _nan_graph(lib)
    with lib.autograd.detect_anomaly():
        y.backward()


def nan_inner_check_nan_off(lib: Any) -> None:
    with lib.autograd.detect_anomaly():
        with lib.autograd.detect_anomaly(check_nan=False):
            assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
            _nan_graph(lib).backward()
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, True)
        _nan_graph(lib).backward()  # the outer context checks again


def nan_outer_check_nan_off(lib: Any) -> None:
    with lib.autograd.detect_anomaly(check_nan=False):
        _nan_graph(lib).backward()
        with lib.autograd.detect_anomaly():
            _nan_graph(lib).backward()


def nan_set_detect_anomaly(lib: Any) -> None:
    with lib.autograd.set_detect_anomaly(True, check_nan=False):
        _nan_graph(lib).backward()
        with lib.autograd.set_detect_anomaly(True):
            _nan_graph(lib).backward()


def nan_anomaly_off(lib: Any) -> None:
    _nan_graph(lib).backward()


def error_made_inside(lib: Any) -> None:
    with lib.autograd.detect_anomaly():
        _Bad.make(lib).apply(lib.ones(2, requires_grad=True)).sum().backward()


def error_made_outside(lib: Any) -> None:
    y = _Bad.make(lib).apply(lib.ones(2, requires_grad=True)).sum()
    with lib.autograd.detect_anomaly():
        y.backward()


def made_not_entered(lib: Any) -> None:
    lib.autograd.detect_anomaly()


def set_anomaly_enabled_calls(lib: Any) -> None:
    lib.set_anomaly_enabled(True, check_nan=False)
    assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
    with lib.autograd.set_detect_anomaly(False):
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
    lib.set_anomaly_enabled(False)


def double_backward_nan(lib: Any) -> None:
    with lib.autograd.detect_anomaly():
        a = lib.tensor([0.0, 1.0], requires_grad=True)
        y = a.sqrt().sum()
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        (g * 0).sum().backward()  # fails in a node that sqrt's backward made: both are named


def double_backward_nan_forward_outside(lib: Any) -> None:
    a = lib.tensor([0.0, 1.0], requires_grad=True)
    y = a.sqrt().sum()
    with lib.autograd.detect_anomaly():
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        (g * 0).sum().backward()


CASES = {f.__name__: f for f in (
    nan_made_inside, nan_made_outside, nan_inner_check_nan_off, nan_outer_check_nan_off, nan_set_detect_anomaly,
    nan_anomaly_off, error_made_inside, error_made_outside, made_not_entered, set_anomaly_enabled_calls,
    double_backward_nan, double_backward_nan_forward_outside,
)}


def _comparable(texts: list[str]) -> list[str]:
    # The forward traceback lists each library's own frames differently: compare its header.
    return [t.split(":\n")[0] + ":" if "Traceback of forward call" in t else t for t in texts]


@pytest.mark.parametrize("case", sorted(CASES))
def test_anomaly_mode_matches_torch(torch: Any, case: str) -> None:
    ours, theirs = _run(rg, CASES[case]), _run(torch, CASES[case])
    assert ours[0] == theirs[0]
    assert _comparable(ours[1]) == _comparable(theirs[1])
    assert ours[2] == theirs[2] == (False, True)


def test_nan_warning_shows_the_forward_line() -> None:
    result, texts, _ = _run(rg, nan_made_inside)
    assert result == ("RuntimeError", "Function 'SqrtBackward0' returned nan values in its 0th output.")
    (trace,) = [t for t in texts if t.startswith("Error detected in SqrtBackward0.")]
    assert "return (a.sqrt() * 0).sum()" in trace and "_nan_graph" in trace


def test_anomaly_off_records_nothing() -> None:
    a = rg.ones(2, requires_grad=True)
    y = a.exp()
    assert y.grad_fn._metadata is None  # no stack taken, no metadata dict made
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), rg.autograd.detect_anomaly():
        z = a.exp()
    assert "traceback_" in z.grad_fn.metadata


@pytest.mark.parametrize("anomaly", [False, True])
def test_version_error_hint_matches_torch(torch: Any, anomaly: bool) -> None:
    def body(lib: Any) -> None:
        a = lib.ones(3, requires_grad=True)
        with lib.autograd.set_detect_anomaly(anomaly):
            x = a.exp()
            x.add_(1)
            x.sum().backward()

    ours, theirs = _run(rg, body), _run(torch, body)
    assert ours[0][0] == theirs[0][0] == "RuntimeError"
    # retrograd adds where the write happened after PyTorch's text.
    assert ours[0][1].startswith(theirs[0][1])
    assert _comparable(ours[1]) == _comparable(theirs[1])


def test_parent_traceback_shows_both_forward_lines() -> None:
    _, texts, _ = _run(rg, double_backward_nan)
    child = next(t for t in texts if t.startswith("Error detected in DivBackward0."))
    parent = next(t for t in texts if t.startswith("\n\nPrevious calculation was induced by SqrtBackward0."))
    assert "lib.autograd.grad(y, a, create_graph=True)" in child and "<retrograd generated" not in child
    assert "y = a.sqrt().sum()" in parent
