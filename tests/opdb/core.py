"""Op database entries for the core ops (arithmetic, unary math, reductions, views, indexing,
joining, matmul, softmax family)."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample, away_from_zero, distinct, positive, uniform


def _binary(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 3), uniform(rng, 3)), name="same shape"),
        Sample((uniform(rng, 2, 3), uniform(rng, 3)), name="broadcast rhs"),
        Sample((uniform(rng, 2, 1), uniform(rng, 1, 3)), name="broadcast both"),
        Sample((uniform(rng), uniform(rng, 2)), name="0-d lhs"),
        Sample((uniform(rng, 3, 2), uniform(rng, 3, 2)), name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 3), 2.5), name="python scalar"),
        Sample((uniform(rng, 0, 3), uniform(rng, 3)), name="empty"),
        Sample((uniform(rng, 2, 3), uniform(rng, 0, 1, 3)), name="empty broadcast"),
    ]


def _binary_nonzero(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 3), away_from_zero(rng, 3)), name="same shape"),
        Sample((uniform(rng, 2, 3), away_from_zero(rng, 3)), name="broadcast rhs"),
        Sample((uniform(rng), away_from_zero(rng, 2)), name="0-d lhs"),
        Sample((uniform(rng, 3), 2.5), name="python scalar"),
    ]


def _unary(domain):  # type: ignore[no-untyped-def]
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((domain(rng, 4),), name="vector"),
            Sample((domain(rng, 2, 3),), name="matrix"),
            Sample((domain(rng),), name="0-d"),
            Sample((domain(rng, 3, 2),), name="noncontiguous", noncontiguous=True),
            Sample((domain(rng, 0),), name="empty"),
        ]

    return samples


def _matrix(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 3),), name="matrix"),
        Sample((uniform(rng, 2, 3, 4),), name="3-d"),
    ]


def _distinct_matrix(rng: np.random.Generator) -> list[Sample]:
    return [Sample((distinct(rng, 3, 4),), name="matrix"), Sample((distinct(rng, 5),), name="vector")]


OPS: list[OpInfo] = [
    # -- arithmetic --
    OpInfo("add", lambda lib, a, b: a + b, _binary, covers=("add", "__add__", "__radd__")),
    OpInfo("add", lambda lib, a, b: lib.add(a, b, alpha=2.0),
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3)))], covers=("add",), variant_test_name="alpha"),
    OpInfo("__radd__", lambda lib, a: 1.5 + a, _unary(uniform), covers=("__radd__",)),
    OpInfo("sub", lambda lib, a, b: a - b, _binary, covers=("sub", "__sub__", "subtract")),
    OpInfo("rsub", lambda lib, a: 1.5 - a, _unary(uniform), covers=("__rsub__",)),
    OpInfo("mul", lambda lib, a, b: a * b, _binary, covers=("mul", "__mul__", "multiply", "__rmul__")),
    OpInfo("div", lambda lib, a, b: a / b, _binary_nonzero, covers=("div", "__truediv__", "divide", "true_divide")),
    OpInfo("__rtruediv__", lambda lib, a: 2.0 / a, _unary(away_from_zero), covers=("__rtruediv__",)),
    OpInfo("neg", lambda lib, a: -a, _unary(uniform), covers=("neg", "__neg__", "negative")),
    OpInfo("reciprocal", lambda lib, a: a.reciprocal(), _unary(away_from_zero)),
    OpInfo("pow", lambda lib, a: a ** 3, _unary(uniform), covers=("pow", "__pow__"), variant_test_name="scalar"),
    OpInfo("pow", lambda lib, a: a.pow(0.5), _unary(positive), covers=("pow",), variant_test_name="fractional"),
    OpInfo("pow", lambda lib, a: a.pow(0), _unary(uniform), covers=("pow",), variant_test_name="zero"),
    OpInfo("pow", lambda lib, a, b: a ** b,
           lambda rng: [Sample((positive(rng, 3), uniform(rng, 3))), Sample((positive(rng, 2, 3), uniform(rng, 3)))],
           covers=("pow",), variant_test_name="tensor"),
    OpInfo("__rpow__", lambda lib, a: 2.0 ** a, _unary(uniform), covers=("__rpow__",)),
    # -- unary math --
    OpInfo("exp", lambda lib, a: a.exp(), _unary(uniform)),
    OpInfo("log", lambda lib, a: a.log(), _unary(positive)),
    OpInfo("sqrt", lambda lib, a: a.sqrt(), _unary(positive)),
    OpInfo("sin", lambda lib, a: a.sin(), _unary(uniform)),
    OpInfo("cos", lambda lib, a: lib.cos(a), _unary(uniform)),
    OpInfo("tanh", lambda lib, a: lib.tanh(a), _unary(uniform)),
    OpInfo("sigmoid", lambda lib, a: lib.sigmoid(a), _unary(uniform)),
    OpInfo("relu", lambda lib, a: lib.relu(a), _unary(away_from_zero)),
    OpInfo("abs", lambda lib, a: a.abs(), _unary(away_from_zero), covers=("abs", "__abs__", "absolute")),
    OpInfo("sign", lambda lib, a: a.sign(), _unary(away_from_zero)),
    OpInfo("clamp", lambda lib, a: a.clamp(-0.5, 0.7), _unary(uniform), covers=("clamp", "clip")),
    OpInfo("clamp_min", lambda lib, a: a.clamp(min=-0.5), _unary(uniform), covers=("clamp", "clamp_min")),
    OpInfo("clamp_max", lambda lib, a: a.clamp(max=0.5), _unary(uniform), covers=("clamp", "clamp_max")),
    OpInfo("clone", lambda lib, a: a.clone(), _unary(uniform)),
    OpInfo("to", lambda lib, a: a.to(lib.float32), _unary(uniform), covers=("to",), gradcheck=False,
           gradgradcheck=False, variant_test_name="float32"),
    OpInfo("where", lambda lib, c, a, b: lib.where(c, a, b),
           lambda rng: [Sample((rng.random(4) > 0.5, uniform(rng, 4), uniform(rng, 4))),
                        Sample((rng.random((2, 3)) > 0.5, uniform(rng, 2, 3), uniform(rng, 3)))]),
    OpInfo("where", lambda lib, c, a: lib.where(c, a, 0.0),
           lambda rng: [Sample((rng.random(4) > 0.5, uniform(rng, 4)))], covers=("where",), variant_test_name="scalar"),
    OpInfo("masked_fill", lambda lib, a, m: a.masked_fill(m, 0.5),
           lambda rng: [Sample((uniform(rng, 2, 3), rng.random((2, 3)) > 0.5))]),
    OpInfo("masked_fill", lambda lib, a, m, v: a.masked_fill(m, v),
           lambda rng: [Sample((uniform(rng, 2, 3), rng.random((2, 3)) > 0.5, uniform(rng))),
                        Sample((uniform(rng, 2, 3), rng.random(3) > 0.5, uniform(rng)), name="broadcast mask")],
           variant_test_name="tensor_value"),
    OpInfo("maximum", lambda lib, a, b: lib.maximum(a, b),
           lambda rng: [Sample((distinct(rng, 4), distinct(rng, 4) + 0.25))]),
    OpInfo("minimum", lambda lib, a, b: lib.minimum(a, b),
           lambda rng: [Sample((distinct(rng, 4), distinct(rng, 4) + 0.25))]),
    # -- reductions --
    OpInfo("sum", lambda lib, a: a.sum(), _unary(uniform)),
    OpInfo("sum", lambda lib, a: a.sum(dim=1), _matrix, covers=("sum",), variant_test_name="dim"),
    OpInfo("sum", lambda lib, a: a.sum((0, -1), keepdim=True), _matrix, covers=("sum",), variant_test_name="dims_keepdim"),
    OpInfo("mean", lambda lib, a: a.mean(), _unary(uniform)),
    OpInfo("mean", lambda lib, a: lib.mean(a, 0, keepdim=True), _matrix, covers=("mean",), variant_test_name="dim"),
    OpInfo("max", lambda lib, a: a.max(), _distinct_matrix),
    OpInfo("min", lambda lib, a: lib.min(a), _distinct_matrix),
    OpInfo("max", lambda lib, a: a.max(dim=-1).values,
           lambda rng: [Sample((distinct(rng, 3, 4),))], covers=("max",), variant_test_name="dim"),
    OpInfo("max", lambda lib, a: a.max(0, keepdim=True)[0],
           lambda rng: [Sample((distinct(rng, 3, 4),))], covers=("max",), variant_test_name="dim_keepdim"),
    OpInfo("min", lambda lib, a: a.min(dim=1).values, lambda rng: [Sample((distinct(rng, 3, 4),))],
           covers=("min",), variant_test_name="dim"),
    OpInfo("norm", lambda lib, a: a.norm(), _unary(away_from_zero)),
    OpInfo("norm", lambda lib, a: a.norm(2, dim=1), lambda rng: [Sample((away_from_zero(rng, 2, 3),))],
           covers=("norm",), variant_test_name="dim"),
    OpInfo("norm", lambda lib, a: a.norm(p=1), lambda rng: [Sample((away_from_zero(rng, 4),))], covers=("norm",), variant_test_name="p1"),
    OpInfo("norm", lambda lib, a: a.norm(p=3, dim=0), lambda rng: [Sample((away_from_zero(rng, 3, 2),))],
           covers=("norm",), variant_test_name="p3"),
    OpInfo("sum_to_size", lambda lib, a: a.sum_to_size(1, 3), lambda rng: [Sample((uniform(rng, 2, 3),))]),
    # -- views and shape --
    OpInfo("view", lambda lib, a: a.view(3, 2), lambda rng: [Sample((uniform(rng, 2, 3),))]),
    OpInfo("reshape", lambda lib, a: a.reshape(-1), _matrix),
    OpInfo("reshape", lambda lib, a: a.t().reshape(6), lambda rng: [Sample((uniform(rng, 2, 3),))],
           covers=("reshape",), variant_test_name="copy"),
    OpInfo("flatten", lambda lib, a: a.flatten(1), lambda rng: [Sample((uniform(rng, 2, 3, 2),))]),
    OpInfo("transpose", lambda lib, a: a.transpose(0, -1), _matrix, covers=("transpose", "swapaxes")),
    OpInfo("t", lambda lib, a: a.t(), lambda rng: [Sample((uniform(rng, 2, 3),))]),
    OpInfo("T", lambda lib, a: a.T, lambda rng: [Sample((uniform(rng, 2, 3, 4),))], covers=()),
    OpInfo("mT", lambda lib, a: a.mT, lambda rng: [Sample((uniform(rng, 2, 3, 4),))], covers=()),
    OpInfo("permute", lambda lib, a: a.permute(2, 0, 1), lambda rng: [Sample((uniform(rng, 2, 3, 4),))]),
    OpInfo("squeeze", lambda lib, a: a.squeeze(), lambda rng: [Sample((uniform(rng, 2, 1, 3),))]),
    OpInfo("squeeze", lambda lib, a: a.squeeze(1), lambda rng: [Sample((uniform(rng, 2, 1, 3),))],
           covers=("squeeze",), variant_test_name="dim"),
    OpInfo("unsqueeze", lambda lib, a: a.unsqueeze(-1), _matrix),
    OpInfo("expand", lambda lib, a: a.expand(4, 2, 3), lambda rng: [Sample((uniform(rng, 2, 1),))]),
    OpInfo("expand_as", lambda lib, a, b: a.expand_as(b),
           lambda rng: [Sample((uniform(rng, 3, 1), uniform(rng, 3, 4)), grad=(True, False))]),
    OpInfo("select", lambda lib, a: a.select(1, -1), _matrix),
    OpInfo("narrow", lambda lib, a: a.narrow(1, 1, 2), _matrix),
    OpInfo("unbind", lambda lib, a: a.unbind(1), lambda rng: [Sample((uniform(rng, 2, 3),))]),
    OpInfo("__getitem__", lambda lib, a: a[1, ::2, None, ...], lambda rng: [Sample((uniform(rng, 3, 5, 2),))],
           covers=("__getitem__",), variant_test_name="basic"),
    OpInfo("__getitem__", lambda lib, a: a[[0, 2, 0]], lambda rng: [Sample((uniform(rng, 3, 2),))],
           covers=("__getitem__",), variant_test_name="int_list"),
    OpInfo("__getitem__", lambda lib, a, m: a[m],
           lambda rng: [Sample((uniform(rng, 3, 2), np.array([[True, False], [False, False], [True, True]])))],
           covers=("__getitem__",), variant_test_name="mask"),
    OpInfo("__getitem__", lambda lib, a, i: a[i, 1],
           lambda rng: [Sample((uniform(rng, 3, 2), np.array([2, 0, 2])))], covers=("__getitem__",), variant_test_name="tensor_and_int"),
    OpInfo("gather", lambda lib, a, i: a.gather(1, i),
           lambda rng: [Sample((uniform(rng, 3, 4), np.array([[0, 3], [1, 1], [2, 0]])))]),
    OpInfo("scatter", lambda lib, a, s, i: a.scatter(1, i, s),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3, 2), np.array([[0, 3], [1, 2], [2, 0]])))]),
    OpInfo("scatter_add", lambda lib, a, s, i: a.scatter_add(1, i, s),
           lambda rng: [Sample((uniform(rng, 3, 4), uniform(rng, 3, 2), np.array([[0, 3], [1, 1], [2, 0]])))]),
    OpInfo("cat", lambda lib, ts: lib.cat(ts, dim=1),
           lambda rng: [Sample(([uniform(rng, 2, 3), uniform(rng, 2, 1)],))], covers=("cat", "concat")),
    OpInfo("stack", lambda lib, ts: lib.stack(ts, dim=-1),
           lambda rng: [Sample(([uniform(rng, 2, 3), uniform(rng, 2, 3)],))]),
    # -- matrix products --
    OpInfo("mm", lambda lib, a, b: a.mm(b), lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3, 4)))]),
    OpInfo("mv", lambda lib, a, b: lib.mv(a, b), lambda rng: [Sample((uniform(rng, 2, 3), uniform(rng, 3)))]),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3)))]),
    OpInfo("bmm", lambda lib, a, b: a.bmm(b), lambda rng: [Sample((uniform(rng, 2, 2, 3), uniform(rng, 2, 3, 2)))]),
    OpInfo("matmul", lambda lib, a, b: a @ b,
           lambda rng: [Sample((uniform(rng, 3), uniform(rng, 3)), name="1d@1d"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 3)), name="2d@1d"),
                        Sample((uniform(rng, 3), uniform(rng, 3, 2)), name="1d@2d"),
                        Sample((uniform(rng, 2, 3), uniform(rng, 3, 2)), name="2d@2d"),
                        Sample((uniform(rng, 2, 2, 3), uniform(rng, 3, 2)), name="3d@2d"),
                        Sample((uniform(rng, 2, 2, 3), uniform(rng, 3)), name="3d@1d"),
                        Sample((uniform(rng, 3), uniform(rng, 2, 3, 2)), name="1d@3d"),
                        Sample((uniform(rng, 2, 1, 2, 3), uniform(rng, 3, 3, 2)), name="broadcast batch")],
           covers=("matmul", "__matmul__")),
    # -- softmax family and losses --
    OpInfo("softmax", lambda lib, a: lib.softmax(a, dim=1), _matrix),
    OpInfo("log_softmax", lambda lib, a: a.log_softmax(-1), _matrix),
    OpInfo("nll_loss", lambda lib, a, t: lib.nn.functional.nll_loss(a, t),
           lambda rng: [Sample((uniform(rng, 4, 3), np.array([0, 2, 1, 2])))], covers=("nll_loss",)),
    OpInfo("cross_entropy", lambda lib, a, t: lib.nn.functional.cross_entropy(a, t),
           lambda rng: [Sample((uniform(rng, 4, 3), np.array([0, 2, 1, 2])))], covers=("cross_entropy",)),
]

# -- comparisons, logical ops, arg-reductions, aliases: forward parity only (no gradient) -----


def _pair(rng: np.random.Generator) -> list[Sample]:
    a = distinct(rng, 2, 3)
    b = a.copy()
    b[0, 1] += 1.0  # some equal, some not
    b[1, 2] -= 1.0
    return [Sample((a, b), grad=(False, False)), Sample((a, 0.25), grad=(False,), name="scalar")]


def _bools(rng: np.random.Generator) -> list[Sample]:
    return [Sample((rng.random((2, 3)) > 0.5, rng.random((2, 3)) > 0.5))]


_NO_GRAD = {"gradcheck": False, "gradgradcheck": False}
OPS += [
    OpInfo(op, (lambda n: lambda lib, a, b: getattr(lib, n)(a, b))(op), _pair, **_NO_GRAD)  # type: ignore[arg-type]
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "less")
]
OPS += [
    OpInfo("logical_and", lambda lib, a, b: lib.logical_and(a, b), _bools, **_NO_GRAD),  # type: ignore[arg-type]
    OpInfo("logical_or", lambda lib, a, b: lib.logical_or(a, b), _bools, **_NO_GRAD),  # type: ignore[arg-type]
    OpInfo("logical_not", lambda lib, a, b: lib.logical_not(a), _bools, **_NO_GRAD),  # type: ignore[arg-type]
    OpInfo("argmax", lambda lib, a: lib.argmax(a, dim=-1), _distinct_matrix, **_NO_GRAD),  # type: ignore[arg-type]
    OpInfo("argmin", lambda lib, a: (lib.argmin(a), a.argmin(0, keepdim=True)), _distinct_matrix,
           **_NO_GRAD),  # type: ignore[arg-type]
    OpInfo("isnan", lambda lib, a: (lib.isnan(a), lib.isinf(a), lib.isfinite(a)),
           lambda rng: [Sample((np.array([1.0, np.nan, np.inf, -np.inf]),), grad=(False,))],
           covers=("isnan", "isinf", "isfinite"), **_NO_GRAD, variant_test_name="isinf_isfinite"),  # type: ignore[arg-type]
    OpInfo("concatenate", lambda lib, ts: lib.concatenate(ts, 0),
           lambda rng: [Sample(([uniform(rng, 2, 3), uniform(rng, 1, 3)],))]),
]
