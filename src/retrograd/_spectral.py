"""``torch.stft`` / ``torch.istft``: the short-time Fourier transform and its inverse, composed of
retrograd ops (pad, unfold, the FFT nodes, unfold_backward for the overlap-add) in PyTorch's order,
so their gradients (and gradients of gradients) come from those ops' rules and the graph ends in
the nodes PyTorch's does (``TransposeBackward1``/``SqueezeBackward4`` for stft, ``DivBackward0``/
``SqueezeBackward1`` for istft). Loaded on first use of either name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype
from .autograd.warn_state import warn_once
from .ops import complex as _C
from .ops import fft as _F
from .ops import shape as _S
from .ops.op import apply
from .tensor import Tensor

_RECTANGULAR_WARNING = (
    "A window was not provided. A rectangular window will be applied,which is known to cause spectral leakage. "
    "Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage."
    "To suppress this warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
    "device=<device>)`."
)
_REAL_OUTPUT_WARNING = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex tensors "
    "for all inputs, and return_complex=False will raise an error.\nNote: you can still call torch.view_as_real "
    "on the complex output to recover the old return format."
)
_INVERSE_RECTANGULAR_WARNING = (
    "A window was not provided. A rectangular window will be applied.Please provide the same window used by stft "
    "to make the inversion lossless.To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`."
)
_SHORT_SIGNAL_WARNING = (
    "The length of signal is shorter than the length parameter. Result is being padded with zeros in the tail. "
    "Please check your center and hop_length settings."
)


def _opt(value: Any) -> str:
    """How PyTorch's messages print an optional bool or int (``None``, ``0``, ``1``, ``12``)."""
    return "None" if value is None else str(int(value))


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"


