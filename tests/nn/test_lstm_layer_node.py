"""nn.LSTM on float32 as one node per layer and direction (``ops/rnn.lstm_layer``, PyTorch's CPU
``mkldnn_rnn_layer`` with its ``MkldnnRnnLayerBackward0`` node): the graph's shape against real
PyTorch, values and gradients against PyTorch, gradcheck/gradgradcheck of the op in float64 in
both directions, double backward through the module against PyTorch, and the op's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops.op import apply
from retrograd.ops.rnn import lstm_layer


def _names(fn: Any) -> dict[str, int]:
    """The node classes reachable from ``fn``, counted."""
    seen: set[int] = set()
    counts: dict[str, int] = {}
    stack = [fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__
        name = "AccumulateGrad" if name.endswith("AccumulateGrad") else name
        counts[name] = counts.get(name, 0) + 1
        stack += [f for f, _ in node.next_functions]
    return counts


def _pair(torch: Any, **kwargs: Any) -> tuple[Any, Any]:
    torch.manual_seed(0)
    tm = torch.nn.LSTM(**kwargs)
    rm = rg.nn.LSTM(**kwargs)
    for name, p in tm.named_parameters():
        getattr(rm, name)._data[...] = p.detach().numpy()
    return tm, rm


CONFIGS = [
    dict(input_size=5, hidden_size=4, num_layers=2),
    dict(input_size=5, hidden_size=4, num_layers=2, bidirectional=True),
    dict(input_size=5, hidden_size=4, batch_first=True),
    dict(input_size=5, hidden_size=4, bias=False),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_graph_nodes_values_and_grads_match_pytorch(torch: Any, config: dict[str, Any]) -> None:
    tm, rm = _pair(torch, **config)
    rng = np.random.default_rng(1)
    shape = (3, 6, 5) if config.get("batch_first") else (6, 3, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    tx, rx = torch.tensor(x, requires_grad=True), rg.tensor(x, requires_grad=True)
    (to, (th, tc)), (ro, (rh, rc)) = tm(tx), rm(rx)
    assert type(ro.grad_fn).__name__ == type(to.grad_fn).__name__
    assert _names(ro.grad_fn) == _names(to.grad_fn)
    assert type(rh.grad_fn).__name__ == type(th.grad_fn).__name__ == "StackBackward0"
    for r, t in ((ro, to), (rh, th), (rc, tc)):
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    weights = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in (to, th, tc)]
    ((to * torch.tensor(weights[0])).sum() + (th * torch.tensor(weights[1])).sum()
     + (tc * torch.tensor(weights[2])).sum()).backward()
    ((ro * rg.tensor(weights[0])).sum() + (rh * rg.tensor(weights[1])).sum()
     + (rc * rg.tensor(weights[2])).sum()).backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(getattr(rm, name).grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def test_float64_keeps_the_per_step_graph(torch: Any) -> None:
    # PyTorch's oneDNN kernel is float32 (and reduced precision) only.
    tm, rm = _pair(torch, input_size=3, hidden_size=2)
    x = np.random.default_rng(2).standard_normal((4, 2, 3))
    to, _ = tm.double()(torch.tensor(x))
    ro, _ = rm.double()(rg.tensor(x))
    assert "MkldnnRnnLayerBackward0" not in _names(to.grad_fn)
    assert "MkldnnRnnLayerBackward0" not in _names(ro.grad_fn)
    assert _names(ro.grad_fn)["ThnnFusedLstmCellBackward0"] == 4


def _layer_args(rng: np.random.Generator, seq: int, batch: int, width: int, hidden: int) -> list[rg.Tensor]:
    shapes = [(seq, batch, width), (4 * hidden, width), (4 * hidden, hidden), (4 * hidden,), (4 * hidden,),
              (batch, hidden), (batch, hidden)]
    return [rg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
def test_op_gradcheck_and_gradgradcheck_float64(reverse: bool) -> None:
    args = _layer_args(np.random.default_rng(3), 4, 2, 3, 2)

    def fn(*inputs: rg.Tensor) -> tuple[rg.Tensor, ...]:
        return apply(lstm_layer, (*inputs, reverse, [], 2, 2, 1, True, False, False, True))[:3]

    assert rg.autograd.gradcheck(fn, args)
    assert rg.autograd.gradgradcheck(fn, args)


def test_op_single_step_and_unused_outputs() -> None:
    # One step (no recurrence product for the weight) and gradients reaching only through h_n.
    args = _layer_args(np.random.default_rng(4), 1, 3, 2, 3)
    fn = lambda *inputs: apply(lstm_layer, (*inputs, False, [], 2, 3, 1, True, False, False, True))[1]  # noqa: E731
    assert rg.autograd.gradcheck(fn, args)


def test_double_backward_through_the_module_matches_pytorch(torch: Any) -> None:
    # create_graph: the node's backward runs as differentiable ops (a gradient penalty).
    tm, rm = _pair(torch, input_size=3, hidden_size=4, num_layers=2)
    x = np.random.default_rng(5).standard_normal((5, 2, 3)).astype(np.float32)
    results = []
    for lib, m in ((torch, tm), (rg, rm)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = m(xt)
        (gx,) = lib.autograd.grad(out.pow(2).sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        results.append([xt.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
    for r, t in zip(results[1], results[0]):
        np.testing.assert_allclose(r, t, rtol=1e-3, atol=1e-5)


def test_op_refuses_mismatched_shapes_and_dtypes() -> None:
    args = _layer_args(np.random.default_rng(6), 2, 2, 3, 2)
    with pytest.raises(RuntimeError, match="shapes do not match an LSTM layer of hidden size 3"):
        apply(lstm_layer, (*args, False, [], 2, 3, 1, True, False, False, True))
    args[2] = args[2].float()
    with pytest.raises(RuntimeError, match="expected every tensor to have the input's dtype"):
        apply(lstm_layer, (*args, False, [], 2, 2, 1, True, False, False, True))
