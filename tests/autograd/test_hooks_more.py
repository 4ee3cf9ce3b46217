"""Post-accumulate-grad hooks, and PyTorch's validation of what tensor and node hooks return:
every outcome (value, or exception type and message) is compared with PyTorch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def both(torch: Any, scenario: Callable[[Any], Any]) -> tuple[Any, Any]:
    return scenario(rg), scenario(torch)


# -- register_post_accumulate_grad_hook --------------------------------------------------------

def test_post_accumulate_hook_sees_the_accumulated_grad(torch: Any) -> None:
    def scenario(lib: Any) -> list[Any]:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen: list[Any] = []
        w.register_post_accumulate_grad_hook(lambda t: seen.append((t is w, t.grad.tolist())))
        (w * 3).sum().backward()
        (w * w).sum().backward()  # accumulates: 3 + 2w
        return seen

    ours, theirs = both(torch, scenario)
    assert ours == theirs == [(True, [3.0, 3.0]), (True, [5.0, 7.0])]


def test_post_accumulate_hook_can_update_in_place_like_an_optimizer(torch: Any) -> None:
    def scenario(lib: Any) -> list[float]:
        w = lib.tensor([1.0, 2.0], requires_grad=True)

        def step(t: Any) -> None:
            with lib.no_grad():
                t.sub_(0.5 * t.grad)
            t.grad = None

        w.register_post_accumulate_grad_hook(step)
        (w * w).sum().backward()
        assert w.grad is None
        return w.tolist()  # type: ignore[no-any-return]

    ours, theirs = both(torch, scenario)
    assert ours == theirs == [0.0, 0.0]


def test_post_accumulate_hook_handle_removes_it_and_runs_after_tensor_hooks(torch: Any) -> None:
    def scenario(lib: Any) -> list[Any]:
        w = lib.ones(2, requires_grad=True)
        log: list[Any] = []
        w.register_hook(lambda g: log.append("tensor hook"))
        h = w.register_post_accumulate_grad_hook(lambda t: log.append("post"))
        w.sum().backward()
        h.remove()
        w.sum().backward()
        return log

    ours, theirs = both(torch, scenario)
    assert ours == theirs == ["tensor hook", "post", "tensor hook"]


def test_post_accumulate_hook_does_not_run_under_autograd_grad(torch: Any) -> None:
    def scenario(lib: Any) -> tuple[list[str], Any]:
        w = lib.ones(2, requires_grad=True)
        log: list[str] = []
        w.register_post_accumulate_grad_hook(lambda t: log.append("post"))
        (g,) = lib.autograd.grad((w * 3).sum(), w)
        return log, g.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs == ([], [3.0, 3.0])


POST_ACCUMULATE_ERRORS: dict[str, Callable[[Any], Any]] = {
    "non-leaf": lambda lib: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print),
    "no grad": lambda lib: lib.ones(2).register_post_accumulate_grad_hook(print),
}


@pytest.mark.parametrize("make", POST_ACCUMULATE_ERRORS.values(), ids=POST_ACCUMULATE_ERRORS.keys())
def test_post_accumulate_hook_registration_errors(torch: Any, make: Callable[[Any], Any]) -> None:
    ours, theirs = outcome(lambda: make(rg)), outcome(lambda: make(torch))
    assert ours == theirs
    assert ours[0] == "RuntimeError"


@pytest.mark.parametrize("returned", ["tensor", "int"])
def test_post_accumulate_hook_must_return_none(torch: Any, returned: str) -> None:
    def scenario(lib: Any) -> tuple[tuple[str, str], list[float]]:
        w = lib.ones(2, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda t: t.grad * 2 if returned == "tensor" else 5)
        result = outcome(lambda: (w * 3).sum().backward())
        return result, w.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs
    assert ours[0][0] in ("RuntimeError", "TypeError")


# -- what hooks return -------------------------------------------------------------------------

class Renamed:
    """A callable without ``__name__``: PyTorch calls it '<unknown>' in messages."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


