"""Grad-mode decorators (generators, classes), inference tensors' version counter, and the
saved attributes nodes expose (``grad_fn._saved_self``...), each checked against PyTorch."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome

# -- 1. grad-mode decorators ----------------------------------------------------------------

MODES = {
    "no_grad": lambda lib: lib.no_grad(),
    "enable_grad": lambda lib: lib.enable_grad(),
    "set_grad_enabled_false": lambda lib: lib.set_grad_enabled(False),
    "set_grad_enabled_true": lambda lib: lib.set_grad_enabled(True),
    "inference_mode": lambda lib: lib.inference_mode(),
    "inference_mode_false": lambda lib: lib.inference_mode(False),
    "bare_no_grad": lambda lib: lib.no_grad,
    "bare_enable_grad": lambda lib: lib.enable_grad,
    "bare_inference_mode": lambda lib: lib.inference_mode,
}


def _generator_trace(lib: Any, make: Any, outer_grad: bool) -> list[Any]:
    """Every observation of the modes inside and between the steps of a decorated generator."""
    trace: list[Any] = []

    def modes() -> tuple[bool, bool]:
        return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

    with lib.set_grad_enabled(not outer_grad):  # the mode when decorating must not matter
        decorator = make(lib)

        @decorator
        def gen(n: int) -> Any:
            got = yield ("first", modes())
            try:
                yield ("sent", got, modes())
            except ValueError:
                yield ("thrown", modes())
            try:
                yield ("last", modes())
            finally:
                trace.append(("finally", modes()))
            return n

    with lib.set_grad_enabled(outer_grad):
        g = gen(7)
        trace.append(("created", modes()))
        trace.append(next(g))
        trace.append(("between", modes()))
        trace.append(g.send("x"))
        trace.append(g.throw(ValueError("boom")))
        trace.append(("between", modes()))
        trace.append(next(g))
        g.close()
        trace.append(("closed", modes()))
        g2 = gen(11)
        next(g2)
        next(g2)
        next(g2)
        with pytest.raises(StopIteration) as stop:
            next(g2)
        trace.append(("returned", stop.value.value, modes()))
    trace.append(("after", modes()))
    return trace


@pytest.mark.parametrize("outer_grad", [True, False])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_mode_decorates_generator_per_step(torch: Any, mode: str, outer_grad: bool) -> None:
    assert _generator_trace(rg, MODES[mode], outer_grad) == _generator_trace(torch, MODES[mode], outer_grad)


def test_decorated_generator_keeps_its_name_and_is_a_generator() -> None:
    @rg.no_grad()
    def numbers() -> Any:
        yield 1

    import inspect

    assert numbers.__name__ == "numbers"
    assert inspect.isgeneratorfunction(numbers)
    assert list(numbers()) == [1]


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "set_grad_enabled_false", "inference_mode",
                                  "bare_no_grad", "bare_inference_mode"])
def test_mode_as_class_decorator_warns_like_torch(torch: Any, mode: str) -> None:
    def run(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.set_grad_enabled(True):
                decorator = MODES[mode](lib)

            @decorator
            class Box:
                def __init__(self, v: int) -> None:
                    self.v = v
                    self.grad = lib.is_grad_enabled()

            box = Box(3)
        return [(w.category, str(w.message)) for w in caught], box.v, box.grad, lib.is_grad_enabled()

    ours, theirs = run(rg), run(torch)
    assert ours == theirs
    assert ours[0] and ours[0][0][0] is FutureWarning


@pytest.mark.parametrize("value", [1, None, 0.5, "bare"])
def test_set_grad_enabled_refuses_non_bool(torch: Any, value: Any) -> None:
    def call(lib: Any) -> Any:
        def go() -> None:
            if value == "bare":
                lib.set_grad_enabled(lambda: None)
            else:
                lib.set_grad_enabled(value)

        result = outcome(go)
        lib.set_grad_enabled(True)
        return result

    ours = call(rg)
    assert ours[0] == "TypeError"
    assert ours == call(torch)
    assert rg.is_grad_enabled()


# -- 2. inference tensors ---------------------------------------------------------------------

INFERENCE_CASES = {
    "version": lambda lib, t, n: t._version,
    "version_of_view_made_inside": lambda lib, t, n: t[:2]._version,
    "version_of_data": lambda lib, t, n: t.data._version,
    "version_of_detach": lambda lib, t, n: t.detach()._version,
    "version_of_detach_detach": lambda lib, t, n: t.detach().detach()._version,
    "version_of_normal_tensor": lambda lib, t, n: n._version,
    "view_is_inference": lambda lib, t, n: [t.view(3).is_inference(), t[0].is_inference(), t.unbind(0)[0].is_inference(),
                                            (t + 1).is_inference(), t[[0]].is_inference(), t.data.is_inference()],
    "view_version": lambda lib, t, n: t.view(3)._version,
    "view_inplace_outside": lambda lib, t, n: t[1:].mul_(2),
    "view_saved_for_backward": lambda lib, t, n: (lib.ones(2, requires_grad=True) * t[1:]).sum().backward(),
    "inplace_outside": lambda lib, t, n: t.add_(1),
    "requires_grad_outside": lambda lib, t, n: t.requires_grad_(),
    "saved_for_backward": lambda lib, t, n: (lib.ones(3, requires_grad=True) * t).sum().backward(),
    "not_saved_is_fine": lambda lib, t, n: (lib.ones(3, requires_grad=True) + t).sum().backward(),
}


@pytest.mark.parametrize("case", sorted(INFERENCE_CASES))
def test_inference_tensor_errors(torch: Any, case: str) -> None:
    def run(lib: Any) -> Any:
        with lib.inference_mode():
            t = lib.ones(3)
        n = lib.ones(3)
        observed: list[Any] = []

        def call() -> None:
            value = INFERENCE_CASES[case](lib, t, n)
            if isinstance(value, (int, list)):  # a version or flags (not a tensor)
                observed.append(value)

        return outcome(call) + tuple(observed), t.tolist()

    ours, theirs = run(rg), run(torch)
    assert ours[0] == theirs[0]
    # PyTorch writes before refusing an in-place update; a failure here leaves the tensor as it was.
    assert ours[1] == ([1.0] * 3 if ours[0][0] != "ok" else theirs[1])


def test_inference_tensor_version_inside_inference_mode(torch: Any) -> None:
    def run(lib: Any) -> Any:
        with lib.inference_mode():
            t = lib.ones(3)
            t.add_(1)
            return outcome(lambda: t._version), outcome(lambda: t.detach()._version)

    ours = run(rg)
    assert ours[0] == ("RuntimeError", "Inference tensors do not track version counter.")
    assert ours == run(torch)
