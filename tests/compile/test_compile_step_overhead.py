"""retrograd.compile's per-step overhead (issue #14, row 13b): the straight-line guard of a
variant's call form, and relu of a linear layer's product written in place."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd._compile import CompiledFunctionBackward


def _mlp() -> Any:
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 2))


def _count_general_path(compiled: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls went down the general guard path (the key built, the cache looked up)."""
    inner = compiled._compiled if hasattr(compiled, "_compiled") else compiled
    calls = [0]
    general = type(inner)._inputs

    def counted(self: Any, args: Any, kwargs: Any) -> Any:
        calls[0] += 1
        return general(self, args, kwargs)

    monkeypatch.setattr(type(inner), "_inputs", counted)
    return calls


def test_a_repeated_module_call_skips_the_general_guard_path(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _mlp()
    compiled = rg.compile(model)
    calls = _count_general_path(compiled, monkeypatch)
    x = rg.randn(5, 3)
    for _ in range(5):
        assert np.array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    # The first call traces, the second finds the variant by its key and makes its guard;
    # the next three pass that guard alone.
    assert calls[0] == 2
    assert compiled(input=x) is not None and calls[0] == 3  # keywords: the general path, as before


def test_the_straight_line_guard_misses_on_every_change_the_key_sees(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _mlp()
    compiled = rg.compile(model)
    calls = _count_general_path(compiled, monkeypatch)
    x = rg.randn(5, 3)

    def check(arg: Any) -> None:
        before = calls[0]
        got = compiled(arg)
        assert calls[0] == before + 1, "the change went unseen by the straight-line guard"
        assert np.array_equal(got.detach().numpy(), model(arg).detach().numpy())
        got = compiled(arg)  # the same call again: its own variant's guard passes
        assert calls[0] == before + 1 or calls[0] == before + 2
        assert np.array_equal(got.detach().numpy(), model(arg).detach().numpy())

    for _ in range(2):
        compiled(x)
    check(rg.randn(6, 3))  # a new input shape
    check(x.double().float().requires_grad_())  # requires_grad
    check(x)
    with rg.no_grad():
        check(x)  # grad mode
    model[0].weight = rg.nn.Parameter(rg.ones(4, 3))  # a new parameter object
    check(x)
    model[2] = rg.nn.Linear(4, 2)  # a replaced child
    check(x)
    model[0].weight.data = rg.ones(4, 3, dtype=rg.float64)  # the same parameter, another dtype
    with pytest.raises(RuntimeError):  # (eager refuses the float32 input; so does the compiled call)
        model(x)
    with pytest.raises(RuntimeError):
        compiled(x)
    model[0].weight.data = rg.ones(4, 3)  # back to the guarded dtype: the variant's guard passes again
    assert np.array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    model[2].weight.requires_grad_(False)  # a parameter's requires_grad
    check(x)
    model.eval()  # a module's mode
    check(x)
    model[0].register_buffer("scale", rg.ones(1))  # a new buffer
    check(x)
    assert compiled(x).detach().numpy().shape == (5, 2)


def test_a_gradient_through_the_straight_line_guard_lands_where_eager_puts_it() -> None:
    model = _mlp()
    twin = _mlp()
    compiled = rg.compile(model)
    x = rg.randn(5, 3)
    for _ in range(4):
        model.zero_grad()
        twin.zero_grad()
        compiled(x).square().sum().backward()
        twin(x).square().sum().backward()
        for p, q in zip(model.parameters(), twin.parameters()):
            assert p.grad is not None and np.array_equal(p.grad.numpy(), q.grad.numpy())


def test_a_function_with_a_captured_tensor_rechecks_it() -> None:
    w = rg.ones(3)
    compiled = rg.compile(lambda x: x * w)
    x = rg.ones(3)
    for _ in range(3):
        assert compiled(x).tolist() == [1.0, 1.0, 1.0]
    w.data = rg.full((2, 3), 2.0)  # the captured tensor changed shape: a new variant, not the old one
    assert compiled(x).tolist() == [[2.0, 2.0, 2.0]] * 2
    assert compiled(x).tolist() == [[2.0, 2.0, 2.0]] * 2


def test_relu_of_a_linear_layer_runs_in_place_with_pytorchs_values(torch: Any) -> None:
    rg.manual_seed(0)
    model = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 4), rg.nn.ReLU())
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.ReLU())
    with torch.no_grad():
        for p, tp in zip(model.parameters(), tmodel.parameters()):
            tp.copy_(torch.from_numpy(p.detach().numpy().copy()))
    compiled = rg.compile(model)
    xs = np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [np.nan, 1.0, 1.0], [-3.0, 1.0, 2.0]], np.float32)
    with torch.no_grad():  # a product of exactly -0.0 before the relu: relu keeps its sign, as PyTorch's
        tmodel[0].weight[0].zero_()
        tmodel[0].bias[0] = -0.0
        model[0].weight.data[0] = 0.0
        model[0].bias.data[0] = -0.0
    kept = []
    for _ in range(3):
        x = rg.tensor(xs)
        out = compiled(x)
        kept.append(out)
        tx = torch.tensor(xs)
        tout = tmodel(tx)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6, equal_nan=True)
        hidden = rg.compile(model[:2])(x).detach().numpy()
        assert np.array_equal(np.signbit(hidden), np.signbit(tmodel[:2](tx).detach().numpy()))
        out.nan_to_num().sum().backward()
        tout.nan_to_num().sum().backward()
        for p, tp in zip(model.parameters(), tmodel.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6, equal_nan=True)
    # Each call's result is its own array: a later call writes nothing into an earlier one's.
    assert all(np.array_equal(k.detach().numpy(), kept[0].detach().numpy(), equal_nan=True) for k in kept)
    assert len({id(k.detach().numpy()) for k in kept}) == 3
    forward = compiled.code.split("def backward")[0]
    assert forward.count("in place") == 2 and "_relu(" not in forward


