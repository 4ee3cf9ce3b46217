"""Containers, layers and losses against real PyTorch (weights copied from torch)."""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=rtol, atol=atol)


# -- containers --------------------------------------------------------------------------------


def test_sequential_operations(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        s = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Tanh())
        record = [len(s), type(s[1]).__name__, type(s[-1]).__name__, type(s[1:]).__name__, len(s[1:])]
        s.append(nn.Sigmoid())
        s.insert(1, nn.Identity())
        record.append([type(m).__name__ for m in s])
        popped = s.pop(2)
        record.append(type(popped).__name__)
        del s[0]
        record.append(list(s._modules))
        s[0] = nn.ReLU()
        record.append(repr(s))
        record.append(repr(s + nn.Sequential(nn.Tanh())))
        record.append(repr(s * 2))
        s.extend([nn.Tanh()])
        s += nn.Sequential(nn.ReLU())
        record.append(repr(s))
        named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
        record.append([n for n, _ in named.named_children()])
        record.append(outcome(lambda: s[10]))
        record.append(outcome(lambda: nn.Sequential() + [1]))
        outs.append(record)
    assert outs[0] == outs[1]


def test_sequential_forward_chain(torch: Any) -> None:
    r = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 2), rg.nn.LogSoftmax(dim=1))
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.LogSoftmax(dim=1))
    r.load_state_dict({k: rg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out_r, out_t = r(rg.tensor(x)), t(torch.tensor(x))
    close(out_r, out_t.detach())
    out_r.sum().backward()
    out_t.sum().backward()
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        close(p.grad, q.grad)


def test_module_list_and_dict(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU()])
        record: list[Any] = [repr(ml), repr(nn.ModuleList()), len(ml), type(ml[-2]).__name__, len(ml[1:3])]
        ml.append(nn.Sigmoid())
        ml.insert(0, nn.Identity())
        ml.extend([nn.Tanh()])
        ml += [nn.ReLU()]
        del ml[1]
        record.append(list(ml._modules))
        record.append(type(ml.pop(0)).__name__)
        ml[0] = nn.Sigmoid()
        record.append(repr(ml))
        record.append(repr(ml + nn.ModuleList([nn.Tanh()])))
        record.append(outcome(lambda: ml[100]))
        record.append(outcome(lambda: ml.extend(3)))
        record.append(outcome(lambda: ml(1)))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md["c"] = nn.Sigmoid()
        md.update([("d", nn.Identity())])
        record += [list(md.keys()), "a" in md, len(md), type(md.pop("b")).__name__, list(md), repr(md)]
        record.append(outcome(lambda: md.update([("x",)])))
        record.append(outcome(lambda: md.update(3)))
        md.clear()
        record.append(len(md))
        outs.append(record)
    assert outs[0] == outs[1]


def test_parameter_list_and_dict(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.ones(3, dtype=lib.float64)])
        pl.append(lib.zeros(2, 3))
        pl.extend([nn.Parameter(lib.ones(1), requires_grad=False)])
        record: list[Any] = [len(pl), [type(p).__name__ for p in pl], [p.requires_grad for p in pl],
                             [n for n, _ in pl.named_parameters()], repr(pl), len(pl[1:3]), repr(nn.ParameterList())]
        pl[0] = lib.full((2,), 3.0)
        record.append(pl[0].tolist())
        record.append(outcome(lambda: pl(1)))
        record.append(outcome(lambda: pl.extend(lib.ones(2))))
        pd = nn.ParameterDict({"b": nn.Parameter(lib.ones(1)), "a": lib.zeros(2)})
        pd["c"] = lib.ones(2, 2)
        pd.update([("d", lib.ones(1))])
        record += [list(pd.keys()), [n for n, _ in pd.named_parameters()], "a" in pd, len(pd), repr(pd)]
        record.append(pd.get("zz", 5))
        record.append(pd.pop("b").tolist())
        record.append(pd.setdefault("e", lib.ones(1)).tolist())
        record.append(list(pd))
        record.append(outcome(lambda: pd[1]))
        record.append(outcome(lambda: pd(1)))
        record.append(list((pd | nn.ParameterDict({"z": lib.ones(1)})).keys()))
        pd.clear()
        record.append(len(pd))
        outs.append(record)
    assert outs[0] == outs[1]


