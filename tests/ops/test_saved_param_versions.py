"""Tensors an op takes as params and reads again in backward (a loss's target, class weights) are
kept with their version (``Op(..., versioned=...)``): written in place between forward and
backward, they give PyTorch's version error instead of a gradient for the new values.

Each case runs the same code on PyTorch and on retrograd: both raise PyTorch's message, or
neither does and the gradients agree. The cases where PyTorch does not keep the tensor (it
copies it, or its backward does not read it) are here too: retrograd must not raise there."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

Case = Callable[[Any], tuple[Any, list[Any], Callable[[], Any]]]
RNG = np.random.default_rng(7)
SCORES = RNG.standard_normal((4, 5))
SCORES_4D = RNG.standard_normal((2, 3, 2, 2))
SCORES_3D = RNG.standard_normal((2, 3, 4))
PROBS = RNG.uniform(0.1, 0.9, (4, 5))
WEIGHTS = RNG.uniform(0.5, 1.5, 5)
LABELS = np.array([0, 3, 1, 4])
RNG_UNPOOL = RNG.permutation(128).astype(np.float64)  # (distinct values: one maximum per window)


def _leaf(m: Any, array: np.ndarray) -> Any:
    return m.tensor(array, requires_grad=True)


def _nll_target(m: Any) -> Any:
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.nll_loss(x.log_softmax(1), t), [x], lambda: t.add_(1)


def _nll_target_setitem(m: Any) -> Any:
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)

    def write() -> None:
        t[0] = 2

    return m.nn.functional.nll_loss(x, t, reduction="sum"), [x], write


def _nll_weight(m: Any) -> Any:
    t, w = m.tensor(LABELS), m.tensor(WEIGHTS)
    x = _leaf(m, SCORES)
    return m.nn.functional.nll_loss(x, t, weight=w), [x], lambda: w.mul_(2)


def _nll_one_sample(m: Any) -> Any:  # a (C,) input, a (1,) target (viewed as 0-d)
    t = m.tensor([3])
    x = _leaf(m, SCORES[0])
    return m.nn.functional.nll_loss(x, t), [x], lambda: t.sub_(1)


def _nll_2d(m: Any) -> Any:
    t = m.tensor(LABELS[:3].repeat(3)[:8].reshape(2, 2, 2) % 3)
    x = _leaf(m, SCORES_4D)
    return m.nn.functional.nll_loss(x, t), [x], lambda: t.copy_(m.zeros_like(t))


def _nll_nd(m: Any) -> Any:  # (N, C, d): viewed as the 2-d loss, the target through a view
    t = m.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.nll_loss(x, t), [x], lambda: t.fill_(1)


def _ce_fused(m: Any) -> Any:  # the fused forward and the backward that trusts its checked targets
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.cross_entropy(x, t), [x], lambda: t.add_(1)


def _ce_negative_write(m: Any) -> Any:  # a target written to -1 after the check: no wrap-around
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)

    def write() -> None:
        t[1] = -1

    return m.nn.functional.cross_entropy(x, t, reduction="sum"), [x], write


def _ce_copy(m: Any) -> Any:
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.cross_entropy(x, t), [x], lambda: t.copy_(m.tensor([1, 1, 1, 1]))


def _ce_ignore_index(m: Any) -> Any:  # an ignore_index among the classes: the general path
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.cross_entropy(x, t, ignore_index=1), [x], lambda: t.add_(1)


def _ce_smoothing(m: Any) -> Any:
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.cross_entropy(x, t, label_smoothing=0.2), [x], lambda: t.add_(1)


def _ce_weight(m: Any) -> Any:
    t, w = m.tensor(LABELS), m.tensor(WEIGHTS)
    x = _leaf(m, SCORES)
    return m.nn.functional.cross_entropy(x, t, weight=w), [x], lambda: w.add_(1)


def _bce_weight(m: Any) -> Any:
    t, w = m.tensor(PROBS[0]), m.tensor(WEIGHTS)
    x = _leaf(m, PROBS[1])
    return m.nn.functional.binary_cross_entropy(x, t, weight=w), [x], lambda: w.add_(1)


def _bce_logits_weight(m: Any) -> Any:
    t, w = m.tensor(PROBS[0]), m.tensor(WEIGHTS)
    x = _leaf(m, SCORES[0])
    return m.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w), [x], lambda: w.add_(1)


def _bce_logits_pos_weight(m: Any) -> Any:
    t, p = m.tensor(PROBS[0]), m.tensor(WEIGHTS)
    x = _leaf(m, SCORES[0])
    return m.nn.functional.binary_cross_entropy_with_logits(x, t, pos_weight=p), [x], lambda: p.add_(1)


def _soft_margin(m: Any) -> Any:
    t = m.tensor(np.sign(SCORES[1]))
    x = _leaf(m, SCORES[0])
    return m.nn.functional.soft_margin_loss(x, t), [x], lambda: t.neg_()


def _multi_margin_target(m: Any) -> Any:
    t = m.tensor(LABELS)
    x = _leaf(m, SCORES)
    return m.nn.functional.multi_margin_loss(x, t), [x], lambda: t.fill_(0)


def _multi_margin_weight(m: Any) -> Any:
    t, w = m.tensor(LABELS), m.tensor(WEIGHTS)
    x = _leaf(m, SCORES)
    return m.nn.functional.multi_margin_loss(x, t, p=2, weight=w), [x], lambda: w.mul_(3)


def _multilabel_margin(m: Any) -> Any:
    t = m.tensor([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [0, -1, 2, 2, 2], [4, 3, 2, 1, 0]])
    x = _leaf(m, SCORES)
    return m.nn.functional.multilabel_margin_loss(x, t), [x], lambda: t.fill_(-1)


def _ctc_targets(m: Any) -> Any:
    t = m.tensor([[1, 2], [2, 2]])
    x = _leaf(m, SCORES_3D.transpose(2, 0, 1)[:, :, :3].copy())  # (T=4, N=2, C=3) scores
    lp = x.log_softmax(2)
    return m.nn.functional.ctc_loss(lp, t, [4, 4], [2, 1]), [x], lambda: t.fill_(1)


def _ctc_unbatched(m: Any) -> Any:
    t = m.tensor([1, 2])
    x = _leaf(m, SCORES_3D[0].T.copy())  # (T=4, C=3)
    return m.nn.functional.ctc_loss(x.log_softmax(1), t, [4], [2]), [x], lambda: t.fill_(1)


def _gather(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    x = _leaf(m, SCORES)
    return x.gather(1, i), [x], lambda: i.fill_(1)


def _scatter(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 3], [1, 0], [3, 4]])
    x, s = _leaf(m, SCORES), _leaf(m, SCORES[:, :2].copy())
    return x.scatter(1, i, s), [x, s], lambda: i.fill_(1)


def _scatter_value(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 3], [1, 0], [3, 4]])
    x = _leaf(m, SCORES)
    return x.scatter(1, i, 0.5), [x], lambda: i.fill_(1)


def _scatter_add(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    x, s = _leaf(m, SCORES), _leaf(m, SCORES[:, :2].copy())
    return x.scatter_add(1, i, s), [x, s], lambda: i.fill_(1)


def _scatter_add_inplace(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    x, s = _leaf(m, SCORES), _leaf(m, SCORES[:, :2].copy())
    return (x * 1).scatter_add_(1, i, s), [x, s], lambda: i.fill_(1)


def _index_select(m: Any) -> Any:
    i = m.tensor([3, 0, 0])
    x = _leaf(m, SCORES)
    return m.index_select(x, 0, i), [x], lambda: i.fill_(1)


def _index_select_method(m: Any) -> Any:
    i = m.tensor([4, 1])
    x = _leaf(m, SCORES)
    return x.index_select(1, i), [x], lambda: i.add_(-1)


def _index_add(m: Any) -> Any:
    i = m.tensor([3, 0])
    x, s = _leaf(m, SCORES), _leaf(m, SCORES[:2].copy())
    return x.index_add(0, i, s, alpha=2.0), [x, s], lambda: i.fill_(1)


def _take(m: Any) -> Any:
    i = m.tensor([[0, 19], [7, 7]])
    x = _leaf(m, SCORES)
    return m.take(x, i), [x], lambda: i.fill_(3)


def _masked_fill_mask(m: Any) -> Any:  # (a bool tensor: PyTorch names its type ``CPUBoolType``)
    mask = m.tensor([True, False, True, False, True])
    x = _leaf(m, SCORES)
    return x.masked_fill(mask, 0.5), [x], lambda: mask.fill_(False)


def _where_condition(m: Any) -> Any:
    cond = m.tensor(SCORES > 0)
    x, y = _leaf(m, SCORES), _leaf(m, PROBS)
    return m.where(cond, x, y), [x, y], lambda: cond.logical_not_()


def _getitem_index(m: Any) -> Any:  # ``x[i]``: the index tensor, kept by IndexBackward0
    i = m.tensor([3, 0, 0])
    x = _leaf(m, SCORES)
    return x[i], [x], lambda: i.fill_(1)


def _getitem_index_2d(m: Any) -> Any:
    i = m.tensor([[3, 0], [1, 1]])
    x = _leaf(m, SCORES)
    return x[i], [x], lambda: i.fill_(2)


def _getitem_index_after_slice(m: Any) -> Any:  # (the slice first, then the lone index)
    i = m.tensor([3, 0])
    x = _leaf(m, SCORES)
    return x[i, 1:], [x], lambda: i.fill_(1)


def _getitem_mask(m: Any) -> Any:  # (retrograd crashed in NumPy: the backward read the new mask)
    mask = m.tensor([True, False, True, False])
    x = _leaf(m, SCORES)
    return x[mask], [x], lambda: mask.fill_(False)


def _getitem_full_mask(m: Any) -> Any:
    mask = m.tensor(SCORES > 0)
    x = _leaf(m, SCORES)
    return x[mask], [x], lambda: mask.fill_(True)


def _setitem_index(m: Any) -> Any:  # ``y[i] = v``: index_put_ keeps the index
    i = m.tensor([3, 0])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[:2].copy())

    def forward() -> Any:
        y = x * 1
        y[i] = v
        return y

    return forward(), [x, v], lambda: i.fill_(1)


def _setitem_mask(m: Any) -> Any:
    mask = m.tensor(SCORES > 0)
    x = _leaf(m, SCORES)

    def forward() -> Any:
        y = x * 1
        y[mask] = 0.5
        return y

    return forward(), [x], lambda: mask.fill_(True)


def _index_put_accumulate(m: Any) -> Any:
    i = m.tensor([3, 0, 3])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[:3].copy())
    return x.index_put((i,), v, accumulate=True), [x, v], lambda: i.fill_(1)


def _masked_select(m: Any) -> Any:  # (retrograd crashed in NumPy)
    mask = m.tensor(SCORES > 0)
    x = _leaf(m, SCORES)
    return m.masked_select(x, mask), [x], lambda: mask.fill_(True)


def _masked_select_broadcast(m: Any) -> Any:
    mask = m.tensor([True, False, True, False, True])
    x = _leaf(m, SCORES)
    return x.masked_select(mask), [x], lambda: mask.logical_not_()


def _embedding(m: Any) -> Any:
    i = m.tensor([[3, 0, 0], [1, 2, 3]])
    w = _leaf(m, SCORES)
    return m.nn.functional.embedding(i, w), [w], lambda: i.fill_(1)


def _embedding_padding(m: Any) -> Any:
    i = m.tensor([3, 0, 1])
    w = _leaf(m, SCORES)
    return m.nn.functional.embedding(i, w, padding_idx=0), [w], lambda: i.fill_(1)


def _embedding_module(m: Any) -> Any:
    layer = m.nn.Embedding(4, 5, dtype=m.float64)
    with m.no_grad():
        layer.weight.copy_(m.tensor(SCORES))
    i = m.tensor([2, 2, 0])
    return layer(i), [layer.weight], lambda: i.add_(1)


def _index_copy(m: Any) -> Any:
    i = m.tensor([3, 0])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[:2].copy())
    return x.index_copy(0, i, s), [x, s], lambda: i.fill_(1)


def _index_fill(m: Any) -> Any:
    i = m.tensor([3, 0])
    x = _leaf(m, SCORES)
    return x.index_fill(0, i, 0.5), [x], lambda: i.fill_(1)


def _index_fill_tensor_value(m: Any) -> Any:
    i = m.tensor([4, 1])
    x, v = _leaf(m, SCORES), _leaf(m, np.array(2.0))
    return x.index_fill(1, i, v), [x, v], lambda: i.fill_(0)


def _put(m: Any) -> Any:
    i = m.tensor([3, 0, 19])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[0, :3].copy())
    return x.put(i, s), [x, s], lambda: i.fill_(1)


def _put_accumulate(m: Any) -> Any:
    i = m.tensor([3, 0, 3])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[0, :3].copy())
    return x.put(i, s, accumulate=True), [x, s], lambda: i.fill_(1)


def _masked_scatter(m: Any) -> Any:
    mask = m.tensor(SCORES > 0)
    x, s = _leaf(m, SCORES), _leaf(m, PROBS)
    return x.masked_scatter(mask, s), [x, s], lambda: mask.fill_(True)


def _masked_scatter_inplace(m: Any) -> Any:
    mask = m.tensor([True, False, True, False, True])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS)
    return (x * 1).masked_scatter_(mask, s), [x, s], lambda: mask.logical_not_()


def _scatter_reduce_sum(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[:, :2].copy())
    return x.scatter_reduce(1, i, s, "sum"), [x, s], lambda: i.fill_(1)


def _scatter_reduce_amax(m: Any) -> Any:
    i = m.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[:, :2].copy())
    return x.scatter_reduce(1, i, s, "amax", include_self=False), [x, s], lambda: i.fill_(3)


def _index_reduce_prod(m: Any) -> Any:
    i = m.tensor([3, 0])
    x, s = _leaf(m, SCORES), _leaf(m, PROBS[:2].copy())
    with warnings.catch_warnings():  # (its beta warning: PyTorch gives it once a process)
        warnings.simplefilter("ignore", UserWarning)
        out = x.index_reduce(0, i, s, "prod")
    return out, [x, s], lambda: i.fill_(1)


def _max_unpool(m: Any, nd: int) -> Any:
    """``max_unpool{nd}d`` of pooled values; the pool's indices written before backward."""
    shape = (1, 2) + (4,) * nd
    pooled, indices = getattr(m.nn.functional, f"max_pool{nd}d")(m.tensor(RNG_UNPOOL.reshape(-1)[:np.prod(shape)]
                                                                           .reshape(shape)), 2, return_indices=True)
    y = _leaf(m, pooled.numpy())
    return getattr(m.nn.functional, f"max_unpool{nd}d")(y, indices, 2), [y], lambda: indices.fill_(0)


