"""Convolution, pooling, unfold/fold and interpolation beyond the op database: second derivatives
checked with grad mode on, PyTorch parity on moderate shapes (values and gradients), integer inputs,
NaN in max pools, third derivatives."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from opdb import OpInfo, Sample, to_lib
from opdb import conv as conv_db

F = rg.nn.functional


def _outputs(value: Any) -> list[Any]:
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [v for v in values if isinstance(v, rg.Tensor) and v.is_floating_point()]


def gradgradcheck(func: Callable[..., Any], inputs: tuple[Any, ...], **kwargs: Any) -> bool:
    """Second derivatives against finite differences of the first.

    ``rg.autograd.gradgradcheck`` evaluates its finite differences under ``no_grad``, where the
    vector-Jacobian product it differentiates has no graph and returns nothing, so it compares no
    entries. This one turns grad mode back on inside the product."""
    rng = np.random.default_rng(0)
    cotangents = tuple(rg.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, requires_grad=True)
                       for o in _outputs(func(*inputs)))
    n = len(inputs)
    wrt = [i for i, t in enumerate(inputs) if t.requires_grad]

    def vjp(*args: Any) -> tuple[Any, ...]:
        with rg.enable_grad():
            pairs = [(o, g) for o, g in zip(_outputs(func(*args[:n])), args[n:], strict=True) if o.requires_grad]
            if not pairs:
                return ()
            grads = rg.autograd.grad([o for o, _ in pairs], [args[i] for i in wrt], [g for _, g in pairs],
                                     create_graph=True, allow_unused=True)
            return tuple(g for g in grads if g is not None)

    return bool(rg.autograd.gradcheck(vjp, tuple(inputs) + cotangents, **kwargs))


def test_gradgradcheck_helper_catches_a_wrong_second_derivative() -> None:
    x = rg.tensor([0.5, 1.5], dtype=rg.float64, requires_grad=True)

    def wrong(t: Any) -> Any:  # value x^3, gradient 3x^2 computed from a detached x: no second derivative
        return t.detach() ** 3 + (t - t.detach()) * (3 * t.detach() ** 2)

    assert rg.autograd.gradcheck(wrong, (x,))
    assert not gradgradcheck(wrong, (x,), raise_exception=False)
    assert gradgradcheck(lambda t: t ** 3, (x,))


CASES = [
    pytest.param(op, sample, id=f"{op.name}-{sample.name or i}")
    for op in conv_db.OPS
    for i, sample in enumerate(op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))))
]


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_second_derivatives(op: OpInfo, sample: Sample) -> None:
    args, kwargs, leaves = to_lib(rg, sample)
    assert gradgradcheck(lambda *_: op.fn(rg, *args, **kwargs), tuple(leaves), atol=op.atol, rtol=op.rtol)


def _parity(torch: Any, fn: Callable[..., Any], *arrays: np.ndarray, atol: float = 1e-9) -> None:
    """Forward values and every input's gradient, float64, against PyTorch."""
    ours = [rg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(rg, *ours)
        ref = fn(torch, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=atol, rtol=1e-7)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    cotangent = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    out.backward(rg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    for mine, expected in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), atol=atol, rtol=1e-7)


def _f(lib: Any) -> Any:
    return lib.nn.functional


