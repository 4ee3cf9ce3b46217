"""retrograd.compile(opt.step): the optimizer's update as generated NumPy, bitwise the eager step's."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd._compile import GraphBreak
from retrograd._compile.optim_step import CompiledOptimizerStep

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=1, maximize=True, foreach=False)),
    ("AdamW", dict(lr=0.01, weight_decay=0.05)),
    ("AdamW", dict(lr=0.01, amsgrad=True, foreach=True)),
]


def _train(lib: Any, name: str, kw: dict[str, Any], steps: int, compiled: bool, dtype: Any = None) -> list[np.ndarray]:
    """``steps`` training steps of a small MLP from fixed values; the parameters after them."""
    rng = np.random.default_rng(0)
    dtype = dtype or np.float32
    sizes = (5, 7, 3)
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layer = lib.nn.Linear(fan_in, fan_out, dtype=getattr(lib, np.dtype(dtype).name))
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(rng.standard_normal((fan_out, fan_in)).astype(dtype)))
            layer.bias.copy_(lib.tensor(rng.standard_normal(fan_out).astype(dtype)))
        layers += [layer, lib.nn.Tanh()] if i == 0 else [layer]
    model = lib.nn.Sequential(*layers)
    opt = getattr(lib.optim, name)(model.parameters(), **kw)
    step = lib.compile(opt.step) if compiled else opt.step
    x = lib.tensor(rng.standard_normal((6, 5)).astype(dtype))
    y = lib.tensor(rng.integers(0, 3, 6))
    for _ in range(steps):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        step()
    if compiled and lib is rg:
        assert isinstance(step, CompiledOptimizerStep) and step.breaks == [] and "def step(" in step.code
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize(("name", "kw"), CONFIGS)
def test_compiled_step_equals_eager_bitwise_and_pytorch_to_rounding(name: str, kw: dict[str, Any], torch: Any) -> None:
    compiled = _train(rg, name, kw, 6, True)
    eager = _train(rg, name, kw, 6, False)
    reference = _train(torch, name, kw, 6, False)
    for c, e, r in zip(compiled, eager, reference, strict=True):
        assert np.array_equal(c, e)  # the same NumPy operations in the same order
        np.testing.assert_allclose(c, r, rtol=1e-5, atol=1e-5)


def test_compiled_step_in_float64_and_without_torch() -> None:
    for name, kw in (CONFIGS[2], CONFIGS[5]):
        compiled = _train(rg, name, kw, 4, True, np.float64)
        eager = _train(rg, name, kw, 4, False, np.float64)
        assert all(np.array_equal(c, e) for c, e in zip(compiled, eager, strict=True))


def _one_param(values: Any = (1.0, -2.0, 3.0)) -> Any:
    return rg.nn.Parameter(rg.tensor(list(values)))


def test_lr_is_read_at_every_call_so_a_scheduler_works_without_recompiling(torch: Any) -> None:
    p, tp = _one_param(), torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    opt, topt = rg.optim.SGD([p], lr=0.5, momentum=0.9), torch.optim.SGD([tp], lr=0.5, momentum=0.9)
    sched = rg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=1, gamma=0.5)
    step = rg.compile(opt.step)
    for i in range(5):
        p.grad = rg.tensor([1.0, 2.0 * i, -1.0])
        tp.grad = torch.tensor([1.0, 2.0 * i, -1.0])
        step()
        topt.step()
        sched.step()
        tsched.step()
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)
    assert len(step._cache) == 1  # one variant: the lr changed, the code did not
    opt.param_groups[0]["momentum"] = 0  # a change of which operations run: a new variant
    p.grad = rg.tensor([1.0, 1.0, 1.0])
    before = p.detach().numpy().copy()
    step()
    assert len(step._cache) == 2
    np.testing.assert_allclose(p.detach().numpy(), before - opt.param_groups[0]["lr"] * 1.0, rtol=1e-6)


def test_first_step_is_eager_then_compiled_and_versions_bump_as_eager() -> None:
    p, q = _one_param(), _one_param()
    opt, eager_opt = rg.optim.Adam([p], lr=0.1), rg.optim.Adam([q], lr=0.1)
    step = rg.compile(opt.step)
    for _ in range(3):
        p.grad, q.grad = rg.tensor([0.5, -1.0, 2.0]), rg.tensor([0.5, -1.0, 2.0])
        step()
        eager_opt.step()
        assert p._version == q._version
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert opt.state[p][name]._version == eager_opt.state[q][name]._version
            assert np.array_equal(opt.state[p][name].numpy(), eager_opt.state[q][name].numpy())
    assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    assert len(step._cache) == 1 and opt._opt_called


def _version_error_after_steps(lib: Any, compiled: bool, steps: int) -> str:
    """The error of a backward through a graph that saved the parameter, after ``steps`` SGD
    steps with momentum (the compiled one's fast path from its third call)."""
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    step = rg.compile(opt.step) if compiled else opt.step
    x = lib.tensor([0.5, 1.5, -1.0], requires_grad=True)
    for _ in range(steps - 1):
        p.grad = lib.tensor([1.0, 1.0, 1.0])
        step()
    loss = (x * p).sum()  # saves p, for x's gradient
    p.grad = lib.tensor([1.0, 1.0, 1.0])
    step()
    with pytest.raises(RuntimeError) as error:
        loss.backward()
    return str(error.value)


def test_the_fast_compiled_step_bumps_versions_and_notes_the_write_for_a_live_saved_parameter(torch: Any) -> None:
    # The fast path writes the version bumps inline: a parameter saved by a live graph must still
    # make the backward raise PyTorch's version error, and name the update's write as eager does.
    for steps in (1, 3, 4):
        compiled = _version_error_after_steps(rg, True, steps)
        eager = _version_error_after_steps(rg, False, steps)
        reference = _version_error_after_steps(torch, False, steps)
        assert compiled == eager
        prefix = "one of the variables needed for gradient computation has been modified by an inplace operation"
        assert compiled.startswith(prefix) and reference.startswith(prefix)
        assert f"is at version {steps}; expected version {steps - 1} instead" in compiled
        assert f"is at version {steps}; expected version {steps - 1} instead" in reference


def test_a_parameter_that_gets_a_gradient_later_is_updated() -> None:
    a, b, c, d = _one_param(), _one_param((4.0, 5.0, 6.0)), _one_param(), _one_param((4.0, 5.0, 6.0))
    opt, eager_opt = rg.optim.SGD([a, b], lr=0.1, momentum=0.9), rg.optim.SGD([c, d], lr=0.1, momentum=0.9)
    step = rg.compile(opt.step)
    for i in range(4):
        a.grad = c.grad = rg.tensor([1.0, 2.0, 3.0])
        if i >= 2:  # b's first gradient: its buffer is made by an eager step, then compiled again
            b.grad = d.grad = rg.tensor([-1.0, 0.5, 0.25])
        step()
        eager_opt.step()
        assert np.array_equal(a.detach().numpy(), c.detach().numpy())
        assert np.array_equal(b.detach().numpy(), d.detach().numpy())
    assert len(step._cache) == 2


def test_what_cannot_compile_runs_the_eager_step_and_is_listed() -> None:
    p = _one_param()
    opt = rg.optim.SGD([p], lr=0.1)
    step = rg.compile(opt.step)
    p.grad = rg.tensor([1.0, 1.0, 1.0])
    assert step(lambda: 7.0) == 7.0  # a closure: eager, its loss returned
    assert np.allclose(p.detach().numpy(), [0.9, -2.1, 2.9])
    seen = []
    handle = opt.register_step_post_hook(lambda *args: seen.append(1))
    step()
    handle.remove()
    assert seen == [1] and np.allclose(p.detach().numpy(), [0.8, -2.2, 2.8])
    p.grad = rg.ones(6)[::2]  # a view: not an array of its own, the eager step's rules
    step()
    assert np.allclose(p.detach().numpy(), [0.7, -2.3, 2.7])
    opt.param_groups[0]["lr"] = rg.tensor(0.1)  # a tensor hyperparameter
    p.grad = rg.tensor([1.0, 1.0, 1.0])
    step()
    assert np.allclose(p.detach().numpy(), [0.6, -2.4, 2.6])
    assert len(step.breaks) == 4 and step._cache == {}
    with pytest.raises(GraphBreak, match="closure"):
        rg.compile(opt.step, fullgraph=True)(lambda: 1.0)
    other = rg.optim.RMSprop([p], lr=0.1)
    compiled_other = rg.compile(other.step)
    compiled_other()
    assert "RMSprop" in compiled_other.breaks[0]


def test_a_state_buffer_replaced_by_load_state_dict_is_followed() -> None:
    p, q = _one_param(), _one_param()
    opt, eager_opt = rg.optim.SGD([p], lr=0.1, momentum=0.9), rg.optim.SGD([q], lr=0.1, momentum=0.9)
    step = rg.compile(opt.step)
    for i in range(4):
        p.grad, q.grad = rg.tensor([1.0, -1.0, 0.5]), rg.tensor([1.0, -1.0, 0.5])
        if i == 2:
            opt.load_state_dict(copy.deepcopy(eager_opt.state_dict()))  # new buffers: their identity guard fails
        step()
        eager_opt.step()
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())


