"""Recurrent ops: the fused LSTM cell that ``nn.LSTM`` runs at each time step.

One node per step instead of ten (chunk, three sigmoids, two tanh, three products, a sum): the
recurrence's cost is its per-step Python work. The op is PyTorch's ``_thnn_fused_lstm_cell``
(its node ``ThnnFusedLstmCellBackward0``; PyTorch runs it on CUDA): the gate pre-activations
come in as the input and hidden projections, and the third output, the workspace, holds the
activated gates ``[i, f, g, o]``. The backward rule is written in retrograd ops on the saved
workspace and cell state, both outputs of the node, so under ``create_graph`` it is itself
differentiable and gradients of every order are exact (the workspace is a differentiable output
here for that reason; PyTorch marks it non-differentiable and has a fused double backward)."""

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
    hidden = cx.shape[1]
    # ``work`` becomes the activated gates in place: sigmoid(x) = 1 / (1 + exp(-x)) as PyTorch
    # computes it (an overflowing exp gives exactly 0), tanh for the cell gate g.
    work = np.add(input_gates, hidden_gates)
    g = np.tanh(work[:, 2 * hidden:3 * hidden])
    np.negative(work, out=work)
    np.exp(work, out=work)
    work += 1
    np.reciprocal(work, out=work)
    work[:, 2 * hidden:3 * hidden] = g
    i, f, o = work[:, :hidden], work[:, hidden:2 * hidden], work[:, 3 * hidden:]
    cy = f * cx
    cy += i * g
    hy = np.tanh(cy)
    hy *= o
    return hy, cy, work


# (1 - a) * (a + _TANH_COLUMNS) is a * (1 - a) on the sigmoid gates and 1 - g^2 on the tanh gate.
_TANH_MASKS: dict[tuple[int, Any], np.ndarray] = {}


def _tanh_columns(hidden: int, dtype: Any) -> Tensor:
    key = (hidden, dtype)
    mask = _TANH_MASKS.get(key)
    if mask is None:
        mask = np.zeros(4 * hidden, dtype)
        mask[2 * hidden:3 * hidden] = 1
        mask.setflags(write=False)
        _TANH_MASKS[key] = mask
    return _make(mask)


def _fused_lstm_cell_grad(grads: tuple[Tensor, Tensor, Tensor], cx: Tensor, result1: Tensor,
                          result2: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    if not STATE.grad_enabled:
        # A plain backward (rules run under no_grad): nothing will differentiate these gradients,
        # so the same formula runs in NumPy, without a dozen ops' bookkeeping per time step.
        return _fused_lstm_cell_grad_arrays(grads, cx, result1, result2)
    grad_hy, grad_cy, grad_work = grads
    i, f, g, o = result2.chunk(4, 1)
    tanh_cy = result1.tanh()
    grad_c = grad_cy + grad_hy * o * (1 - tanh_cy * tanh_cy)
    grad_act = cat(grad_c * g, grad_c * cx, grad_c * i, grad_hy * tanh_cy, 1) + grad_work
    grad_gates = grad_act * ((1 - result2) * (result2 + _tanh_columns(cx.shape[1], cx._data.dtype)))
    return grad_gates, grad_gates, grad_c * f


def _fused_lstm_cell_grad_arrays(grads: tuple[Tensor, Tensor, Tensor], cx: Tensor, result1: Tensor,
                                 result2: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    work = result2._data
    hidden = cx._data.shape[1]
    i, f, g, o = (work[:, k * hidden:(k + 1) * hidden] for k in range(4))
    grad_hy = grads[0]._data
    tanh_cy = np.tanh(result1._data)
    grad_c = 1 - tanh_cy * tanh_cy
    grad_c *= o
    grad_c *= grad_hy
    grad_c += grads[1]._data
    grad_gates = np.empty_like(work)
    np.multiply(grad_c, g, out=grad_gates[:, :hidden])
    np.multiply(grad_c, cx._data, out=grad_gates[:, hidden:2 * hidden])
    np.multiply(grad_c, i, out=grad_gates[:, 2 * hidden:3 * hidden])
    np.multiply(grad_hy, tanh_cy, out=grad_gates[:, 3 * hidden:])
    grad_work = grads[2]._data
    if grad_work.any():  # (the workspace's gradient is zeros unless someone used it)
        grad_gates += grad_work
    grad_gates *= (1 - work) * (work + _tanh_columns(hidden, work.dtype)._data)
    out = _make(grad_gates)
    return out, out, _make(grad_c * f)


fused_lstm_cell = Op("_thnn_fused_lstm_cell", quiet_forward(_fused_lstm_cell), node="ThnnFusedLstmCellBackward0",
                     inputs=("input_gates", "hidden_gates", "cx"), dtype="promote", outputs=3,
                     grads=_fused_lstm_cell_grad)
