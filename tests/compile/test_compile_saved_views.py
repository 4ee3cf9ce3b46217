"""retrograd.compile: a saved value that is a view of an input (a linear layer's ``weight.t()``)
is version-checked at backward, as eager's saved view is: an in-place write of the input between
the forward and ``backward()`` raises PyTorch's version error instead of using the new values."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import retrograd as rg

_VERSION_ERROR = re.compile(
    r"one of the variables needed for gradient computation has been modified by an inplace operation: "
    r"(\[torch\.\w+ \[[\d, ]*\]\])(?:, which is output \d+ of \w+,)? is at version (\d+); expected version (\d+) instead")


def _version_error(lib: Any, forward: Any, write: Any) -> tuple[str, int]:
    """The version error ``backward`` raises after ``write`` (no grad) follows ``forward()``:
    the saved value's description and how many versions it moved on."""
    out = forward()
    with lib.no_grad():
        write()
    with pytest.raises(RuntimeError) as info:
        out.backward()
    found = _VERSION_ERROR.search(str(info.value))
    assert found is not None, str(info.value)
    return found.group(1), int(found.group(2)) - int(found.group(3))


def _linear(lib: Any) -> Any:
    rng = np.random.default_rng(0)
    lin = lib.nn.Linear(3, 2, dtype=lib.float64)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(rng.standard_normal((2, 3))))
        lin.bias.copy_(lib.tensor(rng.standard_normal(2)))
    return lin


@pytest.mark.parametrize("write", ["add_", "mul_"])
def test_linear_weight_written_before_backward_raises_on_every_call(torch: Any, write: str) -> None:
    x = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    lin, tlin = _linear(rg), _linear(torch)
    want = _version_error(torch, lambda: tlin(tx).sum(), lambda: getattr(tlin.weight, write)(2.0))
    eager_lin = _linear(rg)
    eager = _version_error(rg, lambda: eager_lin(x).sum(), lambda: getattr(eager_lin.weight, write)(2.0))
    assert eager == want
    model = rg.compile(lin)
    for _ in range(4):  # the first call traces; the second runs the generated code; then its straight-line run
        got = _version_error(rg, lambda: model(x).sum(), lambda: getattr(lin.weight, write)(2.0))
        assert got == want


def test_saved_view_message_is_eager_retrogrades() -> None:
    x = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    eager_lin, lin = _linear(rg), _linear(rg)
    model = rg.compile(lin)
    eager_out = eager_lin(x).sum()
    with rg.no_grad():
        eager_lin.weight.add_(1.0)
    with pytest.raises(RuntimeError) as eager:
        eager_out.backward()
    for _ in range(3):
        out = model(x).sum()
        with rg.no_grad():
            lin.weight.add_(1.0)
        with pytest.raises(RuntimeError) as got:
            out.backward()
        # The same words up to the hint; the versions differ by the earlier calls' writes.
        def head(error: Any) -> str:
            return re.sub(r"version \d+", "version N", str(error.value).split(" Hint:")[0])

        assert head(got) == head(eager)
        assert "modified in place by add_ at" in str(got.value)


def test_optimizer_step_between_forward_and_backward_raises(torch: Any) -> None:
    x = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    lin = _linear(rg)
    model = rg.compile(lin)
    opt = rg.optim.SGD(lin.parameters(), lr=0.1)
    compiled_step = rg.compile(opt.step)
    for step in (opt.step, compiled_step, compiled_step, compiled_step):
        out = model(x).sum()
        out.backward()
        step()  # a normal training step: backward first, then the update
        opt.zero_grad()
    for step in (opt.step, compiled_step):
        out = model(x).sum()
        for p in lin.parameters():  # (gradients of a step before: SGD skips a parameter without one)
            p.grad = rg.ones_like(p)
        step()  # the update before this forward's backward
        with pytest.raises(RuntimeError, match=r"\[torch\.DoubleTensor \[3, 2\]\].*is at version"):
            out.backward()


def test_no_write_keeps_gradients_equal_to_eager() -> None:
    x = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    eager_lin, lin = _linear(rg), _linear(rg)
    model = rg.compile(lin)
    for _ in range(3):
        x.grad = None
        eager_lin(x).tanh().sum().backward()
        want = x.grad.numpy().copy(), eager_lin.weight.grad.numpy().copy()
        x.grad = None
        model(x).tanh().sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), want[0])
        np.testing.assert_array_equal(lin.weight.grad.numpy(), want[1])
        eager_lin.zero_grad()
        lin.zero_grad()
        with rg.no_grad():  # written after backward: nothing to raise
            eager_lin.weight.mul_(0.5)
            lin.weight.mul_(0.5)


def _returns_a_saved_view(x: Any) -> Any:
    y = x.t()
    return y, (y * y).sum()  # mul saves y, the function's own output, a view of x


def test_saved_output_that_is_a_view_of_an_input_raises(torch: Any) -> None:
    xs = np.random.default_rng(2).standard_normal((2, 3))
    tx = torch.tensor(xs, requires_grad=True)
    want = _version_error(torch, lambda: _returns_a_saved_view(tx)[1], lambda: tx.add_(1.0))
    x = rg.tensor(xs, requires_grad=True)
    compiled = rg.compile(_returns_a_saved_view)
    for _ in range(3):
        got = _version_error(rg, lambda: compiled(x)[1], lambda: x.add_(1.0))
        assert got == want