def _max_unpool1d(m: Any) -> Any:  # (a 2-d unpool of a view of the indices: the write reaches it)
    return _max_unpool(m, 1)


def _max_unpool2d(m: Any) -> Any:
    return _max_unpool(m, 2)


def _max_unpool3d(m: Any) -> Any:
    return _max_unpool(m, 3)


def _complex_factor(m: Any) -> Any:  # (``CPUComplexDoubleType``)
    c = m.tensor(SCORES[0] + 1j * SCORES[1])
    x = _leaf(m, SCORES[2])
    return (x * c).abs(), [x], lambda: c.mul_(2)


# PyTorch keeps none of these (its backward does not read the tensor): no error, the old gradient.
def _l1_target(m: Any) -> Any:
    t = m.tensor(PROBS[0])
    x = _leaf(m, PROBS[1])
    return m.nn.functional.l1_loss(x, t), [x], lambda: t.add_(5)


def _hinge_embedding_target(m: Any) -> Any:
    t = m.tensor(np.sign(SCORES[1]))
    x = _leaf(m, SCORES[0])
    return m.nn.functional.hinge_embedding_loss(x, t), [x], lambda: t.neg_()


def _margin_ranking_target(m: Any) -> Any:
    t = m.tensor(np.sign(SCORES[2]))
    x, y = _leaf(m, SCORES[0]), _leaf(m, SCORES[1])
    return m.nn.functional.margin_ranking_loss(x, y, t), [x, y], lambda: t.neg_()


