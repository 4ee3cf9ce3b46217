"""A compiled function that calls a module it reads from its closure, its globals or its object
(``rg.compile(lambda x, y: F.cross_entropy(model(x), y))``), as torch.compile users write a
training loss: the module's parameters and buffers are graph inputs, as a compiled module's are,
so the whole loss is one graph and ``.grad`` lands on the parameters; guards on the module's
structure (the module itself, its children, parameter objects and flags, ``training``, hooks)
compile anew when it changes. Compared with eager retrograd and with PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd._compile import GraphBreak, explain

_SIZES = (6, 8, 4)


def _mlp(lib: Any, seed: int = 0) -> Any:
    """A small Linear-ReLU-Linear network with weights drawn by NumPy (the same in both libraries)."""
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(_SIZES[0], _SIZES[1]), lib.nn.ReLU(), lib.nn.Linear(_SIZES[1], _SIZES[2]))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _batch(lib: Any, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((5, _SIZES[0])).astype(np.float32))
    y = lib.tensor(rng.integers(0, _SIZES[-1], 5))
    return x, y


def _train(lib: Any, compiled: bool) -> tuple[list[float], list[list[np.ndarray]], Any]:
    """Four SGD steps on a loss that reads ``model`` from its closure."""
    model = _mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_loss(x: Any, y: Any) -> Any:
        return lib.nn.functional.cross_entropy(model(x), y)

    loss_fn = lib.compile(train_loss) if compiled else train_loss
    losses, grads = [], []
    for step in range(4):
        opt.zero_grad()
        loss = loss_fn(*_batch(lib, step))
        loss.backward()
        losses.append(loss.item())
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
        opt.step()
    return losses, grads, loss_fn


def test_a_loss_over_a_closure_module_is_one_graph_with_eagers_results(torch: Any) -> None:
    losses, grads, loss_fn = _train(rg, compiled=True)
    assert loss_fn.breaks == [] and len(loss_fn.compile_times) == 1
    assert "nll_loss_backward" in loss_fn.code and "addmm" in loss_fn.code
    eager_losses, eager_grads, _ = _train(rg, compiled=False)
    torch_losses, torch_grads, _ = _train(torch, compiled=False)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-5)
    for got, eager, want in zip(grads, eager_grads, torch_grads):
        for g, e, w in zip(got, eager, want):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_the_compiled_loss_grad_fn_and_edges_lead_to_the_parameters() -> None:
    model = _mlp(rg)
    loss_fn = rg.compile(lambda x, y: F.cross_entropy(model(x), y))
    x, y = _batch(rg, 0)
    for _ in range(3):
        loss = loss_fn(x, y)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    leaves = {id(node.variable) for node, _ in loss.grad_fn.next_functions}
    assert leaves == {id(p) for p in model.parameters()}


MODEL = _mlp(rg)


def _global_loss(x: Any, y: Any) -> Any:
    return F.cross_entropy(MODEL(x), y)


def _expect_eager(compiled: Any, eager: Any, model: Any, x: Any, y: Any) -> None:
    """``compiled(x, y)`` and ``eager(x, y)`` give the same loss and the same gradients on ``model``."""
    got = compiled(x, y)
    model.zero_grad()
    got.backward()
    got_grads = [None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()]
    want = eager(x, y)
    model.zero_grad()
    if want.requires_grad:
        want.backward()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
    for g, p in zip(got_grads, model.parameters()):
        assert (g is None) == (p.grad is None)
        if g is not None:
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_guards_on_a_global_module_recompile_on_each_change() -> None:
    global MODEL
    compiled = rg.compile(_global_loss)
    x, y = _batch(rg, 1)
    for _ in range(2):
        _expect_eager(compiled, _global_loss, MODEL, x, y)
    assert len(compiled._cache) == 1

    MODEL = _mlp(rg, seed=1)  # the global rebound to another module of the same structure
    _expect_eager(compiled, _global_loss, MODEL, x, y)
    assert len(compiled._cache) == 2

    MODEL[2] = rg.nn.Linear(_SIZES[1], _SIZES[2])  # a child replaced
    _expect_eager(compiled, _global_loss, MODEL, x, y)
    assert len(compiled._cache) == 3

    MODEL[0].weight = rg.nn.Parameter(rg.randn(_SIZES[1], _SIZES[0]))  # a parameter replaced
    _expect_eager(compiled, _global_loss, MODEL, x, y)
    assert len(compiled._cache) == 4

    MODEL[0].bias.requires_grad_(False)  # a parameter's requires_grad
    _expect_eager(compiled, _global_loss, MODEL, x, y)
    assert MODEL[0].bias.grad is None
    assert len(compiled._cache) == 5
    assert compiled.breaks == []


class _Scaled(rg.nn.Module):
    """``linear(x)`` times 2 in training mode, times 3 in eval mode."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = rg.nn.Linear(3, 2)

    def forward(self, x: Any) -> Any:
        return self.linear(x) * (2.0 if self.training else 3.0)


