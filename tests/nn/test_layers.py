"""The ``nn`` layers against real PyTorch: each layer is built in both libraries, torch's
parameters and buffers are loaded into retrograd's, and forward, backward (input and parameter
gradients), ``grad_fn``, ``state_dict`` keys/shapes/dtypes and ``repr`` are compared. Then the
stateful parts: BatchNorm/InstanceNorm running statistics over several steps, train/eval, default
initialisation, embedding lookups, dropout masks and constructor errors. Last, the containers
(Sequential, ModuleList/Dict, ParameterList/Dict) and direct checks of Linear, simple activations,
regression/classification losses and Dropout."""

from __future__ import annotations

import math
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


class Const:
    """An input that must not require grad (targets, or values torch cannot differentiate)."""

    def __init__(self, value: np.ndarray) -> None:
        self.value = value


Inputs = Callable[[np.random.Generator], list[Any]]


def close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=np.float64), np.asarray(b.tolist(), dtype=np.float64),
                               rtol=rtol, atol=atol)


def state_signature(module: Any) -> list[tuple[str, tuple[int, ...], str]]:
    return [(k, tuple(v.shape), str(v.dtype)) for k, v in module.state_dict().items()]


def copy_state(r: Any, t: Any) -> None:
    """Load torch's parameters and buffers into the retrograd module (strict: same keys)."""
    r.load_state_dict(OrderedDict((k, rg.tensor(v.detach().numpy())) for k, v in t.state_dict().items()))


def to_lib(lib: Any, values: list[Any]) -> list[Any]:
    out = []
    for v in values:
        if isinstance(v, Const):
            out.append(lib.tensor(v.value))
        elif isinstance(v, np.ndarray):
            out.append(lib.tensor(v, requires_grad=v.dtype.kind == "f"))
        else:
            out.append(v)
    return out


def randn(*shape: int) -> Inputs:
    return lambda rng: [rng.standard_normal(shape).astype(np.float32)]


def first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def compare(r: Any, t: Any, inputs: list[Any], rtol: float = 1e-4, atol: float = 1e-5,
            check_node: bool = True, **forward_kwargs: Any) -> tuple[Any, Any]:
    """Forward and backward through ``r`` and ``t`` on the same inputs; compare everything."""
    assert repr(r) == repr(t)
    assert state_signature(r) == state_signature(t)
    assert [n for n, _ in r.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in r.named_buffers()] == [n for n, _ in t.named_buffers()]
    copy_state(r, t)
    xr, xt = to_lib(rg, inputs), to_lib(__import__("torch"), inputs)
    out_r, out_t = r(*xr, **forward_kwargs), t(*xt, **forward_kwargs)
    if isinstance(out_t, tuple):  # (values, indices)
        for a, b in zip(out_r, out_t, strict=True):
            assert a.dtype == b.dtype or str(a.dtype) == str(b.dtype)
            close(a, b.detach(), rtol, atol)
    out_r, out_t = first(out_r), first(out_t)
    assert tuple(out_r.shape) == tuple(out_t.shape)
    assert str(out_r.dtype) == str(out_t.dtype)
    close(out_r, out_t.detach(), rtol, atol)
    if out_t.grad_fn is None:
        assert out_r.grad_fn is None
        return out_r, out_t
    if check_node:
        assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = np.random.default_rng(99).standard_normal(tuple(out_t.shape)).astype(np.float32)
    out_r.backward(rg.tensor(g))
    out_t.backward(__import__("torch").tensor(g))
    for a, b in zip(xr, xt, strict=True):
        if getattr(b, "requires_grad", False):
            close(a.grad, b.grad, rtol, atol)
    for (name, p), (_, q) in zip(r.named_parameters(), t.named_parameters(), strict=True):
        assert (p.grad is None) == (q.grad is None), name
        if q.grad is not None:
            close(p.grad, q.grad, rtol, atol)
    return out_r, out_t


# -- layers that are a pure function of their input and parameters ----------------------------

