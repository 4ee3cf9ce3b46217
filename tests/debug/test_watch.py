"""retrograd.debug.watch: gradient health recorded during backward.

The figures are checked against gradients computed independently (PyTorch, or the ``.grad``
the same backward leaves, or hand-derived NumPy); the explanations for their key facts."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import engine
from retrograd.debug import watch

# NumPy's warnings from forwards that make NaN/inf on purpose (retrograd hides them outside pytest)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _stats(a: np.ndarray) -> tuple[float, float, int, int, float]:
    mag = np.abs(a)
    finite = mag[~np.isnan(mag)]
    return (float(np.sqrt(np.sum(mag.astype(np.float64) ** 2))), float(finite.max()) if finite.size else 0.0,
            int(np.isnan(a).sum()), int(np.isinf(a).sum()), float(np.mean(a == 0)))


def _check(record: dict[str, Any], expected: np.ndarray) -> None:
    norm, max_abs, nan, inf, zeros = _stats(expected)
    assert record["nan"] == nan and record["inf"] == inf
    if np.isfinite(norm):
        assert record["norm"] == pytest.approx(norm, rel=1e-6)
    assert record["max_abs"] == pytest.approx(max_abs, rel=1e-6)
    assert record["zero_fraction"] == pytest.approx(zeros)
    assert record["numel"] == expected.size


def _nodes(w: Any) -> list[dict[str, Any]]:
    return [r for r in w.records if r["kind"] == "node"]


# -- the figures --------------------------------------------------------------------------------

def test_node_records_are_the_gradients_wrt_each_nodes_output(torch: Any) -> None:
    """Each node's row is the gradient w.r.t. its forward output, in execution order: checked
    against PyTorch's gradients of the same intermediate values (retain_grad)."""
    x0 = np.array([[-1.5, 0.5, 2.0], [0.25, -0.75, 3.0]])
    w0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])

    def forward(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        h = x * w
        r = h.relu()
        t = r.tanh()
        loss = (t * 3).sum()
        return x, w, h, r, t, loss

    *_, h, r, t, loss = forward(rg)
    with watch() as w:
        loss.backward()
    tx, tw, th, tr, tt, tloss = forward(torch)
    for v in (th, tr, tt):
        v.retain_grad()
    tloss.backward()
    nodes = _nodes(w)
    assert [n["name"] for n in nodes][:5] == ["SumBackward0", "MulBackward0", "TanhBackward0", "ReluBackward0",
                                              "MulBackward0"]
    assert [n["step"] for n in nodes] == list(range(len(nodes)))
    _check(nodes[0], np.array(1.0))
    _check(nodes[1], np.ones((2, 3)))  # d loss / d (t * 3)
    _check(nodes[2], tt.grad.numpy())
    _check(nodes[3], tr.grad.numpy())
    _check(nodes[4], th.grad.numpy())  # relu zeroed half of it: the zero fraction says so
    assert nodes[4]["zero_fraction"] > 0
    assert all(n["flags"] == [] for n in nodes)
    json.dumps(w.records)  # plain data


def test_module_parameters_by_name_and_layers_by_module() -> None:
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.ReLU(), rg.nn.Linear(8, 3))
    loss = net(rg.randn(5, 4)).pow(2).mean()
    with watch(net) as w:
        loss.backward()
    params = {r["name"]: r for r in w.records if r["kind"] == "parameter"}
    assert set(params) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    for name, p in net.named_parameters():
        _check(params[name], p.grad.numpy())  # one backward: .grad is the gradient it received
        assert params[name]["module"] == name.split(".")[0]
    layers = w.layers()
    assert [(r["name"], r["module_type"], r["parameters"]) for r in layers] == [
        ("0", "Linear", ["0.weight", "0.bias"]), ("2", "Linear", ["2.weight", "2.bias"])]
    first = np.concatenate([net[0].weight.grad.numpy().ravel(), net[0].bias.grad.numpy().ravel()])
    assert layers[0]["norm"] == pytest.approx(np.linalg.norm(first))
    assert layers[0]["max_abs"] == pytest.approx(np.abs(first).max())
    assert layers[0]["zero_fraction"] == pytest.approx(np.mean(first == 0))
    # the accumulator rows are named after their parameter
    assert {n["name"] for n in _nodes(w) if n["name"].startswith("AccumulateGrad")} == {
        f"AccumulateGrad ({name})" for name in params}


def test_watched_non_leaf_tensor_gets_the_gradient_of_that_value() -> None:
    x = rg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x.exp()
    h.retain_grad()
    loss = (h * h).sum()
    with watch({"x": x, "h": h}) as w:
        loss.backward()
    rows = {r["name"]: r for r in w.layers()}
    _check(rows["h"], h.grad.numpy())
    _check(rows["x"], x.grad.numpy())
    _check(rows["h"], 2 * np.exp(np.array([1.0, -2.0, 3.0])))  # by hand


