"""The faster paths of the calls every training step makes, held to the paths they replace and
to PyTorch: ``F.linear``'s ``addmm`` records through a three-input path (``ops/op.ternary``)
instead of ``apply_generic``; ``cross_entropy``'s common case runs log_softmax and nll_loss as one
fused forward (``ops/nn.log_softmax_nll``) and records the same two nodes (``ops/op.prerun``);
``x.sum()`` is one NumPy call. Each test compares with real PyTorch or with the composition the
fast path stands for, bit for bit where the arithmetic is the same."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.ops import nn as nn_ops
from retrograd.ops import op as op_module
from retrograd.ops import reduce as reduce_ops


def _names(fn: Any) -> list[str | None]:
    return [None if n is None else type(n).__name__ for n, _ in fn.next_functions]


@pytest.fixture
def no_generic(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Records every call that reaches ``apply_generic`` (the path the fast ones avoid)."""
    calls: list[Any] = []
    generic = op_module.apply_generic

    def spy(op: Any, args: Any) -> Any:
        calls.append(op.name)
        return generic(op, args)

    monkeypatch.setattr(op_module, "apply_generic", spy)
    return calls


# -- F.linear: addmm's three-input path ---------------------------------------------------------


@pytest.mark.parametrize("tracked", list(itertools.product([False, True], repeat=3)))
def test_linear_records_as_pytorch_for_every_tracked_subset(torch: Any, tracked: tuple[bool, bool, bool]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3,), (5, 4), (3, 4))]  # bias, input, weight

    def run(lib: Any) -> tuple[Any, ...]:
        b, x, w = (lib.tensor(a, requires_grad=r) for a, r in zip(arrays, tracked))
        y = lib.nn.functional.linear(x, w, b)
        fn = y.grad_fn
        meta = None
        if fn is not None:
            meta = (type(fn).__name__, _names(fn),
                    [None if getattr(fn, a) is None else getattr(fn, a).detach().numpy().tolist()
                     for a in ("_saved_mat1", "_saved_mat2")])
        grads = None
        if any(tracked):
            (y * lib.tensor(np.arange(15, dtype=np.float32).reshape(5, 3))).sum().backward()
            grads = [None if t.grad is None else t.grad.numpy() for t in (b, x, w)]
        return y.detach().numpy(), y.requires_grad, meta, grads

    ours, ref = run(rg), run(torch)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6, atol=1e-6)
    assert ours[1] == ref[1]
    if ours[2] is not None or ref[2] is not None:
        assert ours[2][:2] == ref[2][:2]
        for a, b in zip(ours[2][2], ref[2][2]):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
    if any(tracked):
        for g, h in zip(ours[3], ref[3]):
            assert (g is None) == (h is None)
            if g is not None:
                np.testing.assert_allclose(g, h, rtol=1e-6, atol=1e-6)


def test_linear_does_not_take_the_generic_path(no_generic: list[Any]) -> None:
    x = rg.randn(4, 3, requires_grad=True)
    layer = rg.nn.Linear(3, 2)
    y = layer(x)
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    assert no_generic == []


def test_linear_path_matches_the_generic_path_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    b, x, w = (rg.tensor(rng.standard_normal(s), requires_grad=True) for s in ((6,), (7, 5), (5, 6)))
    fast = op_module.ternary(nn_ops.addmm)(b, x, w)
    generic = op_module.apply_generic(nn_ops.addmm, (b, x, w))
    np.testing.assert_array_equal(fast.detach().numpy(), generic.detach().numpy())
    gf = rg.autograd.grad(fast.sum(), (b, x, w))
    gg = rg.autograd.grad(generic.sum(), (b, x, w))
    for p, q in zip(gf, gg):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_linear_under_no_grad_and_inference_mode(torch: Any) -> None:
    w = rg.ones(2, 3, requires_grad=True)
    with rg.no_grad():
        y = F.linear(rg.ones(1, 3), w, rg.zeros(2))
    assert y.grad_fn is None and not y.requires_grad
    with rg.inference_mode():
        z = F.linear(rg.ones(1, 3), w, rg.zeros(2))
    with torch.inference_mode():
        t = torch.nn.functional.linear(torch.ones(1, 3), torch.ones(2, 3, requires_grad=True), torch.zeros(2))
    assert (z.is_inference(), z.requires_grad, z.grad_fn) == (t.is_inference(), t.requires_grad, t.grad_fn)


