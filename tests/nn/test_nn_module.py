"""nn.Parameter and nn.Module against real PyTorch: registration order, traversal, state_dict,
train/eval, zero_grad, conversion, hooks, repr and error messages."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def build(lib: Any) -> Any:
    """The same small model class, written once for both libraries."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(lib.tensor([1.0, 2.0]))
            self.register_buffer("count", lib.tensor([0.0]))
            self.register_buffer("scratch", lib.tensor([5.0]), persistent=False)
            self.lin = nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            return self.lin(x * self.scale)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.first = Block()
            self.gain = nn.Parameter(lib.tensor(0.5))
            self.body = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2))
            self.shared = self.body[0]  # registered twice: visited once
            self.heads = nn.ModuleList([nn.Tanh(), nn.Sigmoid()])
            self.plain = lib.tensor([9.0])  # a plain attribute, not registered

        def forward(self, x: Any) -> Any:
            h = self.body(self.first(x)) * self.gain
            return self.heads[0](h) + self.heads[1](h)

    return Net()


def copy_weights(src: Any, dst: Any) -> None:
    """Copy every parameter and buffer from a torch module into the retrograd one (same names)."""
    theirs = src.state_dict()
    with rg.no_grad():
        for name, value in dst.state_dict(keep_vars=True).items():
            value.copy_(rg.tensor(theirs[name].detach().numpy()))


# -- Parameter ---------------------------------------------------------------------------------


def test_parameter_defaults_and_storage(torch: Any) -> None:
    for lib in (rg, torch):
        src = lib.tensor([1.0, 2.0])
        p = lib.nn.Parameter(src)
        assert type(p).__name__ == "Parameter" and isinstance(p, lib.Tensor)
        assert p.requires_grad and p.is_leaf and p.grad_fn is None
        with lib.no_grad():
            p.add_(1)
        assert src.tolist() == [2.0, 3.0]
        assert src._version == p._version == 1
        assert type(p * 2).__name__ == "Tensor" and type(p.detach()).__name__ == "Tensor"
        q = lib.nn.Parameter(lib.tensor([1.0]) * 2)  # a non-leaf becomes a leaf
        assert q.is_leaf and q.requires_grad
        assert not lib.nn.Parameter(lib.ones(1), requires_grad=False).requires_grad
        assert lib.nn.Parameter().shape == (0,)
    assert repr(rg.nn.Parameter(rg.tensor([1.0, 2.0]))) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert repr(rg.nn.Parameter(rg.tensor([1.0]), False)) == repr(torch.nn.Parameter(torch.tensor([1.0]), False))
    assert outcome(lambda: rg.nn.Parameter(rg.tensor([1, 2])))[0] == outcome(
        lambda: torch.nn.Parameter(torch.tensor([1, 2])))[0]


def test_parameter_copy_and_pickle_keep_type() -> None:
    p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    p.grad = rg.tensor([0.5, 0.5])
    c = copy.deepcopy(p)
    assert type(c) is rg.nn.Parameter and c.requires_grad and c.grad.tolist() == [0.5, 0.5]
    with rg.no_grad():
        c.add_(1)
    assert p.tolist() == [1.0, 2.0]
    u = pickle.loads(pickle.dumps(rg.nn.Parameter(rg.tensor([3.0]), requires_grad=False)))
    assert type(u) is rg.nn.Parameter and not u.requires_grad and u.tolist() == [3.0]


# -- registration and traversal ----------------------------------------------------------------


def test_traversal_order_matches_torch(torch: Any) -> None:
    ours, theirs = build(rg), build(torch)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(ours, method)()] == [n for n, _ in getattr(theirs, method)()], method
    assert [n for n, _ in ours.named_parameters(prefix="net", recurse=True)] == \
        [n for n, _ in theirs.named_parameters(prefix="net")]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["gain"]
    assert [n for n, _ in ours.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in ours.named_modules(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_modules(remove_duplicate=False)]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "plain" not in dict(ours.named_buffers())


def test_forward_values_and_grads_match_torch(torch: Any) -> None:
    ours, theirs = build(rg), build(torch)
    copy_weights(theirs, ours)
    x = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 0.3]], dtype=np.float32)
    out_r, out_t = ours(rg.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out_r.tolist(), out_t.tolist(), rtol=1e-5, atol=1e-6)
    out_r.sum().backward()
    out_t.sum().backward()
    grads_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.tolist(), grads_t[name].grad.tolist(), rtol=1e-5, atol=1e-6)


