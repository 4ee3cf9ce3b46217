"""Recurrent ops: the fused LSTM cell that ``nn.LSTM`` runs at each time step.

One node per step instead of ten (chunk, three sigmoids, two tanh, three products, a sum): the
recurrence's cost is its per-step work. The op is PyTorch's ``_thnn_fused_lstm_cell`` (its node
``ThnnFusedLstmCellBackward0``; PyTorch runs it on CUDA): the gate pre-activations come in as the
input and hidden projections, and the third output, the workspace, holds the activated gates
``[i, f, g, o]`` and ``tanh(cy)``. The backward rule reads only the node's own input ``cx`` and
its workspace output; under ``create_graph`` it is written in retrograd ops, so it is itself
differentiable and gradients of every order are exact (the workspace is a differentiable output
here for that reason; PyTorch marks it non-differentiable and has a fused double backward). A
plain backward runs the same formula in NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.fp_errors import quiet_forward
from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from .op import Op
from .shape import cat

_make = Tensor._make


def _fused_lstm_cell(input_gates: np.ndarray, hidden_gates: np.ndarray,
                     cx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if input_gates.shape != hidden_gates.shape or input_gates.ndim != 2 or cx.ndim != 2 \
            or input_gates.shape != (cx.shape[0], 4 * cx.shape[1]):
        raise RuntimeError(f"_thnn_fused_lstm_cell: expected gates of shape [{cx.shape[0]}, {4 * cx.shape[-1]}] and "
                           f"cx of shape [{cx.shape[0]}, {cx.shape[-1]}], got {list(input_gates.shape)}, "
                           f"{list(hidden_gates.shape)} and {list(cx.shape)}")
    if not input_gates.dtype == hidden_gates.dtype == cx.dtype:
        raise RuntimeError(f"_thnn_fused_lstm_cell: expected one dtype, got {input_gates.dtype}, "
                           f"{hidden_gates.dtype} and {cx.dtype}")
    hidden = cx.shape[1]
    # One exp serves all four gates: sigmoid(x) is 1 / (1 + exp(-x)), as PyTorch computes it (an
    # overflowing exp gives exactly 0), and tanh(x) = 2 sigmoid(2x) - 1 (NumPy's tanh costs
    # about two exps).
    work = np.empty((cx.shape[0], 5 * hidden), cx.dtype)
    act = work[:, :4 * hidden]
    np.add(input_gates, hidden_gates, out=act)
    act *= _constant("scale", hidden, cx.dtype)
    np.exp(act, out=act)
    act += 1
    np.reciprocal(act, out=act)
    g = act[:, 2 * hidden:3 * hidden]
    g *= 2
    g -= 1
    i, f, o = act[:, :hidden], act[:, hidden:2 * hidden], act[:, 3 * hidden:]
    cy = f * cx
    cy += i * g
    tanh_cy = work[:, 4 * hidden:]
    np.multiply(cy, -2, out=tanh_cy)
    np.exp(tanh_cy, out=tanh_cy)
    tanh_cy += 1
    np.reciprocal(tanh_cy, out=tanh_cy)
    tanh_cy *= 2
    tanh_cy -= 1
    return o * tanh_cy, cy, work


_CONSTANTS: dict[tuple[str, int, Any], np.ndarray] = {}


def _constant(kind: str, hidden: int, dtype: Any) -> np.ndarray:
    """Per-column constants over the four gates: ``scale`` is -1 on the sigmoid gates and -2 on
    the tanh gate (what ``exp`` is applied to, times the gates); ``tanh`` is 1 on the tanh gate."""
    key = (kind, hidden, dtype)
    value = _CONSTANTS.get(key)
    if value is None:
        value = np.full(4 * hidden, -1 if kind == "scale" else 0, dtype)
        value[2 * hidden:3 * hidden] = -2 if kind == "scale" else 1
        value.setflags(write=False)
        _CONSTANTS[key] = value
    return value


def _fused_lstm_cell_grad(grads: tuple[Tensor, Tensor, Tensor], cx: Tensor, result2: Tensor) -> tuple[Tensor, ...]:
    if not STATE.grad_enabled:
        # A plain backward (rules run under no_grad): nothing will differentiate these gradients,
        # so the same formula runs in NumPy, without a dozen ops' bookkeeping per time step.
        return _fused_lstm_cell_grad_arrays(grads, cx, result2)
    grad_hy, grad_cy, grad_work = grads
    hidden = cx.shape[1]
    i, f, g, o, tanh_cy = result2.chunk(5, 1)
    grad_act, grad_tanh_cy = grad_work.split([4 * hidden, hidden], 1)
    grad_c = grad_cy + (grad_hy * o + grad_tanh_cy) * (1 - tanh_cy * tanh_cy)
    grad_act = cat(grad_c * g, grad_c * cx, grad_c * i, grad_hy * tanh_cy, 1) + grad_act
    # (1 - a) * (a + [0, 0, 1, 0]) is a * (1 - a) on the sigmoid gates and 1 - g^2 on the tanh gate.
    act = result2.narrow(1, 0, 4 * hidden)
    grad_gates = grad_act * ((1 - act) * (act + _make(_constant("tanh", hidden, cx._data.dtype))))
    return grad_gates, grad_gates, grad_c * f


def _fused_lstm_cell_grad_arrays(grads: tuple[Tensor, Tensor, Tensor], cx: Tensor,
                                 result2: Tensor) -> tuple[Tensor, ...]:
    work = result2._data
    hidden = cx._data.shape[1]
    i, f, g, o, tanh_cy = (work[:, k * hidden:(k + 1) * hidden] for k in range(5))
    act = work[:, :4 * hidden]
    grad_hy = grads[0]._data
    grad_work = grads[2]._data
    used = grad_work.any()  # (the workspace's gradient is zeros unless someone used the workspace)
    grad_c = grad_hy * o
    if used:
        grad_c += grad_work[:, 4 * hidden:]
    grad_c *= 1 - tanh_cy * tanh_cy
    grad_c += grads[1]._data
    grad_gates = np.empty_like(act)
    np.multiply(grad_c, g, out=grad_gates[:, :hidden])
    np.multiply(grad_c, cx._data, out=grad_gates[:, hidden:2 * hidden])
    np.multiply(grad_c, i, out=grad_gates[:, 2 * hidden:3 * hidden])
    np.multiply(grad_hy, tanh_cy, out=grad_gates[:, 3 * hidden:])
    if used:
        grad_gates += grad_work[:, :4 * hidden]
    grad_gates *= (1 - act) * (act + _constant("tanh", hidden, act.dtype))
    out = _make(grad_gates)
    return out, out, _make(grad_c * f)


fused_lstm_cell = Op("_thnn_fused_lstm_cell", quiet_forward(_fused_lstm_cell), node="ThnnFusedLstmCellBackward0",
                     inputs=("input_gates", "hidden_gates", "cx"), outputs=3, grads=_fused_lstm_cell_grad)
