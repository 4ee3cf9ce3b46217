"""Helpers shared by the distributions (``torch.distributions.utils``)."""
from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

import retrograd as rg


def _finfo(t: Any) -> Any:
    return np.finfo(np.dtype(t.detach().numpy().dtype) if t.is_floating_point() else np.float32)


def broadcast_all(*values: Any) -> tuple[Any, ...]:
    """Turns numbers into tensors (of the first tensor's dtype, else the default) and broadcasts all.

    >>> import retrograd as torch
    >>> [tuple(v.shape) for v in broadcast_all(torch.zeros(2), 1.0)]
    [(2,), (2,)]
    """
    if not all(rg.is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects implementing __torch_function__.")
    if not all(rg.is_tensor(v) for v in values):
        dtype = rg.get_default_dtype()
        for v in values:
            if rg.is_tensor(v):
                dtype = v.dtype
                break
        values = tuple(v if rg.is_tensor(v) else rg.tensor(v, dtype=dtype) for v in values)
    return tuple(rg.broadcast_tensors(*values))


def _standard_normal(shape: Any, dtype: Any) -> Any:
    with rg.no_grad():
        return rg.empty(tuple(shape), dtype=dtype).normal_()


def _sum_rightmost(value: Any, dim: int) -> Any:
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Probabilities from logits: sigmoid when binary, softmax over the last dim otherwise.

    >>> import retrograd as torch
    >>> logits_to_probs(torch.tensor([0.0]), is_binary=True)
    tensor([0.5000])
    """
    if is_binary:
        return rg.sigmoid(logits)
    return rg.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs: Any) -> Any:
    """Clamps probabilities into ``[eps, 1 - eps]`` of their dtype.

    >>> import retrograd as torch
    >>> clamp_probs(torch.tensor([0.5]))
    tensor([0.5000])
    """
    eps = float(_finfo(probs).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """Logits from probabilities (log-odds when binary, log-probabilities otherwise).

    >>> import retrograd as torch
    >>> probs_to_logits(torch.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return rg.log(ps_clamped) - rg.log1p(-ps_clamped)
    return rg.log(ps_clamped)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first access and then cached on the instance."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with rg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def forwarded(holder: str, name: str) -> property:
    """A read-only property that is ``self.<holder>.<name>``: a wrapper's parameters read from the
    distribution it wraps (``RelaxedBernoulli.probs`` is its base distribution's).

    >>> class Wrapper:
    ...     probs = forwarded("inner", "probs")
    ...     def __init__(self, inner): self.inner = inner
    >>> from types import SimpleNamespace
    >>> Wrapper(SimpleNamespace(probs=0.25)).probs
    0.25
    """
    return property(lambda self: getattr(getattr(self, holder), name), doc=f"``self.{holder}.{name}``")