def test_setattr_getattr_delattr(torch: Any) -> None:
    for lib in (rg, torch):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.ones(1))
        m.sub = lib.nn.Linear(1, 1)
        m.register_buffer("buf", lib.zeros(1))
        m.w = None  # allowed: a registered parameter may be set to None
        assert "w" in m._parameters and m.w is None and [n for n, _ in m.named_parameters()][0] == "sub.weight"
        m.buf = lib.ones(2)  # replaces the buffer
        assert m.buf.tolist() == [1.0, 1.0] and "buf" in m._buffers
        m.sub = lib.nn.ReLU()
        assert isinstance(m.sub, lib.nn.ReLU)
        m.x = lib.nn.Linear(1, 1)
        m.x = lib.nn.Parameter(lib.ones(1))  # a parameter replaces a module of the same name
        assert "x" in m._parameters and "x" not in m._modules
        m.y = lib.nn.Parameter(lib.ones(1))
        with pytest.raises(TypeError, match=r"cannot assign 'torch\.nn\.modules\.linear\.Linear' as parameter 'y'"):
            m.y = lib.nn.Linear(1, 1)
        del m.x, m.buf
        assert "x" not in m._parameters and "buf" not in m._buffers
        m.add_module("late", None)
        assert list(m.named_children()) == [("sub", m.sub)]
        m.register_module("other", lib.nn.Tanh())
        assert [n for n, _ in m.named_children()] == ["sub", "other"]
        assert not hasattr(m, "nothing")


def test_registration_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any) -> list[Any]:
        nn = lib.nn

        class EarlyParam(nn.Module):
            def __init__(self) -> None:
                self.w = nn.Parameter(lib.ones(1))

        class EarlyModule(nn.Module):
            def __init__(self) -> None:
                self.m = nn.ReLU()

        m = nn.Module()
        m.x = 1
        m.p = nn.Parameter(lib.ones(1))
        m.sub = nn.ReLU()
        m.register_buffer("buf", lib.ones(1))
        return [
            EarlyParam, EarlyModule,
            lambda: m.register_parameter(1, None), lambda: m.register_parameter("a.b", None),
            lambda: m.register_parameter("", None), lambda: m.register_parameter("x", None),
            lambda: m.register_parameter("y", lib.ones(1)),
            lambda: m.register_parameter("y", nn.Parameter(lib.ones(1)) * 2),
            lambda: m.register_buffer(1, None), lambda: m.register_buffer("a.b", None),
            lambda: m.register_buffer("", None), lambda: m.register_buffer("x", None),
            lambda: m.register_buffer("z", 3),
            lambda: m.add_module(1, None), lambda: m.add_module("a.b", None), lambda: m.add_module("", None),
            lambda: m.add_module("x", None), lambda: m.add_module("q", 3),
            lambda: setattr(m, "p", lib.ones(1)), lambda: setattr(m, "sub", 3), lambda: setattr(m, "buf", 3),
            lambda: m.nothing, lambda: m.train(1), lambda: m(1), lambda: nn.Module(3), lambda: nn.Module(a=1),
            lambda: m.get_submodule("sub.nothing"), lambda: m.get_submodule("x"),
            lambda: m.get_parameter("buf"), lambda: m.get_parameter("nothing"), lambda: m.get_buffer("p"),
            lambda: m.get_parameter("p"), lambda: m.get_buffer("buf"), lambda: m.get_submodule(""),
        ]

    for ours, theirs in zip(cases(rg), cases(torch), strict=True):
        assert outcome(ours) == outcome(theirs)


