"""The engine across threads (no lost gradient), over long runs (no history that grows), with
the collector (thresholds restored exactly, never switched off), and ``.grad``'s layout."""

from __future__ import annotations

import gc
import inspect
import sys
import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.engine import GUARDED_PASS_NODES
from retrograd.autograd.graph import GUARD_EVERY


def run_threads(n: int, body: Callable[[int], None]) -> None:
    """``body(i)`` in ``n`` threads started together; re-raises the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            body(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# -- 1. concurrent backward into shared leaves -----------------------------------------------


def test_concurrent_backward_into_one_leaf_loses_no_gradient() -> None:
    # The reproduction: 8 threads x 20 backward into a 1M-element leaf.
    x = rg.zeros(1_000_000, requires_grad=True)
    ones = rg.ones(1_000_000)

    def body(_: int) -> None:
        for _ in range(20):
            (x * ones).sum().backward()

    run_threads(8, body)
    g = x.grad.numpy()
    assert g.min() == g.max() == 160.0


def test_concurrent_backward_on_separate_graphs_sharing_leaves() -> None:
    w = rg.zeros(200_000, requires_grad=True)
    b = rg.zeros(200_000, requires_grad=True)

    def body(i: int) -> None:
        c = rg.full((200_000,), float(i + 1))
        for _ in range(10):
            ((w * c).exp() + b * 2.0).sum().backward()  # d/dw = c (w = 0), d/db = 2

    run_threads(6, body)
    assert np.array_equal(w.grad.numpy(), np.full(200_000, 10.0 * sum(range(1, 7)), np.float32))
    assert np.array_equal(b.grad.numpy(), np.full(200_000, 6 * 10 * 2.0, np.float32))


def test_first_assignment_of_grad_is_not_lost() -> None:
    x = rg.zeros(300_000, requires_grad=True)
    ones = rg.ones(300_000)
    for _ in range(15):
        x.grad = None
        run_threads(8, lambda _: (x * ones).sum().backward())
        g = x.grad.numpy()
        assert g.min() == g.max() == 8.0


def test_concurrent_accumulation_under_create_graph() -> None:
    x = rg.full((200_000,), 2.0, requires_grad=True)

    def body(_: int) -> None:
        for _ in range(10):
            (x * x).sum().backward(create_graph=True)  # d/dx = 2x = 4

    run_threads(6, body)
    assert x.grad.requires_grad
    g = x.grad.detach().numpy()
    assert g.min() == g.max() == 6 * 10 * 4.0


# -- 2. no write history that grows ----------------------------------------------------------


def _training_growth(make_optimizer: Callable[[Any], Any], steps: int) -> int:
    rg.manual_seed(0)
    # (the second layer's weight is saved: its input requires grad)
    model = rg.nn.Sequential(rg.nn.Linear(8, 16), rg.nn.ReLU(), rg.nn.Linear(16, 4))
    opt = make_optimizer(model.parameters())
    x, target = rg.randn(16, 8), rg.randn(16, 4)

    def step() -> None:
        opt.zero_grad()
        loss = rg.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()

    for _ in range(50):  # optimizer state, caches and first-use code made before measuring
        step()
    tracemalloc.start()
    try:
        gc.collect()  # (also empties the interpreter's free lists, which tracemalloc counts)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(steps):
            step()
        gc.collect()
        return int(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make_optimizer", [
    lambda params: rg.optim.SGD(params, lr=1e-3, momentum=0.9),
    lambda params: rg.optim.Adam(params, lr=1e-3),
], ids=["sgd_momentum", "adam"])
def test_training_keeps_no_history_of_in_place_updates(make_optimizer: Callable[[Any], Any]) -> None:
    # Each step saves a weight (forward) and writes it in place (the update); the site of each
    # write was kept forever: about 200 bytes a step here. (Adam's step sizes also fill a bounded
    # cache of scalars, up to about 60 KB.)
    assert _training_growth(make_optimizer, 5_000) < 128 * 1024


def test_every_write_since_a_live_save_is_named_and_no_earlier_one() -> None:
    x = rg.ones(3, requires_grad=True)
    w = rg.ones(3)
    with rg.no_grad():
        w.mul_(1.0)  # before any save: no saved value can see it
    frozen = x * w  # saves w at version 1
    for _ in range(3):
        (x * w).sum().backward()  # saves w and frees it
        with rg.no_grad():
            w.add_(0.0)  # versions 2, 3, 4: seen by ``frozen`` only
    newer = x * w  # saves w at version 4
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with rg.no_grad():
        w.sub_(0.0)  # version 5
    with pytest.raises(RuntimeError) as info:
        frozen.sum().backward()
    message = str(info.value)
    assert "is at version 5; expected version 1 instead." in message
    assert message.count("add_ at ") == 3 and f"sub_ at {__file__}:{line}" in message
    assert "mul_ at " not in message
    with pytest.raises(RuntimeError) as info:
        newer.sum().backward()
    message = str(info.value)
    assert "expected version 4 instead." in message
    assert "add_ at " not in message and "; then " not in message and f"sub_ at {__file__}:{line}" in message


def test_a_saved_output_still_names_the_write_after_its_graph_saw_others_freed() -> None:
    # The counter of an op's own saved output is shared with the tensor only once it is aliased.
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        x.exp().sum().backward()
    e = x.exp()
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    e.mul_(2)
    with pytest.raises(RuntimeError, match=f"mul_ at {__file__}:{line}"):
        e.sum().backward()


# -- 3. the collector ------------------------------------------------------------------------


@pytest.fixture
def odd_thresholds() -> Any:
    """Thresholds no one would choose, so that restoring "the default" would not pass."""
    before = gc.get_threshold()
    gc.set_threshold(613, 9, 11)
    yield (613, 9, 11)
    gc.set_threshold(*before)


def _long_chain(x: rg.Tensor) -> rg.Tensor:
    y = x
    for _ in range(GUARD_EVERY + 100):
        y = y * 1.0
    return y


def test_thresholds_restored_when_a_large_graph_is_dropped_without_backward(odd_thresholds: Any) -> None:
    y = _long_chain(rg.ones(2, requires_grad=True))
    assert gc.get_threshold()[2] > odd_thresholds[2]
    del y
    assert gc.get_threshold() == odd_thresholds


def test_a_threshold_set_by_the_user_meanwhile_is_kept(odd_thresholds: Any) -> None:
    y = _long_chain(rg.ones(2, requires_grad=True))
    gc.set_threshold(613, 9, 17)
    del y
    assert gc.get_threshold() == (613, 9, 17)


def test_collector_stays_on_for_other_threads_during_backward() -> None:
    seen: list[bool] = []

    def look(grad: rg.Tensor) -> None:
        t = threading.Thread(target=lambda: seen.append(gc.isenabled()))
        t.start()
        t.join()

    x = rg.ones(2, requires_grad=True)
    y = x * 2.0
    y.register_hook(look)
    y.sum().backward()
    assert seen == [True] and gc.isenabled()


def _guarded_depth(x: rg.Tensor) -> rg.Tensor:
    """``x`` through enough ops that a backward pass from it holds the collector guard."""
    for _ in range(GUARDED_PASS_NODES):
        x = x * 1.0
    return x


def test_nested_and_concurrent_backwards_restore_the_exact_thresholds(odd_thresholds: Any) -> None:
    during: list[tuple[int, int, int]] = []

    def inner(grad: rg.Tensor) -> None:
        during.append(gc.get_threshold())
        z = rg.ones(2, requires_grad=True)
        with rg.enable_grad():
            _guarded_depth(z * 3.0).sum().backward()  # a backward inside a backward
        during.append(gc.get_threshold())

    def body(i: int) -> None:
        x = rg.ones(50, requires_grad=True)
        y = x * 2.0
        if i % 2 == 0:
            y.register_hook(inner)
        y = _guarded_depth(y)
        for _ in range(5):
            (y.tanh() * 1.5).sum().backward(retain_graph=True)

    run_threads(4, body)
    assert during and all(t[:2] == odd_thresholds[:2] and t[2] > odd_thresholds[2] for t in during)
    assert gc.get_threshold() == odd_thresholds


def test_a_backward_that_fails_restores_the_thresholds(odd_thresholds: Any) -> None:
    x = rg.ones(2, requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        _guarded_depth(y).sum().backward()
    assert gc.get_threshold() == odd_thresholds


def test_a_small_pass_leaves_the_thresholds_alone_and_a_large_one_raises_them(odd_thresholds: Any) -> None:
    during: list[tuple[int, int, int]] = []
    x = rg.ones(2, requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: during.append(gc.get_threshold()))
    (y * 3.0).sum().backward(retain_graph=True)
    _guarded_depth(y).sum().backward()
    assert during[0] == odd_thresholds and during[1][2] > odd_thresholds[2]
    assert gc.get_threshold() == odd_thresholds


# -- 4. the gradient layout contract ---------------------------------------------------------


def test_linear_weight_grad_has_the_weights_layout(torch: Any) -> None:
    results = {}
    for lib in (rg, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(5, 3)
        layer(lib.ones(4, 5)).sum().backward()
        g = layer.weight.grad
        results[lib.__name__] = (g.stride(), g.is_contiguous(), layer.bias.grad.stride())
    assert results["retrograd"] == results["torch"] == ((5, 1), True, (1,))
    assert layer.weight.grad.shape == (3, 5)


@pytest.mark.parametrize("make_leaf, use", [
    (lambda lib: lib.ones(3, 4), lambda w, lib: (w.t() * lib.arange(3.0)).sum()),
    (lambda lib: lib.ones(2, 3, 4), lambda w, lib: (w.permute(2, 0, 1) * lib.arange(4.0).reshape(4, 1, 1)).sum()),
    (lambda lib: lib.ones(4, 3).t().detach(), lambda w, lib: (lib.ones(2, 4) @ w.t()).sum()),  # a transposed leaf
    (lambda lib: lib.ones(2, 3, 4).permute(1, 2, 0).detach(), lambda w, lib: (w.permute(2, 0, 1) * 3.0).sum()),
    (lambda lib: lib.ones(4, 6)[:, ::2].detach(), lambda w, lib: (w.t() * 2.0).sum()),  # not dense: row-major
], ids=["t", "permute", "transposed_leaf", "permuted_leaf", "strided_leaf"])
def test_grad_takes_its_leafs_strides(torch: Any, make_leaf: Any, use: Any) -> None:
    grads = {}
    for lib in (rg, torch):
        w = make_leaf(lib).requires_grad_()
        use(w, lib).backward()
        grads[lib.__name__] = (w.grad.stride(), w.grad.detach().numpy().tolist())
    assert grads["retrograd"] == grads["torch"]



def test_linear_weight_grad_is_neither_copied_nor_transposed(monkeypatch: Any) -> None:
    tensor_module = sys.modules["retrograd.tensor"]  # (``rg.tensor`` is the factory function)
    copies: list[Any] = []

    class CountingNumpy:
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

        def array(self, *args: Any, **kwargs: Any) -> Any:
            copies.append(args[0].shape)
            return np.array(*args, **kwargs)

    layer = rg.nn.Linear(6, 4)
    loss = layer(rg.ones(3, 6)).sum()
    monkeypatch.setattr(tensor_module, "np", CountingNumpy())
    loss.backward()
    monkeypatch.undo()
    assert copies == []
    assert layer.weight.grad.is_contiguous() and layer.weight.grad.tolist() == [[3.0] * 6] * 4


def test_a_weight_gradient_a_hook_keeps_is_still_copied() -> None:
    layer = rg.nn.Linear(4, 3)
    kept: list[rg.Tensor] = []
    layer.weight.register_hook(lambda g: kept.append(g))
    layer(rg.ones(2, 4)).sum().backward()
    layer.weight.grad.add_(1)
    assert kept[0].tolist() == [[2.0] * 4] * 3 and layer.weight.grad.tolist() == [[3.0] * 4] * 3



def test_a_saved_output_rebound_by_an_in_place_op_keeps_no_history_once_freed() -> None:
    # exp_ saves its result, which then lives in the written tensor: while the graph holds it, a
    # later write is named in the version error; once the graph is gone, the counter forgets.
    z = rg.ones(3, requires_grad=True) * 1
    z.exp_()
    counter = z._version_counter
    with rg.no_grad():
        z.mul_(1.0)
    assert counter.sites is not None and len(counter.sites) == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    z = z.detach()  # drops the graph that saved the old version
    for _ in range(50):
        with rg.no_grad():
            z.mul_(1.0)
    assert counter.sites is None