def _take_along_dim_index(m: Any) -> Any:
    i = m.tensor([[0], [2], [1], [4]])
    x = _leaf(m, SCORES)
    return m.take_along_dim(x, i, 1), [x], lambda: i.fill_(3)



# Keys of several items (issue #8): PyTorch's IndexBackward0 / IndexPutBackward0 keep every index
# tensor of the key, whatever else the key holds (slices, an ellipsis, a mask).
def _getitem_two_indices(m: Any) -> Any:
    i, j = m.tensor([3, 0, 3]), m.tensor([1, 4, 4])
    x = _leaf(m, SCORES)
    return x[i, j], [x], lambda: j.fill_(0)


def _getitem_two_indices_first_written(m: Any) -> Any:
    i, j = m.tensor([3, 0, 3]), m.tensor([1, 4, 4])
    x = _leaf(m, SCORES)
    return x[i, j], [x], lambda: i.fill_(0)


def _getitem_index_after_full_slice(m: Any) -> Any:  # ``x[:, i]``
    i = m.tensor([4, 0, 4])
    x = _leaf(m, SCORES)
    return x[:, i], [x], lambda: i.fill_(1)


def _getitem_index_slice_index(m: Any) -> Any:  # ``x[i, :, j]``: the indexed dims apart
    i, j = m.tensor([1, 0]), m.tensor([3, 3])
    x = _leaf(m, SCORES_3D)
    return x[i, :, j], [x], lambda: j.sub_(1)


