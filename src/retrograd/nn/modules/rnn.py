"""Recurrent layers: ``RNNBase``, ``RNN``, ``LSTM``, ``GRU`` and the cells ``RNNCellBase``,
``RNNCell``, ``LSTMCell``, ``GRUCell``, with PyTorch's parameters, shapes and checks.

The recurrence is written in retrograd's ops, so gradients of every order come from the ops'
own rules. What costs is the Python work per time step, so a layer does the input projection of
all time steps as one matrix product (``x @ W_ih^T + b_ih + b_hh`` for the whole sequence), and
each step is one ``addmm`` for the hidden projection and a handful of elementwise nodes on
slices of the gates. Padded input runs as a packed sequence whose batch never shrinks, so packed
and padded input share one loop."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ... import factories
from ..._dtype import scalar_type_name
from ..._functions import cat, stack
from ...ops.op import apply
from ...ops.rnn import fused_lstm_cell, lstm_layer
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_FLOAT32 = np.dtype(np.float32)


def _step_lstm(xp: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, w_hr_t: Tensor | None) -> tuple[Tensor, Tensor]:
    # ``xp`` already holds x @ W_ih^T + b_ih + b_hh for this step; the gates are one fused node.
    h, c, _ = apply(fused_lstm_cell, (xp, h.mm(w_hh_t), c))
    if w_hr_t is not None:
        h = h.mm(w_hr_t)
    return h, c


def _step_gru(xp: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
    # ``xp`` holds x @ W_ih^T + b_ih; b_hh stays inside r * (W_hn h + b_hn), as PyTorch has it.
    hg = h.mm(w_hh_t) if b_hh is None else b_hh.addmm(h, w_hh_t)
    x_rz, x_n = xp.split([2 * h.shape[1], h.shape[1]], 1)
    h_rz, h_n = hg.split([2 * h.shape[1], h.shape[1]], 1)
    r, z = (x_rz + h_rz).sigmoid().chunk(2, 1)
    n = (x_n + r * h_n).tanh()
    return n + z * (h - n)


def _step_rnn(xp: Tensor, h: Tensor, w_hh_t: Tensor, relu: bool) -> Tensor:
    pre = xp.addmm(h, w_hh_t)
    return pre.relu() if relu else pre.tanh()


def _run_direction(mode: str, data: Tensor, batch_sizes: list[int], uniform: bool, weights: list[Tensor],
                   has_bias: bool, has_proj: bool, h0: Tensor, c0: Tensor | None,
                   reverse: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """One layer, one direction over packed ``data`` (rows of step 0, then step 1, ...): the
    outputs (packed like ``data``), the last hidden state of each sequence and (LSTM) its cell."""
    if mode == "LSTM" and uniform and not has_proj and c0 is not None and _one_layer_node(data, weights, h0, c0):
        return _lstm_layer(data, batch_sizes, weights, has_bias, h0, c0, reverse)
    if data.dim() == 3:  # the output of a layer that ran as one node
        data = data.reshape(-1, data.shape[2])
    w_ih, w_hh = weights[0], weights[1]
    b_ih = weights[2] if has_bias else None
    b_hh = weights[3] if has_bias else None
    w_hr_t = weights[-1].t() if has_proj else None
    if mode == "GRU":
        xproj = F.linear(data, w_ih, b_ih)
    else:
        xproj = F.linear(data, w_ih, None if b_ih is None else b_ih + b_hh)
    if uniform:
        steps = xproj.view(len(batch_sizes), batch_sizes[0], xproj.shape[1]).unbind(0)
    else:
        steps = xproj.split(batch_sizes, 0)
    w_hh_t = w_hh.t()
    relu = mode == "RNN_RELU"
    outputs: list[Tensor | None] = [None] * len(batch_sizes)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    h: Tensor = h0
    c: Tensor | None = c0
    done_h: list[Tensor] = []
    done_c: list[Tensor] = []
    if reverse and not uniform:
        h = h0[:batch_sizes[-1]]
        c = None if c0 is None else c0[:batch_sizes[-1]]
    for t in order:
        if not uniform:
            b = batch_sizes[t]
            rows = h.shape[0]
            if b < rows:  # forward: sequences b.. have ended; keep their final state
                done_h.append(h[b:])
                h = h[:b]
                if c is not None:
                    done_c.append(c[b:])
                    c = c[:b]
            elif b > rows:  # reverse: sequences rows..b start here, from their initial state
                h = cat([h, h0[rows:b]])
                if c is not None and c0 is not None:
                    c = cat([c, c0[rows:b]])
        if mode == "LSTM":
            assert c is not None
            h, c = _step_lstm(steps[t], h, c, w_hh_t, w_hr_t)
        elif mode == "GRU":
            h = _step_gru(steps[t], h, w_hh_t, b_hh)
        else:
            h = _step_rnn(steps[t], h, w_hh_t, relu)
        outputs[t] = h
    if done_h:
        h = cat([h, *reversed(done_h)])
        if c is not None:
            c = cat([c, *reversed(done_c)])
    outs = [o for o in outputs if o is not None]
    out = stack(outs) if uniform else cat(outs)  # (steps, batch, hidden) unpacked, as PyTorch's StackBackward0
    return out, h, c


def _one_layer_node(data: Tensor, weights: list[Tensor], h0: Tensor, c0: Tensor) -> bool:
    """Where PyTorch's CPU LSTM runs its oneDNN layer kernel (one ``MkldnnRnnLayerBackward0``
    node per layer and direction): float32 throughout, no projection, unpacked, not empty."""
    f32 = _FLOAT32
    return (data._data.dtype == f32 and h0._data.dtype == f32 and c0._data.dtype == f32 and data._data.size != 0
            and all(w._data.dtype == f32 for w in weights))


def _lstm_layer(data: Tensor, batch_sizes: list[int], weights: list[Tensor], has_bias: bool, h0: Tensor, c0: Tensor,
                reverse: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM layer and direction as one node (``ops/rnn.lstm_layer``): the outputs
    ``(steps, batch, hidden)`` (the node's own output, as PyTorch's ``grad_fn``), ``h_n`` and ``c_n``."""
    w_ih, w_hh = weights[0], weights[1]
    if has_bias:
        b_ih, b_hh = weights[2], weights[3]
    else:  # PyTorch passes zero biases to its kernel
        b_ih = b_hh = factories.zeros(w_ih.shape[0], dtype=w_ih.dtype)
    hidden = w_hh.shape[1]
    x = data if data.dim() == 3 else data.view(len(batch_sizes), batch_sizes[0], data.shape[1])
    if not x.is_contiguous():  # (batch_first input, time-major now: PyTorch's kernel copies it too)
        x = x.contiguous()
    out, h, c, _ = apply(lstm_layer, (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, [], 2, hidden, 1, has_bias,
                                      False, False, True))
    return out, h, c


