"""No wrong gradient at boundaries: ops whose backward masks, selects, divides or takes a log give
PyTorch's gradients at and around their boundaries (exactly at a threshold, ties, 0, ±1, NaN and
±inf inputs), also when the upstream gradient holds inf or NaN (``0 * inf`` must not leak a NaN
where PyTorch selects). Every gradient is compared with real PyTorch's, NaN positions included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

INF, NAN = np.inf, np.nan
# Around the usual kinks: 0 (both signs), ±1 (hardtanh), ±3 (hardswish), ±6 (relu6), non-finite.
EDGES = np.array([-INF, -6.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, INF, NAN])
UNIT = np.array([-INF, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, INF, NAN])  # asin, acos, atanh, logit
NONNEG = np.array([0.0, -0.0, 1e-300, 0.5, 1.0, 4.0, INF, NAN, -1.0])  # sqrt, log, pow at base 0
TIES = np.array([[1.0, 3.0, 3.0, -2.0], [NAN, 0.0, 5.0, 5.0], [2.0, 2.0, 2.0, 2.0]])  # max/min/sort ties
SPREAD = np.array([[1.0, 3.0, -INF, -2.0], [NAN, 0.0, 5.0, 4.0], [INF, 2.0, -1.0, 0.5]])
PAIR_X = np.array([0.0, 0.0, -0.0, 1.0, 1.0, 2.0, -1.0, INF, NAN, 0.0, 3.0])
PAIR_Y = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, -1.0, 1.0, 1.0, NAN, 3.0])

Case = tuple[str, Callable[..., Any], tuple[np.ndarray, ...]]


def _unary(name: str, fn: Callable[..., Any], x: np.ndarray = EDGES) -> Any:
    return pytest.param(name, fn, (x,), id=name)


def _binary(name: str, fn: Callable[..., Any], x: np.ndarray = PAIR_X, y: np.ndarray = PAIR_Y) -> Any:
    return pytest.param(name, fn, (x, y), id=name)


def _setitem(x: Any, y: Any) -> Any:
    out = x * 1
    out[2:5] = y
    return out


def F(lib: Any) -> Any:  # noqa: N802 - torch.nn.functional's usual alias
    return lib.nn.functional


CASES = [
    # -- masks and selections (item 1) --
    _unary("relu", lambda lib, x: lib.relu(x)),
    _unary("relu_method", lambda lib, x: x.relu()),
    _unary("F.relu", lambda lib, x: F(lib).relu(x)),
    _unary("relu6", lambda lib, x: F(lib).relu6(x)),
    _unary("hardtanh", lambda lib, x: F(lib).hardtanh(x)),
    _unary("hardtanh_0_6", lambda lib, x: F(lib).hardtanh(x, 0.0, 6.0)),
    _unary("threshold", lambda lib, x: F(lib).threshold(x, 1.0, 0.0)),
    _unary("threshold_0", lambda lib, x: F(lib).threshold(x, 0.0, 2.0)),
    _unary("hardswish", lambda lib, x: F(lib).hardswish(x)),
    _unary("hardsigmoid", lambda lib, x: F(lib).hardsigmoid(x)),
    _unary("leaky_relu", lambda lib, x: F(lib).leaky_relu(x, 0.1)),
    _unary("elu", lambda lib, x: F(lib).elu(x)),
    _unary("celu", lambda lib, x: F(lib).celu(x, 0.5)),
    _unary("selu", lambda lib, x: F(lib).selu(x)),
    _unary("softplus", lambda lib, x: F(lib).softplus(x, 1.0, 3.0)),
    _unary("hardshrink", lambda lib, x: F(lib).hardshrink(x, 1.0)),
    _unary("softshrink", lambda lib, x: F(lib).softshrink(x, 1.0)),
    _unary("rrelu_eval", lambda lib, x: F(lib).rrelu(x, training=False)),
    # In-place forms test the result (PyTorch's *Backward1 nodes).
    _unary("relu_", lambda lib, x: (x * 1).relu_()),
    _unary("hardtanh_", lambda lib, x: F(lib).hardtanh(x * 1, inplace=True)),
    _unary("relu6_", lambda lib, x: F(lib).relu6(x * 1, inplace=True)),
    _unary("threshold_", lambda lib, x: F(lib).threshold(x * 1, 1.0, 0.0, inplace=True)),
    _unary("elu_", lambda lib, x: F(lib).elu(x * 1, inplace=True)),
    _unary("leaky_relu_", lambda lib, x: F(lib).leaky_relu(x * 1, 0.1, inplace=True)),
    _unary("hardswish_", lambda lib, x: F(lib).hardswish(x * 1, inplace=True)),
    _unary("clamp_", lambda lib, x: (x * 1).clamp_(-1.0, 1.0)),
    _unary("clamp_min_", lambda lib, x: (x * 1).clamp_(min=0.0)),
    # Overwritten inputs get zeros (PyTorch's zeros_like), never ``grad * 0``.
    _binary("copy_", lambda lib, x, y: (x * 1).copy_(y)),
    _unary("fill_", lambda lib, x: (x * 1).fill_(2.0)),
    _unary("zero_", lambda lib, x: (x * 1).zero_()),
    # (inf // 1 is NaN in PyTorch's forward, inf in ours: not at inf here.)
    _binary("div_floor", lambda lib, x, y: x.div(y, rounding_mode="floor"), PAIR_X[PAIR_X != INF],
            PAIR_Y[PAIR_X != INF]),
    _binary("div_trunc", lambda lib, x, y: lib.div(x, y, rounding_mode="trunc")),
    _binary("setitem_inf_src", lambda lib, x, y: _setitem(x, y), EDGES, np.array([INF, NAN, -INF])),
    _unary("clamp_min", lambda lib, x: x.clamp(min=0.0)),
    _unary("clamp_max", lambda lib, x: x.clamp(max=0.0)),
    _unary("clamp_both", lambda lib, x: x.clamp(-1.0, 1.0)),
    _unary("clamp_min_fn", lambda lib, x: lib.clamp_min(x, 1.0)),
    _unary("clamp_max_fn", lambda lib, x: lib.clamp_max(x, 1.0)),
    _unary("clamp_min_sqrt", lambda lib, x: x.clamp(min=0).sqrt()),
    _unary("relu_sqrt", lambda lib, x: x.relu().sqrt()),
    _unary("clamp_min_log", lambda lib, x: x.clamp(min=0).log()),
    _unary("hardtanh_reciprocal", lambda lib, x: F(lib).hardtanh(x, 0.0, 1.0).reciprocal()),
    _unary("abs", lambda lib, x: x.abs()),
    _unary("sign", lambda lib, x: x.sign()),
    _unary("nan_to_num", lambda lib, x: x.nan_to_num()),
    _unary("where_mask", lambda lib, x: lib.where(x > 0, x, x * 2)),
    _unary("where_sqrt", lambda lib, x: lib.where(x > 0, x.clamp(min=0).sqrt(), 0.0)),
    _unary("masked_fill", lambda lib, x: x.masked_fill(x < 0, 0.0)),
    _binary("maximum", lambda lib, x, y: lib.maximum(x, y)),
    _binary("minimum", lambda lib, x, y: lib.minimum(x, y)),
    _binary("clamp_tensor_bounds", lambda lib, x, y: x.clamp(min=y, max=y + 1)),
    _binary("clamp_min_tensor", lambda lib, x, y: x.clamp(min=y)),
    _binary("clamp_max_tensor", lambda lib, x, y: x.clamp(max=y)),
    _binary("prelu", lambda lib, x, w: F(lib).prelu(x, w), EDGES, np.array([0.25])),
    _unary("max", lambda lib, x: x.max(), TIES),
    _unary("min", lambda lib, x: x.min(), TIES),
    _unary("amax", lambda lib, x: x.amax(1), TIES),
    _unary("amin", lambda lib, x: x.amin(1), TIES),
    _unary("max_dim", lambda lib, x: x.max(1).values, TIES),
    _unary("min_dim", lambda lib, x: x.min(1).values, TIES),
    _unary("sort", lambda lib, x: x.sort(1).values, TIES),
    # Which of several tied elements topk/kthvalue pick is unspecified in PyTorch: no ties here.
    _unary("topk", lambda lib, x: x.topk(2, 1).values, SPREAD),
    _unary("kthvalue", lambda lib, x: x.kthvalue(2, 1).values, SPREAD),
    _unary("median", lambda lib, x: x.median(), TIES),
    _unary("median_dim", lambda lib, x: x.median(1).values, TIES),
    _unary("logsumexp_inf", lambda lib, x: x.logsumexp(1), np.array([[-INF, -INF], [INF, 1.0], [0.0, -INF]])),
    # -- logs and divisions at their boundary (item 2) --
    _unary("pow_2", lambda lib, x: x ** 2, NONNEG),
    _unary("pow_3", lambda lib, x: x.pow(3), NONNEG),
    _unary("pow_half", lambda lib, x: x ** 0.5, NONNEG),
    _unary("pow_1_5", lambda lib, x: x ** 1.5, NONNEG),
    _unary("pow_0", lambda lib, x: x ** 0, NONNEG),
    _unary("pow_neg1", lambda lib, x: x ** -1, NONNEG),
    _unary("pow_1", lambda lib, x: x ** 1, NONNEG),
    _unary("zero_rpow", lambda lib, x: 0.0 ** x, EDGES),
    _unary("two_rpow", lambda lib, x: 2.0 ** x, EDGES),
    _unary("one_rpow", lambda lib, x: 1.0 ** x, EDGES),
    _binary("pow_tensor", lambda lib, x, y: x ** y),
    _binary("pow_tensor_base0", lambda lib, x, y: x ** y, np.zeros(5), np.array([0.0, 1.0, 2.0, 0.5, -1.0])),
    _binary("float_power", lambda lib, x, y: lib.float_power(x, y), np.zeros(4), np.array([0.0, 1.0, 2.0, 0.5])),
    _unary("float_power_scalar", lambda lib, x: lib.float_power(x, 2), NONNEG),
    _unary("sqrt", lambda lib, x: x.sqrt(), NONNEG),
    _unary("rsqrt", lambda lib, x: x.rsqrt(), NONNEG),
    _unary("log", lambda lib, x: x.log(), NONNEG),
    _unary("log2", lambda lib, x: x.log2(), NONNEG),
    _unary("log10", lambda lib, x: x.log10(), NONNEG),
    _unary("log1p", lambda lib, x: x.log1p(), UNIT),
    _unary("reciprocal", lambda lib, x: x.reciprocal(), NONNEG),
    _unary("asin", lambda lib, x: x.asin(), UNIT),
    _unary("acos", lambda lib, x: x.acos(), UNIT),
    _unary("atanh", lambda lib, x: x.atanh(), UNIT),
    _binary("atan2", lambda lib, x, y: lib.atan2(x, y)),
    _binary("hypot", lambda lib, x, y: lib.hypot(x, y)),
    _binary("div", lambda lib, x, y: x / y),
    _unary("norm_zero", lambda lib, x: x.norm(), np.zeros(3)),
    _unary("norm_p1_zero", lambda lib, x: x.norm(p=1), np.zeros(3)),
    _unary("norm_p3_zero", lambda lib, x: x.norm(p=3), np.zeros(3)),
    _unary("norm_inf_zero", lambda lib, x: x.norm(p=INF), np.zeros(3)),
    _unary("vector_norm_zero", lambda lib, x: lib.linalg.vector_norm(x), np.zeros(3)),
    _unary("vector_norm_dim_zero", lambda lib, x: lib.linalg.vector_norm(x, dim=1),
           np.array([[0.0, 0.0], [3.0, 4.0]])),
    _binary("dist_equal", lambda lib, x, y: lib.dist(x, y), np.ones(3), np.ones(3)),
    _binary("pairwise_distance_equal", lambda lib, x, y: F(lib).pairwise_distance(x, y), np.ones((2, 3)),
            np.ones((2, 3))),
    _unary("pdist_equal", lambda lib, x: F(lib).pdist(x), np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]])),
    _unary("std_one", lambda lib, x: x.std(), np.array([2.0])),
    _unary("var_one", lambda lib, x: x.var(), np.array([2.0])),
    _unary("std_constant", lambda lib, x: x.std(), np.array([2.0, 2.0, 2.0])),
    _unary("nansum", lambda lib, x: x.nansum(), TIES),
    _unary("nanmean", lambda lib, x: x.nanmean(1), TIES),
    _unary("nanmedian", lambda lib, x: x.nanmedian(), TIES),
    _unary("prod_zeros", lambda lib, x: x.prod(1), np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 2.0], [INF, 0.0, 1.0]])),
    _unary("prod_all_zero", lambda lib, x: x.prod(), np.array([0.0, 2.0, 3.0])),
    _unary("cumprod_zeros", lambda lib, x: x.cumprod(0), np.array([2.0, 0.0, 3.0, 0.0, 4.0])),
    _unary("square", lambda lib, x: x.square()),
    _unary("exp", lambda lib, x: x.exp()),
    _unary("sigmoid", lambda lib, x: x.sigmoid()),
    _unary("tanh", lambda lib, x: x.tanh()),
    _unary("gelu", lambda lib, x: F(lib).gelu(x)),
    _unary("gelu_tanh", lambda lib, x: F(lib).gelu(x, approximate="tanh")),
    _unary("silu", lambda lib, x: F(lib).silu(x)),
    _unary("mish", lambda lib, x: F(lib).mish(x)),
    _unary("logsigmoid", lambda lib, x: F(lib).logsigmoid(x)),
    _unary("softsign", lambda lib, x: F(lib).softsign(x)),
    _unary("tanhshrink", lambda lib, x: F(lib).tanhshrink(x)),
    _unary("erfinv", lambda lib, x: x.erfinv(), UNIT),
    _unary("log_softmax_inf", lambda lib, x: x.log_softmax(1), np.array([[-INF, 0.0, 1.0], [-INF, -INF, 2.0]])),
    _unary("softmax_inf", lambda lib, x: x.softmax(1), np.array([[-INF, 0.0, 1.0], [-INF, -INF, 2.0]])),
    _unary("normalize_zero", lambda lib, x: F(lib).normalize(x, dim=1), np.array([[0.0, 0.0], [3.0, 4.0]])),
    _binary("cosine_similarity_zero", lambda lib, x, y: F(lib).cosine_similarity(x, y),
            np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[1.0, 2.0], [0.0, 0.0]])),
    _binary("l1_loss_equal", lambda lib, x, t: F(lib).l1_loss(x, t), PAIR_X, PAIR_Y),
    _binary("mse_loss", lambda lib, x, t: F(lib).mse_loss(x, t, reduction="none"), PAIR_X, PAIR_Y),
    _binary("smooth_l1_at_beta", lambda lib, x, t: F(lib).smooth_l1_loss(x, t, reduction="none", beta=1.0),
            PAIR_X, PAIR_Y),
    _binary("huber_at_delta", lambda lib, x, t: F(lib).huber_loss(x, t, reduction="none", delta=1.0), PAIR_X, PAIR_Y),
    _binary("margin_ranking_at_hinge", lambda lib, x, y: F(lib).margin_ranking_loss(
        x, y, lib.tensor(np.ones(11)), margin=0.0, reduction="none"), PAIR_X, PAIR_Y),
    _unary("hinge_embedding_at_margin", lambda lib, x: F(lib).hinge_embedding_loss(
        x, lib.tensor(np.resize([1.0, -1.0], 13)), reduction="none"), EDGES),
    # Not at x = -inf: PyTorch's exp(-x) / (1 + exp(-x)) is inf / inf = NaN there, ours the limit -1.
    _unary("soft_margin", lambda lib, x: F(lib).soft_margin_loss(x, lib.tensor(np.ones(12)), reduction="none"),
           EDGES[1:]),
    _unary("bce_with_logits_inf", lambda lib, x: F(lib).binary_cross_entropy_with_logits(
        x, lib.tensor(np.resize([1.0, 0.0, 0.5], 13)), reduction="none"), EDGES),
    _binary("kl_div_target_zero", lambda lib, x, t: F(lib).kl_div(x, t, reduction="none"),
            np.array([-1.0, -2.0, 0.0, -INF]), np.array([0.0, 0.5, 1.0, 0.0])),
    _binary("gaussian_nll_var_below_eps", lambda lib, x, v: F(lib).gaussian_nll_loss(
        x, lib.tensor(np.zeros(4)), v, reduction="none"), np.array([1.0, 0.0, -1.0, 2.0]),
            np.array([0.0, 1e-7, 1e-6, 1.0])),
    _unary("poisson_nll_zero", lambda lib, x: F(lib).poisson_nll_loss(x, lib.tensor(np.ones(4)), log_input=False,
                                                                       reduction="none"),
           np.array([0.0, 1e-9, 1.0, 2.0])),
    _binary("bce_edges", lambda lib, x, t: F(lib).binary_cross_entropy(x, t),
            np.array([0.0, 1.0, 0.0, 1.0, 0.5]), np.array([0.0, 1.0, 1.0, 0.0, 0.5])),
]


def _upstream(shape: tuple[int, ...], kind: str) -> np.ndarray:
    n = int(np.prod(shape))
    if kind == "ones":
        return np.ones(shape)
    pattern = np.array([INF, NAN, -INF, 2.0] if kind == "non-finite" else [NAN])
    return np.resize(pattern, n).reshape(shape)


def _run(lib: Any, fn: Callable[..., Any], arrays: tuple[np.ndarray, ...], kind: str) -> tuple[Any, list[Any]]:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    if not out.requires_grad:
        return out.detach().numpy(), [None for _ in leaves]
    out.backward(lib.tensor(_upstream(tuple(out.shape), kind)))
    return out.detach().numpy(), [None if x.grad is None else x.grad.numpy() for x in leaves]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["ones", "non-finite", "nan"])
@pytest.mark.parametrize(("name", "fn", "arrays"), CASES)
def test_boundary_gradient_matches_torch(torch: Any, name: str, fn: Callable[..., Any],
                                         arrays: tuple[np.ndarray, ...], kind: str) -> None:
    expected = outcome(lambda: _run(torch, fn, arrays, kind))
    if expected[0] != "ok":
        assert outcome(lambda: _run(rg, fn, arrays, kind)) == expected
        return
    ref_out, ref_grads = _run(torch, fn, arrays, kind)
    out, grads = _run(rg, fn, arrays, kind)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=0, equal_nan=True, err_msg="forward")
    for i, (mine, ref) in enumerate(zip(grads, ref_grads)):
        assert (mine is None) == (ref is None)
        if ref is not None:
            np.testing.assert_allclose(mine, ref, rtol=1e-10, atol=1e-300, equal_nan=True,
                                       err_msg=f"gradient of input {i}")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", ["ones", "non-finite"])
def test_xlogy_gradients_match_torch(torch: Any, kind: str) -> None:
    # ``xlogy`` is internal (kl_div records it); at x == 0 < y its x-derivative is log(y), not 0.
    from retrograd.ops import nn as ops_nn
    from retrograd.ops.op import apply

    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, NAN, 0.0, 0.0])
    y = np.array([2.0, 0.0, -1.0, 0.0, NAN, 1.0, INF, 0.5])
    ours = _run(rg, lambda lib, a, b: apply(ops_nn.xlogy, (a, b)), (x, y), kind)
    theirs = _run(torch, lambda lib, a, b: lib.xlogy(a, b), (x, y), kind)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, equal_nan=True)
    for mine, ref in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(mine, ref, rtol=1e-12, equal_nan=True)
