"""``stft`` / ``istft`` (functions and Tensor methods) against PyTorch: values, dtypes, shapes,
``grad_fn`` names, gradients, warnings and errors over several configurations; gradcheck and
gradgradcheck in float64 through both, for the signal, the spectrum and the window."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

CONFIGS: dict[str, dict[str, Any]] = {
    "defaults": {"n_fft": 16},
    "hop, short window, normalized": {"n_fft": 16, "hop_length": 5, "win_length": 10, "normalized": True},
    "no centre, two-sided": {"n_fft": 16, "center": False, "onesided": False},
    "odd n_fft, constant pad": {"n_fft": 15, "pad_mode": "constant"},
    "replicate pad": {"n_fft": 12, "hop_length": 3, "pad_mode": "replicate"},
    "circular pad": {"n_fft": 8, "pad_mode": "circular"},
    "aligned to window": {"n_fft": 16, "win_length": 12, "center": False, "align_to_window": True},
}


def _signal(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _window(config: dict[str, Any]) -> np.ndarray:
    length = config.get("win_length", config["n_fft"])
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length) + 0.1  # (no zeros: istft inverts it)


def _stft(lib: Any, x: Any, config: dict[str, Any], window: Any, method: bool = False) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if method:
            return x.stft(window=window, return_complex=True, **config)
        return lib.stft(x, window=window, return_complex=True, **config)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("shape", [(60,), (2, 60)], ids=["1d", "batch"])
@pytest.mark.parametrize("windowed", [True, False], ids=["window", "no window"])
def test_stft_matches_torch(torch: Any, name: str, shape: tuple[int, ...], windowed: bool) -> None:
    config = CONFIGS[name]
    results = []
    for lib in (rg, torch):
        x = lib.tensor(_signal(shape), requires_grad=True)
        w = lib.tensor(_window(config), requires_grad=True) if windowed else None
        out = _stft(lib, x, config, w, method=lib is rg and windowed)
        grad = _signal(tuple(out.shape), 1) + 1j * _signal(tuple(out.shape), 2)
        out.backward(lib.tensor(grad))
        results.append((out.detach().numpy(), str(out.dtype), type(out.grad_fn).__name__, x.grad.numpy(),
                        None if w is None else w.grad.numpy()))
    (value, dtype, node, gx, gw), (value_t, dtype_t, node_t, gx_t, gw_t) = results
    assert value.shape == value_t.shape and dtype == dtype_t and node == node_t
    np.testing.assert_allclose(value, value_t, atol=1e-10)
    np.testing.assert_allclose(gx, gx_t, atol=1e-10)
    if windowed:
        np.testing.assert_allclose(gw, gw_t, atol=1e-10)


@pytest.mark.parametrize("name", [n for n in CONFIGS if CONFIGS[n].get("center", True)])
@pytest.mark.parametrize("length", [None, 50, 70], ids=["no length", "shorter", "longer"])
def test_istft_matches_torch_and_inverts_stft(torch: Any, name: str, length: int | None) -> None:
    config = {k: v for k, v in CONFIGS[name].items() if k != "pad_mode"}
    signal = _signal((2, 60))
    results = []
    for lib in (rg, torch):
        spec = _stft(lib, lib.tensor(signal), CONFIGS[name], lib.tensor(_window(config))).detach().requires_grad_()
        w = lib.tensor(_window(config), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:  # (a length past the last window's support divides by a zero envelope: both refuse it)
                out = lib.istft(spec, window=w, length=length, **config)
            except RuntimeError as e:
                results.append((str(e),))
                continue
        out.backward(lib.tensor(_signal(tuple(out.shape), 3)))
        results.append((out.detach().numpy(), str(out.dtype), type(out.grad_fn).__name__, spec.grad.numpy(),
                        w.grad.numpy()))
    assert len(results[0]) == len(results[1])
    for got, want in zip(results[0], results[1]):
        if isinstance(got, np.ndarray):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, atol=1e-10)
        else:
            assert got == want
    if length is None:  # a centred stft is inverted exactly (up to its cut tail)
        n = results[0][0].shape[-1]
        np.testing.assert_allclose(results[0][0], signal[:, :n], atol=1e-10)


def test_istft_of_one_signal_and_complex_output_match_torch(torch: Any) -> None:
    signal = _signal((40,)) + 1j * _signal((40,), 5)
    got = []
    for lib in (rg, torch):
        spec = lib.stft(lib.tensor(signal), 8, window=lib.hann_window(8, dtype=lib.float64), return_complex=True)
        out = lib.istft(spec.detach().requires_grad_(), 8, window=lib.hann_window(8, dtype=lib.float64),
                        return_complex=True, onesided=False)
        got.append((out.detach().numpy(), str(out.dtype), type(out.grad_fn).__name__, tuple(spec.shape)))
    assert got[0][1:] == got[1][1:]
    np.testing.assert_allclose(got[0][0], got[1][0], atol=1e-10)
    np.testing.assert_allclose(got[0][0], signal, atol=1e-10)


def _warned(lib: Any, fn: Any) -> list[str]:
    """The UserWarnings ``fn`` gives under ``set_warn_always(True)`` (PyTorch's once-per-process
    warnings every time), without PyTorch's "(Triggered internally at ...)" tail."""
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
    finally:
        lib.set_warn_always(False)
    return [str(w.message).split(" (Triggered internally")[0] for w in caught if w.category is UserWarning]


