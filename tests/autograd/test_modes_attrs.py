"""Grad-mode decorators (generators, classes), inference tensors' version counter, and the
saved attributes nodes expose (``grad_fn._saved_self``...), each checked against PyTorch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.autograd.graph import FREED_MESSAGE as FREED_TEXT

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


def test_views_made_inside_inference_mode_follow_their_base(torch: Any) -> None:
    def run(lib: Any) -> Any:
        n = lib.ones(2, 3)
        with lib.inference_mode():
            views = [n.view(6), n[0], n.t(), n.unbind(0)[1], n.detach(), n.transpose(0, 1)]
            fresh = [n * 1, n.sum(0), n[[0]]]
            flags = [v.is_inference() for v in views + fresh]
            versions = [outcome(lambda v=v: v._version) for v in views + fresh]
            n.add_(1)
        return flags, versions, n._version, [v._version for v in views]

    assert run(rg) == run(torch)


def test_inference_tensor_version_inside_inference_mode(torch: Any) -> None:
    def run(lib: Any) -> Any:
        with lib.inference_mode():
            t = lib.ones(3)
            t.add_(1)
            return outcome(lambda: t._version), outcome(lambda: t.detach()._version)

    ours = run(rg)
    assert ours[0] == ("RuntimeError", "Inference tensors do not track version counter.")
    assert ours == run(torch)


# -- 3. saved attributes on nodes -------------------------------------------------------------

SAVED_CASES: dict[str, Any] = {
    "mul": lambda lib, a, b, m: a * b,
    "mul_only_self_tracked": lambda lib, a, b, m: a * b.detach(),
    "mul_python_float": lambda lib, a, b, m: a * 2.0,
    "mul_python_int": lambda lib, a, b, m: a * 2,
    "div": lambda lib, a, b, m: a / b,
    "div_python_float": lambda lib, a, b, m: a / 2.0,
    "add": lambda lib, a, b, m: a + b,
    "add_alpha": lambda lib, a, b, m: lib.add(a, b, alpha=2),
    "sub_alpha": lambda lib, a, b, m: lib.sub(a, b, alpha=3),
    "add_python_number": lambda lib, a, b, m: a + 1,
    "pow_scalar": lambda lib, a, b, m: a ** 2,
    "pow_tensor": lambda lib, a, b, m: a.abs() ** b,
    "exp": lambda lib, a, b, m: a.exp(),
    "tanh": lambda lib, a, b, m: a.tanh(),
    "sigmoid": lambda lib, a, b, m: a.sigmoid(),
    "relu": lambda lib, a, b, m: a.relu(),
    "threshold": lambda lib, a, b, m: lib.nn.functional.threshold(a, 0.1, 2.0),
    "leaky_relu": lambda lib, a, b, m: lib.nn.functional.leaky_relu(a, 0.2),
    "gelu": lambda lib, a, b, m: lib.nn.functional.gelu(a, approximate="tanh"),
    "log": lambda lib, a, b, m: a.abs().log(),
    "sin": lambda lib, a, b, m: a.sin(),
    "neg": lambda lib, a, b, m: -a,
    "clamp": lambda lib, a, b, m: a.clamp(-0.5, 0.5),
    "where": lambda lib, a, b, m: lib.where(a > 0, a, b),
    "sum": lambda lib, a, b, m: a.sum(),
    "sum_dim": lambda lib, a, b, m: a.sum(1, keepdim=True),
    "mean": lambda lib, a, b, m: a.mean(),
    "mean_dim": lambda lib, a, b, m: a.mean(0),
    "var": lambda lib, a, b, m: a.var(0),
    "prod": lambda lib, a, b, m: a.prod(),
    "max": lambda lib, a, b, m: a.max(),
    "max_dim": lambda lib, a, b, m: a.max(1)[0],
    "min_dim": lambda lib, a, b, m: a.min(0, keepdim=True)[0],
    "cumsum": lambda lib, a, b, m: a.cumsum(1),
    "mm": lambda lib, a, b, m: a.mm(m),
    "matmul": lambda lib, a, b, m: a @ m,
    "mm_only_mat2_tracked": lambda lib, a, b, m: a.detach().mm(m),
    "view": lambda lib, a, b, m: a.view(12),
    "reshape": lambda lib, a, b, m: a.reshape(2, 6),
    "flatten": lambda lib, a, b, m: a.flatten(),
    "expand": lambda lib, a, b, m: a[:1].expand(3, 4),
    "transpose": lambda lib, a, b, m: a.transpose(0, 1),
    "t": lambda lib, a, b, m: a.t(),
    "permute": lambda lib, a, b, m: a.permute(1, 0),
    "unsqueeze": lambda lib, a, b, m: a.unsqueeze(2),
    "select": lambda lib, a, b, m: a.select(1, 2),
    "index_int": lambda lib, a, b, m: a[1],
    "index_slice": lambda lib, a, b, m: a[0:2],
    "index_slice_step": lambda lib, a, b, m: a[:, 1:4:2],
    "index_tensor": lambda lib, a, b, m: a[lib.tensor([0, 2])],
    "gather": lambda lib, a, b, m: a.gather(1, lib.tensor([[0], [1], [2]])),
    "softmax": lambda lib, a, b, m: a.softmax(1),
    "log_softmax": lambda lib, a, b, m: a.log_softmax(0),
    "cat": lambda lib, a, b, m: lib.cat([a, b], 1),
    "stack": lambda lib, a, b, m: lib.stack([a, b]),
    "split": lambda lib, a, b, m: a.split(2)[1],
    "chunk": lambda lib, a, b, m: a.chunk(2, 1)[0],
    "mse_loss": lambda lib, a, b, m: lib.nn.functional.mse_loss(a, b),
}

# PyTorch attributes retrograd does not expose, and why: only what our node already keeps is
# exposed (no cost at record time), never a value in another form than PyTorch's.
NOT_EXPOSED: dict[str, set[str]] = {
    "mm": {"self_sym_strides", "mat2_sym_strides"},  # NumPy's strides are not PyTorch's
    "matmul": {"self_sym_strides", "mat2_sym_strides"},
    "mm_only_mat2_tracked": {"self_sym_strides", "mat2_sym_strides"},
    "gather": {"self", "sparse_grad"},  # not saved: the rule needs only the shape
    "mse_loss": {"reduction"},  # PyTorch's is an enum number
}


def _plain(lib: Any, value: Any) -> Any:
    """A comparable form of a saved attribute's value."""
    if isinstance(value, lib.Tensor):
        return ("tensor", str(value.dtype), tuple(value.shape), value.detach().double().round(decimals=5).tolist())
    if isinstance(value, (tuple, list)):
        return tuple(_plain(lib, v) for v in value)
    return value


