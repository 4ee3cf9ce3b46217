"""The recurrent layers (RNN, LSTM, GRU and their cells) and ``nn.utils.rnn`` against real PyTorch:
the same weights in both libraries, then outputs, final states and every parameter and input
gradient compared (float64 to 1e-8, float32 to 1e-4) over num_layers x bidirectional x
batch_first x proj_size x packed x unbatched x given/default initial state; gradcheck and
gradgradcheck in float64, third derivatives of the fused LSTM cell against a composite of
plain ops, dropout between layers, parameter names/shapes/initialisation and PyTorch's errors."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

KINDS = ("RNN", "LSTM", "GRU")
CASES = [
    (kind, layers, bi, bf, proj, packed, unbatched, given)
    for kind, layers, bi, bf, proj, packed, unbatched, given in itertools.product(
        KINDS, (1, 2), (False, True), (False, True), (0, 3), (False, True), (False, True), (False, True))
    if not (proj and kind != "LSTM") and not (packed and unbatched)
]


def _case_id(case: tuple[Any, ...]) -> str:
    kind, layers, bi, bf, proj, packed, unbatched, given = case
    return (f"{kind}-L{layers}{'-bi' if bi else ''}{'-bf' if bf else ''}{f'-proj{proj}' if proj else ''}"
            f"{'-packed' if packed else ''}{'-unbatched' if unbatched else ''}{'-hx' if given else ''}")


def copy_params(tm: Any, rm: Any) -> None:
    """Load torch's parameters into retrograd's module (by name: PyTorch's names are ours)."""
    for name, p in tm.named_parameters():
        getattr(rm, name)._data[...] = p.detach().numpy()


def both(torch: Any, kind: str, *args: Any, dtype: str = "float64", **kwargs: Any) -> tuple[Any, Any]:
    tm = getattr(torch.nn, kind)(*args, **kwargs, dtype=getattr(torch, dtype))
    rm = getattr(rg.nn, kind)(*args, **kwargs, dtype=getattr(rg, dtype))
    copy_params(tm, rm)
    return tm, rm


def leaf(lib: Any, a: np.ndarray) -> Any:
    return lib.tensor(a.copy(), requires_grad=True)


def run_case(torch: Any, case: tuple[Any, ...], dtype: str, atol: float, rtol: float) -> None:
    kind, layers, bi, bf, proj, packed, unbatched, given = case
    rng = np.random.default_rng(abs(hash(_case_id(case))) % 2**32)
    kwargs: dict[str, Any] = dict(num_layers=layers, bidirectional=bi, batch_first=bf)
    if proj:
        kwargs["proj_size"] = proj
    tm, rm = both(torch, kind, 4, 5, dtype=dtype, **kwargs)
    steps, batch, dirs = 6, 3, 2 if bi else 1
    x = rng.standard_normal((batch, steps, 4) if bf else (steps, batch, 4)).astype(dtype)
    if unbatched:
        x = x[0] if bf else x[:, 0]
    state_lead = (layers * dirs,) if unbatched else (layers * dirs, batch)
    h0 = rng.standard_normal((*state_lead, proj or 5)).astype(dtype)
    c0 = rng.standard_normal((*state_lead, 5)).astype(dtype)
    outs = []
    for lib, m in ((torch, tm), (rg, rm)):
        xs, hs, cs = leaf(lib, x), leaf(lib, h0), leaf(lib, c0)
        inp: Any = xs
        if packed:  # lengths out of order: the module sorts, permutes hx and restores the order
            inp = lib.nn.utils.rnn.pack_padded_sequence(xs, [4, 6, 2], batch_first=bf, enforce_sorted=False)
        hx = ((hs, cs) if kind == "LSTM" else hs) if given else None
        out, h_n = m(inp, hx)
        if packed:
            out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=bf)[0]
        results = [out, *(h_n if kind == "LSTM" else (h_n,))]
        weights = [lib.tensor(np.cos(np.arange(r.numel())).reshape(tuple(r.shape)).astype(dtype)) for r in results]
        sum((r * w).sum() for r, w in zip(results, weights)).backward()
        grads = [xs.grad] + ([hs.grad] + ([cs.grad] if kind == "LSTM" else []) if given else [])
        grads += [p.grad for _, p in m.named_parameters()]
        outs.append((results, grads))
    for (t_res, t_grads), (r_res, r_grads) in [tuple(outs)]:
        for t, r in zip(t_res + t_grads, r_res + r_grads):
            assert tuple(t.shape) == tuple(r.shape)
            assert r.dtype == getattr(rg, dtype)
            np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_parity_float64(torch: Any, case: tuple[Any, ...]) -> None:
    run_case(torch, case, "float64", 1e-8, 1e-8)


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == 2 and c[3] and c[7]], ids=_case_id)
def test_parity_float32(torch: Any, case: tuple[Any, ...]) -> None:
    run_case(torch, case, "float32", 1e-4, 1e-4)