def test_a_compiled_linear_layers_weight_gradient_is_an_array_of_its_own(torch: Any) -> None:
    # The backward of ``x @ w.t()`` gives t(t(mm)): generated as the mm itself, so ``.grad``
    # takes the array without a copy, with the eager gradient's values.
    rng = np.random.default_rng(1)
    w1, w2 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    xs = rng.standard_normal((5, 4)).astype(np.float32)
    model = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.ReLU(), rg.nn.Linear(8, 3))
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    for m, lib in ((model, rg), (tmodel, torch)):
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[2].weight.copy_(lib.tensor(w2))
            m[0].bias.zero_()
            m[2].bias.zero_()
    compiled = rg.compile(model)
    for _ in range(2):
        model.zero_grad()
        compiled(rg.tensor(xs)).square().sum().backward()
    tmodel(torch.tensor(xs)).square().sum().backward()
    backward = compiled.code.split("def backward")[1]
    assert backward.count("  # t\n") == 3  # (was 7: t(t(mm)) for each weight)
    for p, tp in zip(model.parameters(), tmodel.parameters(), strict=True):
        assert p.grad._data.base is None
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_an_in_place_write_outside_the_graph_is_a_graph_break_not_a_lost_side_effect() -> None:
    # Before: the trace recorded no op for these writes, so later calls ran a graph without them.
    counter = rg.zeros(2)

    def count(x: Any) -> Any:
        counter.add_(1)  # a global tensor written in place
        return x * 2

    compiled = rg.compile(count)
    for i in range(3):
        assert compiled(rg.ones(2)).tolist() == [2.0, 2.0]
        assert counter.tolist() == [i + 1.0, i + 1.0]
    assert any("in-place write" in r for r in compiled.breaks)
    p, q = _one_param(), _one_param()
    opt, eager_opt = rg.optim.SGD([p], lr=0.1, momentum=0.9), rg.optim.SGD([q], lr=0.1, momentum=0.9)
    for o, t in ((opt, p), (eager_opt, q)):  # the state made first, so the trace's step is NumPy only
        t.grad = rg.tensor([1.0, 1.0, 1.0])
        o.step()

    @rg.compile
    def train_step() -> None:
        opt.step()  # PyTorch's tutorial form: the step inside a compiled function

    for _ in range(3):
        p.grad, q.grad = rg.tensor([1.0, -1.0, 2.0]), rg.tensor([1.0, -1.0, 2.0])
        train_step()
        eager_opt.step()
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(GraphBreak, match="in-place write"):
        rg.compile(count, fullgraph=True)(rg.ones(2))


