"""retrograd.compile: a graph break in the middle of a function compiles the parts around it."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd._compile import GraphBreak, explain


def _item_in_the_middle(x: Any, w: Any) -> Any:
    y = (x * w).tanh()
    s = y.sum().item()  # a graph break: the value goes to Python
    z = (y * s + w).exp()
    return z.sum()


def _branch_on_a_value(x: Any, w: Any, scale: float = 2.0) -> Any:
    y = x * w + 1
    z = y.tanh()
    if z.sum() > 0:  # Python control flow on a tensor value
        z = z * scale
    else:
        z = z - 1
    out = (z * y).sum()
    return out


def _count_calls(part: Any) -> dict[str, int]:
    """Wrap the part's compiled forward and backward with counters."""
    variant = part.call.last_variant
    counts = {"forward": 0, "backward": 0}

    def wrap(name: str) -> None:
        fn = getattr(variant, name)

        def counted(*args: Any) -> Any:
            counts[name] += 1
            return fn(*args)

        setattr(variant, name, counted)

    wrap("forward")
    wrap("backward")
    return counts


def _check_against_torch(torch: Any, fn: Any, compiled: Any, xs: np.ndarray, ws: np.ndarray) -> Any:
    x, w = rg.tensor(xs, requires_grad=True), rg.tensor(ws, requires_grad=True)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    out, want = compiled(x, w), fn(tx, tw)
    out.backward()
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-15)
    return out


@pytest.mark.parametrize("fn", [_item_in_the_middle, _branch_on_a_value])
def test_parts_before_and_after_a_break_are_compiled_and_used(torch: Any, fn: Any) -> None:
    compiled = rg.compile(fn)
    rng = np.random.default_rng(0)
    ws = rng.standard_normal(6)
    xs = rng.standard_normal(6)
    for _ in range(2):  # the trace that finds the break, then the parts' own traces
        _check_against_torch(torch, fn, compiled, xs, ws)
    plan = compiled.last_segmented
    assert plan is not None and [p.compiled for p in plan.parts] == [True, False, True]
    counts = [_count_calls(p) for p in plan.parts if p.compiled]
    for _ in range(3):
        out = _check_against_torch(torch, fn, compiled, xs, ws)
        assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert counts == [{"forward": 3, "backward": 3}] * 2
    assert any("reads a traced value" in b for b in compiled.breaks)
    assert "# lines" in compiled.code and "def backward" in compiled.code


def test_both_branches_of_a_break_give_eagers_values_and_gradients(torch: Any) -> None:
    compiled = rg.compile(_branch_on_a_value)
    ws = np.full(4, 0.5)
    for sign in (1.0, -1.0, 1.0, -1.0, 1.0, -1.0):
        _check_against_torch(torch, _branch_on_a_value, compiled, sign * np.arange(1.0, 5.0), ws)


def test_a_number_crossing_the_break_that_changes_stays_right(torch: Any) -> None:
    # The number is a constant of the part after the break (guarded by its value, as Dynamo
    # specialises): each new value compiles anew, then past the cache limit the part runs eagerly.
    compiled = rg.compile(_item_in_the_middle)
    ws = np.full(3, 0.25)
    for k in range(12):
        _check_against_torch(torch, _item_in_the_middle, compiled, np.array([0.1, -0.2, 0.3]) * (k + 1), ws)


def test_in_place_write_to_an_input_is_a_break_and_runs_eagerly(torch: Any) -> None:
    def fn(x: Any, b: Any) -> Any:
        y = (x * 3).sin()
        b.add_(1)  # an in-place write to an input: the break
        return (y + b * x).sum()

    compiled = rg.compile(fn)
    for _ in range(4):
        x, b = rg.tensor([0.1, 0.2, 0.3], requires_grad=True), rg.tensor([1.0, 2.0, 3.0])
        tx, tb = torch.tensor([0.1, 0.2, 0.3], requires_grad=True), torch.tensor([1.0, 2.0, 3.0])
        out, want = compiled(x, b), fn(tx, tb)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14)
        assert b.tolist() == tb.tolist()
    assert [p.compiled for p in compiled.last_segmented.parts] == [True, False, True]
    assert any("in-place op 'add' writes to a traced tensor" in r for r in compiled.breaks)