def test_linear_errors_still_come_from_the_checked_path(torch: Any) -> None:
    from conftest import outcome

    cases = [
        lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 5), lib.zeros(4)),  # shapes
        lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3, dtype=lib.float64), lib.zeros(4)),
        lambda lib: lib.nn.functional.linear(lib.ones(2, 3, dtype=lib.float64), lib.ones(4, 3), lib.zeros(4)),
        lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3), lib.zeros(4, dtype=lib.float64)),
    ]
    for case in cases:
        assert outcome(lambda: case(rg)) == outcome(lambda: case(torch))


def test_linear_third_order_gradient() -> None:
    x = rg.tensor(np.random.default_rng(2).standard_normal((3, 2)), requires_grad=True)
    w = rg.tensor(np.random.default_rng(3).standard_normal((2, 2)), requires_grad=True)
    b = rg.zeros(2, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda x, w, b: F.linear(x, w, b).tanh(), (x, w, b))
    assert rg.autograd.gradgradcheck(lambda x, w, b: F.linear(x, w, b).tanh(), (x, w, b))
    (g,) = rg.autograd.grad(F.linear(x, w, b).tanh().sum(), w, create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), w, create_graph=True)
    (ggg,) = rg.autograd.grad(gg.sum(), w)
    assert np.isfinite(ggg.numpy()).all()