def test_a_compiled_whole_train_step_trains_as_eager(torch: Any) -> None:
    # zero_grad(), backward() and opt.step() inside the function write .grad and the parameters:
    # before, later calls replayed the forward alone (the gradients of old steps piled up).
    def make(lib: Any) -> tuple[Any, Any]:
        rng = np.random.default_rng(3)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        return model, lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train(lib: Any, model: Any, opt: Any, x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(4)
    xs, ys = rng.standard_normal((5, 4)).astype(np.float32), rng.integers(0, 3, 5)
    (m1, o1), (m2, o2), (tm, to) = make(rg), make(rg), make(torch)
    compiled = rg.compile(train)
    for _ in range(5):
        a = compiled(rg, m1, o1, rg.tensor(xs), rg.tensor(ys)).item()
        b = train(rg, m2, o2, rg.tensor(xs), rg.tensor(ys)).item()
        c = train(torch, tm, to, torch.tensor(xs), torch.tensor(ys)).item()
        assert a == b and abs(a - c) < 1e-5
    for p, q, r in zip(m1.parameters(), m2.parameters(), tm.parameters(), strict=True):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_allclose(p.detach().numpy(), r.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert any(".grad" in r for r in compiled.breaks)


@pytest.mark.parametrize(("name", "kw"), [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                          ("Adam", dict(lr=0.1))])
def test_a_step_where_no_parameter_has_a_gradient_updates_nothing(name: str, kw: dict[str, Any], torch: Any) -> None:
    # (zero_grad, then a step before any backward: the generated update had no lines, and its
    # ``def`` failed to compile with an IndentationError)
    results = []
    for lib, compiled in ((rg, True), (rg, False), (torch, False)):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = getattr(lib.optim, name)([p], **kw)
        step = lib.compile(opt.step) if compiled else opt.step
        for _ in range(2):
            p.grad = lib.tensor([1.0, -1.0])
            step()
        opt.zero_grad()
        step()
        step()
        results.append(p.detach().numpy().copy())
        if compiled:
            assert step.breaks == []
    assert np.array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], results[2], rtol=1e-6)