def test_training_flag_of_a_closure_module_is_a_guard_and_both_variants_are_kept() -> None:
    model = _Scaled()
    compiled = rg.compile(lambda x: model(x).sum())
    x = rg.ones(4, 3)
    want = {True: model(x).sum().item()}
    model.eval()
    want[False] = model(x).sum().item()
    model.train()
    for mode in (True, True, False, False, True, False):
        model.train(mode)
        np.testing.assert_allclose(compiled(x).item(), want[mode], rtol=1e-6)
    assert len(compiled._cache) == 2 and compiled.breaks == []
    model.train()
    model.linear.train(False)  # a submodule's flag alone
    with rg.no_grad():
        expected = model(x).sum().item()
    np.testing.assert_allclose(compiled(x).item(), expected, rtol=1e-6)
    assert len(compiled._cache) == 3


def test_a_hook_registered_on_a_closure_module_runs_and_its_removal_compiles_again() -> None:
    model = _mlp(rg)
    compiled = rg.compile(lambda x, y: F.cross_entropy(model(x), y))
    x, y = _batch(rg, 2)
    for _ in range(2):
        compiled(x, y)
    seen: list[Any] = []
    handle = model[1].register_forward_hook(lambda m, args, out: seen.append(out.shape))
    for _ in range(2):
        _expect_eager(compiled, lambda a, b: F.cross_entropy(model(a), b), model, x, y)
    assert len(seen) == 4  # two compiled calls and two eager ones, each ran the hook
    assert any("hooks" in reason for reason in compiled.breaks)
    handle.remove()
    runs = len(compiled._cache)
    for _ in range(2):
        compiled(x, y)
    assert len(seen) == 4 and len(compiled._cache) == runs  # the hookless variant again
    assert compiled._fast is not None and compiled._fast.guard((x, y)) is not None


def test_a_hook_added_after_compiling_a_module_runs() -> None:
    model = _mlp(rg)
    compiled = rg.compile(model)
    x, _ = _batch(rg, 3)
    for _ in range(3):
        compiled(x)
    seen: list[Any] = []
    model.register_forward_pre_hook(lambda m, args: seen.append(1))
    out = compiled(x)
    assert seen == [1]
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())


def test_fullgraph_and_explain_name_a_module_hook_as_the_break() -> None:
    model = _mlp(rg)
    model.register_forward_hook(lambda m, args, out: None)
    x, y = _batch(rg, 4)
    with pytest.raises(GraphBreak, match="hooks"):
        rg.compile(lambda a, b: F.cross_entropy(model(a), b), fullgraph=True)(x, y)
    report = explain(lambda a, b: F.cross_entropy(model(a), b))(x, y)
    assert report.graph_break_count == 1 and "hooks" in report.break_reasons[0].reason