TENSOR_HOOKS: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "returns an int": lambda lib: lambda g: 1,
    "returns a list": lambda lib: lambda g: [g],
    "changes the dtype": lambda lib: lambda g: g.double(),
    "changes the shape": lambda lib: lambda g: g.sum(),
    "changes shape and dtype": lambda lib: lambda g: lib.ones(3, dtype=lib.float64),
    "unnamed, changes the dtype": lambda lib: Renamed(lambda g: g.double()),
    "scales (valid)": lambda lib: lambda g: g * 10,
}


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize("hook", TENSOR_HOOKS.values(), ids=TENSOR_HOOKS.keys())
def test_tensor_hook_results_are_validated(torch: Any, hook: Callable[[Any], Any], leaf: bool) -> None:
    def scenario(lib: Any) -> tuple[tuple[str, str], Any]:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        (x if leaf else y).register_hook(hook(lib))
        result = outcome(lambda: (y * 3).sum().backward())
        return result, None if x.grad is None else x.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs


NODE_PREHOOKS: dict[str, Callable[[Any], Any]] = {
    "returns an int": lambda go: 3,
    "returns a list": lambda go: [go[0]],
    "too many values": lambda go: (go[0], go[0]),
    "changes the shape": lambda go: (go[0].sum(),),
    "changes the dtype": lambda go: (go[0].double(),),
    "drops the gradient": lambda go: (None,),
    "scales (valid)": lambda go: (go[0] * 10,),
}


@pytest.mark.parametrize("hook", NODE_PREHOOKS.values(), ids=NODE_PREHOOKS.keys())
def test_node_prehook_results_are_validated(torch: Any, hook: Callable[[Any], Any]) -> None:
    def scenario(lib: Any) -> tuple[tuple[str, str], Any]:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(hook)
        result = outcome(lambda: y.sum().backward())
        return result, None if x.grad is None else x.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs


NODE_POSTHOOKS: dict[str, Callable[[Any, Any], Any]] = {
    "returns an int": lambda gi, go: 3,
    "wrong count": lambda gi, go: (gi[0],),
    "replaces a None gradient": lambda gi, go: (gi[0], gi[0]),
    "changes the dtype": lambda gi, go: (gi[0].double(), None),
    "drops the gradients": lambda gi, go: (None, None),
    "scales (valid)": lambda gi, go: (gi[0] * 10, None),
}


@pytest.mark.parametrize("hook", NODE_POSTHOOKS.values(), ids=NODE_POSTHOOKS.keys())
def test_node_posthook_results_are_validated(torch: Any, hook: Callable[[Any, Any], Any]) -> None:
    def scenario(lib: Any) -> tuple[tuple[str, str], Any]:
        x = lib.ones(2, requires_grad=True)
        y = x * 2  # MulBackward0 with a (None, 0) edge for the number, as in PyTorch
        y.grad_fn.register_hook(hook)
        result = outcome(lambda: y.sum().backward())
        return result, None if x.grad is None else x.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs


def test_node_prehooks_run_in_registration_order_after_tensor_hooks(torch: Any) -> None:
    def scenario(lib: Any) -> tuple[list[int], Any]:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        order: list[int] = []
        y.grad_fn.register_prehook(lambda go: (order.append(1), (go[0] * 3,))[1])
        y.grad_fn.register_prehook(lambda go: (order.append(2), (go[0] + 1,))[1])
        y.register_hook(lambda g: order.append(0))
        y.sum().backward()
        return order, x.grad.tolist()

    ours, theirs = both(torch, scenario)
    assert ours == theirs == ([0, 1, 2], [8.0, 8.0])  # ((1 * 3) + 1) * 2


def test_tensor_hooks_run_under_autograd_grad(torch: Any) -> None:
    def scenario(lib: Any) -> list[Any]:
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        loss = (y * 3).sum()
        (gx,) = lib.autograd.grad(loss, x, retain_graph=True)
        (gy,) = lib.autograd.grad(loss, y)
        return [gx.tolist(), gy.tolist(), x.grad]

    ours, theirs = both(torch, scenario)
    assert ours == theirs == [[600.0, 600.0], [30.0, 30.0], None]


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_hook_on_a_tensor_without_grad_is_refused(torch: Any, dtype: str) -> None:
    def make(lib: Any) -> Any:
        return lib.tensor(np.array([1, 2], dtype=dtype)).register_hook(lambda g: g)

    assert outcome(lambda: make(rg)) == outcome(lambda: make(torch))
    assert outcome(lambda: make(rg))[0] == "RuntimeError"
