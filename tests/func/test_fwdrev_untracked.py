"""Forward over reverse without tangent graphs: inside a ``grad`` nested in ``jvp`` whose results
come out detached, the JVP rules run with grad mode off (torch.func computes those tangents below
the grad level, where nothing records them); wherever a reverse transform outside needs the
tangents' graphs, they are still recorded. Also the array fast paths this uses (the softmax
family's JVPs, ``jvp``'s duals as detached aliases), all against torch.func / PyTorch's forward AD."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
import retrograd.func as rfunc

RS = np.random.RandomState(7)
SIZES = (6, 5, 4, 3)
PARAMS = [a for i, o in zip(SIZES[:-1], SIZES[1:]) for a in (RS.randn(i, o), RS.randn(o))]
VECTOR = [RS.randn(*a.shape) for a in PARAMS]
X, Y = RS.randn(8, SIZES[0]), RS.randint(0, SIZES[-1], 8)


def _loss(lib: Any, ps: Any, x: Any, y: Any) -> Any:
    """The benchmark's MLP loss: ``h @ W + b``, ReLU and tanh, cross-entropy (log_softmax + nll)."""
    h = x
    for i in range(0, len(ps), 2):
        h = h @ ps[i] + ps[i + 1]
        if i + 2 < len(ps):
            h = lib.relu(h) if i == 0 else h.tanh()
    return lib.nn.functional.cross_entropy(h, y)


def _hvp(lib: Any) -> list[np.ndarray]:
    x, y = lib.tensor(X), lib.tensor(Y)
    ps = tuple(lib.tensor(a) for a in PARAMS)
    vs = tuple(lib.tensor(a) for a in VECTOR)
    out = lib.func.jvp(lib.func.grad(lambda p: _loss(lib, p, x, y)), (ps,), (vs,))
    return [t.detach().numpy() for t in (*out[0], *out[1])]