LAYERS: list[tuple[str, Inputs]] = [
    # convolution
    ("Conv1d(3, 4, 3)", randn(2, 3, 9)),
    ("Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False)", randn(2, 4, 11)),
    ("Conv1d(2, 3, 4, padding='same')", randn(2, 2, 8)),
    ("Conv1d(2, 3, 3, padding='valid')", randn(2, 8)),
    ("Conv1d(2, 3, 3, padding=2, padding_mode='reflect')", randn(2, 2, 8)),
    ("Conv1d(2, 3, 3, padding=1, padding_mode='circular')", randn(2, 2, 8)),
    ("Conv2d(3, 4, 3)", randn(2, 3, 7, 6)),
    ("Conv2d(4, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=4)", randn(2, 4, 7, 7)),
    ("Conv2d(3, 2, 3, padding=1, padding_mode='reflect')", randn(2, 3, 5, 6)),
    ("Conv2d(3, 2, 3, padding=(2, 1), padding_mode='replicate')", randn(2, 3, 5, 6)),
    ("Conv2d(3, 2, 3, padding=1, padding_mode='circular', bias=False)", randn(3, 5, 6)),
    ("Conv2d(3, 2, (2, 3), padding='same', padding_mode='reflect')", randn(1, 3, 5, 6)),
    ("Conv3d(2, 3, 2, stride=(1, 2, 1), padding=1)", randn(2, 2, 4, 5, 3)),
    ("Conv3d(2, 3, 3, padding=1, padding_mode='replicate')", randn(1, 2, 3, 4, 3)),
    ("ConvTranspose1d(3, 4, 3)", randn(2, 3, 5)),
    ("ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)", randn(2, 4, 5)),
    ("ConvTranspose2d(3, 4, 3, stride=2, padding=1, bias=False)", randn(2, 3, 4, 5)),
    ("ConvTranspose2d(2, 4, (2, 3), stride=(2, 3), output_padding=(1, 2), groups=2)", randn(2, 2, 3, 3)),
    ("ConvTranspose3d(2, 3, 2, stride=2)", randn(1, 2, 2, 3, 2)),
    # pooling
    ("MaxPool1d(3)", randn(2, 3, 10)),
    ("MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True)", randn(2, 3, 10)),
    ("MaxPool1d(2, return_indices=True)", randn(3, 8)),
    ("MaxPool2d(2)", randn(2, 3, 6, 5)),
    ("MaxPool2d((3, 2), stride=(2, 1), padding=1, ceil_mode=True)", randn(2, 3, 7, 6)),
    ("MaxPool2d(3, 2, 1, 2, return_indices=True)", randn(3, 9, 9)),
    ("AvgPool1d(3)", randn(2, 3, 10)),
    ("AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)", randn(2, 3, 10)),
    ("AvgPool2d(2)", randn(2, 3, 6, 6)),
    ("AvgPool2d((3, 2), stride=(2, 1), padding=1, count_include_pad=False)", randn(2, 2, 7, 6)),
    ("AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=4)", randn(2, 7, 7)),
    ("AdaptiveAvgPool1d(4)", randn(2, 3, 10)),
    ("AdaptiveAvgPool2d((3, 4))", randn(2, 3, 7, 9)),
    ("AdaptiveAvgPool2d((None, 2))", randn(3, 5, 7)),
    ("AdaptiveAvgPool2d(1)", randn(2, 3, 4, 4)),
    ("AdaptiveMaxPool1d(3)", randn(2, 3, 10)),
    ("AdaptiveMaxPool2d((3, 2))", randn(2, 3, 7, 5)),
    ("AdaptiveMaxPool2d(2, return_indices=True)", randn(2, 3, 5, 5)),
    # resampling, folding, shuffling
    ("Upsample(scale_factor=2)", randn(2, 3, 4)),
    ("Upsample(size=(5, 7), mode='bilinear')", randn(2, 3, 3, 4)),
    ("Upsample(scale_factor=(1.5, 2), mode='bilinear', align_corners=True)", randn(1, 2, 4, 3)),
    ("Upsample(scale_factor=3, mode='linear', align_corners=False)", randn(2, 2, 5)),
    ("Upsample(size=6, mode='nearest-exact')", randn(1, 2, 4, 4)),
    ("Upsample(scale_factor=2, mode='bicubic')", randn(1, 2, 3, 3)),
    ("UpsamplingNearest2d(scale_factor=2)", randn(1, 2, 3, 3)),
    ("UpsamplingBilinear2d(size=(4, 5))", randn(1, 2, 3, 3)),
    ("Unfold(2)", randn(2, 3, 4, 5)),
    ("Unfold((2, 3), dilation=(1, 2), padding=1, stride=2)", randn(2, 3, 6, 7)),
    ("Fold((4, 5), 2)", randn(2, 12, 12)),
    ("Fold(output_size=(5, 6), kernel_size=(2, 3), dilation=1, padding=1, stride=2)", randn(2, 12, 9)),
    ("PixelShuffle(2)", randn(2, 8, 3, 4)),
    ("PixelUnshuffle(2)", randn(2, 2, 4, 6)),
    ("ChannelShuffle(2)", randn(2, 4, 3)),
    # normalisation without running statistics
    ("LayerNorm(5)", randn(3, 4, 5)),
    ("LayerNorm([4, 5], eps=1e-3, bias=False)", randn(3, 4, 5)),
    ("LayerNorm((5,), elementwise_affine=False)", randn(3, 5)),
    ("GroupNorm(2, 4)", randn(3, 4, 5)),
    ("GroupNorm(3, 6, eps=1e-3, affine=False)", randn(2, 6, 3, 2)),
    ("GroupNorm(1, 4, bias=False)", randn(2, 4, 3, 3)),
    ("RMSNorm(5)", randn(3, 4, 5)),
    ("RMSNorm([4, 5], eps=1e-4)", randn(3, 4, 5)),
    ("RMSNorm(5, elementwise_affine=False)", randn(2, 5)),
    ("LocalResponseNorm(3)", randn(2, 5, 4)),
    ("InstanceNorm1d(3)", randn(2, 3, 6)),
    ("InstanceNorm1d(3, affine=True)", randn(3, 6)),
    ("InstanceNorm2d(3, affine=True, eps=1e-3)", randn(2, 3, 4, 5)),
    ("InstanceNorm3d(2, affine=True)", randn(2, 2, 3, 2, 3)),
    # padding
    ("ZeroPad1d((1, 2))", randn(2, 3, 4)),
    ("ZeroPad2d(2)", randn(2, 3, 4)),
    ("ZeroPad2d((1, 0, 2, -1))", randn(1, 2, 3, 4)),
    ("ZeroPad3d(1)", randn(1, 2, 2, 3)),
    ("ConstantPad1d(2, 3.5)", randn(2, 4)),
    ("ConstantPad2d((1, 2, 0, 1), -1.0)", randn(2, 2, 3, 4)),
    ("ConstantPad3d((1, 0, 0, 1, 1, 0), 0.5)", randn(1, 2, 2, 3)),
    ("ReflectionPad1d(2)", randn(2, 3, 5)),
    ("ReflectionPad1d((3, 1))", randn(3, 5)),
    ("ReflectionPad2d(1)", randn(2, 2, 3, 4)),
    ("ReflectionPad2d((2, 1, 0, 2))", randn(2, 3, 4)),
    ("ReflectionPad3d(1)", randn(1, 2, 2, 3, 3)),
    ("ReplicationPad1d((2, 3))", randn(2, 3, 4)),
    ("ReplicationPad2d(2)", randn(2, 2, 3, 4)),
    ("ReplicationPad2d((1, 0, 3, 1))", randn(2, 3, 4)),
    ("ReplicationPad3d(1)", randn(1, 2, 2, 2, 3)),
    ("CircularPad1d(2)", randn(2, 3, 4)),
    ("CircularPad2d((1, 2, 2, 0))", randn(1, 2, 3, 4)),
    ("CircularPad3d(1)", randn(1, 2, 2, 3, 3)),
    # activations
    ("LeakyReLU()", randn(3, 4)),
    ("LeakyReLU(0.2, inplace=True)", randn(3, 4)),
    ("ELU()", randn(3, 4)),
    ("ELU(alpha=0.5, inplace=True)", randn(3, 4)),
    ("SELU()", randn(3, 4)),
    ("SELU(inplace=True)", randn(3, 4)),
    ("CELU(alpha=2.0)", randn(3, 4)),
    ("GELU()", randn(3, 4)),
    ("GELU(approximate='tanh')", randn(3, 4)),
    ("SiLU()", randn(3, 4)),
    ("SiLU(inplace=True)", randn(3, 4)),
    ("Mish()", randn(3, 4)),
    ("Softplus()", randn(3, 4)),
    ("Softplus(beta=2, threshold=1.5)", randn(3, 4)),
    ("Softsign()", randn(3, 4)),
    ("Hardtanh()", randn(3, 4)),
    ("Hardtanh(-0.5, 0.75, inplace=True)", randn(3, 4)),
    ("ReLU6()", lambda rng: [(rng.standard_normal((3, 4)) * 5).astype(np.float32)]),
    ("ReLU6(inplace=True)", lambda rng: [(rng.standard_normal((3, 4)) * 5).astype(np.float32)]),
    ("Hardsigmoid()", lambda rng: [(rng.standard_normal((3, 4)) * 3).astype(np.float32)]),
    ("Hardswish()", lambda rng: [(rng.standard_normal((3, 4)) * 3).astype(np.float32)]),
    ("LogSigmoid()", randn(3, 4)),
    ("Softmin(dim=1)", randn(3, 4)),
    ("Softmin(dim=0)", randn(3, 4)),
    ("Softmax2d()", randn(2, 3, 2, 2)),
    ("GLU()", randn(3, 4)),
    ("GLU(dim=0)", randn(4, 3)),
    ("PReLU()", randn(3, 4)),
    ("PReLU(4, init=0.1)", randn(3, 4, 2)),
    ("Threshold(0.1, 20.0)", randn(3, 4)),
    ("Threshold(0.1, -2.0, inplace=True)", randn(3, 4)),
    ("Tanhshrink()", randn(3, 4)),
    ("Softshrink()", randn(3, 4)),
    ("Softshrink(0.8)", randn(3, 4)),
    ("Hardshrink()", randn(3, 4)),
    ("Hardshrink(1.2)", randn(3, 4)),
    ("RReLU(0.1, 0.3).eval()", randn(3, 4)),
    # distances and products
    ("CosineSimilarity()", lambda rng: [rng.standard_normal((3, 4)).astype(np.float32)] * 2),
    ("CosineSimilarity(dim=0, eps=1e-6)", lambda rng: [rng.standard_normal((3, 4)).astype(np.float32),
                                                       rng.standard_normal((3, 4)).astype(np.float32)]),
    ("PairwiseDistance()", lambda rng: [rng.standard_normal((3, 4)).astype(np.float32),
                                        rng.standard_normal((3, 4)).astype(np.float32)]),
    ("PairwiseDistance(p=1.0, eps=1e-3, keepdim=True)", lambda rng: [rng.standard_normal((3, 4)).astype(np.float32),
                                                                     rng.standard_normal((3, 4)).astype(np.float32)]),
    ("Bilinear(3, 4, 5)", lambda rng: [rng.standard_normal((6, 3)).astype(np.float32),
                                       rng.standard_normal((6, 4)).astype(np.float32)]),
    ("Bilinear(2, 3, 4, bias=False)", lambda rng: [rng.standard_normal((2, 5, 2)).astype(np.float32),
                                                   rng.standard_normal((2, 5, 3)).astype(np.float32)]),
    ("Linear(4, 3)", randn(2, 5, 4)),
    ("Linear(4, 3, bias=False)", randn(4)),
    ("Embedding(10, 3)", lambda rng: [rng.integers(0, 10, (4, 5))]),
    ("Embedding(10, 3, padding_idx=2)", lambda rng: [np.array([[2, 1, 2], [0, 9, 2]])]),
    ("Embedding(10, 3, padding_idx=-1, scale_grad_by_freq=True)", lambda rng: [np.array([[9, 1, 1], [0, 9, 1]])]),
    ("Embedding(10, 3, norm_type=1.0, sparse=False)", lambda rng: [np.array([3, 4])]),
    ("EmbeddingBag(10, 3)", lambda rng: [rng.integers(0, 10, (4, 5))]),
    ("EmbeddingBag(10, 3, mode='sum', padding_idx=0)", lambda rng: [np.array([[0, 1, 2], [3, 0, 0]])]),
    ("EmbeddingBag(10, 3, mode='max', norm_type=1.5)", lambda rng: [np.array([[4, 1, 2], [3, 5, 6]])]),
]