# -- layers ------------------------------------------------------------------------------------


def test_linear_matches_torch(torch: Any) -> None:
    t = torch.nn.Linear(4, 3)
    r = rg.nn.Linear(4, 3)
    with rg.no_grad():
        r.weight.copy_(rg.tensor(t.weight.detach().numpy()))
        r.bias.copy_(rg.tensor(t.bias.detach().numpy()))
    rng = np.random.default_rng(1)
    for shape in ((5, 4), (4,), (2, 3, 4)):
        x = rng.standard_normal(shape).astype(np.float32)
        xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out_r, out_t = r(xr), t(xt)
        assert out_r.shape == out_t.shape
        close(out_r, out_t.detach())
        g = rng.standard_normal(out_t.shape).astype(np.float32)
        out_r.backward(rg.tensor(g))
        out_t.backward(torch.tensor(g))
        close(xr.grad, xt.grad)
    close(r.weight.grad, t.weight.grad, rtol=1e-4)
    close(r.bias.grad, t.bias.grad, rtol=1e-4)
    assert repr(r) == repr(t) and repr(rg.nn.Linear(2, 1, bias=False)) == repr(torch.nn.Linear(2, 1, bias=False))
    nb = rg.nn.Linear(2, 1, bias=False)
    assert nb.bias is None and [n for n, _ in nb.named_parameters()] == ["weight"]
    assert rg.nn.Linear(2, 2, dtype=rg.float64).weight.dtype == rg.float64


def test_linear_default_init_distribution() -> None:
    rg.manual_seed(0)
    lin = rg.nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)  # kaiming_uniform(a=sqrt(5)) and the bias share this bound
    w = np.array(lin.weight.tolist())
    b = np.array(lin.bias.tolist())
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # U(-a, a) has std a/sqrt(3)
    assert abs(w.mean()) < 0.01 * bound
    rg.manual_seed(0)
    assert rg.nn.Linear(50, 400).weight.tolist() == lin.weight.tolist()  # seeded by retrograd's generator


def test_identity_flatten_unflatten(torch: Any) -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for module in ("Identity()", "Flatten()", "Flatten(0, 1)", "Flatten(-2)", "Unflatten(2, (2, 2))",
                   "Unflatten(-1, (2, -1))", "Unflatten(1, [3, 1])"):
        r = eval(f"rg.nn.{module}")
        t = eval(f"torch.nn.{module}")
        assert repr(r) == repr(t)
        out_r, out_t = r(rg.tensor(x)), t(torch.tensor(x))
        assert out_r.shape == out_t.shape and out_r.tolist() == out_t.tolist()
    assert outcome(lambda: rg.nn.Unflatten(1, (2, 2))(rg.ones(2, 3)))[0] == \
        outcome(lambda: torch.nn.Unflatten(1, (2, 2))(torch.ones(2, 3)))[0]
    for bad in ((2, 2.0), 5):
        assert outcome(lambda: rg.nn.Unflatten(1, bad)) == outcome(lambda: torch.nn.Unflatten(1, bad))
    ident = rg.nn.Identity(3, unused=True)
    t = rg.ones(2)
    assert ident(t) is t


@pytest.mark.parametrize("name", ["ReLU()", "ReLU(inplace=True)", "Tanh()", "Sigmoid()", "Softmax(dim=1)",
                                  "Softmax(dim=0)", "LogSoftmax(dim=1)", "LogSoftmax(dim=-1)", "Softmax()"])
def test_activations(torch: Any, name: str) -> None:
    x = np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.5]], dtype=np.float32)
    r, t = eval(f"rg.nn.{name}"), eval(f"torch.nn.{name}")
    assert repr(r) == repr(t)
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Softmax() warns about the implicit dim in torch
        out_r, out_t = r(xr * 1), t(xt * 1)
    close(out_r, out_t.detach())
    assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = np.array([[1.0, -2.0, 0.5], [0.1, 0.2, 0.3]], dtype=np.float32)
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    close(xr.grad, xt.grad)