def _saved_attributes(lib: Any, case: str) -> tuple[Any, dict[str, Any], list[Any]]:
    rng = np.random.default_rng(3)
    a = lib.tensor(rng.uniform(-1, 1, (3, 4)).astype(np.float32), requires_grad=True)
    b = lib.tensor(rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32), requires_grad=True)
    m = lib.tensor(rng.uniform(-1, 1, (4, 5)).astype(np.float32), requires_grad=True)
    out = SAVED_CASES[case](lib, a, b, m)
    fn = out.grad_fn
    names = sorted(n[len("_saved_"):] for n in dir(fn) if n.startswith("_saved_"))
    values = {n: getattr(fn, "_saved_" + n) for n in names}
    # Which saved tensors are the very inputs (PyTorch unpacks a saved leaf as itself).
    identities = [[v is x for x in (a, b, m)] for v in values.values()]
    return fn, {n: _plain(lib, v) for n, v in values.items()}, identities


@pytest.mark.parametrize("case", sorted(SAVED_CASES))
def test_saved_attributes_match_torch(torch: Any, case: str) -> None:
    fn, ours, our_ids = _saved_attributes(rg, case)
    tfn, theirs, their_ids = _saved_attributes(torch, case)
    assert type(fn).__name__ == type(tfn).__name__
    missing = NOT_EXPOSED.get(case, set())
    assert missing <= set(theirs)  # (so this list stays honest)
    for name in missing:
        del theirs[name]
    assert ours == theirs
    kept = [i for i, n in enumerate(sorted(set(theirs) | missing)) if n not in missing]
    assert our_ids == [their_ids[i] for i in kept]


