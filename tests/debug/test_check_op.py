"""retrograd.debug.check_op: property-based gradcheck of a user's op.

Correct ops pass; three custom Functions with a wrong backward (wrong at negative inputs, wrong
when an input is broadcast, wrong for non-contiguous inputs) are caught, each with the smallest
failing input hypothesis shrinks to, and pass once the option that excludes their bug is given."""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.debug import check_op

pytest.importorskip("hypothesis")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class Cube(rg.autograd.Function):
    """Correct, and its backward is differentiable (gradgradcheck)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class SquareHalfAtNegatives(rg.autograd.Function):
    """Off by a factor 1/2 at negative inputs."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 2 * x * rg.where(x < 0, 0.5, 1.0)


class BiasAddMeanOverBroadcast(rg.autograd.Function):
    """x + b, reducing b's gradient over broadcast leading dimensions by mean instead of sum."""

    @staticmethod
    def forward(ctx: Any, x: Any, b: Any) -> Any:
        ctx.b_dim = b.dim()
        return x + b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        gb = g
        while gb.dim() > ctx.b_dim:
            gb = gb.mean(0)
        return g, gb


class SquareReadingRawMemory(rg.autograd.Function):
    """Its backward reads the saved input's memory as if it were contiguous (a C-extension's bug)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        data = x.detach().numpy()
        raw = np.lib.stride_tricks.as_strided(data, data.shape, np.zeros(data.shape, data.dtype).strides)
        return g * 2 * rg.tensor(raw.copy())


X = rg.tensor([[0.5, 1.5, 2.0], [1.25, 0.75, 3.0]])
B = rg.tensor([[0.1, -0.2, 0.3], [0.4, 0.6, -0.5]])


def test_a_correct_op_passes_every_check() -> None:
    report = check_op(lambda x, y: x * y.sin() + (x * y).tanh(), X, B, max_examples=10)
    assert report.passed and report.failure is None and bool(report)
    assert report.examples >= 8
    assert report.checks == ["gradcheck", "gradgradcheck", "float32 backward", "non-contiguous forward"]
    assert "passed" in str(report)


def test_large_values_are_judged_at_the_precision_finite_differences_have() -> None:
    # f = 1e8 + 0.35: central differences with eps=1e-6 resolve df/dx[1] = 0.7 only to about
    # ulp(1e8) / eps ~ 1e-2, far above atol=1e-5; a correct op must not fail for that
    def dot(x: Any, y: Any) -> Any:
        return (x * y).sum()

    report = check_op(dot, rg.tensor([1e4, 0.5]), rg.tensor([1e4, 0.7]), max_examples=5)
    assert report.passed, report

    class DotOnePercentOff(rg.autograd.Function):  # ...while a backward 1% off is still caught there
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            ctx.save_for_backward(x, y)
            return (x * y).sum()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, y = ctx.saved_tensors
            return g * y * 1.01, g * x

    report = check_op(DotOnePercentOff, rg.tensor([1e4, 0.5]), rg.tensor([1e4, 0.7]), max_examples=5)
    assert not report.passed and report.failure.check == "gradcheck"


def test_a_correct_matmul_passes() -> None:
    a, b = rg.tensor([[0.5, -1.0], [2.0, 0.25]]), rg.tensor([[1.5], [-0.5]])
    assert check_op(lambda x, y: x @ y, a, b, max_examples=8).passed


def test_a_correct_function_passes_as_class_or_apply() -> None:
    assert check_op(Cube, X, max_examples=10).passed
    assert check_op(Cube.apply, X, max_examples=10, gradgrad=False).passed


def test_wrong_at_negative_inputs_is_caught_with_the_smallest_input() -> None:
    report = check_op(SquareHalfAtNegatives, X, max_examples=25, gradgrad=False)
    assert not report.passed
    failure = report.failure
    assert failure.check == "gradcheck" and "Jacobian mismatch" in failure.message
    # shrunk to one value, the first example's negated: analytical -0.5, numerical -1.0 there
    (x,) = failure.inputs
    assert x.shape == () and x.item() == -0.5
    assert "-0.5" in failure.description and "shape ()" in failure.description
    assert "FAILED" in str(report) and "smallest failing input" in str(report)
    # with gradgradcheck a smaller input fails: 0, where the wrong backward has a kink (its
    # derivative is 1 from the left, 2 from the right: central differences see 1.5, autograd 2)
    report = check_op(SquareHalfAtNegatives, X, max_examples=25)
    failure = report.failure
    assert failure.check == "gradgradcheck" and failure.inputs[0].shape == () and failure.inputs[0].item() == 0
    numerical, analytical = (float(v) for v in
                             re.findall(r"tensor\(\[\[([-\d.]+)\]\]", failure.message))
    assert numerical / analytical == pytest.approx(0.75, rel=1e-3)  # (printed to 4 digits)
    # restricted to positive inputs the bug is out of reach
    assert check_op(SquareHalfAtNegatives, X, positive=True, max_examples=15).passed


def test_wrong_for_broadcasting_is_caught_with_a_broadcast_input() -> None:
    report = check_op(BiasAddMeanOverBroadcast, X, B, max_examples=40)
    assert not report.passed
    failure = report.failure
    assert failure.check == "gradcheck" and "with respect to input 1" in failure.message
    x, b = failure.inputs
    assert b.dim() < x.dim()  # b broadcast over a leading dimension of x: the bug's condition
    lead = x.shape[: x.dim() - b.dim()]
    assert int(np.prod(lead)) > 1  # (over a single row, mean and sum agree: not a failing input)
    # the same op with the examples' shapes only passes
    assert check_op(BiasAddMeanOverBroadcast, X, B, shapes=False, max_examples=10).passed


def test_wrong_for_non_contiguous_input_is_caught() -> None:
    report = check_op(SquareReadingRawMemory, X, max_examples=40, gradgrad=False)
    assert not report.passed
    failure = report.failure
    assert failure.check == "gradcheck"
    (x,) = failure.inputs
    assert not x._data.flags.c_contiguous
    assert "strided" in failure.description or "transposed" in failure.description
    assert check_op(SquareReadingRawMemory, X, noncontiguous=False, max_examples=10, gradgrad=False).passed


def test_deterministic() -> None:
    first = check_op(SquareHalfAtNegatives, X, max_examples=10)
    second = check_op(SquareHalfAtNegatives, X, max_examples=10)
    assert first.failure.description == second.failure.description
    assert first.examples == second.examples


def test_a_backward_that_raises_is_a_failure() -> None:
    class BadShape(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, b: Any) -> Any:
            return x + b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g.sum(0).reshape(3)  # assumes b has shape (3,)

    report = check_op(BadShape, X, B[0], max_examples=20, gradgrad=False)
    assert not report.passed and "backward raised" in report.failure.check


def test_examples_outside_the_domain_are_refused() -> None:
    with pytest.raises(ValueError, match="NaN or inf on the example inputs"):
        check_op(lambda x: x.log(), rg.tensor([-1.0, 2.0]))
    with pytest.raises(ValueError, match="unknown edge value"):
        check_op(lambda x: x * 2, X, edge_values=["huge"])
    with pytest.raises(ValueError, match="floating-point tensor"):
        check_op(lambda n: n * 2, rg.tensor([1, 2]))


def test_domain_restricted_op_passes_with_positive() -> None:
    # log is right everywhere it is defined; zeros and negatives are outside its domain (skipped)
    report = check_op(lambda x: x.log() * x, X, max_examples=15)
    assert report.passed and report.rejected > 0


def test_without_hypothesis_says_what_to_install(monkeypatch: Any) -> None:
    for name in [m for m in sys.modules if m == "hypothesis" or m.startswith("hypothesis.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(ImportError, match=r"pip install retrograd\[debug\].*pip install hypothesis"):
        check_op(Cube, X)


def test_importing_the_module_leaves_the_function_in_place() -> None:
    import importlib

    import retrograd.debug

    importlib.import_module("retrograd.debug.op_check")  # importing the module leaves the function in place
    assert retrograd.debug.check_op(lambda x: x * 3, rg.tensor([1.0, 2.0]), max_examples=3).passed
