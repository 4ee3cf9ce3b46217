"""The optimizers beyond the first five (NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, Adafactor,
LBFGS, Muon) against real PyTorch: a float64 MLP with torch's initial weights, the same batches,
50 steps, the parameters equal to 1e-9 over each optimizer's option grid; state_dict layout,
round trips and loading a torch optimizer's state dict; defaults, repr and argument errors."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

CONFIGS = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("NAdam", {"lr": 0.01, "eps": 1e-3, "foreach": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.6), "eps": 1e-4, "foreach": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1, "eps": 1e-4}),
    ("Adamax", {"lr": 0.01, "maximize": True, "foreach": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "maximize": True, "foreach": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.5, "t0": 10, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.002, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.001, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.01)}),
    ("Rprop", {"lr": 0.001, "maximize": True, "foreach": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-4, 1e-2), "d": 2.0, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.05, "maximize": True}),
]

BATCHES = [(np.random.default_rng(i).standard_normal((6, 3)), np.random.default_rng(100 + i).standard_normal((6, 2)))
           for i in range(5)]


class Net:
    """A float64 MLP in either library; ``w3`` is a 3-d parameter (a batch of two 2x3 matrices)
    so that Adafactor's factored form covers more than two dimensions."""

    def __init__(self, lib: Any, weights: dict[str, np.ndarray]) -> None:
        self.lib = lib
        self.params = {k: lib.nn.Parameter(lib.tensor(v)) for k, v in weights.items()}

    def loss(self, x: np.ndarray, y: np.ndarray) -> Any:
        p = self.params
        h = self.lib.tanh(self.lib.tensor(x) @ p["w1"].T + p["b1"])
        z = (h @ p["w2"].T + p["b2"]).reshape(6, 1, 2)
        z = (z @ p["w3"]).sum(0) * p["s"]
        return ((z[:, :2] - self.lib.tensor(y)) ** 2).mean()


def weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {"w1": rng.standard_normal((4, 3)) * 0.5, "b1": rng.standard_normal(4) * 0.1,
            "w2": rng.standard_normal((2, 4)) * 0.5, "b2": rng.standard_normal(2) * 0.1,
            "w3": rng.standard_normal((6, 2, 3)) * 0.5, "s": np.array(1.5)}


def train(lib: Any, name: str, kwargs: dict[str, Any], steps: int = 50) -> tuple[Net, Any, list[float]]:
    net = Net(lib, weights())
    opt = getattr(lib.optim, name)(list(net.params.values()), **kwargs)
    losses = []
    for i in range(steps):
        x, y = BATCHES[i % len(BATCHES)]
        opt.zero_grad()
        loss = net.loss(x, y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return net, opt, losses


def to_rg(value: Any) -> Any:
    """A torch state dict with its tensors as retrograd tensors (dtype kept)."""
    if type(value).__name__ == "Tensor" and not isinstance(value, rg.Tensor):
        return rg.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: to_rg(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_rg(v) for v in value]
    return value


def assert_state_equal(ours: dict[Any, Any], theirs: dict[Any, Any], rtol: float = 1e-9) -> None:
    assert list(ours) == list(theirs)
    for key in theirs:
        a, b = ours[key], theirs[key]
        if type(b).__name__ == "Tensor":
            assert isinstance(a, rg.Tensor), key
            assert str(a.dtype) == str(b.dtype) and list(a.shape) == list(b.shape), key
            np.testing.assert_allclose(np.asarray(a.tolist()), b.numpy(), rtol=rtol, atol=1e-12, err_msg=str(key))
        elif isinstance(b, dict):
            assert_state_equal(a, b, rtol)
        else:
            assert a == pytest.approx(b, rel=rtol), key


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_fifty_steps_match_torch(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    net_r, opt_r, losses_r = train(rg, name, kwargs)
    net_t, opt_t, losses_t = train(torch, name, kwargs)
    assert opt_r.defaults == opt_t.defaults
    assert repr(opt_r) == repr(opt_t)
    np.testing.assert_allclose(losses_r, losses_t, rtol=1e-9)
    for key in net_t.params:
        np.testing.assert_allclose(net_r.params[key].tolist(), net_t.params[key].detach().numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=key)
    sd_r, sd_t = opt_r.state_dict(), opt_t.state_dict()
    assert sd_r["param_groups"] == sd_t["param_groups"]
    assert_state_equal(sd_r["state"], sd_t["state"])


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS[1::3], ids=[n for n, _ in CONFIGS[1::3]])
def test_load_torch_state_dict_and_continue(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    """25 steps in torch, its state dict (and weights) loaded into ours, 25 more steps in each:
    the same parameters as torch's 50; and our own state dict round trip does the same."""
    net_t, opt_t, _ = train(torch, name, kwargs, steps=25)
    saved = copy.deepcopy(opt_t.state_dict())
    net_r = Net(rg, {k: v.detach().numpy().copy() for k, v in net_t.params.items()})
    opt_r = getattr(rg.optim, name)(list(net_r.params.values()), **{**kwargs, "lr": 123.0})
    opt_r.load_state_dict(to_rg(saved))
    assert opt_r.param_groups[0]["lr"] == opt_t.param_groups[0]["lr"]
    own = copy.deepcopy(opt_r.state_dict())
    net_c = Net(rg, {k: np.array(v.tolist()) for k, v in net_r.params.items()})
    opt_c = getattr(rg.optim, name)(list(net_c.params.values()), **kwargs)
    opt_c.load_state_dict(own)
    for i in range(25, 50):
        x, y = BATCHES[i % len(BATCHES)]
        for _lib, net, opt in ((torch, net_t, opt_t), (rg, net_r, opt_r), (rg, net_c, opt_c)):
            opt.zero_grad()
            net.loss(x, y).backward()
            opt.step()
    for key in net_t.params:
        expected = net_t.params[key].detach().numpy()
        np.testing.assert_allclose(net_r.params[key].tolist(), expected, rtol=1e-9, atol=1e-12, err_msg=key)
        np.testing.assert_allclose(net_c.params[key].tolist(), expected, rtol=1e-9, atol=1e-12, err_msg=key)


def rosenbrock(lib: Any, x: Any) -> Any:
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[2]) ** 2 + 100 * (x[3] - x[2] ** 2) ** 2


LBFGS_CONFIGS = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "max_iter": 5, "history_size": 3},
    {"max_iter": 7, "history_size": 4, "line_search_fn": "strong_wolfe", "tolerance_change": 1e-12},
    {"lr": 0.1, "max_iter": 30, "max_eval": 12, "tolerance_grad": 1e-5},
]