RNG = np.random.default_rng(0)
MODERATE: list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...]]] = [
    ("conv2d", lambda lib, x, w, b: _f(lib).conv2d(x, w, b, padding=1),
     (RNG.standard_normal((8, 3, 32, 32)), RNG.standard_normal((16, 3, 3, 3)), RNG.standard_normal(16))),
    ("conv2d strided grouped dilated", lambda lib, x, w, b: _f(lib).conv2d(x, w, b, stride=2, padding=(2, 1),
                                                                            dilation=(2, 1), groups=4),
     (RNG.standard_normal((4, 8, 21, 17)), RNG.standard_normal((12, 2, 3, 5)), RNG.standard_normal(12))),
    ("conv2d same even kernel", lambda lib, x, w: _f(lib).conv2d(x, w, padding="same"),
     (RNG.standard_normal((4, 3, 15, 12)), RNG.standard_normal((5, 3, 4, 2)))),
    ("conv1d", lambda lib, x, w, b: _f(lib).conv1d(x, w, b, stride=3, padding=2, dilation=2),
     (RNG.standard_normal((4, 6, 50)), RNG.standard_normal((8, 6, 5)), RNG.standard_normal(8))),
    ("conv3d", lambda lib, x, w: _f(lib).conv3d(x, w, padding=1, stride=(1, 2, 2)),
     (RNG.standard_normal((2, 3, 6, 9, 8)), RNG.standard_normal((4, 3, 3, 3, 3)))),
    ("conv_transpose2d", lambda lib, x, w, b: _f(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                                                        groups=2, dilation=(1, 2)),
     (RNG.standard_normal((4, 6, 13, 11)), RNG.standard_normal((6, 5, 3, 3)), RNG.standard_normal(10))),
    ("conv_transpose1d", lambda lib, x, w: _f(lib).conv_transpose1d(x, w, stride=4, padding=3),
     (RNG.standard_normal((3, 4, 20)), RNG.standard_normal((4, 6, 7)))),
    ("max_pool2d", lambda lib, x: _f(lib).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
     (RNG.standard_normal((8, 16, 31, 30)),)),
    ("max_pool2d dilated", lambda lib, x: _f(lib).max_pool2d(x, (2, 3), stride=1, dilation=(3, 2)),
     (RNG.standard_normal((4, 5, 20, 19)),)),
    ("max_pool1d", lambda lib, x: _f(lib).max_pool1d(x, 4, stride=3, padding=2, ceil_mode=True),
     (RNG.standard_normal((4, 5, 41)),)),
    ("avg_pool2d", lambda lib, x: _f(lib).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                      count_include_pad=False),
     (RNG.standard_normal((8, 16, 31, 30)),)),
    ("avg_pool2d divisor", lambda lib, x: _f(lib).avg_pool2d(x, (4, 2), stride=(3, 2), padding=(2, 1),
                                                              divisor_override=7),
     (RNG.standard_normal((4, 5, 23, 19)),)),
    ("avg_pool1d", lambda lib, x: _f(lib).avg_pool1d(x, 5, stride=2, padding=2), (RNG.standard_normal((4, 5, 41)),)),
    ("adaptive_avg_pool2d", lambda lib, x: _f(lib).adaptive_avg_pool2d(x, (7, 5)),
     (RNG.standard_normal((4, 8, 30, 23)),)),
    ("adaptive_max_pool2d", lambda lib, x: _f(lib).adaptive_max_pool2d(x, (7, 5)),
     (RNG.standard_normal((4, 8, 30, 23)),)),
    ("adaptive_max_pool1d", lambda lib, x: _f(lib).adaptive_max_pool1d(x, 9), (RNG.standard_normal((4, 8, 30)),)),
    ("unfold", lambda lib, x: _f(lib).unfold(x, (3, 4), dilation=(2, 1), padding=(1, 2), stride=(2, 3)),
     (RNG.standard_normal((4, 5, 20, 21)),)),
    ("fold", lambda lib, x: _f(lib).fold(x, (20, 21), (3, 4), dilation=(2, 1), padding=(1, 2), stride=(2, 3)),
     (RNG.standard_normal((4, 60, 72)),)),
    ("interpolate nearest", lambda lib, x: _f(lib).interpolate(x, scale_factor=(2.3, 0.7)),
     (RNG.standard_normal((4, 5, 20, 21)),)),
    ("interpolate bilinear", lambda lib, x: _f(lib).interpolate(x, size=(37, 15), mode="bilinear"),
     (RNG.standard_normal((4, 5, 20, 21)),)),
    ("interpolate bilinear align corners", lambda lib, x: _f(lib).interpolate(x, scale_factor=1.9, mode="bilinear",
                                                                               align_corners=True),
     (RNG.standard_normal((4, 5, 20, 21)),)),
    ("interpolate bicubic", lambda lib, x: _f(lib).interpolate(x, scale_factor=2.5, mode="bicubic"),
     (RNG.standard_normal((2, 3, 11, 13)),)),
    ("interpolate linear", lambda lib, x: _f(lib).interpolate(x, size=77, mode="linear"),
     (RNG.standard_normal((4, 5, 30)),)),
]