def test_a_compiled_module_called_by_a_compiled_function_is_inlined() -> None:
    model = _mlp(rg)
    inner = rg.compile(model)
    x, y = _batch(rg, 5)
    inner(x)
    inner(x)  # (its own variant exists: the outer trace must still see its ops)
    outer = rg.compile(lambda a, b: F.cross_entropy(inner(a), b))
    for _ in range(3):
        _expect_eager(outer, lambda a, b: F.cross_entropy(model(a), b), model, x, y)
    assert outer.breaks == [] and len(outer.compile_times) == 1


class _Trainer:
    def __init__(self) -> None:
        self.model = _mlp(rg)

    def loss(self, x: Any, y: Any) -> Any:
        return F.cross_entropy(self.model(x), y)


def test_a_bound_method_reads_the_modules_of_its_object() -> None:
    trainer = _Trainer()
    compiled = rg.compile(trainer.loss)
    x, y = _batch(rg, 6)
    for _ in range(2):
        _expect_eager(compiled, trainer.loss, trainer.model, x, y)
    assert compiled.breaks == [] and len(compiled._cache) == 1
    trainer.model = _mlp(rg, seed=2)  # the attribute rebound: compiled anew
    _expect_eager(compiled, trainer.loss, trainer.model, x, y)
    assert len(compiled._cache) == 2


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", [rg.float32, rg.float64])
def test_compiled_cross_entropy_gives_eagers_bits_and_errors(reduction: str, dtype: Any) -> None:
    rng = np.random.default_rng(0)

    def loss(x: Any, y: Any) -> Any:
        return F.cross_entropy(x, y, reduction=reduction)

    compiled = rg.compile(loss)
    for _ in range(3):
        data = rng.standard_normal((7, 5))
        target = rng.integers(0, 5, 7)
        x, ex = (rg.tensor(data, dtype=dtype, requires_grad=True) for _ in range(2))
        got, want = compiled(x, rg.tensor(target)), loss(ex, rg.tensor(target))
        got.backward()
        want.backward()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(x.grad.numpy(), ex.grad.numpy())
    assert compiled.breaks == [] and "nll_loss_backward" in compiled.code and "log_softmax_nll" in compiled.code
    x = rg.tensor(rng.standard_normal((7, 5)), dtype=dtype, requires_grad=True)
    bad = rg.tensor([0, 1, 2, 3, 4, 5, 0])
    with pytest.raises(IndexError) as got_error:
        compiled(x, bad)
    with pytest.raises(IndexError) as want_error:
        loss(x, bad)
    assert str(got_error.value) == str(want_error.value)
    target = rg.tensor(rng.integers(0, 5, 7))
    out = compiled(x, target)
    target.add_(0)  # the target written in place after the forward: backward refuses, as eagerly
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_compiled_cross_entropy_passes_gradcheck() -> None:
    target = rg.tensor([2, 0, 1, 1])
    compiled = rg.compile(lambda x: F.cross_entropy(x, target))
    x = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    compiled(x)
    assert rg.autograd.gradcheck(compiled, (x,))
    assert compiled.breaks == []


def test_log_softmax_backward_is_traced_through_its_op() -> None:
    compiled = rg.compile(lambda x: (F.log_softmax(x, 1) * x).sum())
    x = rg.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    for _ in range(2):
        compiled(x).backward()
    assert compiled.breaks == [] and "log_softmax_backward" in compiled.code


@pytest.mark.parametrize("kwargs", [{"ignore_index": 1}, {"weight": rg.tensor([1.0, 2.0, 0.5], dtype=rg.float64)}, {"reduction": "none"}])
def test_cross_entropy_cases_outside_the_fused_ones_keep_eagers_values(kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)

    def loss(x: Any, y: Any) -> Any:
        return F.cross_entropy(x, y, **kwargs).sum()

    compiled = rg.compile(loss)
    for _ in range(3):
        data, target = rng.standard_normal((6, 3)), rg.tensor(rng.integers(0, 3, 6))
        x, ex = (rg.tensor(data, requires_grad=True) for _ in range(2))
        got, want = compiled(x, target), loss(ex, target)
        got.backward()
        want.backward()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert "log_softmax_nll" not in compiled.code