def test_stft_real_output_matches_torch_and_warns(torch: Any) -> None:
    outs, messages = [], []
    for lib in (rg, torch):
        messages.append(_warned(lib, lambda: outs.append(lib.stft(lib.tensor(_signal((30,))), 8, return_complex=False))))
    assert len(messages[0]) == 2 and messages[0] == messages[1]
    assert type(outs[0].grad_fn).__name__ == type(outs[1].grad_fn).__name__ and outs[0].shape == outs[1].shape
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), atol=1e-10)


@pytest.mark.parametrize("name", ["defaults", "hop, short window, normalized", "no centre, two-sided"])
def test_stft_gradcheck_and_gradgradcheck(name: str) -> None:
    config = CONFIGS[name]
    x = rg.tensor(_signal((2, 24)), requires_grad=True)
    w = rg.tensor(_window(config), requires_grad=True)

    def f(x: Any, w: Any) -> Any:
        return rg.view_as_real(_stft(rg, x, config, w))

    assert rg.autograd.gradcheck(f, (x, w))
    assert rg.autograd.gradgradcheck(f, (x, w))


def test_istft_gradcheck_and_gradgradcheck() -> None:
    config = CONFIGS["hop, short window, normalized"]
    spec = _stft(rg, rg.tensor(_signal((24,))), config, rg.tensor(_window(config)))
    re = rg.tensor(spec.real.numpy(), requires_grad=True)
    im = rg.tensor(spec.imag.numpy(), requires_grad=True)
    w = rg.tensor(_window(config), requires_grad=True)

    def f(re: Any, im: Any, w: Any) -> Any:
        return rg.istft(rg.complex(re, im), window=w, length=20, **config)

    assert rg.autograd.gradcheck(f, (re, im, w))
    assert rg.autograd.gradgradcheck(f, (re, im, w))