@pytest.mark.parametrize(("ctor", "make_inputs"), LAYERS, ids=[c for c, _ in LAYERS])
def test_layer_matches_torch(torch: Any, ctor: str, make_inputs: Inputs) -> None:
    rg.manual_seed(0)
    torch.manual_seed(0)
    r, t = eval(f"rg.nn.{ctor}"), eval(f"torch.nn.{ctor}")
    inputs = make_inputs(np.random.default_rng(len(ctor)))
    if "inplace=True" in ctor:  # an in-place layer on a leaf: feed it a non-leaf
        x = inputs[0]
        xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        assert repr(r) == repr(t)
        out_r, out_t = r(xr * 1), t(xt * 1)
        close(out_r, out_t.detach())
        assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__
        out_r.sum().backward()
        out_t.sum().backward()
        close(xr.grad, xt.grad)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. padding='same' with an even kernel
        compare(r, t, inputs)


# -- losses ------------------------------------------------------------------------------------


def _pair_normal(shape: tuple[int, ...]) -> Inputs:
    return lambda rng: [rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)]


def _signs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32)


LOSSES: list[tuple[str, Inputs]] = [
    ("SmoothL1Loss", _pair_normal((4, 3))),
    ("SmoothL1Loss(beta=0.5, reduction='sum')", _pair_normal((4, 3))),
    ("HuberLoss", _pair_normal((4, 3))),
    ("HuberLoss(reduction='none', delta=0.7)", _pair_normal((4, 3))),
    ("MSELoss(reduction='sum')", _pair_normal((4, 3))),
    ("L1Loss", _pair_normal((4, 3))),
    ("BCELoss", lambda rng: [rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
                             Const(rng.uniform(0, 1, (4, 3)).astype(np.float32))]),
    ("BCELoss(weight=rg_or_torch.tensor([1.0, 2.0, 0.5]), reduction='sum')",
     lambda rng: [rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32),
                  Const(rng.integers(0, 2, (4, 3)).astype(np.float32))]),
    ("BCEWithLogitsLoss", _pair_normal((4, 3))),
    ("BCEWithLogitsLoss(pos_weight=rg_or_torch.tensor([1.0, 3.0, 0.5]))",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(rng.uniform(0, 1, (4, 3)).astype(np.float32))]),
    ("BCEWithLogitsLoss(weight=rg_or_torch.tensor([2.0, 1.0, 0.5]), pos_weight=rg_or_torch.tensor([3.0]), "
     "reduction='none')",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(rng.uniform(0, 1, (4, 3)).astype(np.float32))]),
    ("KLDivLoss(reduction='batchmean')",
     lambda rng: [np.log(rng.dirichlet(np.ones(3), 4)).astype(np.float32), rng.dirichlet(np.ones(3), 4).astype(np.float32)]),
    ("KLDivLoss(reduction='sum', log_target=True)",
     lambda rng: [np.log(rng.dirichlet(np.ones(3), 4)).astype(np.float32),
                  np.log(rng.dirichlet(np.ones(3), 4)).astype(np.float32)]),
    ("MarginRankingLoss", lambda rng: [*_pair_normal((5,))(rng), Const(_signs(rng, (5,)))]),
    ("MarginRankingLoss(margin=0.5, reduction='none')", lambda rng: [*_pair_normal((5,))(rng), Const(_signs(rng, (5,)))]),
    ("TripletMarginLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]),
    ("TripletMarginLoss(margin=2.0, p=1.0, swap=True, reduction='sum')",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]),
    ("TripletMarginWithDistanceLoss(margin=1.5)",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]),
    ("CosineEmbeddingLoss", lambda rng: [*_pair_normal((4, 3))(rng), Const(_signs(rng, (4,)))]),
    ("CosineEmbeddingLoss(margin=0.2, reduction='sum')", lambda rng: [*_pair_normal((4, 3))(rng),
                                                                      Const(_signs(rng, (4,)))]),
    ("HingeEmbeddingLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(_signs(rng, (4, 3)))]),
    ("HingeEmbeddingLoss(margin=0.5, reduction='none')",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(_signs(rng, (4, 3)))]),
    ("SoftMarginLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(_signs(rng, (4, 3)))]),
    ("MultiLabelSoftMarginLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32),
                                              Const(rng.integers(0, 2, (4, 3)).astype(np.float32))]),
    ("MultiLabelSoftMarginLoss(weight=rg_or_torch.tensor([1.0, 2.0, 0.5]), reduction='none')",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), Const(rng.integers(0, 2, (4, 3)).astype(np.float32))]),
    ("MultiMarginLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), rng.integers(0, 3, (4,))]),
    ("MultiMarginLoss(p=2, margin=0.5, weight=rg_or_torch.tensor([1.0, 2.0, 0.5]), reduction='sum')",
     lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), rng.integers(0, 3, (4,))]),
    ("MultiLabelMarginLoss", lambda rng: [rng.standard_normal((2, 4)).astype(np.float32),
                                          np.array([[3, 0, -1, 1], [1, 2, 3, 0]])]),
    ("PoissonNLLLoss", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32),
                                    Const(rng.poisson(2.0, (4, 3)).astype(np.float32))]),
    ("PoissonNLLLoss(log_input=False, full=True, eps=1e-6, reduction='sum')",
     lambda rng: [rng.uniform(0.5, 3, (4, 3)).astype(np.float32), Const(rng.poisson(2.0, (4, 3)).astype(np.float32))]),
    ("GaussianNLLLoss", lambda rng: [*_pair_normal((4, 3))(rng), rng.uniform(0.5, 2, (4, 3)).astype(np.float32)]),
    ("GaussianNLLLoss(full=True, eps=1e-3, reduction='none')",
     lambda rng: [*_pair_normal((4, 3))(rng), rng.uniform(0.5, 2, (4, 1)).astype(np.float32)]),
    ("CrossEntropyLoss(label_smoothing=0.1)", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32),
                                                           rng.integers(0, 3, (4,))]),
    ("NLLLoss(ignore_index=1)", lambda rng: [rng.standard_normal((4, 3)).astype(np.float32), rng.integers(0, 3, (4,))]),
]