def logistic(lib: Any, w: Any, i: int) -> Any:
    x = np.random.default_rng(50 + i).standard_normal((20, 4))
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0]) > 0).astype(np.float64)
    z = lib.tensor(x) @ w
    return (lib.nn.functional.softplus(z) - lib.tensor(y) * z).mean() + 0.01 * (w**2).sum()


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS, ids=[str(i) for i in range(len(LBFGS_CONFIGS))])
def test_lbfgs_rosenbrock_and_logistic_match_torch(torch: Any, kwargs: dict[str, Any]) -> None:
    """One step (up to max_iter iterations) on Rosenbrock, and 6 steps on a regularised logistic
    regression with new data each step. (PyTorch's kernels fuse a multiply-add in ``add(alpha=)``,
    so the two differ in the last bit; on Rosenbrock's curved valley and in a line search along an
    almost flat direction such differences grow without bound over hundreds of iterations, so
    the comparison stays where they cannot.)"""
    results = []
    for lib in (rg, torch):
        x = lib.nn.Parameter(lib.tensor([-1.5, 2.0, 0.5, -0.3], dtype=lib.float64))
        w = lib.nn.Parameter(lib.tensor([0.3, 0.1, -0.2, 0.4], dtype=lib.float64))
        opt = lib.optim.LBFGS([x], **kwargs)
        opt_w = lib.optim.LBFGS([w], **kwargs)

        def closure(x: Any = x, opt: Any = opt, lib: Any = lib) -> Any:
            opt.zero_grad()
            loss = rosenbrock(lib, x)
            loss.backward()
            return loss

        losses = [float(opt.step(closure))]
        for i in range(6):
            def closure_w(i: int = i, w: Any = w, opt_w: Any = opt_w, lib: Any = lib) -> Any:
                opt_w.zero_grad()
                loss = logistic(lib, w, i)
                loss.backward()
                return loss

            losses.append(float(opt_w.step(closure_w)))
        counts = [(s["func_evals"], s["n_iter"], len(s["old_dirs"]), len(s["ro"]), sorted(s))
                  for s in (opt.state_dict()["state"][0], opt_w.state_dict()["state"][0])]
        results.append((losses, x.tolist(), w.tolist(), counts, opt.state_dict()["param_groups"]))
    (lr, xr, wr, cr, gr), (lt, xt, wt, ct, gt) = results
    assert (cr, gr) == (ct, gt)
    np.testing.assert_allclose(lr, lt, rtol=1e-9)
    np.testing.assert_allclose(xr, xt, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(wr, wt, rtol=1e-9, atol=1e-12)


def test_state_keys_and_dtypes_match_torch(torch: Any) -> None:
    for name, _ in CONFIGS[::3]:
        out = []
        for lib in (rg, torch):
            p = lib.nn.Parameter(lib.ones(2, 3, dtype=lib.float64))
            q = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
            opt = getattr(lib.optim, name)([p, q])
            p.grad, q.grad = lib.ones(2, 3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
            opt.step()
            out.append({k: {n: (str(v.dtype), tuple(v.shape)) for n, v in s.items()}
                        for k, s in opt.state_dict()["state"].items()})
        assert out[0] == out[1], name


def errors(lib: Any) -> list[Any]:
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    m = lib.nn.Parameter(lib.ones(2, 2))
    o = lib.optim
    cases = []
    for name in ("NAdam", "RAdam", "Adamax"):
        cls = getattr(o, name)
        cases += [lambda c=cls: c([p], lr=-0.1), lambda c=cls: c([p], eps=-1), lambda c=cls: c([p], betas=(1.0, 0.9)),
                  lambda c=cls: c([p], betas=(0.9, -0.1)), lambda c=cls: c([p], weight_decay=-1),
                  lambda c=cls: c([p], lr=lib.tensor([0.1, 0.2]))]
    cases += [
        lambda: o.NAdam([p], momentum_decay=-1),
        lambda: o.Adadelta([p], lr=-1), lambda: o.Adadelta([p], rho=1.5), lambda: o.Adadelta([p], eps=-1),
        lambda: o.Adadelta([p], weight_decay=-1), lambda: o.ASGD([p], lr=-1), lambda: o.ASGD([p], weight_decay=-1),
        lambda: o.Rprop([p], lr=-1), lambda: o.Rprop([p], etas=(1.5, 2.0)), lambda: o.Rprop([p], etas=(0.5, 0.9)),
        lambda: o.Adafactor([p], lr=-1), lambda: o.Adafactor([p], beta2_decay=0.5),
        lambda: o.Adafactor([p], eps=(-1, 1e-3)), lambda: o.Adafactor([p], eps=(None, -1)),
        lambda: o.Adafactor([p], d=0.5), lambda: o.Adafactor([p], weight_decay=-1),
        lambda: o.LBFGS([p], lr=-1), lambda: o.LBFGS([{"params": [p]}, {"params": [m]}]),
    ]
    return cases


def test_errors_match_torch(torch: Any) -> None:
    for ours, theirs in zip(errors(rg), errors(torch), strict=True):
        assert outcome(ours) == outcome(theirs)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop"])
def test_capturable_on_cpu_fails_at_step_as_torch(torch: Any, name: str) -> None:
    outs = []
    for lib in (rg, torch):
        p = lib.nn.Parameter(lib.ones(2))
        opt = getattr(lib.optim, name)([p], capturable=True)
        before = outcome(lambda opt=opt: opt.step())  # no gradient: nothing to do
        p.grad = lib.ones(2)
        outs.append((before, outcome(opt.step), p.tolist()))
    assert outs[0] == outs[1]


def test_lbfgs_unknown_line_search_and_no_grad_change(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        x = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float64))
        opt = lib.optim.LBFGS([x], line_search_fn="armijo")

        def closure(x: Any = x, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = (x**2).sum()
            loss.backward()
            return loss

        rec: list[Any] = [outcome(lambda opt=opt, closure=closure: opt.step(closure)), x.tolist()]
        y = lib.nn.Parameter(lib.tensor([0.0, 0.0], dtype=lib.float64))
        opt2 = lib.optim.LBFGS([y])

        def flat(y: Any = y, opt2: Any = opt2) -> Any:
            opt2.zero_grad()
            loss = (y**2).sum()
            loss.backward()
            return loss

        rec += [float(opt2.step(flat)), y.tolist(), dict(opt2.state_dict()["state"][0])]
        outs.append(rec)
    assert outs[0] == outs[1]


MUON_CONFIGS = [
    {},
    {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
    {"lr": 0.01, "momentum": 0.5, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3},
    {"lr": 0.01, "adjust_lr_fn": "original", "ns_coefficients": (3.0, -3.2, 1.2), "eps": 1e-5},
]


@pytest.mark.parametrize("kwargs", MUON_CONFIGS, ids=[str(i) for i in range(len(MUON_CONFIGS))])
def test_muon_fifty_steps_match_torch(torch: Any, kwargs: dict[str, Any]) -> None:
    """Muon on the MLP's two matrices (4x3 is tall, 2x4 wide: both branches of the transpose), the other
    parameters fixed; PyTorch's bfloat16 Newton-Schulz iteration reproduced bit for bit."""
    out = []
    for lib in (rg, torch):
        net = Net(lib, weights())
        opt = lib.optim.Muon([net.params["w1"], net.params["w2"]], **kwargs)
        for i in range(50):
            opt.zero_grad()
            net.loss(*BATCHES[i % len(BATCHES)]).backward()
            opt.step()
        sd = opt.state_dict()
        out.append(([np.array(net.params[k].tolist()) for k in ("w1", "w2")], sd["param_groups"],
                    {k: {n: np.array(v.tolist()) for n, v in s.items()} for k, s in sd["state"].items()}, repr(opt)))
    (pr, gr, sr, rr), (pt, gt, st, rt) = out
    assert gr == gt and rr == rt and list(sr) == list(st)
    for a, b in zip(pr, pt, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for k in st:
        np.testing.assert_allclose(sr[k]["momentum_buffer"], st[k]["momentum_buffer"], rtol=1e-9, atol=1e-12)


def test_muon_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any) -> list[Any]:
        m = lib.nn.Parameter(lib.ones(2, 3))
        v = lib.nn.Parameter(lib.ones(3))
        o = lib.optim
        return [lambda: o.Muon([m], lr=-1), lambda: o.Muon([m], momentum=-1), lambda: o.Muon([m], weight_decay=-1),
                lambda: o.Muon([m], adjust_lr_fn="other"), lambda: o.Muon([m, v])]

    for ours, theirs in zip(cases(rg), cases(torch), strict=True):
        assert outcome(ours) == outcome(theirs)


@pytest.mark.parametrize("name", ["ASGD", "Adadelta", "Adafactor", "Adamax", "LBFGS", "Muon", "NAdam", "RAdam", "Rprop"])
def test_signature_matches_torch(torch: Any, name: str) -> None:
    import inspect

    def params(cls: Any) -> list[Any]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]

    assert params(getattr(rg.optim, name)) == params(getattr(torch.optim, name))


def test_lbfgs_loads_torch_state_dict_and_continues(torch: Any) -> None:
    """Two LBFGS steps in torch; its weights and state dict (history lists, H_diag, d, t...)
    loaded into ours; three more steps in each give the same weights."""
    def closure_for(lib: Any, w: Any, opt: Any, i: int) -> Any:
        def closure() -> Any:
            opt.zero_grad()
            loss = logistic(lib, w, i)
            loss.backward()
            return loss
        return closure

    kwargs = {"history_size": 3, "max_iter": 4, "line_search_fn": "strong_wolfe"}
    w_t = torch.nn.Parameter(torch.tensor([0.3, 0.1, -0.2, 0.4], dtype=torch.float64))
    opt_t = torch.optim.LBFGS([w_t], **kwargs)
    for i in range(2):
        opt_t.step(closure_for(torch, w_t, opt_t, i))
    w_r = rg.nn.Parameter(rg.tensor(w_t.detach().numpy().copy()))
    opt_r = rg.optim.LBFGS([w_r], **kwargs)
    opt_r.load_state_dict(to_rg(copy.deepcopy(opt_t.state_dict())))
    assert sorted(opt_r.state[w_r]) == sorted(opt_t.state[w_t])
    for i in range(2, 5):
        opt_t.step(closure_for(torch, w_t, opt_t, i))
        opt_r.step(closure_for(rg, w_r, opt_r, i))
    np.testing.assert_allclose(w_r.tolist(), w_t.tolist(), rtol=1e-9, atol=1e-12)
    assert opt_r.state[w_r]["func_evals"] == opt_t.state[w_t]["func_evals"]


@pytest.mark.parametrize(("name", "kwargs"), [("NAdam", {}), ("NAdam", {"weight_decay": 0.1}), ("RAdam", {}),
                                              ("RAdam", {"betas": (0.5, 0.6)}), ("Adamax", {}), ("Adadelta", {}),
                                              ("ASGD", {"t0": 1}), ("Rprop", {})])
def test_differentiable_records_the_update_as_torch(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    """``differentiable=True`` runs the step in grad mode: a leaf parameter fails as in PyTorch
    (an in-place update of a leaf that requires grad), and a non-leaf one's three updates are
    recorded: the gradient of the result with respect to what it was made from equals PyTorch's."""
    out = []
    for lib in (rg, torch):
        leaf = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        leaf.grad = lib.ones(2, dtype=lib.float64)
        leaf_opt = getattr(lib.optim, name)([leaf], differentiable=True, **kwargs)
        rec: list[Any] = [outcome(leaf_opt.step)]
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        p = w * 1.0
        opt = getattr(lib.optim, name)([p], lr=0.1, differentiable=True, **kwargs)
        # (Rprop's and Adamax's later steps modify in place state that an earlier update saved:
        # PyTorch's backward then fails as ours does, so they take one step)
        for k in range(1 if name in ("Rprop", "Adamax") else 3):
            p.grad = (p * (k + 1.0)).sin().detach() + p * 0.5  # a gradient that depends on p
            opt.step()
        (p**2).sum().backward()
        rec += [p.tolist(), w.grad.tolist()]
        out.append(rec)
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-9)
