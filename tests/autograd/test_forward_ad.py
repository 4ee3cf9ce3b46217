"""Forward-mode AD (``retrograd.autograd.forward_ad``) against PyTorch's ``torch.autograd.forward_ad``:
the dual-level API and its errors, tangents through ops, in-place writes and views, forward over
reverse (Hessian-vector products), custom Functions, gradcheck's forward check, and
``autograd.functional``'s forward-mode paths."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as rfw
from conftest import outcome
from retrograd.autograd import functional as RF

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
V = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 2))


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


# -- the API and its errors --------------------------------------------------------------------------


def _errors(lib: Any) -> list[tuple[str, str]]:
    fw = lib.autograd.forward_ad
    x = lib.tensor(X)
    out = [outcome(lambda: fw.make_dual(x, x)), outcome(lambda: fw.exit_dual_level())]
    with fw.dual_level():
        out += [
            outcome(lambda: fw.enter_dual_level()),
            outcome(lambda: fw.make_dual(lib.arange(3), lib.arange(3))),
            outcome(lambda: fw.make_dual(x, lib.arange(12).reshape(3, 4))),
            outcome(lambda: fw.make_dual(x, lib.ones(4))),
            outcome(lambda: fw.make_dual(x, x, level=3)),
            outcome(lambda: fw.unpack_dual(x, level=3)),
        ]
    return out


def test_api_errors_match_pytorch(torch: Any) -> None:
    assert _errors(rg) == _errors(torch)


def test_unpack_dual_and_levels(torch: Any) -> None:
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        x, v = lib.tensor(X), lib.tensor(V)
        assert fw.unpack_dual(x).tangent is None and fw.unpack_dual(x).primal is x  # outside a level
        with fw.dual_level() as level:
            assert level == 0
            d = fw.make_dual(x, v)
            unpacked = fw.unpack_dual(d)
            assert type(unpacked).__name__ == "UnpackedDualTensor" and unpacked._fields == ("primal", "tangent")
            assert unpacked.tangent is v
            assert fw.unpack_dual(unpacked.primal).tangent is None  # the primal carries no tangent
            assert fw.unpack_dual(d.detach()).tangent is None  # detach drops it, clone keeps it
            np.testing.assert_array_equal(_np(fw.unpack_dual(d.clone()).tangent), V)
            assert fw.unpack_dual(d.argmax()).tangent is None and fw.unpack_dual(d > 0).tangent is None
        assert fw.unpack_dual(d).tangent is None  # leaving the level forgets every tangent
        with fw.dual_level():
            assert fw.unpack_dual(d).tangent is None  # ... also in a later level


def test_make_dual_of_a_tensor_that_requires_grad_is_a_view(torch: Any) -> None:
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(V))
            assert type(d.grad_fn).__name__ == "ViewBackward0" and d._base is x


# -- tangents through ops -----------------------------------------------------------------------------


def _composite(lib: Any, x: Any, w: Any) -> list[Any]:
    F = lib.nn.functional
    h = x @ w
    return [
        (x * x + 2.0 - x.exp() / 3).sum(1),
        F.softmax(x, 1), F.log_softmax(x, 0), x.tanh() * x.sigmoid(), x.abs().sqrt(),
        h, lib.cat([x, x * 2], 0)[1:4, ::2], x.t().reshape(-1)[3:], x.max(1).values, x.amax(0),
        lib.where(x > 0, x, x ** 2), x.cumsum(1), x.norm(), x.mean(0, keepdim=True) - x,
        F.cross_entropy(x, lib.tensor([1, 0, 3])), lib.linalg.det(x[:, :3]), F.gelu(x), x[[0, 2]].prod(1),
    ]


def _tangents(lib: Any, fn: Any) -> list[np.ndarray]:
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(lib.tensor(X), lib.tensor(V))
        return [_np(fw.unpack_dual(o).tangent) for o in fn(lib, d, lib.tensor(W))]


def test_tangents_through_ops_match_pytorch(torch: Any) -> None:
    for mine, ref in zip(_tangents(rg, _composite), _tangents(torch, _composite)):
        np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-8)


def test_tangent_is_a_directional_derivative() -> None:
    """Against finite differences, independent of PyTorch: d/de f(x + e v)."""
    eps = 1e-6
    plus = _composite(rg, rg.tensor(X + eps * V), rg.tensor(W))
    minus = _composite(rg, rg.tensor(X - eps * V), rg.tensor(W))
    for mine, p, m in zip(_tangents(rg, _composite), plus, minus):
        np.testing.assert_allclose(mine, (_np(p) - _np(m)) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_no_tangent_work_outside_a_level() -> None:
    """The no-level path stores nothing on the outputs (one check per op, no allocation)."""
    x = rg.tensor(X, requires_grad=True)
    for y in (x * 2, x.tanh(), x.sum(0), x @ rg.tensor(W), rg.cat([x, x])):
        assert "_fw_grad" not in y.__dict__ and "_fw_view" not in y.__dict__


def test_in_place_and_writes_through_views_match_pytorch(torch: Any) -> None:
    def run(lib: Any) -> list[np.ndarray]:
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            y = lib.zeros(3, 4)
            y.mul_(2)
            y.add_(d)  # a tangent arrives in place
            y.mul_(d)
            z = lib.zeros(5, 4)
            z[1:4].copy_(d.exp())  # through a view: the base's tangent
            z[0].add_(d[2])
            padded = lib.nn.functional.pad(d.unsqueeze(0), (2, 1), mode="circular")
            return [_np(fw.unpack_dual(t).tangent) for t in (y, z, padded)]

    for mine, ref in zip(run(rg), run(torch)):
        np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-8)


def test_op_without_a_differentiable_rule_raises_pytorchs_error() -> None:
    """A rule computed outside the graph has no transpose: PyTorch's error, never a wrong tangent."""
    from retrograd.ops.op import Op
    from retrograd.tensor import Tensor

    opaque = Op("opaque_sin", np.sin, node="OpaqueSinBackward0",
                grads=(lambda grad, self: Tensor._make(grad._data * np.cos(self._data)),))
    with rfw.dual_level():
        d = rfw.make_dual(rg.tensor(X), rg.tensor(V))
        with pytest.raises(NotImplementedError) as err:
            opaque(d)
    assert str(err.value) == ("Trying to use forward AD with opaque_sin that does not support it because it has not "
                              "been implemented yet.")