@pytest.mark.parametrize(("ctor", "make_inputs"), LOSSES, ids=[c for c, _ in LOSSES])
def test_loss_matches_torch(torch: Any, ctor: str, make_inputs: Inputs) -> None:
    if "(" not in ctor:
        ctor += "()"
    r = eval(f"rg.nn.{ctor}", {"rg": rg, "rg_or_torch": rg})
    t = eval(f"torch.nn.{ctor}", {"torch": torch, "rg_or_torch": torch})
    compare(r, t, make_inputs(np.random.default_rng(len(ctor))))


def test_loss_legacy_arguments(torch: Any) -> None:
    for name in ("SmoothL1Loss", "BCELoss", "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss", "PoissonNLLLoss"):
        for kwargs in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}):
            with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
                r = getattr(rg.nn, name)(**kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = getattr(torch.nn, name)(**kwargs)
            assert r.reduction == t.reduction
    bce = rg.nn.BCEWithLogitsLoss(weight=rg.ones(3), pos_weight=rg.ones(3))
    assert list(bce.state_dict()) == ["weight", "pos_weight"]
    assert list(rg.nn.BCEWithLogitsLoss().state_dict()) == []
    assert list(rg.nn.MultiMarginLoss(weight=rg.ones(2)).state_dict()) == ["weight"]


# -- BatchNorm and InstanceNorm running statistics ---------------------------------------------


BATCHNORMS = [
    ("BatchNorm1d(3)", (6, 3)),
    ("BatchNorm1d(3, momentum=None)", (5, 3, 4)),
    ("BatchNorm1d(3, eps=1e-3, momentum=0.3, affine=False)", (4, 3)),
    ("BatchNorm1d(3, bias=False)", (4, 3, 2)),
    ("BatchNorm2d(2)", (3, 2, 4, 3)),
    ("BatchNorm2d(2, momentum=None, affine=False)", (3, 2, 2, 3)),
    ("BatchNorm2d(2, track_running_stats=False)", (3, 2, 2, 3)),
    ("BatchNorm3d(2, momentum=0.5)", (2, 2, 2, 3, 2)),
    ("InstanceNorm1d(3, track_running_stats=True)", (2, 3, 5)),
    ("InstanceNorm2d(2, affine=True, track_running_stats=True, momentum=0.4)", (3, 2, 3, 3)),
]


@pytest.mark.parametrize(("ctor", "shape"), BATCHNORMS, ids=[c for c, _ in BATCHNORMS])
def test_running_statistics(torch: Any, ctor: str, shape: tuple[int, ...]) -> None:
    r, t = eval(f"rg.nn.{ctor}"), eval(f"torch.nn.{ctor}")
    rng = np.random.default_rng(7)
    with torch.no_grad():
        for p in t.parameters():  # something other than the ones/zeros initialisation
            p.copy_(torch.tensor(rng.uniform(0.5, 1.5, tuple(p.shape)).astype(np.float32)))
    for step in range(4):  # training steps: batch statistics, running statistics updated in place
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        compare(r, t, [x]) if step == 0 else _step(r, t, x)
        for name, buf in t.named_buffers():
            got = r.get_buffer(name)
            assert str(got.dtype) == str(buf.dtype)
            close(got, buf, rtol=1e-5, atol=1e-6)
    assert r.training
    r.eval()
    t.eval()
    assert not r.training
    x = rng.standard_normal(shape).astype(np.float32)
    _step(r, t, x)  # evaluation: running statistics (or batch ones without them), no update
    for name, buf in t.named_buffers():
        close(r.get_buffer(name), buf, rtol=1e-5, atol=1e-6)
    r.train()
    if r.track_running_stats:
        r.reset_running_stats()
        assert r.running_mean.tolist() == [0.0] * r.num_features and r.num_batches_tracked.item() == 0


def _step(r: Any, t: Any, x: np.ndarray) -> None:
    import torch

    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_r, out_t = r(xr), t(xt)
    close(out_r, out_t.detach(), rtol=1e-4, atol=1e-5)
    assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = np.random.default_rng(3).standard_normal(x.shape).astype(np.float32)
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    close(xr.grad, xt.grad, rtol=1e-3, atol=1e-4)
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        close(p.grad, q.grad, rtol=1e-3, atol=1e-4)


def test_batchnorm_state_dict_versions(torch: Any) -> None:
    r, t = rg.nn.BatchNorm1d(2), torch.nn.BatchNorm1d(2)
    assert r.state_dict()._metadata[""] == t.state_dict()._metadata[""] == {"version": 2}
    for m in (r, t):  # a checkpoint from before num_batches_tracked
        old = OrderedDict((k, v) for k, v in m.state_dict().items() if k != "num_batches_tracked")
        old._metadata = OrderedDict({"": {"version": 1}})  # type: ignore[attr-defined]
        m.num_batches_tracked.fill_(5)
        assert str(m.load_state_dict(old)) == "<All keys matched successfully>"
        assert m.num_batches_tracked.item() == 5
        missing = OrderedDict((k, v) for k, v in m.state_dict().items() if k != "num_batches_tracked")
        missing._metadata = OrderedDict({"": {"version": 2}})  # type: ignore[attr-defined]
        assert "num_batches_tracked" in outcome(lambda m=m, missing=missing: m.load_state_dict(missing))[1]
    ri, ti = rg.nn.InstanceNorm1d(2), torch.nn.InstanceNorm1d(2)
    stale = {"running_mean": rg.zeros(2)}
    assert outcome(lambda: ri.load_state_dict(stale)) == \
        outcome(lambda: ti.load_state_dict({"running_mean": torch.zeros(2)}))


def test_normalization_input_checks(torch: Any) -> None:
    cases = [
        ("BatchNorm1d(3)", (2, 3, 4, 5)), ("BatchNorm2d(3)", (2, 3, 4)), ("BatchNorm3d(3)", (2, 3, 4, 4)),
        ("InstanceNorm1d(3)", (3,)), ("InstanceNorm2d(3)", (2, 3, 4, 4, 4)),
        ("InstanceNorm1d(3, affine=True)", (2, 4, 5)), ("BatchNorm1d(3)", (1, 3)),
    ]
    for ctor, shape in cases:
        r, t = eval(f"rg.nn.{ctor}"), eval(f"torch.nn.{ctor}")
        assert outcome(lambda r=r, shape=shape: r(rg.ones(*shape))) == \
            outcome(lambda t=t, shape=shape: t(torch.ones(*shape))), ctor
    with pytest.warns(UserWarning, match="does not match num_features"):
        rg.nn.InstanceNorm1d(3)(rg.randn(2, 4, 5))


# -- embeddings --------------------------------------------------------------------------------


def test_embedding_from_pretrained_and_max_norm(torch: Any) -> None:
    w = np.random.default_rng(4).standard_normal((6, 3)).astype(np.float32)
    for freeze in (True, False):
        r = rg.nn.Embedding.from_pretrained(rg.tensor(w), freeze=freeze, padding_idx=1)
        t = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=freeze, padding_idx=1)
        assert repr(r) == repr(t) and r.weight.requires_grad == t.weight.requires_grad == (not freeze)
        close(r(rg.tensor([[1, 2], [5, 0]])), t(torch.tensor([[1, 2], [5, 0]])).detach())
    base = rg.tensor(w)
    shared = rg.nn.Embedding.from_pretrained(base)
    with rg.no_grad():
        base.mul_(2.0)
    assert shared.weight.tolist() == base.tolist()  # the weight shares the pretrained tensor's memory
    bag_r = rg.nn.EmbeddingBag.from_pretrained(rg.tensor(w), mode="sum")
    bag_t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    assert repr(bag_r) == repr(bag_t) and not bag_r.weight.requires_grad
    close(bag_r(rg.tensor([1, 2, 3]), rg.tensor([0, 1])), bag_t(torch.tensor([1, 2, 3]), torch.tensor([0, 1])))
    assert outcome(lambda: rg.nn.Embedding.from_pretrained(rg.ones(3))) == \
        outcome(lambda: torch.nn.Embedding.from_pretrained(torch.ones(3)))
    # max_norm renormalises the looked-up rows of the weight in place
    r = rg.nn.Embedding(6, 3, max_norm=1.0)
    t = torch.nn.Embedding(6, 3, max_norm=1.0)
    assert repr(r) == repr(t)
    compare(r, t, [np.array([[0, 2], [2, 5]])])
    close(r.weight, t.weight.detach())
    for lib in (rg, torch):
        for bad in ("lib.nn.Embedding(5, 2, padding_idx=5)", "lib.nn.Embedding(5, 2, padding_idx=-6)",
                    "lib.nn.Embedding(5, 2, _weight=lib.ones(4, 2))", "lib.nn.EmbeddingBag(5, 2, padding_idx=7)"):
            assert outcome(lambda bad=bad, lib=lib: eval(bad))[0] == "AssertionError"
    assert outcome(lambda: rg.nn.Embedding(5, 2, padding_idx=5)) == \
        outcome(lambda: torch.nn.Embedding(5, 2, padding_idx=5))