def test_buffer_class(torch: Any) -> None:
    for lib in (rg, torch):
        m = lib.nn.Module()
        m.x = lib.nn.Buffer(lib.ones(1), persistent=False)
        m.y = lib.nn.Buffer(lib.zeros(2))
        assert [n for n, _ in m.named_buffers()] == ["x", "y"]
        assert list(m.state_dict()) == ["y"]
        assert isinstance(m.y, lib.nn.Buffer) and not isinstance(lib.ones(1), lib.nn.Buffer)
        m.x = lib.zeros(1)  # stays non-persistent
        assert list(m.state_dict()) == ["y"]


# -- state_dict --------------------------------------------------------------------------------


def test_state_dict_round_trip(torch: Any) -> None:
    a, b = build(rg), build(rg)
    sd = a.state_dict()
    assert isinstance(sd, OrderedDict)
    assert all(not v.requires_grad for v in sd.values())
    assert a.state_dict(keep_vars=True)["gain"] is a.gain
    assert b.load_state_dict(sd) .missing_keys == []
    for (n1, v1), (n2, v2) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert n1 == n2 and v1.tolist() == v2.tolist()
    # the load copies in place: parameters keep their identity and their version moves
    p = b.first.lin.weight
    version = p._version
    b.load_state_dict(build(rg).state_dict())
    assert b.first.lin.weight is p and p._version == version + 1
    # torch state dicts load too (values copied into retrograd tensors)
    t = build(torch)
    b.load_state_dict({k: rg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_allclose(b.body[0].weight.tolist(), t.body[0].weight.tolist())
    assert repr(b.load_state_dict(a.state_dict())) == repr(t.load_state_dict(t.state_dict()))


def test_load_state_dict_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any) -> list[Any]:
        lin = lib.nn.Linear(2, 3)
        return [
            lambda: lin.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.ones(3), "extra": lib.ones(1)}),
            lambda: lin.load_state_dict({"weight": lib.ones(3, 2)}),
            lambda: lin.load_state_dict({"weight": lib.ones(2, 2)}, strict=False),
            lambda: lin.load_state_dict({"weight": 3, "bias": lib.ones(3)}),
            lambda: lin.load_state_dict([1]),
        ]

    for ours, theirs in zip(cases(rg), cases(torch), strict=True):
        assert outcome(ours) == outcome(theirs)
    r, t = rg.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    res_r = r.load_state_dict({"weight": rg.ones(3, 2), "junk": rg.ones(1)}, strict=False)
    res_t = t.load_state_dict({"weight": torch.ones(3, 2), "junk": torch.ones(1)}, strict=False)
    assert (res_r.missing_keys, res_r.unexpected_keys) == (res_t.missing_keys, res_t.unexpected_keys)
    assert r.weight.tolist() == [[1.0, 1.0]] * 3


def test_load_state_dict_assign() -> None:
    lin = rg.nn.Linear(2, 1)
    new_w = rg.ones(1, 2)
    lin.load_state_dict({"weight": new_w, "bias": rg.zeros(1)}, assign=True)
    assert type(lin.weight) is rg.nn.Parameter and lin.weight.requires_grad
    assert lin.weight.tolist() == [[1.0, 1.0]]


# -- modes, gradients, conversion --------------------------------------------------------------


def test_train_eval_recursive(torch: Any) -> None:
    for lib in (rg, torch):
        net = build(lib)
        assert net.training and all(m.training for m in net.modules())
        assert net.eval() is net
        assert not any(m.training for m in net.modules())
        net.train()
        assert all(m.training for m in net.modules())
        net.body.train(False)
        assert [m.training for m in net.modules()] == [True, True, True, False, False, False, False, True, True, True]


def test_zero_grad_modes(torch: Any) -> None:
    for lib in (rg, torch):
        net = build(lib)
        net(lib.ones(1, 2)).sum().backward()
        grads = [p.grad for p in net.parameters()]
        net.zero_grad(set_to_none=False)
        assert all(p.grad is g and g.abs().sum().item() == 0 for p, g in zip(net.parameters(), grads, strict=True))
        net.zero_grad()
        assert all(p.grad is None for p in net.parameters())