def test_ternary_path_with_params_and_of_an_op_it_does_not_cover(torch: Any) -> None:
    from retrograd.ops.elementwise import addcmul, where
    from retrograd.ops.linalg import addmm as linalg_addmm

    # torch.addmm's entry has params (beta, alpha): they reach the forward and the rules.
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in ((2, 3), (2, 4), (4, 3))]
    ours = [rg.tensor(a, requires_grad=True) for a in arrays]
    refs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = op_module.ternary_path(linalg_addmm)(*ours, 0.5, 2.0)
    ref = torch.addmm(*refs, beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    for a, b in zip(ours, refs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    # Promoting (addcmul) or with an input that has no rule (where's condition): the generic path.
    mixed = op_module.ternary_path(addcmul)(rg.zeros(2), rg.ones(2, dtype=rg.float64), rg.ones(2), 3)
    assert mixed.dtype == rg.float64 and mixed.tolist() == [3.0, 3.0]
    picked = op_module.ternary_path(where)(rg.tensor([True, False]), rg.ones(2, requires_grad=True), rg.zeros(2))
    assert picked.tolist() == [1.0, 0.0] and type(picked.grad_fn).__name__ == "WhereBackward0"


# -- cross_entropy: one fused forward, the same two nodes ---------------------------------------


def _ce_inputs(dtype: Any, n: int = 9, c: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, c)) * 3).astype(dtype), rng.integers(0, c, n)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_equals_its_composition_bit_for_bit(reduction: str, dtype: Any) -> None:
    x, t = _ce_inputs(dtype)
    a, b = rg.tensor(x, requires_grad=True), rg.tensor(x, requires_grad=True)
    fused = F.cross_entropy(a, rg.tensor(t), reduction=reduction)
    composed = F.nll_loss(F.log_softmax(b, 1), rg.tensor(t), reduction=reduction)
    assert fused.dtype == composed.dtype and fused.shape == composed.shape
    np.testing.assert_array_equal(fused.detach().numpy(), composed.detach().numpy())
    saved = [loss.grad_fn.next_functions[0][0]._saved_result.detach().numpy() for loss in (fused, composed)]
    np.testing.assert_array_equal(saved[0], saved[1])
    fused.sum().backward()
    composed.sum().backward()
    assert a.grad is not None and b.grad is not None
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_graph_matches_pytorch(torch: Any, reduction: str) -> None:
    x, t = _ce_inputs(np.float64)

    def run(lib: Any) -> tuple[Any, ...]:
        inp = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(inp, lib.tensor(t), reduction=reduction)
        fn = loss.grad_fn
        inner = fn.next_functions[0][0]
        graph = (loss.detach().numpy(), type(fn).__name__, type(inner).__name__, _names(inner), inner._saved_dim,
                 inner._saved_result.detach().numpy())
        (g,) = lib.autograd.grad(loss.sum(), inp, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), inp)
        return (*graph, type(g.grad_fn).__name__, g.detach().numpy(), gg.numpy())

    ours, ref = run(rg), run(torch)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-12)
    assert ours[1:5] == ref[1:5]
    np.testing.assert_allclose(ours[5], ref[5], rtol=1e-12)
    assert ours[6] == ref[6]
    np.testing.assert_allclose(ours[7], ref[7], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(ours[8], ref[8], rtol=1e-10, atol=1e-15)


def test_cross_entropy_gradgradcheck_and_third_order() -> None:
    x, t = _ce_inputs(np.float64, n=4, c=3)
    inp = rg.tensor(x, requires_grad=True)
    target = rg.tensor(t)
    assert rg.autograd.gradcheck(lambda v: F.cross_entropy(v, target), (inp,))
    assert rg.autograd.gradgradcheck(lambda v: F.cross_entropy(v, target), (inp,))
    (g,) = rg.autograd.grad(F.cross_entropy(inp, target), inp, create_graph=True)
    (gg,) = rg.autograd.grad((g * g).sum(), inp, create_graph=True)
    (ggg,) = rg.autograd.grad((gg * gg).sum(), inp)
    assert np.isfinite(ggg.numpy()).all()


@pytest.fixture
def target_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of the composition's target check (the fused forward has its own)."""
    calls: list[int] = []
    check = nn_ops._nll_targets

    def spy(*args: Any) -> Any:
        calls.append(1)
        return check(*args)

    monkeypatch.setattr(nn_ops, "_nll_targets", spy)
    return calls


def test_cross_entropy_common_case_runs_the_fused_forward(target_checks: list[int]) -> None:
    x, t = _ce_inputs(np.float32)
    loss = F.cross_entropy(rg.tensor(x, requires_grad=True), rg.tensor(t))
    assert type(loss.grad_fn).__name__ == "NllLossBackward0"
    assert target_checks == []


def test_cross_entropy_backward_does_not_check_the_targets_again(torch: Any, target_checks: list[int]) -> None:
    # The forward checked them; the backward's scatter takes them as they are (and would fail on
    # any outside [0, C), see the fall-back test below).
    x, t = _ce_inputs(np.float32)
    grads = []
    for lib in (rg, torch):
        inp = lib.tensor(x, requires_grad=True)
        lib.nn.functional.cross_entropy(inp, lib.tensor(t)).backward()
        grads.append(inp.grad.numpy())
    assert target_checks == []
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("incoming", [-2.0, np.inf, np.nan])
def test_nll_loss_gradient_is_zero_off_the_targets_for_any_incoming_gradient(
        torch: Any, reduction: str, incoming: float) -> None:
    # PyTorch's kernel fills zeros and scatters -grad: +0.0 off the targets whatever the incoming
    # gradient (a product grad * coefficients gave -0.0, or NaN from inf * 0, there).
    x, t = _ce_inputs(np.float32, n=5, c=4)
    grads = []
    for lib in (rg, torch):
        inp = lib.tensor(x, requires_grad=True)
        lib.nn.functional.nll_loss(inp, lib.tensor(t), reduction=reduction).backward(
            lib.tensor(np.float32(incoming)))
        grads.append(inp.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    numbers = ~np.isnan(grads[1])
    np.testing.assert_array_equal(np.signbit(grads[0][numbers]), np.signbit(grads[1][numbers]))


@pytest.mark.parametrize("case", ["ignored_negative", "ignored_in_range", "weight", "none", "1d", "3d", "float64_grad",
                                  "create_graph"])
def test_nll_loss_gradient_outside_the_plain_case_matches_pytorch(torch: Any, case: str) -> None:
    x, t = _ce_inputs(np.float64, n=6, c=4)
    kwargs: dict[str, Any] = {}
    if case == "ignored_negative":  # the scatter fails on the -100: the general rule takes over
        t[2] = -100
    elif case == "ignored_in_range":
        kwargs["ignore_index"] = int(t[1])
    elif case == "none":
        kwargs["reduction"] = "none"
    elif case == "1d":
        x, t = x[0], t[0]
    elif case == "3d":
        x = np.stack([x, x[::-1]], axis=2)
        t = np.stack([t, t[::-1]], axis=1)

    def run(lib: Any) -> Any:
        inp = lib.tensor(x, requires_grad=True)
        if case == "weight":
            kwargs["weight"] = lib.tensor(np.array([1.0, 2.0, 0.5, 1.5]))
        loss = lib.nn.functional.nll_loss(inp, lib.tensor(t), **kwargs).sum()
        if case == "create_graph":  # an incoming gradient that needs a graph: the product is recorded
            scale = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(loss * scale, inp, create_graph=True)
            (d_scale,) = lib.autograd.grad((g * g).sum(), scale)
            return np.append(g.detach().numpy(), d_scale.item()), g.requires_grad
        if case == "float64_grad":
            loss = lib.nn.functional.nll_loss(inp.float(), lib.tensor(t)).double()
        loss.backward()
        return inp.grad.numpy(), inp.grad.dtype == lib.float64

    ours, ref = run(rg), run(torch)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6, atol=1e-12)
    assert ours[1] == ref[1]


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_ignored_target_among_more_classes_than_its_index_gets_no_gradient(torch: Any, loss: str) -> None:
    # With C > 100 the default ignored index -100 would wrap to class C - 100 in a scatter by
    # unchecked targets: only targets a forward found valid skip the check.
    x, t = _ce_inputs(np.float64, n=5, c=150)
    t[1] = -100

    def run(lib: Any) -> np.ndarray:
        inp = lib.tensor(x, requires_grad=True)
        getattr(lib.nn.functional, loss)(inp, lib.tensor(t)).backward()
        return inp.grad.numpy()

    ours, ref = run(rg), run(torch)
    assert not ours[1].any()
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-15)


