"""retrograd.debug.explain_grad and record_sites: each cause of a None or zero gradient is named,
with the line that did it while record_sites() is open, and the premise (the gradient really is
None / zero, the tensor really does not require grad) is checked against PyTorch."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.anomaly_mode import ANOMALY
from retrograd.debug import explain_grad, record_sites
from retrograd.ops import op as op_module


def here() -> int:
    """The caller's current line."""
    return sys._getframe(1).f_lineno


# -- causes of "does not require grad" ----------------------------------------------------------

def test_no_grad_names_op_and_line(torch: Any) -> None:
    w = rg.randn(3, requires_grad=True)
    with record_sites(), rg.no_grad():
        h = w * 2; line = here()  # noqa: E702
    e = explain_grad(h)
    assert (e.cause, e.line, e.cut_op) == ("no_grad", line, "mul")
    assert "no_grad" in str(e) and f":{line}" in str(e)
    tw = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        assert not (tw * 2).requires_grad  # the premise, in PyTorch


def test_no_grad_outside_record_sites_still_names_a_cause() -> None:
    w = rg.randn(3, requires_grad=True)
    with rg.no_grad():
        h = w * 2
    e = explain_grad(h)
    assert e.cause == "requires_grad_false" and e.site is None
    assert "no_grad" in str(e) and "record_sites" in str(e)


def test_inference_mode_is_named_without_record_sites(torch: Any) -> None:
    w = rg.randn(3, requires_grad=True)
    with rg.inference_mode():
        h = w * 2
    assert explain_grad(h).cause == "inference_mode"
    with record_sites(), rg.inference_mode():
        h = w * 2; line = here()  # noqa: E702
    assert (explain_grad(h).cause, explain_grad(h).line) == ("inference_mode", line)
    with torch.inference_mode():
        assert not (torch.ones(2, requires_grad=True) * 2).requires_grad


@pytest.mark.parametrize("how", ["detach", "data", "tensor_copy"])
def test_detach_data_and_tensor_copy(how: str, torch: Any) -> None:
    def make(lib: Any, t: Any) -> Any:
        return t.detach() if how == "detach" else t.data if how == "data" else lib.tensor(t)

    w = rg.randn(3, requires_grad=True)
    plain = make(rg, w)
    assert explain_grad(plain).cause == how and explain_grad(plain).site is None  # named without recording
    with record_sites():
        if how == "detach":
            h = w.detach(); line = here()  # noqa: E702
        elif how == "data":
            h = w.data; line = here()  # noqa: E702
        else:
            h = rg.tensor(w); line = here()  # noqa: E702
    e = explain_grad(h)
    assert (e.cause, e.line) == (how, line)
    assert "source required grad" in str(e)
    with pytest.warns(UserWarning) if how == "tensor_copy" else _nothing():
        assert not make(torch, torch.randn(3, requires_grad=True)).requires_grad


class _nothing:
    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.mark.parametrize("trip", ["item", "tolist", "numpy"])
def test_round_trips_name_both_lines(trip: str) -> None:
    w = rg.randn(3, requires_grad=True)
    loss = (w * w).sum()
    with record_sites():
        if trip == "item":
            value = loss.item(); out_line = here()  # noqa: E702
            t = rg.tensor(value); line = here()  # noqa: E702
        elif trip == "tolist":
            value = w.detach().tolist(); out_line = here()  # noqa: E702
            t = rg.tensor(value); line = here()  # noqa: E702
        else:
            value = w.detach().numpy(); out_line = here()  # noqa: E702
            t = rg.from_numpy(value); line = here()  # noqa: E702
    e = explain_grad(t)
    assert (e.cause, e.line) == ("round_trip", line)
    assert f"{trip}()" in str(e) and f":{out_line}" in str(e)


def test_requires_grad_false_at_creation() -> None:
    with record_sites():
        rg.zeros(3).tolist()  # equal values from a factory that takes no data are no round trip
        b = rg.zeros(3); line = here()  # noqa: E702
    e = explain_grad(b)
    assert (e.cause, e.line) == ("requires_grad_false", line)
    assert "zeros" in e.summary and "requires_grad=True" in (e.fix or "")