def _padded_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor | None:
    """The window centred in ``n_fft`` points (zeros either side), as PyTorch pads a short one."""
    if win_length == n_fft:
        return window
    if window is None:
        window = Tensor._make(np.ones(win_length, like._data.real.dtype))
    left = (n_fft - win_length) // 2
    from .ops.nn import constant_pad_nd

    return apply(constant_pad_nd, (window, (left, n_fft - win_length - left), 0))  # type: ignore[no-any-return]


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,  # noqa: A002
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: ``(n_freq, n_frames)`` (a batch first for a 2-D input).

    >>> import retrograd as torch
    >>> spec = torch.stft(torch.ones(64), 16, window=torch.hann_window(16), return_complex=True)
    >>> spec.shape, spec.dtype
    (torch.Size([9, 17]), torch.complex64)
    """
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    complex_window = window is not None and window._data.dtype.kind == "c"
    if return_complex is None and input._data.dtype.kind != "c" and not complex_window:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if window is None:
        warn_once(_RECTANGULAR_WARNING, UserWarning, stacklevel=2)  # (PyTorch's TORCH_WARN_ONCE, as below)
    if return_complex is False:
        warn_once(_REAL_OUTPUT_WARNING, UserWarning, stacklevel=2)
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # pad n_fft // 2 each side, on the signal dim viewed as (1, 1, L) / (1, B, L)
        from .nn import functional as nnf

        extra = max(3 - input.dim(), 0)
        padded = nnf.pad(input.view([1] * extra + list(input.shape)), [n_fft // 2, n_fft // 2], mode=pad_mode)
        input = padded.view(list(padded.shape)[extra:])  # noqa: A001
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    where = (f"stft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
             f"window={_window_repr(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
             f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : ")
    if input.dim() not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(where + "expected a tensor of floating point or complex values")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(where + f"expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if input._data.dtype == np.float16 or (window is not None and window._data.dtype == np.float16):
        raise RuntimeError("MKL FFT doesn't support tensors of type: Half")
    batched = input if input.dim() == 2 else input.unsqueeze(0)
    if align_to_window:  # frames start where the (shorter) window starts, not n_fft's left edge
        left = (n_fft - win) // 2
        from .ops.nn import constant_pad_nd

        batched = apply(constant_pad_nd, (batched, (left, n_fft - win - left), 0))
    frames = apply(_S.unfold, (batched, batched.dim() - 1, n_fft, hop))  # (batch, n_frames, n_fft)
    full_window = _padded_window(window, win, n_fft, input)
    if full_window is not None:
        frames = frames * full_window
    is_complex = frames._data.dtype.kind == "c"
    sided = not is_complex if onesided is None else bool(onesided)
    normalization = 1 if normalized else 0  # (1/sqrt(n_fft), PyTorch's "by_root_n")
    if is_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _F._fft_c2c(frames, (2,), normalization, True)
    else:
        out = _F._fft_r2c(frames, (2,), normalization, sided)
    out.transpose_(1, 2)
    if input.dim() == 1:
        out.squeeze_(0)
    return out if return_complex or return_complex is None else apply(_C.view_as_real, (out,))


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,  # noqa: A002
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """The inverse of ``stft`` (by overlap-add, divided by the window's squared envelope).

    >>> import retrograd as torch
    >>> x = torch.arange(64.0)
    >>> w = torch.hann_window(16)
    >>> y = torch.istft(torch.stft(x, 16, window=w, return_complex=True), 16, window=w, length=64)
    >>> bool((y - x).abs().max() < 1e-3)
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if window is None:
        warn_once(_INVERSE_RECTANGULAR_WARNING, UserWarning, stacklevel=2)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if input._data.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    real_dims = input.dim() + 1  # (PyTorch reads the sizes of view_as_real(input))
    for d in (-2, -3):
        if real_dims < -d:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-real_dims}, {real_dims - 1}], "
                             f"but got {d})")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    where = (f"istft(CPU{_dtype.scalar_type_name(input._data.dtype)}Type{list(input.shape)}, n_fft={n_fft}, "
             f"hop_length={hop}, win_length={win}, window={_window_repr(window)}, center={int(center)}, "
             f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
             f"return_complex={int(return_complex)}) ")
    if input.numel() == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if real_dims not in (3, 4):
        raise RuntimeError(where + f": expected a tensor with 3 or 4 dimensions, but got {real_dims}")
    if not 0 < hop <= win:
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(where + ": Invalid window shape. window has to be 1D and length of `win_length`")
    sided = fft_size != n_fft if onesided is None else bool(onesided)
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {fft_size}")
    batched = input if input.dim() == 3 else input.unsqueeze(0)
    spectra = batched.transpose(1, 2)  # (batch, n_frames, fft_size)
    normalization = 1 if normalized else 2  # the inverse: by 1/sqrt(n_fft) or by 1/n_fft
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _F._fft_c2c(spectra, (2,), normalization, False)
    else:
        if window is not None and window._data.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            spectra = spectra.narrow(-1, 0, n_fft // 2 + 1)
        frames = _F._fft_c2r(spectra, (2,), normalization, n_fft)
    full_window = _padded_window(window, win, n_fft, frames)
    if full_window is None:
        full_window = Tensor._make(np.ones(n_fft, frames._data.real.dtype))
    signal_length = n_fft + hop * (n_frames - 1)
    frames = frames * full_window.view(1, 1, n_fft)
    y = apply(_S.unfold_backward, (frames, (frames.shape[0], signal_length), 1, n_fft, hop))
    envelope = apply(_S.unfold_backward, ((full_window * full_window).expand(1, n_frames, n_fft),
                                          (1, signal_length), 1, n_fft, hop))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = signal_length - n_fft // 2 if center else signal_length
    stop = min(end, signal_length)
    y = y[:, start:stop]
    envelope = envelope[:, start:stop]
    if envelope.numel() and bool(np.abs(envelope._data).min() < 1e-11):
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > signal_length:
        warn_once(_SHORT_SIGNAL_WARNING, UserWarning, stacklevel=2)
        from .ops.nn import constant_pad_nd

        y = apply(constant_pad_nd, (y, (0, end - signal_length), 0))
    return y  # type: ignore[no-any-return]
