"""``torch.accelerator``: the answers PyTorch gives on a machine with no accelerator.

Programs written as ``device = torch.accelerator.current_accelerator() if
torch.accelerator.is_available() else "cpu"`` pick the CPU.

>>> import retrograd as rg
>>> rg.accelerator.is_available(), rg.accelerator.current_accelerator(), rg.accelerator.device_count()
(False, None, 0)
"""

from __future__ import annotations

from typing import Any

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """False: retrograd computes with NumPy on the CPU."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0."""
    return 0


def current_device_index() -> int:
    """Raises PyTorch's RuntimeError: there is no accelerator device.

    >>> import retrograd as rg
    >>> rg.accelerator.current_device_index()
    Traceback (most recent call last):
    RuntimeError: Cannot access accelerator device when none is available.
    """
    raise RuntimeError(_NONE)


current_device_idx = current_device_index


def set_device_index(device: Any) -> None:
    """Raises PyTorch's RuntimeError: there is no accelerator device."""
    raise RuntimeError(_NONE)


set_device_idx = set_device_index


def current_stream(device: Any = None) -> None:
    """Raises PyTorch's RuntimeError: there is no accelerator stream."""
    raise RuntimeError(_NONE)


def synchronize(device: Any = None) -> None:
    """Raises PyTorch's RuntimeError: there is nothing to synchronize with."""
    raise RuntimeError(_NONE)