@pytest.mark.parametrize("kind,kwargs", [("RNN", {"nonlinearity": "relu"}), ("RNN", {"bias": False}),
                                         ("LSTM", {"bias": False}), ("LSTM", {"bias": False, "proj_size": 2}),
                                         ("GRU", {"bias": False}), ("RNN", {"nonlinearity": "relu", "num_layers": 2})])
def test_parity_options(torch: Any, kind: str, kwargs: dict[str, Any]) -> None:
    tm, rm = both(torch, kind, 3, 4, **kwargs)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    (to, th), (ro, rh) = tm(torch.tensor(x)), rm(rg.tensor(x))
    np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy(), atol=1e-10)
    for t, r in zip(th if kind == "LSTM" else (th,), rh if kind == "LSTM" else (rh,)):
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=1e-10)
    assert [n for n, _ in rm.named_parameters()] == [n for n, _ in tm.named_parameters()]


def test_long_sequence_gradients_match(torch: Any) -> None:
    # The LSTM benchmark's shape, scaled down: many steps, both layers, SGD-like use of .grad.
    tm, rm = both(torch, "LSTM", 8, 16, num_layers=2)
    x = np.random.default_rng(1).standard_normal((30, 4, 8))
    for lib, m in ((torch, tm), (rg, rm)):
        out, _ = m(lib.tensor(x))
        out.pow(2).mean().backward()
    for (name, tp), (_, rp) in zip(tm.named_parameters(), rm.named_parameters()):
        np.testing.assert_allclose(rp.grad.numpy(), tp.grad.numpy(), atol=1e-10, err_msg=name)


# -- parameters ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,kwargs", [("RNN", {}), ("GRU", {"num_layers": 3, "bidirectional": True}),
                                         ("LSTM", {"num_layers": 2, "proj_size": 2, "bidirectional": True}),
                                         ("LSTM", {"bias": False, "proj_size": 2})])
