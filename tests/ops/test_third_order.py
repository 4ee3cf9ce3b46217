"""Every node that ``create_graph=True`` produces is itself differentiable: for each differentiable
op in the database (its first sample with a differentiable input, float64), the gradient of the
gradient of the gradient runs and matches PyTorch's.

Each order differentiates a random projection of the previous order's gradients, so all second
and third derivatives are exercised, not only the diagonal ones.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip
from opdb import OpInfo, Sample, all_ops, to_lib

# Ops whose higher derivatives PyTorch itself refuses to compute (the value is PyTorch's error);
# ours are checked against directional finite differences instead.
_MULTI_MARGIN = "derivative for aten::multi_margin_loss_backward is not implemented"
_MULTILABEL_MARGIN = "derivative for aten::multilabel_margin_loss_backward is not implemented"
TORCH_RAISES: dict[str, str] = {
    "hardsigmoid": "derivative for aten::hardsigmoid_backward is not implemented",
    "hardsigmoid_inplace": "derivative for aten::hardsigmoid_backward is not implemented",
    "relu_activations_0d": "derivative for aten::hardsigmoid_backward is not implemented",
    "pdist": "the derivative for '_pdist_backward' is not implemented",
    "pdist_p": "the derivative for '_pdist_backward' is not implemented",
    "cdist": "the derivative for '_cdist_backward' is not implemented",
    "embedding_bag_per_sample_weights": "_embedding_bag_per_sample_weights_backward is not implemented",
    "embedding_bag_2d_per_sample_weights": "_embedding_bag_per_sample_weights_backward is not implemented",
    "scaled_dot_product_attention_gqa":
        "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented",
    "multi_head_attention_forward_unbatched_bias_kv_zero_attn_sdpa":
        "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented",
    **{f"multi_margin_loss_{k}": _MULTI_MARGIN
       for k in ("mean", "sum", "none", "p2_weight_mean", "p2_weight_sum", "p2_weight_none", "vector",
                 "vector_0d_target")},
    **{f"multilabel_margin_loss_{k}": _MULTILABEL_MARGIN for k in ("mean", "sum", "none", "vector")},
}
# Ops whose third derivative PyTorch computes wrongly (it disagrees with central differences of
# its own second derivative, which ours matches): orders 1-2 are compared with PyTorch, order 3
# with directional finite differences.
# (pytorch/pytorch#175754, #186256: the fused double backward treats the saved mean/invstd as constants.)
_NORM_DOUBLE_BACKWARD = "PyTorch's batch/layer norm double backward is not differentiated correctly"
TORCH_WRONG: dict[str, str] = {
    "batch_norm_train": _NORM_DOUBLE_BACKWARD,
    "batch_norm_train_no_affine": _NORM_DOUBLE_BACKWARD,
    "layer_norm": _NORM_DOUBLE_BACKWARD,
    "layer_norm_2d_shape": _NORM_DOUBLE_BACKWARD,
    "layer_norm_no_affine": _NORM_DOUBLE_BACKWARD,
    "instance_norm": _NORM_DOUBLE_BACKWARD,
    "instance_norm_no_affine": _NORM_DOUBLE_BACKWARD,
    "det_near_singular": "PyTorch's third derivative of det near a singular matrix is off",
}
# PyTorch's second derivative is already NaN here (sigmoid(803) * (1 - sigmoid(803)) evaluated
# through an overflowing exp), where the true value underflows to 0: only order 1 is compared.
TORCH_WRONG_FROM_ORDER_2 = {"logaddexp_large"}


def _first_sample(op: OpInfo) -> Sample | None:
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    for sample in op.samples(rng):
        if sample.name in ("empty", "empty broadcast"):
            continue
        return sample
    return None


CASES = [
    pytest.param(op, id=op.name)
    for op in all_ops()
    if op.gradcheck and op.gradgradcheck and op.parity
]


def _outputs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _project(lib: Any, tensors: list[Any], weights: list[np.ndarray]) -> Any:
    """``sum_i <tensors[i], weights[i]>`` over the tensors that are part of a graph (None if none)."""
    total = None
    for t, w in zip(tensors, weights):
        if t is None or not t.requires_grad:
            continue
        term = (t * lib.tensor(w)).sum()
        total = term if total is None else total + term
    return total


def _array(t: Any) -> np.ndarray:
    # PyTorch answers some zero gradients with a ZeroTensor, which needs ``force`` to convert.
    return np.array(t.detach().numpy(force=True) if t.__module__.startswith("torch") else t.detach().numpy())


def _three_orders(lib: Any, op: OpInfo, sample: Sample, values: list[np.ndarray] | None = None,
                  ) -> tuple[list[list[np.ndarray]], list[float]]:
    """Gradients of orders 1..3 with respect to the leaves, as arrays (zeros where unused), and the
    value of each order's scalar (the projection it differentiates). ``values`` replaces the leaves'."""
    args, kwargs, leaves = to_lib(lib, sample)
    if values is not None:
        with lib.no_grad():
            for leaf, value in zip(leaves, values):
                leaf.copy_(lib.tensor(np.asarray(value)))
    outs = [o for o in _outputs(op.fn(lib, *args, **kwargs)) if o.requires_grad]
    rng = np.random.default_rng(1)
    target = _project(lib, outs, [rng.standard_normal(tuple(o.shape)) for o in outs])
    orders: list[list[np.ndarray]] = []
    scalars: list[float] = []
    for _ in range(3):
        scalars.append(0.0 if target is None else float(target.detach().numpy()))
        if target is None:
            grads: list[Any] = [None] * len(leaves)
        else:
            grads = list(lib.autograd.grad(target, leaves, create_graph=True, allow_unused=True))
        orders.append([np.zeros(tuple(x.shape)) if g is None else _array(g) for g, x in zip(grads, leaves)])
        target = _project(lib, grads, [rng.standard_normal(tuple(x.shape)) for x in leaves])
    return orders, scalars


def _directional(op: OpInfo, sample: Sample, base: list[np.ndarray], order: int, direction: list[np.ndarray],
                 eps: float = 1e-5) -> float:
    """The derivative of our own scalar of order ``order`` along ``direction``, by central differences."""
    plus = [b + eps * d for b, d in zip(base, direction)]
    minus = [b - eps * d for b, d in zip(base, direction)]
    hi = _three_orders(rg, op, sample, plus)[1][order - 1]
    lo = _three_orders(rg, op, sample, minus)[1][order - 1]
    return (hi - lo) / (2 * eps)


@pytest.mark.parametrize("op", CASES)
def test_third_order_matches_torch(op: OpInfo) -> None:
    sample = _first_sample(op)
    if sample is None or not to_lib(rg, sample)[2]:
        pytest.skip("no differentiable input")
    torch = torch_or_skip()
    ours, _ = _three_orders(rg, op, sample)
    if op.name in TORCH_RAISES:
        # PyTorch stops at some order: ours must go on, and agree with finite differences there.
        with pytest.raises((RuntimeError, NotImplementedError), match=TORCH_RAISES[op.name]):
            _three_orders(torch, op, sample)
    theirs, _ = _three_orders(torch, op, sample) if op.name not in TORCH_RAISES else ([], [])
    trusted = 1 if op.name in TORCH_WRONG_FROM_ORDER_2 else 2 if op.name in TORCH_WRONG else 3
    for order, (mine, ref) in enumerate(zip(ours, theirs[:trusted]), start=1):
        for m, r in zip(mine, ref):
            np.testing.assert_allclose(m, r, atol=1e-6, rtol=1e-5, equal_nan=True,
                                       err_msg=f"order {order} gradient differs from PyTorch's")
    if trusted < 3 or op.name in TORCH_RAISES:
        base = [np.asarray(leaf.detach().numpy(), dtype=np.float64) for leaf in to_lib(rg, sample)[2]]
        rng = np.random.default_rng(2)
        for order in range(len(theirs[:trusted]) + 1, 4):
            direction = [rng.standard_normal(b.shape) for b in base]
            analytic = sum(float(np.sum(m * d)) for m, d in zip(ours[order - 1], direction))
            numeric = _directional(op, sample, base, order, direction)
            assert analytic == pytest.approx(numeric, rel=1e-3, abs=1e-4), \
                f"order {order} gradient differs from finite differences"
