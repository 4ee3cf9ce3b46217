"""retrograd.compile: entry points, guards, generated code, graph breaks, backward, training."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd._compile import GraphBreak, explain


def _f(x: Any, w: Any) -> Any:
    return ((x * w + 1).tanh() * x).sum()


def test_compile_is_a_function_and_a_decorator_as_torch_compile() -> None:
    assert callable(rg.compile) and rg.compile.__module__ == "retrograd._compile"

    @rg.compile
    def g(x: Any) -> Any:
        return x * 2

    @rg.compile(fullgraph=True, dynamic=False, mode="max-autotune", backend="inductor")
    def h(x: Any) -> Any:
        return x + 1

    x = rg.tensor([1.0, 2.0])
    for _ in range(2):
        assert g(x).tolist() == [2.0, 4.0] and h(x).tolist() == [2.0, 3.0]
    assert rg.compile(_f, disable=True) is _f


def test_values_and_gradients_equal_pytorch_eager(torch: Any) -> None:
    compiled = rg.compile(_f)
    rng = np.random.default_rng(1)
    for call in range(3):  # the trace, then the generated code twice
        xs, ws = rng.standard_normal(5), rng.standard_normal(5)
        x, w = rg.tensor(xs, requires_grad=True), rg.tensor(ws, requires_grad=True)
        tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
        out, want = compiled(x, w), _f(tx, tw)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-13)
        if call:
            assert out.grad_fn.name() == "CompiledFunctionBackward"
            assert out.grad_fn.next_functions[0][0].variable is x
    assert compiled.breaks == [] and len(compiled.compile_times) == 1


def test_compiled_module_shares_parameters_and_grads_land_on_them(torch: Any) -> None:
    rg.manual_seed(0)
    model = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.Tanh(), rg.nn.Linear(8, 3))
    compiled = rg.compile(model)
    validate = torch.distributions.Distribution._validate_args
    # (importing torch._dynamo switches PyTorch's distribution validation off process-wide: restored,
    # so that later tests comparing distributions' errors see PyTorch's default)
    tmodel = torch.compile(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)))
    torch.distributions.Distribution.set_default_validate_args(validate)
    assert type(compiled).__name__ == type(tmodel).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model
    assert [n for n, _ in compiled.named_parameters()] == [n for n, _ in tmodel.named_parameters()]
    assert all(a is b for a, b in zip(compiled.parameters(), model.parameters()))
    x = rg.tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))
    for _ in range(2):
        for p in model.parameters():
            p.grad = None
        compiled(x).square().sum().backward()
        got = [p.grad.numpy().copy() for p in model.parameters()]
        for p in model.parameters():
            p.grad = None
        model(x).square().sum().backward()
        for g, p in zip(got, model.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert "addmm" in compiled.code


def test_guards_recompile_on_shape_dtype_requires_grad_grad_mode_and_parameters() -> None:
    compiled = rg.compile(lambda x, w: (x * w).sum())
    calls = [
        (rg.ones(3), rg.ones(3, requires_grad=True)),
        (rg.ones(4), rg.ones(4, requires_grad=True)),  # shape
        (rg.ones(4, dtype=rg.float64), rg.ones(4, dtype=rg.float64, requires_grad=True)),  # dtype
        (rg.ones(4), rg.ones(4)),  # requires_grad
    ]
    for n, (x, w) in enumerate(calls, 1):
        for _ in range(2):
            out = compiled(x, w)
            assert out.item() == x.shape[0] and out.dtype == x.dtype and out.requires_grad == w.requires_grad
        assert len(compiled._cache) == n
    with rg.no_grad():  # grad mode
        out = compiled(*calls[0])
        out = compiled(*calls[0])
    assert len(compiled._cache) == 5 and not out.requires_grad and out.grad_fn is None

    with rg.inference_mode():  # inference mode is a guard too, and its outputs are inference tensors
        outs = [compiled(*calls[0]) for _ in range(2)]
    assert len(compiled._cache) == 6 and all(o.is_inference() and o.item() == 3.0 for o in outs)

    lin = rg.nn.Linear(2, 1)
    module = rg.compile(lin)
    x = rg.ones(1, 2)
    module(x)
    module(x)
    assert len(module._compiled._cache) == 1
    lin.weight = rg.nn.Parameter(rg.full((1, 2), 3.0))  # a new parameter: its identity is guarded
    lin.bias = rg.nn.Parameter(rg.zeros(1))
    assert module(x).item() == 6.0 and module(x).item() == 6.0
    assert len(module._compiled._cache) == 2


def test_generated_code_calls_numpy_fuses_in_place_and_merges_and_drops() -> None:
    def g(x: Any, y: Any) -> Any:
        unused = x.exp()  # noqa: F841 - dead code: removed
        return ((x * y) + (x * y)).tanh() * 2 + 1

    compiled = rg.compile(g)
    x, y = rg.tensor([0.1, 0.2]), rg.tensor([0.3, 0.4])
    compiled(x, y)
    first = compiled(x, y)
    code = compiled.code
    assert "Tensor" not in code and "exp" not in code
    assert code.count("multiply(v0, v1") == 1  # the two x * y are one
    assert "out=b0" in code and "_pool" in code  # elementwise chain on one reused buffer
    xs, ys = x.numpy(), y.numpy()
    np.testing.assert_allclose(first.numpy(), np.tanh(2 * xs * ys) * 2 + 1, rtol=1e-6)
    kept = first.numpy().copy()
    second = compiled(rg.tensor([1.0, 1.0]), rg.tensor([1.0, 1.0]))
    assert np.array_equal(first.numpy(), kept)  # a buffer never reaches the user
    assert second.numpy()[0] == pytest.approx(np.tanh(2.0) * 2 + 1)


def test_compiled_calls_from_threads_do_not_share_buffers() -> None:
    compiled = rg.compile(lambda x: ((x * 3 + 1) * 2).tanh() + 0)
    x0 = rg.tensor(np.linspace(-1, 1, 64))
    compiled(x0)
    expected: dict[int, np.ndarray] = {}
    errors: list[str] = []

    def work(k: int) -> None:
        x = rg.tensor(np.linspace(-1, 1, 64) * k)
        want = np.tanh((x.numpy() * 3 + 1) * 2)
        for _ in range(200):
            if not np.array_equal(compiled(x).numpy(), want):
                errors.append(f"thread {k}")
                return
        expected[k] = want

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(expected) == 4


@pytest.mark.parametrize(("fn", "reason"), [
    (lambda x: x * x.sum().item(), "Tensor.item() reads a traced value"),
    (lambda x: x * float(x.detach().numpy().sum()), "Tensor.numpy() reads a traced value"),
    (lambda x: x * 2 if x.sum() > 0 else x * 3, "Python control flow on a tensor value"),
    (lambda x: x.mul_(2), "in-place op 'mul' writes to a traced tensor"),
    (lambda x: x + rg.randn(3), "reads a tensor made outside the traced ops"),
])
def test_graph_breaks_fall_back_to_eager_and_are_listed(fn: Any, reason: str) -> None:
    compiled = rg.compile(fn)
    for _ in range(2):
        rg.manual_seed(0)
        x = rg.tensor([1.0, 2.0, 3.0])
        got = compiled(x)
        rg.manual_seed(0)
        want = fn(rg.tensor([1.0, 2.0, 3.0]))
        assert np.array_equal(got.numpy(), want.numpy())
    assert any(reason in b for b in compiled.breaks), compiled.breaks
    assert compiled.last_variant is None  # the whole call runs eagerly

    report = explain(fn)(rg.tensor([1.0, 2.0, 3.0]))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert reason in report.break_reasons[0].reason and "Graph Break Count: 1" in str(report)
    with pytest.raises(GraphBreak, match="reads|control flow|in-place|outside"):
        rg.compile(fn, fullgraph=True)(rg.tensor([1.0, 2.0, 3.0]))


def test_explain_counts_graphs_and_ops() -> None:
    report = explain(lambda x: (x * 2).tanh())(rg.ones(2))
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert report.ops_per_graph == [["mul", "tanh"]] and report.op_count == 2


def test_in_place_write_to_a_saved_input_after_the_call_raises_as_eager() -> None:
    def run(fn: Any) -> tuple[str, str]:
        x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = rg.tensor([0.5, 0.5, 0.5])
        out = fn(x, w)
        assert out.grad_fn is not None
        with rg.no_grad():
            w.mul_(2)  # mul's rule for x reads w
        return outcome(lambda: out.backward())

    def g(x: Any, w: Any) -> Any:
        return (x * w).sum()

    compiled = rg.compile(g)
    run(compiled)
    assert run(compiled) == run(g) and "modified by an inplace operation" in run(g)[1]


def test_second_backward_and_double_backward_raise_clear_errors() -> None:
    compiled = rg.compile(lambda x: (x * x).sum())
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    compiled(x)
    out = compiled(x)
    out.backward(retain_graph=False)
    assert x.grad.tolist() == [2.0, 4.0]
    assert outcome(lambda: out.backward()) == outcome(lambda: _backward_twice(lambda t: (t * t).sum()))
    out = compiled(x)
    with pytest.raises(RuntimeError, match="double backward .* through a compiled function is not supported"):
        rg.autograd.grad(out, x, create_graph=True)


def _backward_twice(fn: Any) -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    out = fn(x)
    out.backward()
    out.backward()


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_training_converges_identically_to_eager(optimizer: str) -> None:
    def make() -> Any:
        rg.manual_seed(0)
        return rg.nn.Sequential(rg.nn.Linear(6, 16), rg.nn.ReLU(), rg.nn.Linear(16, 3))

    rng = np.random.default_rng(0)
    xs = rg.tensor(rng.standard_normal((32, 6)).astype(np.float32))
    ys = rg.tensor(rng.integers(0, 3, 32))
    losses = []
    for compiled in (False, True):
        model = make()
        run = rg.compile(model) if compiled else model
        opt = getattr(rg.optim, optimizer)(model.parameters(), lr=0.1 if optimizer == "SGD" else 0.01)
        history = []
        for _ in range(30):
            opt.zero_grad()
            loss = rg.nn.functional.cross_entropy(run(xs), ys)
            loss.backward()
            opt.step()
            history.append(loss.item())
        losses.append(history)
        if compiled:
            assert run._compiled.breaks == [] and len(run._compiled._cache) == 1
    assert losses[1] == losses[0]  # the same float32 arithmetic, op for op
    assert losses[0][-1] < losses[0][0] * 0.95


def test_a_trace_leaves_nothing_behind_even_when_the_function_raises() -> None:
    from retrograd.autograd.grad_mode import INFERENCE_CONTEXTS, STATE
    from retrograd.ops import inplace, op

    item = rg.Tensor.__dict__["item"]

    def bad(x: Any) -> Any:
        x * 2
        raise ValueError("user error")

    compiled = rg.compile(bad)
    with pytest.raises(ValueError, match="user error"):
        compiled(rg.ones(2))
    assert op.STATE is STATE and inplace.STATE is STATE and INFERENCE_CONTEXTS[0] == 0
    assert rg.Tensor.__dict__["item"] is item and compiled._cache == {}  # it traces again next time
    assert rg.ones(2).sum().item() == 2.0