def test_parameter_names_shapes_and_repr(torch: Any, kind: str, kwargs: dict[str, Any]) -> None:
    tm = getattr(torch.nn, kind)(3, 4, **kwargs)
    rm = getattr(rg.nn, kind)(3, 4, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in rm.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert rm._flat_weights_names == tm._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in rm.all_weights] == [
        [tuple(p.shape) for p in ws] for ws in tm.all_weights]
    assert all(a is b for a, b in zip(rm._flat_weights, rm.parameters()))
    assert repr(rm) == repr(tm)
    assert rm.flatten_parameters() is None
    # A state_dict saved by PyTorch loads as is.
    rm.load_state_dict({k: rg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for (n, tp), (_, rp) in zip(tm.named_parameters(), rm.named_parameters()):
        np.testing.assert_array_equal(rp.detach().numpy(), tp.detach().numpy(), err_msg=n)


def test_default_initialisation_is_uniform_in_one_over_sqrt_hidden() -> None:
    rg.manual_seed(0)
    m = rg.nn.LSTM(10, 16, num_layers=2, proj_size=4, bidirectional=True)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
    assert abs(values.mean()) < 0.01 and abs(values.std() - 0.25 / np.sqrt(3)) < 0.01
    cell = rg.nn.GRUCell(3, 100)
    cv = np.concatenate([p.detach().numpy().ravel() for p in cell.parameters()])
    assert np.abs(cv).max() <= 0.1 and np.abs(cv).max() > 0.099


def test_dtype_argument_and_dtype_mismatch(torch: Any) -> None:
    m = rg.nn.GRU(3, 4, dtype=rg.float64)
    assert all(p.dtype == rg.float64 for p in m.parameters())
    tm = torch.nn.GRU(3, 4)
    rm = rg.nn.GRU(3, 4)
    assert outcome(lambda: rm(rg.zeros(2, 1, 3, dtype=rg.float64))) == outcome(
        lambda: tm(torch.zeros(2, 1, 3, dtype=torch.float64)))


# -- cells -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                         ("RNNCell", {"bias": False}), ("LSTMCell", {}), ("LSTMCell", {"bias": False}),
                                         ("GRUCell", {}), ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given", [True, False])
def test_cells_parity(torch: Any, kind: str, kwargs: dict[str, Any], batched: bool, given: bool) -> None:
    tm, rm = both(torch, kind, 3, 4, **kwargs)
    rng = np.random.default_rng(2)
    lead = (2,) if batched else ()
    x, h, c = rng.standard_normal((*lead, 3)), rng.standard_normal((*lead, 4)), rng.standard_normal((*lead, 4))
    results = []
    for lib, m in ((torch, tm), (rg, rm)):
        xs, hs, cs = leaf(lib, x), leaf(lib, h), leaf(lib, c)
        hx = ((hs, cs) if kind == "LSTMCell" else hs) if given else None
        out = m(xs, hx)
        outs = list(out) if kind == "LSTMCell" else [out]
        sum((o * (k + 1.5)).sin().sum() for k, o in enumerate(outs)).backward()
        grads = [xs.grad, *([hs.grad] if given else []), *([cs.grad] if given and kind == "LSTMCell" else [])]
        results.append(outs + grads + [p.grad for p in m.parameters()])
    for t, r in zip(*results):
        assert tuple(t.shape) == tuple(r.shape)
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=1e-10)
    assert repr(rm) == repr(tm)


# -- higher derivatives ------------------------------------------------------------------------------


def _functional(m: Any, names: list[str], kind: str) -> Any:
    def fn(x: Any, h: Any, c: Any, *weights: Any) -> Any:
        for name, w in zip(names, weights):
            m._parameters[name] = w
        out, state = m(x, (h, c) if kind == "LSTM" else h)
        return (out, *state) if kind == "LSTM" else (out, state)
    return fn


@pytest.mark.parametrize("kind,kwargs", [("LSTM", {}), ("LSTM", {"proj_size": 2, "bidirectional": True}),
                                         ("GRU", {"bidirectional": True}), ("RNN", {"num_layers": 2})])
def test_gradcheck_and_gradgradcheck(kind: str, kwargs: dict[str, Any]) -> None:
    rg.manual_seed(0)
    m = getattr(rg.nn, kind)(2, 3, dtype=rg.float64, **kwargs)
    names = [n for n, _ in m.named_parameters()]
    weights = [p.detach().clone().requires_grad_() for p in m.parameters()]
    dirs = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    x = rg.randn(3, 2, 2, dtype=rg.float64, requires_grad=True)
    h = rg.randn(layers * dirs, 2, kwargs.get("proj_size") or 3, dtype=rg.float64, requires_grad=True)
    c = rg.randn(layers * dirs, 2, 3, dtype=rg.float64, requires_grad=True)
    fn = _functional(m, names, kind)
    assert rg.autograd.gradcheck(fn, (x, h, c, *weights))
    assert rg.autograd.gradgradcheck(fn, (x, h, c, *weights))


def test_fused_lstm_cell_third_derivative_matches_composite_cells() -> None:
    # nn.LSTM runs one fused node per step; LSTMCell is a composite of plain ops. Same weights:
    # first, second and third derivatives along fixed directions must agree.
    rg.manual_seed(3)
    lstm = rg.nn.LSTM(2, 3, dtype=rg.float64)
    cell = rg.nn.LSTMCell(2, 3, dtype=rg.float64)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(cell, name)._data[...] = getattr(lstm, name + "_l0")._data
    x0 = rg.randn(4, 2, 2, dtype=rg.float64)
    v = rg.randn(4, 2, 2, dtype=rg.float64)

    def loss_lstm(x: Any) -> Any:
        out, (h, c) = lstm(x)
        return (out.sin().sum() + (h * c).sum())

    def loss_cells(x: Any) -> Any:
        h = c = rg.zeros(2, 3, dtype=rg.float64)
        total = 0
        for t in range(4):
            h, c = cell(x[t], (h, c))
            total = total + h.sin().sum()
        return total + (h * c).sum()

    def derivatives(loss: Any) -> list[np.ndarray]:
        x = x0.clone().requires_grad_()
        (g1,) = rg.autograd.grad(loss(x), x, create_graph=True)
        (g2,) = rg.autograd.grad((g1 * v).sum(), x, create_graph=True)
        (g3,) = rg.autograd.grad((g2 * v).sum(), x)
        return [g1.detach().numpy(), g2.detach().numpy(), g3.numpy()]

    for a, b in zip(derivatives(loss_lstm), derivatives(loss_cells)):
        np.testing.assert_allclose(a, b, atol=1e-10)


def test_create_graph_backward_gives_the_plain_backward_gradients() -> None:
    # The fused cell's rule has a NumPy path (plain backward) and a composite one (create_graph).
    rg.manual_seed(4)
    m = rg.nn.LSTM(3, 4, num_layers=2, dtype=rg.float64)
    x = rg.randn(5, 2, 3, dtype=rg.float64)
    grads = []
    for create_graph in (False, True):
        m.zero_grad()
        out, (h, c) = m(x)
        (out.sum() + c.pow(2).sum()).backward(create_graph=create_graph)
        grads.append([p.grad.detach().numpy().copy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, atol=1e-12)


# -- dropout ---------------------------------------------------------------------------------------


def test_dropout_between_layers_train_and_eval(torch: Any) -> None:
    # p=1 zeroes the second layer's input in training: deterministic, so PyTorch is the oracle.
    tm, rm = both(torch, "LSTM", 3, 4, num_layers=2, dropout=1.0)
    x = np.random.default_rng(5).standard_normal((5, 2, 3))
    for training in (True, False):
        tm.train(training)
        rm.train(training)
        (to, (th, tc)), (ro, (rh, rc)) = tm(torch.tensor(x)), rm(rg.tensor(x))
        for t, r in ((to, ro), (th, rh), (tc, rc)):
            np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=1e-10)


def test_dropout_is_seeded_and_only_between_layers() -> None:
    m = rg.nn.GRU(3, 4, num_layers=2, dropout=0.5, dtype=rg.float64)
    x = rg.randn(5, 2, 3, dtype=rg.float64)
    runs = []
    for _ in range(2):
        rg.manual_seed(11)
        runs.append(m(x)[0].detach().numpy())
    np.testing.assert_array_equal(runs[0], runs[1])
    m.eval()
    evaluated = m(x)[0].detach().numpy()
    assert not np.allclose(runs[0], evaluated)
    np.testing.assert_array_equal(evaluated, m(x)[0].detach().numpy())
    # One layer: dropout has nothing to act on (and warns, as PyTorch does).
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last recurrent layer"):
        single = rg.nn.GRU(3, 4, dropout=0.5, dtype=rg.float64)
    np.testing.assert_array_equal(single(x)[0].detach().numpy(), single.eval()(x)[0].detach().numpy())


def test_dropout_warning_text_matches(torch: Any) -> None:
    messages = []
    for lib in (torch, rg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.RNN(2, 3, dropout=0.3)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1]


# -- errors ----------------------------------------------------------------------------------------

CONSTRUCTOR_ERRORS = [
    ("RNN", (4, 5), {"nonlinearity": "foo"}), ("GRU", (4, 5), {"proj_size": 2}), ("RNN", (4, 5), {"proj_size": 2}),
    ("LSTM", (4, 5), {"proj_size": 5}), ("LSTM", (4, 5), {"proj_size": -1}), ("LSTM", (4, 5), {"dropout": 2}),
    ("LSTM", (4, 5), {"dropout": True}), ("LSTM", (4, 5), {"bias": 1}), ("LSTM", (4, 5), {"batch_first": 0}),
    ("LSTM", (4.0, 5), {}), ("LSTM", (0, 5), {}), ("LSTM", (4, 5.0), {}), ("LSTM", (4, 0), {}),
    ("LSTM", (4, 5), {"num_layers": 0}), ("RNN", (4, 5, 1, "relu", False), {}),
]


@pytest.mark.parametrize("kind,args,kwargs", CONSTRUCTOR_ERRORS)
def test_constructor_errors(torch: Any, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    assert outcome(lambda: getattr(rg.nn, kind)(*args, **kwargs)) == outcome(
        lambda: getattr(torch.nn, kind)(*args, **kwargs))


def _forward_error_cases(lib: Any) -> list[Any]:
    z = lib.zeros
    lstm, gru, rnn = lib.nn.LSTM(4, 5), lib.nn.GRU(4, 5), lib.nn.RNN(4, 5)
    proj = lib.nn.LSTM(4, 5, proj_size=2)
    return [
        lambda: lstm(z(3, 2, 4, 1)), lambda: gru(z(3)), lambda: rnn(z(3, 2, 4, 1)), lambda: lstm(z(3, 2, 6)),
        lambda: lstm(z(3, 2, 4), (z(1, 3, 5), z(1, 2, 5))), lambda: lstm(z(3, 2, 4), (z(1, 2, 5), z(1, 2, 4))),
        lambda: lstm(z(3, 2, 4), (z(2, 5), z(1, 2, 4))), lambda: lstm(z(3, 4), (z(1, 2, 5), z(1, 2, 4))),
        lambda: lstm(z(3, 4), (z(1, 6), z(1, 5))), lambda: proj(z(3, 2, 4), (z(1, 2, 5), z(1, 2, 5))),
        lambda: gru(z(3, 4), z(1, 2, 5)), lambda: gru(z(3, 2, 4), z(2, 5)), lambda: gru(z(3, 2, 4), z(1, 3, 5)),
        lambda: rnn(z(3, 2, 4), z(2, 2, 5)), lambda: rnn(z(3, 4), z(1, 4)),
        lambda: lib.nn.GRU(4, 5, batch_first=True)(z(2, 3, 4), z(1, 3, 5)),
        lambda: gru(lib.nn.utils.rnn.pack_sequence([z(3, 4), z(2, 4)]), z(1, 3, 5)),
        lambda: gru(lib.nn.utils.rnn.pack_sequence([z(3, 6), z(2, 6)])),
    ]


def test_forward_errors(torch: Any) -> None:
    ours, theirs = _forward_error_cases(rg), _forward_error_cases(torch)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        expected = outcome(b)
        assert expected[0] != "ok", k
        assert outcome(a) == expected, k


def test_lstm_packed_input_errors(torch: Any) -> None:
    # PyTorch's LSTM skips its Python checks for packed input: the input projection's product and
    # a broadcast of the initial state fail instead, with their own messages.
    def cases(lib: Any) -> list[Any]:
        z = lib.zeros
        m = lib.nn.LSTM(4, 5)

        def pack(d: int = 4, dtype: Any = None) -> Any:
            return lib.nn.utils.rnn.pack_sequence([z(3, d, dtype=dtype), z(2, d, dtype=dtype)])
        return [lambda: m(pack(), (z(1, 3, 5), z(1, 3, 5))), lambda: m(pack(), (z(1, 2, 5), z(1, 3, 5))),
                lambda: m(pack(6)), lambda: m(pack(dtype=lib.float64)),
                lambda: m(lib.nn.utils.rnn.pack_sequence([z(3, 4, 1), z(2, 4, 1)]))]
    for k, (a, b) in enumerate(zip(cases(rg), cases(torch))):
        expected = outcome(b)
        assert expected[0] != "ok", k
        assert outcome(a) == expected, k
    # States of the wrong size are refused too (PyTorch's kernel words these its own way).
    packed = rg.nn.utils.rnn.pack_sequence([rg.zeros(3, 4), rg.zeros(2, 4)])
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 5\), got \[1, 2, 6\]"):
        rg.nn.LSTM(4, 5)(packed, (rg.zeros(1, 2, 6), rg.zeros(1, 2, 5)))


def _cell_error_cases(lib: Any) -> list[Any]:
    z = lib.zeros
    cells = [lib.nn.RNNCell(4, 5), lib.nn.GRUCell(4, 5)]
    lstm = lib.nn.LSTMCell(4, 5)
    cases = []
    for c in cells:
        cases += [lambda c=c: c(z(3, 6)), lambda c=c: c(z(3, 4), z(2, 5)), lambda c=c: c(z(3, 4), z(3, 6)),
                  lambda c=c: c(z(3, 4, 1)), lambda c=c: c(z(3, 4), z(3, 5, 1)), lambda c=c: c(z(4), z(3, 5))]
    cases += [lambda: lstm(z(3, 6)), lambda: lstm(z(3, 4), (z(2, 5), z(3, 5))),
              lambda: lstm(z(3, 4), (z(3, 5), z(2, 5))), lambda: lstm(z(3, 4), (z(3, 5), z(3, 6))),
              lambda: lstm(z(3, 4), (z(3, 5, 1), z(3, 5))), lambda: lstm(z(3, 4), (z(3, 5), z(3, 5, 1))),
              lambda: lstm(z(3, 4, 1)), lambda: lib.nn.RNNCell(4, 5, nonlinearity="foo")(z(3, 4))]
    return cases


def test_cell_errors(torch: Any) -> None:
    for k, (a, b) in enumerate(zip(_cell_error_cases(rg), _cell_error_cases(torch))):
        expected = outcome(b)
        assert expected[0] != "ok", k
        assert outcome(a) == expected, k


# -- nn.utils.rnn ------------------------------------------------------------------------------------


def _same(r: Any, t: Any) -> None:
    if t is None:
        assert r is None
        return
    assert tuple(r.shape) == tuple(t.shape) and str(r.dtype) == str(t.dtype)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 3, 3, 1]), (False, [2, 5, 2, 4]),
                                                    (False, rg.tensor([1, 1, 5, 3]))])
