"""as_strided, as_strided_, as_strided_scatter, storage_offset and empty tensors' strides, against
PyTorch (values, views, versions, grad_fn names, gradients, errors) and gradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _both(torch: Any, fn: Any) -> tuple[Any, Any]:
    return fn(rg), fn(torch)


def _same(mine: Any, ref: Any) -> None:
    assert list(mine.shape) == list(ref.shape)
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)


# -- storage_offset and strides ------------------------------------------------------------------


@pytest.mark.parametrize("index", [(slice(2, None),), (1,), (slice(None), 1), (slice(1, None, 2), slice(None, None, -1))])
def test_storage_offset_matches_pytorch(torch: Any, index: Any) -> None:
    if any(isinstance(i, slice) and (i.step or 1) < 0 for i in index):
        index = index[:1]  # (PyTorch refuses negative steps)
    mine, ref = _both(torch, lambda lib: lib.arange(12.0).view(4, 3)[index])
    assert mine.storage_offset() == ref.storage_offset()
    assert mine.stride() == ref.stride()


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (3, 0, 2), (0, 0), (2, 0, 3)])
def test_strides_of_empty_tensors_are_pytorchs(torch: Any, shape: tuple[int, ...]) -> None:
    for make in (lambda lib: lib.empty(shape), lambda lib: lib.zeros(shape) + 1, lambda lib: lib.ones(shape).clone()):
        mine, ref = _both(torch, make)
        assert mine.stride() == ref.stride()
        assert [mine.stride(d) for d in range(len(shape))] == [ref.stride(d) for d in range(len(shape))]


# -- as_strided: a view of the storage ---------------------------------------------------------


@pytest.mark.parametrize(("size", "stride", "offset"), [
    ((2, 2), (1, 2), None), ((2, 2), (1, 2), 0), ((3, 3), (1, 1), 1), ((), (), 5), ((2, 0), (7, 1), 3), ((4,), (2,), 0),
])
def test_as_strided_views_the_storage_like_pytorch(torch: Any, size: Any, stride: Any, offset: Any) -> None:
    def run(lib: Any) -> Any:
        base = lib.arange(10.0)
        y = base[2:]
        v = y.as_strided(size, stride) if offset is None else lib.as_strided(y, size, stride, offset)
        return base, v

    (mb, mv), (tb, tv) = _both(torch, run)
    _same(mv, tv)
    assert mv.stride() == tv.stride() and mv.storage_offset() == tv.storage_offset()
    assert mv._base is mb and tv._base is tb
    if mv.numel():
        mb.mul_(2)  # one storage, one version counter
        tb.mul_(2)
        _same(mv, tv)
        assert mv._version == tv._version == 1


@pytest.mark.parametrize("case", [
    lambda lib, x: x.as_strided((10,), (1,), 5),
    lambda lib, x: x.as_strided((2,), (-1,)),
    lambda lib, x: x.as_strided((2, 3), (1,)),
    lambda lib, x: x.as_strided((-2,), (1,)),
    lambda lib, x: x.as_strided((2,), (1,), -1),
    lambda lib, x: x.as_strided((-1, 3), (-1, 1)),
    lambda lib, x: x.as_strided((2.0,), (1,)),
    lambda lib, x: x.as_strided(2, (1,)),
    lambda lib, x: x.as_strided((2,), 1),
    lambda lib, x: x.as_strided((2,), (1,), 1.5),
    lambda lib, x: x.as_strided((0,), (1,), 7),
    lambda lib, x: lib.empty(0).as_strided((1,), (1,)),
    lambda lib, x: lib.as_strided(x, (3,), (1,), 4),
])
def test_as_strided_errors_are_pytorchs(torch: Any, case: Any) -> None:
    assert outcome(lambda: case(rg, rg.arange(6.0))) == outcome(lambda: case(torch, torch.arange(6.0)))


def _grads(lib: Any, make: Any, cotangent: np.ndarray) -> Any:
    leaf = lib.tensor(np.arange(6.0) + 1, requires_grad=True)
    out = make(leaf)
    out.backward(lib.tensor(cotangent))
    return type(out.grad_fn).__name__, leaf.grad


@pytest.mark.parametrize(("make", "shape"), [
    (lambda x: x.as_strided((3, 3), (1, 1)), (3, 3)),  # overlapping outputs: gradients add up
    (lambda x: x.as_strided((2, 2), (1, 2), 1), (2, 2)),
    (lambda x: x.expand(2, 6).as_strided((2, 2), (0, 1), 1), (2, 2)),  # overlapping input: shares
    (lambda x: x.expand(3, 6).t().as_strided((4, 2), (1, 0), 2), (4, 2)),
    (lambda x: x[2:4].as_strided((4,), (1,), 0), (4,)),  # reaches outside the input: dropped
    (lambda x: (x * 2)[1:].as_strided((2, 2), (2, 1)), (2, 2)),
])
def test_as_strided_backward_matches_pytorch(torch: Any, make: Any, shape: tuple[int, ...]) -> None:
    cotangent = np.random.default_rng(0).standard_normal(shape)
    mine, ref = _grads(rg, make, cotangent), _grads(torch, make, cotangent)
    assert mine[0] == ref[0] == "AsStridedBackward0"
    np.testing.assert_allclose(mine[1].numpy(), ref[1].numpy(), rtol=1e-12, atol=1e-12)


def test_as_strided_backward_by_hand() -> None:
    # out[i, j] = x[i + j]: x[k] gets the sum of the cotangent's k-th anti-diagonal.
    x = rg.zeros(5, dtype=rg.float64, requires_grad=True)
    g = np.arange(9.0).reshape(3, 3)
    x.as_strided((3, 3), (1, 1)).backward(rg.tensor(g))
    expected = [sum(g[i, k - i] for i in range(3) if 0 <= k - i < 3) for k in range(5)]
    assert x.grad.tolist() == expected


@pytest.mark.parametrize("make", [
    lambda x: x.as_strided((3, 3), (1, 1)) ** 2,
    lambda x: x.expand(2, 6).as_strided((2, 3), (0, 2), 1) * x[:3],
    lambda x: x.view(2, 3).t().as_strided((2, 2), (1, 3), 1).exp(),
])
def test_as_strided_gradcheck_and_gradgradcheck(make: Any) -> None:
    x = rg.tensor(np.random.default_rng(1).uniform(-1, 1, 6), dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(make, (x,))
    assert rg.autograd.gradgradcheck(make, (x,))


def test_in_place_write_through_an_as_strided_view_matches_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        leaf = lib.tensor(np.arange(6.0), requires_grad=True)
        base = leaf * 1
        v = base.as_strided((2, 2), (1, 2), 1)
        v.mul_(3)
        (base * lib.arange(6.0)).sum().backward()
        return type(base.grad_fn).__name__, type(v.grad_fn).__name__, base, leaf.grad

    mine, ref = _both(torch, run)
    assert mine[:2] == ref[:2] == ("CopySlices", "AsStridedBackward0")
    _same(mine[2], ref[2])
    _same(mine[3], ref[3])


def test_as_strided_saved_attributes(torch: Any) -> None:
    def run(lib: Any) -> Any:
        fn = lib.arange(6.0, requires_grad=True).as_strided((2, 2), (1, 2), 1).grad_fn
        return fn._saved_size, fn._saved_stride, fn._saved_storage_offset

    mine, ref = _both(torch, run)
    assert tuple(mine) == tuple(ref)


# -- as_strided_ -----------------------------------------------------------------------------


def test_as_strided_in_place_matches_pytorch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        leaf = lib.tensor(np.arange(6.0) + 1, requires_grad=True)
        y = leaf * 1
        same = lib.as_strided_(y, (2, 2), (1, 1), 1) is y
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        plain = lib.arange(6.0)
        plain.as_strided_((3,), (2,))
        return (same, type(y.grad_fn).__name__, y._version, y.stride(), y.storage_offset(), plain._version,
                plain.tolist(), leaf.grad.tolist())

    mine, ref = _both(torch, run)
    assert mine == ref
    assert outcome(lambda: rg.ones(2, requires_grad=True).as_strided_((1,), (1,))) == outcome(
        lambda: torch.ones(2, requires_grad=True).as_strided_((1,), (1,)))


# -- as_strided_scatter ----------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda lib: lib.as_strided_scatter(lib.arange(6.0), lib.ones(2, 2), (2, 2), (1, 2), 1),
    lambda lib: lib.arange(6.0)[1:].as_strided_scatter(lib.ones(2), (2,), (1,)),  # offset 0 of a fresh copy
    lambda lib: lib.as_strided_scatter(lib.arange(12.0).view(4, 3).t(), lib.ones(2, 2), (2, 2), (1, 3), 1),
    lambda lib: lib.as_strided_scatter(lib.zeros(3, 3)[:, 1], lib.ones(2), (2,), (1,), 0),  # not dense
    lambda lib: lib.as_strided_scatter(lib.arange(6), lib.ones(2), (2,), (1,)),  # src cast to input's dtype
    lambda lib: lib.as_strided_scatter(lib.arange(6.0), lib.ones(2, dtype=lib.float64), (2,), (3,)),
])
def test_as_strided_scatter_values_match_pytorch(torch: Any, make: Any) -> None:
    mine, ref = _both(torch, make)
    _same(mine, ref)
    assert str(mine.dtype) == str(ref.dtype)


@pytest.mark.parametrize("case", [
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(3), (2, 2), (1, 2), 1),
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(2, 2), (2, 2), (1, 2), 4),
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(2, 2), (2, 2), (0, 2), 1),
    lambda lib: lib.zeros(6).as_strided_scatter(lib.ones(2, 1), (2,), (1,)),
    lambda lib: lib.as_strided_scatter(lib.zeros(6), 1.0, (2,), (1,)),
])
def test_as_strided_scatter_errors_are_pytorchs(torch: Any, case: Any) -> None:
    assert outcome(lambda: case(rg)) == outcome(lambda: case(torch))


@pytest.mark.parametrize("noncontiguous", [False, True])
def test_as_strided_scatter_gradients_by_gradcheck(noncontiguous: bool) -> None:
    rng = np.random.default_rng(2)
    data = rng.uniform(-1, 1, (4, 3))
    x = rg.tensor(data.T.copy()).t() if noncontiguous else rg.tensor(data)
    x = x.detach().requires_grad_()
    src = rg.tensor(rng.uniform(-1, 1, (2, 2)), requires_grad=True)

    def fn(a: Any, s: Any) -> Any:
        return rg.as_strided_scatter(a, s, (2, 2), (1, 3), 1)

    assert rg.autograd.gradcheck(fn, (x, src))
    assert rg.autograd.gradgradcheck(fn, (x, src))


def test_as_strided_scatter_input_gradient_is_the_gradient_outside_the_region(torch: Any) -> None:
    # The output is ``input`` except in the region, so d out / d input is 1 outside it, 0 inside
    # (PyTorch 2.13 returns the region instead: docs/differences.md). ``src``'s is PyTorch's.
    a = rg.zeros(6, requires_grad=True)
    src = rg.ones(2, 2, requires_grad=True)
    rg.as_strided_scatter(a, src, (2, 2), (1, 2), 1).backward(rg.arange(6.0))
    assert a.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 5.0]
    ta = torch.zeros(6, requires_grad=True)
    tsrc = torch.ones(2, 2, requires_grad=True)
    torch.as_strided_scatter(ta, tsrc, (2, 2), (1, 2), 1).backward(torch.arange(6.0))
    assert src.grad.tolist() == tsrc.grad.tolist()
    assert type(rg.as_strided_scatter(a, src, (2, 2), (1, 2), 1).grad_fn).__name__ == "AsStridedScatterBackward0"