def test_relu_stays_a_call_where_its_input_is_read_again() -> None:
    lin = rg.nn.Linear(3, 3)
    compiled = rg.compile(lambda x: lin(x).relu() + lin(x))  # (the product is read twice)
    x = rg.randn(2, 3)
    for _ in range(2):
        got = compiled(x)
    want = lin(x).relu() + lin(x)
    assert np.array_equal(got.detach().numpy(), want.detach().numpy())
    assert "in place" not in compiled.code


# -- the compiled optimizer step's straight-line collect --------------------------------------


def _pair(name: str, **kw: Any) -> tuple[list[Any], Any, Any, list[Any], Any]:
    """Two identical parameter sets: one with a compiled step, one with the eager step."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(3).astype(np.float32),
              rng.standard_normal((2, 3)).astype(np.float32)]
    ps = [rg.nn.Parameter(rg.tensor(a.copy())) for a in arrays]
    qs = [rg.nn.Parameter(rg.tensor(a.copy())) for a in arrays]
    opt, twin = getattr(rg.optim, name)(ps, **kw), getattr(rg.optim, name)(qs, **kw)
    return ps, opt, rg.compile(opt.step), qs, twin


def _grads(ps: list[Any], qs: list[Any], seed: int, skip: int | None = None) -> None:
    rng = np.random.default_rng(seed)
    for i, (p, q) in enumerate(zip(ps, qs)):
        if i == skip:
            p.grad = q.grad = None
            continue
        g = rng.standard_normal(p.shape).astype(np.float32)
        p.grad, q.grad = rg.tensor(g), rg.tensor(g.copy())


def _same(ps: list[Any], qs: list[Any]) -> None:
    for p, q in zip(ps, qs):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize(("name", "kw"), [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                          ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_a_repeated_optimizer_step_skips_the_general_collect(name: str, kw: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ps, opt, step, qs, twin = _pair(name, **kw)
    calls = [0]
    general = type(step)._collect

    def counted(self: Any, o: Any) -> Any:
        calls[0] += 1
        return general(self, o)

    monkeypatch.setattr(type(step), "_collect", counted)
    for seed in range(6):
        _grads(ps, qs, seed)
        step()
        twin.step()
        _same(ps, qs)
    # The first step makes the state eagerly, the second compiles the update and its collect;
    # the last four pass that collect alone.
    assert calls[0] == 2
    for p, q in zip(ps, qs):
        for name_, buf in twin.state[q].items():
            assert np.array_equal(opt.state[p][name_].numpy(), buf.numpy())


def test_the_optimizer_collect_misses_on_every_change_the_key_sees() -> None:
    ps, opt, step, qs, twin = _pair("SGD", lr=0.1, momentum=0.9)
    seed = [0]

    def both(skip: int | None = None) -> None:
        seed[0] += 1
        _grads(ps, qs, seed[0], skip)
        step()
        twin.step()
        _same(ps, qs)

    for _ in range(4):
        both()
    for group in (opt.param_groups[0], twin.param_groups[0]):
        group["lr"] = 0.05  # a new value: the same variant, the new number
    both()
    both(skip=1)  # a parameter without a gradient
    both()
    for group in (opt.param_groups[0], twin.param_groups[0]):
        group["nesterov"] = True  # a flag: another variant
    both()
    both()
    opt.state[ps[0]]["momentum_buffer"] = opt.state[ps[0]]["momentum_buffer"].clone()  # a new state tensor
    both()
    ps[2].data = ps[2].data.clone()  # a new parameter array
    both()
    both()
    for group in (opt.param_groups[0], twin.param_groups[0]):
        group["lr"] = rg.tensor(0.01)  # a tensor hyperparameter: the eager step
    both()
    assert any("tensor hyperparameter" in b for b in step.breaks)
    for group in (opt.param_groups[0], twin.param_groups[0]):
        group["lr"] = 0.01
    both()
    _grads(ps, qs, 99)
    ps[0].grad = rg.tensor(np.ones((4, 2), np.float32))[:3]  # a view: not a plain gradient, eager
    qs[0].grad = rg.tensor(np.ones((3, 2), np.float32))
    step()
    twin.step()
    _same(ps, qs)
    assert any("not a plain array" in b for b in step.breaks)


# -- kernels lowered to their NumPy calls in the generated code -------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_lowered_products_and_bias_sums_give_eagers_bits_and_pytorchs_values(dtype: str, torch: Any) -> None:
    # linear with a 1-D bias and with a 2-D (batch-shaped) one, a bias broadcast over
    # two leading dims (sum_to_size over a tuple of axes), a 1-D linear input.
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((4, 3), (4,), (5, 4), (2, 5, 4), (3,))]
    x_np = rng.standard_normal((5, 3)).astype(dtype)

    def fn(lib: Any, x: Any, w: Any, b: Any, b2: Any, b3: Any, v: Any) -> Any:
        h = lib.nn.functional.linear(x, w, b)
        h = lib.nn.functional.linear(h.relu(), w @ w.t(), b2)
        h = (h + b3).tanh() + b  # (2, 5, 4): b's gradient here sums two leading dims
        return h.sum() + lib.nn.functional.linear(v, w).square().sum()

    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
    torch_out = fn(torch, torch.tensor(x_np.astype(np.float64)), *ts)
    torch_out.backward()
    compiled = rg.compile(lambda *a: fn(rg, *a))
    for _ in range(3):
        xs = [rg.tensor(a, requires_grad=True) for a in arrays]
        twins = [rg.tensor(a, requires_grad=True) for a in arrays]
        got = compiled(rg.tensor(x_np), *xs)
        want = fn(rg, rg.tensor(x_np), *twins)
        assert np.array_equal(got.detach().numpy(), want.detach().numpy())
        got.backward()
        want.backward()
        for a, b, t in zip(xs, twins, ts):
            assert a.grad.dtype == b.grad.dtype and np.array_equal(a.grad.numpy(), b.grad.numpy())
            tol = 1e-2 if dtype == "float16" else 1e-4
            np.testing.assert_allclose(a.grad.numpy().astype(np.float64), t.grad.numpy(), rtol=tol, atol=tol)
    code = compiled.code
    if dtype == "float16":  # (opmath products: the kernels themselves, no lowering)
        assert "_matmul(" not in code and "_addmm(" in code
    else:
        assert "_mm(" not in code and "_addmm(" not in code and "_sum_to(" not in code and "  # t\n" in code
        assert "_add_reduce(v" in code and "(0, 1))  # sum_to_size" in code and "_matmul(" in code



# -- the variant's generated run --------------------------------------------------------------


def test_the_generated_run_returns_what_the_first_run_returns(torch: Any) -> None:
    # Several outputs: two with the node (output_nr 0 and 1), an input handed back, a number,
    # a saved output (exp's); from the third call on the variant's generated run makes them.
    w = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def fn(lib: Any, x: Any, w: Any) -> Any:
        e = (x * w).exp()
        return e, x, 3, (e * w).sum()

    compiled = rg.compile(lambda x: fn(rg, x, w))
    tw = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    for i in range(4):
        xs = np.array([1.0, 0.5, -2.0], np.float32) * (i + 1)
        x, tx = rg.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        e, same, three, total = compiled(x)
        te, _, _, ttotal = fn(torch, tx, tw)
        assert same is x and three == 3 and type(compiled(x)) is tuple
        if i:  # (the first call is the eager trace)
            assert e.grad_fn is total.grad_fn and (e.output_nr, total.output_nr) == (0, 1)
        assert e.requires_grad and not e.is_leaf and e._version == te._version
        (e.sum() + total).backward()
        (te.sum() + ttotal).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    assert compiled._fast is not None and compiled._fast.runner is not None
    with rg.no_grad():  # (another variant: its outputs have no node)
        for _ in range(3):
            e, _, _, total = compiled(x)
            assert e.grad_fn is None and not total.requires_grad
    with rg.inference_mode():
        for _ in range(3):
            e, same, _, _ = compiled(x)
            assert e.is_inference() and not same.is_inference()


def test_the_generated_backward_apply_keeps_the_shared_applys_behaviour(torch: Any) -> None:
    # From the third call on, the node's apply is the variant's generated one: an output with no
    # gradient gets a zero seed, a saved input written in place and a second backward raise as
    # eager does, and create_graph is refused.
    def fn(x: Any, w: Any) -> Any:
        return (x * w).exp(), (x * w).sin()

    w = rg.tensor([0.5, -1.0], requires_grad=True)
    compiled = rg.compile(lambda x: fn(x, w))
    tw = torch.tensor([0.5, -1.0], requires_grad=True)
    for i in range(4):
        xs = np.array([1.0, 2.0], np.float32) + i
        x, tx = rg.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        w.grad = tw.grad = None
        e, _ = compiled(x)
        te, _ = fn(tx, tw)
        e.sum().backward(retain_graph=True)  # (the second output's gradient is undefined: a zero seed)
        te.sum().backward(retain_graph=True)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
        e.sum().backward()
        te.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            e.sum().backward()
        e, s = compiled(x)
        with pytest.raises(RuntimeError, match="double backward"):
            rg.autograd.grad(s.sum(), x, create_graph=True)
        x2 = rg.tensor(xs, requires_grad=True).clone()  # (a non-leaf: may be written in place)
        e, _ = compiled(x2)
        with rg.no_grad():
            x2.add_(1.0)  # a saved input changed: eager's backward raises the version error
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            e.sum().backward()
    assert type(e.grad_fn) is not CompiledFunctionBackward and isinstance(e.grad_fn, CompiledFunctionBackward)
    assert e.grad_fn.name() == "CompiledFunctionBackward"


# -- Python numbers as 0-d arrays of the operand's dtype ---------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numbers_in_generated_ufunc_calls_give_eagers_bits(dtype: str) -> None:
    def fn(x: Any, n: Any) -> Any:
        y = (x * (1 / 3) + 7).relu() - 0.1  # a number rounded to the dtype, an int, the relu's zero
        y = (y / 3).minimum(x)
        big = x * 1e39  # beyond float32's range: inf there, as eager's
        return y + (y > 0.5) + (n * 3) + (n > 1) + big.clamp(-1.0, 1.0)

    compiled = rg.compile(fn)
    rng = np.random.default_rng(4)
    for _ in range(3):
        xs = rng.standard_normal((3, 4)).astype(dtype)
        ns = rng.integers(0, 4, (3, 4))
        x, twin = rg.tensor(xs, requires_grad=True), rg.tensor(xs, requires_grad=True)
        got, want = compiled(x, rg.tensor(ns)), fn(twin, rg.tensor(ns))
        assert got.dtype == want.dtype and np.array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        assert np.array_equal(x.grad.numpy(), twin.grad.numpy(), equal_nan=True)  # (float32: 0 * inf)
    assert not compiled.breaks
    forward = compiled.code.split("def backward")[0]
    # add's 7 and sub's 0.1 (mul and gt take 0-d arrays already, and the int tensor's numbers stay so)
    assert len(re.findall(rf"(add|subtract)\(v\d+, k\d+_{dtype}\)", forward)) == 2


@pytest.mark.parametrize(("name", "kw"), [
    ("SGD", dict(lr=1 / 3, momentum=0.9, dampening=0.1, weight_decay=1e-3, nesterov=False)),
    ("SGD", dict(lr=0.1 + 1e-9, momentum=0.7, nesterov=True, weight_decay=1e39)),  # (inf in float32)
    ("Adam", dict(lr=1 / 3, betas=(0.8, 0.95), eps=1e-7, weight_decay=0.01)),
    ("AdamW", dict(lr=3, betas=(0.9, 0.999), amsgrad=True))])
def test_an_optimizer_steps_numbers_as_0d_arrays_give_eagers_bits(name: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(3).astype(np.float64),
              rng.standard_normal((2, 3)).astype(np.float32)]  # two dtypes in one group
    ps = [rg.nn.Parameter(rg.tensor(a.copy())) for a in arrays]
    qs = [rg.nn.Parameter(rg.tensor(a.copy())) for a in arrays]
    opt, twin = getattr(rg.optim, name)(ps, **kw), getattr(rg.optim, name)(qs, **kw)
    step = rg.compile(opt.step)
    for _ in range(5):
        for p, q in zip(ps, qs):
            g = rng.standard_normal(tuple(p.shape)).astype(p.detach().numpy().dtype)
            p.grad, q.grad = rg.tensor(g), rg.tensor(g.copy())
        with np.errstate(all="ignore"):
            step()
            twin.step()
        for p, q in zip(ps, qs):
            assert np.array_equal(p.detach().numpy(), q.detach().numpy(), equal_nan=True)
    assert "_asarray(" in step.code and "dt_float64" in step.code and "dt_float32" in step.code