def _getitem_ellipsis_index(m: Any) -> Any:
    i = m.tensor([0, 3, 3])
    x = _leaf(m, SCORES_3D)
    return x[..., i], [x], lambda: i.fill_(2)


def _getitem_mask_after_slice(m: Any) -> Any:
    mask = m.tensor([True, False, True, True, False])
    x = _leaf(m, SCORES)
    return x[:, mask], [x], lambda: mask.logical_not_()


def _getitem_mask_slice_index(m: Any) -> Any:  # (the index a view: its write is the base's)
    mask, i = m.tensor([True, False]), m.tensor([[3, 1], [0, 0]])
    x = _leaf(m, SCORES_3D)
    return x[mask, :, i[0]], [x], lambda: i.fill_(2)


def _getitem_two_indices_view_written(m: Any) -> Any:  # (``i[:, None]`` shares i's version)
    i, j = m.tensor([0, 1]), m.tensor([1, 3, 1])
    x = _leaf(m, SCORES_3D)
    return x[i[:, None], :, j], [x], lambda: i.add_(1)


def _setitem_index_after_slice(m: Any) -> Any:  # ``y[:, i] = v``
    i = m.tensor([3, 0])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[:, :2].copy())

    def forward() -> Any:
        y = x * 1
        y[:, i] = v
        return y

    return forward(), [x, v], lambda: i.fill_(1)


def _setitem_two_indices(m: Any) -> Any:
    i, j = m.tensor([3, 0]), m.tensor([1, 1])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[0, :2].copy())

    def forward() -> Any:
        y = x * 1
        y[i, j] = v
        return y

    return forward(), [x, v], lambda: i.fill_(2)


def _index_put_two_indices(m: Any) -> Any:
    i, j = m.tensor([3, 0, 3]), m.tensor([1, 4, 4])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[0, :3].copy())
    return x.index_put((i, j), v), [x, v], lambda: j.fill_(0)


def _index_put_inplace_broadcast_indices(m: Any) -> Any:  # ``(i[:, None], j)``: a view, broadcast
    i, j = m.tensor([3, 0]), m.tensor([4, 0, 4])
    x, v = _leaf(m, SCORES), _leaf(m, PROBS[:2, :3].copy())

    def forward() -> Any:
        y = x * 1
        y.index_put_((i[:, None], j), v, accumulate=True)
        return y

    return forward(), [x, v], lambda: i.fill_(2)



# Batch norm keeps its running statistics for backward (NativeBatchNormBackward0's running_mean and
# running_var), in evaluation and in training; a training step's own update of them is no write.
RUNNING_MEAN, RUNNING_VAR = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.7, 2.0])


def _bn_stats(m: Any) -> tuple[Any, Any]:
    return m.tensor(RUNNING_MEAN), m.tensor(RUNNING_VAR)


def _bn_module(m: Any, affine: bool = True) -> Any:
    bn = m.nn.BatchNorm1d(3, affine=affine).double()
    with m.no_grad():
        bn.running_mean.copy_(m.tensor(RUNNING_MEAN))
        bn.running_var.copy_(m.tensor(RUNNING_VAR))
    return bn.eval()


def _batch_norm_eval_mean(m: Any) -> Any:
    rm, rv = _bn_stats(m)
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.batch_norm(x, rm, rv, training=False), [x], lambda: rm.add_(1)


def _batch_norm_eval_var_affine(m: Any) -> Any:
    rm, rv = _bn_stats(m)
    x, w, b = _leaf(m, SCORES_3D), _leaf(m, WEIGHTS[:3].copy()), _leaf(m, PROBS[0, :3].copy())
    return m.nn.functional.batch_norm(x, rm, rv, w, b, training=False), [x, w, b], lambda: rv.mul_(2)


def _batch_norm_training_stats_written(m: Any) -> Any:  # (read by nothing, kept all the same)
    rm, rv = _bn_stats(m)
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.batch_norm(x, rm, rv, training=True), [x], lambda: rm.add_(1)


def _batch_norm_aten_form(m: Any) -> Any:  # ``torch.batch_norm``, ATen's argument order
    rm, rv = _bn_stats(m)
    x = _leaf(m, SCORES_3D)
    return m.batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5, False), [x], lambda: rv.add_(1)