def test_backward_of_an_earlier_loss_checks_its_own_targets(torch: Any) -> None:
    # Two losses, then both backwards: the record of checked targets is the second's.
    x, t = _ce_inputs(np.float64)
    t2 = t[::-1].copy()

    def run(lib: Any) -> np.ndarray:
        inp = lib.tensor(x, requires_grad=True)
        first = lib.nn.functional.cross_entropy(inp, lib.tensor(t))
        second = lib.nn.functional.cross_entropy(inp * 2, lib.tensor(t2), reduction="sum")
        first.backward()
        second.backward()
        return inp.grad.numpy()

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_backward_on_arrays_equals_the_op_bit_for_bit(torch: Any, dim: int, dtype: Any) -> None:
    # LogSoftmaxBackward0's rule computes on the arrays when there is no graph to record.
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 7)) * 3).astype(dtype)
    g = rng.standard_normal((5, 7)).astype(dtype)
    result = rg.tensor(nn_ops._log_softmax(x, dim))
    arrays = nn_ops._log_softmax_grad(rg.tensor(g), result, dim)
    via_op = nn_ops.log_softmax_backward(rg.tensor(g), result, dim)
    assert arrays.dtype == via_op.dtype and arrays.grad_fn is None
    np.testing.assert_array_equal(arrays.numpy(), via_op.numpy())
    inp = torch.tensor(x, requires_grad=True)
    torch.log_softmax(inp, dim).backward(torch.tensor(g))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(arrays.numpy(), inp.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_second_backward_on_arrays_equals_the_tensor_formula(dtype: Any) -> None:
    rng = np.random.default_rng(4)
    gg, grad = (rg.tensor(rng.standard_normal((6, 4)).astype(dtype)) for _ in range(2))
    result = rg.tensor(nn_ops._log_softmax((rng.standard_normal((6, 4)) * 3).astype(dtype), 1))
    arrays = nn_ops._log_softmax_backward_result_grad(gg, grad, result, 1)
    formula = -gg * result.exp() * grad.sum(1, keepdim=True)
    assert arrays.dtype == formula.dtype
    np.testing.assert_array_equal(arrays.numpy(), formula.numpy())


def test_cross_entropy_hessian_vector_product_matches_pytorch(torch: Any) -> None:
    x, t = _ce_inputs(np.float64)
    v = np.random.default_rng(5).standard_normal(x.shape)

    def run(lib: Any) -> np.ndarray:
        inp = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.cross_entropy(inp, lib.tensor(t)), inp, create_graph=True)
        (hv,) = lib.autograd.grad((g * lib.tensor(v)).sum(), inp)
        return hv.numpy()

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-10, atol=1e-14)


