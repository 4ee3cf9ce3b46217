"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (contexts, decorators, threads)."""

from __future__ import annotations

import threading

import pytest

import retrograd as rg


def test_no_grad_results_are_leaves_without_grad() -> None:
    x = rg.ones(2, requires_grad=True)
    with rg.no_grad():
        y = x * 2
        assert not rg.is_grad_enabled()
    assert rg.is_grad_enabled()
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_modes_nest_and_restore_on_exception() -> None:
    with pytest.raises(ValueError):
        with rg.no_grad():
            with rg.enable_grad():
                assert rg.is_grad_enabled()
            assert not rg.is_grad_enabled()
            raise ValueError
    assert rg.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context() -> None:
    rg.set_grad_enabled(False)
    try:
        assert not rg.is_grad_enabled()
    finally:
        rg.set_grad_enabled(True)
    with rg.set_grad_enabled(False):
        assert not rg.is_grad_enabled()
    assert rg.is_grad_enabled()


def test_decorators_with_and_without_parentheses() -> None:
    x = rg.ones(2, requires_grad=True)

    @rg.no_grad
    def bare(t: rg.Tensor) -> rg.Tensor:
        return t * 2

    @rg.no_grad()
    def called(t: rg.Tensor) -> rg.Tensor:
        return t * 2

    @rg.set_grad_enabled(False)
    def disabled(t: rg.Tensor) -> rg.Tensor:
        return t * 2

    @rg.inference_mode
    def infer(t: rg.Tensor) -> rg.Tensor:
        return t * 2

    assert not bare(x).requires_grad and not called(x).requires_grad and not disabled(x).requires_grad
    assert infer(x).is_inference()
    assert bare.__name__ == "bare"
    assert rg.is_grad_enabled() and not rg.is_inference_mode_enabled()


def test_grad_mode_is_thread_local() -> None:
    seen = {}

    def worker() -> None:
        seen["enabled"] = rg.is_grad_enabled()
        x = rg.ones(1, requires_grad=True)
        seen["tracked"] = (x * 2).requires_grad

    with rg.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen == {"enabled": True, "tracked": True}


def test_inference_tensors_refuse_autograd() -> None:
    w = rg.ones(3, requires_grad=True)
    with rg.inference_mode():
        t = rg.ones(3) * 2
        assert rg.is_inference_mode_enabled() and not rg.is_grad_enabled()
        with rg.inference_mode(False):
            assert rg.is_grad_enabled() and not rg.is_inference_mode_enabled()
    assert t.is_inference() and not t.requires_grad
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * t
    (w + t).sum().backward()  # add saves nothing: allowed, as in PyTorch
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        t.add_(1)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        t.requires_grad_()
    assert not t.clone().is_inference()


def test_no_grad_path_allocates_no_node() -> None:
    x = rg.ones(3, requires_grad=True)
    with rg.no_grad():
        y = (x * 2).exp().sum()
    assert y.grad_fn is None
