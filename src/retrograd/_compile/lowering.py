"""Backward rules that the trace records as one NumPy call of their own, and fused forwards.

The backward graph is traced by running each node's own rule on retrograd ops. A rule that builds
an array from data outside the ops (a coefficient array filled from the target's class indices,
as ``nll_loss``'s rule does) cannot be recorded that way: the array would be a stale copy of this
trace's values, so it is a graph break. For the common cases of such rules this module records
instead one call of a NumPy function that computes the rule's result from the graph's values, the
same values as the eager rule (the kernel's steps, in its dtype and order); anything else keeps
the rule (and so its break).

``fuse_forward`` does for the forward graph what eager ``cross_entropy`` does: ``log_softmax``
followed by a plain ``nll_loss`` of it becomes one pass (``ops/nn.log_softmax_nll``), with the
same values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import nn as _nn
from ..tensor import Tensor
from .graph import Call, Graph, ParamRef

__all__ = ["fuse_forward", "log_softmax_nll", "lower_backward", "nll_loss_backward"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def nll_loss_backward(grad: np.ndarray, target: np.ndarray, rows: np.ndarray, scale: np.ndarray,
                      classes: int) -> np.ndarray:
    """The gradient of a mean or sum ``nll_loss`` of (N, C) scores without class weights, whose
    forward checked every target in [0, C): ``grad * scale`` at each row's target class, zeros
    elsewhere, as eager's rule fills it (``ops/nn._nll_loss_grad_plain``). ``rows`` is
    ``arange(N)``, ``scale`` -1/N (mean) or -1 (sum) as a 0-d array of the scores' dtype."""
    coeff = np.zeros((len(rows), classes), scale.dtype)
    coeff[rows, target] = grad * scale
    return coeff


def lower_backward(tracer: Any, node: Any, grads: list[Any]) -> tuple[Tensor, ...] | None:
    """The node's input gradients, recorded into the tracer's current graph as one call; None to
    run (and trace) the node's own rule."""
    if getattr(type(node), "_op", None) is not _nn.nll_loss:
        return None
    target, weight, reduction, ignore_index = node._params
    (shape, dtype), = node._input_meta
    grad = grads[0]
    if weight is not None or reduction not in ("mean", "sum") or len(shape) != 2 or np.dtype(dtype) not in _FLOATS:
        return None
    n, classes = shape
    if 0 <= ignore_index < classes or not isinstance(grad, Tensor) or grad._data.shape != () \
            or grad._data.dtype != dtype or type(target) is not tuple or not isinstance(target[0], Tensor):
        return None
    target_tensor = target[0]
    t = target_tensor._data
    if t.shape != (n,) or t.dtype != np.int64 or not n or np.maximum.reduce(t.view(np.uint64)) >= classes:
        return None  # (the general rule's own checks and errors)
    grad_ref = tracer.resolve(grad, "nll_loss_backward")
    target_ref = tracer.resolve(target_tensor, "nll_loss_backward")
    if not isinstance(grad_ref, int) or not isinstance(target_ref, int):
        return None
    scale = np.asarray(-1.0 / n if reduction == "mean" else -1.0, dtype)
    scale.flags.writeable = False
    rows = _nn._rows(n)
    result = nll_loss_backward(grad._data, t, rows, scale, classes)
    graph = tracer.graph
    out = graph.new_value(result)
    tracer.values[id(result)] = out
    tracer.keep.append(result)
    graph.calls.append(Call(nll_loss_backward, "nll_loss_backward", [grad_ref, target_ref], (rows, scale, classes),
                            [out], False))
    return (Tensor._make(result),)


def log_softmax_nll(x: np.ndarray, target: np.ndarray, reduction: str, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """``log_softmax(x, 1)`` and the mean or sum ``nll_loss`` of it (no class weights, no class
    ignored), as eager ``cross_entropy`` computes them: one pass (``ops/nn._log_softmax_nll``)
    when every target is in range, else the two kernels, which raise their errors."""
    fused = _nn._log_softmax_nll(x, Tensor._make(target), reduction)
    if fused is not None:
        return fused
    logp = _nn._log_softmax(x, 1)
    return logp, np.asarray(_nn._nll_loss(logp, target, None, reduction, ignore_index))


def fuse_forward(graph: Graph) -> None:
    """Replace, in place, each ``log_softmax(v, 1)`` of (N, C) float32/float64 scores whose next
    reader is a mean or sum ``nll_loss`` of it (an (N,) int64 target made before the
    ``log_softmax``, no class weights, no class ignored) by one ``log_softmax_nll`` call giving both
    values."""
    calls = graph.calls
    made_at = {o: i for i, c in enumerate(calls) for o in c.outs}
    drop: set[int] = set()
    for i, c in enumerate(calls):
        if c.fn is not _nn.log_softmax.forward or c.casts or c.params != (1,) or not isinstance(c.args[0], int):
            continue
        shape, dtype = graph.meta[c.args[0]]
        if len(shape) != 2 or dtype is None or np.dtype(dtype) not in _FLOATS:
            continue
        logp = c.outs[0]
        j = next((k for k in range(i + 1, len(calls)) if logp in calls[k].args), None)
        if j is None:
            continue
        nll = calls[j]
        if nll.fn is not _nn.nll_loss.forward or nll.casts or nll.args != [logp] or len(nll.params) != 4:
            continue
        target, weight, reduction, ignore_index = nll.params
        if type(target) is not ParamRef or weight is not None or reduction not in ("mean", "sum") \
                or type(ignore_index) is not int or 0 <= ignore_index < shape[1] \
                or graph.meta[target.v] != ((shape[0],), np.dtype(np.int64)) or made_at.get(target.v, -1) >= i:
            continue
        calls[i] = Call(log_softmax_nll, "cross_entropy (log_softmax, nll_loss)", [c.args[0], target.v],
                        (reduction, ignore_index), [logp, nll.outs[0]], True)
        drop.add(j)
    if drop:
        graph.calls = [c for k, c in enumerate(calls) if k not in drop]