# -- losses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss"])
def test_regression_losses(torch: Any, name: str, reduction: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    ar, at = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    br, bt = rg.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    r, t = getattr(rg.nn, name)(reduction=reduction), getattr(torch.nn, name)(reduction=reduction)
    assert repr(r) == repr(t) and r.reduction == reduction
    lr, lt = r(ar, br), t(at, bt)
    assert lr.shape == lt.shape and lr.dtype == rg.float32
    close(lr, lt.detach())
    (lr * lr).sum().backward()
    (lt * lt).sum().backward()
    close(ar.grad, at.grad, rtol=1e-4)
    close(br.grad, bt.grad, rtol=1e-4)


def test_loss_arguments(torch: Any) -> None:
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert rg.nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert rg.nn.L1Loss(reduce=False).reduction == "none"
    assert outcome(lambda: rg.nn.MSELoss(reduction="bad")(rg.ones(2), rg.ones(2))) == \
        outcome(lambda: torch.nn.MSELoss(reduction="bad")(torch.ones(2), torch.ones(2)))
    with pytest.warns(UserWarning, match="Using a target size"):
        rg.nn.MSELoss()(rg.ones(3, 1), rg.ones(3))
    w = rg.tensor([1.0, 2.0, 3.0])
    ce = rg.nn.CrossEntropyLoss(weight=w, label_smoothing=0.1, ignore_index=1)
    assert [n for n, _ in ce.named_buffers()] == ["weight"] and ce.weight is w
    assert list(ce.state_dict()) == ["weight"]
    assert rg.nn.CrossEntropyLoss().weight is None and list(rg.nn.NLLLoss().state_dict()) == []


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 2},
                                    {"weight": [0.2, 1.0, 3.0, 0.5]}, {"label_smoothing": 0.2}])
def test_classification_losses(torch: Any, kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    target = np.array([0, 2, 3, 2, 1])
    for name in ("CrossEntropyLoss", "NLLLoss"):
        if name == "NLLLoss" and "label_smoothing" in kwargs:
            continue
        kw_r = {k: rg.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        kw_t = {k: torch.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        xr, xt = rg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        inp_r = xr if name == "CrossEntropyLoss" else xr.log_softmax(1)
        inp_t = xt if name == "CrossEntropyLoss" else xt.log_softmax(1)
        lr = getattr(rg.nn, name)(**kw_r)(inp_r, rg.tensor(target))
        lt = getattr(torch.nn, name)(**kw_t)(inp_t, torch.tensor(target))
        close(lr, lt.detach())
        lr.sum().backward()
        lt.sum().backward()
        close(xr.grad, xt.grad, rtol=1e-4)


# -- dropout -----------------------------------------------------------------------------------


def test_dropout(torch: Any) -> None:
    assert repr(rg.nn.Dropout()) == repr(torch.nn.Dropout())
    assert repr(rg.nn.Dropout(0.2, True)) == repr(torch.nn.Dropout(0.2, True))
    assert outcome(lambda: rg.nn.Dropout(1.5)) == outcome(lambda: torch.nn.Dropout(1.5))
    d = rg.nn.Dropout(0.25)
    x = rg.ones(200, 100, requires_grad=True)
    rg.manual_seed(0)
    y = d(x)
    kept = np.array(y.tolist()) != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(np.array(y.tolist())[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.array(x.grad.tolist()), kept / 0.75, rtol=1e-6)
    rg.manual_seed(0)
    assert d(x).tolist() == y.tolist()  # the mask comes from retrograd's generator
    d.eval()
    assert d(x) is x
    assert rg.nn.Dropout(0.0)(x) is x
    assert rg.nn.Dropout(1.0)(x).abs().sum().item() == 0
    z = rg.ones(10)
    out = rg.nn.Dropout(0.5, inplace=True)(z)
    assert out is z and z._version == 1
