"""The multi-tensor (``foreach``) updates of SGD and Adam/AdamW: a group's gradients, parameters and
state buffers gathered into one flat array each, the update run once on those (one NumPy call
per operation for the whole group instead of one per parameter), the results written back.

Every operation is the per-parameter path's, in the same order, on the same dtype, so the results
are bitwise those of ``foreach=False``; each tensor gets the version bumps of the in-place ops it
would have seen. Anything the flat form cannot take exactly (mixed dtypes, inference tensors,
parameters or buffers that overlap, Adam's parameters at different step counts, a tensor
hyperparameter) returns False with nothing written, and the caller runs the per-parameter path.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from ..tensor import Tensor
from .optimizer import _number, _plain_arrays

# ``foreach=None`` takes Adam's flat path for groups of parameters of at most this many elements on
# average: there one call per group beats the per-parameter update (which leaves 0-d parameters to
# the tensor ops); above it the gather and write-back copies cost more than the calls they save.
# (Measured, 2 CPUs: 5 scalars 0.4x, 20 of 10 elements 0.8x, 50 of 64x64 1.25x the per-parameter
# time.) SGD's per-parameter NumPy update is already as lean as the flat one (1.1-1.5x slower
# flat), so its ``foreach=None`` keeps PyTorch's choice on the CPU, the per-parameter loop.
ADAM_SMALL = 256


def use_foreach(group: dict[str, Any], params: list[Tensor], small: int = 0) -> bool:
    """Whether ``step`` runs the group's multi-tensor path: ``foreach=True`` asks for it,
    ``foreach=None`` chooses it for two or more parameters of at most ``small`` elements on
    average (the results are the same either way).

    >>> import retrograd as rg
    >>> ps = [rg.nn.Parameter(rg.ones(3)) for _ in range(2)]
    >>> use_foreach({"foreach": None}, ps, small=8), use_foreach({"foreach": None}, ps), use_foreach({"foreach": True}, ps)
    (True, False, True)
    """
    flag = group.get("foreach")
    if flag is None:
        return len(params) > 1 and sum(p._data.size for p in params) <= small * len(params)
    return bool(flag)


def check_not_fused(foreach: Any, fused: Any) -> None:
    """PyTorch's constructor check: the fused and the multi-tensor kernels are alternatives."""
    if foreach and fused:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _group_arrays(params: list[Tensor], *buffers: list[Tensor]) -> list[list[np.ndarray]] | None:
    """Per kind (parameters, gradients, each buffer list) the arrays of every parameter, when the
    flat update may replace the per-parameter one: each parameter's arrays pass ``_plain_arrays``,
    all share one dtype, and nothing written (parameters, buffers) shares memory with anything
    else of the group. Else None."""
    kinds: list[list[np.ndarray]] = [[] for _ in range(2 + len(buffers))]
    dtype = None
    for i, p in enumerate(params):
        arrays = _plain_arrays(p, p._grad, *(b[i] for b in buffers))  # type: ignore[arg-type]
        if arrays is None or (dtype is not None and arrays[0].dtype is not dtype):
            return None
        dtype = arrays[0].dtype
        for kind, a in zip(kinds, arrays, strict=True):
            kind.append(a)
    written = kinds[0] + [a for kind in kinds[2:] for a in kind]
    everything = written + kinds[1]
    if len({id(a) for a in everything}) != len(everything):
        return None  # (a gradient that is another parameter's buffer, or one gradient for two)
    if any(a.base is not None for a in everything):
        # Views: the owners' test of ``_plain_arrays`` cannot rule out overlaps across parameters.
        for i, a in enumerate(written):
            if any(np.may_share_memory(a, b) for b in everything[i + 1:]):
                return None
    return kinds


# Per optimizer, the flat arrays of the last step, reused when the next one has the same sizes:
# a fresh array of a few hundred kB each step would be a fresh mapping, page faults included.
_SCRATCH: weakref.WeakKeyDictionary[Any, dict[tuple[int, int], np.ndarray]] = weakref.WeakKeyDictionary()


def _gather(optimizer: Any, slot: int, arrays: list[np.ndarray]) -> np.ndarray:
    """``arrays`` flattened into one array of the optimizer's own (a copy the update may overwrite)."""
    size = sum(a.size for a in arrays)
    scratch = _SCRATCH.setdefault(optimizer, {})
    key = (slot, size)
    out = scratch.get(key)
    if out is None or out.dtype is not arrays[0].dtype:
        out = scratch[key] = np.empty(size, arrays[0].dtype)
    return np.concatenate([a.reshape(-1) for a in arrays], out=out)


def _scatter(flat: np.ndarray, arrays: list[np.ndarray], tensors: list[Tensor], *ops: str) -> None:
    """Write ``flat`` back into ``arrays`` and bump each tensor's version once per in-place op."""
    start = 0
    for a, t in zip(arrays, tensors, strict=True):
        np.copyto(a, flat[start:start + a.size].reshape(a.shape))
        start += a.size
        counter = t._counter()
        for op in ops:
            counter.bump(op)


def _add_flat(out: np.ndarray, other: np.ndarray, alpha: float = 1) -> None:
    """``_add_into`` (``add_(other, alpha=alpha)``) on a flat array."""
    np.add(out, other if alpha == 1 else np.multiply(other, alpha), out=out)