def test_pack_and_pad_round_trip(torch: Any, batch_first: bool, enforce_sorted: bool, lengths: Any) -> None:
    x = np.random.default_rng(6).standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    t_lengths = torch.tensor(lengths.tolist()) if isinstance(lengths, rg.Tensor) else lengths
    res = []
    for lib, lens in ((torch, t_lengths), (rg, lengths)):
        xs = leaf(lib, x)
        packed = lib.nn.utils.rnn.pack_padded_sequence(xs, lens, batch_first=batch_first,
                                                       enforce_sorted=enforce_sorted)
        padded, out_lengths = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first=batch_first,
                                                                   padding_value=-1.5, total_length=7)
        (padded * lib.arange(padded.numel(), dtype=padded.dtype).reshape(padded.shape)).sum().backward()
        seqs = lib.nn.utils.rnn.unpack_sequence(packed)
        res.append((packed, padded, out_lengths, xs.grad, seqs))
    (tp, tpad, tl, tg, ts), (rp, rpad, rl, rgd, rs) = res
    assert isinstance(rp, rg.nn.utils.rnn.PackedSequence) and isinstance(rp, tuple)
    for a, b in ((rp.data, tp.data), (rp.batch_sizes, tp.batch_sizes), (rp.sorted_indices, tp.sorted_indices),
                 (rp.unsorted_indices, tp.unsorted_indices), (rpad, tpad), (rl, tl), (rgd, tg)):
        _same(a, b)
    assert len(rs) == len(ts)
    for a, b in zip(rs, ts):
        _same(a, b)
    assert type(rpad.grad_fn).__name__ == type(tpad.grad_fn).__name__


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(torch: Any, batch_first: bool, padding_side: str) -> None:
    rng = np.random.default_rng(7)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    res = []
    for lib in (torch, rg):
        leaves = [leaf(lib, s) for s in seqs]
        out = lib.nn.utils.rnn.pad_sequence(leaves, batch_first=batch_first, padding_value=2.0,
                                            padding_side=padding_side)
        (out * out).sum().backward()
        res.append([out, *(s.grad for s in leaves)])
        assert type(out.grad_fn).__name__ == "CopySlices"
    for a, b in zip(res[1], res[0]):
        _same(a, b)


