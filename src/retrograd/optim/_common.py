"""Checks shared by the optimizers added after the first five (NAdam, RAdam, Adamax, ...): a
1-element tensor ``lr``, and ``capturable=True``, which PyTorch refuses at ``step`` on the CPU."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor

_CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


def _check_lr(lr: Any) -> None:
    """PyTorch's check of a tensor learning rate (before the ``Invalid learning rate`` one)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _lr_value(lr: Any) -> float:
    """A tensor ``lr`` read as a Python number (PyTorch's ``_to_scalar``)."""
    return lr.item() if isinstance(lr, Tensor) else lr  # type: ignore[no-any-return]


def _refuse_capturable(group: dict[str, Any], what: str, devices: str = _CAPTURABLE_DEVICES) -> None:
    """``capturable=True`` graphs the update on an accelerator: on the CPU PyTorch's step fails with
    this assertion (the parameters are on no supported device)."""
    if group.get("capturable"):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")