def sgd_foreach(optimizer: Any, group: dict[str, Any], params: list[Tensor]) -> bool:
    """SGD's update of the group's ``params`` (all with gradients) as one flat update; False, with
    nothing done, when it cannot be exact (see the module docstring)."""
    lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
    weight_decay, nesterov = group["weight_decay"], group["nesterov"]
    if not all(_number(x) for x in (lr, momentum, dampening, weight_decay)):
        return False
    bufs: list[Any] = [optimizer.state[p].get("momentum_buffer") for p in params] if momentum != 0 else []
    fresh = any(b is None for b in bufs)
    if fresh and not all(b is None for b in bufs):
        return False  # some buffers made, some not (parameters that got a gradient late)
    kinds = _group_arrays(params, *([bufs] if bufs and not fresh else []))
    if kinds is None:
        return False
    d_p = _gather(optimizer, 1, kinds[1])
    if group["maximize"]:
        np.negative(d_p, out=d_p)
    data = _gather(optimizer, 0, kinds[0])
    if weight_decay != 0:  # d_p.add(p, alpha=weight_decay)
        np.add(d_p, np.multiply(data, weight_decay) if weight_decay != 1 else data, out=d_p)
    if momentum != 0:
        if fresh:  # buf = d_p.clone(): one array of its own per parameter
            start = 0
            for p in params:
                n = p._data.size
                optimizer.state[p]["momentum_buffer"] = Tensor._make(d_p[start:start + n].reshape(p._data.shape).copy())
                start += n
            buf = d_p
        else:
            buf = _gather(optimizer, 2, kinds[2])
            np.multiply(buf, momentum, out=buf)  # buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
            _add_flat(buf, d_p, 1 - dampening)
            _scatter(buf, kinds[2], bufs, "mul_", "add_")
        if nesterov:  # d_p.add(buf, alpha=momentum)
            d_p = np.add(d_p, buf if momentum == 1 else np.multiply(buf, momentum))
        else:
            d_p = buf
    _add_flat(data, d_p, -lr)  # p.add_(d_p, alpha=-lr)
    _scatter(data, kinds[0], params, "add_")
    return True


def adam_foreach(optimizer: Any, group: dict[str, Any], params: list[Tensor]) -> bool:
    """Adam's (and AdamW's) update of the group's ``params`` as one flat update; False, with
    nothing done, when it cannot be exact (see the module docstring)."""
    beta1, beta2 = group["betas"]
    lr, eps, weight_decay, amsgrad = float(group["lr"]), group["eps"], group["weight_decay"], group["amsgrad"]
    if not all(_number(x) for x in (beta1, beta2, eps, weight_decay)):
        return False
    names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("exp_avg", "exp_avg_sq")
    states = [optimizer._state_at(p, names) for p in params]
    steps: list[Any] = [s["step"]._data if isinstance(s["step"], Tensor) else None for s in states]
    if any(type(a) is not np.ndarray or a.shape != () or a.dtype.kind != "f" or not a.flags.writeable
           or s["step"]._is_inference for a, s in zip(steps, states, strict=True)):
        return False
    if len({a.item() for a in steps}) != 1:
        return False  # parameters at different steps have different bias corrections
    buffers = [[s[name] for s in states] for name in names]
    kinds = _group_arrays(params, *buffers)
    if kinds is None:
        return False
    for a, s in zip(steps, states, strict=True):  # step_t.add_(1)
        np.add(a, 1, out=a)
        s["step"]._counter().bump("add_")
    grad = _gather(optimizer, 1, kinds[1])
    if group["maximize"]:
        np.negative(grad, out=grad)
    data = _gather(optimizer, 0, kinds[0])
    param_ops: tuple[str, ...] = ("add_",)
    if weight_decay != 0:
        if group["decoupled_weight_decay"]:  # p.mul_(1 - lr * weight_decay)
            np.multiply(data, 1 - lr * weight_decay, out=data)
            param_ops = ("mul_", "add_")
        else:  # grad.add(p, alpha=weight_decay)
            np.add(grad, np.multiply(data, weight_decay) if weight_decay != 1 else data, out=grad)
    m = _gather(optimizer, 2, kinds[2])
    _add_flat(m, np.subtract(grad, m), 1 - beta1)  # exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
    v = _gather(optimizer, 3, kinds[3])
    np.multiply(v, beta2, out=v)  # exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
    _add_flat(v, np.multiply(grad, grad), 1 - beta2)
    step = steps[0].item()
    bias_correction1 = 1 - beta1**step
    bias_correction2_sqrt = math.sqrt(1 - beta2**step)
    step_size = lr / bias_correction1
    if amsgrad:  # max_sq.copy_(maximum(max_sq, exp_avg_sq))
        top = _gather(optimizer, 4, kinds[4])
        np.maximum(top, v, out=top)
        denom = np.true_divide(np.sqrt(top), bias_correction2_sqrt)
        _scatter(top, kinds[4], buffers[2], "copy_")
    else:
        denom = np.true_divide(np.sqrt(v), bias_correction2_sqrt)
    np.add(denom, eps, out=denom)  # (... / bias_correction2_sqrt).add_(eps)
    _add_flat(data, np.true_divide(m, denom), -step_size)  # p.add_(exp_avg / denom, alpha=-step_size)
    _scatter(m, kinds[2], buffers[0], "add_")
    _scatter(v, kinds[3], buffers[1], "mul_", "add_")
    _scatter(data, kinds[0], params, *param_ops)
    return True