def test_conv_transpose_output_size(torch: Any) -> None:
    r = rg.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    t = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = np.random.default_rng(5).standard_normal((1, 2, 4, 4)).astype(np.float32)
    for size in ([8, 8], [7, 8], (1, 3, 8, 7)):
        compare(r, t, [x], output_size=size)
    for bad in ([9, 8], [8], [6, 6]):
        assert outcome(lambda bad=bad: r(rg.tensor(x), output_size=bad)) == \
            outcome(lambda bad=bad: t(torch.tensor(x), output_size=bad))
    r1 = rg.nn.ConvTranspose1d(2, 3, 3, stride=3)
    t1 = torch.nn.ConvTranspose1d(2, 3, 3, stride=3)
    compare(r1, t1, [np.random.default_rng(6).standard_normal((2, 5)).astype(np.float32)], output_size=[15])


# -- default initialisation --------------------------------------------------------------------


@pytest.mark.parametrize(("ctor", "bound"), [
    ("Conv1d(4, 6, 3, groups=2)", 1 / math.sqrt(2 * 3)),
    ("Conv2d(3, 8, (3, 2))", 1 / math.sqrt(3 * 6)),
    ("Conv3d(2, 4, 2)", 1 / math.sqrt(2 * 8)),
    ("ConvTranspose2d(4, 6, 3)", 1 / math.sqrt(6 * 9)),  # fan_in of a transposed weight is dim 1
    ("Bilinear(5, 3, 4)", 1 / math.sqrt(5)),
    ("Linear(7, 5)", 1 / math.sqrt(7)),
])
def test_uniform_default_init(torch: Any, ctor: str, bound: float) -> None:
    rg.manual_seed(1)
    r = eval(f"rg.nn.{ctor}")
    t = eval(f"torch.nn.{ctor}")
    values = np.concatenate([np.asarray(p.tolist()).ravel() for p in r.parameters()])
    reference = np.concatenate([p.detach().numpy().ravel() for p in t.parameters()])
    assert np.abs(values).max() <= bound and np.abs(reference).max() <= bound
    assert np.abs(values).max() > 0.7 * bound  # the draws fill the interval
    assert [str(p.dtype) for p in r.parameters()] == [str(p.dtype) for p in t.parameters()]
    rg.manual_seed(1)
    again = eval(f"rg.nn.{ctor}")
    assert all(p.tolist() == q.tolist() for p, q in zip(r.parameters(), again.parameters(), strict=True))
    r.reset_parameters()
    assert any(p.tolist() != q.tolist() for p, q in zip(r.parameters(), again.parameters(), strict=True))