def test_in_place_write_to_a_saved_input_in_the_break_raises_as_eager() -> None:
    def fn(x: Any, w: Any) -> Any:
        y = x * w  # mul saves w for x's gradient
        w.mul_(2)
        return (y + w).sum()

    def run(f: Any) -> tuple[str, str]:
        x, w = rg.tensor([1.0, 2.0], requires_grad=True), rg.tensor([3.0, 4.0])
        return outcome(lambda: f(x, w).backward())

    compiled = rg.compile(fn)
    results = [run(compiled) for _ in range(3)]
    assert results == [run(fn)] * 3 and "modified by an inplace operation" in results[0][1]


def test_compiled_module_with_a_break_in_forward_trains_as_eager() -> None:
    class Net(rg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = rg.nn.Linear(3, 8)
            self.b = rg.nn.Linear(8, 2)

        def forward(self, x: Any) -> Any:
            h = self.a(x).relu()
            peak = h.abs().max().item()  # the break
            h = h / (1.0 + 0 * peak)
            return self.b(h)

    def train(model: Any, forward: Any) -> list[np.ndarray]:
        opt = rg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = rg.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)), rg.tensor([0, 1, 1, 0, 1])
        for _ in range(5):
            opt.zero_grad()
            rg.nn.functional.cross_entropy(forward(x), y).backward()
            opt.step()
        return [p.detach().numpy().copy() for p in model.parameters()]

    rg.manual_seed(0)
    eager = Net()
    rg.manual_seed(0)
    model = Net()
    compiled = rg.compile(model)
    want, got = train(eager, eager), train(model, compiled)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    parts = compiled._compiled.last_segmented.parts
    assert [p.compiled for p in parts] == [True, False, True]
    assert all(p.call.last_variant is not None for p in parts if p.compiled)


def test_closures_defaults_and_keywords_reach_the_parts(torch: Any) -> None:
    c = rg.tensor([1.0, 2.0])

    def fn(x: Any, *, bias: float = 0.5) -> Any:
        y = x * c + bias
        if y.sum() > 100:
            y = y * 0
        return (y * c).sum()

    compiled = rg.compile(fn)
    for k in range(4):
        x = rg.tensor([1.0, -1.0]) * k
        assert compiled(x).item() == fn(x).item()
        assert compiled(x, bias=2.0).item() == fn(x, bias=2.0).item()
    c = rg.tensor([3.0, 5.0])  # the closure is read afresh at every call
    x = rg.tensor([1.0, -1.0])
    assert compiled(x).item() == fn(x).item() == 1.0 * 3 * 3 + 0.5 * 3 + (-5 + 0.5) * 5
    assert compiled.last_segmented is not None


def test_fullgraph_raises_and_explain_lists_parts_and_breaks() -> None:
    with pytest.raises(GraphBreak, match="Tensor.item"):
        rg.compile(_item_in_the_middle, fullgraph=True)(rg.ones(3), rg.ones(3))
    report = explain(_item_in_the_middle)(rg.ones(3, requires_grad=True), rg.ones(3))
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert report.ops_per_graph == [["mul", "tanh"], ["mul", "add", "exp", "sum"]] and report.op_count == 6
    assert "Tensor.item() reads a traced value" in report.break_reasons[0].reason


def test_a_function_that_cannot_be_split_runs_eagerly_whole() -> None:
    def early_return(x: Any) -> Any:
        y = x * 2
        if y.sum() > 0:
            return y
        return y * 3

    compiled = rg.compile(early_return)
    for sign in (1.0, -1.0, 1.0):
        x = rg.tensor([sign, 2 * sign])
        assert compiled(x).tolist() == early_return(x).tolist()
    assert compiled.last_segmented is None and compiled.last_variant is None and compiled.breaks


def test_a_wrapped_function_is_not_split_by_its_wrapped_source() -> None:
    # inspect finds the source of ``__wrapped__``: splitting it would drop the wrapper's own work.
    def add_hundred(f: Any) -> Any:
        @functools.wraps(f)
        def wrapper(x: Any) -> Any:
            return f(x) + 100

        return wrapper

    @add_hundred
    def fn(x: Any) -> Any:
        y = x * 2
        s = y.sum().item()
        return y * s

    compiled = rg.compile(fn)
    for _ in range(3):
        x = rg.tensor([1.0, 2.0])
        assert compiled(x).tolist() == fn(x).tolist() == [112.0, 124.0]
    assert compiled.last_segmented is None