def _input_not_requiring_grad(x: Any, w: Any) -> Any:
    return (x @ w.t()).sum()


def test_view_of_an_input_without_grad_is_checked(torch: Any) -> None:
    rng = np.random.default_rng(3)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws)
    want = _version_error(torch, lambda: _input_not_requiring_grad(tx, tw), lambda: tw.mul_(3.0))
    x, w = rg.tensor(xs, requires_grad=True), rg.tensor(ws)
    compiled = rg.compile(_input_not_requiring_grad)
    for _ in range(3):
        got = _version_error(rg, lambda: compiled(x, w), lambda: w.mul_(3.0))
        assert got == want


def _split_at_item(x: Any, w: Any) -> Any:
    y = (x @ w.t()).tanh()
    s = y.sum().item()  # a graph break: each side is compiled as a part of its own
    return (y * s).sum()  # (w is read only through the view the first part saves)


def test_parts_of_a_split_function_check_their_saved_views(torch: Any) -> None:
    rng = np.random.default_rng(4)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    want = _version_error(torch, lambda: _split_at_item(tx, tw), lambda: tw.add_(1.0))
    x, w = rg.tensor(xs, requires_grad=True), rg.tensor(ws, requires_grad=True)
    compiled = rg.compile(_split_at_item)
    for _ in range(4):
        got = _version_error(rg, lambda: compiled(x, w), lambda: w.add_(1.0))
        assert got[0] == want[0] and got[1] >= 1
    assert compiled.last_segmented is not None  # (it did run as compiled parts)


def _returns_a_view_and_a_loss(x: Any) -> Any:
    return x.t(), (x * x).sum()  # mul saves x


@pytest.mark.parametrize("written", ["input", "returned view"])
def test_returned_view_of_an_input_shares_its_version_counter(torch: Any, written: str) -> None:
    xs = np.random.default_rng(5).standard_normal((2, 3))

    def error(lib: Any, fn: Any, x: Any) -> tuple[str, int]:
        outs: list[Any] = []

        def forward() -> Any:
            y, loss = fn(x)
            outs[:] = [y]
            return (y * y).sum() if written == "input" else loss  # y saved outside the function, or x inside

        return _version_error(lib, forward, lambda: (x if written == "input" else outs[0]).mul_(2.0))

    want = error(torch, _returns_a_view_and_a_loss, torch.tensor(xs, requires_grad=True))
    x = rg.tensor(xs, requires_grad=True)
    assert error(rg, _returns_a_view_and_a_loss, x) == want
    compiled = rg.compile(_returns_a_view_and_a_loss)
    for _ in range(3):
        assert error(rg, compiled, x) == want


def _saves_a_view_of_its_output(x: Any) -> Any:
    y = x * 2  # (a product by a number saves nothing)
    return y, (y.t() * x.t()).sum()  # mul saves y.t(), a view of the returned y, and no y itself


def _returns_an_output_and_its_view(x: Any) -> Any:
    y = x * 2
    return y, y.t()


@pytest.mark.parametrize("case", ["saved inside", "saved outside"])
def test_view_of_an_output_sees_writes_of_the_output(torch: Any, case: str) -> None:
    xs = np.random.default_rng(6).standard_normal((2, 3))
    fn = _saves_a_view_of_its_output if case == "saved inside" else _returns_an_output_and_its_view

    def error(lib: Any, f: Any, x: Any) -> tuple[str, int]:
        outs: list[Any] = []

        def forward() -> Any:
            y, other = f(x)
            outs[:] = [y]
            return other if case == "saved inside" else (other * other).sum()

        return _version_error(lib, forward, lambda: outs[0].mul_(2.0))

    want = error(torch, fn, torch.tensor(xs, requires_grad=True))
    x = rg.tensor(xs, requires_grad=True)
    assert error(rg, fn, x) == want
    compiled = rg.compile(fn)
    for _ in range(3):
        assert error(rg, compiled, x) == want


_CAPTURED_WEIGHT = rg.tensor(np.random.default_rng(7).standard_normal((2, 3)))


def _reads_a_captured_weight(x: Any) -> Any:
    return (x @ _CAPTURED_WEIGHT.t()).sum()  # the global becomes a lifted input of the graph


def test_view_of_a_captured_tensor_is_checked(torch: Any) -> None:
    xs = np.random.default_rng(8).standard_normal((4, 3))
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(_CAPTURED_WEIGHT.numpy())
    want = _version_error(torch, lambda: (tx @ tw.t()).sum(), lambda: tw.add_(1.0))
    x = rg.tensor(xs, requires_grad=True)
    compiled = rg.compile(_reads_a_captured_weight)
    for _ in range(3):
        assert _version_error(rg, lambda: compiled(x), lambda: _CAPTURED_WEIGHT.add_(1.0)) == want
    assert compiled.last_variant is not None and compiled.last_variant.lifted == [_CAPTURED_WEIGHT]