def _batch_norm_module_eval_write(m: Any) -> Any:
    bn = _bn_module(m)
    x = _leaf(m, SCORES_3D)
    return bn(x), [x, bn.weight, bn.bias], lambda: bn.running_mean.add_(1)


def _batch_norm_module_eval_no_grad_copy(m: Any) -> Any:
    bn = _bn_module(m, affine=False)
    x = _leaf(m, SCORES_3D)

    def write() -> None:
        with m.no_grad():
            bn.running_var.copy_(m.ones(3, dtype=m.float64))

    return bn(x), [x], write


def _batch_norm_module_weight_only(m: Any) -> Any:  # (the input needs no gradient)
    bn = _bn_module(m)
    return bn(m.tensor(SCORES_3D)), [bn.weight, bn.bias], lambda: bn.running_var.add_(1)


def _batch_norm_module_training_call_after_eval(m: Any) -> Any:
    """A training call updates the statistics in place without a version bump: no error, and
    PyTorch's backward of the earlier evaluation call reads the updated values."""
    bn = _bn_module(m)
    x = _leaf(m, SCORES_3D)

    def write() -> None:
        bn.train()
        bn(m.tensor(SCORES_3D * 2 + 1))

    return bn(x), [x, bn.weight, bn.bias], write


def _instance_norm_running_stats(m: Any) -> Any:  # (PyTorch normalises by copies of them: no error)
    rm, rv = _bn_stats(m)
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.instance_norm(x, rm, rv, use_input_stats=False), [x], lambda: rm.add_(1)


def _group_norm_weight(m: Any) -> Any:
    w = m.tensor(WEIGHTS[:3])
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.group_norm(x, 3, w), [x], lambda: w.add_(1)


def _layer_norm_weight(m: Any) -> Any:
    w = m.tensor(WEIGHTS[:4])
    x = _leaf(m, SCORES_3D)
    return m.nn.functional.layer_norm(x, (4,), w), [x], lambda: w.add_(1)


# embedding_bag keeps its indices and offsets (EmbeddingBagBackward0), in every mode.
BAG_TABLE = RNG.standard_normal((6, 3))


def _embedding_bag(m: Any, mode: str, write: str, **options: Any) -> Any:
    i, o = m.tensor([0, 2, 4, 5, 2]), m.tensor([0, 2, 5] if options.get("include_last_offset") else [0, 2])
    w = _leaf(m, BAG_TABLE)
    out = m.nn.functional.embedding_bag(i, w, o, mode=mode, **options)
    return out, [w], {"indices": lambda: i.fill_(1), "offsets": lambda: o.fill_(0)}[write]


def _embedding_bag_sum_indices(m: Any) -> Any:
    return _embedding_bag(m, "sum", "indices")


def _embedding_bag_mean_offsets(m: Any) -> Any:
    return _embedding_bag(m, "mean", "offsets")


def _embedding_bag_max_indices(m: Any) -> Any:
    return _embedding_bag(m, "max", "indices")


def _embedding_bag_max_offsets_last(m: Any) -> Any:
    return _embedding_bag(m, "max", "offsets", include_last_offset=True)


def _embedding_bag_mean_padding(m: Any) -> Any:
    return _embedding_bag(m, "mean", "indices", padding_idx=2)


def _embedding_bag_2d(m: Any) -> Any:  # (no offsets; PyTorch keeps the flattened indices)
    i = m.tensor([[0, 2], [4, 5]])
    w = _leaf(m, BAG_TABLE)
    return m.nn.functional.embedding_bag(i, w, mode="sum"), [w], lambda: i.fill_(1)


def _embedding_bag_per_sample_weights(m: Any) -> Any:  # (only the weights need a gradient)
    i, o = m.tensor([0, 2, 4, 5, 2]), m.tensor([0, 2])
    p = _leaf(m, PROBS[0])
    out = m.nn.functional.embedding_bag(i, m.tensor(BAG_TABLE), o, mode="sum", per_sample_weights=p)
    return out, [p], lambda: i.add_(1)


def _embedding_bag_module(m: Any) -> Any:
    bag = m.nn.EmbeddingBag(6, 3, mode="mean").double()
    i, o = m.tensor([0, 2, 4, 5, 2]), m.tensor([0, 2])
    return bag(i, o), [bag.weight], lambda: o.fill_(0)

CASES: dict[str, Case] = {f.__name__[1:]: f for f in (
    _nll_target, _nll_target_setitem, _nll_weight, _nll_one_sample, _nll_2d, _nll_nd, _ce_fused, _ce_negative_write,
    _ce_copy, _ce_ignore_index, _ce_smoothing, _ce_weight, _bce_weight, _bce_logits_weight, _bce_logits_pos_weight,
    _soft_margin, _multi_margin_target, _multi_margin_weight, _multilabel_margin, _ctc_targets, _ctc_unbatched, _gather, _scatter, _scatter_value, _scatter_add,
    _scatter_add_inplace, _index_select, _index_select_method, _index_add, _take, _masked_fill_mask, _where_condition,
    _getitem_index, _getitem_index_2d, _getitem_index_after_slice, _getitem_mask, _getitem_full_mask, _setitem_index,
    _setitem_mask, _index_put_accumulate, _masked_select, _masked_select_broadcast, _embedding, _embedding_padding,
    _embedding_module, _index_copy, _index_fill, _index_fill_tensor_value, _put, _put_accumulate, _masked_scatter,
    _masked_scatter_inplace, _scatter_reduce_sum, _scatter_reduce_amax, _index_reduce_prod, _max_unpool1d, _max_unpool2d,
    _max_unpool3d, _complex_factor, _l1_target, _hinge_embedding_target,
    _margin_ranking_target, _take_along_dim_index, _getitem_two_indices, _getitem_two_indices_first_written,
    _getitem_index_after_full_slice, _getitem_index_slice_index, _getitem_ellipsis_index, _getitem_mask_after_slice,
    _getitem_mask_slice_index, _getitem_two_indices_view_written,
    _setitem_index_after_slice, _setitem_two_indices, _index_put_two_indices, _index_put_inplace_broadcast_indices,
    _batch_norm_eval_mean, _batch_norm_eval_var_affine, _batch_norm_training_stats_written, _batch_norm_aten_form,
    _batch_norm_module_eval_write, _batch_norm_module_eval_no_grad_copy, _batch_norm_module_weight_only,
    _batch_norm_module_training_call_after_eval, _instance_norm_running_stats, _group_norm_weight, _layer_norm_weight,
    _embedding_bag_sum_indices, _embedding_bag_mean_offsets, _embedding_bag_max_indices, _embedding_bag_max_offsets_last,
    _embedding_bag_mean_padding, _embedding_bag_2d, _embedding_bag_per_sample_weights, _embedding_bag_module)}


