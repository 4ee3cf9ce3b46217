"""PyTorch's per-device autocast switches from before ``torch.get_autocast_dtype(device)``
(``torch.get_autocast_cpu_dtype``, ``torch.set_autocast_cpu_enabled``, ...) with their
DeprecationWarnings, and the nesting counter ``torch.autocast_increment_nesting`` /
``autocast_decrement_nesting``. The CPU ones read and set retrograd's CPU autocast state
(``amp.autocast_mode``); the CUDA and XLA ones keep the settings PyTorch keeps for devices that
never run here.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import _dtype
from . import autocast_mode

# The settings of the devices retrograd cannot run autocast on: what PyTorch reports until set.
_OTHER: dict[str, Any] = {"cuda_dtype": None, "xla_dtype": None, "xla_enabled": False}


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _check_dtype(dtype: Any) -> Any:
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
    return dtype


def _check_enabled(enabled: Any) -> bool:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    return enabled


def get_autocast_cpu_dtype() -> Any:
    """Deprecated: ``get_autocast_dtype("cpu")``.

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.get_autocast_cpu_dtype()
    torch.bfloat16
    """
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return autocast_mode.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``.

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_autocast_cpu_dtype(torch.bfloat16)
    """
    _check_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    autocast_mode.set_autocast_dtype("cpu", dtype)


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``.

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_autocast_cpu_enabled(False)
    """
    _check_enabled(enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    autocast_mode.set_autocast_enabled("cpu", enabled)


def get_autocast_gpu_dtype() -> Any:
    """Deprecated: CUDA's autocast dtype (float16 unless set).

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.get_autocast_gpu_dtype()
    torch.float16
    """
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _OTHER["cuda_dtype"] or _dtype.float16


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """Deprecated: set CUDA's autocast dtype (kept; CUDA never runs here).

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_autocast_gpu_dtype(torch.float16)
    """
    _OTHER["cuda_dtype"] = _check_dtype(dtype)
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")


def get_autocast_xla_dtype() -> Any:
    """Deprecated: XLA's autocast dtype (bfloat16 unless set).

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.get_autocast_xla_dtype()
    torch.bfloat16
    """
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return _OTHER["xla_dtype"] or _dtype.load_bfloat16()


def set_autocast_xla_dtype(dtype: Any) -> None:
    """Deprecated: set XLA's autocast dtype (kept; XLA never runs here).

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_autocast_xla_dtype(torch.bfloat16)
    """
    _OTHER["xla_dtype"] = _check_dtype(dtype)
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")


def is_autocast_xla_enabled() -> bool:
    """Deprecated: whether XLA autocast is switched on.

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.is_autocast_xla_enabled()
    False
    """
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return bool(_OTHER["xla_enabled"])


def set_autocast_xla_enabled(enabled: bool) -> None:
    """Deprecated: switch XLA autocast (kept; XLA never runs here).

    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_autocast_xla_enabled(False)
    """
    _OTHER["xla_enabled"] = _check_enabled(enabled)
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")


def autocast_increment_nesting() -> int:
    """One more level of autocast nesting; returns the new depth (what ``autocast.__enter__`` does).

    >>> import retrograd as torch
    >>> torch.autocast_increment_nesting(), torch.autocast_decrement_nesting()
    (1, 0)
    """
    autocast_mode._STATE["nesting"] += 1
    return int(autocast_mode._STATE["nesting"])


def autocast_decrement_nesting() -> int:
    """One level of autocast nesting less; returns the new depth (it may go below 0, as PyTorch's).

    >>> import retrograd as torch
    >>> torch.autocast_increment_nesting(), torch.autocast_decrement_nesting()
    (1, 0)
    """
    autocast_mode._STATE["nesting"] -= 1
    return int(autocast_mode._STATE["nesting"])


NAMES = ("get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "get_autocast_gpu_dtype",
         "set_autocast_gpu_dtype", "get_autocast_xla_dtype", "set_autocast_xla_dtype", "is_autocast_xla_enabled",
         "set_autocast_xla_enabled", "autocast_increment_nesting", "autocast_decrement_nesting")