def test_watching_changes_no_gradient() -> None:
    rg.manual_seed(1)
    net = rg.nn.Sequential(rg.nn.Linear(3, 3), rg.nn.Tanh(), rg.nn.Linear(3, 1))
    data = rg.randn(4, 3)
    net(data).sum().backward()
    plain = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    with watch(net):
        net(data).sum().backward()
    for a, p in zip(plain, net.parameters()):
        assert np.array_equal(a.numpy(), p.grad.numpy())


def test_figures_of_huge_nan_and_inf_gradients() -> None:
    from retrograd.debug.gradient_health import _stats

    huge = np.array([3e300, -4e300, 0.0])
    assert _stats([huge])["norm"] == pytest.approx(5e300)  # no overflow in the squares
    assert _stats([huge])["max_abs"] == 4e300 and _stats([huge])["zero_fraction"] == pytest.approx(1 / 3)
    mixed = np.array([np.nan, -np.inf, 2.0, 0.0], dtype=np.float32)
    got = _stats([mixed])
    assert (got["nan"], got["inf"], got["max_abs"], got["zero_fraction"]) == (1, 1, np.inf, 0.25)
    assert np.isnan(got["norm"])
    assert _stats([np.array([-np.inf, 1.0])])["norm"] == np.inf
    assert _stats([np.array([3.0]), np.array([[4.0]])])["norm"] == pytest.approx(5.0)  # together


# -- the first non-finite gradient and the where trap ------------------------------------------

def _where_sqrt(lib: Any, x: Any) -> Any:
    return lib.where(x > 0, lib.sqrt(x), 0.0)


def _where_reciprocal(lib: Any, x: Any) -> Any:
    return lib.where(x != 0, 1 / x, 0.0)


def _where_log(lib: Any, x: Any) -> Any:
    return lib.where(x > 0, lib.log(x), 0.0)


@pytest.mark.parametrize("make, values, op, fix", [
    (_where_sqrt, [-1.0, 4.0, 9.0], "Sqrt", "sqrt(where(x > 0, x, 1))"),
    (_where_reciprocal, [0.0, 2.0, -4.0], "Reciprocal", "1 / where(x != 0, x, 1)"),
    (_where_log, [-2.0, 0.0, 3.0], "Log", "log(where(x > 0, x, 1))"),  # (NaN at 0 only: 0 × -1/2 is 0)
])
def test_the_where_trap_is_recognised_and_its_fix_is_given(torch: Any, make: Any, values: list[float], op: str,
                                                          fix: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rg.autograd.detect_anomaly(check_nan=False):  # records where each node was made
            x = rg.tensor(values, requires_grad=True)
            loss = make(rg, x).sum()
    line = make.__code__.co_firstlineno + 1  # the line in make that called where and the op: the report names it
    with watch([x]) as w:
        loss.backward()
    tx = torch.tensor(values, requires_grad=True)
    make(torch, tx).sum().backward()
    assert np.isnan(tx.grad.numpy()).any()  # PyTorch has the same NaN: it is the math, not a bug
    np.testing.assert_array_equal(np.isnan(x.grad.numpy()), np.isnan(tx.grad.numpy()))

    bad = w.first_nonfinite
    assert bad is not None
    assert bad.name == f"{op}Backward0" and bad.op == op
    assert bad.incoming_finite and bad.zero_times_inf and bad.where_trap
    assert bad.site is not None and f"{__file__}:{line}" in bad.site
    assert bad.where_site is not None and f":{line}" in bad.where_site
    assert fix in bad.fix
    text = str(bad)
    for fact in (f"{op}Backward0", f"{__file__}:{line}", "where", "double where", fix):
        assert fact in text
    ranges = bad.input_ranges  # what the node saved, at the time it ran
    assert ranges
    saved = next(iter(ranges.values()))
    assert saved["shape"] == (3,)
    assert w.layers()[0]["flags"] == ["nonfinite"] and w.layers()[0]["nan"] == int(np.isnan(tx.grad.numpy()).sum())

    # the fix: mask the input first (the double where): no NaN, and PyTorch agrees on the gradient
    safe_values = [v if v > 0 else 1.0 for v in values] if op != "Reciprocal" else [v if v != 0 else 1.0
                                                                                       for v in values]
    for lib, t in ((rg, rg.tensor(values, requires_grad=True)), (torch, torch.tensor(values, requires_grad=True))):
        mask = t > 0 if op != "Reciprocal" else t != 0
        inner = lib.where(mask, t, 1.0)
        out = lib.where(mask, {"Sqrt": lib.sqrt, "Log": lib.log, "Reciprocal": lambda v: 1 / v}[op](inner), 0.0)
        if lib is rg:
            with watch([t]) as w2:
                out.sum().backward()
            assert w2.first_nonfinite is None
            ours = t.grad.numpy()
        else:
            out.sum().backward()
            np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-6)
            assert np.isfinite(ours).all()
    assert safe_values  # (the masked input is finite everywhere)


