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
from .op import Op, apply
from .shape import cat, stack

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
                     inputs=("input_gates", "hidden_gates", "cx"), outputs=3, grads=_fused_lstm_cell_grad,
                     jvp="transpose")


# -- the whole layer as one node ------------------------------------------------------------------
# PyTorch's CPU LSTM on float32 records one ``MkldnnRnnLayerBackward0`` node per layer and
# direction (its ``mkldnn_rnn_layer`` op): the input projection of every step is one matrix
# product, the recurrence runs inside the kernel, and backward accumulates the weight gradients
# as one product over the sequence. This is that op in NumPy: per step one product and a dozen
# in-place ufunc calls on preallocated buffers, no Tensor or node objects inside the loop. The
# workspace (output 3) holds, per step, the activated gates ``[i, f, g, o]``, ``tanh(c_t)`` and
# ``c_t``; its layout is retrograd's own (PyTorch's is oneDNN's).


def _layer_constants(hidden: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """``sigmoid(x) = tanh(x / 2) / 2 + 1 / 2``: one ``tanh`` serves all four gates (NumPy's
    float32 ``tanh`` is cheaper than its ``exp``). Returns the per-column scale (1/2 on the
    sigmoid gates, 1 on the tanh gate) and shift (1/2, resp. 0)."""
    key = ("layer", hidden, dtype)
    value = _CONSTANTS.get(key)
    if value is None:
        scale = np.full(4 * hidden, 0.5, dtype)
        scale[2 * hidden:3 * hidden] = 1
        shift = np.full(4 * hidden, 0.5, dtype)
        shift[2 * hidden:3 * hidden] = 0
        value = np.concatenate([scale, shift])
        value.setflags(write=False)
        _CONSTANTS[key] = value
    return value[:4 * hidden], value[4 * hidden:]


def _layer_views(work: np.ndarray, seq: int, batch: int, hidden: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The workspace's parts: activated gates ``(seq, batch, 4H)``, ``tanh(c)`` and ``c`` ``(seq, batch, H)``."""
    n = seq * batch * hidden
    return (work[:4 * n].reshape(seq, batch, 4 * hidden), work[4 * n:5 * n].reshape(seq, batch, hidden),
            work[5 * n:].reshape(seq, batch, hidden))


def _lstm_layer(input: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray,  # noqa: A002
                b_hh: np.ndarray, hx: np.ndarray, cx: np.ndarray, reverse: bool, batch_sizes: Any, mode: int,
                hidden_size: int, num_layers: int, has_biases: bool, bidirectional: bool, batch_first: bool,
                train: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if input.ndim != 3 or hx.ndim != 2 or cx.ndim != 2:
        raise RuntimeError(f"mkldnn_rnn_layer: expected a 3-D input and 2-D states, got {input.ndim}-D, "
                           f"{hx.ndim}-D and {cx.ndim}-D")
    seq, batch, width = input.shape
    hidden = hidden_size
    gates = 4 * hidden
    if (w_ih.shape != (gates, width) or w_hh.shape != (gates, hidden) or b_ih.shape != (gates,)
            or b_hh.shape != (gates,) or hx.shape != (batch, hidden) or cx.shape != (batch, hidden)):
        raise RuntimeError(f"mkldnn_rnn_layer: shapes do not match an LSTM layer of hidden size {hidden}: input "
                           f"{list(input.shape)}, weights {list(w_ih.shape)}, {list(w_hh.shape)}, {list(b_ih.shape)}, "
                           f"{list(b_hh.shape)}, states {list(hx.shape)}, {list(cx.shape)}")
    dtype = input.dtype
    if any(a.dtype != dtype for a in (w_ih, w_hh, b_ih, b_hh, hx, cx)):
        raise RuntimeError("mkldnn_rnn_layer: expected every tensor to have the input's dtype "
                           f"{dtype}")
    work = np.empty(6 * seq * batch * hidden, dtype)
    act, tanh_c, cell = _layer_views(work, seq, batch, hidden)
    # The input projection of every step at once, the biases folded in; each step then adds its
    # hidden projection and activates the gates in place.
    np.matmul(input.reshape(seq * batch, width), w_ih.T, out=act.reshape(seq * batch, gates))
    act += b_ih + b_hh
    output = np.empty((seq, batch, hidden), dtype)
    scale, shift = _layer_constants(hidden, dtype)
    # tanh's argument, x / 2 on the sigmoid gates, scaled once for the sequence and in the
    # recurrent weights: halving is exact in binary floating point, so this is the same sum.
    act *= scale
    w_hh_t = (w_hh * scale[:, None]).T
    projected = np.empty((batch, gates), dtype)
    scratch = np.empty((batch, hidden), dtype)
    h, c = hx, cx
    for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
        a = act[t]
        np.matmul(h, w_hh_t, out=projected)
        a += projected
        np.tanh(a, out=a)
        a *= scale
        a += shift
        i, f, g, o = a[:, :hidden], a[:, hidden:2 * hidden], a[:, 2 * hidden:3 * hidden], a[:, 3 * hidden:]
        c_t = cell[t]
        np.multiply(f, c, out=c_t)
        np.multiply(i, g, out=scratch)
        c_t += scratch
        tc = tanh_c[t]
        np.tanh(c_t, out=tc)
        h = output[t]
        np.multiply(o, tc, out=h)
        c = c_t
    return output, h.copy(), c.copy(), work


def _lstm_layer_grad(grads: tuple[Tensor, ...], input: Tensor, weight0: Tensor, weight1: Tensor,  # noqa: A002
                     weight2: Tensor, weight3: Tensor, hx_: Tensor, cx_: Tensor, result0: Tensor, result3: Tensor,
                     reverse: bool, needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    if STATE.grad_enabled:
        return _lstm_layer_grad_graph(grads, (input, weight0, weight1, weight2, weight3, hx_, cx_), reverse, needs)
    x, w_ih, w_hh = input._data, weight0._data, weight1._data
    hx, cx = hx_._data, cx_._data
    seq, batch, width = x.shape
    hidden = hx.shape[1]
    act, tanh_c, cell = _layer_views(result3._data, seq, batch, hidden)
    output = result0._data
    gates = 4 * hidden
    # Everything that does not depend on the recurrence, over the whole sequence at once: the
    # activations' derivatives times what multiplies each gate (g, c_{t-1}, i, tanh c_t) ...
    steps = np.empty((seq, batch, gates), x.dtype)  # becomes the gates' gradients, step by step
    # a - a^2 on the sigmoid gates, 1 - g^2 on the tanh gate, with no temporary arrays.
    np.multiply(act, act, out=steps)
    i, f, g, o = (act[..., k * hidden:(k + 1) * hidden] for k in range(4))
    np.subtract(act[..., :2 * hidden], steps[..., :2 * hidden], out=steps[..., :2 * hidden])
    np.subtract(1, steps[..., 2 * hidden:3 * hidden], out=steps[..., 2 * hidden:3 * hidden])
    np.subtract(o, steps[..., 3 * hidden:], out=steps[..., 3 * hidden:])
    steps[..., :hidden] *= g
    c_prev = steps[..., hidden:2 * hidden]
    if reverse:
        c_prev[:-1] *= cell[1:]
        c_prev[-1] *= cx
    else:
        c_prev[1:] *= cell[:-1]
        c_prev[0] *= cx
    steps[..., 2 * hidden:3 * hidden] *= i
    steps[..., 3 * hidden:] *= tanh_c
    # ... and d tanh(c_t) / d c_t times o.
    dtanh = tanh_c * tanh_c
    np.subtract(1, dtanh, out=dtanh)
    dtanh *= o
    grad_out = grads[0]._data
    dh = grads[1]._data.copy()
    dc = grads[2]._data.copy()
    scratch = np.empty((batch, hidden), x.dtype)
    order = range(seq) if reverse else range(seq - 1, -1, -1)
    for t in order:
        dh += grad_out[t]
        np.multiply(dh, dtanh[t], out=scratch)
        dc += scratch
        s = steps[t]
        three = s.reshape(batch, 4, hidden)[:, :3]  # (a view: the i, f, g gates)
        three *= dc[:, None, :]
        s[:, 3 * hidden:] *= dh
        np.matmul(s, w_hh, out=dh)
        dc *= f[t]
    flat = steps.reshape(seq * batch, gates)
    out: list[Tensor | None] = [None] * 7
    if needs[0]:
        out[0] = _make((flat @ w_ih).reshape(seq, batch, width))
    if needs[1]:
        out[1] = _make(flat.T @ x.reshape(seq * batch, width))
    if needs[2]:
        # The weight gradient of the recurrence as one product over the sequence: each step's
        # gate gradients times the hidden state it read (hx for the first step).
        first, rest, prev = (seq - 1, steps[:-1], output[1:]) if reverse else (0, steps[1:], output[:-1])
        grad_w_hh = steps[first].T @ hx
        if seq > 1:
            grad_w_hh += rest.reshape(-1, gates).T @ prev.reshape(-1, hidden)
        out[2] = _make(grad_w_hh)
    if needs[3] or needs[4]:
        grad_b = _make(flat.sum(0))
        out[3] = grad_b if needs[3] else None
        out[4] = grad_b if needs[4] else None
    out[5] = _make(dh) if needs[5] else None
    out[6] = _make(dc) if needs[6] else None
    return tuple(out)


def _lstm_layer_grad_graph(grads: tuple[Tensor, ...], inputs: tuple[Tensor, ...], reverse: bool,
                           needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    """The backward under ``create_graph``: the layer again as its per-step composite (the input
    projection, then ``_thnn_fused_lstm_cell`` per step, whose rules are differentiable), and the
    gradients of that, with a graph. The recomputation gives the forward's values again."""
    from ..autograd import grad as autograd_grad
    from ..autograd.grad_mode import enable_grad

    x, w_ih, w_hh, b_ih, b_hh, hx, cx = inputs
    seq, batch, width = x.shape
    with enable_grad():
        xp = (x.reshape(seq * batch, width).mm(w_ih.t()) + (b_ih + b_hh)).view(seq, batch, w_ih.shape[0]).unbind(0)
        w_hh_t = w_hh.t()
        h, c = hx, cx
        hs: list[Tensor | None] = [None] * seq
        for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
            h, c, _ = apply(fused_lstm_cell, (xp[t], h.mm(w_hh_t), c))
            hs[t] = h
        output = stack(*hs, 0)
        wanted = [t for t, n in zip(inputs, needs) if n]
        found = autograd_grad((output, h, c), wanted, grads[:3], create_graph=True, allow_unused=True)
    it = iter(found)
    return tuple(next(it) if n else None for n in needs)


lstm_layer = Op("mkldnn_rnn_layer", quiet_forward(_lstm_layer), node="MkldnnRnnLayerBackward0",
                inputs=("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"),
                params=("reverse", "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases", "bidirectional",
                        "batch_first", "train"),
                outputs=4, differentiable_outputs=(True, True, True, False), grads=_lstm_layer_grad, jvp="unsupported")
