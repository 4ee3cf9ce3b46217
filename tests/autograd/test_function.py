"""autograd.Function (custom backward) and anomaly detection, against PyTorch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _scaled_relu(lib: Any) -> Any:
    class ScaledReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, scale: float) -> Any:
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x.clamp(min=0) * scale

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return grad * (x > 0) * ctx.scale, None

    return ScaledReLU


def test_function_matches_torch(torch: Any) -> None:
    def run(lib: Any) -> tuple[str, list[Any], list[float]]:
        x = lib.tensor([-1.0, 2.0, 0.5], requires_grad=True)
        y = _scaled_relu(lib).apply(x, 3.0)
        edges = [type(n).__name__ for n, _ in y.grad_fn.next_functions]
        (y * y).sum().backward()
        return type(y.grad_fn).__name__, edges, x.grad.tolist()

    assert run(rg) == run(torch)


def test_function_saved_tensors_are_freed_and_version_checked() -> None:
    fn = _scaled_relu(rg)
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = fn.apply(x * 1, 2.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    h = x * 1
    z = fn.apply(h, 2.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified"):
        z.sum().backward()


def test_function_double_backward_and_setup_context(torch: Any) -> None:
    def run(lib: Any) -> list[float]:
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(x: Any) -> Any:
                return x ** 3

            @staticmethod
            def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                (x,) = ctx.saved_tensors
                return grad * 3 * x ** 2

        x = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return gg.tolist()

    assert np.allclose(run(rg), run(torch))


def test_function_wrong_number_of_gradients() -> None:
    class Bad(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    a = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"):
        Bad.apply(a, rg.ones(2)).sum().backward()


def test_gradcheck_on_custom_function() -> None:
    fn = _scaled_relu(rg)
    x = rg.tensor([0.7, -1.3, 2.1], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: fn.apply(t, 2.0), (x,))


def test_detect_anomaly_names_the_forward_call_and_catches_nan() -> None:
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with rg.autograd.detect_anomaly():
            y = x.sqrt() * 0  # d/dx sqrt(x) at 0 is inf; times 0 gives nan
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.sum().backward()
    assert not rg.autograd.is_anomaly_enabled()
    assert any("Anomaly Detection has been enabled" in str(w.message) for w in caught)


def test_anomaly_mode_reports_creation_site_on_error() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with rg.autograd.set_detect_anomaly(True):
        e = x.exp()
        e.mul_(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                e.sum().backward()
    messages = [str(w.message) for w in caught]
    assert any("Error detected in ExpBackward0" in m and "test_function.py" in m for m in messages)


def test_gradgradcheck_catches_a_wrong_second_derivative() -> None:
    class WrongSecond(rg.autograd.Function):
        """x**3 whose backward is right but not differentiable correctly (3*x*x written as 3*x.detach()*x)."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3 * x.detach() * x

    x = rg.tensor([0.5, -1.5], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(rg.autograd.GradcheckError, match="Jacobian mismatch"):
        rg.autograd.gradgradcheck(WrongSecond.apply, (x,))


def test_gradcheck_refuses_a_function_whose_outputs_change_with_grad_mode() -> None:
    x = rg.tensor([0.5], dtype=rg.float64, requires_grad=True)

    def shifty(t: Any) -> Any:
        return t * 2 if rg.is_grad_enabled() else (t * 2, t * 3)

    with pytest.raises(rg.autograd.GradcheckError, match="differentiable outputs with grad enabled but 2 under no_grad"):
        rg.autograd.gradcheck(shifty, (x,))