STFT_ERRORS: dict[str, Any] = {
    "no return_complex": lambda lib, x: lib.stft(x, 8),
    "3-d": lambda lib, x: lib.stft(x.reshape(2, 2, 10), 4, return_complex=True),
    "0-d": lambda lib, x: lib.stft(x[0], 4, return_complex=True),
    "n_fft 0": lambda lib, x: lib.stft(x, 0, return_complex=True),
    "n_fft too long": lambda lib, x: lib.stft(x, 50, center=False, return_complex=True),
    "hop 0": lambda lib, x: lib.stft(x, 8, hop_length=0, return_complex=True),
    "win too long": lambda lib, x: lib.stft(x, 8, win_length=9, return_complex=True),
    "window size": lambda lib, x: lib.stft(x, 8, window=lib.ones(5, dtype=lib.float64), return_complex=True),
    "window 2-d": lambda lib, x: lib.stft(x, 4, window=lib.ones(2, 2, dtype=lib.float64), return_complex=True),
    "pad mode": lambda lib, x: lib.stft(x, 8, pad_mode="bogus", return_complex=True),
    "signal too short to reflect": lambda lib, x: lib.stft(x[:5], 16, return_complex=True),
    "integer": lambda lib, x: lib.stft(x.long(), 8, return_complex=True),
    "onesided complex": lambda lib, x: lib.stft(x * 1j, 8, onesided=True, return_complex=True),
    "align with center": lambda lib, x: lib.stft(x, 8, align_to_window=True, return_complex=True),
    "list": lambda lib, x: lib.stft([1.0, 2.0], 8, return_complex=True),
}


@pytest.mark.parametrize("case", list(STFT_ERRORS))
def test_stft_errors_match_torch(torch: Any, case: str) -> None:
    def call(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return STFT_ERRORS[case](lib, lib.tensor(_signal((20,))))

    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))


ISTFT_ERRORS: dict[str, Any] = {
    "real input": lambda lib, s, w: lib.istft(s.real, 16, window=w),
    "empty": lambda lib, s, w: lib.istft(s[:0], 16, window=w),
    "1-d": lambda lib, s, w: lib.istft(s[0], 16, window=w),
    "4-d": lambda lib, s, w: lib.istft(s[None, None], 16, window=w),
    "hop above window": lambda lib, s, w: lib.istft(s, 16, hop_length=20, window=w),
    "win too long": lambda lib, s, w: lib.istft(s, 16, win_length=20),
    "window size": lambda lib, s, w: lib.istft(s, 16, window=w[:10]),
    "onesided size": lambda lib, s, w: lib.istft(s, 18, window=lib.ones(18, dtype=lib.float64)),
    "two-sided size": lambda lib, s, w: lib.istft(s, 16, window=w, onesided=False),
    "complex output onesided": lambda lib, s, w: lib.istft(s, 16, window=w, return_complex=True),
    "complex window": lambda lib, s, w: lib.istft(s, 16, window=w * 1j),
    "zero window": lambda lib, s, w: lib.istft(s, 16, window=w * 0),
    "no centre, zero envelope": lambda lib, s, w: lib.istft(s, 16, window=lib.hann_window(16, dtype=lib.float64),
                                                            center=False),
}


@pytest.mark.parametrize("case", list(ISTFT_ERRORS))
def test_istft_errors_match_torch(torch: Any, case: str) -> None:
    def call(lib: Any) -> Any:
        w = lib.hann_window(16, dtype=lib.float64) + 0.1
        spec = lib.stft(lib.tensor(_signal((60,))), 16, window=w, return_complex=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return ISTFT_ERRORS[case](lib, spec, w)

    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))


WARNING_CASES: dict[str, Any] = {
    "stft without window": lambda lib: lib.stft(lib.ones(20), 8, return_complex=True),
    "istft without window": lambda lib: lib.istft(lib.stft(lib.ones(20), 8, return_complex=True), 8),
    "istft length past the signal": lambda lib: lib.istft(
        lib.stft(lib.ones(20), 8, window=lib.ones(8), return_complex=True), 8, window=lib.ones(8), length=30),
}


@pytest.mark.parametrize("case", list(WARNING_CASES))
def test_warnings_match_torch_and_come_once(torch: Any, case: str) -> None:
    assert _warned(rg, lambda: WARNING_CASES[case](rg)) == _warned(torch, lambda: WARNING_CASES[case](torch))
    with warnings.catch_warnings(record=True) as caught:  # (once per process, as TORCH_WARN_ONCE)
        warnings.simplefilter("always")
        WARNING_CASES[case](rg)
        WARNING_CASES[case](rg)
    assert len(caught) <= 1
