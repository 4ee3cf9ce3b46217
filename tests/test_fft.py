"""``retrograd.fft`` against ``torch.fft``: values, dtypes, the ``grad_fn`` chain and ``.grad``
after a real loss, for every transform, ``n``/``s``/``dim`` and ``norm`` mode; gradcheck of each
transform (real and complex inputs); errors; the frequency and shift helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

_RNG = np.random.default_rng(0)
REAL = _RNG.standard_normal((4, 6))
COMPLEX = REAL + 1j * _RNG.standard_normal((4, 6))

CASES = [
    ("fft", "r", {}), ("fft", "c", {}), ("ifft", "r", {}), ("ifft", "c", {"n": 3}), ("fft", "c", {"n": 9, "dim": 0}),
    ("rfft", "r", {}), ("rfft", "r", {"n": 9}), ("rfft", "r", {"n": 3, "dim": 0}), ("irfft", "c", {}),
    ("irfft", "c", {"n": 7}), ("irfft", "r", {"n": 4, "dim": 0}), ("hfft", "c", {}), ("hfft", "c", {"n": 5}),
    ("ihfft", "r", {}), ("ihfft", "r", {"n": 5}), ("fft2", "r", {}), ("fftn", "c", {"s": (3, 8)}),
    ("ifftn", "c", {"dim": (0,)}), ("ifft2", "c", {"s": (5, -1)}), ("rfft2", "r", {}), ("rfftn", "r", {"s": (2, 5)}),
    ("irfft2", "c", {}), ("irfftn", "c", {"s": (4, 9)}), ("irfftn", "c", {"dim": 0}), ("fftn", "r", {"dim": 1, "s": [4]}),
    ("fft", "i", {}), ("fftn", "i", {}),
]


def _run(lib: Any, name: str, kind: str, kwargs: dict[str, Any], bits: int) -> tuple[Any, ...]:
    if kind == "i":
        t = lib.tensor(np.arange(12).reshape(3, 4))
    elif kind == "r":
        t = lib.tensor(REAL, dtype=getattr(lib, f"float{bits}"), requires_grad=True)
    else:
        t = lib.tensor(COMPLEX, dtype=getattr(lib, f"complex{2 * bits}"), requires_grad=True)
    y = getattr(lib.fft, name)(t, **kwargs)
    chain = []
    fn = y.grad_fn
    while fn is not None and type(fn).__name__ != "AccumulateGrad":
        chain.append(type(fn).__name__)
        fn = fn.next_functions[0][0]
    if kind == "i":
        return str(y.dtype), chain, y.resolve_conj().numpy(), None
    weights = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    loss = (y * weights).real.sum() if y.is_complex() else (y * weights).sum()
    loss.backward()
    return str(y.dtype), chain, y.detach().resolve_conj().numpy(), t.grad.resolve_conj().numpy()


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("case", CASES, ids=[f"{n}-{k}-{kw}" for n, k, kw in CASES])
@pytest.mark.parametrize("bits", [32, 64])
def test_transform_matches_pytorch(torch: Any, case: Any, norm: Any, bits: int) -> None:
    name, kind, kwargs = case
    ours = _run(rg, name, kind, dict(kwargs, norm=norm), bits)
    theirs = _run(torch, name, kind, dict(kwargs, norm=norm), bits)
    assert ours[:2] == theirs[:2]  # dtype, grad_fn chain
    tol = 1e-4 if bits == 32 else 1e-10
    assert ours[2].shape == theirs[2].shape
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol)
    if ours[3] is not None:
        assert ours[3].dtype == theirs[3].dtype
        np.testing.assert_allclose(ours[3], theirs[3], rtol=tol, atol=tol)


GRADCHECK = [
    ("fft", "r", {}), ("fft", "c", {"n": 5}), ("ifft", "r", {"norm": "ortho"}), ("ifft", "c", {"n": 2}),
    ("rfft", "r", {}), ("rfft", "r", {"n": 5, "norm": "forward"}), ("irfft", "c", {}), ("irfft", "c", {"n": 5}),
    ("irfft", "c", {"n": 2, "dim": 0, "norm": "ortho"}), ("hfft", "c", {}), ("hfft", "c", {"n": 3}), ("ihfft", "r", {}),
    ("fft2", "c", {}), ("ifft2", "r", {"s": (2, 3)}), ("fftn", "c", {"dim": 0, "norm": "forward"}),
    ("rfft2", "r", {}), ("rfftn", "r", {"s": (3, 3)}), ("irfft2", "c", {}), ("irfftn", "c", {"s": (2, 5)}),
]


@pytest.mark.parametrize("case", GRADCHECK, ids=[f"{n}-{k}-{kw}" for n, k, kw in GRADCHECK])
def test_gradcheck(case: Any) -> None:
    name, kind, kwargs = case
    data = REAL[:3, :4] if kind == "r" else COMPLEX[:3, :4]
    t = rg.tensor(data, dtype=rg.float64 if kind == "r" else rg.complex128, requires_grad=True)
    fn = getattr(rg.fft, name)
    assert rg.autograd.gradcheck(lambda x: fn(x, **kwargs), (t,))
    assert rg.autograd.gradgradcheck(lambda x: fn(x, **kwargs), (t,))


def test_errors_match_pytorch(torch: Any) -> None:
    def calls(lib: Any) -> list[tuple[str, str]]:
        x, z = lib.ones(4, 6), lib.ones(4, 6, dtype=lib.complex64)
        return [outcome(f) for f in (
            lambda: lib.fft.rfft(z), lambda: lib.fft.ihfft(z), lambda: lib.fft.rfftn(z),
            lambda: lib.fft.fft(x, norm="bad"), lambda: lib.fft.ifft(x, norm="Ortho"), lambda: lib.fft.fft(x, n=0),
            lambda: lib.fft.fft(x, dim=3), lambda: lib.fft.irfft(z, n=0), lambda: lib.fft.fftn(x, s=(1, 2, 3)),
            lambda: lib.fft.fftn(x, s=(2,), dim=(0, 1)), lambda: lib.fft.fftn(x, dim=(0, 0)),
            lambda: lib.fft.irfft(lib.ones(1, dtype=lib.complex64)), lambda: lib.fft.rfft2(z),
            lambda: lib.fft.irfftn(lib.ones(1, dtype=lib.complex64)), lambda: lib.fft.fft(lib.ones(2, dtype=lib.half)),
            lambda: lib.fft.fft(5), lambda: lib.fft.ifftn(5))]
    assert calls(rg) == calls(torch)


def test_frequencies_and_shifts_match_pytorch(torch: Any) -> None:
    for lib_call in (lambda lib: lib.fft.fftfreq(5), lambda lib: lib.fft.fftfreq(4, d=0.3),
                     lambda lib: lib.fft.rfftfreq(5, d=0.5), lambda lib: lib.fft.rfftfreq(8, dtype=lib.float64),
                     lambda lib: lib.fft.fftfreq(7, 2.5, dtype=lib.float64),
                     lambda lib: lib.fft.fftshift(lib.arange(10).reshape(2, 5)),
                     lambda lib: lib.fft.ifftshift(lib.arange(10).reshape(2, 5), dim=1),
                     lambda lib: lib.fft.fftshift(lib.arange(10).reshape(2, 5), dim=(-1, 0))):
        ours, theirs = lib_call(rg), lib_call(torch)
        assert repr(ours.dtype) == repr(theirs.dtype)
        assert ours.numpy().tobytes() == theirs.numpy().tobytes()
    x = rg.tensor(REAL, requires_grad=True)
    y = rg.fft.fftshift(x, dim=0)
    assert type(y.grad_fn).__name__ == "RollBackward0"
    assert rg.autograd.gradcheck(lambda t: rg.fft.ifftshift(t, dim=(0, 1)), (x.double().detach().requires_grad_(),))
    assert rg.fft.fftfreq(3, requires_grad=True).requires_grad


def test_roundtrips() -> None:
    x = rg.tensor(REAL, dtype=rg.float64)
    np.testing.assert_allclose(rg.fft.irfft(rg.fft.rfft(x), n=6).numpy(), REAL, atol=1e-12)
    np.testing.assert_allclose(rg.fft.ifftn(rg.fft.fftn(x)).real.numpy(), REAL, atol=1e-12)
    np.testing.assert_allclose(rg.fft.hfft(rg.fft.ihfft(x), n=6).numpy(), REAL, atol=1e-12)
