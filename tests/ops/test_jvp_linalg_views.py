"""Forward AD through the ops that refused it before (issue #13): ``as_strided``, the in-place
view ops, ``triangular_solve`` and ``cholesky_inverse``, against PyTorch's forward AD where it
is right and against hand-derived JVPs where PyTorch 2.13's is not; the fused LSTM layer still
refuses, as PyTorch does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

RNG = np.random.default_rng(13)


def _jvp(lib: Any, fn: Callable[..., Any], primals: list[np.ndarray], tangents: list[np.ndarray]) -> Any:
    """``fn``'s outputs' tangents (NumPy) with each primal made dual."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in zip(primals, tangents)]
        out = fn(lib, *duals)
        outs = out if isinstance(out, tuple) else (out,)
        return [fw.unpack_dual(o).tangent.detach().numpy().copy() for o in outs]


def _both(torch: Any, fn: Callable[..., Any], *shapes: tuple[int, ...]) -> None:
    primals = [RNG.standard_normal(s) for s in shapes]
    tangents = [RNG.standard_normal(s) for s in shapes]
    for mine, theirs in zip(_jvp(rg, fn, primals, tangents), _jvp(torch, fn, primals, tangents), strict=True):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


IN_PLACE_VIEWS: dict[str, tuple[Callable[..., Any], tuple[int, ...]]] = {
    "t_": (lambda lib, x: x.t_(), (2, 3)),
    "transpose_": (lambda lib, x: x.transpose_(0, 2), (2, 3, 4)),
    "swapdims_": (lambda lib, x: x.swapdims_(1, 0), (2, 3)),
    "swapaxes_": (lambda lib, x: x.swapaxes_(-1, 0), (2, 1, 3)),
    "squeeze_": (lambda lib, x: x.squeeze_(), (2, 1, 3, 1)),
    "squeeze_dim": (lambda lib, x: x.squeeze_(1), (2, 1, 3)),
    "squeeze_dims": (lambda lib, x: x.squeeze_((1, 3)), (2, 1, 3, 1)),
    "unsqueeze_": (lambda lib, x: x.unsqueeze_(-1), (2, 3)),
    "as_strided_": (lambda lib, x: x.as_strided_((2, 2), (1, 2), 1), (6,)),
    "chained": (lambda lib, x: x.unsqueeze_(0).t_() if x.dim() < 2 else x.t_().unsqueeze_(1).squeeze_(), (3, 2)),
}


@pytest.mark.parametrize("name", list(IN_PLACE_VIEWS))
def test_in_place_view_ops_carry_the_tangent_as_pytorch(torch: Any, name: str) -> None:
    fn, shape = IN_PLACE_VIEWS[name]
    _both(torch, lambda lib, x: fn(lib, x) * 1, shape)  # (then an out-of-place op on the reshaped tangent)


@pytest.mark.parametrize("name", ["t_", "squeeze_", "unsqueeze_", "as_strided_"])
def test_the_tangent_object_changes_in_place_as_in_pytorch(torch: Any, name: str) -> None:
    """``make_dual`` keeps the tangent given; ``x.t_()`` then reshapes that very tensor (PyTorch's
    ``self_t.t_()``); ``as_strided_`` too where the tangent's storage is laid out as the primal's."""
    fn, shape = IN_PLACE_VIEWS[name]
    found = {}
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        v = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        with fw.dual_level():
            x = fw.make_dual(lib.zeros(shape, dtype=lib.float64), v)
            fn(lib, x)
            t = fw.unpack_dual(x).tangent
            found[lib.__name__] = (tuple(v.shape), tuple(t.shape), t.detach().numpy().copy(), tuple(x.shape))
    mine, theirs = found["retrograd"], found["torch"]
    assert mine[0] == theirs[0] and mine[1] == theirs[1] == mine[3]
    np.testing.assert_array_equal(mine[2], theirs[2])


