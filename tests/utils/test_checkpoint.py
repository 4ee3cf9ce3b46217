"""``utils.checkpoint``: recomputation happens once per backward, gradients equal the
un-checkpointed ones and PyTorch's, the RNG state is replayed, and the errors and warnings are
PyTorch's."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
WN = RNG.standard_normal((4, 4))


def cp(lib: Any) -> Any:
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def block(calls: list[int]) -> Callable[[Any, Any], Any]:
    def fn(x: Any, w: Any) -> Any:
        calls.append(1)
        return (x @ w).tanh().exp() * x.sigmoid().sum()

    return fn


@pytest.mark.parametrize("reentrant", [False, True])
def test_recomputes_once_and_gives_the_plain_and_pytorch_gradients(torch: Any, reentrant: bool) -> None:
    def scenario(lib: Any, checkpointed: bool) -> tuple[list[int], Any, Any]:
        calls: list[int] = []
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(WN, requires_grad=True)
        fn = block(calls)
        y = cp(lib).checkpoint(fn, x, w, use_reentrant=reentrant) if checkpointed else fn(x, w)
        after_forward = len(calls)
        y.sum().backward()
        return [after_forward, len(calls)], x.grad.numpy(), w.grad.numpy()

    ours, plain, theirs = scenario(rg, True), scenario(rg, False), scenario(torch, True)
    assert ours[0] == theirs[0] == [1, 2]
    assert plain[0] == [1, 1]
    for k in (1, 2):
        np.testing.assert_allclose(ours[k], plain[k], rtol=1e-12)
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10)


def test_forward_under_checkpoint_keeps_no_saved_tensor() -> None:
    x = rg.tensor(X, requires_grad=True)
    y = checkpoint(lambda t: t.exp().tanh(), x, use_reentrant=False)
    node = y.grad_fn
    saved = [s for s in node._saved if s is not None]
    assert saved and all(type(s.packed).__name__ == "_Holder" for s in saved)


def test_gradcheck_and_gradgradcheck_through_a_checkpoint() -> None:
    x = rg.tensor(X, requires_grad=True)
    w = rg.tensor(WN, requires_grad=True)
    fn = block([])
    assert rg.autograd.gradcheck(lambda a, b: checkpoint(fn, a, b, use_reentrant=False), (x, w))
    assert rg.autograd.gradgradcheck(lambda a, b: checkpoint(fn, a, b, use_reentrant=False), (x, w))


def test_dropout_inside_draws_the_same_mask_when_recomputed() -> None:
    def drop(x: Any) -> Any:
        return rg.nn.functional.dropout(x, 0.5, True) * x  # y = 2 m x^2, dy/dx = 4 m x = 2 y at x = 1

    rg.manual_seed(0)
    x = rg.ones(50, dtype=rg.float64, requires_grad=True)
    y = checkpoint(drop, x, use_reentrant=False)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * y.detach().numpy())

    x = rg.ones(50, dtype=rg.float64, requires_grad=True)
    y = checkpoint(drop, x, use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    assert not np.array_equal(x.grad.numpy(), 2 * y.detach().numpy())  # a fresh mask (2^-50 chance)


def test_the_surrounding_rng_stream_is_untouched_by_recomputation() -> None:
    rg.manual_seed(1)
    x = rg.ones(8, requires_grad=True)
    y = checkpoint(lambda t: rg.nn.functional.dropout(t, 0.5, True), x, use_reentrant=False)
    expected = rg.rand(3)
    rg.manual_seed(1)
    y2 = checkpoint(lambda t: rg.nn.functional.dropout(t, 0.5, True), rg.ones(8, requires_grad=True),
                    use_reentrant=False)
    y2.sum().backward()  # recomputation draws again, then puts the stream back
    assert rg.equal(rg.rand(3), expected)
    assert rg.equal(y, y2)


def test_autograd_grad_keyword_arguments_and_retained_graph(torch: Any) -> None:
    def scenario(lib: Any) -> list[Any]:
        calls: list[int] = []
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(WN, requires_grad=True)
        (gw,) = lib.autograd.grad(cp(lib).checkpoint(block(calls), x, w, use_reentrant=False).sum(), w)
        scaled = cp(lib).checkpoint(lambda a, scale: a * scale, x, use_reentrant=False, scale=2.0)
        y = cp(lib).checkpoint(block(calls), x, w, use_reentrant=False).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        return [gw.numpy(), scaled.detach().numpy(), len(calls), (x.grad - 2 * first).abs().max().item() < 1e-12]

    ours, theirs = scenario(rg), scenario(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], theirs[1])
    assert ours[2:] == theirs[2:] == [5, True]  # grad: 2 calls; retained graph: 1 + 1 per backward


def test_recomputation_stops_after_the_last_saved_tensor(torch: Any) -> None:
    def scenario(lib: Any) -> list[str]:
        log: list[str] = []

        def fn(x: Any) -> Any:
            log.append("start")
            y = x.exp()
            log.append("end")
            return y

        cp(lib).checkpoint(fn, lib.ones(2, requires_grad=True), use_reentrant=False).sum().backward()
        return log

    assert scenario(rg) == scenario(torch) == ["start", "end", "start"]


def test_checkpoint_sequential_matches_the_plain_model(torch: Any) -> None:
    def scenario(lib: Any, checkpointed: bool) -> list[Any]:
        model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4), lib.nn.Tanh(),
                                  lib.nn.Linear(4, 2)).double()
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))))
        x = lib.tensor(X, requires_grad=True)
        out = cp(lib).checkpoint_sequential(model, 2, x, use_reentrant=False) if checkpointed else model(x)
        out.sum().backward()
        return [out.detach().numpy(), x.grad.numpy(), *[p.grad.numpy() for p in model.parameters()]]

    ours, plain, theirs = scenario(rg, True), scenario(rg, False), scenario(torch, True)
    for a, b, c in zip(ours, plain, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-10)


def _fewer_when_recomputed(lib: Any) -> None:
    state = [0]

    def fn(x: Any) -> Any:
        state[0] += 1
        return x.exp() if state[0] > 1 else x.exp().exp()

    cp(lib).checkpoint(fn, lib.ones(4, requires_grad=True), use_reentrant=False).sum().backward()


def _other_shape_when_recomputed(lib: Any) -> None:
    state = [0]

    def fn(x: Any) -> Any:
        state[0] += 1
        return (x[: 4 - state[0]].exp()).sum()

    cp(lib).checkpoint(fn, lib.ones(4, requires_grad=True), use_reentrant=False).backward()


ERRORS: dict[str, Callable[[Any], Any]] = {
    "reentrant with keyword arguments": lambda lib: cp(lib).checkpoint(
        lambda a, k: a, lib.ones(1, requires_grad=True), use_reentrant=True, k=1),
    "reentrant with context_fn": lambda lib: cp(lib).checkpoint(
        lambda a: a, lib.ones(1, requires_grad=True), use_reentrant=True, context_fn=lambda: None),
    "unknown determinism_check": lambda lib: cp(lib).checkpoint(
        lambda a: a, lib.ones(1, requires_grad=True), use_reentrant=False, determinism_check="x"),
    "sequential with an unknown keyword": lambda lib: cp(lib).checkpoint_sequential(
        [lambda a: a], 1, lib.ones(1), use_reentrant=False, foo=1),
    "fewer tensors saved when recomputed": _fewer_when_recomputed,
    "other metadata when recomputed": _other_shape_when_recomputed,
}


@pytest.mark.parametrize("scenario", ERRORS.values(), ids=ERRORS.keys())
def test_errors_match_pytorch(torch: Any, scenario: Callable[[Any], Any]) -> None:
    ours, theirs = outcome(lambda: scenario(rg)), outcome(lambda: scenario(torch))
    assert ours == theirs
    assert ours[0] != "ok"


def test_omitting_use_reentrant_warns_and_uses_the_reentrant_variant(torch: Any) -> None:
    def scenario(lib: Any) -> list[Any]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = cp(lib).checkpoint(lambda a: a.exp(), lib.ones(2, requires_grad=True))
            z = cp(lib).checkpoint(lambda a: a * 2, lib.ones(2), use_reentrant=True)
        return [[str(w.message) for w in caught], type(y.grad_fn).__name__, z.requires_grad]

    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    assert ours[1] == "CheckpointFunctionBackward" and len(ours[0]) == 2


def test_the_checkpoint_error_type_is_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="different number of tensors"):
        _fewer_when_recomputed(rg)


def test_checkpoint_sequential_accepts_a_list_and_runs_the_last_segment_plainly() -> None:
    calls: list[str] = []

    def step(name: str) -> Callable[[Any], Any]:
        def fn(x: Any) -> Any:
            calls.append(name)
            return x.exp()

        return fn

    x = rg.tensor([0.1, 0.2], dtype=rg.float64, requires_grad=True)
    out = checkpoint_sequential([step("a"), step("b"), step("c"), step("d")], 2, x, use_reentrant=False)
    out.sum().backward()
    assert calls == ["a", "b", "c", "d", "a", "b"]  # the first segment is recomputed, the last is not
    np.testing.assert_allclose(out.detach().numpy(), np.exp(np.exp(np.exp(np.exp([0.1, 0.2])))))
