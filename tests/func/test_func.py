"""retrograd.func's reverse-mode transforms and module helpers against torch.func."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd import func as rfunc


def _libs(torch: Any) -> list[tuple[Any, Any]]:
    import torch.func as tfunc
    return [(rg, rfunc), (torch, tfunc)]


def _np(t: Any) -> Any:
    if isinstance(t, (tuple, list)):
        return [_np(x) for x in t]
    if isinstance(t, dict):
        return {k: _np(v) for k, v in t.items()}
    return t.detach().numpy()


def _close(a: Any, b: Any, tol: float = 1e-10) -> None:
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
    else:
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((3, 2))


def _same(torch: Any, fn: Any, tol: float = 1e-10) -> None:
    """``fn(lib, func)`` gives the same values under both libraries."""
    results = [_np(fn(lib, func)) for lib, func in _libs(torch)]
    _close(results[0], results[1], tol)


def test_grad_values_argnums_and_pytrees_match_torch(torch: Any) -> None:
    x0, m0 = _data()

    def case(lib: Any, func: Any) -> Any:
        x, m = lib.tensor(x0), lib.tensor(m0)
        f = lambda a, b: ((a.sin() @ b) ** 2).sum()
        out = [func.grad(f)(x, m), *func.grad(f, argnums=(0, 1))(x, m), func.grad(f, argnums=-1)(x, m)]
        tree = {"w": m, "b": [x, (x * 2,)]}
        g = func.grad(lambda p: (p["b"][0] @ p["w"]).tanh().sum() + (p["b"][1][0] ** 3).sum())(tree)
        out += [g["w"], g["b"][0], g["b"][1][0]]
        gv, v = func.grad_and_value(f)(x, m)
        return out + [gv, v]

    _same(torch, case)


def test_grad_nests_to_higher_derivatives(torch: Any) -> None:
    x0, _ = _data()

    def case(lib: Any, func: Any) -> Any:
        x = lib.tensor(x0)
        f = lambda a: (a ** 3).sin().sum()
        second = func.grad(lambda a: func.grad(f)(a).sum())(x)
        third = func.grad(lambda a: func.grad(lambda b: func.grad(f)(b).sum())(a).sum())(x)
        scalar = func.grad(func.grad(func.grad(lambda s: s ** 4)))(lib.tensor(1.5))
        # An inner transform closing over the outer variable.
        mixed = func.grad(lambda y: func.grad(lambda z: (z * y).sin().sum())(x).sum())(x * 0.5)
        return [second, third, scalar, mixed]

    _same(torch, case)


def test_grad_results_are_detached_at_top_level_and_differentiable_when_inputs_require_grad(torch: Any) -> None:
    x = rg.tensor([1.0, 2.0])
    g = rfunc.grad(lambda a: (a ** 3).sum())(x)
    assert not g.requires_grad and g.grad_fn is None
    xr = rg.tensor([1.0, 2.0], requires_grad=True)
    gr = rfunc.grad(lambda a: (a ** 3).sum())(xr)
    gr.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), [6.0, 12.0])  # d/dx sum(3x^2) = 6x
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.func.grad(lambda a: (a ** 3).sum())(t).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), t.grad.numpy())


def test_grad_has_aux_and_constant_outputs(torch: Any) -> None:
    def case(lib: Any, func: Any) -> Any:
        x = lib.tensor([1.0, -2.0, 0.5])
        g, aux = func.grad(lambda a: ((a * a).sum(), {"n": a.abs()}), has_aux=True)(x)
        zero = func.grad(lambda a: lib.ones(()))(x)
        as_int = func.grad(lambda a: a.sum().int())(x)
        g2, (v2, aux2) = func.grad_and_value(lambda a: ((a * 2).sum(), a), has_aux=True)(x)
        return [g, aux["n"], zero, as_int.float(), g2, v2, aux2]

    _same(torch, case)


def test_grad_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any, func: Any) -> list[Any]:
        x = lib.randn(3)
        s = lambda a: a.sum()
        return [
            lambda: func.grad(lambda a: a)(x),
            lambda: func.grad(s)(3.0),
            lambda: func.grad(s, argnums=1)(x),
            lambda: func.grad(s, argnums=())(x),
            lambda: func.grad(s, argnums=1.0)(x),
            lambda: func.grad(lambda a: (a.sum(), 1), has_aux=True)(x),
            lambda: func.grad(s, has_aux=True)(x),
            lambda: func.grad(lambda a: (a.sum(), 1, 2), has_aux=True)(x),
            lambda: func.grad(lambda a: 3.0)(x),
            lambda: func.grad(lambda a, b: (a * b).sum(), argnums=(0, 0))(x, x),
            lambda: func.grad(lambda: x.sum())(),
            lambda: func.grad(s)(lib.arange(3)),
        ]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


def test_vjp_matches_torch_for_pytrees_and_aux(torch: Any) -> None:
    x0, m0 = _data()

    def case(lib: Any, func: Any) -> Any:
        x, m = lib.tensor(x0), lib.tensor(m0)
        out, fn = func.vjp(lambda a, b: (a.sin() @ b).exp(), x, m)
        ct = lib.tensor([1.0, -3.0], dtype=lib.float64)
        gx, gm = fn(ct)
        out2, fn2, aux = func.vjp(lambda a: ({"s": a * a, "l": [a.cos()]}, a.sum()), x, has_aux=True)
        (g2,) = fn2({"s": lib.ones(3, dtype=lib.float64), "l": [x]})
        return [out, gx, gm, out2["s"], out2["l"][0], aux, g2]

    _same(torch, case)


def test_vjp_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any, func: Any) -> list[Any]:
        x = lib.randn(3)
        return [
            lambda: func.vjp(lambda a: a, 3.0),
            lambda: func.vjp(lambda a: 3.0, x),
            lambda: func.vjp(lambda a: a * 2, x)[1](lib.ones(2)),
            lambda: func.vjp(lambda a: (a * 2, a), x)[1]([lib.ones(3)]),
            lambda: func.vjp(lambda a: a * 2, x)[1]([lib.ones(3)]),
            lambda: func.vjp(lambda a: {"a": a, "b": [a]}, x)[1]({"a": lib.ones(3)}),
            lambda: func.vjp(lambda a: a * 2, x, has_aux=True),
            lambda: func.vjp(lambda a: (a * 2, 1), x, has_aux=True),
        ]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


def test_jacrev_matches_torch_for_argnums_several_outputs_and_chunks(torch: Any) -> None:
    x0, m0 = _data()

    def case(lib: Any, func: Any) -> Any:
        x, m = lib.tensor(x0), lib.tensor(m0)
        f = lambda a, b: (a.sin() @ b).exp()
        out = [func.jacrev(f)(x, m), *func.jacrev(f, argnums=(0, 1))(x, m), func.jacrev(f, chunk_size=1)(x, m)]
        two = func.jacrev(lambda a: (a.sin(), (a * a).sum()))(x)
        out += [two[0], two[1]]
        jac, aux = func.jacrev(lambda a: (a.exp(), a.sum()), has_aux=True)(x)
        hess = func.jacrev(func.jacrev(lambda a: (a ** 3).prod()))(x)  # reverse over reverse
        return out + [jac, aux, hess]

    _same(torch, case)


def test_jacrev_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any, func: Any) -> list[Any]:
        x = lib.randn(3)
        return [lambda: func.jacrev(lambda a: 3.0)(x), lambda: func.jacrev(lambda a: a * 2, chunk_size=0)(x),
                lambda: func.jacrev(lambda a: a * 2, argnums=2)(x)]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


def _module(lib: Any) -> Any:
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(2, 3)
            self.bn = nn.BatchNorm1d(3)
            self.b = nn.Linear(3, 3)
            self.b.weight = self.a.weight if False else self.b.weight

        def forward(self, x: Any) -> Any:
            return self.b(self.bn(self.a(x)).relu())

    lib.manual_seed(0)
    return Net()


def test_functional_call_uses_given_tensors_and_restores_the_module(torch: Any) -> None:
    rng = np.random.default_rng(1)
    values = {"a.weight": rng.standard_normal((3, 2)), "a.bias": rng.standard_normal(3),
              "b.weight": rng.standard_normal((3, 3)), "b.bias": rng.standard_normal(3),
              "bn.running_mean": rng.standard_normal(3), "bn.running_var": rng.random(3) + 0.5}
    x0 = rng.standard_normal((4, 2))

    def case(lib: Any, func: Any) -> Any:
        m = _module(lib).double()
        before = {k: v.detach().clone() for k, v in m.state_dict().items()}
        ids = {k: id(v) for k, v in m.named_parameters()}
        given = {k: lib.tensor(v) for k, v in values.items()}
        x = lib.tensor(x0)
        out_train = func.functional_call(m, given, (x,))
        m.eval()
        out_eval = func.functional_call(m, ({k: v for k, v in given.items() if "bn" not in k},
                                            {k: v for k, v in given.items() if "bn" in k}), x)
        after = m.state_dict()
        assert all((after[k] == before[k]).all() for k in before if "running" not in k and "num_batches" not in k)
        assert {k: id(v) for k, v in m.named_parameters()} == ids
        assert all(isinstance(v, lib.nn.Parameter) for v in m.parameters())
        return [out_train, out_eval, given["bn.running_mean"]]  # (the given buffer was updated in training)

    _same(torch, case)


def test_functional_call_restores_the_module_when_forward_raises() -> None:
    m = rg.nn.Linear(2, 2)
    w = m.weight
    with pytest.raises(RuntimeError):
        rfunc.functional_call(m, {"weight": rg.ones(5, 7)}, (rg.ones(1, 2),))
    assert m.weight is w and isinstance(m.weight, rg.nn.Parameter)


def test_functional_call_errors_and_tied_weights_match_torch(torch: Any) -> None:
    def cases(lib: Any, func: Any) -> list[Any]:
        nn = lib.nn
        m = nn.Linear(2, 2)
        p = {k: lib.ones_like(v) for k, v in m.named_parameters()}
        x = lib.ones(1, 2)

        class Tied(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = nn.Linear(2, 2)
                self.b = nn.Linear(2, 2)
                self.b.weight = self.a.weight

            def forward(self, x: Any) -> Any:
                return self.a(x) + self.b(x)

        t = Tied()
        z = lib.zeros(2, 2)
        return [
            lambda: func.functional_call(m, {"weight": lib.zeros(2, 2)}, (x,), strict=True),
            lambda: func.functional_call(m, {**p, "foo": lib.zeros(2, 2)}, (x,), strict=True),
            lambda: func.functional_call(m, (p, {"weight": lib.zeros(2, 2)}), (x,)),
            lambda: func.functional_call(m, 3, (x,)),
            lambda: func.functional_call(t, {"a.weight": z, "b.weight": lib.ones(2, 2)}, (x,)),
            lambda: func.functional_call(t, {"a.weight": z, "a.bias": z[0], "b.bias": z[0]}, (x,)).abs().sum().item(),
            lambda: func.functional_call(t, {"a.weight": z, "a.bias": z[0], "b.bias": z[0]}, (x,),
                                         tie_weights=False).abs().sum().item() > 0,
        ]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


def test_stack_module_state_matches_torch(torch: Any) -> None:
    def case(lib: Any, func: Any) -> Any:
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3)) for _ in range(4)]
        params, buffers = func.stack_module_state(models)
        assert all(v.is_leaf and v.requires_grad for v in params.values())
        assert all(not v.requires_grad for v in buffers.values())
        return [params, {k: v.float() for k, v in buffers.items()}]

    _same(torch, case)

    def cases(lib: Any, func: Any) -> list[Any]:
        ms = [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)]
        ms[1].eval()
        return [lambda: func.stack_module_state([]),
                lambda: func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 3)]),
                lambda: func.stack_module_state(ms)]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


def test_jacrev_of_pytrees_matches_torch(torch: Any) -> None:
    def case(lib: Any, func: Any) -> Any:
        p = {"a": lib.tensor([1.0, 2.0], dtype=lib.float64), "b": lib.tensor([[0.5]], dtype=lib.float64)}
        j = func.jacrev(lambda d: {"s": d["a"].sin() * d["b"].sum(), "t": (d["a"] ** 2).sum()})(p)
        h = func.jacrev(func.jacrev(lambda a, b: (a.sin() * b).sum(), argnums=(0, 1)), argnums=1)(p["a"], p["b"])
        return [j["s"]["a"], j["s"]["b"], j["t"]["a"], j["t"]["b"], *h]

    _same(torch, case)