def _run(m: Any, case: Case) -> tuple[str | None, list[np.ndarray]]:
    """(the version error's message or None, the leaves' gradients) of ``case`` on module ``m``."""
    out, leaves, write = case(m)
    write()
    try:
        out.backward(m.ones_like(out))
    except RuntimeError as err:
        return str(err), []
    return None, [leaf.grad.numpy() for leaf in leaves]


@pytest.mark.parametrize("name", list(CASES))
def test_in_place_write_before_backward_as_pytorch(name: str, torch: Any) -> None:
    theirs, their_grads = _run(torch, CASES[name])
    ours, our_grads = _run(rg, CASES[name])
    if theirs is None:
        assert ours is None, ours
        for a, b in zip(our_grads, their_grads, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:
        assert "modified by an inplace operation" in theirs
        assert ours is not None, "retrograd computed a gradient for the written values"
        # (retrograd may add where the write happened, after PyTorch's whole message)
        assert ours.startswith(theirs), (ours, theirs)


def test_the_version_error_names_the_target_as_pytorch(torch: Any) -> None:
    ours, _ = _run(rg, _ce_fused)
    theirs, _ = _run(torch, _ce_fused)
    assert ours is not None and theirs is not None
    head = "[torch.LongTensor [4]] is at version 1; expected version 0 instead."
    assert head in theirs and head in ours


def test_unwritten_targets_give_pytorchs_gradients(torch: Any) -> None:
    for name, case in CASES.items():
        if name == "nll_one_sample":  # (PyTorch's own backward refuses a (1,) target of a (C,) input)
            continue
        out_t, leaves_t, _ = case(torch)
        out_r, leaves_r, _ = case(rg)
        out_t.backward(torch.ones_like(out_t))
        out_r.backward(rg.ones_like(out_r))
        for a, b in zip(leaves_r, leaves_t, strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_target_checked_by_one_forward_is_not_trusted_after_a_write(torch: Any) -> None:
    """The fused cross_entropy forward records its checked targets for the backward's fast path;
    written in place and used again by a forward that lets -1 past (``ignore_index=-1``), they
    must not be trusted: PyTorch's gradient ignores that row, it does not wrap to the last class."""
    grads = []
    for m in (torch, rg):
        t = m.tensor(LABELS)
        x = _leaf(m, SCORES)
        m.nn.functional.cross_entropy(x, t)  # (its graph is dropped: only its record of t remains)
        t[0] = -1
        loss = m.nn.functional.nll_loss(x.log_softmax(1), t, ignore_index=-1)
        loss.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def test_saved_target_attribute_is_checked_as_pytorchs(torch: Any) -> None:
    messages = []
    for m in (torch, rg):
        t = m.tensor(LABELS)
        loss = m.nn.functional.nll_loss(_leaf(m, SCORES), t)
        np.testing.assert_array_equal(loss.grad_fn._saved_target.numpy(), LABELS)
        t.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            loss.grad_fn._saved_target  # noqa: B018
        messages.append(str(info.value))
    assert messages[1].startswith(messages[0])


def test_saved_tensor_hooks_see_the_target_as_pytorchs(torch: Any) -> None:
    packed = []
    for m in (torch, rg):
        seen: list[tuple[int, ...]] = []

        def pack(t: Any, seen: list[tuple[int, ...]] = seen) -> Any:
            seen.append(tuple(t.shape))
            return t

        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = m.nn.functional.cross_entropy(_leaf(m, SCORES), m.tensor(LABELS))
        loss.backward()
        packed.append(seen)
    assert (4,) in packed[0] and (4,) in packed[1]  # the target, packed as PyTorch packs it



def test_saved_tensor_hooks_see_each_index_of_a_key_as_pytorchs(torch: Any) -> None:
    """``x[i, j]`` packs both index tensors; unpacked, the backward is PyTorch's."""
    results = []
    for m in (torch, rg):
        seen: list[tuple[int, ...]] = []

        def pack(t: Any, seen: list[tuple[int, ...]] = seen) -> Any:
            seen.append(tuple(t.shape))
            return t

        x, i, j = _leaf(m, SCORES), m.tensor([3, 0, 3]), m.tensor([1, 1])
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = x[i[:, None], j] * 2.0
        out.sum().backward()
        results.append((sorted(seen), x.grad.numpy()))
    assert results[1][0] == results[0][0] == [(2,), (3, 1)]
    np.testing.assert_array_equal(results[1][1], results[0][1])

def test_compiled_function_takes_the_target_as_an_input_not_a_constant() -> None:
    """``retrograd.compile`` of a loss whose target is an argument: each call uses its own
    target (the tensor given as the op's param is traced as a value, not kept as a constant)."""

    def loss(x: Any, t: Any) -> Any:
        return rg.nn.functional.cross_entropy(x * 2.0, t, reduction="none")

    compiled = rg.compile(loss)
    for labels in ([0, 3, 1, 4], [4, 4, 0, 2], [1, 0, 2, 3]):
        with rg.no_grad():
            ours = compiled(rg.tensor(SCORES), rg.tensor(labels))
            eager = loss(rg.tensor(SCORES), rg.tensor(labels))
        np.testing.assert_array_equal(ours.numpy(), eager.numpy())
        x = rg.tensor(SCORES, requires_grad=True)
        t = rg.tensor(labels)
        out = compiled(x, t).sum()
        t.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss_weight", "bce_with_logits_pos_weight"])
def test_an_inference_target_cannot_be_kept_for_backward_as_pytorchs(loss: str, torch: Any) -> None:
    messages = []
    for m in (torch, rg):
        with m.inference_mode():
            t, w = m.tensor(LABELS), m.tensor(WEIGHTS)
        x = _leaf(m, SCORES)
        with pytest.raises(RuntimeError) as info:
            if loss == "cross_entropy":
                m.nn.functional.cross_entropy(x, t)
            elif loss == "nll_loss_weight":
                m.nn.functional.nll_loss(x, m.tensor(LABELS), weight=w)
            else:
                m.nn.functional.binary_cross_entropy_with_logits(x, m.ones(4, 5, dtype=m.float64), pos_weight=w)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_versioned_names_a_param_of_the_entry() -> None:
    from retrograd.ops.declaration import Declaration

    with pytest.raises(ValueError, match="versioned names 'tagret', which is not one of its params"):
        Declaration("loss", abs, params=("target", "reduction"), versioned=("tagret",))
    assert Declaration("loss", abs, params=("target", "reduction"), versioned="target").versioned == ("target",)


def test_vmap_over_a_gather_with_a_shared_index_tensor(torch: Any) -> None:
    """Under vmap a shared index tensor reaches the batching rule as the op's param: as an array."""
    batch = RNG.standard_normal((3, 4, 5))
    index = [[0, 4], [2, 2], [1, 0], [3, 3]]
    outs = []
    for m in (torch, rg):
        i = m.tensor(index)
        outs.append(m.func.vmap(lambda r, i=i: r.gather(1, i).sum(0))(m.tensor(batch)).numpy())
        outs.append(m.func.vmap(lambda r, i=i: r.index_select(1, i[:, 0]))(m.tensor(batch)).numpy())
    np.testing.assert_array_equal(outs[2], outs[0])
    np.testing.assert_array_equal(outs[3], outs[1])


# Under vmap, PyTorch's batching rules keep the index as a batch: the caller's batched tensor, or a
# shared one expanded (a view of it); a fallback keeps each sample's view.
BATCH_INDEX = [[0, 1], [2, 2], [4, 0]]


def _vmap_gather_batched(m: Any) -> Any:
    x, i = _leaf(m, SCORES[:3]), m.tensor(BATCH_INDEX)
    return m.func.vmap(lambda r, k: r.gather(0, k))(x, i), [x], lambda: i.fill_(3)


def _vmap_gather_shared(m: Any) -> Any:
    x, i = _leaf(m, SCORES[:3]), m.tensor([0, 4])
    return m.func.vmap(lambda r: r.gather(0, i))(x), [x], lambda: i.fill_(3)


def _vmap_index_select_batched(m: Any) -> Any:
    x, i = _leaf(m, SCORES[:3]), m.tensor(BATCH_INDEX)
    return m.func.vmap(lambda r, k: r.index_select(0, k))(x, i), [x], lambda: i.fill_(3)


def _vmap_scatter_add_batched(m: Any) -> Any:
    x, src, i = _leaf(m, SCORES[:3]), _leaf(m, PROBS[:3, :2].copy()), m.tensor(BATCH_INDEX)
    return m.func.vmap(lambda r, s, k: r.scatter_add(0, k, s))(x, src, i), [x, src], lambda: i.fill_(3)


def _vmap_take_per_sample(m: Any) -> Any:  # (no batching rule in either: each sample's index view)
    x, i = _leaf(m, SCORES[:3]), m.tensor(BATCH_INDEX)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = m.func.vmap(lambda r, k: r.take(k))(x, i)
    return out, [x], lambda: i.fill_(3)


VMAP_CASES: dict[str, Case] = {f.__name__[1:]: f for f in (
    _vmap_gather_batched, _vmap_gather_shared, _vmap_index_select_batched, _vmap_scatter_add_batched,
    _vmap_take_per_sample)}


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_keeps_indices_with_their_version_as_pytorch(name: str, torch: Any) -> None:
    theirs, _ = _run(torch, VMAP_CASES[name])
    ours, _ = _run(rg, VMAP_CASES[name])
    assert theirs is not None and "modified by an inplace operation" in theirs
    assert ours is not None and ours.startswith(theirs), (ours, theirs)
    out_t, leaves_t, _ = VMAP_CASES[name](torch)
    out_r, leaves_r, _ = VMAP_CASES[name](rg)
    out_t.backward(torch.ones_like(out_t))
    out_r.backward(rg.ones_like(out_r))
    for a, b in zip(leaves_r, leaves_t, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_vmap_getitem_keeps_each_samples_index(torch: Any) -> None:
    """``x[i]`` under vmap has no batching rule in retrograd: each sample's index (a view of the
    batch) is kept, so a write is the error PyTorch raises, naming a sample's shape, not the batch's."""
    messages = []
    for m in (torch, rg):
        x, i = _leaf(m, SCORES[:3]), m.tensor(BATCH_INDEX)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = m.func.vmap(lambda r, k: r[k])(x, i)
        i.fill_(3)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value))
    assert "[torch.LongTensor [3, 2]] is at version 1" in messages[0]
    assert "[torch.LongTensor [2]] is at version 1" in messages[1]
    assert messages[1].split("[torch.")[0] == messages[0].split("[torch.")[0]

# Second order: a rule hands the index on to the ops of its own graph (``create_graph``), whose nodes
# keep it with its version as PyTorch's do. Each: (the op of x given an index, the index).
SECOND_ORDER_OPS: dict[str, tuple[Callable[[Any, Any], Any], Any]] = {
    "getitem": (lambda x, i: x[i], [0, 2, 2]),
    "getitem_after_slice": (lambda x, i: x[:, i], [2, 0]),
    "gather": (lambda x, i: x.gather(0, i), [[0, 1, 2], [3, 0, 1], [2, 2, 2]]),
    "index_select": (lambda x, i: x.index_select(1, i), [2, 0, 0]),
    "take": (lambda x, i: x.take(i), [7, 0, 11, 7]),
    "masked_select": (lambda x, i: x.masked_select(i), SCORES[:4, :3] > 0),
    "scatter_src": (lambda x, i: (x * 0).scatter(0, i, x[:2]), [[0, 1, 2], [3, 0, 1]]),
    "scatter_add_src": (lambda x, i: (x * 0).scatter_add(0, i, x[:2]), [[0, 1, 2], [3, 3, 1]]),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER_OPS))