def test_log_softmax_backward_of_mixed_dtypes_promotes() -> None:
    r = nn_ops._log_softmax(np.arange(6.0, dtype=np.float32).reshape(2, 3), 1)
    g = np.ones((2, 3))
    out = nn_ops._log_softmax_grad(rg.tensor(g), rg.tensor(r), 1)
    assert out.dtype == rg.float64
    # (the op promotes its inputs first: exp of the float64 result)
    np.testing.assert_array_equal(out.numpy(), g - np.exp(r.astype(np.float64)) * g.sum(1, keepdims=True))


@pytest.mark.parametrize("case", ["ignored", "negative", "too_large", "weight", "half", "int32_target", "3d",
                                  "empty", "smoothing"])
def test_cross_entropy_outside_the_common_case_matches_pytorch(torch: Any, case: str) -> None:
    from conftest import outcome

    x, t = _ce_inputs(np.float32, n=6, c=4)
    kwargs: dict[str, Any] = {}
    if case == "ignored":
        t[2] = 1
        kwargs["ignore_index"] = 1
    elif case == "negative":
        t[3] = -1
    elif case == "too_large":
        t[0] = 4
    elif case == "half":
        x = x.astype(np.float16)
    elif case == "int32_target":
        t = t.astype(np.int32)
    elif case == "3d":
        x = np.repeat(x[:, :, None], 2, axis=2)
        t = np.repeat(t[:, None], 2, axis=1)
    elif case == "empty":
        x, t = x[:0], t[:0]
    elif case == "smoothing":
        kwargs["label_smoothing"] = 0.1

    def run(lib: Any) -> Any:
        inp = lib.tensor(x, requires_grad=True)
        if case == "weight":
            kwargs["weight"] = lib.tensor(np.array([1.0, 2.0, 0.5, 1.5], np.float32))
        loss = lib.nn.functional.cross_entropy(inp, lib.tensor(t), **kwargs)
        loss.sum().backward()
        return loss.detach().numpy().tolist(), type(loss.grad_fn).__name__, inp.grad.numpy().tolist()

    ours, ref = outcome(lambda: run(rg)), outcome(lambda: run(torch))
    if ours[0] != "ok" or ref[0] != "ok":
        assert ours == ref
    else:
        a, b = run(rg), run(torch)
        assert a[1] == b[1]
        np.testing.assert_allclose(np.array(a[0], np.float64), np.array(b[0], np.float64), rtol=2e-3, atol=1e-3)
        np.testing.assert_allclose(np.array(a[2], np.float64), np.array(b[2], np.float64), rtol=2e-3, atol=1e-3)


def test_cross_entropy_in_no_grad_and_inference_mode(torch: Any) -> None:
    x, t = _ce_inputs(np.float32)
    inp = rg.tensor(x, requires_grad=True)
    with rg.no_grad():
        loss = F.cross_entropy(inp, rg.tensor(t))
    assert loss.grad_fn is None and not loss.requires_grad
    with rg.inference_mode():
        a = F.cross_entropy(inp, rg.tensor(t))
    with torch.inference_mode():
        b = torch.nn.functional.cross_entropy(torch.tensor(x, requires_grad=True), torch.tensor(t))
    assert (a.is_inference(), a.requires_grad) == (b.is_inference(), b.requires_grad)
    assert a.item() == pytest.approx(b.item(), rel=1e-6)


def test_cross_entropy_saved_tensor_hooks_see_what_the_composition_saves() -> None:
    x, t = _ce_inputs(np.float32)

    def run(loss_of: Any) -> tuple[list[Any], np.ndarray]:
        packed: list[Any] = []

        def pack(v: Any) -> Any:
            packed.append(v.detach().numpy().copy())
            return ("packed", v)

        def unpack(p: Any) -> Any:
            packed.append("unpacked")
            return p[1]

        inp = rg.tensor(x, requires_grad=True)
        with rg.autograd.graph.saved_tensors_hooks(pack, unpack):
            loss = loss_of(inp)
        loss.backward()
        assert inp.grad is not None
        return packed, inp.grad.numpy()

    fused = run(lambda v: F.cross_entropy(v, rg.tensor(t)))
    composed = run(lambda v: F.nll_loss(F.log_softmax(v, 1), rg.tensor(t)))
    assert len(fused[0]) == len(composed[0]) >= 2
    for a, b in zip(fused[0], composed[0]):
        assert type(a) is type(b)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fused[1], composed[1])