def test_pack_sequence_and_invert_permutation(torch: Any) -> None:
    seqs = [np.arange(n, dtype=np.float64) + 10 * n for n in (2, 4, 3)]
    tp = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    rp = rg.nn.utils.rnn.pack_sequence([rg.tensor(s) for s in seqs], enforce_sorted=False)
    for a, b in zip(rp, tp):
        _same(a, b)
    perm = [3, 0, 2, 1]
    _same(rg.nn.utils.rnn.invert_permutation(rg.tensor(perm)),
          torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)))
    assert rg.nn.utils.rnn.invert_permutation(None) is None
    # PackedSequence conversions keep batch_sizes and the permutations.
    as32 = rp.float()
    assert as32.data.dtype == rg.float32 and as32.batch_sizes is rp.batch_sizes
    assert rp.double() is rp and not rp.is_cuda
    rebuilt = rg.nn.utils.rnn.PackedSequence((rp.data, rp.batch_sizes), sorted_indices=rp.sorted_indices)
    _same(rebuilt.unsorted_indices, tp.unsorted_indices)


def _util_error_cases(lib: Any) -> list[Any]:
    u = lib.nn.utils.rnn
    x = lib.zeros(4, 3, 2)
    return [
        lambda: u.pack_padded_sequence(x, [4, 2, 3]), lambda: u.pack_padded_sequence(x, [4, 2, 0], enforce_sorted=False),
        lambda: u.pack_padded_sequence(x, [4, 2]), lambda: u.pack_padded_sequence(x, lib.tensor([[4, 2, 1]])),
        lambda: u.pack_padded_sequence(lib.zeros(0, 3, 2), [0, 0, 0]),
        lambda: u.pack_padded_sequence(x, [4, 2, 1], batch_first=True),
        lambda: u.pad_packed_sequence(u.pack_padded_sequence(x, [4, 2, 1]), total_length=2),
        lambda: u.pad_sequence([lib.zeros(2, 3), lib.zeros(3, 4)]), lambda: u.pad_sequence([]),
        lambda: u.pad_sequence([lib.zeros(2, 3)], padding_side="up"), lambda: u.pad_sequence(3),
    ]