@pytest.mark.parametrize("written", [False, True])
def test_second_order_graph_keeps_the_index_as_pytorchs(name: str, written: bool, torch: Any) -> None:
    f, index = SECOND_ORDER_OPS[name]
    results = []
    for m in (torch, rg):
        x, w = _leaf(m, SCORES[:4, :3]), _leaf(m, PROBS[:4, :3].copy())
        i = m.tensor(np.asarray(index))
        y = f(x, i)
        (g,) = m.autograd.grad((y * w.reshape(-1)[: y.numel()].reshape(y.shape)).sum(), x, create_graph=True)
        if written:
            i.logical_not_() if i.dtype == m.bool else i.fill_(1)
        try:
            (g * m.tensor(SCORES_4D.reshape(-1)[:12].reshape(4, 3))).sum().backward()
        except RuntimeError as err:
            results.append((str(err), None))
        else:
            results.append((None, w.grad.numpy()))
    (theirs, their_grad), (ours, our_grad) = results
    if theirs is None:
        assert ours is None, ours
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, atol=1e-12)
    else:
        assert "modified by an inplace operation" in theirs and ours is not None and ours.startswith(theirs)

def test_compiled_function_takes_an_index_as_an_input_not_a_constant() -> None:
    def pick(x: Any, i: Any) -> Any:
        return (x * 2.0).gather(1, i) + x.index_select(1, i[0])

    compiled = rg.compile(pick)
    for index in ([[0, 4], [2, 2], [1, 0], [3, 3]], [[1, 1], [4, 0], [2, 3], [0, 0]]):
        with rg.no_grad():
            ours = compiled(rg.tensor(SCORES), rg.tensor(index))
            eager = pick(rg.tensor(SCORES), rg.tensor(index))
        np.testing.assert_array_equal(ours.numpy(), eager.numpy())