def test_constant_and_normal_default_init(torch: Any) -> None:
    for ctor in ("BatchNorm2d(4)", "LayerNorm((2, 3))", "GroupNorm(2, 4)", "RMSNorm(3)", "PReLU(3, init=0.3)",
                 "InstanceNorm1d(3, affine=True)", "LayerNorm(3, bias=False)", "BatchNorm1d(2, dtype=rg_or_torch.float64)"):
        r = eval(f"rg.nn.{ctor}", {"rg": rg, "rg_or_torch": rg})
        t = eval(f"torch.nn.{ctor}", {"torch": torch, "rg_or_torch": torch})
        assert state_signature(r) == state_signature(t)
        for (name, a), (_, b) in zip(r.state_dict().items(), t.state_dict().items(), strict=True):
            assert a.tolist() == b.tolist(), (ctor, name)
    rg.manual_seed(2)
    emb = rg.nn.Embedding(400, 50, padding_idx=3)
    w = np.asarray(emb.weight.tolist())
    assert (w[3] == 0).all()
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.mean()) < 0.02 and abs(rest.std() - 1) < 0.02  # N(0, 1)
    rg.manual_seed(2)
    assert rg.nn.Embedding(400, 50, padding_idx=3).weight.tolist() == emb.weight.tolist()
    assert rg.nn.Conv2d(1, 2, 3, dtype=rg.float64).weight.dtype == rg.float64


# -- dropout -----------------------------------------------------------------------------------