@pytest.mark.parametrize("cut", ["argmax", "gt"])
def test_integer_and_bool_results(cut: str, torch: Any) -> None:
    x = rg.randn(4, requires_grad=True)
    with record_sites():
        t = x.argmax() if cut == "argmax" else x > 0; line = here()  # noqa: E702
    e = explain_grad(t)
    assert (e.cause, e.line, e.cut_op) == ("integer_dtype", line, cut)
    assert "floating point" in str(e)
    assert explain_grad(x.argmax()).cause == "integer_dtype"  # without recording too
    tx = torch.randn(4, requires_grad=True)
    assert not tx.argmax().requires_grad and not (tx > 0).requires_grad


def test_untracked_float_made_from_a_comparison_names_the_cut() -> None:
    x = rg.randn(4, requires_grad=True)
    with record_sites():
        mask = x > 0; line = here()  # noqa: E702
        y = mask.float() * 3
    e = explain_grad(y)
    assert (e.cause, e.cut_op, e.line) == ("non_differentiable", "gt", line)


# -- causes of a None .grad on a tensor that requires grad ----------------------------------------

def test_non_leaf_without_retain_grad(torch: Any) -> None:
    w = rg.randn(3, requires_grad=True)
    with record_sites():
        h = w * 2; line = here()  # noqa: E702
    (h * h).sum().backward()
    e = explain_grad(h)
    assert (e.cause, e.line) == ("non_leaf", line)
    assert "retain_grad" in str(e)
    h2 = w * 2
    h2.retain_grad()
    (h2 * h2).sum().backward()
    assert explain_grad(h2).cause == "ok"
    tw = torch.randn(3, requires_grad=True)
    th = tw * 2
    (th * th).sum().backward()
    with pytest.warns(UserWarning):
        assert th.grad is None


@pytest.mark.parametrize("cut", ["argmax", "gt", "detach", "data", "no_grad"])
def test_not_reachable_names_the_op_that_cut_the_path(cut: str) -> None:
    x = rg.randn(4, requires_grad=True)
    w = rg.randn(4, requires_grad=True)
    with record_sites():
        if cut == "argmax":
            u = x.argmax().float(); line = here() - 0  # noqa: E702
        elif cut == "gt":
            u = (x > 0).float(); line = here()  # noqa: E702
        elif cut == "detach":
            u = x.detach() * 1; line = here()  # noqa: E702
        elif cut == "data":
            u = x.data * 1; line = here()  # noqa: E702
        else:
            with rg.no_grad():
                u = x * 1; line = here()  # noqa: E702
        loss = (u * w).sum()
    e = explain_grad(x, root=loss)
    assert (e.cause, e.line) == ("not_reachable", line)
    assert e.cut_op == {"argmax": "argmax", "gt": "gt", "detach": "detach", "data": "data", "no_grad": "mul"}[cut]
    assert explain_grad(w, root=loss).cause == "backward_not_run"


def test_not_reachable_through_an_alias_without_record_sites() -> None:
    x = rg.randn(4, requires_grad=True)
    w = rg.randn(4, requires_grad=True)
    loss = (x.detach() * w).sum()
    e = explain_grad(x, root=loss)
    assert (e.cause, e.cut_op) == ("not_reachable", "detach")
    loss2 = (x.argmax().float() * w).sum()
    e2 = explain_grad(x, root=loss2)
    assert e2.cause == "not_reachable" and "MulBackward0" in str(e2) and "argmax" in str(e2)


def test_backward_never_run_then_ok(torch: Any) -> None:
    w = rg.randn(3, requires_grad=True)
    loss = (w * w).sum()
    assert explain_grad(w, root=loss).cause == "backward_not_run"
    assert explain_grad(w).cause == "backward_not_run"
    loss.backward(); line = here()  # noqa: E702
    e = explain_grad(w, root=loss)
    assert e.cause == "ok" and e.ok
    assert e.backward_site is not None and e.backward_site.endswith(f":{line}")
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.detach().numpy())  # what "ok" vouches for