def test_the_branches_of_an_if_on_a_tensor_value_are_compiled(torch: Any) -> None:
    compiled = rg.compile(_branch_on_a_value)
    ws = np.full(4, 0.5)
    for sign in (1.0, -1.0, 1.0, -1.0):  # each branch traced on its first use
        _check_against_torch(torch, _branch_on_a_value, compiled, sign * np.arange(1.0, 5.0), ws)
    first = _branch_on_a_value.__code__.co_firstlineno  # (the def line: the statements follow it)
    parts = compiled.last_segmented.all_parts()
    branch = [p for p in parts if p.compiled and p.source_lines[0] - first in (4, 6)]
    assert [p.source_lines[0] - first for p in parts] == [1, 3, 4, 6, 7] and len(branch) == 2
    counts = [_count_calls(p) for p in branch]
    for sign in (1.0, 1.0, -1.0):
        _check_against_torch(torch, _branch_on_a_value, compiled, sign * np.arange(1.0, 5.0), ws)
    assert counts == [{"forward": 2, "backward": 2}, {"forward": 1, "backward": 1}]


def _elif_chain(x: Any, w: Any) -> Any:
    y = x * w + 1
    z = y.tanh()
    if z.sum() > 2:
        z = z * 2.0
    elif z.sum() < -1:
        z = z - 1
    else:
        z = z.exp()
        s = z.max().item()  # a break inside a branch the first trace did not take
        z = z / s
    return (z * y).sum()


def test_breaks_in_branches_the_first_trace_did_not_take_are_cut_when_met(torch: Any) -> None:
    compiled = rg.compile(_elif_chain)
    ws = np.full(3, 0.5)
    for _ in range(2):
        for scale in (1.0, -4.0, -1.0):  # the three branches
            _check_against_torch(torch, _elif_chain, compiled, scale * np.array([1.0, 2.0, 3.0]), ws)
    first = _elif_chain.__code__.co_firstlineno
    kinds = [(p.source_lines[0] - first, p.compiled) for p in compiled.last_segmented.all_parts()]
    assert kinds == [(1, True), (3, False), (4, True), (5, False), (6, True),
                     (8, True), (9, False), (10, True), (11, True)], kinds
    assert all(p.call.last_variant is not None for p in compiled.last_segmented.all_parts() if p.compiled)


def test_a_split_module_forward_still_runs_forward_hooks() -> None:
    class Net(rg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = rg.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            h = self.lin(x)
            if h.sum() > 1e9:
                h = h * 0
            return h * 2

    model = Net()
    compiled = rg.compile(model)
    x = rg.tensor([[1.0, 2.0]])
    for _ in range(3):
        compiled(x)
    assert compiled._compiled.last_segmented is not None
    seen: list[Any] = []
    model.register_forward_hook(lambda m, args, out: seen.append(out))
    out = compiled(x)
    assert len(seen) == 1 and seen[0] is out
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())


def _new_name_in_both_branches(x: Any) -> Any:
    if x.shape[0] > 2:  # control flow on a shape: traced (guarded by the shape)
        z = x * 2
    else:
        z = x * 3
    if z.sum() > 0:  # control flow on a value: the break
        w = z.exp()
    else:
        w = z.cos()
    s = w.sum().item()
    return (w * z).sum() + s


def test_names_bound_on_both_paths_of_an_if_cross_the_parts(torch: Any) -> None:
    compiled = rg.compile(_new_name_in_both_branches)
    for xs in ([0.5, -0.2, 0.1], [-1.0, 0.3], [0.5, -0.2, 0.1], [-1.0, 0.3], [-0.5, 0.2, 0.1]) * 2:
        x, tx = rg.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        out, want = compiled(x), _new_name_in_both_branches(tx)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    parts = compiled.last_segmented.all_parts()
    assert [p.compiled for p in parts] == [True, False, True, True, False, True]