def test_hvp_of_the_benchmark_mlp_equals_torch_func(torch: Any) -> None:
    for mine, theirs in zip(_hvp(rg), _hvp(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_tangents_inside_grad_nested_in_jvp_record_no_graph() -> None:
    # The primal graph is recorded (grad needs it), the tangents' is not: nothing outside can
    # differentiate them, since grad's results come out detached.
    seen: list[Any] = []

    def f(w: Any) -> Any:
        y = (w * w).sin()
        seen.append((y.requires_grad, fwAD.unpack_dual(y).tangent))
        return y.sum()

    _, tangent = rfunc.jvp(rfunc.grad(f), (rg.tensor([0.5, 1.0], dtype=rg.float64),),
                           (rg.tensor([1.0, -2.0], dtype=rg.float64),))
    (primal_tracked, inner_tangent), = seen
    assert primal_tracked
    assert inner_tangent is not None and not inner_tangent.requires_grad and inner_tangent.grad_fn is None
    w = np.array([0.5, 1.0])
    hessian_diag = 2 * np.cos(w * w) - 4 * w * w * np.sin(w * w)  # d2/dw2 sin(w^2), elementwise
    np.testing.assert_allclose(tangent.numpy(), hessian_diag * np.array([1.0, -2.0]), rtol=1e-12)


def test_the_flag_is_restored_after_the_transform_and_after_an_error() -> None:
    assert fwAD.UNTRACKED_TANGENTS == [False]

    def bad(w: Any) -> Any:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        rfunc.jvp(rfunc.grad(bad), (rg.ones(2),), (rg.ones(2),))
    assert fwAD.UNTRACKED_TANGENTS == [False]
    rfunc.jvp(rfunc.grad(lambda w: (w ** 3).sum()), (rg.ones(2),), (rg.ones(2),))
    assert fwAD.UNTRACKED_TANGENTS == [False]
    # Plain forward AD keeps PyTorch's behaviour: a tangent made from a tensor that requires
    # grad has a graph.
    with fwAD.dual_level():
        w = rg.ones(2, requires_grad=True)
        y = fwAD.make_dual(w, rg.ones(2)).sin()
        assert fwAD.unpack_dual(y).tangent.requires_grad


def _rev_fwd_rev(lib: Any) -> tuple[np.ndarray, np.ndarray]:
    """grad of a jvp of a grad: the tangents must keep their graphs here (the outer grad
    differentiates them); and a third derivative, a jvp of a grad of a grad."""
    fn = lib.func
    x0 = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64)
    v0 = lib.tensor([1.0, 0.5, -1.5], dtype=lib.float64)

    def f(x: Any) -> Any:
        return (x.sin() * x ** 2).sum() + lib.nn.functional.log_softmax(x, 0).sum() * x.sum()

    outer = fn.grad(lambda v: fn.jvp(fn.grad(f), (x0,), (v,))[1].pow(2).sum())(v0)
    inner = fn.grad(lambda x: (x.sin() * x ** 3).sum())
    third = fn.jvp(fn.grad(lambda x: inner(x).pow(2).sum()), (x0,), (v0,))[1]
    return outer.detach().numpy(), third.detach().numpy()


def test_reverse_over_forward_over_reverse_keeps_the_tangent_graphs(torch: Any) -> None:
    for mine, theirs in zip(_rev_fwd_rev(rg), _rev_fwd_rev(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_jvp_of_grad_with_inputs_that_require_grad_stays_differentiable(torch: Any) -> None:
    def run(lib: Any) -> np.ndarray:
        x = lib.tensor([0.2, 0.9], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([1.0, -1.0], dtype=lib.float64)
        hvp = lib.func.jvp(lib.func.grad(lambda w: (w.exp() * w).sum()), (x,), (v,))[1]
        (g,) = lib.autograd.grad(hvp.sum(), x)
        return g.numpy()

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("grad_on", [False, True])
def test_softmax_family_tangents_equal_pytorch(torch: Any, name: str, dtype: str, dim: int, grad_on: bool) -> None:
    x, t = RS.randn(4, 5), RS.randn(4, 5)

    def run(lib: Any) -> tuple[np.ndarray, bool]:
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            primal = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=grad_on)
            dual = fw.make_dual(primal, lib.tensor(t, dtype=getattr(lib, dtype)))
            tangent = fw.unpack_dual(getattr(lib.nn.functional, name)(dual, dim)).tangent
        return tangent.detach().numpy(), tangent.requires_grad

    (mine, mine_rg), (theirs, theirs_rg) = run(rg), run(torch)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)
    assert mine.dtype == theirs.dtype and mine_rg == theirs_rg


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family_tangents_of_inf_with_warnings_as_errors(torch: Any, name: str) -> None:
    x = np.array([[0.0, 1.0, 2.0]])
    t = np.array([[np.inf, 1.0, -np.inf]])

    def run(lib: Any) -> np.ndarray:
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(t))
            return fw.unpack_dual(getattr(lib.nn.functional, name)(dual, 1)).tangent.numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mine = run(rg)
    np.testing.assert_array_equal(mine, run(torch))


def test_jvp_duals_outputs_and_errors_as_pytorch(torch: Any) -> None:
    from tests.conftest import outcome

    for lib in (rg, torch):
        primal = lib.tensor([1.0, 2.0])
        out, tangent = lib.func.jvp(lambda a: a, (primal,), (lib.tensor([3.0, 4.0]),))
        assert out.tolist() == [1.0, 2.0] and tangent.tolist() == [3.0, 4.0]
        assert not out.requires_grad and not tangent.requires_grad
        # The input is left as it was: no tangent on it once the transform returns.
        assert lib.autograd.forward_ad.unpack_dual(primal).tangent is None
    for make in (lambda lib: (lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),
                 lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1, 2])),
                 lambda lib: (lib.tensor([1.0, 2.0]), lib.ones(3))):
        mine = outcome(lambda: rg.func.jvp(lambda a: a * 2, (make(rg)[0],), (make(rg)[1],)))
        theirs = outcome(lambda: torch.func.jvp(lambda a: a * 2, (make(torch)[0],), (make(torch)[1],)))
        assert mine == theirs