def test_autograd_grad_does_not_accumulate() -> None:
    w = rg.randn(3, requires_grad=True)
    loss = (w * w).sum()
    rg.autograd.grad(loss, w); line = here()  # noqa: E702
    e = explain_grad(w, root=loss)
    assert e.cause == "not_accumulated" and f":{line}" in str(e) and "autograd.grad" in str(e)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none: bool, torch: Any) -> None:
    lin = rg.nn.Linear(3, 2)
    opt = rg.optim.SGD(lin.parameters(), lr=0.1)
    lin(rg.randn(4, 3)).sum().backward()
    opt.zero_grad(set_to_none=set_to_none)
    assert explain_grad(lin.weight).cause == "zero_grad"  # named without recording
    lin(rg.randn(4, 3)).sum().backward()
    assert explain_grad(lin.weight).cause == "ok"
    with record_sites():
        lin.zero_grad(set_to_none=set_to_none); line = here()  # noqa: E702
    e = explain_grad(lin.weight)
    assert (e.cause, e.line) == ("zero_grad", line)
    assert (lin.weight.grad is None) == set_to_none
    tlin = torch.nn.Linear(3, 2)
    tlin(torch.randn(4, 3)).sum().backward()
    tlin.zero_grad(set_to_none=set_to_none)
    assert (tlin.weight.grad is None) == set_to_none
    if not set_to_none:
        assert not tlin.weight.grad.any() and not lin.weight.grad._data.any()


def test_dead_relus_report_the_fraction_of_units() -> None:
    rg.manual_seed(0)
    lin = rg.nn.Linear(4, 6)
    with rg.no_grad():
        lin.bias[:3] = -100.0  # three of six units can never fire
        lin.bias[3:] = 100.0
    x = rg.randn(5, 4)
    with record_sites():
        h = rg.relu(lin(x)); line = here()  # noqa: E702
    loss = h[:, :3].sum()  # only the dead units reach the loss
    loss.backward(retain_graph=True)
    e = explain_grad(lin.weight, root=loss)
    assert e.cause == "zero_gradient" and not lin.weight.grad._data.any()
    (relu,) = e.relus
    out = np.maximum(x.numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy(), 0)
    assert relu["dead_units"] == pytest.approx((out <= 0).all(axis=0).mean()) == 0.5
    assert relu["inactive"] == pytest.approx((out <= 0).mean())
    assert relu["site"].endswith(f":{line}") and "50%" in str(e)
    loss.backward()  # frees the masks: the node is still named
    assert explain_grad(lin.weight, root=loss).relus[0]["released"]


# -- record_sites costs nothing once closed -------------------------------------------------------

def test_record_sites_restores_everything() -> None:
    new, remember = op_module._new, op_module.remember_creation
    with record_sites():
        with record_sites():
            assert ANOMALY[0] and op_module._new is not new
            assert not rg.is_anomaly_enabled()
            y = rg.ones(2, requires_grad=True) * 2
        assert ANOMALY[0]
    assert not ANOMALY[0] and op_module._new is new and op_module.remember_creation is remember
    assert "traceback_" in y.grad_fn.metadata  # what other tools read for a node's creation site
    z = rg.ones(2) * 2
    assert vars(z) == {} and rg.ones(2, requires_grad=True).detach()._origin == "detach"


def test_record_sites_and_anomaly_mode_keep_their_own_state() -> None:
    with record_sites():
        with pytest.warns(UserWarning), rg.autograd.detect_anomaly():
            assert rg.is_anomaly_enabled()
        assert not rg.is_anomaly_enabled() and ANOMALY[0]
    with pytest.warns(UserWarning), rg.autograd.detect_anomaly():
        with record_sites():
            pass
        assert ANOMALY[0] and rg.is_anomaly_enabled()
    assert not ANOMALY[0]


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expects a Tensor"):
        explain_grad(np.ones(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="root"):
        explain_grad(rg.ones(2), root=3)  # type: ignore[arg-type]
