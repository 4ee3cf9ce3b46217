"""retrograd.compile: in-place ops on values the graph itself computed (``nn.ReLU(inplace=True)``,
``x.relu_()``, ``x.add_(y)``...) are traced as their out-of-place forms, with no graph break and
the same values, gradients and version-counter errors as eager retrograd and PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd._compile import GraphBreak

_RNG = np.random.default_rng(7)
_X = [_RNG.standard_normal((5, 4)) for _ in range(4)]


def _layers(nn: Any) -> list[Any]:
    return [nn.ReLU(inplace=True), nn.LeakyReLU(0.2, inplace=True), nn.Hardtanh(-0.5, 0.7, inplace=True),
            nn.ReLU6(inplace=True), nn.Dropout(0.4, inplace=True)]


def _model(lib: Any, layer: int) -> Any:
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 6), _layers(nn)[layer], nn.Linear(6, 3), _layers(nn)[layer])
    model.double()
    model.eval()  # (Dropout: the identity in eval mode, as PyTorch's)
    return model


def _copy_weights(model: Any, torch_model: Any, torch: Any) -> None:
    with torch.no_grad():
        for p, q in zip(model.parameters(), torch_model.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))


@pytest.mark.parametrize("layer", range(5), ids=["relu", "leaky_relu", "hardtanh", "relu6", "dropout_eval"])
def test_sequential_with_inplace_activation_compiles_whole_and_matches_eager_and_torch(torch: Any, layer: int) -> None:
    rg.manual_seed(0)
    model = _model(rg, layer)
    twin = _model(torch, layer)
    _copy_weights(model, twin, torch)
    compiled = rg.compile(model)
    for xs in _X:
        x, tx = rg.tensor(xs * 3, requires_grad=True), torch.tensor(xs * 3, requires_grad=True)
        ex = rg.tensor(xs * 3, requires_grad=True)
        out, want, eager = compiled(x), twin(tx), model(ex)
        (out * out).sum().backward()
        (want * want).sum().backward()
        (eager * eager).sum().backward()
        np.testing.assert_array_equal(out.detach().numpy(), eager.detach().numpy())
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
        for p, q in zip(model.parameters(), twin.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy() * 2, rtol=1e-12, atol=1e-14)  # twice: compiled and eager
        model.zero_grad()
        twin.zero_grad()
    assert compiled._compiled.breaks == []
    assert compiled._compiled.last_variant is not None and compiled._compiled.last_segmented is None


def test_relu_inplace_sequential_compiles_with_fullgraph() -> None:
    model = rg.nn.Sequential(rg.nn.Linear(4, 6), rg.nn.ReLU(inplace=True), rg.nn.Linear(6, 2))
    compiled = rg.compile(model, fullgraph=True)
    x = rg.tensor(_X[0], dtype=rg.float32)
    for _ in range(2):
        np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert "relu" in compiled.code and compiled._compiled.breaks == []


def _relu_f(f: Any, x: Any, w: Any) -> Any:
    return (f.relu(x * w, inplace=True) + 1).tanh().sum()


def _relu_method(f: Any, x: Any, w: Any) -> Any:
    h = x * w
    h.relu_()
    return (h * h).sum()


def _add_mul(f: Any, x: Any, w: Any) -> Any:
    h = x.sin()
    h.add_(w)
    h.mul_(2)
    h.add_(x, alpha=0.5)
    return (h * x).sum()


def _mul_by_a_tensor_that_requires_grad(f: Any, x: Any, w: Any) -> Any:
    h = x * 2
    h.mul_(w)  # mul saves its input (a copy of h before the write) for w's gradient
    return h.exp().sum()


def _read_before_the_write(f: Any, x: Any, w: Any) -> Any:
    h = x * w
    a = h + 1  # reads h before the write: the old value
    h.mul_(3)
    return (a * h).sum()


def _write_in_place_then_return_it(f: Any, x: Any, w: Any) -> Any:
    h = x + w
    return f.leaky_relu(h, 0.3, inplace=True)


def _chain_of_inplace_ops(f: Any, x: Any, w: Any) -> Any:
    h = x * w
    h.clamp_(min=-0.1, max=0.5)  # clamp_, pow_, abs_ and mul_(w) save their input: a copy of h
    h.sub_(w)
    h.div_(2.0)
    h.pow_(2)
    h.neg_()
    h.abs_()
    h.mul_(w)
    h.exp_()
    return h


def _ops_of_several_inputs(f: Any, x: Any, w: Any) -> Any:
    h = x * w
    h.addcmul_(x, w, value=0.5)  # (the generic dispatch path)
    h.lerp_(w, 0.3)
    return f.hardtanh(h, -0.2, 0.3, inplace=True)


@pytest.mark.parametrize("fn", [_relu_f, _relu_method, _add_mul, _mul_by_a_tensor_that_requires_grad,
                                _read_before_the_write, _write_in_place_then_return_it, _chain_of_inplace_ops,
                                _ops_of_several_inputs])
def test_inplace_ops_on_intermediates_compile_and_match_eager_and_torch(torch: Any, fn: Any) -> None:
    def run(lib: Any, f: Any, call: Any, xs: np.ndarray, ws: np.ndarray) -> tuple[np.ndarray, ...]:
        x, w = lib.tensor(xs, requires_grad=True), lib.tensor(ws, requires_grad=True)
        out = call(f, x, w)
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy(), w.grad.numpy()

    compiled = rg.compile(fn)
    for xs in _X:
        ws = xs[::-1].copy() * 0.7
        got = run(rg, rg.nn.functional, compiled, xs, ws)
        eager = run(rg, rg.nn.functional, fn, xs, ws)
        want = run(torch, torch.nn.functional, fn, xs, ws)
        for g, e, t in zip(got, eager, want):
            np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    assert compiled.breaks == [] and compiled.last_variant is not None


def test_outputs_of_earlier_calls_are_not_overwritten_by_later_ones() -> None:
    model = rg.nn.Sequential(rg.nn.Linear(4, 6), rg.nn.ReLU(inplace=True), rg.nn.Linear(6, 3),
                             rg.nn.ReLU(inplace=True)).double()
    compiled = rg.compile(model)
    xs = [rg.tensor(a, requires_grad=True) for a in _X]
    outs = [compiled(x) for x in xs]  # several calls before any backward
    for x, out in zip(xs, outs):
        ex = rg.tensor(x.detach().numpy(), requires_grad=True)
        want = model(ex)
        np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
        out.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), ex.grad.numpy())
    assert compiled._compiled.breaks == []


def test_inplace_activation_under_no_grad_compiles(torch: Any) -> None:
    model = rg.nn.Sequential(rg.nn.Linear(4, 6), rg.nn.ReLU(inplace=True), rg.nn.Linear(6, 3),
                             rg.nn.Hardtanh(inplace=True)).double()
    twin = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(inplace=True), torch.nn.Linear(6, 3),
                               torch.nn.Hardtanh(inplace=True)).double()
    _copy_weights(model, twin, torch)
    compiled = rg.compile(model)
    with rg.no_grad(), torch.no_grad():
        for xs in _X:
            out = compiled(rg.tensor(xs))
            np.testing.assert_array_equal(out.numpy(), model(rg.tensor(xs)).numpy())
            np.testing.assert_allclose(out.numpy(), twin(torch.tensor(xs)).numpy(), rtol=1e-12, atol=1e-14)
    assert compiled._compiled.breaks == [] and compiled._compiled.last_variant is not None


def test_inplace_write_to_a_value_saved_for_backward_raises_at_backward_as_eager_and_torch(torch: Any) -> None:
    def fn(x: Any, w: Any) -> Any:
        h = x * 2
        y = h * w  # mul saves h for w's gradient
        h.relu_()  # ... and this overwrites it
        return (y + h).sum()

    def run(lib: Any, f: Any) -> tuple[str, str]:
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        out = f(x, w)  # the forward succeeds: the error is the backward's
        return outcome(lambda: out.backward())

    compiled = rg.compile(fn)
    results = [run(rg, compiled) for _ in range(3)]
    assert results == [run(rg, fn)] * 3
    assert results[0][0] == "RuntimeError" and "modified by an inplace operation" in results[0][1]
    assert run(torch, fn) == results[0]
    with pytest.raises(GraphBreak, match="modified by an inplace operation"):
        rg.compile(fn, fullgraph=True)(rg.tensor([1.0, -2.0], requires_grad=True),
                                       rg.tensor([3.0, 4.0], requires_grad=True))


def test_inplace_on_a_value_with_a_view_is_a_break_and_runs_as_eager(torch: Any) -> None:
    def fn(x: Any) -> Any:
        h = x * 2
        v = h.view(-1)  # sees the write: not a value the graph may replace
        h.relu_()
        return (v * x.view(-1)).sum()

    compiled = rg.compile(fn)
    for xs in _X[:3]:
        x, tx = rg.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        out, want = compiled(x), fn(tx)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-13)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)
    assert any("in-place op 'relu' writes to a traced tensor" in r for r in compiled.breaks)


def test_inplace_that_changes_the_dtype_on_write_is_a_break_and_runs_as_eager(torch: Any) -> None:
    def fn(x: Any, y: Any) -> Any:
        h = x * 2  # float32
        h.add_(y)  # float64 on the right: computed in float64, written back as float32
        return h

    compiled = rg.compile(fn)
    for xs in _X[:2]:
        x32, y64 = xs.astype(np.float32), xs * 1e-3
        got = compiled(rg.tensor(x32), rg.tensor(y64))
        want = fn(torch.tensor(x32), torch.tensor(y64))
        assert got.dtype == rg.float32
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert compiled.last_variant is None


def test_training_a_compiled_model_with_inplace_relu_matches_eager() -> None:
    def make() -> Any:
        rg.manual_seed(3)
        return rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.ReLU(inplace=True), rg.nn.Linear(8, 8),
                                rg.nn.LeakyReLU(0.1, inplace=True), rg.nn.Linear(8, 2)).double()

    def train(model: Any, call: Any) -> list[np.ndarray]:
        opt = rg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        target = rg.full((5, 2), 0.25, dtype=rg.float64)
        for k in range(12):
            opt.zero_grad()
            loss = ((call(rg.tensor(_X[k % 4])) - target) ** 2).mean()
            loss.backward()
            opt.step()
        return [p.detach().numpy().copy() for p in model.parameters()]

    eager_model, model = make(), make()
    compiled = rg.compile(model)
    for got, want in zip(train(model, compiled), train(eager_model, eager_model)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert compiled._compiled.breaks == []