@pytest.mark.parametrize("case", ["mul", "mul_only_self_tracked", "tanh", "sum_dim", "max_dim", "mm", "cat"])
def test_saved_attributes_after_backward(torch: Any, case: str) -> None:
    def run(lib: Any) -> dict[str, Any]:
        a = lib.ones(3, 4, requires_grad=True)
        b = lib.full((3, 4), 2.0, requires_grad=True)
        m = lib.ones(4, 5, requires_grad=True)
        out = SAVED_CASES[case](lib, a, b, m)
        fn = out.grad_fn
        out.sum().backward()
        result = {}
        for name in (n for n in dir(fn) if n.startswith("_saved_")):
            error = outcome(lambda name=name: getattr(fn, name))
            result[name] = error if error[0] != "ok" else _plain(lib, getattr(fn, name))
        return result

    ours, theirs = run(rg), run(torch)
    for name in NOT_EXPOSED.get(case, set()):
        del theirs["_saved_" + name]
    assert ours == theirs
    assert any(v == ("RuntimeError", FREED_TEXT) for v in ours.values()) or case in ("sum_dim", "cat")


def test_saved_result_is_connected_to_its_node(torch: Any) -> None:
    for lib in (rg, torch):
        a = lib.ones(3, requires_grad=True)
        y = a.tanh()
        r = y.grad_fn._saved_result
        assert r is not y and r.grad_fn is y.grad_fn and r.requires_grad


def test_saved_input_modified_in_place_raises_like_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        x = a * 1
        y = x * b
        x.add_(1)
        return outcome(lambda: y.grad_fn._saved_self)

    ours = run(rg)
    assert ours[0] == "RuntimeError" and ours[1].startswith(run(torch)[1].split(" Hint:")[0])


def test_saved_attributes_cost_nothing_at_record_time() -> None:
    a = rg.ones(2, requires_grad=True)
    node = (a * a).grad_fn
    assert "_saved_self" not in getattr(node, "__dict__", {})  # a class property, read on access
    assert isinstance(type(node).__dict__["_saved_self"], property)


def test_cpp_node_names(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.ones(3, requires_grad=True)
        x = a.clone()
        x[0] = 5.0
        acc = (a * 2).grad_fn.next_functions[0][0]
        return x.grad_fn.name(), type(x.grad_fn).__name__, acc.name(), type(acc).__name__, (a * 2).grad_fn.name()

    assert run(rg) == run(torch)


# -- 5. functional.jacobian / hessian strategies ---------------------------------------------

def _f_two_outputs(lib: Any) -> Any:
    return lambda x, y: (x * y.sum(), (x ** 2).exp()[:2] + y[0])


def _scalar(lib: Any) -> Any:
    return lambda x, y: (x.sin() * y[:3]).sum() * y.sum()


def _inputs(lib: Any) -> tuple[Any, Any]:
    x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64)
    y = lib.tensor([[0.5, 2.0], [1.5, -1.0]], dtype=lib.float64).reshape(4)
    return x, y


def _values(lib: Any, value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_values(lib, v) for v in value]
    return (tuple(value.shape), str(value.dtype), value.tolist())