def _recurrence(mode: str, input: Tensor, batch_sizes: Tensor | None, hx: Tensor, cx: Tensor | None,  # noqa: A002
                weights: list[Tensor], has_biases: bool, has_proj: bool, num_layers: int, dropout: float, train: bool,
                bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """Every layer and direction over ``input`` (padded, or packed data when ``batch_sizes`` is
    given) from the stacked initial states; ``weights`` is PyTorch's flat parameter list."""
    if batch_sizes is None:
        if batch_first:
            input = input.transpose(0, 1)  # noqa: A001
        steps, batch = input.shape[0], input.shape[1]
        sizes = [batch] * steps
        data = input.reshape(steps * batch, input.shape[2])
        if mode == "LSTM" and not has_proj and input._data.dtype == _FLOAT32:
            data = input  # (as it is: one node per layer takes the 3-D input, see _one_layer_node)
        uniform = True
    else:
        sizes = [int(b) for b in batch_sizes.tolist()]
        data = input
        uniform = False
    num_directions = 2 if bidirectional else 1
    per_layer = (4 if has_biases else 2) + (1 if has_proj else 0)
    if len(weights) != per_layer * num_layers * num_directions:
        raise RuntimeError("got an incorrect number of RNN parameters")
    h_n: list[Tensor] = []
    c_n: list[Tensor] = []
    layer_input = data
    for layer in range(num_layers):
        outs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            out, h, c = _run_direction(mode, layer_input, sizes, uniform, weights[k * per_layer:(k + 1) * per_layer],
                                       has_biases, has_proj, hx[k], None if cx is None else cx[k],
                                       reverse=direction == 1)
            outs.append(out)
            h_n.append(h)
            if c is not None:
                c_n.append(c)
        layer_input = outs[0] if num_directions == 1 else cat(outs, outs[0].dim() - 1)
        if dropout and train and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    output = layer_input
    if batch_sizes is None:
        if batch_first:  # (PyTorch's GRU and RNN kernels transpose in place: TransposeBackward1)
            output = output.transpose(0, 1) if mode == "LSTM" else output.transpose_(0, 1)  # type: ignore[attr-defined]
    return output, stack(h_n), stack(c_n) if c_n else None


def _functional(mode: str, args: tuple[Any, ...], lstm: bool) -> tuple[Tensor, ...]:
    """``torch.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu``: ``(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)``, or for packed data ``(data,
    batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``."""
    packed = isinstance(args[1], Tensor) and (lstm or isinstance(args[2], Tensor))
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        batch_sizes = None
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    # PyTorch's LSTM has projections when the hidden and cell states differ in size.
    has_proj = lstm and c0 is not None and h0.size(2) != c0.size(2)
    output, h_n, c_n = _recurrence(mode, data, batch_sizes, h0, c0, list(params), bool(has_biases), has_proj,
                                   int(num_layers), float(dropout), bool(train), bool(bidirectional),
                                   bool(batch_first))
    if lstm:
        assert c_n is not None
        return output, h_n, c_n
    return output, h_n


def lstm(*args: Any) -> tuple[Tensor, Tensor, Tensor]:
    """PyTorch's functional LSTM (what ``nn.LSTM`` calls): ``(output, h_n, c_n)``.

    >>> import retrograd as rg
    >>> m = rg.nn.LSTM(2, 3)
    >>> out, h, c = rg.lstm(rg.zeros(4, 1, 2), (rg.zeros(1, 1, 3), rg.zeros(1, 1, 3)), m._flat_weights,
    ...                     True, 1, 0.0, False, False, False)
    >>> out.shape, h.shape
    (torch.Size([4, 1, 3]), torch.Size([1, 1, 3]))
    """
    return _functional("LSTM", args, lstm=True)  # type: ignore[return-value]


def gru(*args: Any) -> tuple[Tensor, Tensor]:
    """PyTorch's functional GRU (what ``nn.GRU`` calls): ``(output, h_n)``; arguments as ``lstm``
    with one initial state tensor."""
    return _functional("GRU", args, lstm=False)  # type: ignore[return-value]


def rnn_tanh(*args: Any) -> tuple[Tensor, Tensor]:
    """PyTorch's functional Elman RNN with tanh (what ``nn.RNN`` calls): ``(output, h_n)``."""
    return _functional("RNN_TANH", args, lstm=False)  # type: ignore[return-value]


def rnn_relu(*args: Any) -> tuple[Tensor, Tensor]:
    """PyTorch's functional Elman RNN with ReLU: ``(output, h_n)``."""
    return _functional("RNN_RELU", args, lstm=False)  # type: ignore[return-value]


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The machinery shared by ``RNN``, ``LSTM`` and ``GRU`` (``mode`` is
    ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``): PyTorch's parameters
    (``weight_ih_l{k}[_reverse]``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}``) and checks.

    >>> import retrograd as rg
    >>> m = rg.nn.RNNBase('GRU', 3, 4, num_layers=2, bidirectional=True)
    >>> m._flat_weights_names[:4], m.weight_ih_l1_reverse.shape
    (['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'], torch.Size([12, 8]))
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):  # type: ignore[operator]
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                shapes: list[tuple[str, tuple[int, ...]]] = [("weight_ih_l{}{}", (gate_size, layer_input)),
                                                              ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(factories.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN only (a no-op on
        the CPU there too)."""

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- PyTorch's checks -------------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:  # noqa: A002
        weight = self._flat_weights[0]
        assert weight is not None
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:  # noqa: A002
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        return hx if permutation is None else _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- the recurrence ---------------------------------------------------------------------------

    def _run(self, input: Tensor, batch_sizes: Tensor | None, hx: Tensor,  # noqa: A002
             cx: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
        """All layers over ``input`` (time-major padded, or packed data when ``batch_sizes`` is
        given) from ``hx`` (and ``cx``): output, ``h_n``, ``c_n``."""
        return _recurrence(self.mode, input, batch_sizes, hx, cx, self._flat_weights,  # type: ignore[arg-type]
                           self.bias, self.proj_size > 0, self.num_layers, self.dropout, self.training,
                           self.bidirectional, self.batch_first)

    def _prepare(self, input: Any, hx: Any, name: str, lstm: bool) -> tuple[Any, ...]:  # noqa: A002
        """PyTorch's argument handling: unpack a ``PackedSequence``, add the batch dimension of
        unbatched input, make zero initial states, check the shapes, apply the sort order."""
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        is_batched = True
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch = int(batch_sizes[0])
        else:
            data, batch_sizes, sorted_indices, unsorted_indices = input, None, None, None
            if input.dim() not in (2, 3):
                tail = " tensor instead" if name == "RNN" else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
            is_batched = input.dim() == 3
            if not is_batched:
                data = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                if lstm:
                    want = 3 if is_batched else 2
                    if hx[0].dim() != want or hx[1].dim() != want:
                        kind = "batched 3-D" if is_batched else "unbatched 2-D"
                        raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    if not is_batched:
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                elif not is_batched:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
                elif hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            max_batch = data.size(0) if self.batch_first else data.size(1)
        if hx is None:
            shape = (self.num_layers * num_directions, max_batch)
            zeros_h = factories.zeros(*shape, real_hidden, dtype=data.dtype)
            hx = (zeros_h, factories.zeros(*shape, self.hidden_size, dtype=data.dtype)) if lstm else zeros_h
        elif sorted_indices is not None:
            hx = self.permute_hidden(hx, sorted_indices)  # type: ignore[arg-type]
        if lstm and batch_sizes is not None:
            self._check_packed_lstm(data, hx, max_batch)
        else:
            self.check_forward_args(data, hx, batch_sizes)
        return data, batch_sizes, sorted_indices, unsorted_indices, is_batched, hx

    def _check_packed_lstm(self, data: Tensor, hx: Any, max_batch: int) -> None:
        """PyTorch's LSTM runs no Python checks on packed input: a wrong input fails in the input
        projection's matrix product, a wrong batch of the initial state in a broadcast; those
        messages are PyTorch's. Other wrong states get the padded input's message (PyTorch's
        kernel reports them in its own words)."""
        weight = self._flat_weights[0]
        assert weight is not None
        if data.dtype != weight.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(data._data.dtype)} "
                               f"and {scalar_type_name(weight._data.dtype)}")
        if data.dim() < 1 or data.size(-1) != self.input_size:
            rows = data.numel() // data.size(-1) if data.dim() and data.size(-1) else 0
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{data.size(-1)} and "
                               f"{self.input_size}x{weight.shape[0]})")
        h, c = hx
        if h.dim() == 3 and h.size(1) != max_batch:
            raise RuntimeError(f"The size of tensor a ({h.size(1)}) must match the size of tensor b ({max_batch}) "
                               "at non-singleton dimension 0")
        if c.dim() == 3 and c.size(1) != max_batch:
            raise RuntimeError(f"The size of tensor a ({max_batch}) must match the size of tensor b ({c.size(1)}) "
                               "at non-singleton dimension 0")
        self.check_forward_args(data, hx, factories.tensor([max_batch]))

    def _finish(self, input: Any, output: Tensor, is_batched: bool, batch_sizes: Tensor | None,  # noqa: A002
                sorted_indices: Tensor | None, unsorted_indices: Tensor | None) -> Any:
        if isinstance(input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1)
        return output

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        """``(output, h_n)``; see ``RNN`` and ``GRU`` (``LSTM`` has its own)."""
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        data, batch_sizes, sorted_idx, unsorted_idx, is_batched, hx = self._prepare(input, hx, name, lstm=False)
        output, h_n, _ = self._run(data, batch_sizes, hx, None)
        output = self._finish(input, output, is_batched, batch_sizes, sorted_idx, unsorted_idx)
        if not is_batched:
            h_n = h_n.squeeze(1)
        return output, self.permute_hidden(h_n, unsorted_idx)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``nonlinearity='relu'``
    for ReLU), stacked ``num_layers`` deep, optionally bidirectional.

    >>> import retrograd as rg
    >>> rnn = rg.nn.RNN(10, 20, 2)
    >>> output, h_n = rnn(rg.randn(5, 3, 10), rg.randn(2, 3, 20))
    >>> output.shape, h_n.shape
    (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` from ``x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh``,
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (projected by ``weight_hr`` when
    ``proj_size > 0``). Returns ``(output, (h_n, c_n))``.

    >>> import retrograd as rg
    >>> lstm = rg.nn.LSTM(10, 20, 2, proj_size=5)
    >>> output, (h_n, c_n) = lstm(rg.randn(5, 3, 10))
    >>> output.shape, h_n.shape, c_n.shape
    (torch.Size([5, 3, 5]), torch.Size([2, 3, 5]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:  # noqa: A002
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        """``(output, (h_n, c_n))``."""
        data, batch_sizes, sorted_idx, unsorted_idx, is_batched, hx = self._prepare(input, hx, "LSTM", lstm=True)
        output, h_n, c_n = self._run(data, batch_sizes, hx[0], hx[1])
        assert c_n is not None
        output = self._finish(input, output, is_batched, batch_sizes, sorted_idx, unsorted_idx)
        if not is_batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, self.permute_hidden((h_n, c_n), unsorted_idx)


class GRU(RNNBase):
    """Gated recurrent unit: ``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h_t = (1 - z) * n + z * h_{t-1}``.

    >>> import retrograd as rg
    >>> gru = rg.nn.GRU(10, 20, batch_first=True, bidirectional=True)
    >>> output, h_n = gru(rg.randn(3, 5, 10))
    >>> output.shape, h_n.shape
    (torch.Size([3, 5, 40]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# -- cells ----------------------------------------------------------------------------------------


def _check_cell(name: str, input: Tensor, hx: Tensor, index: int, hidden_size: int, input_size: int) -> None:  # noqa: A002
    # ATen's checks of the cell functions, in its order and words.
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {input_size}")
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{index} batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}")


class RNNCellBase(Module):
    """The parameters shared by the cells: ``weight_ih`` ``(num_chunks * hidden_size, input_size)``,
    ``weight_hh``, ``bias_ih``, ``bias_hh``, all from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> import retrograd as rg
    >>> rg.nn.RNNCellBase(3, 4, True, num_chunks=2).weight_ih.shape
    torch.Size([8, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(factories.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(factories.empty((num_chunks * hidden_size, hidden_size), device=device,
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(factories.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(factories.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _gates(self, input: Tensor, hx: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
        return F.linear(input, self.weight_ih, self.bias_ih), F.linear(hx, self.weight_hh, self.bias_hh)

    def _batched(self, name: str, input: Tensor, hx: Any, what: str) -> bool:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for label, value in what_values(what, hx):
            if value.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {value.dim()}D instead")
        return input.dim() == 2

    def _zeros(self, input: Tensor) -> Tensor:  # noqa: A002
        return factories.zeros(input.size(0), self.hidden_size, dtype=input.dtype)


def what_values(what: str, hx: Any) -> list[tuple[str, Tensor]]:
    if hx is None:
        return []
    if what == "hx":
        return [(f"hx[{i}]", v) for i, v in enumerate(hx)]
    return [("hidden", hx)]


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU).

    >>> import retrograd as rg
    >>> cell = rg.nn.RNNCell(10, 20)
    >>> cell(rg.randn(3, 10), rg.randn(3, 20)).shape
    torch.Size([3, 20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        is_batched = self._batched("RNNCell", input, hx, "hidden")
        if not is_batched:
            input = input.unsqueeze(0)  # noqa: A001
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        _check_cell("RNNCell", input, hx, 0, self.hidden_size, self.input_size)
        ig, hg = self._gates(input, hx)
        ret = (ig + hg).tanh() if self.nonlinearity == "tanh" else (ig + hg).relu()
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from ``input`` and ``(h, c)`` (zeros when omitted).

    >>> import retrograd as rg
    >>> cell = rg.nn.LSTMCell(10, 20)
    >>> h, c = cell(rg.randn(3, 10))
    >>> h.shape, c.shape
    (torch.Size([3, 20]), torch.Size([3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        is_batched = self._batched("LSTMCell", input, hx, "hx")
        if not is_batched:
            input = input.unsqueeze(0)  # noqa: A001
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = hx
        _check_cell("LSTMCell", input, h, 0, self.hidden_size, self.input_size)
        _check_cell("LSTMCell", input, c, 1, self.hidden_size, self.input_size)
        ig, hg = self._gates(input, h)
        i, f, g, o = (ig + hg).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from ``input`` and ``h`` (zeros when omitted).

    >>> import retrograd as rg
    >>> rg.nn.GRUCell(10, 20)(rg.randn(10)).shape
    torch.Size([20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        is_batched = self._batched("GRUCell", input, hx, "hidden")
        if not is_batched:
            input = input.unsqueeze(0)  # noqa: A001
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        _check_cell("GRUCell", input, hx, 0, self.hidden_size, self.input_size)
        ig, hg = self._gates(input, hx)
        x_r, x_z, x_n = ig.chunk(3, 1)
        h_r, h_z, h_n = hg.chunk(3, 1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        ret = n + z * (hx - n)
        return ret if is_batched else ret.squeeze(0)
