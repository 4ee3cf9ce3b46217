"""``ctc_loss`` (``nn.functional``, ``torch.*`` and ``nn.CTCLoss``) against real PyTorch: losses,
gradients w.r.t. the log-probabilities and ``grad_fn`` names over blanks, reductions,
``zero_infinity``, padded and concatenated targets, impossible alignments and float32
(gradcheck and more samples: the op database, tests/opdb/nn.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

X = np.random.default_rng(0).standard_normal((8, 3, 5))
PADDED = np.array([[1, 2, 2, 3], [3, 1, 0, 0], [4, 4, 4, 4]])
CONCAT = np.array([1, 2, 2, 3, 1, 4, 4, 4, 4])
IMPOSSIBLE = ([8, 5, 6], [4, 2, 4])  # the third needs 7 frames (repeats take a blank between them)


def _run(lib: Any, targets: np.ndarray, lengths: tuple[Any, Any], dtype: str, call: Any) -> tuple[Any, Any, str]:
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    loss = call(lib, x.log_softmax(2), lib.tensor(targets), *lengths)
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy(), type(loss.grad_fn).__name__


@pytest.mark.parametrize("targets", [PADDED, CONCAT], ids=["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("form", ["functional", "module", "torch"])
def test_matches_torch(torch: Any, targets: np.ndarray, reduction: str, zero_infinity: bool, form: str) -> None:
    def call(lib: Any, lp: Any, t: Any, il: Any, tl: Any) -> Any:
        if form == "module":
            return lib.nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=zero_infinity)(lp, t, il, tl)
        if form == "torch":
            return lib.ctc_loss(lp, t, il, tl, 0, ("none", "mean", "sum").index(reduction), zero_infinity)
        return lib.nn.functional.ctc_loss(lp, t, il, tl, reduction=reduction, zero_infinity=zero_infinity)

    for lengths in (([8, 5, 6], [4, 2, 3]), IMPOSSIBLE):
        if targets is CONCAT and lengths is IMPOSSIBLE:
            continue
        (la, ga, na), (lb, gb, nb) = (_run(lib, targets, lengths, "float64", call) for lib in (rg, torch))
        assert na == nb
        np.testing.assert_allclose(la, lb, rtol=1e-12)
        if zero_infinity or lengths is not IMPOSSIBLE:  # (an infinite loss's gradient is nan in both)
            np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)


def test_blank_and_float32(torch: Any) -> None:
    def call(lib: Any, lp: Any, t: Any, il: Any, tl: Any) -> Any:
        return lib.nn.functional.ctc_loss(lp, t, il, tl, blank=4, reduction="none")

    targets = np.array([[0, 1, 1], [3, 2, 0], [2, 2, 2]])
    lengths = (lambda lib: lib.tensor([8, 7, 8]), lambda lib: lib.tensor([3, 2, 3]))
    results = []
    for lib in (rg, torch):
        x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
        loss = call(lib, x.log_softmax(2), lib.tensor(targets), lengths[0](lib), lengths[1](lib))
        loss.backward(lib.ones_like(loss))
        results.append((loss.dtype == lib.float32, loss.detach().numpy(), x.grad.numpy()))
    (da, la, ga), (db, lb, gb) = results
    assert da and db
    np.testing.assert_allclose(la, lb, rtol=1e-5)
    np.testing.assert_allclose(ga, gb, rtol=1e-4, atol=1e-6)


def test_module_repr_and_bad_reduction(torch: Any) -> None:
    assert repr(rg.nn.CTCLoss()) == repr(torch.nn.CTCLoss()) == "CTCLoss()"
    lp = rg.zeros(2, 1, 2).log_softmax(2)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        rg.nn.functional.ctc_loss(lp, rg.tensor([[1]]), [2], [1], reduction="bad")
