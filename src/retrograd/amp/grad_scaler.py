"""``torch.amp.GradScaler``: loss scaling for float16 training, with PyTorch's dynamic scale."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from ..tensor import Tensor

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Scale the loss so small float16 gradients survive, unscale before the step, skip steps with
    inf/NaN gradients and adapt the scale (``backoff_factor`` on overflow, ``growth_factor`` after
    ``growth_interval`` clean steps), as ``torch.amp.GradScaler("cpu")``.

    >>> import retrograd as rg
    >>> scaler = rg.amp.GradScaler("cpu", init_scale=8.0)
    >>> p = rg.nn.Parameter(rg.ones(2)); opt = rg.optim.SGD([p], lr=0.1)
    >>> scaler.scale((p * 2).sum()).backward(); scaler.step(opt); scaler.update()
    >>> p.tolist(), scaler.get_scale()
    ([0.800000011920929, 0.800000011920929], 8.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: float | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def _current(self) -> float:
        if self._scale is None:
            self._scale, self._growth_tracker = float(np.float32(self._init_scale)), self._init_growth_tracker
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * Tensor._make(np.asarray(self._current(), np.float32))
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale in place, noting any inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(np.float32(self._current())))  # (double reciprocal, as PyTorch)
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g._data.dtype == _dtype.float16.np:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                data = g._data
                if not np.isfinite(data).all():
                    found = True
                np.multiply(data, inv_scale.astype(data.dtype), out=data, casting="unsafe")
                g._counter().bump("_amp_foreach_non_finite_check_and_unscale_")
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` on the unscaled gradients, skipped (returning None) if any was inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Back off after an overflow, grow after ``growth_interval`` clean steps (or set ``new_scale``)."""
        if not self._enabled:
            return
        current = self._current()
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad or new_scale.dtype is not _dtype.float32:
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = float(np.float32(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = float(np.float32(current) * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                tracker = (self._growth_tracker or 0) + 1
                if tracker == self._growth_interval:
                    grown = np.float32(current) * np.float32(self._growth_factor)
                    if np.isfinite(grown):
                        self._scale = float(grown)
                    tracker = 0
                self._growth_tracker = tracker
        self._per_optimizer.clear()

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._current() if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict[str, Any]:
        """The scale and its schedule ({} when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        self._current()
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._scale = float(np.float32(state_dict["scale"]))
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        self._growth_tracker = state_dict["_growth_tracker"]