def test_log_softmax_nll_refuses_what_the_general_path_must_handle() -> None:
    x = np.zeros((3, 4), np.float32)
    assert nn_ops.log_softmax_nll(x, rg.tensor([0, 4, 1]), "mean") is None  # out of range
    assert nn_ops.log_softmax_nll(x, rg.tensor([0, -1, 1]), "mean") is None  # negative
    assert nn_ops.log_softmax_nll(x[:0], rg.zeros(0, dtype=rg.int64), "mean") is None  # no rows
    logp, loss = nn_ops.log_softmax_nll(x, rg.tensor([0, 3, 1]), "mean")  # type: ignore[misc]
    np.testing.assert_allclose(logp, np.full((3, 4), -np.log(4.0), np.float32))
    assert loss.dtype == np.float32 and loss.shape == () and float(loss) == pytest.approx(np.log(4.0))


def test_cross_entropy_of_infinite_scores_is_quiet_and_matches_pytorch(torch: Any) -> None:
    x = np.array([[np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [np.nan, 0.0, 0.0]], np.float32)
    t = np.array([1, 2, 0])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = F.cross_entropy(rg.tensor(x), rg.tensor(t), reduction="none").numpy()
    ref = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t), reduction="none").numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_allclose(ours[~np.isnan(ours)], ref[~np.isnan(ref)], rtol=1e-6)


# -- x.sum() --------------------------------------------------------------------------------


@pytest.fixture
def general_sums(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    general = reduce_ops._sum

    def spy(*args: Any) -> Any:
        calls.append(1)
        return general(*args)

    monkeypatch.setattr(reduce_ops, "_sum", spy)
    return calls


def test_sum_of_a_float_tensor_is_one_numpy_reduction(general_sums: list[int]) -> None:
    x = rg.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    s = x.sum()
    assert s.item() == 15.0 and type(s.grad_fn).__name__ == "SumBackward0"
    assert general_sums == []


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "bool"])
def test_sum_all_matches_pytorch(torch: Any, dtype: str, general_sums: list[int]) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((7, 5)) * 10).astype(dtype)
    ours, ref = rg.tensor(x).sum(), torch.tensor(x).sum()
    assert str(ours.dtype) == str(ref.dtype) and ours.shape == ref.shape
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-3 if dtype == "float16" else 1e-6)
    typed, ref_typed = rg.tensor(x).sum(dtype=rg.float64), torch.tensor(x).sum(dtype=torch.float64)
    assert str(typed.dtype) == str(ref_typed.dtype)
    np.testing.assert_allclose(typed.numpy(), ref_typed.numpy(), rtol=1e-6)


def test_log_softmax_second_backward_on_arrays_sums_a_long_axis_as_the_tensor_formula() -> None:
    # float32 over a long strided axis: Tensor.sum adds it up in two levels (PyTorch's cascade,
    # ops/reduce._cascade_sum), and the array form must too, to give the formula's bits.
    rng = np.random.default_rng(6)
    shape = (3000, 3)
    gg, grad = (rg.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(2))
    result = rg.tensor(nn_ops._log_softmax((rng.standard_normal(shape) * 3).astype(np.float32), 0))
    arrays = nn_ops._log_softmax_backward_result_grad(gg, grad, result, 0)
    formula = -gg * result.exp() * grad.sum(0, keepdim=True)
    np.testing.assert_array_equal(arrays.numpy(), formula.numpy())
    node = nn_ops.log_softmax_backward(grad.requires_grad_(), result.requires_grad_(), 0).grad_fn
    with rg.no_grad():
        on_arrays = node.apply([gg])
    via_ops = (gg - (gg * result.exp()).sum(0, keepdim=True), formula)
    for a, b in zip(on_arrays, via_ops):
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