def test_requires_grad_apply_and_conversion(torch: Any) -> None:
    for lib in (rg, torch):
        net = build(lib)
        assert net.requires_grad_(False) is net
        assert not any(p.requires_grad for p in net.parameters())
        net.requires_grad_()
        visited: list[str] = []
        net.apply(lambda m: visited.append(type(m).__name__))
        assert visited[-1] == "Net" and visited[0] == "Linear"
        w = net.first.lin.weight
        w.grad = lib.ones_like(w)
        assert net.double() is net
        assert net.first.lin.weight is w and w.dtype == lib.float64 and w.grad.dtype == lib.float64
        assert net.first.count.dtype == lib.float64
        net.to(lib.float32)
        assert w.dtype == lib.float32 and w.grad.dtype == lib.float32
        net.to("cpu")
        assert net.float() is net and net.cpu() is net
    assert outcome(lambda: rg.nn.Linear(1, 1).to(rg.int64))[0] == outcome(
        lambda: torch.nn.Linear(1, 1).to(torch.int64))[0]


def test_visited_apply_order_matches_torch(torch: Any) -> None:
    orders = []
    for lib in (rg, torch):
        seen: list[str] = []
        build(lib).apply(lambda m: seen.append(type(m).__name__))
        orders.append(seen)
    assert orders[0] == orders[1]


# -- hooks -------------------------------------------------------------------------------------


def test_forward_hooks(torch: Any) -> None:
    results = []
    for lib in (rg, torch):
        lin = lib.nn.Linear(2, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            lin.bias.fill_(0.5)
        calls: list[str] = []
        h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        h2 = lin.register_forward_hook(lambda m, args, out: out + 1)
        h3 = lin.register_forward_pre_hook(lambda m, args: calls.append("first"), prepend=True)
        h4 = lin.register_forward_hook(lambda m, args, kwargs, out: calls.append(f"kw{sorted(kwargs)}"),
                                       with_kwargs=True)
        x = lib.tensor([[1.0, 1.0]])
        a = lin(x).tolist()
        h1.remove()
        h2.remove()
        b = lin(x).tolist()
        h3.remove()
        h4.remove()
        with lin.register_forward_hook(lambda m, args, out: out * 0):
            c = lin(x).tolist()
        d = lin(x).tolist()
        results.append((a, b, c, d, calls))
    assert results[0] == results[1]


def test_pre_hook_with_kwargs_and_always_call() -> None:
    class Echo(rg.nn.Module):
        def forward(self, x: Any, scale: float = 1.0) -> Any:
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    m = Echo()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 3.0}), with_kwargs=True)
    assert m(rg.tensor([1.0])).tolist() == [3.0]
    seen: list[Any] = []
    n = Echo()
    n.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="negative"):
        n(rg.tensor([1.0]), scale=-1.0)
    assert seen == [None]
    bad = Echo()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(rg.tensor([1.0]))


# -- repr and copies ---------------------------------------------------------------------------


def test_repr_matches_torch(torch: Any) -> None:
    assert repr(build(rg)) == repr(build(torch))
    for lib_pair in ((rg, torch),):
        made = [lib.nn.Sequential(OrderedDict(a=lib.nn.Linear(2, 2, bias=False), b=lib.nn.Softmax(dim=1)))
                for lib in lib_pair]
        assert repr(made[0]) == repr(made[1])


def test_deepcopy_and_pickle_module() -> None:
    net = build(rg)
    clone = copy.deepcopy(net)
    assert clone is not net and clone.shared is clone.body[0]
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]
    with rg.no_grad():
        clone.gain.fill_(7.0)
    assert net.gain.item() == 0.5
    restored = pickle.loads(pickle.dumps(rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.ReLU())))
    assert type(restored[0].weight) is rg.nn.Parameter
    assert restored(rg.ones(1, 2)).shape == (1, 2)
