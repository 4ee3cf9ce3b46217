"""``autograd.graph.saved_tensors_hooks``, ``save_on_cpu`` and ``disable_saved_tensors_hooks``:
what the hooks see and when, compared with PyTorch; every op of the op database still gets
its gradients (and second derivatives) through hooks that replace each saved tensor by a copy."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from opdb import OpInfo, Sample, all_ops, to_lib
from retrograd.autograd import graph_hooks
from retrograd.ops import op as op_module


def hooks(lib: Any) -> Any:
    return lib.autograd.graph


def logging_hooks(lib: Any, log: list[Any]) -> Any:
    """Hooks that record what they see: the shape, requires_grad and grad_fn name of each
    packed tensor, and whether grad mode was on while packing."""
    def pack(t: Any) -> Any:
        fn = t.grad_fn
        log.append(("pack", tuple(t.shape), t.requires_grad, None if fn is None else fn.name(),
                    lib.is_grad_enabled()))
        return t

    def unpack(t: Any) -> Any:
        log.append(("unpack", tuple(t.shape)))
        return t

    return hooks(lib).saved_tensors_hooks(pack, unpack)


def test_pack_sees_saved_inputs_and_outputs_and_unpack_runs_at_backward(torch: Any) -> None:
    def scenario(lib: Any) -> tuple[list[Any], list[Any], list[float]]:
        a = lib.tensor([0.5, 1.0], requires_grad=True)
        log: list[Any] = []
        with logging_hooks(lib, log):
            b = a.exp()  # saves its output
            c = (b * a).sum()  # saves both inputs
        at_forward = list(log)
        log.clear()
        c.backward()
        return at_forward, log, a.grad.tolist()

    ours, theirs = scenario(rg), scenario(torch)
    assert sorted(ours[0], key=repr) == sorted(theirs[0], key=repr)  # (the order of a node's saves may differ)
    assert len(ours[0]) == 3 and all(not grad_mode for *_, grad_mode in ours[0])
    assert sorted(ours[1]) == sorted(theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2])


def test_only_the_innermost_hooks_apply_and_no_grad_packs_nothing(torch: Any) -> None:
    def scenario(lib: Any) -> list[str]:
        a = lib.ones(2, requires_grad=True)
        log: list[str] = []
        graph = hooks(lib)
        with graph.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
            with graph.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t):
                a * a
            a.exp()
            with lib.no_grad():
                a * a
            lib.ones(2) * lib.ones(2)  # nothing requires grad: nothing saved
        a * a  # hooks gone
        return log

    assert scenario(rg) == scenario(torch) == ["inner", "inner", "outer"]


def test_unpack_runs_on_every_backward_through_a_retained_graph(torch: Any) -> None:
    def scenario(lib: Any) -> tuple[int, tuple[str, str]]:
        a = lib.ones(2, requires_grad=True)
        count = [0]
        with hooks(lib).saved_tensors_hooks(lambda t: t, lambda t: count.__setitem__(0, count[0] + 1) or t):
            b = (a * a).sum()
        b.backward(retain_graph=True)
        b.backward()
        return count[0], outcome(lambda: b.backward())

    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    assert ours[0] == 4 and ours[1][0] == "RuntimeError"


def test_hooks_are_thread_local(torch: Any) -> None:
    def scenario(lib: Any) -> list[str]:
        a = lib.ones(2, requires_grad=True)
        log: list[str] = []
        with hooks(lib).saved_tensors_hooks(lambda t: log.append("main") or t, lambda t: t):
            worker = threading.Thread(target=lambda: a * a)
            worker.start()
            worker.join()
        return log

    assert scenario(rg) == scenario(torch) == []


def test_packed_values_replace_the_saved_tensors(torch: Any) -> None:
    """Pack to a NumPy copy and unpack from it: the node keeps no tensor at all."""
    def scenario(lib: Any) -> tuple[list[float], int]:
        a = lib.tensor([0.5, 1.5, -1.0], requires_grad=True)
        store: list[Any] = []

        def pack(t: Any) -> int:
            store.append(t.detach().numpy().copy())
            return len(store) - 1

        with hooks(lib).saved_tensors_hooks(pack, lambda i: lib.tensor(store[i])):
            y = (a.tanh() * a.sigmoid()).sum()
        y.backward()
        return a.grad.tolist(), len(store)

    ours, theirs = scenario(rg), scenario(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == theirs[1]


def test_double_backward_through_hooks_matches_pytorch(torch: Any) -> None:
    def scenario(lib: Any) -> tuple[list[float], list[float]]:
        a = lib.tensor([0.5, 2.0], requires_grad=True)
        with hooks(lib).saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (a * a * a.exp()).sum()
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        g.sum().backward()
        return g.tolist(), a.grad.tolist()

    ours, theirs = scenario(rg), scenario(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu_keeps_cpu_tensors_unless_pinning(torch: Any, pin_memory: bool) -> None:
    """PyTorch keeps a CPU tensor as itself (``.cpu()``) and copies only to pin memory; under
    hooks there is no version check, so an in-place write shows through only without the copy."""
    def scenario(lib: Any) -> list[float]:
        a = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
        with hooks(lib).save_on_cpu(pin_memory=pin_memory):
            y = (a @ a).tanh().sum()
        with lib.no_grad():
            a.mul_(3.0)
        y.backward()
        return a.grad.flatten().tolist()  # type: ignore[no-any-return]

    np.testing.assert_allclose(scenario(rg), scenario(torch), rtol=1e-12)

    x = rg.ones(2, requires_grad=True)
    with rg.autograd.graph.save_on_cpu(pin_memory=pin_memory):
        saved = (x * x).grad_fn._saved[0]
    assert isinstance(saved, graph_hooks.PackedSaved)
    assert (saved.packed[1]._data is x._data) is not pin_memory


ERRORS: dict[str, Callable[[Any], Any]] = {
    "unpack returns an int": lambda lib: _unpack_returns(lib, 3),
    "pack writes in place": lambda lib: _pack_writes(lib),
    "install while disabled": lambda lib: _install_while_disabled(lib, "saved_tensors_hooks"),
    "save_on_cpu while disabled": lambda lib: _install_while_disabled(lib, "save_on_cpu"),
    "save while disabled under hooks": lambda lib: _save_while_disabled(lib, True),
    "save while disabled, no hooks (fine)": lambda lib: _save_while_disabled(lib, False),
}


def _unpack_returns(lib: Any, value: Any) -> None:
    a = lib.ones(2, requires_grad=True)
    with hooks(lib).saved_tensors_hooks(lambda t: t, lambda t: value):
        b = (a * a).sum()
    b.backward()


def _pack_writes(lib: Any) -> None:
    y = lib.ones(2, requires_grad=True) * 1
    with hooks(lib).saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
        y * y


def _install_while_disabled(lib: Any, kind: str) -> None:
    graph = hooks(lib)
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with graph.save_on_cpu() if kind == "save_on_cpu" else graph.saved_tensors_hooks(id, id):
            pass


def _save_while_disabled(lib: Any, installed: bool) -> None:
    graph = hooks(lib)
    a = lib.ones(2, requires_grad=True)
    if installed:
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t), graph.disable_saved_tensors_hooks("no saving"):
            a * a
    else:
        with graph.disable_saved_tensors_hooks("no saving"):
            a * a


@pytest.mark.parametrize("scenario", ERRORS.values(), ids=ERRORS.keys())
def test_errors_match_pytorch(torch: Any, scenario: Callable[[Any], Any]) -> None:
    ours = outcome(lambda: scenario(rg))
    assert ours == outcome(lambda: scenario(torch))
    assert graph_hooks._LOCAL.stack == [] and graph_hooks._LOCAL.disabled is None  # nothing left behind


def test_disable_restores_the_previous_state_and_works_as_a_decorator() -> None:
    graph = rg.autograd.graph

    @graph.disable_saved_tensors_hooks("inner")
    def install() -> None:
        with graph.saved_tensors_hooks(id, id):
            pass

    with graph.disable_saved_tensors_hooks("outer"):
        assert outcome(install) == ("RuntimeError", "inner")
        assert outcome(lambda: install.__wrapped__()) == ("RuntimeError", "outer")  # type: ignore[attr-defined]
    install.__wrapped__()  # type: ignore[attr-defined]


def test_the_plain_save_helpers_are_back_once_no_thread_has_hooks() -> None:
    """Zero cost when unused: the recording paths call the plain helpers again."""
    plain = (rg.autograd.graph.save_input, rg.autograd.graph.save_output, rg.autograd.graph.SavedTensor)
    assert (op_module._save, op_module._save_output, op_module._save_any_output) == plain
    graph = rg.autograd.graph
    with graph.saved_tensors_hooks(id, id):
        assert op_module._save is graph_hooks.hooked_save_input
        with graph.saved_tensors_hooks(id, id):
            pass
        assert op_module._save is graph_hooks.hooked_save_input
    assert (op_module._save, op_module._save_output, op_module._save_any_output) == plain


def test_an_identity_pack_of_an_output_makes_no_reference_cycle() -> None:
    import gc
    import weakref

    x = rg.ones(3, requires_grad=True)
    with rg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()
    node = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert node() is None  # freed by reference counting alone
    finally:
        gc.enable()


# -- every op of the op database through copying hooks --------------------------------------------

OPS = [op for op in all_ops() if op.gradcheck]


def _samples(op: OpInfo) -> list[Sample]:
    return op.samples(np.random.default_rng(zlib.crc32(op.name.encode())))


def _copying_hooks() -> Any:
    return rg.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t)


def _outputs(value: Any) -> list[Any]:
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    return [v for v in values if isinstance(v, rg.Tensor) and v.requires_grad]


def _grads(op: OpInfo, sample: Sample, hooked: bool) -> list[Any]:
    args, kwargs, leaves = to_lib(rg, sample)
    if hooked:
        with _copying_hooks():
            outs = _outputs(op.fn(rg, *args, **kwargs))
    else:
        outs = _outputs(op.fn(rg, *args, **kwargs))
    if not outs:
        return []
    rng = np.random.default_rng(0)
    seeds = [rg.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    grads = rg.autograd.grad(outs, leaves, seeds, allow_unused=True)
    return [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize(
    ("op", "sample"),
    [pytest.param(op, s, id=f"{op.name}-{s.name or i}") for op in OPS for i, s in enumerate(_samples(op))],
)
def test_every_op_gives_the_same_gradients_through_hooks(op: OpInfo, sample: Sample) -> None:
    args, _, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    plain, hooked = _grads(op, sample, False), _grads(op, sample, True)
    assert len(plain) == len(hooked)
    for p, h in zip(plain, hooked):
        assert (p is None) == (h is None)
        if p is not None:
            np.testing.assert_allclose(p, h, rtol=1e-12, atol=1e-15)  # (a copy may be contiguous)


@pytest.mark.parametrize("op", [op for op in OPS if op.gradgradcheck], ids=lambda op: op.name)
def test_every_op_has_second_derivatives_through_hooks(op: OpInfo) -> None:
    sample = _samples(op)[0]
    args, kwargs, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")

    def fn(*_: Any) -> Any:
        with _copying_hooks():
            return op.fn(rg, *args, **kwargs)

    assert rg.autograd.gradgradcheck(fn, leaves, atol=op.atol, rtol=op.rtol)