def test_the_where_trap_through_pow_and_division() -> None:
    x = rg.tensor([0.0, 2.0], requires_grad=True)
    y = rg.tensor([1.0, 3.0], requires_grad=True)
    with watch() as w:
        rg.where(x > 0, x ** 0.5, 0.0).sum().backward()
    assert (w.first_nonfinite.name, w.first_nonfinite.where_trap) == ("PowBackward0", True)
    assert "where(x > 0, x, 1) ** p" in w.first_nonfinite.fix
    with watch() as w:
        rg.where(x != 0, y / x, 0.0).sum().backward()
    assert (w.first_nonfinite.name, w.first_nonfinite.where_trap) == ("DivBackward0", True)
    assert "y / where(x != 0, x, 1)" in w.first_nonfinite.fix


def test_log_where_input_range_is_the_forward_input() -> None:
    x = rg.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    loss = _where_log(rg, x).sum()
    with watch() as w:
        loss.backward()
    assert w.first_nonfinite.input_ranges["self"] == {"shape": (3,), "min": -2.0, "max": 3.0, "nan": 0, "inf": 0}


def test_nonfinite_without_where_is_not_called_the_where_trap() -> None:
    # sqrt at 0 with a nonzero incoming gradient: its own derivative is inf
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    with watch() as w:
        x.sqrt().sum().backward()
    bad = w.first_nonfinite
    assert bad.name == "SqrtBackward0" and bad.inf == 1 and bad.nan == 0
    assert bad.incoming_finite and not bad.zero_times_inf and not bad.where_trap and bad.fix is None
    # a zero gradient times that inf, but no where: 0 x inf, said as such
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    with watch() as w:
        (x.sqrt() * 0).sum().backward()
    bad = w.first_nonfinite
    assert bad.zero_times_inf and not bad.where_trap and "0 × inf" in str(bad)


def test_nonfinite_gradient_passed_to_backward_is_blamed_on_the_root() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with watch() as w:
        y.backward(rg.tensor([float("nan"), 1.0]))
    bad = w.first_nonfinite
    assert bad.name == "MulBackward0" and bad.step == 0 and not bad.incoming_finite
    assert "already non-finite" in str(bad)


def test_first_nonfinite_is_first_in_execution_order() -> None:
    x = rg.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    y = _where_sqrt(rg, x)  # made first: runs last in backward
    z = _where_reciprocal(rg, x)
    with watch() as w:
        (y + z).sum().backward()
    order = [n["name"] for n in _nodes(w) if n["produced_nan"] or n["produced_inf"]]
    assert order == ["ReciprocalBackward0", "SqrtBackward0"]
    assert w.first_nonfinite.name == "ReciprocalBackward0"


def test_site_absent_says_how_to_record_it() -> None:
    x = rg.tensor([-1.0, 1.0], requires_grad=True)
    loss = _where_sqrt(rg, x).sum()
    with watch() as w:
        loss.backward()
    assert w.first_nonfinite.site is None
    assert "record_sites()" in str(w.first_nonfinite) and "detect_anomaly" in str(w.first_nonfinite)


# -- vanishing and exploding --------------------------------------------------------------------

def _stack(scale: float, depth: int = 6) -> Any:
    rg.manual_seed(0)
    layers: list[Any] = []
    for _ in range(depth):
        lin = rg.nn.Linear(8, 8, bias=False)
        with rg.no_grad():
            lin.weight.copy_(rg.eye(8) * scale)
        layers.append(lin)
    return rg.nn.Sequential(*layers)


def test_vanishing_layers_are_flagged_relative_to_the_loss_gradient() -> None:
    net = _stack(0.01)  # each layer scales the gradient by 0.01
    loss = net(rg.ones(1, 8)).sum() * 3
    with watch(net) as w:
        loss.backward()
    layers = w.layers()
    for r, (_, p) in zip(layers, net.named_parameters()):
        # d loss / d W_k = 3 * outer(upstream, input): hand-computed norm, relative to the loss gradient (1)
        assert r["norm"] == pytest.approx(np.linalg.norm(p.grad.numpy()))
        assert r["relative"] == pytest.approx(r["norm"])
        assert ("vanishing" in r["flags"]) == (r["norm"] < 1e-7)
    assert w.flagged()["vanishing"] == [r["name"] for r in layers if r["norm"] < 1e-7] != []
    assert w.flagged()["exploding"] == []
    # relative: the same graph from a loss gradient 1e-3 as large is no more vanishing
    net.zero_grad()
    loss = net(rg.ones(1, 8)).sum() * 3
    with watch(net) as w2:
        loss.backward(rg.tensor(1e-3))
    assert w2.flagged()["vanishing"] == w.flagged()["vanishing"]
    assert w2.layers()[0]["relative"] == pytest.approx(w.layers()[0]["relative"])
    assert "vanishing" in w.summary()


