"""Checks shared by the optimizers added after the first five (NAdam, RAdam, Adamax, ...): a
1-element tensor ``lr``, and ``capturable=True``, which PyTorch refuses at ``step`` on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np

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


def _plain_scalar(t: Any) -> Any:
    """The array of a 0-d floating state tensor (``step``, ``mu_product``) that a NumPy update may
    write straight into, else None."""
    a = t._data if isinstance(t, Tensor) else None
    if (type(a) is not np.ndarray or a.dtype.kind not in "fV" or a.shape != () or t._is_inference
            or not a.flags.writeable):
        return None
    return a


def _write_into(target: Tensor, out: np.ndarray, values: np.ndarray, name: str) -> None:
    """An in-place op's write of its forward's result (``ops/inplace.py``'s ``_write``) into
    ``target``'s array ``out``, version bump included."""
    np.copyto(out, values, casting="unsafe")
    target._counter().bump(name)


def _lerp_into(target: Tensor, out: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``target.lerp_(end, weight)`` with a number ``weight`` on ``target``'s array ``out``: the
    kernel's form (``ops/elementwise.py``, ``_lerp_values``) with its one branch a scalar weight
    selects for every element, version bump included."""
    w = np.asarray(weight, out.dtype)
    diff = np.subtract(end, out)
    if np.abs(w) < 0.5:
        np.multiply(diff, w, out=diff)
        np.add(out, diff, out=out)
    else:
        np.multiply(diff, 1 - w, out=diff)
        np.subtract(end, diff, out=out)
    target._counter().bump("lerp_")