# -- forward over reverse, reverse over forward -------------------------------------------------------


def _loss(lib: Any, x: Any, w: Any) -> Any:
    return (lib.tanh(x @ w) ** 2).sum() + (x.exp() * x).sum()


def _hvp_forward_over_reverse(lib: Any) -> np.ndarray:
    fw = lib.autograd.forward_ad
    x = lib.tensor(X, requires_grad=True)
    with fw.dual_level():
        d = fw.make_dual(x, lib.tensor(V))
        (g,) = lib.autograd.grad(_loss(lib, d, lib.tensor(W)), d)
        return _np(fw.unpack_dual(g).tangent)


def test_forward_over_reverse_is_the_hessian_vector_product(torch: Any) -> None:
    mine = _hvp_forward_over_reverse(rg)
    np.testing.assert_allclose(mine, _hvp_forward_over_reverse(torch), rtol=1e-6, atol=1e-8)
    reverse = RF.hvp(lambda x: _loss(rg, x, rg.tensor(W)), rg.tensor(X), rg.tensor(V))[1]
    np.testing.assert_allclose(mine, _np(reverse), rtol=1e-6, atol=1e-8)


def test_reverse_over_forward_differentiates_the_tangent(torch: Any) -> None:
    def run(lib: Any) -> list[np.ndarray]:
        fw = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(V, requires_grad=True)
        with fw.dual_level():
            t = fw.unpack_dual(_loss(lib, fw.make_dual(x, v), lib.tensor(W))).tangent
        assert t.requires_grad
        return [_np(g) for g in lib.autograd.grad(t, (x, v))]

    for mine, ref in zip(run(rg), run(torch)):
        np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-8)


