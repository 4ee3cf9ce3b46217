"""``torch.embedding_bag`` (ATen's signature: weight first, mode as 0/1/2, four outputs) against
real PyTorch: the output and its gradients, ``offset2bag``, ``bag_size`` and ``max_indices`` for
every mode with padding_idx, include_last_offset and per_sample_weights, and ATen's errors; plus
``F.embedding_bag``'s include_last_offset with indices past the last offset (PyTorch's CPU puts
them in the last bag) and scale_grad_by_freq against hand-derived counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _case(rng: np.random.Generator, trial: int) -> tuple[Any, ...]:
    n = int(rng.integers(0, 12))
    weight = rng.normal(size=(6, 3))
    if trial % 4 == 0:
        weight = np.round(weight)  # ties in max mode: the first index wins
    indices = rng.integers(0, 6, size=n)
    num = int(rng.integers(1, 5))
    offsets = np.sort(rng.integers(0, n + 1, size=num))
    offsets[0] = 0
    mode = trial % 3
    # (PyTorch crashes on include_last_offset with a single offset: no bags)
    last = bool(trial % 2) and num > 1
    padding = [None, 2, -1][trial % 3 if trial % 5 else 0]
    psw = rng.normal(size=n) if mode == 0 and trial % 6 == 0 else None
    return weight, indices, offsets, mode, last, padding, psw


@pytest.mark.parametrize("trial", range(48))
def test_outputs_and_gradients_match_torch(torch: Any, trial: int) -> None:
    weight, indices, offsets, mode, last, padding, psw = _case(np.random.default_rng(trial), trial)
    found = []
    for lib in (rg, torch):
        w = lib.tensor(weight, requires_grad=True)
        p = None if psw is None else lib.tensor(psw, requires_grad=True)
        out = lib.embedding_bag(w, lib.tensor(indices), lib.tensor(offsets), False, mode, False, p, last, padding)
        (out[0] * lib.tensor(np.arange(out[0].numel(), dtype=np.float64).reshape(tuple(out[0].shape)))).sum().backward()
        grads = [w.grad.numpy()] + ([] if p is None else [p.grad.numpy()])
        found.append(([t.detach().numpy() for t in out], grads, type(out[0].grad_fn).__name__))
    (ours, our_grads, our_node), (theirs, their_grads, their_node) = found
    assert our_node == their_node == "EmbeddingBagBackward0"
    for a, b in zip(ours + our_grads, theirs + their_grads, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_int32_indices_give_int32_extra_outputs(torch: Any) -> None:
    dtypes = []
    for lib in (rg, torch):
        out = lib.embedding_bag(lib.ones(5, 2), lib.tensor([0, 1, 3], dtype=lib.int32),
                                lib.tensor([0, 1], dtype=lib.int32), False, 2)
        dtypes.append([str(t.dtype) for t in out])
    assert dtypes[0] == dtypes[1]


def test_functional_include_last_offset_puts_trailing_indices_in_the_last_bag(torch: Any) -> None:
    weight = np.random.default_rng(0).normal(size=(10, 3))
    indices, offsets = [1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3, 6]
    for mode in ("sum", "mean", "max"):
        results = []
        for lib in (rg, torch):
            w = lib.tensor(weight, requires_grad=True)
            out = lib.nn.functional.embedding_bag(lib.tensor(indices), w, lib.tensor(offsets), mode=mode,
                                                  include_last_offset=True)
            (out * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
            results.append((out.detach().numpy(), w.grad.numpy()))
        for a, b in zip(*results, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_scale_grad_by_freq_divides_by_each_index_count() -> None:
    # PyTorch 2.13's CPU kernel divides some rows by another index's count (pytorch#190063, fixed
    # upstream by #190264); the documented rule, checked by hand: row r gets sum(grad) / count(r)
    w = rg.ones(6, 1, requires_grad=True)
    indices = rg.tensor([3, 2, 2, 2, 0, 0, 0, 0, 4, 3])
    out = rg.nn.functional.embedding_bag(indices, w, rg.tensor([0, 6, 8]), mode="sum", scale_grad_by_freq=True)
    (out * rg.tensor([[1.0], [10.0], [100.0]])).sum().backward()
    assert w.grad.flatten().tolist() == [(1 + 1 + 10 + 10) / 4, 0.0, 3 / 3, (1 + 100) / 2, 100 / 1, 0.0]


def test_max_mode_ignores_scale_grad_by_freq_as_torch(torch: Any) -> None:
    grads = []
    for lib in (rg, torch):
        w = lib.tensor(np.arange(10.0).reshape(5, 2), requires_grad=True)
        lib.embedding_bag(w, lib.tensor([0, 1, 3]), lib.tensor([0, 1]), True, 2)[0].sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


ERRORS = [
    ("per-sample weights with mean", lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 1]), L.tensor([0]), False, 1,
                                                               False, L.ones(2))),
    ("per-sample weights length", lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 1]), L.tensor([0]), False, 0,
                                                            False, L.ones(3))),
    ("mode", lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 1]), L.tensor([0]), False, 3)),
    ("index range", lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 7]), L.tensor([0]))),
    ("float indices", lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0.0, 1.0]), L.tensor([0]))),
    ("1-D weight", lambda L: L.embedding_bag(L.ones(5), L.tensor([0, 1]), L.tensor([0]))),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))


def test_two_dimensional_indices_are_refused_clearly() -> None:
    with pytest.raises(RuntimeError, match="1-D indices"):
        rg.embedding_bag(rg.ones(5, 2), rg.tensor([[0, 1], [2, 3]]), rg.tensor([0, 1]))
