"""Backward rules that the trace records as one NumPy call of their own.

The backward graph is traced by running each node's own rule on retrograd ops. A rule that builds
an array from data outside the ops (a coefficient array filled from the target's class indices,
as ``nll_loss``'s rule does) cannot be recorded that way: the array would be a stale copy of this
trace's values, so it is a graph break. For the common cases of such rules this module records
instead one call of a NumPy function that computes the rule's result from the graph's values, the
same values as the eager rule (the kernel's steps, in its dtype and order); anything else keeps
the rule (and so its break).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import nn as _nn
from ..tensor import Tensor
from .graph import Call

__all__ = ["lower_backward", "nll_loss_backward"]

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