def test_dropout_variants(torch: Any) -> None:
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        for args in ((), (0.2,), (0.3, True)):
            assert repr(getattr(rg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
        assert outcome(lambda name=name: getattr(rg.nn, name)(-0.1)) == \
            outcome(lambda name=name: getattr(torch.nn, name)(-0.1))
        for shape in ((2, 3, 4), (2, 3, 4, 2), (2, 3, 4, 2, 2)):
            if name == "Dropout1d" and len(shape) > 3:
                continue
            x, xt = rg.ones(*shape), torch.ones(*shape)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # dropout2d/3d on inputs of other ranks
                out_r, out_t = getattr(rg.nn, name)(0.5).eval()(x), getattr(torch.nn, name)(0.5).eval()(xt)
            assert (out_r is x) == (out_t is xt) and out_r.tolist() == out_t.tolist()  # identity in evaluation
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        for inplace in (False, True):  # the recorded node in training mode
            nodes = []
            for lib in (rg, torch):
                shape = {"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 2, 2, 2)}.get(name, (2, 3, 4, 2))
                x = lib.ones(*shape, requires_grad=True) * 1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nodes.append(type(getattr(lib.nn, name)(0.3, inplace)(x).grad_fn).__name__)
            assert nodes[0] == nodes[1], (name, inplace, nodes)
    rg.manual_seed(0)
    x = rg.ones(50, 40, 3, requires_grad=True)
    y = rg.nn.Dropout1d(0.25)(x)
    per_channel = np.asarray(y.tolist())
    kept = per_channel[:, :, 0] != 0
    assert (per_channel == per_channel[:, :, :1]).all()  # whole channels
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_allclose(per_channel[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist())[:, :, 0], kept / 0.75, rtol=1e-6)
    rg.manual_seed(0)
    assert rg.nn.Dropout1d(0.25)(x).tolist() == y.tolist()  # the mask comes from retrograd's generator
    y2 = np.asarray(rg.nn.Dropout2d(0.5)(rg.ones(20, 30, 2, 2)).tolist())
    assert (y2 == y2[:, :, :1, :1]).all() and set(np.unique(y2)) <= {0.0, 2.0}
    rg.manual_seed(3)
    z = np.asarray(rg.nn.AlphaDropout(0.2)(rg.randn(200, 200)).tolist())
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03  # SELU's fixed point is kept
    fz = np.asarray(rg.nn.FeatureAlphaDropout(0.5)(rg.zeros(10, 30, 4)).tolist())
    assert (fz == fz[:, :, :1]).all() and len(np.unique(fz)) == 2


# -- constructor arguments and errors ---------------------------------------------------------


BAD = [
    "Conv2d(4, 4, 3, groups=0)", "Conv2d(3, 4, 3, groups=2)", "Conv2d(4, 3, 3, groups=2)",
    "Conv2d(2, 2, 3, padding='full')", "Conv2d(2, 2, 3, stride=2, padding='same')",
    "Conv1d(2, 2, 3, padding_mode='mirror')", "ConvTranspose2d(2, 2, 3, padding_mode='reflect')",
    "GroupNorm(3, 4)", "Hardtanh(1.0, -1.0)", "MultiMarginLoss(p=3)",
    "MultiMarginLoss(weight=rg_or_torch.ones(2, 2))", "TripletMarginLoss(margin=0)",
    "TripletMarginWithDistanceLoss(margin=-1.0)", "HuberLoss(delta='1')", "Bilinear(0, 2, 3)",
    "Dropout(1.5)", "AlphaDropout(2)",
]


def _sorted_sets(message: str) -> str:
    """A set's repr in a message, with its elements sorted (set order depends on the hash seed)."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


@pytest.mark.parametrize("ctor", BAD)
def test_constructor_errors(torch: Any, ctor: str) -> None:
    got = outcome(lambda: eval(f"rg.nn.{ctor}", {"rg": rg, "rg_or_torch": rg}))
    want = outcome(lambda: eval(f"torch.nn.{ctor}", {"torch": torch, "rg_or_torch": torch}))
    assert got[0] == want[0] != "ok"
    assert _sorted_sets(got[1]) == _sorted_sets(want[1])


def test_forward_errors(torch: Any) -> None:
    cases = [
        ("Softmax2d()", (2, 3)), ("CircularPad1d(1)", (2, 3, 4, 5)), ("CircularPad2d(1)", (4, 5)),
        ("Conv2d(3, 2, 3)", (2, 4, 5, 5)), ("Conv1d(3, 2, 3)", (3,)), ("MaxPool2d(5)", (1, 3, 3)),
        ("ReflectionPad1d(4)", (1, 3)), ("PixelShuffle(2)", (1, 3, 2, 2)), ("LayerNorm(4)", (2, 3)),
    ]
    for ctor, shape in cases:
        r, t = eval(f"rg.nn.{ctor}"), eval(f"torch.nn.{ctor}")
        got = outcome(lambda r=r, shape=shape: r(rg.ones(*shape)))
        want = outcome(lambda t=t, shape=shape: t(torch.ones(*shape)))
        assert got[0] == want[0] != "ok", ctor


def test_stored_arguments(torch: Any) -> None:
    """Attributes as PyTorch stores them (tuples, normalised padding_idx, float scale factors)."""
    pairs = [
        ("Conv2d(3, 4, 3)", ("kernel_size", "stride", "padding", "dilation", "output_padding", "transposed",
                             "padding_mode", "_reversed_padding_repeated_twice")),
        ("Conv1d(2, 2, 4, padding='same', dilation=2)", ("padding", "_reversed_padding_repeated_twice")),
        ("ConvTranspose1d(2, 2, 3, 2, 1, 1)", ("stride", "padding", "output_padding", "transposed")),
        ("MaxPool2d(3)", ("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode")),
        ("AvgPool1d(3, padding=1)", ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")),
        ("Upsample(scale_factor=2)", ("scale_factor", "size", "mode", "align_corners", "name")),
        ("Upsample(scale_factor=(2, 3))", ("scale_factor",)),
        ("Embedding(5, 2, padding_idx=-2)", ("padding_idx", "max_norm", "norm_type", "sparse")),
        ("PairwiseDistance(3.0)", ("norm", "eps", "keepdim")),
        ("ZeroPad2d((1, 2, 3, 4))", ("padding", "value")),
        ("ReflectionPad1d(2)", ("padding",)),
        ("ConstantPad3d(1, 2.0)", ("padding", "value")),
        ("LayerNorm([2, 3])", ("normalized_shape", "eps", "elementwise_affine")),
        ("BatchNorm1d(3, momentum=None)", ("num_features", "momentum", "affine", "track_running_stats")),
        ("InstanceNorm2d(3)", ("momentum", "affine", "track_running_stats")),
        ("Hardtanh(-2, 3)", ("min_val", "max_val", "inplace")),
        ("GaussianNLLLoss()", ("full", "eps", "reduction")),
        ("KLDivLoss(log_target=True)", ("reduction", "log_target")),
    ]
    for ctor, attrs in pairs:
        r, t = eval(f"rg.nn.{ctor}"), eval(f"torch.nn.{ctor}")
        assert repr(r) == repr(t), ctor
        for a in attrs:
            assert getattr(r, a) == getattr(t, a), (ctor, a)
    seq_r = rg.nn.Sequential(rg.nn.Conv2d(1, 2, 3), rg.nn.BatchNorm2d(2), rg.nn.ReLU(), rg.nn.MaxPool2d(2),
                             rg.nn.Flatten(), rg.nn.Linear(2, 3), rg.nn.Dropout(0.1), rg.nn.LogSoftmax(1))
    seq_t = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(2, 3),
                                torch.nn.Dropout(0.1), torch.nn.LogSoftmax(1))
    assert repr(seq_r) == repr(seq_t)
    assert state_signature(seq_r) == state_signature(seq_t)
    seq_r.eval()
    seq_t.eval()
    compare(seq_r, seq_t, [np.random.default_rng(8).standard_normal((3, 1, 4, 4)).astype(np.float32)])


# -- containers, Linear, simple activations and losses, Dropout (formerly tests/nn/test_nn_layers.py) --


def close_strict(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=rtol, atol=atol)


# -- containers --------------------------------------------------------------------------------


def test_sequential_operations(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        s = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Tanh())
        record = [len(s), type(s[1]).__name__, type(s[-1]).__name__, type(s[1:]).__name__, len(s[1:])]
        s.append(nn.Sigmoid())
        s.insert(1, nn.Identity())
        record.append([type(m).__name__ for m in s])
        popped = s.pop(2)
        record.append(type(popped).__name__)
        del s[0]
        record.append(list(s._modules))
        s[0] = nn.ReLU()
        record.append(repr(s))
        record.append(repr(s + nn.Sequential(nn.Tanh())))
        record.append(repr(s * 2))
        s.extend([nn.Tanh()])
        s += nn.Sequential(nn.ReLU())
        record.append(repr(s))
        named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
        record.append([n for n, _ in named.named_children()])
        record.append(outcome(lambda: s[10]))
        record.append(outcome(lambda: nn.Sequential() + [1]))
        outs.append(record)
    assert outs[0] == outs[1]


def test_sequential_forward_chain(torch: Any) -> None:
    r = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 2), rg.nn.LogSoftmax(dim=1))
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.LogSoftmax(dim=1))
    r.load_state_dict({k: rg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out_r, out_t = r(rg.tensor(x)), t(torch.tensor(x))
    close_strict(out_r, out_t.detach())
    out_r.sum().backward()
    out_t.sum().backward()
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        close_strict(p.grad, q.grad)


def test_module_list_and_dict(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU()])
        record: list[Any] = [repr(ml), repr(nn.ModuleList()), len(ml), type(ml[-2]).__name__, len(ml[1:3])]
        ml.append(nn.Sigmoid())
        ml.insert(0, nn.Identity())
        ml.extend([nn.Tanh()])
        ml += [nn.ReLU()]
        del ml[1]
        record.append(list(ml._modules))
        record.append(type(ml.pop(0)).__name__)
        ml[0] = nn.Sigmoid()
        record.append(repr(ml))
        record.append(repr(ml + nn.ModuleList([nn.Tanh()])))
        record.append(outcome(lambda: ml[100]))
        record.append(outcome(lambda: ml.extend(3)))
        record.append(outcome(lambda: ml(1)))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md["c"] = nn.Sigmoid()
        md.update([("d", nn.Identity())])
        record += [list(md.keys()), "a" in md, len(md), type(md.pop("b")).__name__, list(md), repr(md)]
        record.append(outcome(lambda: md.update([("x",)])))
        record.append(outcome(lambda: md.update(3)))
        md.clear()
        record.append(len(md))
        outs.append(record)
    assert outs[0] == outs[1]


def test_parameter_list_and_dict(torch: Any) -> None:
    outs = []
    for lib in (rg, torch):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.ones(3, dtype=lib.float64)])
        pl.append(lib.zeros(2, 3))
        pl.extend([nn.Parameter(lib.ones(1), requires_grad=False)])
        record: list[Any] = [len(pl), [type(p).__name__ for p in pl], [p.requires_grad for p in pl],
                             [n for n, _ in pl.named_parameters()], repr(pl), len(pl[1:3]), repr(nn.ParameterList())]
        pl[0] = lib.full((2,), 3.0)
        record.append(pl[0].tolist())
        record.append(outcome(lambda: pl(1)))
        record.append(outcome(lambda: pl.extend(lib.ones(2))))
        pd = nn.ParameterDict({"b": nn.Parameter(lib.ones(1)), "a": lib.zeros(2)})
        pd["c"] = lib.ones(2, 2)
        pd.update([("d", lib.ones(1))])
        record += [list(pd.keys()), [n for n, _ in pd.named_parameters()], "a" in pd, len(pd), repr(pd)]
        record.append(pd.get("zz", 5))
        record.append(pd.pop("b").tolist())
        record.append(pd.setdefault("e", lib.ones(1)).tolist())
        record.append(list(pd))
        record.append(outcome(lambda: pd[1]))
        record.append(outcome(lambda: pd(1)))
        record.append(list((pd | nn.ParameterDict({"z": lib.ones(1)})).keys()))
        pd.clear()
        record.append(len(pd))
        outs.append(record)
    assert outs[0] == outs[1]


# -- layers ------------------------------------------------------------------------------------


def test_linear_matches_torch(torch: Any) -> None:
    t = torch.nn.Linear(4, 3)
    r = rg.nn.Linear(4, 3)
    with rg.no_grad():
        r.weight.copy_(rg.tensor(t.weight.detach().numpy()))
        r.bias.copy_(rg.tensor(t.bias.detach().numpy()))
    rng = np.random.default_rng(1)
    for shape in ((5, 4), (4,), (2, 3, 4)):
        x = rng.standard_normal(shape).astype(np.float32)
        xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out_r, out_t = r(xr), t(xt)
        assert out_r.shape == out_t.shape
        close_strict(out_r, out_t.detach())
        g = rng.standard_normal(out_t.shape).astype(np.float32)
        out_r.backward(rg.tensor(g))
        out_t.backward(torch.tensor(g))
        close_strict(xr.grad, xt.grad)
    close_strict(r.weight.grad, t.weight.grad, rtol=1e-4)
    close_strict(r.bias.grad, t.bias.grad, rtol=1e-4)
    assert repr(r) == repr(t) and repr(rg.nn.Linear(2, 1, bias=False)) == repr(torch.nn.Linear(2, 1, bias=False))
    nb = rg.nn.Linear(2, 1, bias=False)
    assert nb.bias is None and [n for n, _ in nb.named_parameters()] == ["weight"]
    assert rg.nn.Linear(2, 2, dtype=rg.float64).weight.dtype == rg.float64


def test_linear_default_init_distribution() -> None:
    rg.manual_seed(0)
    lin = rg.nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)  # kaiming_uniform(a=sqrt(5)) and the bias share this bound
    w = np.array(lin.weight.tolist())
    b = np.array(lin.bias.tolist())
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # U(-a, a) has std a/sqrt(3)
    assert abs(w.mean()) < 0.01 * bound
    rg.manual_seed(0)
    assert rg.nn.Linear(50, 400).weight.tolist() == lin.weight.tolist()  # seeded by retrograd's generator


def test_identity_flatten_unflatten(torch: Any) -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for module in ("Identity()", "Flatten()", "Flatten(0, 1)", "Flatten(-2)", "Unflatten(2, (2, 2))",
                   "Unflatten(-1, (2, -1))", "Unflatten(1, [3, 1])"):
        r = eval(f"rg.nn.{module}")
        t = eval(f"torch.nn.{module}")
        assert repr(r) == repr(t)
        out_r, out_t = r(rg.tensor(x)), t(torch.tensor(x))
        assert out_r.shape == out_t.shape and out_r.tolist() == out_t.tolist()
    assert outcome(lambda: rg.nn.Unflatten(1, (2, 2))(rg.ones(2, 3)))[0] == \
        outcome(lambda: torch.nn.Unflatten(1, (2, 2))(torch.ones(2, 3)))[0]
    for bad in ((2, 2.0), 5):
        assert outcome(lambda: rg.nn.Unflatten(1, bad)) == outcome(lambda: torch.nn.Unflatten(1, bad))
    ident = rg.nn.Identity(3, unused=True)
    t = rg.ones(2)
    assert ident(t) is t


@pytest.mark.parametrize("name", ["ReLU()", "ReLU(inplace=True)", "Tanh()", "Sigmoid()", "Softmax(dim=1)",
                                  "Softmax(dim=0)", "LogSoftmax(dim=1)", "LogSoftmax(dim=-1)", "Softmax()"])
def test_activations(torch: Any, name: str) -> None:
    x = np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.5]], dtype=np.float32)
    r, t = eval(f"rg.nn.{name}"), eval(f"torch.nn.{name}")
    assert repr(r) == repr(t)
    xr, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Softmax() warns about the implicit dim in torch
        out_r, out_t = r(xr * 1), t(xt * 1)
    close_strict(out_r, out_t.detach())
    assert type(out_r.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = np.array([[1.0, -2.0, 0.5], [0.1, 0.2, 0.3]], dtype=np.float32)
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))
    close_strict(xr.grad, xt.grad)


# -- losses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss"])
def test_regression_losses(torch: Any, name: str, reduction: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    ar, at = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    br, bt = rg.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    r, t = getattr(rg.nn, name)(reduction=reduction), getattr(torch.nn, name)(reduction=reduction)
    assert repr(r) == repr(t) and r.reduction == reduction
    lr, lt = r(ar, br), t(at, bt)
    assert lr.shape == lt.shape and lr.dtype == rg.float32
    close_strict(lr, lt.detach())
    (lr * lr).sum().backward()
    (lt * lt).sum().backward()
    close_strict(ar.grad, at.grad, rtol=1e-4)
    close_strict(br.grad, bt.grad, rtol=1e-4)


def test_loss_arguments(torch: Any) -> None:
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert rg.nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert rg.nn.L1Loss(reduce=False).reduction == "none"
    assert outcome(lambda: rg.nn.MSELoss(reduction="bad")(rg.ones(2), rg.ones(2))) == \
        outcome(lambda: torch.nn.MSELoss(reduction="bad")(torch.ones(2), torch.ones(2)))
    with pytest.warns(UserWarning, match="Using a target size"):
        rg.nn.MSELoss()(rg.ones(3, 1), rg.ones(3))
    w = rg.tensor([1.0, 2.0, 3.0])
    ce = rg.nn.CrossEntropyLoss(weight=w, label_smoothing=0.1, ignore_index=1)
    assert [n for n, _ in ce.named_buffers()] == ["weight"] and ce.weight is w
    assert list(ce.state_dict()) == ["weight"]
    assert rg.nn.CrossEntropyLoss().weight is None and list(rg.nn.NLLLoss().state_dict()) == []


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 2},
                                    {"weight": [0.2, 1.0, 3.0, 0.5]}, {"label_smoothing": 0.2}])
def test_classification_losses(torch: Any, kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    target = np.array([0, 2, 3, 2, 1])
    for name in ("CrossEntropyLoss", "NLLLoss"):
        if name == "NLLLoss" and "label_smoothing" in kwargs:
            continue
        kw_r = {k: rg.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        kw_t = {k: torch.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        xr, xt = rg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        inp_r = xr if name == "CrossEntropyLoss" else xr.log_softmax(1)
        inp_t = xt if name == "CrossEntropyLoss" else xt.log_softmax(1)
        lr = getattr(rg.nn, name)(**kw_r)(inp_r, rg.tensor(target))
        lt = getattr(torch.nn, name)(**kw_t)(inp_t, torch.tensor(target))
        close_strict(lr, lt.detach())
        lr.sum().backward()
        lt.sum().backward()
        close_strict(xr.grad, xt.grad, rtol=1e-4)


# -- dropout -----------------------------------------------------------------------------------


def test_dropout(torch: Any) -> None:
    assert repr(rg.nn.Dropout()) == repr(torch.nn.Dropout())
    assert repr(rg.nn.Dropout(0.2, True)) == repr(torch.nn.Dropout(0.2, True))
    assert outcome(lambda: rg.nn.Dropout(1.5)) == outcome(lambda: torch.nn.Dropout(1.5))
    d = rg.nn.Dropout(0.25)
    x = rg.ones(200, 100, requires_grad=True)
    rg.manual_seed(0)
    y = d(x)
    kept = np.array(y.tolist()) != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(np.array(y.tolist())[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.array(x.grad.tolist()), kept / 0.75, rtol=1e-6)
    rg.manual_seed(0)
    assert d(x).tolist() == y.tolist()  # the mask comes from retrograd's generator
    d.eval()
    assert d(x) is x
    assert rg.nn.Dropout(0.0)(x) is x
    assert rg.nn.Dropout(1.0)(x).abs().sum().item() == 0
    z = rg.ones(10)
    out = rg.nn.Dropout(0.5, inplace=True)(z)
    assert out is z and z._version == 1