def _assert_same_blocks(ours: Any, theirs: Any) -> None:
    for row_ours, row_theirs in zip(ours, theirs, strict=True):
        for (s1, d1, v1), (s2, d2, v2) in zip(row_ours, row_theirs, strict=True):
            assert (s1, d1) == (s2, d2)
            np.testing.assert_allclose(np.array(v1), np.array(v2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode"])
def test_jacobian_strategies_match_torch(torch: Any, strategy: str, vectorize: bool) -> None:
    def run(lib: Any) -> Any:
        result: list[Any] = []
        error = outcome(lambda: result.append(lib.autograd.functional.jacobian(
            _f_two_outputs(lib), _inputs(lib), vectorize=vectorize, strategy=strategy)))
        return error, _values(lib, result[0]) if result else None

    (ours_error, ours), (their_error, theirs) = run(rg), run(torch)
    assert ours_error == their_error
    if strategy == "forward-mode" and not vectorize:  # PyTorch refuses; it must not fall back to reverse mode
        assert ours_error[0] == "NotImplementedError" and ours is None
    else:
        _assert_same_blocks(ours, theirs)


def test_forward_mode_jacobian_single_tensor_and_unused_input(torch: Any) -> None:
    def run(lib: Any) -> Any:
        x, y = _inputs(lib)
        single = lib.autograd.functional.jacobian(lambda t: t.tanh() * 3, x, vectorize=True, strategy="forward-mode")
        unused = lib.autograd.functional.jacobian(lambda a, b: a * 2, (x, y), vectorize=True, strategy="forward-mode")
        return _values(lib, single), _values(lib, unused)

    ours, theirs = run(rg), run(torch)
    assert [s[:2] for s in (ours[0], *ours[1])] == [s[:2] for s in (theirs[0], *theirs[1])]
    np.testing.assert_allclose(ours[0][2], theirs[0][2], rtol=1e-12)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12)


JACOBIAN_ERRORS = {
    "bad_strategy": dict(strategy="sideways"),
    "forward_create_graph": dict(strategy="forward-mode", create_graph=True, vectorize=True),
    "forward_strict": dict(strategy="forward-mode", strict=True, vectorize=True),
    "forward_not_vectorized": dict(strategy="forward-mode"),
    "reverse_strict_vectorized": dict(strict=True, vectorize=True),
}


@pytest.mark.parametrize("case", sorted(JACOBIAN_ERRORS))
def test_jacobian_refusals_match_torch(torch: Any, case: str) -> None:
    def run(lib: Any) -> Any:
        x, _ = _inputs(lib)
        return outcome(lambda: lib.autograd.functional.jacobian(lambda t: t * 2, x, **JACOBIAN_ERRORS[case]))

    ours = run(rg)
    assert ours[0] != "ok"
    assert ours == run(torch)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode", "sideways"])
def test_hessian_outer_strategies_match_torch(torch: Any, strategy: str, vectorize: bool) -> None:
    def run(lib: Any) -> Any:
        result: list[Any] = []
        error = outcome(lambda: result.append(lib.autograd.functional.hessian(
            _scalar(lib), _inputs(lib), vectorize=vectorize, outer_jacobian_strategy=strategy)))
        return error, _values(lib, result[0]) if result else None

    (ours_error, ours), (their_error, theirs) = run(rg), run(torch)
    assert ours_error == their_error
    if theirs is None:
        assert ours is None
    else:
        _assert_same_blocks(ours, theirs)


@pytest.mark.parametrize("fn", ["tuple", "two_elements", "one_element_1d"])
def test_hessian_needs_one_element(torch: Any, fn: str) -> None:
    funcs = {
        "tuple": lambda x: (x.sum(), x.sum()),
        "two_elements": lambda x: x[:2] * 2,
        "one_element_1d": lambda x: (x ** 3).sum().reshape(1),
    }

    def run(lib: Any) -> Any:
        result: list[Any] = []
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        error = outcome(lambda: result.append(lib.autograd.functional.hessian(funcs[fn], x)))
        return error, result[0].tolist() if result else None

    assert run(rg) == run(torch)


STRICT_CASES = {
    "jacobian_ok": lambda lib, f: f.jacobian(lambda x, y: x * y[:3], _inputs(lib), strict=True),
    "jacobian_constant_output": lambda lib, f: f.jacobian(lambda x, y: lib.ones(2), _inputs(lib), strict=True),
    "jacobian_unused_input": lambda lib, f: f.jacobian(lambda x, y: x * 2, _inputs(lib), strict=True),
    "jacobian_linear_create_graph": lambda lib, f: f.jacobian(
        lambda x, y: x * 2 + y[:3], tuple(t.requires_grad_() for t in _inputs(lib)), strict=True, create_graph=True),
    "hessian_ok": lambda lib, f: f.hessian(_scalar(lib), _inputs(lib), strict=True),
    "hessian_linear": lambda lib, f: f.hessian(lambda x, y: (x * 2).sum() + y.sum(), _inputs(lib), strict=True),
    "hessian_constant": lambda lib, f: f.hessian(lambda x, y: lib.ones(()), _inputs(lib), strict=True),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_strict_mode_matches_torch(torch: Any, case: str) -> None:
    def run(lib: Any) -> Any:
        result: list[Any] = []
        error = outcome(lambda: result.append(STRICT_CASES[case](lib, lib.autograd.functional)))
        return error, _values(lib, result[0]) if result else None

    (ours_error, ours), (their_error, theirs) = run(rg), run(torch)
    assert ours_error == their_error
    if theirs is not None:
        _assert_same_blocks(ours if isinstance(ours[0], list) else [ours], theirs if isinstance(theirs[0], list) else [theirs])