@pytest.mark.parametrize(("name", "fn", "arrays"), MODERATE, ids=[m[0] for m in MODERATE])
def test_moderate_shapes_match_pytorch(torch: Any, name: str, fn: Callable[..., Any], arrays: tuple[Any, ...]) -> None:
    _parity(torch, fn, *arrays)


def test_integer_inputs_match_pytorch(torch: Any) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(-9, 9, size=(2, 3, 7, 6))
    w = rng.integers(-3, 3, size=(4, 3, 3, 2))
    for fn in (lambda lib, a, b: _f(lib).conv2d(a, b, padding=1, stride=2),
               lambda lib, a, b: _f(lib).max_pool2d(a, 2, padding=1),
               lambda lib, a, b: _f(lib).avg_pool2d(a, 3, padding=1, ceil_mode=True)):
        ours = fn(rg, rg.tensor(x), rg.tensor(w))
        ref = fn(torch, torch.tensor(x), torch.tensor(w))
        assert str(ours.dtype) == str(ref.dtype)
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_max_pool_nan_wins_like_pytorch(torch: Any) -> None:
    x = np.array([[[[np.nan, 1.0, 5.0], [2.0, np.nan, 0.0], [7.0, 3.0, np.nan]]]])
    ours = F.max_pool2d(rg.tensor(x), 2, stride=1, return_indices=True)
    ref = _f(torch).max_pool2d(torch.tensor(x), 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(ours[0].numpy(), ref[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy(), ref[1].numpy())


def test_float32_stays_float32() -> None:
    x = rg.randn(2, 3, 8, 8, requires_grad=True)
    w = rg.randn(4, 3, 3, 3, requires_grad=True)
    y = F.avg_pool2d(F.interpolate(F.conv2d(x, w, padding=1), scale_factor=2, mode="bilinear"), 2)
    y.sum().backward()
    assert y.dtype == rg.float32 and x.grad.dtype == rg.float32 and w.grad.dtype == rg.float32


def test_no_grad_records_nothing() -> None:
    x = rg.randn(1, 2, 5, 5, requires_grad=True)
    w = rg.randn(3, 2, 3, 3, requires_grad=True)
    with rg.no_grad():
        y = F.max_pool2d(F.conv2d(x, w), 2)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_third_derivative(transposed: bool) -> None:
    """gradgradcheck of the first derivative: the rules of the backward rules are correct too."""
    rng = np.random.default_rng(3)
    x = rg.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
    w = rg.tensor(rng.standard_normal((2, 1, 2, 2)), requires_grad=True)
    conv = F.conv_transpose2d if transposed else F.conv2d

    def first_derivative(a: Any, b: Any) -> Any:
        out = conv(a, b, stride=2, padding=1, groups=2) if transposed else conv(a, b, padding=1, groups=2)
        return rg.autograd.grad((out * out).sum(), (a, b), create_graph=True)

    assert gradgradcheck(first_derivative, (x, w))


def test_max_pool_third_derivative() -> None:
    x = rg.tensor(np.arange(16.0).reshape(1, 1, 4, 4) % 7 + np.arange(16.0).reshape(1, 1, 4, 4) / 10,
                  requires_grad=True)

    def first_derivative(a: Any) -> Any:
        out = F.max_pool2d(a, 2, stride=1)
        return rg.autograd.grad((out * out).sum(), a, create_graph=True)

    assert gradgradcheck(first_derivative, (x,))


def test_max_pool_all_lowest_windows_pick_a_real_element(torch: Any) -> None:
    x = np.full((1, 1, 4, 5), -np.inf)
    x[0, 0, 1, 2] = 1.0
    for kwargs in ({"kernel_size": 3, "stride": 2, "padding": 1},
                   {"kernel_size": (3, 2), "stride": 1, "padding": 1, "dilation": (1, 2)},
                   {"kernel_size": 2, "padding": 1, "ceil_mode": True}):
        ours = F.max_pool2d(rg.tensor(x), return_indices=True, **kwargs)
        ref = _f(torch).max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
        np.testing.assert_array_equal(ours[0].numpy(), ref[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), ref[1].numpy())
