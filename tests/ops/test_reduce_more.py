"""Issue #12's reductions, scans, binning and indexing ops, where the op database cannot look:
return types, outputs without a gradient, backward errors PyTorch raises on purpose, duplicate
indices with ``accumulate``, dtype rules and error messages, each checked against real PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

X = [[0.3, -1.2, 2.0, 0.5], [1.1, 0.4, -0.7, 2.2], [-0.5, 0.9, 1.3, -1.0]]


def _plain(value: Any) -> Any:
    """Tensors (in nested tuples/lists) as comparable (dtype, values, grad_fn name) triples."""
    if isinstance(value, (tuple, list)):
        return [type(value).__name__, [_plain(v) for v in value]]
    if hasattr(value, "detach"):
        node = type(value.grad_fn).__name__ if value.grad_fn is not None else None
        return str(value.dtype), value.detach().numpy().tolist(), node
    return value


def _same(ours: Any, theirs: Any) -> None:
    """Equal structure, names, dtypes and nodes; values to float32's last bit (summation order)."""
    a, b = _plain(ours), _plain(theirs)
    if isinstance(a, tuple) and isinstance(b, tuple):
        assert (a[0], a[2]) == (b[0], b[2])
        np.testing.assert_allclose(np.asarray(a[1], float), np.asarray(b[1], float), rtol=1e-6, equal_nan=True)
    elif isinstance(a, list) and isinstance(b, list):
        assert a[0] == b[0] and len(a[1]) == len(b[1])
        for x, y in zip(ours, theirs, strict=True):
            _same(x, y)
    else:
        assert a == b


# -- values, dtypes, return types and nodes that the op database does not compare -------------

CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("aminmax return type", lambda L: L.aminmax(L.tensor(X, requires_grad=True))),
    ("aminmax dim keepdim", lambda L: L.tensor(X).aminmax(dim=1, keepdim=True)),
    ("aminmax int", lambda L: L.aminmax(L.tensor([3, 1, 2]))),
    ("aminmax 0-d", lambda L: L.aminmax(L.tensor(3.0), dim=0)),
    ("cummax nan and ties", lambda L: L.cummax(L.tensor([1.0, 3.0, 3.0, float("nan"), 2.0, float("nan")]), 0)),
    ("cummin bool", lambda L: L.cummin(L.tensor([True, False, True]), 0)),
    ("cummax 0-d", lambda L: L.cummax(L.tensor(2.0), 0)),
    ("cummin empty", lambda L: L.zeros(0).cummin(0)),
    ("bincount dtypes", lambda L: [L.bincount(L.tensor([1, 2, 2])), L.tensor([1, 2, 2]).bincount(L.tensor([1.0, 2, 3])),
                                   L.bincount(L.tensor([1, 2, 2]), L.tensor([1, 2, 3]), minlength=5),
                                   L.bincount(L.tensor([0, 1]), L.tensor([1.0, 2.0], dtype=L.float16)),
                                   L.bincount(L.tensor([0, 1]), L.tensor([True, False])),
                                   L.bincount(L.tensor([], dtype=L.long)), L.bincount(L.tensor([1, 2], dtype=L.uint8))]),
    ("bincount weights that require grad", lambda L: L.bincount(L.tensor([1, 2, 2]),
                                                                L.tensor([1.0, 2, 3], requires_grad=True))),
    ("histc", lambda L: [L.histc(L.tensor([1.0, 2, 1]), bins=4, min=0, max=3), L.tensor([1.0, 1, 1]).histc(4),
                         L.histc(L.tensor([]), 4), L.histc(L.tensor([1.0, 2, 1, 5, 0.3], dtype=L.float64), 3),
                         L.histc(L.tensor([1.0, 2, 1], requires_grad=True), 3)]),
    ("histogram return type", lambda L: [L.histogram(L.tensor([1.0, 2, 1, 4, 2.5]), 3),
                                         L.histogram(L.tensor([1.0, 2, 1, 4]), L.tensor([0.0, 1.5, 3.0]),
                                                     weight=L.ones(4) * 2, density=True),
                                         L.histogram(L.tensor([1.0, 1, 1]), 4), L.histogram(L.tensor([]), 3)]),
    ("searchsorted dtypes and scalars", lambda L: [
        L.searchsorted(L.tensor([1.0, 3, 5, 7]), L.tensor([[3.0, 6], [9, 0]]), right=True, out_int32=True),
        L.searchsorted(L.tensor([1.0, 3, 5, 7]), 3.0), L.searchsorted(L.tensor([1, 2, 3]), L.tensor([2.5])),
        L.searchsorted(L.tensor([5.0, 1, 3]), L.tensor([2.0, 5.0]), sorter=L.tensor([1, 2, 0]), side="right"),
        L.bucketize(3.0, L.tensor([1.0, 3, 5]), right=True), L.bucketize(L.tensor([[0.0, 4.0]]), L.tensor([1, 3]))]),
    ("unique outputs", lambda L: [L.unique(L.tensor([3.0, 1, 2, 3, 1], requires_grad=True)),
                                  L.unique(L.tensor([3.0, 1, 2, 3, 1]), return_inverse=True, return_counts=True),
                                  L.tensor([3.0, 1, 3]).unique(return_counts=True),
                                  L.unique(L.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True,
                                           return_counts=True),
                                  L.unique(L.tensor(3.0), return_inverse=True, return_counts=True),
                                  L.unique(L.tensor([1.0, float("nan"), float("nan")])),
                                  L.unique(L.zeros(0, 2), dim=0, return_inverse=True, return_counts=True)]),
    ("unique_consecutive outputs", lambda L: [
        L.unique_consecutive(L.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True, return_counts=True),
        L.tensor([[1, 2], [1, 2], [3, 3]]).unique_consecutive(dim=0, return_counts=True),
        L.unique_consecutive(L.tensor([1.0, 1.0, 2.0], requires_grad=True))]),
    ("diff bool and int", lambda L: [L.diff(L.tensor([True, False, False])), L.diff(L.tensor([1, 4, 9]), n=2),
                                     L.diff(L.tensor(X, requires_grad=True), n=0)]),
    ("trapezoid dtypes", lambda L: [L.trapezoid(L.tensor([1, 2, 4])), L.cumulative_trapezoid(L.tensor([1, 2, 4])),
                                    L.trapezoid(L.zeros(2, 0)), L.trapz(L.tensor([1.0, 3.0]), dx=2)]),
    ("cov int", lambda L: L.cov(L.tensor([[1, 2, 4], [0, 1, 5]]))),
    ("quantile nan", lambda L: [L.quantile(L.tensor([1.0, float("nan")]), 0.5),
                                L.nanquantile(L.tensor([[1.0, float("nan"), 3.0], [float("nan")] * 3]), 0.5, dim=1),
                                L.quantile(L.tensor([1.0, 2, 3, 4, 5, 6]), L.tensor([0.1, 0.3, 0.5, 0.7, 0.9]),
                                           interpolation="nearest")]),
    ("scatter_reduce integer mean floors", lambda L: [
        L.tensor([1, 2, 3]).scatter_reduce(0, L.tensor([0, 0, 1]), L.tensor([4, 5, -6]), "mean"),
        L.tensor([1, 2, 3]).scatter_reduce(0, L.tensor([0, 0, 1]), L.tensor([4, 5, -6]), "mean", include_self=False),
        L.scatter_reduce(L.tensor([1, 2, 3]), 0, L.tensor([0, 0, 1]), L.tensor([4, 5, -6]), "amin",
                         include_self=False)]),
    ("index_reduce integer mean", lambda L: L.tensor([1, 2, 3]).index_reduce(0, L.tensor([0, 0]), L.tensor([4, -5]),
                                                                          "mean")),
    ("put_ duplicate indices accumulate", lambda L: L.zeros(5).put_(L.tensor([1, 1, 2]), L.tensor([1.0, 2, 3]),
                                                                    accumulate=True)),
    ("index_put_ duplicate indices accumulate", lambda L: [
        L.zeros(5).index_put_((L.tensor([1, 1, 2]),), L.tensor([1.0, 2, 3]), accumulate=True),
        L.index_put(L.zeros(2, 3), (L.tensor([0, 0]), L.tensor([2, 2])), L.tensor(1.5), accumulate=True),
        L.zeros(2, 3).index_put_((L.tensor([True, False]),), L.tensor(2.0))]),
    ("index_fill casts and wraps", lambda L: [L.tensor([1, 2]).index_fill(0, L.tensor([1]), 2.7),
                                              L.tensor(5.0).index_fill(0, L.tensor([0]), 2.0),
                                              L.tensor([1.0, 2, 3]).index_fill_(0, L.tensor([-1]), 9)]),
    ("masked_scatter broadcasts", lambda L: L.zeros(4).masked_scatter(L.ones(2, 4, dtype=L.bool), L.arange(12.0))),
    ("nonzero_static", lambda L: [L.nonzero_static(L.tensor([0, 1, 0, 2]), size=3),
                                  L.tensor([[0, 1], [2, 0]]).nonzero_static(size=1, fill_value=7),
                                  L.nonzero_static(L.tensor(3), size=2)]),
    ("unravel_index", lambda L: [L.unravel_index(L.tensor([4, 7]), (2, 4)), L.unravel_index(L.tensor(4), (2, 4)),
                                 L.unravel_index(L.tensor([9, -1]), (2, 4)), L.unravel_index(L.tensor([1]), ())]),
    ("isin", lambda L: [L.isin(L.tensor([1.0, 2, 3]), 2), L.isin(2, L.tensor([2, 5])),
                        L.isin(L.tensor([1.5]), L.tensor([1])), L.isin(L.tensor([float("nan")]), L.tensor([float("nan")])),
                        L.isin(L.tensor([[1, 2], [3, 4]]), L.tensor([2, 3]), invert=True)]),
]


