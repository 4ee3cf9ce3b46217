"""Op database entries for the reductions: prod (with zeros), var/std (and with mean), amax/amin,
sort/topk/kthvalue/median/mode, logsumexp (large inputs), norms of every order, cumsum/cumprod
(with zeros), all/any/count_nonzero, dist, nansum/nanmean, mean over several dims."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import OpInfo, Sample, away_from_zero, distinct, uniform

Samples = Callable[[np.random.Generator], list[Sample]]


def _arr(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _u(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return _arr(uniform(rng, *shape))


def _nz(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return _arr(away_from_zero(rng, *shape))


def _shapes(domain: Callable[..., np.ndarray], *shapes: tuple[int, ...]) -> Samples:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [Sample((domain(rng, *shape),), name="x".join(map(str, shape)) or "0-d") for shape in shapes]

    return samples


def _with_zeros(rng: np.random.Generator) -> list[Sample]:
    one = _nz(rng, 3, 4)
    one[1, 2] = 0.0
    two = _nz(rng, 3, 4)
    two[0, 1] = two[0, 3] = 0.0
    mixed = _nz(rng, 4, 3)
    mixed[2, 0] = 0.0
    mixed[0, 1] = mixed[3, 1] = 0.0
    return [
        Sample((_nz(rng, 3, 4),), name="no zeros"),
        Sample((one,), name="one zero"),
        Sample((two,), name="two zeros in a row"),
        Sample((mixed,), name="noncontiguous", noncontiguous=True),
    ]


def _ties(rng: np.random.Generator) -> list[Sample]:
    return [Sample((np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5], [4.0, -1.0, 2.0, 4.0]]),), name="ties")]


def _repeats(rng: np.random.Generator) -> list[Sample]:
    values = np.array([[2.0, 1.0, 2.0, 3.0, 1.0, 2.0], [5.0, 4.0, 4.0, 5.0, 0.0, 9.0], [7.0, 7.0, 7.0, 7.0, 7.0, 7.0]])
    return [Sample((values,), name="repeats"), Sample((values.T.copy(),), name="noncontiguous", noncontiguous=True)]


def _nan_mix(rng: np.random.Generator) -> list[Sample]:
    x = _u(rng, 3, 4)
    x[0, 1] = x[2, 3] = np.nan
    return [Sample((x,), name="with nan")]


def _pair(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((_u(rng, 3, 4), _u(rng, 3, 4)), name="same shape"),
        Sample((_u(rng, 2, 3), _u(rng, 3)), name="broadcast"),
        Sample((_u(rng, 3, 2), _u(rng, 3, 2)), name="noncontiguous", noncontiguous=True),
    ]


OPS: list[OpInfo] = [
    # -- prod: exact with zeros, as PyTorch --
    OpInfo("prod", lambda lib, a: a.prod(), _with_zeros),
    OpInfo("prod", lambda lib, a: lib.prod(a, 1), _with_zeros, covers=("prod",), variant_test_name="dim"),
    OpInfo("prod", lambda lib, a: a.prod(0, keepdim=True), _with_zeros, covers=("prod",), variant_test_name="dim0_keepdim"),
    OpInfo("prod", lambda lib, a: a.prod(-1),
           _shapes(_nz, (5,), (1,), (2, 1, 3)), covers=("prod",), variant_test_name="shapes"),
    OpInfo("prod", lambda lib, a: a.prod(1, dtype=lib.float32), _shapes(_nz, (2, 3)), covers=("prod",),
           gradcheck=False, gradgradcheck=False, variant_test_name="dtype"),
    OpInfo("prod", lambda lib, a: (a.prod(), a.prod(0)), lambda rng: [Sample((np.array([[2, -3], [4, 5]]),))],
           covers=("prod",), variant_test_name="int"),
    OpInfo("prod", lambda lib, a: (a.prod(), a.prod(0)), _shapes(_u, (0, 3)), covers=("prod",), variant_test_name="empty"),
    # -- var / std --
    OpInfo("var", lambda lib, a: a.var(), _shapes(_u, (5,), (3, 4))),
    OpInfo("var", lambda lib, a: lib.var(a, 1), _shapes(_u, (3, 4), (2, 3, 4)), covers=("var",), variant_test_name="dim"),
    OpInfo("var", lambda lib, a: a.var((0, 2), keepdim=True), _shapes(_u, (2, 3, 4)), covers=("var",), variant_test_name="dims_keepdim"),
    OpInfo("var", lambda lib, a: lib.var(a, 0, unbiased=False), _shapes(_u, (3, 4)), covers=("var",), variant_test_name="unbiased_false"),
    OpInfo("var", lambda lib, a: a.var(1, True, True), _shapes(_u, (3, 4)), covers=("var",), variant_test_name="positional"),
    OpInfo("var", lambda lib, a: lib.var(a, False), _shapes(_u, (3, 4)), covers=("var",), variant_test_name="bool_unbiased"),
    OpInfo("var", lambda lib, a: a.var(dim=-1, correction=2), _shapes(_u, (3, 5)), covers=("var",), variant_test_name="correction"),
    OpInfo("var", lambda lib, a: a.var(correction=0.5), _shapes(_u, (4,)), covers=("var",), variant_test_name="fractional_correction"),
    OpInfo("std", lambda lib, a: a.std(), _shapes(_u, (5,), (3, 4))),
    OpInfo("std", lambda lib, a: lib.std(a, 0, keepdim=True), _shapes(_u, (3, 4)), covers=("std",), variant_test_name="dim"),
    OpInfo("std", lambda lib, a: a.std((0, 1), correction=0), _shapes(_u, (3, 4)), covers=("std",), variant_test_name="correction"),
    OpInfo("std", lambda lib, a: a.std(1),
           lambda rng: [Sample((np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]),))],
           covers=("std",), gradcheck=False, gradgradcheck=False, variant_test_name="constant"),
    OpInfo("var_mean", lambda lib, a: lib.var_mean(a, 1), _shapes(_u, (3, 4)), covers=("var_mean",)),
    OpInfo("var_mean", lambda lib, a: lib.var_mean(a, correction=0), _shapes(_u, (3, 4)), covers=("var_mean",), variant_test_name="all"),
    OpInfo("std_mean", lambda lib, a: lib.std_mean(a, (0, 1), keepdim=True), _shapes(_u, (3, 4)),
           covers=("std_mean",)),
    OpInfo("std_mean", lambda lib, a: lib.std_mean(a, 0, False), _shapes(_u, (3, 4)), covers=("std_mean",), variant_test_name="unbiased"),
    # -- amax / amin: ties share the gradient evenly --
    OpInfo("amax", lambda lib, a: a.amax(), _shapes(distinct, (3, 4), (5,))),
    OpInfo("amax", lambda lib, a: lib.amax(a, 1), _shapes(distinct, (3, 4)), covers=("amax",), variant_test_name="dim"),
    OpInfo("amax", lambda lib, a: a.amax((0, 2), keepdim=True), _shapes(distinct, (2, 3, 4)), covers=("amax",), variant_test_name="dims"),
    OpInfo("amin", lambda lib, a: lib.amin(a, -1), _shapes(distinct, (3, 4))),
    OpInfo("amax", lambda lib, a: (a.amax(1), a.amin(0), a.amax()), _ties, covers=("amax", "amin"),
           gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    # -- sort family --
    OpInfo("sort", lambda lib, a: a.sort(), _shapes(distinct, (3, 4), (5,))),
    OpInfo("sort", lambda lib, a: lib.sort(a, 0, descending=True), _shapes(distinct, (3, 4)),
           covers=("sort",), variant_test_name="descending"),
    OpInfo("sort", lambda lib, a: a.sort(stable=True, dim=1), _shapes(distinct, (3, 4)), covers=("sort",), variant_test_name="stable"),
    OpInfo("sort", lambda lib, a: (*a.sort(1), *a.sort(1, descending=True), *a.sort(dim=0, stable=False)), _ties,
           covers=("sort",), gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    OpInfo("sort", lambda lib, a: (*a.sort(), *a.sort(descending=True)),
           lambda rng: [Sample((np.array([1.0, np.nan, -2.0, np.inf, 0.5]),))], covers=("sort",),
           gradcheck=False, gradgradcheck=False, variant_test_name="nan"),
    OpInfo("argsort", lambda lib, a: (a.argsort(), lib.argsort(a, 0, True)), _ties),
    OpInfo("msort", lambda lib, a: lib.msort(a), _shapes(distinct, (3, 4))),
    OpInfo("topk", lambda lib, a: a.topk(2), _shapes(distinct, (3, 4), (5,))),
    OpInfo("topk", lambda lib, a: lib.topk(a, 3, dim=0, largest=False), _shapes(distinct, (4, 3)),
           covers=("topk",), variant_test_name="smallest"),
    # Which of several tied elements topk picks is unspecified in PyTorch: values only.
    OpInfo("topk", lambda lib, a: (a.topk(2).values, a.topk(3, largest=False).values),
           lambda rng: [Sample(s.args, grad=(False,), name=s.name) for s in _ties(rng)], covers=("topk",),
           gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    OpInfo("topk", lambda lib, a: a.topk(0), _shapes(distinct, (3, 4)), covers=("topk",), variant_test_name="zero"),
    OpInfo("kthvalue", lambda lib, a: a.kthvalue(2), _shapes(distinct, (3, 4), (5,))),
    OpInfo("kthvalue", lambda lib, a: lib.kthvalue(a, 3, 0, True), _shapes(distinct, (4, 3)),
           covers=("kthvalue",), variant_test_name="keepdim"),
    OpInfo("median", lambda lib, a: a.median(), _shapes(distinct, (3, 4), (5,))),
    OpInfo("median", lambda lib, a: lib.median(a), _ties, covers=("median",), gradcheck=False,
           gradgradcheck=False, variant_test_name="ties"),
    OpInfo("median", lambda lib, a: a.median(1), _shapes(distinct, (3, 4), (3, 5)), covers=("median",), variant_test_name="dim"),
    OpInfo("median", lambda lib, a: lib.median(a, 0, keepdim=True), _shapes(distinct, (4, 3)),
           covers=("median",), variant_test_name="dim_keepdim"),
    OpInfo("median", lambda lib, a: (a.median(), *a.median(1), a.nanmedian()), _nan_mix,
           covers=("median", "nanmedian"), gradcheck=False, gradgradcheck=False, variant_test_name="nan"),
    OpInfo("nanmedian", lambda lib, a: lib.nanmedian(a), _shapes(distinct, (3, 4))),
    OpInfo("nanmedian", lambda lib, a: (*a.nanmedian(1), *lib.nanmedian(a, 0, keepdim=True)), _nan_mix,
           covers=("nanmedian",), gradcheck=False, gradgradcheck=False, variant_test_name="dim"),
    OpInfo("nanmedian", lambda lib, a: a.nanmedian(-1).values, _shapes(distinct, (3, 4), (4, 5)),
           covers=("nanmedian",), variant_test_name="dim_distinct"),
    OpInfo("mode", lambda lib, a: a.mode(), _shapes(distinct, (3, 4), (5,))),
    OpInfo("mode", lambda lib, a: (*a.mode(), *lib.mode(a, 0, keepdim=True)), _repeats, covers=("mode",),
           gradcheck=False, gradgradcheck=False, variant_test_name="repeats"),
    # -- logsumexp --
    OpInfo("logsumexp", lambda lib, a: a.logsumexp(1), _shapes(_u, (3, 4), (2, 3, 4))),
    OpInfo("logsumexp", lambda lib, a: lib.logsumexp(a, (0, 2), keepdim=True), _shapes(_u, (2, 3, 4)),
           covers=("logsumexp",), variant_test_name="dims"),
    OpInfo("logsumexp", lambda lib, a: lib.logsumexp(a, -1),
           lambda rng: [Sample((np.array([[1e4, -1e4, 1e4 - 1.0], [-1e4, -1e4 + 2.0, -1e4 - 3.0]]),))],
           covers=("logsumexp",), float32=False, variant_test_name="large"),
    OpInfo("logsumexp", lambda lib, a: a.logsumexp(0),
           lambda rng: [Sample((np.array([[-np.inf, 1.0], [-np.inf, -np.inf], [-np.inf, 2.0]]),))],
           covers=("logsumexp",), gradcheck=False, gradgradcheck=False, variant_test_name="inf"),
    OpInfo("logsumexp", lambda lib, a: a.logsumexp(0), lambda rng: [Sample((np.array([1, 2, 3]),))],
           covers=("logsumexp",), variant_test_name="int"),
    # -- norms of every order --
    OpInfo("norm", lambda lib, a: tuple(a.norm(p) for p in (1, 2, 3, 0.5, 1.5, float("inf"), -float("inf"))),
           _shapes(_nz, (3, 4), (5,)), covers=("norm",), variant_test_name="orders"),
    OpInfo("norm", lambda lib, a: lib.norm(a, 0), _shapes(_nz, (3, 4)), covers=("norm",), variant_test_name="zero_order"),
    OpInfo("norm", lambda lib, a: (a.norm("fro"), a.norm("fro", dim=(0, 1), keepdim=True), a.norm("fro", 1)),
           _shapes(_nz, (3, 4)), covers=("norm",), variant_test_name="fro"),
    OpInfo("norm", lambda lib, a: (lib.norm(a, 2.5, dim=(0, 2)), a.norm(1, -1, True), a.norm(float("inf"), 1)),
           _shapes(_nz, (2, 3, 4)), covers=("norm",), variant_test_name="dims"),
    OpInfo("norm", lambda lib, a: tuple(a.norm(p) for p in (0.5, 1, 1.5, 2, 3, float("inf"))),
           lambda rng: [Sample((np.array([0.0, 1.5, -2.0, 0.0]),)), Sample((np.zeros(3),), name="all zero")],
           covers=("norm",), gradcheck=False, gradgradcheck=False, variant_test_name="at_zero"),
    OpInfo("norm", lambda lib, a: (a.norm(float("inf")), a.norm(-float("inf"), 1)), _ties,
           covers=("norm",), gradcheck=False, gradgradcheck=False, variant_test_name="inf_ties"),
    OpInfo("norm", lambda lib, a: (a.float().norm(dtype=lib.float64), a.norm(1, 0, dtype=lib.float64)),
           _shapes(_nz, (3, 4)), covers=("norm",), gradcheck=False, gradgradcheck=False, variant_test_name="dtype"),
    # -- cumulative --
    OpInfo("cumsum", lambda lib, a: a.cumsum(1), _shapes(_u, (3, 4), (2, 3, 4))),
    OpInfo("cumsum", lambda lib, a: lib.cumsum(a, 0), _shapes(_u, (3, 4), (4,), (0, 2)), covers=("cumsum",), variant_test_name="dim0"),
    OpInfo("cumsum", lambda lib, a: (a.cumsum(0), lib.cumsum(a, 0, dtype=lib.float64)),
           lambda rng: [Sample((np.array([1, 2, 3]),)), Sample((np.array([True, False, True]),), name="bool")],
           covers=("cumsum",), variant_test_name="int"),
    OpInfo("cumprod", lambda lib, a: a.cumprod(1), _with_zeros),
    OpInfo("cumprod", lambda lib, a: lib.cumprod(a, 0), _with_zeros, covers=("cumprod",), variant_test_name="dim0"),
    OpInfo("cumprod", lambda lib, a: a.cumprod(-1),
           lambda rng: [Sample((np.array([[0.0, 1.5, -2.0, 0.5], [1.2, 0.0, 0.0, 3.0], [0.0, 0.0, 0.7, 0.0]]),))],
           covers=("cumprod",), variant_test_name="leading_zero"),
    OpInfo("cumsum_", lambda lib, a: (a * 1).cumsum_(0).cumprod_(1), _with_zeros,
           covers=("cumsum_", "cumprod_"), variant_test_name="inplace_cumulative"),
    # -- logical reductions and counts (no gradient) --
    OpInfo("all", lambda lib, a: (a.all(), lib.any(a), a.all(1), lib.any(a, 0, keepdim=True), a.all((0, 1))),
           lambda rng: [Sample((np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]]),), grad=(False,)),
                        Sample((np.array([[1, 0], [0, 0]]),), name="int"),
                        Sample((np.array([[1, 2], [3, 0]], dtype=np.uint8),), name="uint8"),
                        Sample((np.array([[True, True], [False, True]]),), name="bool")],
           covers=("all", "any"), variant_test_name="any"),
    OpInfo("count_nonzero", lambda lib, a: (a.count_nonzero(), lib.count_nonzero(a, 1), a.count_nonzero((0, 1))),
           lambda rng: [Sample((np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 5.0]]),), grad=(False,)),
                        Sample((np.array([[True, False, True], [False, False, True]]),), name="bool")]),
    # -- dist --
    OpInfo("dist", lambda lib, a, b: lib.dist(a, b), _pair),
    OpInfo("dist", lambda lib, a, b: tuple(a.dist(b, p) for p in (1, 3, 0.5, float("inf"))), _pair, covers=("dist",), variant_test_name="p"),
    # PyTorch's backward of dist(p=0) fails ("Expected a proper Tensor"): values only here.
    OpInfo("dist", lambda lib, a, b: lib.dist(a, b, 0),
           lambda rng: [Sample(s.args, grad=(False, False), name=s.name) for s in _pair(rng)], covers=("dist",), variant_test_name="zero_order"),
    # -- nan-aware sums, mean over several dims --
    OpInfo("nansum", lambda lib, a: (a.nansum(), lib.nansum(a, 1), a.nansum((0, 1), keepdim=True)), _nan_mix),
    OpInfo("nanmean", lambda lib, a: (a.nanmean(), lib.nanmean(a, 0)), _nan_mix),
    OpInfo("mean", lambda lib, a: (a.mean((0, 2)), lib.mean(a, [-1, 0], keepdim=True), a.mean(())),
           _shapes(_u, (2, 3, 4)), covers=("mean",), variant_test_name="dims"),
    # -- issue 12: aminmax, cummax / cummin, logcumsumexp, renorm --
    OpInfo("aminmax", lambda lib, a: (*lib.aminmax(a), *a.aminmax(dim=1, keepdim=True), *a.aminmax(dim=-1)),
           _shapes(distinct, (3, 4))),
    OpInfo("aminmax", lambda lib, a: (*a.aminmax(), *lib.aminmax(a, dim=0)), _shapes(distinct, (), (5,)),
           covers=("aminmax",), variant_test_name="small"),
    OpInfo("aminmax", lambda lib, a: (*a.aminmax(), *lib.aminmax(a, dim=1)), _ties, covers=("aminmax",),
           gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    OpInfo("cummax", lambda lib, a: (*a.cummax(-1), *lib.cummax(a, 0)), _shapes(distinct, (3, 4), (5,), ()),
           covers=("cummax",)),
    OpInfo("cummin", lambda lib, a: (*a.cummin(-1), *lib.cummin(a, 0)), _shapes(distinct, (3, 4), (5,), (0, 2)),
           covers=("cummin",)),
    OpInfo("cummax", lambda lib, a: (*a.cummax(1), *a.cummin(0)), _ties, covers=("cummax", "cummin"),
           gradcheck=False, gradgradcheck=False, variant_test_name="ties"),
    OpInfo("cummax", lambda lib, a: (*a.cummax(1), *a.cummin(1)), _nan_mix, covers=("cummax", "cummin"),
           gradcheck=False, gradgradcheck=False, variant_test_name="nan"),
    OpInfo("logcumsumexp", lambda lib, a: (a.logcumsumexp(1), lib.logcumsumexp(a, 0)), _shapes(_u, (3, 4), (0, 3))),
    OpInfo("logcumsumexp", lambda lib, a: a.logcumsumexp(-1), _shapes(_u, (5,), ()), covers=("logcumsumexp",),
           variant_test_name="small"),
    OpInfo("logcumsumexp", lambda lib, a: a.logcumsumexp(1),
           lambda rng: [Sample((np.array([[800.0, -800.0, 801.0], [-5.0, -900.0, -899.0]]),))],
           covers=("logcumsumexp",), float32=False, variant_test_name="large"),
    OpInfo("renorm", lambda lib, a: (a.renorm(2, 0, 2.5), lib.renorm(a, 1, 1, 3.0), a.renorm(3.5, -1, 1.5)),
           _shapes(_u, (3, 4), (2, 3, 2))),
    OpInfo("renorm_", lambda lib, a: (a * 1).renorm_(2, 0, 2.5), _shapes(_u, (3, 4)), covers=("renorm_",)),
    # -- counting and binning (no gradient) --
    OpInfo("bincount", lambda lib, a, w: (lib.bincount(a), a.bincount(w), lib.bincount(a, w.float(), minlength=9),
                                          lib.bincount(a, a)),
           lambda rng: [Sample((np.array([1, 4, 1, 0, 4, 4]), uniform(rng, 6)), grad=(False, False))]),
    OpInfo("histc", lambda lib, a: (lib.histc(a), a.histc(4, -1.0, 1.0), lib.histc(a, bins=3, min=2, max=2)),
           lambda rng: [Sample((uniform(rng, 3, 4),), grad=(False,)), Sample((np.zeros(0),), grad=(False,))]),
    OpInfo("histogram", lambda lib, a, b, w: (*lib.histogram(a, 4), *a.histogram(b, weight=w, density=True),
                                              *lib.histogram(a, 3, range=(-1.0, 1.0), density=True)),
           lambda rng: [Sample((uniform(rng, 3, 4), np.array([-2.0, -0.5, 0.0, 2.0]), uniform(rng, 3, 4)),
                               grad=(False, False, False))]),
    OpInfo("searchsorted", lambda lib, s, v: (lib.searchsorted(s, v), lib.searchsorted(s, v, right=True),
                                              lib.searchsorted(s, v, side="right", out_int32=True),
                                              *((lib.searchsorted(s, 0.25),) if s.dim() == 1 else ())),
           lambda rng: [Sample((np.array([-1.0, 0.25, 0.5, 1.5]), uniform(rng, 3, 2)), grad=(False, False)),
                        Sample((np.sort(uniform(rng, 3, 4), axis=-1), uniform(rng, 3, 5)), grad=(False, False),
                               name="batched")],
           covers=("searchsorted",)),
    OpInfo("searchsorted", lambda lib, s, v, order: lib.searchsorted(s, v, sorter=order),
           lambda rng: [Sample((np.array([3.0, -1.0, 2.0, 0.5]), uniform(rng, 4), np.array([1, 3, 2, 0])),
                               grad=(False, False, False))],
           covers=("searchsorted",), variant_test_name="sorter"),
    OpInfo("bucketize", lambda lib, v, b: (lib.bucketize(v, b), lib.bucketize(v, b, right=True, out_int32=True),
                                           lib.bucketize(0.5, b)),
           lambda rng: [Sample((uniform(rng, 3, 4), np.array([-1.0, 0.5, 1.5])), grad=(False, False))]),
    OpInfo("unique", lambda lib, a: (lib.unique(a), *a.unique(return_inverse=True, return_counts=True),
                                     *lib.unique(a, sorted=True, return_counts=True, dim=0)),
           lambda rng: [Sample((np.array([[2.0, 1.0], [0.5, 2.0], [2.0, 1.0]]),), grad=(False,)),
                        Sample((np.array([[3, 1, 3], [3, 1, 3]]),), name="int")]),
    OpInfo("unique_consecutive", lambda lib, a: (*lib.unique_consecutive(a, return_inverse=True, return_counts=True),
                                                 *a.unique_consecutive(return_counts=True, dim=1)),
           lambda rng: [Sample((np.array([[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]]),), grad=(False,))]),
    # -- composites (the nodes PyTorch's own code records) --
    OpInfo("diff", lambda lib, a: (lib.diff(a), a.diff(n=2, dim=0), a.diff(dim=1, n=5)), _shapes(_u, (4, 3))),
    OpInfo("diff", lambda lib, a, p, q: (lib.diff(a, prepend=p, append=q), a.diff(2, 0, append=a[:2] * 2)),
           lambda rng: [Sample((_u(rng, 3, 4), _u(rng, 3, 2), _u(rng, 3, 1)))], covers=("diff",),
           variant_test_name="prepend_append"),
    OpInfo("diff", lambda lib, a: (lib.diff(a), a.diff(n=0)),
           lambda rng: [Sample((np.array([1, 4, 9, 3]),), name="int"),
                        Sample((np.array([True, False, False, True]),), name="bool")],
           covers=("diff",), variant_test_name="int"),
    OpInfo("trapezoid", lambda lib, y, x: (lib.trapezoid(y), lib.trapezoid(y, dx=0.5, dim=0), lib.trapezoid(y, x),
                                           lib.trapz(y, x, dim=-1), lib.trapz(y, dx=2.0)),
           lambda rng: [Sample((_u(rng, 3, 4), np.sort(_u(rng, 4))))], covers=("trapezoid", "trapz")),
    OpInfo("cumulative_trapezoid", lambda lib, y, x: (lib.cumulative_trapezoid(y), lib.cumulative_trapezoid(y, x),
                                                      lib.cumulative_trapezoid(y, dx=0.5, dim=0)),
           lambda rng: [Sample((_u(rng, 3, 4), np.sort(_u(rng, 4))))]),
    OpInfo("gradient", lambda lib, a: (*lib.gradient(a), *lib.gradient(a, spacing=2.0, dim=-1, edge_order=2),
                                       *lib.gradient(a, spacing=[0.5, 3.0][:a.dim()])),
           _shapes(_u, (3, 4), (5,))),
    OpInfo("gradient", lambda lib, a, c0, c1: (*lib.gradient(a, spacing=(c0, c1)),
                                               *lib.gradient(a, spacing=(c1,), dim=1, edge_order=2)),
           lambda rng: [Sample((_u(rng, 3, 4), np.array([0.0, 0.5, 2.0]), np.array([-1.0, 0.0, 0.25, 1.5])),
                               grad=(True, False, False))],
           covers=("gradient",), variant_test_name="coordinates"),
    OpInfo("cov", lambda lib, a, aw: (lib.cov(a), a.cov(correction=0), lib.cov(a, aweights=aw),
                                      lib.cov(a, fweights=lib.tensor([1, 2, 1, 3]), aweights=aw, correction=2)),
           lambda rng: [Sample((_u(rng, 3, 4), _arr(rng.uniform(0.5, 2.0, size=4))))]),
    OpInfo("cov", lambda lib, a: (lib.cov(a), lib.corrcoef(a)), _shapes(_u, (5,)), covers=("cov", "corrcoef"),
           variant_test_name="vector"),
    OpInfo("corrcoef", lambda lib, a: (lib.corrcoef(a), a.corrcoef()), _shapes(_u, (3, 5))),
    OpInfo("quantile", lambda lib, a: tuple(a.quantile(0.3, interpolation=m) for m in
                                            ("linear", "lower", "higher", "midpoint", "nearest")),
           _shapes(distinct, (3, 4), (5,))),
    OpInfo("quantile", lambda lib, a, q: (lib.quantile(a, q, dim=1), a.quantile(q, 0, keepdim=True),
                                          a.quantile(0.75, dim=-1, interpolation="midpoint"),
                                          lib.quantile(a, q, keepdim=True, interpolation="nearest")),
           lambda rng: [Sample((distinct(rng, 3, 4), np.array([0.1, 0.5, 0.95])), grad=(True, False))],
           covers=("quantile",), float32=False, variant_test_name="dims"),
    OpInfo("nanquantile", lambda lib, a: (lib.nanquantile(a, 0.4), a.nanquantile(0.5, dim=1, interpolation="lower")),
           _shapes(distinct, (3, 4))),
    OpInfo("nanquantile", lambda lib, a: (a.nanquantile(0.4, dim=1), a.quantile(0.4, dim=1), a.nanquantile(0.9)),
           _nan_mix, covers=("nanquantile", "quantile"), gradcheck=False, gradgradcheck=False,
           variant_test_name="nan"),
]