# -- custom Functions -----------------------------------------------------------------------------------


def _custom(lib: Any) -> tuple[Any, Any]:
    class WithJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def jvp(ctx: Any, tx: Any, ty: Any) -> Any:
            x, y = ctx.saved_tensors
            return tx * y + x * ty

    class WithoutJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return WithJvp, WithoutJvp


def test_custom_function_jvp_matches_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        with_jvp, without = _custom(lib)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            tangent = _np(fw.unpack_dual(with_jvp.apply(d, lib.tensor(X))).tangent)  # y has none: zeros
            return tangent, outcome(lambda: without.apply(d))

    (mine, my_error), (ref, their_error) = run(rg), run(torch)
    np.testing.assert_allclose(mine, ref)
    assert my_error == their_error


# -- gradcheck, autograd.functional ---------------------------------------------------------------------


def test_gradcheck_checks_forward_ad(torch: Any) -> None:
    x = rg.tensor(X, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: _loss(rg, t, rg.tensor(W)), (x,), check_forward_ad=True)
    assert rg.autograd.gradcheck(lambda t: t.sin() * t, (x,), check_forward_ad=True, check_backward_ad=False)
    assert rg.autograd.gradgradcheck(lambda t: t.sin() * t, (x,), check_fwd_over_rev=True)

    def wrong(lib: Any) -> str:
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, t: Any) -> Any:
                return t * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2

            @staticmethod
            def jvp(ctx: Any, t: Any) -> Any:
                return t * 3  # wrong: only the forward check can see it

        t = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
        with pytest.raises(Exception) as err:
            lib.autograd.gradcheck(Wrong.apply, (t,), check_forward_ad=True)
        return f"{type(err.value).__name__}: {str(err.value).splitlines()[0]}"

    assert wrong(rg) == wrong(torch)


def test_functional_jvp_runs_forward_mode(torch: Any) -> None:
    def fn(lib: Any) -> Any:
        return lambda x: _loss(lib, x, lib.tensor(W)) * x

    mine = RF.jvp(fn(rg), rg.tensor(X), rg.tensor(V))
    ref = torch.autograd.functional.jvp(fn(torch), torch.tensor(X), torch.tensor(V))
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-6, atol=1e-8)
    calls: list[Any] = []
    with rfw.dual_level():  # inside a level of the caller's: the double-vjp trick, same values
        inner = RF.jvp(lambda x: calls.append(rfw.current_level()) or fn(rg)(x), rg.tensor(X), rg.tensor(V))
    np.testing.assert_allclose(_np(inner[1]), ref[1].numpy(), rtol=1e-6, atol=1e-8)
    forward_calls: list[Any] = []
    RF.jvp(lambda x: forward_calls.append(rfw.unpack_dual(x).tangent) or fn(rg)(x), rg.tensor(X), rg.tensor(V))
    assert forward_calls[0] is not None  # the function saw a dual tensor: one forward pass


def test_jacobian_forward_mode_uses_dual_tensors(torch: Any) -> None:
    seen: list[Any] = []

    def f(lib: Any) -> Any:
        def inner(x: Any, w: Any) -> Any:
            if lib is rg:
                seen.append(rfw.current_level())
            return (x @ w).tanh()
        return inner

    args = (X[:2, :3].copy(), W[:3].copy())
    mine = RF.jacobian(f(rg), tuple(rg.tensor(a) for a in args), vectorize=True, strategy="forward-mode")
    ref = torch.autograd.functional.jacobian(f(torch), tuple(torch.tensor(a) for a in args), vectorize=True,
                                             strategy="forward-mode")
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-6, atol=1e-8)
    assert seen and all(level is not None for level in seen)
