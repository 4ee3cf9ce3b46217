"""The loss tangents' fast forms (``ops/nn.py``): ``nll_loss``'s tangent picked from the array on
targets its forward has just checked, recorded around that value (``nll_of_checked_targets``,
``prerun``), and ``log_softmax``'s tangent formula calling its sum's path directly. On every
op-database sample of the losses, and on cross-entropy as forward-over-reverse runs it, each must
give the op path's very tangent: bits, dtype, ``requires_grad``, node name, and where the tangent
has a graph, the gradients through it (reverse over forward)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from test_tangent_paths import _describe, _run, assert_same_tangents

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from opdb import OpInfo, Sample, gradcheck_cases, to_lib
from retrograd.ops import nn as nn_ops

LOSSES = ("nll_loss", "cross_entropy", "log_softmax")
CASES = [case for case in gradcheck_cases() if case.values[0].name.startswith(LOSSES)]
MODES = ("grad", "tracked", "no_grad")


def _no_fast_form(*args: Any) -> None:
    """In place of ``nll_of_checked_targets``: the op path's tangents (nll_loss's by the op's own call)."""
    return None


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls where the fast form gave the value (to know the test reaches it)."""
    taken = [0]
    fast = nn_ops.nll_of_checked_targets

    def counted(*args: Any) -> Any:
        value = fast(*args)
        taken[0] += value is not None
        return value

    monkeypatch.setattr(nn_ops, "nll_of_checked_targets", counted)
    return taken


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_loss_tangents_are_the_op_paths(op: OpInfo, sample: Sample, monkeypatch: pytest.MonkeyPatch) -> None:
    if not to_lib(rg, sample)[2]:
        pytest.skip("no differentiable input")
    for mode in MODES:
        fast = _run(op, sample, mode)
        with monkeypatch.context() as m:
            m.setattr(nn_ops, "nll_of_checked_targets", _no_fast_form)
            ref = _run(op, sample, mode)
        assert_same_tangents(fast, ref, mode)


def _mlp_loss_tangent(dtype: Any, reduction: str, mode: str) -> list[Any]:
    """cross_entropy of (N, C) logits whose tangent, as in forward over reverse, has a graph."""
    rs = np.random.RandomState(3)
    logits = rg.tensor(rs.randn(64, 10).astype(dtype), requires_grad=True)
    tangent = rg.tensor(rs.randn(64, 10).astype(dtype), requires_grad=mode == "tracked")
    target = rg.tensor(rs.randint(0, 10, 64))
    with fwAD.dual_level():
        dual = fwAD.make_dual(logits, tangent)
        with rg.no_grad() if mode == "no_grad" else contextlib.nullcontext():
            loss = rg.nn.functional.cross_entropy(dual * 1.5, target, reduction=reduction)
        return [_describe(loss, [s for s in (logits, tangent) if s.requires_grad])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropys_tangent_takes_the_fast_form_and_is_the_op_paths(
        dtype: Any, reduction: str, monkeypatch: pytest.MonkeyPatch) -> None:
    described = {}
    for mode in MODES:
        with monkeypatch.context() as m:
            taken = _counting(m)
            fast = described[mode] = _mlp_loss_tangent(dtype, reduction, mode)
        assert taken[0] == 1, mode
        with monkeypatch.context() as m:
            m.setattr(nn_ops, "nll_of_checked_targets", _no_fast_form)
            ref = _mlp_loss_tangent(dtype, reduction, mode)
        assert_same_tangents(fast, ref, mode)
    torch = pytest.importorskip("torch")  # and PyTorch's tangent (its forward AD of cross_entropy)
    rs = np.random.RandomState(3)
    logits, tangent, target = rs.randn(64, 10).astype(dtype), rs.randn(64, 10).astype(dtype), rs.randint(0, 10, 64)
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(torch.tensor(logits, requires_grad=True), torch.tensor(tangent))
        loss = torch.nn.functional.cross_entropy(dual * 1.5, torch.tensor(target), reduction=reduction)
        expected = torch.autograd.forward_ad.unpack_dual(loss).tangent
    fast = described["grad"]
    np.testing.assert_allclose(fast[0][0], expected.detach().numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert fast[0][3] == type(expected.grad_fn).__name__  # NllLossBackward0, as PyTorch's


def test_a_wrong_fast_nll_tangent_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparison above sees a fast form one ulp off.
    fast = nn_ops.nll_of_checked_targets

    def off(*args: Any) -> Any:
        value = fast(*args)
        return None if value is None else np.nextafter(value, np.inf).astype(value.dtype)

    ref = _mlp_loss_tangent(np.float32, "mean", "tracked")
    monkeypatch.setattr(nn_ops, "nll_of_checked_targets", off)
    with pytest.raises(AssertionError):
        assert_same_tangents(_mlp_loss_tangent(np.float32, "mean", "tracked"), ref, "tracked")


def test_log_softmaxs_tangent_is_its_formula_with_its_graph() -> None:
    # The formula as written with Tensor methods (``t - (t * result.exp()).sum(dim, keepdim=True)``)
    # is the oracle of the form that calls the sum's path itself: bits, node, gradients.
    rs = np.random.RandomState(4)
    for shape, dim in (((5, 7), 1), ((5, 7), -2), ((2, 3, 4), 1), ((6,), 0)):
        x = rg.tensor(rs.randn(*shape), requires_grad=True)
        t = rg.tensor(rs.randn(*shape), requires_grad=True)
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(rg.nn.functional.log_softmax(fwAD.make_dual(x, t), dim)).tangent
        result = rg.nn.functional.log_softmax(x, dim)
        expected = t - (t * result.exp()).sum(dim, keepdim=True)
        np.testing.assert_array_equal(tangent.detach().numpy(), expected.detach().numpy())
        assert type(tangent.grad_fn).__name__ == type(expected.grad_fn).__name__ == "SubBackward0"
        w = rg.tensor(rs.randn(*shape))
        for got, want in zip(rg.autograd.grad((tangent * w).sum(), (x, t)),
                             rg.autograd.grad((expected * w).sum(), (x, t))):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