def test_utils_errors(torch: Any) -> None:
    for k, (a, b) in enumerate(zip(_util_error_cases(rg), _util_error_cases(torch))):
        expected = outcome(b)
        assert expected[0] != "ok", k
        assert outcome(a) == expected, k


def test_packed_input_with_hidden_state_in_caller_order(torch: Any) -> None:
    # hx is given in the caller's batch order; the module permutes it to the sorted order and back.
    tm, rm = both(torch, "GRU", 2, 3, bidirectional=True)
    rng = np.random.default_rng(8)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 5, 3)]
    h0 = rng.standard_normal((2, 3, 3))
    res = []
    for lib, m in ((torch, tm), (rg, rm)):
        packed = lib.nn.utils.rnn.pack_sequence([lib.tensor(s) for s in seqs], enforce_sorted=False)
        out, h_n = m(packed, lib.tensor(h0))
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        res.append([out.data, out.batch_sizes, out.sorted_indices, h_n])
    for a, b in zip(res[1], res[0]):
        _same(a, b)


def test_functional_forms_refuse_a_wrong_parameter_count(torch: Any) -> None:
    def call(lib: Any) -> Any:
        m = lib.nn.GRU(2, 3)
        return lib.gru(lib.zeros(4, 1, 2), lib.zeros(1, 1, 3), m._flat_weights[:3], True, 1, 0.0, False, False, False)
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))


def test_functional_lstm_on_packed_data_matches(torch: Any) -> None:
    tm, rm = both(torch, "LSTM", 2, 3, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(9)
    seqs = [rng.standard_normal((n, 2)) for n in (4, 3, 1)]
    results = []
    for lib, m in ((torch, tm), (rg, rm)):
        p = lib.nn.utils.rnn.pack_sequence([lib.tensor(s) for s in seqs])
        hx = (lib.zeros(4, 3, 3, dtype=lib.float64), lib.zeros(4, 3, 3, dtype=lib.float64))
        results.append(lib.lstm(p.data, p.batch_sizes, hx, m._flat_weights, True, 2, 0.0, False, True))
    for t, r in zip(*results):
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=1e-10)