@pytest.mark.parametrize(("name", "fn"), CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name: str, fn: Callable[[Any], Any], torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(fn(rg), fn(torch))


def test_return_types_are_named_as_torch(torch: Any) -> None:
    for lib in (rg, torch):
        t = lib.tensor([[1.0, 3.0], [2.0, 0.0]])
        lo_hi = lib.aminmax(t)
        assert type(lo_hi).__name__ == "aminmax" and len(lo_hi) == 2
        assert (lo_hi.min.item(), lo_hi.max.item()) == (0.0, 3.0)
        for name in ("cummax", "cummin"):
            out = getattr(t, name)(1)
            assert type(out).__name__ == name and out.values is out[0] and out.indices is out[1]
        hist = lib.histogram(t, 2)
        assert type(hist).__name__ == "histogram" and hist.hist is hist[0] and hist.bin_edges is hist[1]
    assert repr(rg.aminmax(rg.tensor([1.0, 2.0]))) == repr(torch.aminmax(torch.tensor([1.0, 2.0])))


def _saved_attributes(lib: Any) -> dict[str, Any]:
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
    i = lib.tensor([[0, 1, 0], [1, 1, 0]])
    nodes = {
        "aminmax": lib.aminmax(x, dim=1).min, "cummax": lib.cummax(x, 1).values, "logcumsumexp": x.logcumsumexp(1),
        "renorm": x.renorm(2, 0, 1), "scatter_reduce": x.scatter_reduce(1, i, x * 1, "amax"),
        "index_reduce": x.index_reduce(0, lib.tensor([1, 0]), x * 1, "prod"),
        "index_fill": x.index_fill(0, lib.tensor([1]), 2.0), "index_fill value": x.index_fill(0, lib.tensor([1]), x[0, 0]),
        "masked_scatter": x.masked_scatter(x > 2, x * 1), "put": x.put(lib.tensor([1]), x[0, :1] * 1),
    }
    out: dict[str, Any] = {}
    for name, t in nodes.items():
        attrs = sorted(a for a in dir(t.grad_fn) if a.startswith("_saved_"))
        plain = {a: getattr(t.grad_fn, a) for a in attrs}
        out[name] = {a: v if isinstance(v, (int, float, str, bool, tuple)) else "tensor" for a, v in plain.items()}
    return out


def test_saved_attributes_are_torchs(torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _saved_attributes(rg) == _saved_attributes(torch)


# -- gradients PyTorch defines at ties, and those it refuses -----------------------------------

GRADS: list[tuple[str, Callable[[Any, Any], Any], list[Any]]] = [
    ("cummax ties pick the later index", lambda L, t: L.cummax(t, 0).values, [[1.0, 1.0], [1.0, 0.0], [2.0, 2.0]]),
    ("cummin ties", lambda L, t: t.cummin(1).values, [[1.0, 1.0, 0.5, 0.5]]),
    ("aminmax ties share", lambda L, t: sum(L.aminmax(t, dim=1)), [[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5]]),
    ("aminmax all ties share", lambda L, t: sum(L.aminmax(t)), [[1.0, 3.0, 3.0], [3.0, 1.0, 0.0]]),
    ("scatter_reduce amax ties", lambda L, t: t.scatter_reduce(0, L.tensor([[0, 0], [0, 0]]), t * 1, "amax"),
     [[1.0, 2.0], [1.0, 2.0]]),
    ("scatter_reduce prod one zero", lambda L, t: t.scatter_reduce(0, L.tensor([[0, 0], [0, 0]]), t * 2, "prod"),
     [[0.0, 2.0], [3.0, 4.0]]),
    ("index_reduce amin ties", lambda L, t: t.index_reduce(0, L.tensor([0, 0]), t.flip(0) * 1, "amin"),
     [[1.0, 2.0], [1.0, 5.0]]),
    ("logcumsumexp large", lambda L, t: t.logcumsumexp(1), [[800.0, -800.0, 801.0, -5.0]]),
    ("quantile of a repeated value", lambda L, t: L.quantile(t, 0.5, dim=1), [[1.0, 2.0, 2.0, 3.0]]),
]


@pytest.mark.parametrize(("name", "fn", "data"), GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_torch(name: str, fn: Callable[[Any, Any], Any], data: list[Any], torch: Any) -> None:
    results = []
    for lib in (rg, torch):
        t = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, t)
        weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) + 1
        (grad,) = lib.autograd.grad(out, t, weights)
        results.append(grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


BACKWARD_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("unique", lambda L: L.unique(L.tensor([3.0, 1.0, 3.0], requires_grad=True)).sum().backward()),
    ("unique dim", lambda L: L.unique(L.tensor([[3.0, 1.0]], requires_grad=True), dim=1).sum().backward()),
    ("unique_consecutive", lambda L: L.unique_consecutive(L.tensor([3.0, 3.0], requires_grad=True)).sum().backward()),
    ("bincount weights", lambda L: L.bincount(L.tensor([1, 2]), L.tensor([1.0, 2.0], requires_grad=True))
     .sum().backward()),
    ("scatter_reduce prod two zeros, double backward", lambda L: _double_backward(
        L, lambda t: t.scatter_reduce(0, L.tensor([0, 0, 0]), t * 1, "prod"), [1.0, 0.0, 0.0])),
    ("index_reduce prod two zeros, double backward", lambda L: _double_backward(
        L, lambda t: t.index_reduce(0, L.tensor([0, 0, 0]), t * 1, "prod"), [1.0, 0.0, 0.0])),
]


def _double_backward(lib: Any, fn: Callable[[Any], Any], data: list[float]) -> None:
    t = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(fn(t).sum(), t, create_graph=True)
    g.sum().backward()


@pytest.mark.parametrize(("name", "fn"), BACKWARD_ERRORS, ids=[b[0] for b in BACKWARD_ERRORS])
def test_backward_errors_match_torch(name: str, fn: Callable[[Any], Any], torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = outcome(lambda: fn(rg)), outcome(lambda: fn(torch))
    assert ours == theirs
    assert ours[0] != "ok"


# -- bad input: PyTorch's exception type and message -------------------------------------------

def _t(lib: Any) -> Any:
    return lib.tensor(X, dtype=lib.float64, requires_grad=True)


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("aminmax empty", lambda L: L.aminmax(L.zeros(0))),
    ("aminmax empty dim", lambda L: L.aminmax(L.zeros(2, 0), dim=1)),
    ("cummax dim", lambda L: L.cummax(L.ones(2), 1)),
    ("logcumsumexp int", lambda L: L.logcumsumexp(L.tensor([1, 2]), 0)),
    ("renorm p", lambda L: L.ones(3, 2).renorm(0, 0, 1.0)),
    ("renorm maxnorm", lambda L: L.ones(3, 2).renorm(2, 0, -1.0)),
    ("renorm 1-d", lambda L: L.ones(3).renorm(2, 0, 1.0)),
    ("renorm int", lambda L: L.ones(2, 2, dtype=L.long).renorm(2, 0, 1.0)),
    ("bincount 2-d", lambda L: L.bincount(L.tensor([[1]]))),
    ("bincount negative", lambda L: L.bincount(L.tensor([-1]))),
    ("bincount float", lambda L: L.bincount(L.tensor([1.0]))),
    ("bincount minlength", lambda L: L.bincount(L.tensor([1]), minlength=-1)),
    ("bincount weights length", lambda L: L.bincount(L.tensor([1, 2]), L.tensor([1.0]))),
    ("histc int", lambda L: L.histc(L.tensor([1, 2]))),
    ("histc range", lambda L: L.histc(L.tensor([1.0, 2]), 3, min=3, max=0)),
    ("histc bins", lambda L: L.histc(L.tensor([1.0, 2]), -1)),
    ("histc inf", lambda L: L.histc(L.tensor([1.0, float("inf")]), 3)),
    ("histogram range", lambda L: L.tensor([1.0, 2]).histogram(3, range=(5.0, 0.0))),
    ("histogram int", lambda L: L.histogram(L.tensor([1, 2]), 3)),
    ("histogram weight", lambda L: L.histogram(L.tensor([1.0, 2]), 3, weight=L.ones(3))),
    ("searchsorted side and right", lambda L: L.searchsorted(L.ones(3), L.ones(2), side="left", right=True)),
    ("searchsorted side", lambda L: L.searchsorted(L.ones(3), L.ones(2), side="bad")),
    ("searchsorted batch", lambda L: L.searchsorted(L.ones(2, 2), L.ones(3, 2))),
    ("searchsorted sorter size", lambda L: L.searchsorted(L.ones(3), L.ones(2), sorter=L.tensor([1, 2]))),
    ("searchsorted 0-d", lambda L: L.searchsorted(L.tensor(1.0), L.ones(2))),
    ("searchsorted sorter range", lambda L: L.searchsorted(L.ones(3), L.ones(2), sorter=L.tensor([0, 1, 9]))),
    ("searchsorted sorter dtype", lambda L: L.searchsorted(L.ones(3), L.ones(2), sorter=L.tensor([0.0, 1, 2]))),
    ("bucketize 2-d", lambda L: L.bucketize(L.ones(2), L.ones(2, 2))),
    ("unique dim", lambda L: L.unique(L.ones(2, 2), dim=2)),
    ("unique 0-d dim", lambda L: L.unique(L.tensor(3.0), dim=0)),
    ("unique zero-size", lambda L: L.unique(L.ones(0, 2), dim=1)),
    ("diff 0-d", lambda L: L.diff(L.tensor(1.0))),
    ("diff order", lambda L: L.diff(L.ones(3), n=-1)),
    ("diff prepend dims", lambda L: L.diff(L.ones(2, 3), prepend=L.ones(3))),
    ("diff prepend shape", lambda L: L.diff(L.ones(2, 3), prepend=L.ones(3, 1))),
    ("trapezoid 0-d", lambda L: L.trapezoid(L.tensor(1.0))),
    ("trapezoid bool", lambda L: L.trapezoid(L.tensor([True, False]))),
    ("trapezoid x length", lambda L: L.trapezoid(L.ones(2, 3), L.ones(2))),
    ("cumulative_trapezoid x length", lambda L: L.cumulative_trapezoid(L.ones(2, 3), L.ones(2))),
    ("gradient uint8", lambda L: L.gradient(L.ones(3, dtype=L.uint8))),
    ("gradient spacing", lambda L: L.gradient(L.ones(3, 3), spacing=[1.0])),
    ("gradient edge_order", lambda L: L.gradient(L.ones(3), edge_order=3)),
    ("gradient size", lambda L: L.gradient(L.ones(2), edge_order=2)),
    ("cov 3-d", lambda L: L.cov(L.ones(2, 2, 2))),
    ("cov bool", lambda L: L.cov(L.ones(2, 2, dtype=L.bool))),
    ("cov fweights dtype", lambda L: L.cov(_t(L), fweights=L.ones(4))),
    ("cov fweights size", lambda L: L.cov(_t(L), fweights=L.tensor([1, 2]))),
    ("cov fweights negative", lambda L: L.cov(_t(L), fweights=L.tensor([1, -2, 1, 1]))),
    ("cov aweights dtype", lambda L: L.cov(_t(L), aweights=L.tensor([1, 2, 1, 1]))),
    ("cov weights zero", lambda L: L.cov(_t(L), fweights=L.tensor([0, 0, 0, 0]))),
    ("corrcoef 3-d", lambda L: L.corrcoef(L.ones(2, 2, 2))),
    ("quantile q", lambda L: L.quantile(_t(L), 1.5)),
    ("quantile q tensor", lambda L: L.quantile(_t(L), L.tensor([1.5], dtype=L.float64))),
    ("quantile q dtype", lambda L: L.quantile(_t(L), L.tensor([0.5]))),
    ("quantile int", lambda L: L.quantile(L.tensor([1, 2]), 0.5)),
    ("quantile interpolation", lambda L: L.quantile(_t(L), 0.5, interpolation="bad")),
    ("quantile q 2-d", lambda L: L.quantile(_t(L), L.ones(2, 2, dtype=L.float64))),
    ("quantile empty", lambda L: L.quantile(L.zeros(0), 0.5)),
    ("quantile dim", lambda L: L.quantile(_t(L), 0.5, dim=3)),
    ("scatter_reduce reduce", lambda L: _t(L).scatter_reduce(1, L.tensor([[0, 1]]), _t(L), "bad")),
    ("scatter_reduce index dtype", lambda L: _t(L).scatter_reduce(1, L.tensor([[0.0, 1.0]]), _t(L), "sum")),
    ("scatter_reduce index range", lambda L: _t(L).scatter_reduce(1, L.tensor([[0, 9]]), _t(L), "sum")),
    ("scatter_reduce src dtype", lambda L: _t(L).scatter_reduce(1, L.tensor([[0, 1]]), _t(L).float(), "sum")),
    ("scatter_reduce reduce type", lambda L: _t(L).scatter_reduce(1, L.tensor([[0, 1]]), _t(L), reduce=1)),
    ("index_reduce reduce", lambda L: _t(L).index_reduce(0, L.tensor([0, 1]), _t(L)[:2], "sum")),
    ("index_reduce range", lambda L: _t(L).index_reduce(0, L.tensor([0, 5]), _t(L)[:2], "prod")),
    ("index_reduce negative", lambda L: _t(L).index_reduce(0, L.tensor([0, -1]), _t(L)[:2], "prod")),
    ("index_reduce count", lambda L: _t(L).index_reduce(0, L.tensor([0, 1]), _t(L)[:1], "prod")),
    ("index_reduce index dtype", lambda L: _t(L).index_reduce(0, L.tensor([0.0, 1]), _t(L)[:2], "prod")),
    ("index_reduce index dims", lambda L: _t(L).index_reduce(0, L.tensor([[0, 1]]), _t(L)[:2], "prod")),
    ("index_reduce source dtype", lambda L: _t(L).index_reduce(0, L.tensor([0, 1]), _t(L)[:2].float(), "prod")),
    ("index_fill range", lambda L: _t(L).index_fill(0, L.tensor([5]), 1.0)),
    ("index_fill dims", lambda L: _t(L).index_fill(0, L.tensor([[1]]), 1.0)),
    ("index_fill dtype", lambda L: _t(L).index_fill(0, L.tensor([1.0]), 1.0)),
    ("index_fill value dims", lambda L: _t(L).index_fill(0, L.tensor([1]), L.ones(2))),
    ("masked_scatter source size", lambda L: _t(L).masked_scatter(_t(L) > -10, L.ones(5, dtype=L.float64))),
    ("masked_scatter mask dtype", lambda L: _t(L).masked_scatter((_t(L) > 0).float(), _t(L))),
    ("masked_scatter source dtype", lambda L: _t(L).masked_scatter(_t(L) > 0, L.ones(20))),
    ("put range", lambda L: _t(L).put(L.tensor([15]), L.ones(1, dtype=L.float64))),
    ("put count", lambda L: _t(L).put(L.tensor([1, 2]), L.ones(3, dtype=L.float64))),
    ("put index dtype", lambda L: _t(L).put(L.tensor([1.0]), L.ones(1, dtype=L.float64))),
    ("put source dtype", lambda L: _t(L).put(L.tensor([1]), L.ones(1))),
    ("put accumulate type", lambda L: _t(L).put(L.tensor([1]), L.ones(1, dtype=L.float64), accumulate=0.5)),
    ("index_put dtype", lambda L: L.zeros(3).index_put((L.tensor([0]),), L.ones(1, dtype=L.float64))),
    ("index_put range", lambda L: L.zeros(3).index_put((L.tensor([5]),), L.ones(1))),
    ("index_put too many", lambda L: L.zeros(3).index_put([L.tensor([0]), L.tensor([0])], L.ones(1))),
    ("index_put values shape", lambda L: L.zeros(3).index_put_((L.tensor([0, 1]),), L.ones(2, 2))),
    ("nonzero_static size", lambda L: L.nonzero_static(L.tensor([0, 1]), size=-1)),
    ("unravel_index dtype", lambda L: L.unravel_index(L.tensor([1.0]), (2, 4))),
    ("unravel_index shape", lambda L: L.unravel_index(L.tensor([1]), (2, -4))),
    ("isin bool", lambda L: L.isin(L.tensor([True]), L.tensor([1]))),
    ("isin two numbers", lambda L: L.isin(1, 2)),
    ("histogram bins dtype", lambda L: L.histogram(L.tensor([1.0, 2.0]), L.tensor([0.0, 1.0, 3.0], dtype=L.float64))),
    ("bincount bool", lambda L: L.bincount(L.tensor([True, False, True]))),
    ("index_reduce 0-d self", lambda L: L.tensor(1.0).index_reduce(0, L.tensor([0]), L.tensor([5.0]), "amax")),
]


@pytest.mark.parametrize(("name", "fn"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, fn: Callable[[Any], Any], torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = outcome(lambda: fn(rg)), outcome(lambda: fn(torch))
    assert ours == theirs
    assert ours[0] != "ok"


def test_bad_input_leaves_the_tensor_unchanged() -> None:
    x = rg.tensor([1.0, 2.0, 3.0])
    for bad in (lambda: x.put_(rg.tensor([1, 9]), rg.tensor([5.0, 6.0])),
                lambda: x.index_fill_(0, rg.tensor([7]), 0.0),
                lambda: x.scatter_reduce_(0, rg.tensor([0, 5]), rg.tensor([1.0, 2.0]), "sum"),
                lambda: x.index_put_((rg.tensor([0, 4]),), rg.tensor([9.0, 9.0]))):
        with pytest.raises((IndexError, RuntimeError)):
            bad()
        assert x.tolist() == [1.0, 2.0, 3.0]


def test_index_reduce_warns_once_that_it_is_in_beta() -> None:
    from retrograd.ops import indexing

    indexing._WARNED.clear()
    x = rg.zeros(3)
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        x.index_reduce(0, rg.tensor([0]), rg.ones(1), "amax")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.index_reduce(0, rg.tensor([0]), rg.ones(1), "amax")
