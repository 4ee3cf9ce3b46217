"""Op database entries for ``retrograd.nn.functional`` (everything but convolution and pooling):
activations, softmax family, linear maps, padding, embedding, normalisation layers, distances
and losses. Each entry runs the same code on retrograd and on torch (gradcheck, gradgradcheck,
PyTorch parity of values, dtypes, ``grad_fn`` names and gradients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import OpInfo, Sample, distinct, positive, uniform

Rng = np.random.Generator


def F(lib: Any) -> Any:
    return lib.nn.functional


def away(*points: float, low: float = -4.0, high: float = 4.0, margin: float = 0.15) -> Callable[..., np.ndarray]:
    """A domain of values in [low, high] kept ``margin`` away from the kinks at ``points``."""

    def domain(rng: Rng, *shape: int) -> np.ndarray:
        x = np.asarray(rng.uniform(low, high, size=shape))
        for p in points:
            close = np.abs(x - p) < margin
            x = np.where(close, p + np.where(x >= p, margin, -margin), x)
        return x

    return domain


def unary(domain: Callable[..., np.ndarray]) -> Callable[[Rng], list[Sample]]:
    def samples(rng: Rng) -> list[Sample]:
        return [
            Sample((domain(rng, 5),), name="vector"),
            Sample((domain(rng, 2, 3),), name="matrix"),
            Sample((domain(rng),), name="0-d"),
            Sample((domain(rng, 3, 2),), name="noncontiguous", noncontiguous=True),
            Sample((domain(rng, 0, 3),), name="empty"),
        ]

    return samples


def span(low: float, high: float) -> Callable[..., np.ndarray]:
    return lambda rng, *shape: np.asarray(rng.uniform(low, high, size=shape))


def unary_inplace(domain: Callable[..., np.ndarray]) -> Callable[[Rng], list[Sample]]:
    # No empty sample: retrograd's in-place overlap check rejects NumPy's zero strides of empty arrays.
    return lambda rng: [s for s in unary(domain)(rng) if s.name != "empty"]


def one(*arrays: Any, **kwargs: Any) -> Callable[[Rng], list[Sample]]:
    """Samples from factories ``rng -> array``; non-callables pass through."""

    def samples(rng: Rng) -> list[Sample]:
        return [Sample(tuple(a(rng) if callable(a) else a for a in arrays), **kwargs)]

    return samples


def many(*samples: Callable[[Rng], list[Sample]]) -> Callable[[Rng], list[Sample]]:
    return lambda rng: [s for make in samples for s in make(rng)]


def u(*shape: int, low: float = -2.0, high: float = 2.0) -> Callable[[Rng], np.ndarray]:
    return lambda rng: uniform(rng, *shape, low=low, high=high)


def pos(*shape: int) -> Callable[[Rng], np.ndarray]:
    return lambda rng: positive(rng, *shape)


def probs(*shape: int, dim: int = -1) -> Callable[[Rng], np.ndarray]:
    def make(rng: Rng) -> np.ndarray:
        e = rng.uniform(0.1, 1.0, size=shape)
        return e / e.sum(axis=dim, keepdims=True)

    return make


def unit(*shape: int) -> Callable[[Rng], np.ndarray]:
    """Probabilities strictly inside (0, 1)."""
    return lambda rng: rng.uniform(0.05, 0.95, size=shape)


def ints(high: int, *shape: int) -> Callable[[Rng], np.ndarray]:
    return lambda rng: rng.integers(0, high, size=shape)


def const(value: Any) -> Callable[[Rng], Any]:
    return lambda rng: np.array(value)


def _act(op: str, call: Callable[..., Any], domain: Callable[..., np.ndarray], covers: tuple[str, ...] = (),
         variant_test_name: str = "", **kw: Any) -> OpInfo:
    inplace = "inplace" in variant_test_name or op.endswith("_")
    samples = unary_inplace(domain) if inplace else unary(domain)
    return OpInfo(op, call, samples, covers=covers or (op,), variant_test_name=variant_test_name, **kw)


kinks0 = away(0.0)
ACTIVATIONS = [
    _act("relu", lambda lib, a: F(lib).relu(a), kinks0, ("relu",), variant_test_name="functional"),
    _act("relu", lambda lib, a: F(lib).relu(a * 1, inplace=True), kinks0, ("relu",), variant_test_name="inplace"),
    _act("relu_", lambda lib, a: F(lib).relu_(a * 1), kinks0),
    _act("relu6", lambda lib, a: F(lib).relu6(a * 2), away(0.0, 3.0, low=-2, high=5)),
    _act("relu6", lambda lib, a: F(lib).relu6(a * 2, inplace=True), away(0.0, 3.0, low=-2, high=5),
         ("relu6",), variant_test_name="inplace"),
    _act("hardtanh", lambda lib, a: F(lib).hardtanh(a), away(-1.0, 1.0)),
    _act("hardtanh", lambda lib, a: F(lib).hardtanh(a, -0.5, 2.0), away(-0.5, 2.0), ("hardtanh",), variant_test_name="bounds"),
    _act("hardtanh", lambda lib, a: F(lib).hardtanh(a * 1, inplace=True), away(-1.0, 1.0), ("hardtanh",), variant_test_name="inplace"),
    _act("hardtanh_", lambda lib, a: F(lib).hardtanh_(a * 1, -2.0, 0.5), away(-2.0, 0.5)),
    _act("leaky_relu", lambda lib, a: F(lib).leaky_relu(a, 0.2), kinks0),
    _act("leaky_relu", lambda lib, a: F(lib).leaky_relu(a), kinks0, ("leaky_relu",), variant_test_name="default"),
    _act("leaky_relu", lambda lib, a: F(lib).leaky_relu(a, -0.3), kinks0, ("leaky_relu",), variant_test_name="negative_slope"),
    _act("leaky_relu", lambda lib, a: F(lib).leaky_relu(a * 1, 0.2, inplace=True), kinks0,
         ("leaky_relu",), variant_test_name="inplace"),
    _act("leaky_relu_", lambda lib, a: F(lib).leaky_relu_(a * 1, 0.3), kinks0),
    _act("elu", lambda lib, a: F(lib).elu(a), kinks0),
    _act("elu", lambda lib, a: F(lib).elu(a, 0.5), kinks0, ("elu",), variant_test_name="alpha"),
    _act("elu", lambda lib, a: F(lib).elu(a * 1, 0.5, inplace=True), kinks0, ("elu",), variant_test_name="inplace"),
    _act("elu_", lambda lib, a: F(lib).elu_(a * 1), kinks0),
    _act("selu", lambda lib, a: F(lib).selu(a), kinks0),
    _act("selu", lambda lib, a: F(lib).selu(a * 1, inplace=True), kinks0, ("selu",), variant_test_name="inplace"),
    _act("celu", lambda lib, a: F(lib).celu(a, 2.0), kinks0),
    _act("celu", lambda lib, a: F(lib).celu(a * 1, 0.5, inplace=True), kinks0, ("celu",), variant_test_name="inplace"),
    _act("threshold", lambda lib, a: F(lib).threshold(a, 0.5, -2.0), away(0.5)),
    _act("threshold", lambda lib, a: F(lib).threshold(a * 1, 0.5, 0.25, inplace=True), away(0.5),
         ("threshold",), variant_test_name="inplace"),
    _act("gelu", lambda lib, a: F(lib).gelu(a), span(-5, 5)),
    _act("gelu", lambda lib, a: F(lib).gelu(a * 4), span(-2, 2), ("gelu",), variant_test_name="wide"),
    _act("gelu", lambda lib, a: F(lib).gelu(a, approximate="tanh"), span(-5, 5), ("gelu",), variant_test_name="tanh"),
    _act("silu", lambda lib, a: F(lib).silu(a), span(-5, 5)),
    _act("silu", lambda lib, a: F(lib).silu(a * 1, inplace=True), span(-5, 5), ("silu",), variant_test_name="inplace"),
    _act("mish", lambda lib, a: F(lib).mish(a), span(-5, 5)),
    _act("mish", lambda lib, a: F(lib).mish(a * 1, inplace=True), span(-5, 5), ("mish",), variant_test_name="inplace"),
    _act("softplus", lambda lib, a: F(lib).softplus(a), span(-5, 5)),
    _act("softplus", lambda lib, a: F(lib).softplus(a, beta=2.0, threshold=3.0), away(1.5),
         ("softplus",), variant_test_name="beta_threshold"),
    _act("softsign", lambda lib, a: F(lib).softsign(a), kinks0),
    _act("hardsigmoid", lambda lib, a: F(lib).hardsigmoid(a), away(-3.0, 3.0, low=-5, high=5)),
    _act("hardsigmoid", lambda lib, a: F(lib).hardsigmoid(a * 1, inplace=True),
         away(-3.0, 3.0, low=-5, high=5), ("hardsigmoid",), variant_test_name="inplace"),
    _act("hardswish", lambda lib, a: F(lib).hardswish(a), away(-3.0, 3.0, low=-5, high=5)),
    _act("hardswish", lambda lib, a: F(lib).hardswish(a * 1, inplace=True),
         away(-3.0, 3.0, low=-5, high=5), ("hardswish",), variant_test_name="inplace"),
    _act("sigmoid", lambda lib, a: F(lib).sigmoid(a), span(-5, 5), ("sigmoid",), variant_test_name="functional"),
    _act("tanh", lambda lib, a: F(lib).tanh(a), span(-2, 2), ("tanh",), variant_test_name="functional"),
    _act("logsigmoid", lambda lib, a: F(lib).logsigmoid(a), span(-8, 8)),
    _act("hardshrink", lambda lib, a: F(lib).hardshrink(a), away(-0.5, 0.5)),
    _act("hardshrink", lambda lib, a: a.hardshrink(1.5), away(-1.5, 1.5), ("hardshrink",), variant_test_name="lambd"),
    _act("softshrink", lambda lib, a: F(lib).softshrink(a, 0.7), away(-0.7, 0.7)),
    _act("tanhshrink", lambda lib, a: F(lib).tanhshrink(a), span(-3, 3)),
    _act("rrelu", lambda lib, a: F(lib).rrelu(a), kinks0),
    _act("rrelu", lambda lib, a: F(lib).rrelu(a * 1, 0.1, 0.3, inplace=True), kinks0, ("rrelu",), variant_test_name="inplace"),
]



def _all_activations(lib: Any, a: Any) -> tuple[Any, ...]:
    # The harness turns 0-d samples into 1-element vectors, so the 0-d case is made here.
    f, x = F(lib), a.reshape(())
    return (f.relu(x), f.relu6(x), f.hardtanh(x), f.leaky_relu(x, 0.2), f.elu(x), f.selu(x), f.celu(x, 2.0),
            f.threshold(x, 0.5, -2.0), f.gelu(x), f.gelu(x, approximate="tanh"), f.silu(x), f.mish(x),
            f.softplus(x), f.softsign(x), f.hardsigmoid(x), f.hardswish(x), f.logsigmoid(x),
            f.softmax(x, 0), f.log_softmax(x, 0), f.softmin(x, 0), f.normalize(x, dim=0))


ACTIVATIONS.append(OpInfo("relu", _all_activations,
                          lambda rng: [Sample((np.array(v),), name=f"{v}") for v in (-2.5, -0.7, 0.6, 2.2)],
                          covers=("relu", "relu6", "hardtanh", "leaky_relu", "elu", "selu", "celu", "threshold",
                                  "gelu", "silu", "mish", "softplus", "softsign", "hardsigmoid", "hardswish",
                                  "logsigmoid", "softmax", "log_softmax", "softmin", "normalize"), variant_test_name="activations_0d"))


def _softmax_samples(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 3, 4), 1), name="matrix"),
        Sample((uniform(rng, 2, 3, 4), -1), name="3-d"),
        Sample((uniform(rng, 4, 3), 0), name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 5), 0), name="vector"),
        Sample((uniform(rng), 0), name="0-d"),
        Sample((uniform(rng, 0, 3), 1), name="empty"),
    ]


SOFTMAX = [
    OpInfo("softmax", lambda lib, a, d: F(lib).softmax(a, d), _softmax_samples, covers=("softmax",), variant_test_name="functional"),
    OpInfo("softmax", lambda lib, a, d: F(lib).softmax(a, d, dtype=lib.float64), _softmax_samples,
           covers=("softmax",), variant_test_name="dtype"),
    OpInfo("log_softmax", lambda lib, a, d: F(lib).log_softmax(a, dim=d), _softmax_samples, covers=("log_softmax",), variant_test_name="functional"),
    OpInfo("softmin", lambda lib, a, d: F(lib).softmin(a, d), _softmax_samples),
    OpInfo("softmin", lambda lib, a, d: F(lib).softmin(a, d, dtype=lib.float64), _softmax_samples,
           covers=("softmin",), variant_test_name="dtype"),
    OpInfo("glu", lambda lib, a, d: F(lib).glu(a, d),
           lambda rng: [Sample((uniform(rng, 3, 4), -1), name="last"), Sample((uniform(rng, 4, 3), 0), name="dim 0"),
                        Sample((uniform(rng, 2, 4, 3), 1), name="noncontiguous", noncontiguous=True),
                        Sample((uniform(rng, 0, 4), 1), name="empty")]),
]

def _prelu_samples(rng: Rng) -> list[Sample]:
    return [
        Sample((away(0.0)(rng, 4, 3), uniform(rng, 3)), name="channels"),
        Sample((away(0.0)(rng, 4, 3), uniform(rng, 1)), name="one slope"),
        Sample((away(0.0)(rng, 2, 3, 4), uniform(rng, 3)), name="3-d"),
        Sample((away(0.0)(rng, 5), uniform(rng, 1)), name="vector"),
        Sample((away(0.0)(rng, 3, 3, 2), uniform(rng, 3)), name="noncontiguous", noncontiguous=True),
    ]


ACTIVATIONS += [
    OpInfo("prelu", lambda lib, x, w: F(lib).prelu(x, w), _prelu_samples),
    OpInfo("prelu", lambda lib, x, w: x.prelu(w), one(away(0.0, low=-2, high=2), u(1)), covers=("prelu",), variant_test_name="method"),
]

LINEAR = [
    OpInfo("linear", lambda lib, x, w, b: F(lib).linear(x, w, b),
           many(one(u(4, 3), u(5, 3), u(5), name="matrix"),
                one(u(2, 4, 3), u(5, 3), u(5), name="3-d"),
                one(u(2, 2, 4, 3), u(5, 3), u(5), name="4-d"),
                one(u(3), u(5, 3), u(5), name="vector"),
                one(u(4, 2, 3), u(3, 3), u(3), name="noncontiguous", noncontiguous=True),
                one(u(0, 3), u(5, 3), u(5), name="empty batch"),
                one(u(4, 3), u(5, 3), u(), name="0-d bias"),
                one(u(4, 3), u(5, 3), u(4, 5), name="matrix bias"))),
    OpInfo("linear", lambda lib, x, w: F(lib).linear(x, w),
           many(one(u(4, 3), u(5, 3), name="matrix"), one(u(2, 4, 3), u(5, 3), name="3-d"),
                one(u(4, 3), u(3), name="vector weight")), covers=("linear",), variant_test_name="no_bias"),
    OpInfo("bilinear", lambda lib, a, b, w, bias: F(lib).bilinear(a, b, w, bias),
           many(one(u(4, 3), u(4, 2), u(5, 3, 2), u(5), name="matrix"),
                one(u(2, 3, 3), u(2, 3, 2), u(4, 3, 2), u(4), name="3-d"),
                one(u(3), u(2), u(4, 3, 2), u(4), name="vector"))),
    OpInfo("bilinear", lambda lib, a, b, w: F(lib).bilinear(a, b, w),
           one(u(4, 3), u(4, 2), u(5, 3, 2)), covers=("bilinear",), variant_test_name="no_bias"),
]


def _pad(mode: str, pads: Any, value: Any = None) -> Callable[..., Any]:
    return lambda lib, x: F(lib).pad(x, pads, mode=mode, value=value)


def _pad_entry(op: str, mode: str, pads: tuple[int, ...], *shapes: tuple[int, ...], value: Any = None,
               variant_test_name: str = "") -> OpInfo:
    samples = many(*(one(u(*s), name=f"{len(s)}-d") for s in shapes))
    return OpInfo(op, _pad(mode, pads, value), samples, covers=("pad",), variant_test_name=variant_test_name)


PADDING = [
    _pad_entry("pad", "constant", (1, 2), (3,), (2, 3), (2, 3, 2), variant_test_name="constant"),
    _pad_entry("pad", "constant", (0, 1, 2, 0), (2, 3), (2, 2, 3), value=1.5, variant_test_name="constant_value"),
    _pad_entry("pad", "constant", (-1, 2, 1, -1), (3, 4), (2, 3, 4), variant_test_name="constant_negative"),
    _pad_entry("pad", "constant", (1, 0, 0, 1, 1, 1), (2, 3, 2), variant_test_name="constant_all_dims"),
    OpInfo("pad", _pad("constant", (1, 1)), one(u(3, 2), name="noncontiguous", noncontiguous=True),
           covers=("pad",), variant_test_name="constant_noncontiguous"),
    OpInfo("pad", _pad("constant", (1, 1)), one(u(0, 2), name="empty"), covers=("pad",), variant_test_name="constant_empty"),
    _pad_entry("pad", "reflect", (2, 1), (2, 4), (2, 2, 4), variant_test_name="reflect_1d"),
    _pad_entry("pad", "reflect", (-1, 2), (2, 2, 4), variant_test_name="reflect_1d_negative"),
    _pad_entry("pad", "reflect", (-4, 2), (2, 2, 4), variant_test_name="reflect_crop_past_edge"),
    _pad_entry("pad", "replicate", (1, -3), (2, 2, 3), variant_test_name="replicate_crop_past_edge"),
    _pad_entry("pad", "reflect", (1, 1), (2, 3), value=0.0, variant_test_name="reflect_zero_value"),
    _pad_entry("pad", "reflect", (1, 2, 2, 0), (2, 3, 4), (1, 2, 3, 4), variant_test_name="reflect_2d"),
    _pad_entry("pad", "reflect", (1, 0, 0, 1, 1, 1), (1, 2, 3, 3), (1, 1, 2, 3, 3), variant_test_name="reflect_3d"),
    _pad_entry("pad", "replicate", (3, 1), (2, 3), (2, 2, 3), variant_test_name="replicate_1d"),
    _pad_entry("pad", "replicate", (1, 2, 3, 0), (2, 3, 4), (1, 2, 3, 4), variant_test_name="replicate_2d"),
    _pad_entry("pad", "replicate", (1, 0, 2, 1, 1, 1), (1, 2, 3, 3), (1, 1, 2, 3, 3), variant_test_name="replicate_3d"),
    _pad_entry("pad", "circular", (2, 1), (2, 3), (2, 2, 3), variant_test_name="circular_1d"),
    _pad_entry("pad", "circular", (1, 2, 2, 0), (2, 3, 4), (1, 2, 3, 4), variant_test_name="circular_2d"),
    _pad_entry("pad", "circular", (-1, 2, 1, -1), (1, 2, 3, 4), variant_test_name="circular_negative"),
    _pad_entry("pad", "circular", (1, 0, 0, 1, 1, 1), (1, 1, 2, 3, 3), variant_test_name="circular_3d"),
    OpInfo("pad", _pad("reflect", (1, 1)), one(u(4, 3, 3), name="noncontiguous", noncontiguous=True),
           covers=("pad",), variant_test_name="reflect_noncontiguous"),
]

SHUFFLES = [
    OpInfo("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2),
           many(one(u(1, 8, 2, 3), name="4-d"), one(u(8, 2, 3), name="3-d"), one(u(2, 1, 4, 1, 2), name="5-d"))),
    OpInfo("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2),
           many(one(u(1, 2, 4, 6), name="4-d"), one(u(2, 2, 4), name="3-d"))),
    OpInfo("channel_shuffle", lambda lib, x: F(lib).channel_shuffle(x, 3),
           many(one(u(2, 6, 2), name="3-d"), one(u(1, 6, 2, 2), name="4-d"))),
    OpInfo("pdist", lambda lib, x: F(lib).pdist(x),
           many(one(lambda rng: distinct(rng, 4, 3), name="matrix"), one(lambda rng: distinct(rng, 3, 3),
                                                                            name="noncontiguous", noncontiguous=True),
                one(u(1, 3), name="one row"))),
    OpInfo("pdist", lambda lib, x: F(lib).pdist(x, 1.5), one(lambda rng: distinct(rng, 5, 2)), covers=("pdist",), variant_test_name="p"),
]

EMBEDDING = [
    OpInfo("one_hot", lambda lib, t: F(lib).one_hot(t),
           many(one(ints(4, 5)), one(ints(3, 2, 3), name="matrix")), gradcheck=False),
    OpInfo("one_hot", lambda lib, t: F(lib).one_hot(t, 6),
           many(one(ints(4, 5)), one(np.zeros(0, np.int64), name="empty")), covers=("one_hot",), gradcheck=False, variant_test_name="classes"),
    OpInfo("embedding", lambda lib, i, w: F(lib).embedding(i, w),
           many(one(const([0, 2, 0, 3]), u(4, 3), name="vector"), one(const([[1, 1], [0, 3]]), u(4, 3), name="matrix"),
 one(np.zeros(0, np.int64), u(4, 3), name="empty"))),
    OpInfo("embedding_bag", lambda lib, i, w, o: F(lib).embedding_bag(i, w, o),
           many(one(const([0, 2, 1, 4, 4]), u(5, 3), const([0, 2]), name="offsets"),
                one(const([0, 2, 1, 4, 4]), u(5, 3), const([0, 2, 2]), name="empty bag"))),
    OpInfo("embedding_bag", lambda lib, i, w: F(lib).embedding_bag(i, w, mode="sum"),
           one(const([[0, 2, 2], [1, 4, 3]]), u(5, 3)), covers=("embedding_bag",), variant_test_name="2d"),
    OpInfo("embedding_bag", lambda lib, i, w, o: F(lib).embedding_bag(i, w, o, mode="max"),
           one(const([0, 2, 1, 4, 3]), lambda rng: distinct(rng, 5, 3), const([0, 3, 3])), covers=("embedding_bag",), variant_test_name="max"),
    OpInfo("embedding_bag",
           lambda lib, i, w, o, p: F(lib).embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
           one(const([0, 2, 1, 4, 4]), u(5, 3), const([0, 1]), u(5)), covers=("embedding_bag",), variant_test_name="per_sample_weights"),
    OpInfo("embedding_bag",
           lambda lib, i, w, p: F(lib).embedding_bag(i, w, mode="sum", per_sample_weights=p),
           one(const([[0, 2], [1, 4]]), u(5, 3), u(2, 2)), covers=("embedding_bag",), variant_test_name="2d_per_sample_weights"),
    OpInfo("embedding_bag",
           lambda lib, i, w, o: F(lib).embedding_bag(i, w, o, include_last_offset=True),
           one(const([0, 2, 1, 4]), u(5, 3), const([0, 1, 4])), covers=("embedding_bag",), variant_test_name="include_last_offset"),
    # padding_idx and scale_grad_by_freq make the gradient differ from the derivative on purpose,
    # so these are checked against PyTorch's gradients (parity) rather than finite differences.
    OpInfo("embedding", lambda lib, i, w: F(lib).embedding(i.reshape(()), w), one(const(2), u(4, 3)),
           covers=("embedding",), variant_test_name="0d"),
    OpInfo("one_hot", lambda lib, t: F(lib).one_hot(t.reshape(()), 4), one(const(2)), covers=("one_hot",),
           gradcheck=False, variant_test_name="0d"),
    OpInfo("embedding", lambda lib, i, w: F(lib).embedding(i, w, padding_idx=2),
           one(const([[0, 2], [2, 1]]), u(4, 3)), covers=("embedding",), gradcheck=False, variant_test_name="padding_idx"),
    OpInfo("embedding", lambda lib, i, w: F(lib).embedding(i, w, padding_idx=-1),
           one(const([0, 3, 3]), u(4, 3)), covers=("embedding",), gradcheck=False, variant_test_name="negative_padding_idx"),
    OpInfo("embedding",
           lambda lib, i, w: F(lib).embedding(i, w, padding_idx=0, scale_grad_by_freq=True),
           one(const([[0, 2, 2], [1, 2, 0]]), u(4, 3)), covers=("embedding",), gradcheck=False, variant_test_name="scale_grad_by_freq"),
    OpInfo("embedding_bag",
           lambda lib, i, w, o: F(lib).embedding_bag(i, w, o, padding_idx=2, scale_grad_by_freq=True),
           one(const([0, 2, 1, 2, 1, 0]), u(4, 3), const([0, 2, 4])), covers=("embedding_bag",), gradcheck=False, variant_test_name="padding_idx_scale_grad"),
]


def _bn_train(lib: Any, x: Any, w: Any, b: Any, rm: Any, rv: Any) -> Any:
    return F(lib).batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)


def _bn_samples(rng: Rng) -> list[Sample]:
    grad = (True, True, True, False, False)
    return [
        Sample((uniform(rng, 4, 3), uniform(rng, 3), uniform(rng, 3), uniform(rng, 3), positive(rng, 3)),
               grad=grad, name="matrix"),
        Sample((uniform(rng, 2, 3, 4), uniform(rng, 3), uniform(rng, 3), uniform(rng, 3), positive(rng, 3)),
               grad=grad, name="3-d"),
        Sample((uniform(rng, 2, 3, 2, 2), uniform(rng, 3), uniform(rng, 3), uniform(rng, 3), positive(rng, 3)),
               grad=grad, name="4-d"),
    ]


NORMALIZATION = [
    OpInfo("batch_norm", _bn_train, _bn_samples, covers=("batch_norm",), variant_test_name="train"),
    OpInfo("batch_norm", lambda lib, x: F(lib).batch_norm(x, None, None, training=True),
           many(one(u(4, 3)), one(u(3, 2, 3), name="noncontiguous", noncontiguous=True)), covers=("batch_norm",), variant_test_name="train_no_affine"),
    OpInfo("batch_norm",
           lambda lib, x, w, b, rm, rv: F(lib).batch_norm(x, rm, rv, w, b, training=False, eps=1e-3),
           _bn_samples, covers=("batch_norm",), variant_test_name="eval"),
    OpInfo("layer_norm", lambda lib, x, w, b: F(lib).layer_norm(x, (x.shape[-1],), w, b),
           many(one(u(4, 3), u(3), u(3), name="matrix"), one(u(2, 3, 3), u(3), u(3), name="noncontiguous", noncontiguous=True),
                one(u(3), u(3), u(3), name="vector"))),
    OpInfo("layer_norm", lambda lib, x, w, b: F(lib).layer_norm(x, [3, 4], w, b, eps=1e-3),
           one(u(2, 3, 4), u(3, 4), u(3, 4)), covers=("layer_norm",), variant_test_name="2d_shape"),
    OpInfo("layer_norm", lambda lib, x: F(lib).layer_norm(x, (4,)), one(u(3, 4)), covers=("layer_norm",), variant_test_name="no_affine"),
    OpInfo("group_norm", lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
           many(one(u(2, 4, 3), u(4), u(4), name="3-d"), one(u(3, 4), u(4), u(4), name="matrix"),
                one(u(2, 4, 2, 2), u(4), u(4), name="4-d"))),
    OpInfo("group_norm", lambda lib, x: F(lib).group_norm(x, 3, eps=1e-3), one(u(2, 6, 2)),
           covers=("group_norm",), variant_test_name="no_affine"),
    OpInfo("instance_norm", lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
           many(one(u(2, 3, 4), u(3), u(3), name="3-d"), one(u(2, 3, 2, 3), u(3), u(3), name="4-d"))),
    OpInfo("instance_norm",
           lambda lib, x, rm, rv: F(lib).instance_norm(x, rm, rv, use_input_stats=False),
           lambda rng: [Sample((uniform(rng, 2, 3, 4), uniform(rng, 3), positive(rng, 3)), grad=(True, False, False))],
           covers=("instance_norm",), variant_test_name="running_stats"),
    OpInfo("instance_norm", lambda lib, x: F(lib).instance_norm(x), one(u(2, 3, 4)),
           covers=("instance_norm",), variant_test_name="no_affine"),
    OpInfo("local_response_norm", lambda lib, x: F(lib).local_response_norm(x, 3, alpha=0.5, k=2.0),
           many(one(u(2, 4, 3), name="3-d"), one(u(2, 4, 3, 2), name="4-d"), one(u(3, 3, 2), name="noncontiguous", noncontiguous=True))),
    OpInfo("local_response_norm", lambda lib, x: F(lib).local_response_norm(x, 2), one(u(1, 5, 2, 2, 2)),
           covers=("local_response_norm",), variant_test_name="even"),
    OpInfo("normalize", lambda lib, x: F(lib).normalize(x),
           many(one(u(4, 3), name="matrix"), one(u(2, 3, 2), name="noncontiguous", noncontiguous=True))),
    OpInfo("normalize", lambda lib, x: F(lib).normalize(x, p=1, dim=0), one(lambda rng: distinct(rng, 3, 4) + 0.25),
           covers=("normalize",), variant_test_name="p1"),
    OpInfo("normalize", lambda lib, x: F(lib).normalize(x, dim=0), one(u(4)), covers=("normalize",), variant_test_name="vector"),
    OpInfo("rms_norm", lambda lib, x, w: F(lib).rms_norm(x, (3,), w),
           many(one(u(4, 3), u(3), name="matrix"), one(u(2, 3, 3), u(3), name="noncontiguous", noncontiguous=True))),
    OpInfo("rms_norm", lambda lib, x: F(lib).rms_norm(x, [2, 3], eps=1e-3), one(u(4, 2, 3)),
           covers=("rms_norm",), variant_test_name="no_weight"),
    OpInfo("cosine_similarity", lambda lib, a, b: F(lib).cosine_similarity(a, b),
           many(one(u(4, 3), u(4, 3), name="matrix"), one(u(4, 3), u(1, 3), name="broadcast"),
                one(u(3, 4, 2), u(3, 4, 2), name="noncontiguous", noncontiguous=True))),
    OpInfo("cosine_similarity", lambda lib, a, b: F(lib).cosine_similarity(a, b, dim=-1, eps=1e-4),
           many(one(u(4, 3), u(4, 3)), one(u(5), u(5), name="vector")), covers=("cosine_similarity",), variant_test_name="dim"),
    OpInfo("pairwise_distance", lambda lib, a, b: F(lib).pairwise_distance(a, b),
           many(one(u(4, 3), u(4, 3), name="matrix"), one(u(4, 3), u(3), name="broadcast"),
                one(u(3), u(3), name="vector"), one(u(3, 3), u(3, 3), name="noncontiguous", noncontiguous=True))),
    OpInfo("pairwise_distance", lambda lib, a, b: F(lib).pairwise_distance(a, b, p=1.0, keepdim=True),
           one(u(4, 3), u(4, 3)), covers=("pairwise_distance",), variant_test_name="p1"),
    OpInfo("pairwise_distance", lambda lib, a, b: F(lib).pairwise_distance(a, b, p=3, eps=0.0),
           one(u(4, 3), u(4, 3)), covers=("pairwise_distance",), variant_test_name="p3"),
    # torch.norm_except_dim (weight_norm's norm): dim -1 is at::norm's Scalar overload (NormBackward0)
    OpInfo("norm", lambda lib, v: (lib.norm_except_dim(v, 2, -1), lib.norm_except_dim(v, 3, 1),
                                  lib.norm_except_dim(v, 1, 0)),
           one(u(2, 3, 4)), covers=("norm",), variant_test_name="except_dim"),
]


def _reductions(op: str, call: Callable[..., Any], *makers: Any, grad: tuple[bool, ...] | None = None,
                covers: tuple[str, ...] = (), variant_test_name: str = "", **kw: Any) -> list[OpInfo]:
    out = []
    for reduction in ("mean", "sum", "none"):
        def fn(lib: Any, *args: Any, _r: str = reduction) -> Any:
            return call(lib, *args, reduction=_r)

        variant = f"{variant_test_name}_{reduction}" if variant_test_name else reduction
        out.append(OpInfo(op, fn, one(*makers, grad=grad), covers=covers or (op,), variant_test_name=variant, **kw))
    return out


def _ce_probs(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 4, 3), probs(4, 3)(rng)), grad=(True, False), name="matrix"),
        Sample((uniform(rng, 2, 3, 4), probs(2, 3, 4, dim=1)(rng)), grad=(True, True), name="3-d"),
        Sample((uniform(rng, 3), probs(3)(rng)), grad=(True, False), name="vector"),
    ]


def _ce_indices(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 5, 3), np.array([0, 2, 1, 2, 0])), name="matrix"),
        Sample((uniform(rng, 2, 3, 4), rng.integers(0, 3, (2, 4))), name="3-d"),
        Sample((uniform(rng, 2, 3, 2, 2), rng.integers(0, 3, (2, 2, 2))), name="4-d"),
        Sample((uniform(rng, 2, 3, 2, 1, 2), rng.integers(0, 3, (2, 2, 1, 2))), name="5-d"),
        Sample((uniform(rng, 3), np.array(1)), name="vector"),
        Sample((uniform(rng, 3, 3), np.array([1, 0, 2])), name="noncontiguous", noncontiguous=True),
    ]


def _ce_ignored(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 5, 3), np.array([0, 2, 1, 2, 1])), name="matrix"),
        Sample((uniform(rng, 2, 3, 4), np.array([[0, 1, 2, 1], [1, 1, 0, 2]])), name="3-d"),
    ]


def _target(x: Any, t: Any) -> Any:
    # The harness makes 0-d arrays 1-element vectors; a (C) input takes a 0-d class index.
    return t.reshape(()) if x.dim() == 1 and t.dim() == 1 and t.dtype != x.dtype else t


def _ce(**kwargs: Any) -> Callable[..., Any]:
    return lambda lib, x, t: F(lib).cross_entropy(x, _target(x, t), **kwargs)


def _ce_weighted(**kwargs: Any) -> Callable[..., Any]:
    return lambda lib, x, t: F(lib).cross_entropy(x, _target(x, t), weight=lib.tensor([0.2, 1.0, 0.7], dtype=x.dtype),
                                                  **kwargs)


def _nll(**kwargs: Any) -> Callable[..., Any]:
    return lambda lib, x, t: F(lib).nll_loss(x, _target(x, t), **kwargs)


CROSS_ENTROPY = []
for _r in ("mean", "sum", "none"):
    _ce_covers = {"covers": ("cross_entropy",)}
    CROSS_ENTROPY += [
        OpInfo("cross_entropy", _ce(reduction=_r), _ce_indices, variant_test_name=_r, **_ce_covers),
        OpInfo("cross_entropy", _ce_weighted(reduction=_r), _ce_indices, variant_test_name=f"weight_{_r}",
               **_ce_covers),
        OpInfo("cross_entropy", _ce(reduction=_r, ignore_index=1), _ce_ignored, variant_test_name=f"ignore_{_r}",
               **_ce_covers),
        OpInfo("cross_entropy", _ce_weighted(reduction=_r, ignore_index=2), _ce_ignored,
               variant_test_name=f"weight_ignore_{_r}", **_ce_covers),
        OpInfo("cross_entropy", _ce(reduction=_r, label_smoothing=0.2), _ce_indices,
               variant_test_name=f"smoothing_{_r}", **_ce_covers),
        OpInfo("cross_entropy",
               _ce_weighted(reduction=_r, label_smoothing=0.3, ignore_index=1), _ce_ignored,
               variant_test_name=f"smoothing_weight_ignore_{_r}", **_ce_covers),
        OpInfo("cross_entropy", _ce(reduction=_r), _ce_probs, variant_test_name=f"probs_{_r}", **_ce_covers),
        OpInfo("cross_entropy", _ce_weighted(reduction=_r, label_smoothing=0.25),
               _ce_probs, variant_test_name=f"probs_weight_smoothing_{_r}", **_ce_covers),
        OpInfo("nll_loss", _nll(reduction=_r), _ce_indices, variant_test_name=_r),
        OpInfo("nll_loss",
               lambda lib, x, t, _r=_r: F(lib).nll_loss(x, t, lib.tensor([0.5, 2.0, 1.0], dtype=x.dtype),
                                                        ignore_index=0, reduction=_r),
               _ce_ignored, variant_test_name=f"weight_ignore_{_r}"),
    ]
# All targets ignored: a NaN loss (so no finite differences) but a zero gradient, as PyTorch's.
CROSS_ENTROPY.append(OpInfo("nll_loss", _nll(ignore_index=1), one(u(3, 3), const([1, 1, 1])),
                            covers=("nll_loss",), gradcheck=False, variant_test_name="all_ignored"))


def _loss(call: Callable[..., Any], **fixed: Any) -> Callable[..., Any]:
    return lambda lib, *args, reduction: call(F(lib), *args, reduction=reduction, **fixed)


LOSSES = [
    *_reductions("mse_loss", _loss(lambda f, a, b, reduction: f.mse_loss(a, b, reduction=reduction)),
                 u(4, 3), u(4, 3)),
    OpInfo("mse_loss", lambda lib, a, b: F(lib).mse_loss(a, b), one(u(4, 3), u(3)), covers=("mse_loss",), variant_test_name="broadcast"),
    OpInfo("mse_loss", lambda lib, a, b: F(lib).mse_loss(a, b), one(u(), u()), covers=("mse_loss",), variant_test_name="0d"),
    *_reductions("mse_loss", _loss(lambda f, a, b, w, reduction: f.mse_loss(a, b, reduction=reduction,
                                                                                  weight=w)),
                 u(4, 3), u(4, 3), pos(4, 3), grad=(True, True, False), covers=("mse_loss",), variant_test_name="weight"),
    *_reductions("l1_loss", _loss(lambda f, a, b, reduction: f.l1_loss(a, b, reduction=reduction)),
                 u(4, 3), u(4, 3)),
    *_reductions("l1_loss", _loss(lambda f, a, b, w, reduction: f.l1_loss(a, b, reduction=reduction,
                                                                                weight=w)),
                 u(4, 3), u(4, 3), pos(4, 3), grad=(True, True, False), covers=("l1_loss",), variant_test_name="weight"),
    *_reductions("smooth_l1_loss", _loss(lambda f, a, b, reduction: f.smooth_l1_loss(a, b, reduction=reduction,
                                                                                    beta=0.5)),
                 u(4, 3), u(4, 3)),
    OpInfo("smooth_l1_loss", lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.0), one(u(4, 3), u(4, 3)),
           covers=("smooth_l1_loss",), variant_test_name="beta0"),
    *_reductions("huber_loss", _loss(lambda f, a, b, reduction: f.huber_loss(a, b, reduction=reduction, delta=0.7)),
                 u(4, 3), u(4, 3)),
    *_reductions("huber_loss", _loss(lambda f, a, b, w, reduction: f.huber_loss(a, b, reduction=reduction,
                                                                                      weight=w)),
                 u(4, 3), u(4, 3), pos(4, 3), grad=(True, True, False), covers=("huber_loss",), variant_test_name="weight"),
    *_reductions("binary_cross_entropy",
                 _loss(lambda f, a, b, reduction: f.binary_cross_entropy(a, b, reduction=reduction)),
                 unit(4, 3), unit(4, 3)),
    *_reductions("binary_cross_entropy",
                 _loss(lambda f, a, b, w, reduction: f.binary_cross_entropy(a, b, w, reduction=reduction)),
                 unit(4, 3), unit(4, 3), pos(3), grad=(True, False, False), covers=("binary_cross_entropy",), variant_test_name="weight"),
    *_reductions("binary_cross_entropy_with_logits",
                 _loss(lambda f, a, b, reduction: f.binary_cross_entropy_with_logits(a, b, reduction=reduction)),
                 u(4, 3, low=-4, high=4), unit(4, 3)),
    *_reductions("binary_cross_entropy_with_logits",
                 _loss(lambda f, a, b, w, pw, reduction: f.binary_cross_entropy_with_logits(
                     a, b, w, reduction=reduction, pos_weight=pw)),
                 u(4, 3, low=-4, high=4), unit(4, 3), pos(4, 1), pos(3), grad=(True, True, False, False),
                 covers=("binary_cross_entropy_with_logits",), variant_test_name="weights"),
    *_reductions("kl_div", _loss(lambda f, a, b, reduction: f.kl_div(a, b, reduction=reduction)),
                 lambda rng: np.log(probs(4, 3)(rng)), probs(4, 3)),
    OpInfo("kl_div", lambda lib, a, b: F(lib).kl_div(a, b, reduction="batchmean"),
           one(lambda rng: np.log(probs(4, 3)(rng)), probs(4, 3)), covers=("kl_div",), variant_test_name="batchmean"),
    OpInfo("kl_div", lambda lib, a, b: F(lib).kl_div(a.reshape(()), b.reshape(()), reduction="batchmean"),
           one(u(), pos()), covers=("kl_div",), variant_test_name="batchmean_0d"),
    OpInfo("kl_div", lambda lib, a, b: F(lib).kl_div(a, b, reduction="sum"),
           one(u(4), const([0.0, 0.5, 0.0, 0.5]), grad=(True, False)), covers=("kl_div",), variant_test_name="zero_target"),
    *_reductions("kl_div",
                 _loss(lambda f, a, b, reduction: f.kl_div(a, b, reduction=reduction, log_target=True)),
                 u(4, 3), u(4, 3), covers=("kl_div",), variant_test_name="log_target"),
    *_reductions("poisson_nll_loss",
                 _loss(lambda f, a, b, reduction: f.poisson_nll_loss(a, b, reduction=reduction)),
                 u(4, 3), pos(4, 3)),
    OpInfo("poisson_nll_loss",
           lambda lib, a, b: F(lib).poisson_nll_loss(a, b * 2, log_input=False, full=True),
           one(pos(4, 3), pos(4, 3)), covers=("poisson_nll_loss",), variant_test_name="full"),
    *_reductions("margin_ranking_loss",
                 _loss(lambda f, a, b, t, reduction: f.margin_ranking_loss(a, b, t, margin=0.3, reduction=reduction)),
                 lambda rng: distinct(rng, 6), lambda rng: distinct(rng, 6) + 0.2,
                 const([1.0, -1.0, 1.0, 1.0, -1.0, -1.0]), grad=(True, True, False)),
    *_reductions("triplet_margin_loss",
                 _loss(lambda f, a, p, n, reduction: f.triplet_margin_loss(a, p, n, margin=2.0, reduction=reduction)),
                 u(4, 3), u(4, 3), u(4, 3)),
    OpInfo("triplet_margin_with_distance_loss",
           lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(
               a, p, n, distance_function=lambda x, y: 1.0 - F(lib).cosine_similarity(x, y), margin=0.5, swap=True),
           one(u(4, 3), u(4, 3), u(4, 3))),
    OpInfo("triplet_margin_with_distance_loss",
           lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(a, p, n, reduction="none"),
           one(u(4, 3), u(4, 3), u(4, 3)), covers=("triplet_margin_with_distance_loss",), variant_test_name="default"),
    OpInfo("triplet_margin_loss",
           lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=1.5, p=1, swap=True),
           one(u(4, 3), u(4, 3), u(4, 3)), covers=("triplet_margin_loss",), variant_test_name="swap_p1"),
    *_reductions("cosine_embedding_loss",
                 _loss(lambda f, a, b, t, reduction: f.cosine_embedding_loss(a, b, t, margin=-0.5,
                                                                             reduction=reduction)),
                 u(4, 3), u(4, 3), const([1, -1, 1, -1])),
    OpInfo("cosine_embedding_loss", lambda lib, a, b, t: F(lib).cosine_embedding_loss(a, b, t.reshape(())),
           one(u(3), u(3), const(1.0), grad=(True, True, False)), covers=("cosine_embedding_loss",), variant_test_name="0d_target"),
]

LOSSES += [
    *_reductions("soft_margin_loss", _loss(lambda f, a, t, reduction: f.soft_margin_loss(a, t, reduction=reduction)),
                 u(4, 3, low=-4, high=4), const([[1.0, -1.0, 1.0]] * 4), grad=(True, False)),
    *_reductions("multilabel_soft_margin_loss",
                 _loss(lambda f, a, t, w, reduction: f.multilabel_soft_margin_loss(a, t, w, reduction=reduction)),
                 u(4, 3, low=-4, high=4), unit(4, 3), pos(3), grad=(True, True, False)),
    *_reductions("multi_margin_loss",
                 _loss(lambda f, a, t, reduction: f.multi_margin_loss(a, t, margin=0.8, reduction=reduction)),
                 lambda rng: distinct(rng, 4, 5) / 4, const([0, 4, 2, 2])),
    *_reductions("multi_margin_loss",
                 _loss(lambda f, a, t, w, reduction: f.multi_margin_loss(a, t, p=2, weight=w, reduction=reduction)),
                 lambda rng: distinct(rng, 4, 5) / 4, const([1, 4, 0, 2]), pos(5), grad=(True, False, False),
                 covers=("multi_margin_loss",), variant_test_name="p2_weight"),
    *_reductions("multilabel_margin_loss",
                 _loss(lambda f, a, t, reduction: f.multilabel_margin_loss(a, t, reduction=reduction)),
                 lambda rng: distinct(rng, 3, 4) / 5, const([[3, 0, -1, 1], [1, 2, 3, -1], [2, 2, 0, -1]])),
    OpInfo("multilabel_margin_loss", lambda lib, a, t: F(lib).multilabel_margin_loss(a, t),
           one(lambda rng: distinct(rng, 4) / 5, const([3, 0, -1, 1])), covers=("multilabel_margin_loss",), variant_test_name="vector"),
    OpInfo("multi_margin_loss", lambda lib, a, t: F(lib).multi_margin_loss(a, t, reduction="none"),
           one(lambda rng: distinct(rng, 5) / 4, const([3])), covers=("multi_margin_loss",), variant_test_name="vector"),
    OpInfo("multi_margin_loss",
           lambda lib, a, t: F(lib).multi_margin_loss(a, t.reshape(()), reduction="none"),
           one(lambda rng: distinct(rng, 5) / 4, const(1)), covers=("multi_margin_loss",), variant_test_name="vector_0d_target"),
    *_reductions("hinge_embedding_loss",
                 _loss(lambda f, a, t, reduction: f.hinge_embedding_loss(a, t, margin=0.5, reduction=reduction)),
                 away(0.5, low=-2, high=2), const([[1.0, -1.0, 1.0]] * 4), grad=(True, False)),
    *_reductions("gaussian_nll_loss",
                 _loss(lambda f, a, t, v, reduction: f.gaussian_nll_loss(a, t, v, reduction=reduction)),
                 u(4, 3), u(4, 3), pos(4, 3)),
    OpInfo("gaussian_nll_loss", lambda lib, a, t, v: F(lib).gaussian_nll_loss(a, t, v, full=True),
           many(one(u(4, 3), u(4, 3), pos(4), name="one short"), one(u(4, 3), u(4, 3), pos(4, 1), name="broadcast")),
           covers=("gaussian_nll_loss",), variant_test_name="homoscedastic"),
    OpInfo("gaussian_nll_loss", lambda lib, a, t: F(lib).gaussian_nll_loss(a, t, 0.5),
           one(u(4, 3), u(4, 3)), covers=("gaussian_nll_loss",), variant_test_name="float_var"),
]


def _sdpa_samples(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 4, 3), uniform(rng, 2, 5, 3), uniform(rng, 2, 5, 2)), name="3-d"),
        Sample((uniform(rng, 1, 2, 3, 4), uniform(rng, 1, 2, 3, 4), uniform(rng, 1, 2, 3, 2)), name="4-d"),
    ]


ATTENTION = [
    OpInfo("scaled_dot_product_attention", lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v),
           _sdpa_samples),
    OpInfo("scaled_dot_product_attention",
           lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
           one(u(2, 4, 3), u(2, 4, 3), u(2, 4, 2)), covers=("scaled_dot_product_attention",), variant_test_name="causal_scale"),
    OpInfo("scaled_dot_product_attention",
           lambda lib, q, k, v, m: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=m),
           many(one(u(2, 3, 3), u(2, 4, 3), u(2, 4, 2), const([[True, False, True, True]] * 3), name="bool"),
                one(u(2, 3, 3), u(2, 4, 3), u(2, 4, 2), u(3, 4), name="float")),
           covers=("scaled_dot_product_attention",), variant_test_name="masks"),
    OpInfo("scaled_dot_product_attention",
           lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, enable_gqa=True),
           one(u(1, 4, 3, 2), u(1, 2, 3, 2), u(1, 2, 3, 2)), covers=("scaled_dot_product_attention",),
           check_node=False, variant_test_name="gqa"),  # PyTorch runs its fused CPU kernel here (one ScaledDotProduct... node)
    OpInfo("multi_head_attention_forward",
           lambda lib, q, k, v, w, b, wo, bo: F(lib).multi_head_attention_forward(
               q, k, v, 4, 2, w, b, None, None, False, 0.0, wo, bo, average_attn_weights=False),
           one(u(3, 2, 4), u(2, 2, 4), u(2, 2, 4), u(12, 4), u(12), u(4, 4), u(4))),
    OpInfo("multi_head_attention_forward",
           lambda lib, q, w, b, bk, bv, wo, m: F(lib).multi_head_attention_forward(
               q, q, q, 4, 2, w, b, bk, bv, True, 0.0, wo, None, attn_mask=m, need_weights=False)[0],
           one(u(3, 4), u(12, 4), u(12), u(1, 1, 4), u(1, 1, 4), u(4, 4), const([[False, True, False]] * 3)),
           covers=("multi_head_attention_forward",), variant_test_name="unbatched_bias_kv_zero_attn_sdpa"),
]

OPS: list[OpInfo] = (ACTIVATIONS + SOFTMAX + LINEAR + PADDING + SHUFFLES + EMBEDDING + NORMALIZATION
                     + CROSS_ENTROPY + LOSSES + ATTENTION)


def _fused_lstm_cell(lib: Any, input_gates: Any, hidden_gates: Any, cx: Any) -> Any:
    """nn.LSTM's per-step node (``_thnn_fused_lstm_cell``, which PyTorch has on CUDA only):
    retrograd's op against PyTorch's composite of the same gates, workspace ``[i, f, g, o,
    tanh(cy)]`` included."""
    if lib.__name__ == "retrograd":
        from retrograd.ops.op import apply
        from retrograd.ops.rnn import fused_lstm_cell
        return apply(fused_lstm_cell, (input_gates, hidden_gates, cx))
    i, f, g, o = (input_gates + hidden_gates).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    tanh_cy = cy.tanh()
    return o * tanh_cy, cy, lib.cat([i, f, g, o, tanh_cy], 1)


def _recurrent(name: str, bidirectional: bool = False, batch_first: bool = False) -> Callable[..., Any]:
    """``lib.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` with one layer's (or both directions')
    weights: the functional forms the recurrent modules call."""
    def fn(lib: Any, x: Any, h: Any, c: Any, *weights: Any) -> Any:
        hx = (h, c) if name == "lstm" else h
        return getattr(lib, name)(x, hx, list(weights), True, 1, 0.0, False, bidirectional, batch_first)
    return fn


def _recurrent_samples(gates: int, directions: int = 1, batch_first: bool = False) -> Callable[[Rng], list[Sample]]:
    def samples(rng: Rng) -> list[Sample]:
        weights = [w for _ in range(directions)
                   for w in (uniform(rng, gates * 2, 3), uniform(rng, gates * 2, 2), uniform(rng, gates * 2),
                             uniform(rng, gates * 2))]
        x = uniform(rng, 2, 3, 3) if batch_first else uniform(rng, 3, 2, 3)
        return [Sample((x, uniform(rng, directions, 2, 2), uniform(rng, directions, 2, 2),
                        *weights), name="seq3")]
    return samples


RECURRENT = [
    # PyTorch records its fused CPU kernel's node (MkldnnRnnLayerBackward0 and the like) for these.
    OpInfo("lstm", _recurrent("lstm"), _recurrent_samples(4), check_node=False),
    OpInfo("lstm", _recurrent("lstm", bidirectional=True, batch_first=True), _recurrent_samples(4, 2, batch_first=True),
           check_node=False, variant_test_name="bidirectional_batch_first"),
    OpInfo("gru", _recurrent("gru"), _recurrent_samples(3), check_node=False),
    OpInfo("rnn_tanh", _recurrent("rnn_tanh"), _recurrent_samples(1), check_node=False),
    OpInfo("rnn_relu", _recurrent("rnn_relu"), _recurrent_samples(1), check_node=False),
    # lstm's per-step node on its own (the op database is keyed by public names).
    OpInfo("lstm", _fused_lstm_cell,
           many(one(u(3, 8), u(3, 8), u(3, 2), name="batch"), one(u(1, 4, low=-6.0, high=6.0), u(1, 4), u(1, 1),
                                                                  name="saturating")),
           check_node=False, variant_test_name="fused_cell_step"),  # PyTorch's CPU reference: the composite
    # lstm's float32 layer node (mkldnn_rnn_layer) on its own, against one layer of PyTorch's lstm.
    OpInfo("lstm", lambda lib, *args: _lstm_layer_node(lib, *args),
           one(u(3, 2, 3), u(8, 3), u(8, 2), u(8), u(8), u(2, 2), u(2, 2)),
           check_node=False, variant_test_name="layer_node"),
]
OPS += RECURRENT


def _lstm_layer_node(lib: Any, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any) -> Any:
    """One LSTM layer as one node (PyTorch's ``mkldnn_rnn_layer``, which it runs for float32 on
    the CPU): output, h_n and c_n; retrograd's op against PyTorch's ``lstm`` of one layer."""
    if lib.__name__ == "retrograd":
        from retrograd.ops.op import apply
        from retrograd.ops.rnn import lstm_layer
        return apply(lstm_layer, (x, w_ih, w_hh, b_ih, b_hh, hx, cx, False, [], 2, hx.shape[1], 1, True, False,
                                  False, True))[:3]
    out, h, c = lib.lstm(x, (hx[None], cx[None]), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False, False, False)
    return out, h[0], c[0]


def _ctc(reduction: str, zero_infinity: bool = False) -> Callable[..., Any]:
    # the log-probabilities through log_softmax, as CTC expects (PyTorch's gradient assumes it)
    return lambda lib, x, t, il, tl: F(lib).ctc_loss(x.log_softmax(-1), t, il, tl, reduction=reduction,
                                                     zero_infinity=zero_infinity)


def _ctc_samples(rng: Rng) -> list[Sample]:
    return [
        Sample((uniform(rng, 6, 2, 4), np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2])),
               name="padded"),
        Sample((uniform(rng, 5, 2, 3), np.array([1, 2, 2, 1]), np.array([5, 4]), np.array([2, 2])), name="concatenated"),
        Sample((uniform(rng, 4, 3), np.array([2, 1]), np.array(4), np.array(2)), name="unbatched"),
    ]


# PyTorch has no double backward for CTC (its backward is not differentiable)
OPS += [
    OpInfo("ctc_loss", _ctc("mean"), _ctc_samples, gradgradcheck=False),
    OpInfo("ctc_loss", _ctc("none", True), _ctc_samples, covers=("ctc_loss",), gradgradcheck=False,
           variant_test_name="none_zero_infinity"),
    OpInfo("ctc_loss", _ctc("sum"), _ctc_samples, covers=("ctc_loss",), gradgradcheck=False, variant_test_name="sum"),
]
