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
]