SECOND_BACKWARD_CASES = ("getitem_index", "getitem_mask", "setitem_index", "masked_select", "embedding", "gather",
                         "nll_target", "where_condition", "masked_fill_mask", "getitem_index_after_full_slice",
                         "setitem_two_indices", "embedding_bag_mean_offsets")


@pytest.mark.parametrize("name", SECOND_BACKWARD_CASES)
def test_a_second_backward_through_a_kept_param_raises_as_pytorchs(name: str, torch: Any) -> None:
    """A kept param is released with the saved tensors: a second backward without
    ``retain_graph`` is PyTorch's error, not a second gradient computed from the param."""
    messages = []
    for m in (torch, rg):
        out, _, _ = CASES[name](m)
        out.sum().backward()
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value))
    assert messages[0].startswith("Trying to backward through the graph a second time")
    assert messages[1].startswith(messages[0])


@pytest.mark.parametrize("name", ["getitem_index", "embedding", "nll_target", "getitem_two_indices"])
def test_retain_graph_keeps_the_param_for_a_second_backward_as_pytorchs(name: str, torch: Any) -> None:
    grads = []
    for m in (torch, rg):
        out, leaves, _ = CASES[name](m)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        grads.append([leaf.grad.numpy() for leaf in leaves])
    for a, b in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["gather", "nll_target", "getitem_index", "embedding", "getitem_two_indices",
                                  "embedding_bag_2d"])
def test_backward_releases_the_kept_tensor(name: str) -> None:
    """After a backward without ``retain_graph`` the node no longer holds the kept tensor (the
    index or target, the one the case writes), as PyTorch frees its saved variables."""
    import gc
    import weakref

    out, _, write = CASES[name](rg)
    kept = weakref.ref(write.__closure__[0].cell_contents)  # type: ignore[attr-defined]
    del write
    out.sum().backward()
    gc.collect()
    assert kept() is None, "the kept tensor outlived the backward that released its node"