def test_as_strided_in_place_reads_a_tangent_of_another_layout_through_the_geometry(torch: Any) -> None:
    """A tangent laid out unlike its primal (here the primal is a slice of a bigger storage): the
    tangent is read through the geometry, with PyTorch's values (its tangent is copied to the
    primal's layout by make_dual)."""
    def fn(lib: Any, x: Any) -> Any:
        y = x[2:]
        return y.as_strided_((2, 2), (1, 2), 3) * 1

    _both(torch, lambda lib, x: fn(lib, x), (8,))
    base, tangent = np.arange(8.0), np.linspace(0, 1, 5)
    found = []
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(lib.tensor(base)[3:], lib.tensor(tangent))
            y.as_strided_((2, 2), (2, 1), 4)
            found.append(fw.unpack_dual(y).tangent.numpy().copy())
    np.testing.assert_array_equal(*found)


def test_a_write_through_a_view_reshaped_in_place_reaches_the_base_tangent(torch: Any) -> None:
    def fn(lib: Any, b: Any, d: Any) -> Any:
        w = b[:, 1:]
        w.t_()
        w.mul_(d)  # (d is 2x2: which of w's elements each factor meets depends on the transpose)
        return b * 1

    primals = [np.zeros((2, 3)), RNG.standard_normal((2, 2))]
    primals[0][:, 1:] = RNG.standard_normal((2, 2))
    tangents = [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 2))]
    np.testing.assert_allclose(_jvp(rg, fn, primals, tangents)[0], _jvp(torch, fn, primals, tangents)[0],
                               rtol=1e-12, atol=1e-12)


def test_a_leaf_tangent_that_requires_grad_is_refused_as_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        fw = lib.autograd.forward_ad
        v = lib.ones(2, 3, requires_grad=True)
        with fw.dual_level():
            x = fw.make_dual(lib.zeros(2, 3), v)
            x.t_()
        assert tuple(v.shape) == (2, 3) and tuple(x.shape) == (2, 3)  # nothing half-done

    assert outcome(lambda: run(rg)) == outcome(lambda: run(torch)) != ("ok", "")


def test_forward_over_reverse_through_an_in_place_view(torch: Any) -> None:
    """The tangent's graph records the view op too: its gradient flows back to the tangent."""
    grads = []
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        p = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        v = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        with fw.dual_level():
            x = fw.make_dual(p * 1, v * 1)
            x.transpose_(0, 1)
            y = (x * x).sum()
            t = fw.unpack_dual(y).tangent
            grads.append([g.numpy() for g in lib.autograd.grad(t, (p, v))])
    for mine, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


@pytest.mark.parametrize(("size", "stride", "offset"), [((2, 2), (1, 2), 1), ((3,), (2,), 0), ((2, 3), (3, 1), None)])
def test_as_strided_carries_the_tangent_as_pytorch(torch: Any, size: Any, stride: Any, offset: Any) -> None:
    _both(torch, lambda lib, x: x.as_strided(size, stride, offset), (6,))
    _both(torch, lambda lib, x: x.exp().as_strided(size, stride, offset).sin(), (2, 3))


def test_as_strided_of_a_slice_of_a_dual_tensor(torch: Any) -> None:
    """The geometry addresses the slice's storage (its base's); the slice's tangent need not share
    that layout."""
    _both(torch, lambda lib, x: x[1:, 1:].as_strided((2, 2), (1, 3), 4), (3, 3))
    _both(torch, lambda lib, x: x.t().as_strided((2, 3), (3, 1), 0), (3, 2))


def _upper_solve_jvp(a: np.ndarray, b: np.ndarray, da: np.ndarray, db: np.ndarray, upper: bool, transpose: bool,
                     unit: bool) -> np.ndarray:
    """d(op(T)^-1 b) with T the triangle of ``a`` the solve reads (unit diagonal if ``unit``):
    op(T)^-1 (db - op(dT) X); dT is the tangent's same triangle (strictly, if ``unit``)."""
    k = 1 if unit else 0
    tri = np.triu(a, k) if upper else np.tril(a, -k)
    dtri = np.triu(da, k) if upper else np.tril(da, -k)
    if unit:
        tri = tri + np.eye(a.shape[0])
    op_t, op_dt = (tri.T, dtri.T) if transpose else (tri, dtri)
    x = np.linalg.solve(op_t, b)
    return np.linalg.solve(op_t, db - op_dt @ x)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("upper", "transpose", "unit"),
                         [(True, False, False), (False, False, False), (False, True, False), (True, True, True),
                          (False, False, True)])
