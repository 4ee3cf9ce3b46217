"""``nn.functional.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` against real PyTorch: values, gradients (input, linear weight and
bias), grad_fn names and warnings for class indices, probabilities, K-dimensional weights,
unbatched input, ignore_index, class weights and label smoothing, with and without ``options``
(whose chunked path PyTorch computes to the same loss); the options' checks; the module on the
same seeded weights; errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

rng = np.random.default_rng(0)
CASES = [
    ("indices", rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.integers(0, 7, 5), None, None, {}),
    ("bias weights smoothing sum", rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.integers(0, 7, 5),
     rng.normal(size=7), rng.uniform(size=7), {"reduction": "sum", "label_smoothing": 0.2}),
    ("unbatched none", rng.normal(size=(3,)), rng.normal(size=(7, 3)), np.array(2), None, None, {"reduction": "none"}),
    ("K-dim", rng.normal(size=(5, 3)), rng.normal(size=(7, 4, 3)), rng.integers(0, 7, (5, 4)), rng.normal(size=(7, 4)),
     None, {"ignore_index": 1}),
    ("probabilities", rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.dirichlet(np.ones(7), 5), None, None, {}),
    ("ignored targets", rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), np.array([0, 1, -100, 3, 4]), None, None,
     {"reduction": "none"}),
]


def _run(lib: Any, x: Any, w: Any, t: Any, b: Any, cw: Any, options: bool, **kwargs: Any) -> tuple[Any, ...]:
    xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    if options:
        kwargs["options"] = lib.nn.LinearCrossEntropyOptions()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loss = lib.nn.functional.linear_cross_entropy(xt, wt, lib.tensor(t), linear_bias=bt,
                                                      weight=None if cw is None else lib.tensor(cw), **kwargs)
    loss.sum().backward()
    values = [loss.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] + ([] if bt is None else [bt.grad.numpy()])
    return values, [(w.category, str(w.message)) for w in seen], type(loss.grad_fn).__name__


@pytest.mark.parametrize("options", [False, True])
@pytest.mark.parametrize(("label", "x", "w", "t", "b", "cw", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_matches_torch(torch: Any, label: str, x: Any, w: Any, t: Any, b: Any, cw: Any, kwargs: dict[str, Any],
                       options: bool) -> None:
    ours = _run(rg, x, w, t, b, cw, options, **kwargs)
    theirs = _run(torch, x, w, t, b, cw, options, **kwargs)
    for a, c in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]
    if not options or theirs[2] in ("NllLoss2DBackward0", "AddBackward0", "DivBackward1"):  # (reference path)
        assert ours[2] == theirs[2]


def test_gradcheck_and_gradgradcheck() -> None:
    r = np.random.default_rng(1)
    x = rg.tensor(r.normal(size=(4, 3)), requires_grad=True)
    w = rg.tensor(r.normal(size=(5, 2, 3)), requires_grad=True)
    b = rg.tensor(r.normal(size=(5, 2)), requires_grad=True)
    t = rg.tensor(r.integers(0, 5, (4, 2)))
    fn = lambda x, w, b: rg.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, label_smoothing=0.1)  # noqa: E731
    assert rg.autograd.gradcheck(fn, (x, w, b)) and rg.autograd.gradgradcheck(fn, (x, w, b))


def test_module_matches_torch_on_the_same_seeded_weights(torch: Any) -> None:
    x = np.random.default_rng(2).normal(size=(6, 4))
    t = np.random.default_rng(3).integers(0, 5, (6, 2))
    found = []
    for lib in (rg, torch):
        lib.manual_seed(0)
        module = lib.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True, dtype=lib.float64,
                                               label_smoothing=0.1, reduction="sum")
        loss = module(lib.tensor(x), lib.tensor(t))
        loss.backward()
        found.append((loss.item(), module.linear.weight.grad.numpy(), module.linear.bias.grad.numpy(), repr(module),
                      sorted(module.state_dict())))
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-12)
    np.testing.assert_allclose(found[0][1], found[1][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(found[0][2], found[1][2], rtol=1e-10, atol=1e-12)
    assert found[0][3:] == found[1][3:]


def test_options_repr_and_resolution_match_torch(torch: Any) -> None:
    for kwargs in ({}, {"batch_chunk_size": 4}, {"chunking_method": "aspect_ratio:3", "acc_policy": "balanced"},
                   {"chunking_method": None, "acc_dtype": "float32"}):
        made = []
        for lib in (rg, torch):
            kw = dict(kwargs)
            if "acc_dtype" in kw:
                kw["acc_dtype"] = getattr(lib, kw["acc_dtype"])
            opts = lib.nn.LinearCrossEntropyOptions(**kw)
            resolved = opts._adjust(num_batches=37, in_features=8, num_classes=50, dtype=lib.float64)
            made.append((repr(opts), resolved.batch_chunk_size, resolved.acc_policy, resolved.chunking_method,
                         str(resolved.acc_dtype)))
        assert made[0] == made[1]


ERRORS = [
    ("3-D input", lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 2, 3), L.ones(4, 3), L.tensor([0, 1]))),
    ("1-D weight", lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(3), L.tensor([0, 1]))),
    ("in_features", lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 2), L.tensor([0, 1]))),
    ("bias shape", lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 3), L.tensor([0, 1]),
                                                                  linear_bias=L.ones(3))),
    ("K-dim unbatched", lambda L: L.nn.functional.linear_cross_entropy(L.ones(3), L.ones(4, 2, 3), L.tensor([0, 1]))),
    ("ignore with probabilities", lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(2, 3), L.ones(4, 3), L.ones(2, 4) / 4, ignore_index=0)),
    ("chunk sizes disagree", lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(8, 3), L.ones(4, 3), L.zeros(8, dtype=L.int64),
        options=L.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio"))),
    ("policy", lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast")),
    ("method", lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0")),
    ("method name", lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="square")),
    ("chunk size", lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0)),
    ("acc dtype", lambda L: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int32)),
    ("frozen", lambda L: setattr(L.nn.LinearCrossEntropyOptions(), "batch_chunk_size", 2)),
    ("module weight", lambda L: L.nn.LinearCrossEntropyLoss(3, 4, weight=L.ones(3))),
    ("module smoothing", lambda L: L.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