def test_exploding_layers_are_flagged() -> None:
    net = _stack(30.0)
    loss = net(rg.ones(1, 8)).sum()
    with watch(net, exploding=1e6) as w:
        loss.backward()
    exploding = [r["name"] for r in w.layers() if r["norm"] > 1e6]
    assert exploding and w.flagged()["exploding"] == exploding
    assert "exploding" in w.summary()


# -- the context and its cost ------------------------------------------------------------------

def test_nothing_is_left_on_the_graph_or_the_engine() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).exp()
    mine: list[int] = []

    def user_hook(grad_inputs: Any, grad_outputs: Any) -> None:
        mine.append(1)

    y.grad_fn.register_hook(user_hook)
    loss = y.sum()
    assert engine.BACKWARD_WATCHERS == []
    with watch() as w:
        assert len(engine.BACKWARD_WATCHERS) == 1
        loss.backward(retain_graph=True)
    assert engine.BACKWARD_WATCHERS == []
    mul = y.grad_fn.next_functions[0][0]
    assert "_hooked" not in mul.__dict__ and not mul._post_hooks  # the node is as it was
    assert y.grad_fn._post_hooks == [user_hook]
    assert mine == [1]  # the user's own hook ran, and stays
    n = len(w.records)
    loss.backward()  # outside the watch: nothing recorded
    assert len(w.records) == n and mine == [1, 1]


def test_nested_watches_both_record_and_leave_nothing() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    loss = (y * 3).sum()
    with watch([x]) as outer:
        with watch() as inner:
            loss.backward()
    names = ["SumBackward0", "MulBackward0", "ExpBackward0"]
    assert [r["name"] for r in _nodes(outer)] == names + ["AccumulateGrad (tensor0)"]
    assert [r["name"] for r in _nodes(inner)] == names + ["AccumulateGrad"]
    assert [r["norm"] for r in _nodes(outer)] == [r["norm"] for r in _nodes(inner)]
    for fn in (loss.grad_fn, y.grad_fn):
        assert "_hooked" not in fn.__dict__ and "_post_hooks" not in fn.__dict__


def test_two_backward_passes_and_autograd_grad() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    with watch([x]) as w:
        loss.backward(retain_graph=True)
        (g,) = rg.autograd.grad(loss, [x])
    assert {r["backward"] for r in w.records} == {1, 2}
    assert np.array_equal(g.numpy(), [2.0, 4.0])


def test_a_failing_backward_leaves_no_watch_behind() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def boom(g: Any) -> Any:
        raise ValueError("boom")

    y.register_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        with watch():
            y.sum().backward()
    assert engine.BACKWARD_WATCHERS == []
    assert not y.grad_fn.next_functions[0][0]._post_hooks


def test_watch_rejects_what_cannot_receive_a_gradient() -> None:
    with pytest.raises(ValueError, match="does not require grad"):
        watch([rg.ones(2)])
    with pytest.raises(TypeError, match="nn.Module, a Tensor"):
        watch(3)


def test_importing_the_module_leaves_the_function_in_place() -> None:
    import importlib

    import retrograd.debug

    importlib.import_module("retrograd.debug.gradient_health")  # importing the module leaves the function in place
    x = rg.tensor([1.0], requires_grad=True)
    with retrograd.debug.watch([x]) as w:
        (x * 2).sum().backward()
    assert w.layers()[0]["norm"] == pytest.approx(2.0)


# -- the summary and the plot -------------------------------------------------------------------

def test_summary_names_layers_nodes_and_the_diagnosis() -> None:
    x = rg.tensor([-1.0, 4.0], requires_grad=True)
    with watch({"x": x}) as w:
        _where_sqrt(rg, x).sum().backward()
    text = w.summary()
    for fact in ("x", "SqrtBackward0", "WhereBackward0", "nonfinite", "made NaN/inf", "double where"):
        assert fact in text
    assert repr(text) == str(text)


def test_plot_draws_a_png(tmp_path: Any) -> None:
    pytest.importorskip("matplotlib")
    net = _stack(0.01, depth=4)
    with watch(net) as w:
        net(rg.ones(1, 8)).sum().backward()
    path = w.plot(tmp_path / "grads.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_plot_without_matplotlib_says_what_to_install(monkeypatch: Any, tmp_path: Any) -> None:
    x = rg.tensor([1.0], requires_grad=True)
    with watch([x]) as w:
        (x * 2).sum().backward()
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install retrograd\[debug\].*pip install matplotlib"):
        w.plot(tmp_path / "x.png")