def test_triangular_solve_jvp(upper: bool, transpose: bool, unit: bool) -> None:
    """Against the derivative of what the forward computes (only one triangle of A is read)."""
    a = RNG.standard_normal((3, 3)) + 4 * np.eye(3)
    b, db, da = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)), RNG.standard_normal((3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (triangular_solve is deprecated)
        solution, coefficient = _jvp(rg, lambda lib, b_, a_: tuple(lib.triangular_solve(b_, a_, upper, transpose, unit)),
                                     [b, a], [db, da])
    np.testing.assert_allclose(solution, _upper_solve_jvp(a, b, da, db, upper, transpose, unit), rtol=1e-10)
    np.testing.assert_array_equal(coefficient, da)  # cloned_coefficient: A's tangent, as PyTorch's A_t


def test_triangular_solve_jvp_matches_pytorch_where_pytorch_is_right(torch: Any) -> None:
    """PyTorch 2.13 agrees for ``transpose=False`` and a tangent inside the triangle (it reads
    the whole tangent of A, and its transposed case is off: see the test above)."""
    a = np.triu(RNG.standard_normal((3, 3))) + 4 * np.eye(3)
    b, db, da = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)), np.triu(RNG.standard_normal((3, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fn = lambda lib, b_, a_: tuple(lib.triangular_solve(b_, a_))  # noqa: E731
        for mine, theirs in zip(_jvp(rg, fn, [b, a], [db, da]), _jvp(torch, fn, [b, a], [db, da]), strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_jvp(upper: bool) -> None:
    """X = (L L^T)^-1 (or (U^T U)^-1): dX = -X (dL L^T + L dL^T) X, hand-derived; PyTorch 2.13's
    forward AD fails its own gradcheck here (it is not an oracle)."""
    f = RNG.standard_normal((3, 3)) + 4 * np.eye(3)
    factor = np.triu(f) if upper else np.tril(f)
    d = np.triu(RNG.standard_normal((3, 3))) if upper else np.tril(RNG.standard_normal((3, 3)))
    (mine,) = _jvp(rg, lambda lib, a: lib.cholesky_inverse(a, upper), [factor], [d])
    low, dlow = (factor.T, d.T) if upper else (factor, d)
    x = np.linalg.inv(low @ low.T)
    np.testing.assert_allclose(mine, -x @ (dlow @ low.T + low @ dlow.T) @ x, rtol=1e-10)


def test_the_fused_lstm_layer_refuses_forward_ad_as_pytorch(torch: Any) -> None:
    """PyTorch's float32 CPU LSTM runs ``mkldnn_rnn_layer``, which has no JVP; so does ours."""
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(3, 2)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(4, 1, 3), lib.ones(4, 1, 3))
            return lstm(x)

    found, theirs = outcome(lambda: run(rg)), outcome(lambda: run(torch))
    assert found[0] == theirs[0] == "NotImplementedError"
    # (PyTorch's second line asks to file an issue at PyTorch's tracker; the first is the error)
    assert found[1] == theirs[1].splitlines()[0]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("activation", ["relu", "softmax", "log_softmax"])
def test_forward_over_reverse_hvp_through_the_written_out_rules(torch: Any, activation: str,
                                                                create_graph: bool) -> None:
    """H v by a JVP of the gradient runs the rules of ``threshold_backward``, ``softmax_backward``
    and ``log_softmax_backward`` (on arrays without a graph, as Tensors with one): against
    PyTorch's forward over reverse."""
    w0, v0 = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    x0 = RNG.standard_normal((3, 4))
    found = []
    for lib in (rg, torch):
        fw = lib.autograd.forward_ad
        w = lib.tensor(w0, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(w, lib.tensor(v0))
            h = lib.tensor(x0) @ dual
            out = getattr(h, activation)(1) if activation != "relu" else h.relu()
            loss = (out * out.detach().cos()).sum()
            (g,) = lib.autograd.grad(loss, dual, create_graph=create_graph)
            found.append(fw.unpack_dual(g).tangent.detach().numpy().copy())
    np.testing.assert_allclose(found[0], found[1], rtol=1e-10, atol=1e-12)
