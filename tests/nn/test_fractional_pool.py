"""``fractional_max_pool{2,3}d`` (+ ``_with_indices``) and ``nn.FractionalMaxPool{2,3}d`` against
real PyTorch: the windows PyTorch picks from the same ``_random_samples`` (float32 and float64
rounding of the window starts), ties and NaN, indices, gradients, grad_fn and saved attributes,
``output_ratio``, the samples drawn from the seeded stream, and errors. Gradcheck and
gradgradcheck of smooth samples are the op database's (tests/opdb/conv.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _both(torch: Any, nd: int, x: np.ndarray, kernel: Any, samples: np.ndarray | None, **kwargs: Any) -> list[Any]:
    found = []
    for lib in (rg, torch):
        xt = lib.tensor(x, requires_grad=True)
        s = None if samples is None else lib.tensor(samples)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        y, i = fn(xt, kernel, return_indices=True, _random_samples=s, **kwargs)
        w = lib.tensor(np.arange(y.numel(), dtype=x.dtype).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        found.append((y.detach().numpy(), i.numpy(), xt.grad.numpy(), type(y.grad_fn).__name__, str(i.dtype)))
    return found


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("nd", [2, 3])
def test_random_windows_match_torch(torch: Any, nd: int, dtype: str) -> None:
    rng = np.random.default_rng(nd * 7 + len(dtype))
    for trial in range(25):
        kernel = tuple(int(k) for k in rng.integers(1, 4, size=nd))
        size = tuple(int(s) for s in rng.integers(4, 12, size=nd))
        # 2-D allows out + kernel - 1 == size, 3-D needs it smaller
        out = tuple(max(1, int(rng.integers(1, s - k + (2 if nd == 2 else 1)))) for s, k in zip(size, kernel, strict=True))
        shape = ((2, 3) if trial % 3 else (3,)) + size
        x = rng.normal(size=shape).astype(dtype)
        if trial % 4 == 0:
            x = np.round(x)  # ties: the first maximum wins
        if trial % 7 == 0:
            x.reshape(-1)[::5] = np.nan  # NaN wins, the last one among several
        batch = shape[0] if len(shape) == nd + 2 else 1
        samples = rng.uniform(size=(batch + trial % 2, shape[-nd - 1], nd)).astype(dtype)
        ours, theirs = _both(torch, nd, x, kernel, samples, output_size=out)
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
        assert ours[3:] == theirs[3:]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_seeded_stream_draws_torchs_windows(torch: Any, dtype: str) -> None:
    x = np.random.default_rng(1).normal(size=(2, 3, 9, 10)).astype(dtype)
    x3 = np.random.default_rng(2).normal(size=(2, 3, 6, 7, 8)).astype(dtype)
    results = []
    for lib in (rg, torch):
        lib.manual_seed(3)
        F = lib.nn.functional
        a = F.fractional_max_pool2d(lib.tensor(x), (2, 3), output_ratio=(0.5, 0.6), return_indices=True)[1]
        b = F.fractional_max_pool3d(lib.tensor(x3), 2, output_ratio=0.5, return_indices=True)[1]
        c = lib.nn.FractionalMaxPool2d(3, output_size=4)(lib.tensor(x[0]))  # unbatched: samples (1, C, 2)
        d = lib.rand(3)  # the stream continues from the same place
        results.append([t.numpy() for t in (a, b, c, d)])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_grad_fn_saved_attributes_and_double_backward_match_torch(torch: Any) -> None:
    x = np.random.default_rng(4).normal(size=(1, 2, 6, 7))
    s = np.random.default_rng(5).uniform(size=(1, 2, 2))
    found = []
    for lib in (rg, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.fractional_max_pool2d(xt, 2, output_size=(3, 4), _random_samples=lib.tensor(s))
        fn = y.grad_fn
        w = lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((y * w).sum(), xt, create_graph=True)
        (gw,) = lib.autograd.grad((g * xt.detach()).sum(), w)
        found.append((type(fn).__name__, fn._saved_kernel_size, fn._saved_output_size, fn._saved_result1.tolist(),
                      fn._saved_self.tolist(), type(g.grad_fn).__name__, gw.tolist()))
    assert found[0] == found[1]
    y3 = rg.nn.functional.fractional_max_pool3d(rg.ones(1, 4, 4, 4, requires_grad=True), 2, output_size=2)
    assert type(y3.grad_fn).__name__ == "FractionalMaxPool3DBackward0"


def test_gradcheck_and_gradgradcheck_in_float64() -> None:
    rng = np.random.default_rng(6)
    x = rg.tensor(rng.permutation(2 * 5 * 6).reshape(1, 2, 5, 6) * 0.5, requires_grad=True)
    s = rg.tensor(rng.uniform(size=(1, 2, 2)))
    fn = lambda a: rg.nn.functional.fractional_max_pool2d(a, (2, 3), output_size=(3, 2), _random_samples=s)  # noqa: E731
    assert rg.autograd.gradcheck(fn, (x,)) and rg.autograd.gradgradcheck(fn, (x,))
    x3 = rg.tensor(rng.permutation(2 * 4 * 4 * 5).reshape(2, 4, 4, 5) * 0.5, requires_grad=True)
    s3 = rg.tensor(rng.uniform(size=(1, 2, 3)))
    fn3 = lambda a: rg.nn.functional.fractional_max_pool3d(a, 2, output_size=(2, 2, 3), _random_samples=s3)  # noqa: E731
    assert rg.autograd.gradcheck(fn3, (x3,)) and rg.autograd.gradgradcheck(fn3, (x3,))


def test_with_indices_functions_return_both(torch: Any) -> None:
    x = np.random.default_rng(8).normal(size=(2, 5, 6))
    s = np.random.default_rng(9).uniform(size=(1, 2, 2))
    x3 = np.random.default_rng(8).normal(size=(2, 5, 6, 4))
    s3 = np.random.default_rng(9).uniform(size=(1, 2, 3))
    for name, a, b in (("fractional_max_pool2d_with_indices", x, s), ("fractional_max_pool3d_with_indices", x3, s3)):
        ours = getattr(rg.nn.functional, name)(rg.tensor(a), 2, output_size=2, _random_samples=rg.tensor(b))
        theirs = getattr(torch.nn.functional, name)(torch.tensor(a), 2, output_size=2, _random_samples=torch.tensor(b))
        for p, q in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_modules_match_torch(torch: Any) -> None:
    x = np.random.default_rng(10).normal(size=(2, 3, 8, 9))
    s = np.random.default_rng(11).uniform(size=(2, 3, 2))
    x3 = np.random.default_rng(10).normal(size=(1, 2, 6, 7, 8))
    s3 = np.random.default_rng(11).uniform(size=(1, 2, 3))
    for lib_args in [((2,), {"output_ratio": (0.5, 0.4)}, x, s), ((3,), {"output_size": 4, "return_indices": True}, x, s)]:
        args, kwargs, data, samples = lib_args
        mods = [lib.nn.FractionalMaxPool2d(*args, **kwargs, _random_samples=lib.tensor(samples)) for lib in (rg, torch)]
        outs = [m(lib.tensor(data)) for m, lib in zip(mods, (rg, torch), strict=True)]
        for p, q in zip(*[o if isinstance(o, tuple) else (o,) for o in outs], strict=True):
            np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert repr(mods[0]) == repr(mods[1]) and list(mods[0].state_dict()) == list(mods[1].state_dict())
    mods3 = [lib.nn.FractionalMaxPool3d((2, 2, 3), output_ratio=0.5, _random_samples=lib.tensor(s3)) for lib in (rg, torch)]
    np.testing.assert_array_equal(mods3[0](rg.tensor(x3)).numpy(), mods3[1](torch.tensor(x3)).numpy())


F = "nn.functional"
ERRORS = [
    ("no size", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2)),
    ("bare ratio", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2, output_ratio=0.5)),
    ("ratio length", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2, output_ratio=(0.5,) * 3)),
    ("kernel length", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), (2, 2, 2), output_size=2)),
    ("output length", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2, output_size=(2, 2, 2))),
    ("too large h", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 5), 2, output_size=(4, 2))),
    ("too large w", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 5), 2, output_size=(3, 5))),
    ("fits exactly", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 5), 2, output_size=(3, 4))),
    ("2-D input", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(4, 5), 2, output_size=2)),
    ("2-D input samples", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(4, 5), 2, output_size=2,
                                                                          _random_samples=L.zeros(1, 4, 2))),
    ("empty channel", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 0, 4, 5), 2, output_size=2)),
    ("empty batch", lambda L: L.nn.functional.fractional_max_pool2d(L.ones(0, 2, 4, 5), 2, output_size=2)),
    ("samples dtype", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 5), 2, output_size=2, _random_samples=L.zeros(1, 1, 2, dtype=L.float64))),
    ("samples rank", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 5), 2, output_size=2, _random_samples=L.zeros(1, 1, 2, 1))),
    ("samples batch", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(2, 1, 4, 5), 2, output_size=2, _random_samples=L.zeros(1, 1, 2))),
    ("samples channels", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 5), 2, output_size=2, _random_samples=L.zeros(1, 2, 2))),
    ("samples last", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 5), 2, output_size=2, _random_samples=L.zeros(1, 1, 3))),
    ("integer input", lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 5, dtype=L.int64), 2, output_size=2, _random_samples=L.zeros(1, 1, 2, dtype=L.int64))),
    ("3-D no size", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 4, 4), 2)),
    ("3-D kernel length", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 4, 4), (2, 2), output_size=2)),
    ("3-D output length", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 4, 4), 2, output_size=(2, 2))),
    ("3-D time", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 5, 6), 2, output_size=(3, 2, 2))),
    ("3-D width first", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 5, 6), 2, output_size=(2, 4, 5))),
    ("3-D height", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 5, 6), 2, output_size=(2, 4, 4))),
    ("3-D 3-D input", lambda L: L.nn.functional.fractional_max_pool3d(L.ones(4, 5, 6), 2, output_size=2,
                                                                      _random_samples=L.zeros(1, 4, 3))),
    ("3-D samples last", lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 4, 5, 6), 2, output_size=2, _random_samples=L.zeros(1, 1, 2))),
    ("module no size", lambda L: L.nn.FractionalMaxPool2d(2)),
    ("module both", lambda L: L.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)),
    ("module ratio", lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5)),
    ("module 3-D kernel", lambda L: L.nn.FractionalMaxPool3d(0, output_ratio=0.5)),
    ("module 3-D ratio", lambda L: L.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.0))),
    ("module 3-D no size", lambda L: L.nn.FractionalMaxPool3d(2)),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
