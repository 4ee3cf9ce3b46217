"""The engine's gradient sums and bias reductions on arrays (``engine._sum_of``, ``_reduce_to``).

Where nothing would be recorded (no create_graph, no forward-AD level, no inference mode), two
gradients for one output are added, and a broadcast gradient is reduced over its leading dims,
by NumPy on the arrays instead of through the ``add`` and ``sum_to_size`` ops. Each must give
the very bits the op path gives (run here with the shortcut shut: ``PLAIN_FLOATS`` emptied), in
every case where it runs, and stay out of the way where a graph, a tangent or the inference flag
is wanted; and the gradients are PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd import engine

BITS = {4: np.uint32, 8: np.uint64}


@contextmanager
def _counting() -> Iterator[dict[str, int]]:
    """Counts how often the shortcuts run (the op they replace is not called then)."""
    taken = {"sum": 0, "reduce": 0}
    np_add, np_add_reduce = engine.np.add, engine.np.add.reduce

    class CountingNumPy:  # engine.np, with its two calls counted
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

        class add:  # noqa: N801 - stands for np.add
            def __new__(cls, *args: Any) -> Any:
                taken["sum"] += 1
                return np_add(*args)

            @staticmethod
            def reduce(*args: Any, **kwargs: Any) -> Any:
                taken["reduce"] += 1
                return np_add_reduce(*args, **kwargs)

    engine.np = CountingNumPy()  # type: ignore[assignment]
    try:
        yield taken
    finally:
        engine.np = np


@contextmanager
def _shut() -> Iterator[None]:
    """The shortcuts off: every sum and reduction through the ops, as before them."""
    plain = engine.PLAIN_FLOATS
    engine.PLAIN_FLOATS = frozenset()
    try:
        yield
    finally:
        engine.PLAIN_FLOATS = plain


def _bits(t: Any) -> tuple[Any, ...]:
    data = t._data
    return data.view(BITS[data.itemsize]).tolist(), str(data.dtype), data.shape, t.requires_grad, t.grad_fn


def _fan_out_and_bias(lib: Any, dtype: str) -> tuple[Callable[[], Any], list[Any]]:
    """A loss in which a value has three consumers (its node gets three gradients to add up) and a
    bias broadcast over a batch (its gradient is reduced over the leading dims), with a -0.0, an
    inf and a NaN among the values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(dtype)
    x[0, 0], x[1, 1] = -0.0, np.inf
    w = rng.standard_normal((4, 3)).astype(dtype)
    b = rng.standard_normal(3).astype(dtype)
    b[2] = np.nan
    params = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]

    def loss() -> Any:
        xt, wt, bt = params
        h = xt.tanh()
        y = h.mm(wt) + bt  # (bt: broadcast over the 5 rows)
        z = h * h + h.exp() * 0.5  # (h: three consumers)
        return (y * y).sum() + z.sum() + (bt.unsqueeze(0).expand(2, 3) * 3.0).sum()

    return loss, params


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_and_reductions_on_arrays_give_the_ops_bits(torch: Any, dtype: str) -> None:
    loss, params = _fan_out_and_bias(rg, dtype)
    with _counting() as taken:
        fast = rg.autograd.grad(loss(), params)
    assert taken["sum"] >= 2 and taken["reduce"] >= 1, taken
    with _shut(), _counting() as shut:
        slow = rg.autograd.grad(loss(), params)
    assert shut == {"sum": 0, "reduce": 0}
    assert [_bits(g) for g in fast] == [_bits(g) for g in slow]
    # backward() takes the same sums (the leaves' .grad), and the gradients are PyTorch's.
    for p in params:
        p.grad = None
    loss().backward()
    assert [_bits(p.grad) for p in params] == [_bits(g) for g in fast]
    tloss, tparams = _fan_out_and_bias(torch, dtype)
    for ours, ref in zip(fast, torch.autograd.grad(tloss(), tparams)):
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)


def test_the_hessian_vector_product_second_backward_sums_on_arrays(torch: Any) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((6, 7), (7,), (7, 3), (3,))]
    vectors = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
    x, y = rng.standard_normal((9, 6)).astype(np.float32), rng.integers(0, 3, 9)

    def hvp(lib: Any, shortcut: bool = True) -> list[np.ndarray]:
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        h = lib.nn.functional.relu(lib.tensor(x) @ params[0] + params[1]) @ params[2] + params[3]
        grads = lib.autograd.grad(lib.nn.functional.cross_entropy(h, lib.tensor(y)), params, create_graph=True)
        dot = sum((g * lib.tensor(v)).sum() for g, v in zip(grads, vectors))
        if lib is torch:
            return [g.numpy() for g in lib.autograd.grad(dot, params)]
        if shortcut:
            with _counting() as taken:
                out = lib.autograd.grad(dot, params)
            assert taken["sum"] >= 1 and taken["reduce"] == 2, taken  # (the two biases)
        else:
            with _shut():
                out = lib.autograd.grad(dot, params)
        return [g._data.view(np.uint32) for g in out]

    fast, slow = hvp(rg), hvp(rg, shortcut=False)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    for a, ref in zip(fast, hvp(torch)):
        np.testing.assert_allclose(a.view(np.float32), ref, rtol=1e-5, atol=1e-6)


def test_no_shortcut_where_a_graph_a_tangent_or_the_inference_flag_is_wanted() -> None:
    loss, params = _fan_out_and_bias(rg, "float64")
    # create_graph: the sums and reductions are recorded (AddBackward0, SumBackward1 + view).
    with _counting() as taken:
        grads = rg.autograd.grad(loss(), params, create_graph=True)
    assert taken == {"sum": 0, "reduce": 0}
    assert all(g.grad_fn is not None for g in grads)
    assert grads[2].grad_fn.name() == "AddBackward0"
    # Forward AD over the backward: the sums carry the tangents.
    x = rg.tensor([1.0, 2.0], dtype=rg.float64)
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, rg.tensor([1.0, 0.0], dtype=rg.float64))
        w = rg.tensor([0.5, -1.0], dtype=rg.float64, requires_grad=True)
        with _counting() as taken:
            (gw,) = rg.autograd.grad((w * xd).sum() + (w * xd * xd).sum(), w)
        tangent = fwAD.unpack_dual(gw).tangent
    assert taken["sum"] == 0
    np.testing.assert_array_equal(tangent.numpy(), [1.0 + 2.0 * 1.0, 0.0])


def test_other_dtypes_and_shapes_go_through_the_ops(torch: Any) -> None:
    # float16 (NumPy's half add is not PyTorch's), complex, and a gradient of another shape.
    for dtype in (np.float16, np.complex64):
        x = rg.tensor(np.array([1.0, -2.0, 3.0], dtype), requires_grad=True)
        with _counting() as taken:
            (g,) = rg.autograd.grad((x * x).sum() + (x * 2).sum(), x, rg.tensor(np.array(1.0, dtype)))
        assert taken["sum"] == 0 and g.dtype == x.dtype
        t = torch.tensor(np.array([1.0, -2.0, 3.0], dtype), requires_grad=True)
        (ref,) = torch.autograd.grad((t * t).sum() + (t * 2).sum(), t, torch.tensor(np.array(1.0, dtype)))
        np.testing.assert_array_equal(g.numpy(), ref.numpy())


def test_sum_of_two_gradients_of_a_shared_tensor_copies_neither() -> None:
    # AddBackward0 hands the same gradient to both its inputs: a sum of the two is a new array.
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    (g,) = rg.autograd.grad((y + y).sum() + y.sum(), y)
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])
