"""Module backward hooks (full hooks, pre-hooks, legacy hooks, global hooks): what they see,
what they may replace and the errors, each compared with PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

W = np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])


def linear(lib: Any) -> Any:
    m = lib.nn.Linear(2, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.zero_()
    return m


def as_lists(grads: Any) -> list[Any]:
    return [None if g is None else g.tolist() for g in grads]


def both(torch: Any, scenario: Callable[[Any], Any]) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scenario(rg), scenario(torch)


def test_full_hook_and_pre_hook_see_the_gradients(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        log: list[Any] = []
        m = linear(lib)
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", mod is m, as_lists(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", as_lists(gi), as_lists(go))))
        x = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        y = m(x)
        (y * lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64)).sum().backward()
        return log, type(y.grad_fn).__name__, x.grad.tolist(), m.weight.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs
    assert ours[0][1] == ("full", [[[7.5, 2.5]]], [[[1.0, 2.0, 3.0]]])  # W^T g


def test_hooks_may_replace_grad_input_and_grad_output(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        m = linear(lib)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        x = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        m(x).sum().backward()
        return x.grad.tolist(), m.weight.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs == ([[70.0, 5.0]], [[2.0, 4.0]] * 3)


def test_no_input_requiring_grad_runs_the_hook_from_the_outputs_with_a_warning(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        m = linear(lib)
        seen: list[Any] = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, as_lists(go))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(lib.ones(1, 2, dtype=lib.float64)).sum().backward()
        return seen, [str(w.message) for w in caught]

    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    assert ours[0] == [((None,), [[[1.0, 1.0, 1.0]]])] and len(ours[1]) == 1


class Two:
    """A module of two tensors and a number, returning two tensors (made per library)."""

    @staticmethod
    def make(lib: Any) -> Any:
        class TwoModule(lib.nn.Module):
            def forward(self, a: Any, b: Any, k: int) -> Any:
                return a * b * k, a + 1

        return TwoModule()


def test_several_inputs_and_outputs_tensors_without_grad_and_numbers(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        t = Two.make(lib)
        seen: list[Any] = []
        t.register_full_backward_hook(lambda mod, gi, go: seen.append((as_lists(gi), as_lists(go))))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        p, q = t(a, lib.tensor([3.0, 4.0]), 5)
        p.sum().backward()
        return seen, a.grad.tolist(), q.requires_grad

    ours, theirs = both(torch, scenario)
    assert ours == theirs
    # b does not require grad: zeros (PyTorch's identity Function materializes it); 5: None
    assert ours[0] == [([[15.0, 20.0], [0.0, 0.0], None], [[1.0, 1.0], None])]


ERRORS: dict[str, Callable[[Any], Any]] = {
    "hook returns grads though no input requires grad": lambda lib: _run(
        lib, lambda m: m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(1, 2),)), False),
    "hook returns too many grad_input": lambda lib: _run(
        lib, lambda m: m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0])), True),
    "pre-hook returns too many grad_output": lambda lib: _run(
        lib, lambda m: m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0])), True),
    "hook changes the shape": lambda lib: _run(
        lib, lambda m: m.register_full_backward_hook(lambda mod, gi, go: (gi[0].sum(),)), True),
    "legacy then full": lambda lib: _mix(lib, "register_backward_hook", "register_full_backward_hook"),
    "full then legacy": lambda lib: _mix(lib, "register_full_backward_hook", "register_backward_hook"),
    "pre-hook then legacy (fine)": lambda lib: _mix(lib, "register_full_backward_pre_hook", "register_backward_hook"),
}


def _run(lib: Any, register: Callable[[Any], Any], input_requires_grad: bool) -> None:
    m = linear(lib)
    register(m)
    m(lib.ones(1, 2, dtype=lib.float64, requires_grad=input_requires_grad)).sum().backward()


def _mix(lib: Any, first: str, second: str) -> None:
    m = linear(lib)
    getattr(m, first)(lambda *args: None)
    getattr(m, second)(lambda *args: None)


@pytest.mark.parametrize("scenario", ERRORS.values(), ids=ERRORS.keys())
def test_errors_match_pytorch(torch: Any, scenario: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert outcome(lambda: scenario(rg)) == outcome(lambda: scenario(torch))


def test_global_hooks_and_their_mixing_error(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        order: list[str] = []
        module = lib.nn.modules.module
        h = module.register_module_full_backward_hook(lambda mod, gi, go: order.append(type(mod).__name__))
        p = module.register_module_full_backward_pre_hook(lambda mod, go: order.append("pre " + type(mod).__name__))
        try:
            seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
            seq(lib.ones(1, 2, requires_grad=True)).sum().backward()
            mixing = outcome(lambda: module.register_module_backward_hook(lambda *a: None))
        finally:
            h.remove()
            p.remove()
        return order, mixing

    ours, theirs = both(torch, scenario)
    assert ours == theirs
    assert ours[0] == ["pre Sequential", "pre Tanh", "Tanh", "pre Linear", "Linear", "Sequential"]
    rg.nn.modules.module._global_is_full_backward_hook = None  # (PyTorch never resets it either)


def test_prepend_order_and_removal(torch: Any) -> None:
    def scenario(lib: Any) -> list[int]:
        m = linear(lib)
        order: list[int] = []
        h1 = m.register_full_backward_hook(lambda *a: order.append(1))
        m.register_full_backward_hook(lambda *a: order.append(2), prepend=True)
        m.register_full_backward_pre_hook(lambda *a: order.append(3))
        m.register_full_backward_pre_hook(lambda *a: order.append(4), prepend=True)
        m(lib.ones(1, 2, dtype=lib.float64, requires_grad=True)).sum().backward()
        h1.remove()
        m(lib.ones(1, 2, dtype=lib.float64, requires_grad=True)).sum().backward()
        return order

    ours, theirs = both(torch, scenario)
    assert ours == theirs == [4, 3, 2, 1, 4, 3, 2]


def test_legacy_backward_hook_runs_on_the_last_node_and_warns(torch: Any) -> None:
    def scenario(lib: Any) -> Any:
        m = linear(lib)
        seen: list[Any] = []
        m.register_backward_hook(lambda mod, gi, go: seen.append((len(gi), as_lists(go))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m(lib.ones(1, 2, dtype=lib.float64, requires_grad=True))
        out.sum().backward()
        return seen, [(w.category.__name__, str(w.message)) for w in caught]

    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    assert ours[1][0][0] == "FutureWarning"


def test_hooked_module_keeps_gradients_and_second_derivatives() -> None:
    """The identity nodes change nothing: gradcheck and gradgradcheck through a hooked MLP."""
    rg.manual_seed(0)
    mlp = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Tanh(), rg.nn.Linear(4, 2)).double()
    calls: list[int] = []
    for sub in mlp:
        sub.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
        sub.register_full_backward_pre_hook(lambda mod, go: None)
    x = rg.randn(2, 3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: mlp(t), (x,))
    assert rg.autograd.gradgradcheck(lambda t: mlp(t), (x,))
    assert calls


def test_module_without_backward_hooks_records_no_identity_node() -> None:
    m = rg.nn.Linear(2, 2)
    y = m(rg.ones(1, 2, requires_grad=True))
    assert type(y.grad_fn).__name__ != "BackwardHookFunctionBackward"
    with rg.no_grad():
        m.register_full_backward_hook(lambda *a: None)
        assert m(rg.ones(1, 2, requires_grad=True)).grad_fn is None
