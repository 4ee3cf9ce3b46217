"""The ``torch.*`` spellings of ``nn.functional`` ops (``torch.conv2d``, ``torch.batch_norm``,
``torch.dropout``, ``torch.kl_div``, ...). They are ATen's signatures, not ``F.*``'s: the losses take
``reduction`` as an int (0 none, 1 mean, 2 sum), ``torch.embedding`` takes the weight first,
``torch.batch_norm``/``instance_norm`` take weight and bias before the running statistics, and
the dropouts take ``(input, p, train)``. Each one maps its arguments onto the functional; the
checks ``F`` makes in Python and ATen does not (``margin_ranking_loss``'s ranks, ``batch_norm``'s batch
of one) are left out, and the losses' default ``reduction`` is 0 (none), as PyTorch's bindings
of these functions read ATen's default. Loaded on the first lookup of one of ``NAMES`` on ``retrograd``
(it imports ``retrograd.nn``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from . import _NN_FUNCTIONS
from .nn import functional as F
from .nn._functional_grid import affine_grid_generator as _affine_grid_generator
from .nn._functional_sampling import grid_sampler, grid_sampler_2d, grid_sampler_3d  # noqa: F401 - torch.* names
from .nn.functional import _nn, _unary
from .ops.op import apply
from .tensor import Tensor

# The names are listed once, in the package (``_NN_FUNCTIONS``): it serves them on first lookup.
NAMES = tuple(sorted(_NN_FUNCTIONS))

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: int) -> str:
    """ATen's reduction enum (0 none, 1 mean, 2 sum) as ``F``'s string."""
    if not isinstance(reduction, int) or isinstance(reduction, bool) or not 0 <= reduction <= 2:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _stride(stride: Any) -> Any:
    # ATen spells "stride = kernel_size" as an empty list
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


# -- the names whose ATen signature is F's own: F's functions themselves, listed once -------------

_SAME_AS_F = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "rms_norm",
    "bilinear", "prelu", "hardshrink", "cosine_similarity", "pairwise_distance", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "adaptive_avg_pool1d",
)
globals().update((name, getattr(F, name)) for name in _SAME_AS_F)


# -- convolutions ----------------------------------------------------------------------------------

def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """``conv{1,2,3}d`` or ``conv_transpose{1,2,3}d``, picked by the weight's rank and ``transposed``.

    >>> import retrograd as rg
    >>> rg.convolution(rg.ones(1, 1, 4), rg.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight to convolution, but got weight of size: "
                           f"[{', '.join(str(s) for s in weight.shape)}]")
    from .nn._functional_conv import _conv_nd

    return _conv_nd(nd, input, weight, bias, stride, padding, dilation, groups, bool(transposed), output_padding)


# -- normalisation ------------------------------------------------------------------------------


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
               running_mean: Tensor | None, running_var: Tensor | None, training: bool, momentum: float,
               eps: float, cudnn_enabled: bool) -> Tensor:
    """``F.batch_norm`` with ATen's argument order (weight and bias first).

    >>> import retrograd as rg
    >>> rg.batch_norm(rg.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 1e-5, False).tolist()
    [[-0.9999949932098389], [0.9999949932098389]]
    """
    if training and input.dim() >= 2:  # (no batch-of-one check: ATen normalises it to zeros)
        return apply(_nn.native_batch_norm,  # type: ignore[no-any-return]
                     (input, weight, bias, running_mean, running_var, True, momentum, eps))
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                  running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``F.instance_norm`` with ATen's argument order (weight and bias first).

    >>> import retrograd as rg
    >>> rg.instance_norm(rg.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 1e-5, False).tolist()
    [[[-0.9999949932098389, 0.9999949932098389]]]
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    """``F.layer_norm`` (``cudnn_enable`` is accepted and has no effect on the CPU).

    >>> import retrograd as rg
    >>> rg.layer_norm(rg.tensor([1.0, 3.0]), [2]).tolist()
    [-0.9999949932098389, 0.9999949932098389]
    """
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    """``F.group_norm`` (``cudnn_enabled`` is accepted and has no effect on the CPU).

    >>> import retrograd as rg
    >>> rg.group_norm(rg.tensor([[1.0, 3.0]]), 1).tolist()
    [[-0.9999949932098389, 0.9999949932098389]]
    """
    return F.group_norm(input, num_groups, weight, bias, eps)


affine_grid_generator = _affine_grid_generator


def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``weight_norm``'s
    norm); ``dim=-1`` is the norm of the whole tensor.

    >>> import retrograd as rg
    >>> rg.norm_except_dim(rg.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0], [1.0]]
    """
    for arg, value, pos in (("pow", pow, 2), ("dim", dim, 3)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"norm_except_dim(): argument '{arg}' (position {pos}) must be int, not "
                            f"{type(value).__name__}")
    if dim == -1:
        return apply(_nn.norm_all, (v, pow, None, False))  # type: ignore[no-any-return]
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return apply(_nn.norm, (v.contiguous().view(v.shape[0], -1), pow, (1,), False)).view(shape)  # type: ignore[no-any-return]
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return apply(_nn.norm, (v.contiguous().view(-1, v.shape[-1]), pow, (0,), False)).view(shape)  # type: ignore[no-any-return]
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# -- dropout: (input, p, train) ----------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:  # (ATen's RuntimeError, where F raises a ValueError)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_variant(name: str, inplace: bool, feature: bool, alpha: bool) -> Callable[[Tensor, float, bool], Tensor]:
    """ATen's ``torch.<name>(input, p, train)``: ``F``'s dropout of that kind (whole channels for
    ``feature``, SELU-preserving for ``alpha``), in place for a trailing ``_``."""

    def variant(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
        _check_p(p)
        return F._dropout_impl(input, p, train, inplace, feature=feature, alpha=alpha)

    variant.__name__ = variant.__qualname__ = name
    variant.__doc__ = (f"``F.{name.rstrip('_')}(input, p, train{', inplace=True' if inplace else ''})`` "
                       "with ATen's signature and error.")
    return variant


dropout = _dropout_variant("dropout", False, False, False)
dropout_ = _dropout_variant("dropout_", True, False, False)
alpha_dropout = _dropout_variant("alpha_dropout", False, False, True)
alpha_dropout_ = _dropout_variant("alpha_dropout_", True, False, True)
feature_dropout = _dropout_variant("feature_dropout", False, True, False)
feature_dropout_ = _dropout_variant("feature_dropout_", True, True, False)
feature_alpha_dropout = _dropout_variant("feature_alpha_dropout", False, True, True)
feature_alpha_dropout_ = _dropout_variant("feature_alpha_dropout_", True, True, True)


# -- embeddings ---------------------------------------------------------------------------------


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at ``indices`` (ATen's order: the weight first); a negative
    ``padding_idx`` means none.

    >>> import retrograd as rg
    >>> rg.embedding(rg.tensor([[0.0], [5.0]]), rg.tensor([1, 1])).tolist()
    [[5.0], [5.0]]
    """
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:  # noqa: A002
    """Rescale, in place, the rows of ``input`` at ``indices`` whose ``norm_type``-norm exceeds
    ``max_norm`` down to ``max_norm`` (what ``embedding(max_norm=...)`` does first).

    >>> import retrograd as rg
    >>> rg.embedding_renorm_(rg.tensor([[3.0, 4.0], [0.3, 0.4]]), rg.tensor([0, 1]), 1.0, 2.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    F._embedding_renorm(input, indices._data.reshape(-1), max_norm, norm_type)
    return input


# -- activations --------------------------------------------------------------------------------


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """``F.celu``.

    >>> import retrograd as rg
    >>> rg.celu(rg.tensor([1.0])).tolist()
    [1.0]
    """
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``celu``."""
    return F.celu_(input, alpha)


def selu(input: Tensor) -> Tensor:  # noqa: A002
    """``F.selu``.

    >>> import retrograd as rg
    >>> rg.selu(rg.tensor([0.0])).tolist()
    [0.0]
    """
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``selu``."""
    return F.selu_(input)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, generator: Any,  # noqa: A002
           inplace: bool) -> Tensor:
    if generator is None or not training:
        return F.rrelu(input, lower, upper, training, inplace)
    import numpy as np

    # as F.rrelu, from ``generator``'s stream: one U(lower, upper) double per element <= 0, in order
    data = input._data
    negative = data <= 0
    opmath = np.float64 if data.dtype == np.float64 else np.float32
    low, high = float(opmath(lower)), float(opmath(upper))
    draws = generator.stream.unit_double(int(negative.sum())) * (high - low) + low
    noise: Any = np.ones(data.shape, data.dtype)
    noise[negative] = draws
    return _unary(_nn.rrelu_with_noise, input, (noise,), inplace, _nn.rrelu_with_noise_)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          generator: Any = None) -> Tensor:
    """``F.rrelu``, drawing the training slopes from ``generator`` (default: the global one).

    >>> import retrograd as rg
    >>> rg.rrelu(rg.tensor([-1.0, 2.0]), 0.125, 0.375).tolist()
    [-0.25, 2.0]
    """
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
           generator: Any = None) -> Tensor:
    """In-place ``rrelu``."""
    return _rrelu(input, lower, upper, training, generator, True)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """``value`` where ``input <= threshold``, else ``input``.

    >>> import retrograd as rg
    >>> rg.threshold(rg.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place ``threshold``."""
    return F.threshold_(input, threshold, value)


# -- losses: reduction is ATen's int ------------------------------------------------------------


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    """``F.kl_div`` with ``reduction`` as an int (1, mean, over every element: no warning here).

    >>> import retrograd as rg
    >>> rg.kl_div(rg.tensor([0.0]), rg.tensor([1.0]), 2).item()
    0.0
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "reduction: 'mean' divides", UserWarning)
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``F.margin_ranking_loss`` with ``reduction`` as an int.

    >>> import retrograd as rg
    >>> rg.margin_ranking_loss(rg.tensor([1.0]), rg.tensor([2.0]), rg.tensor([1.0])).item()
    1.0
    """
    # (no rank check, unlike F's: the operands broadcast)
    scores = apply(_nn.add_scalar, (-target * (input1 - input2), margin))
    return F._apply_reduction(apply(_nn.clamp_min, (scores, 0)), _reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:  # noqa: A002
    """``F.hinge_embedding_loss`` with ``reduction`` as an int.

    >>> import retrograd as rg
    >>> rg.hinge_embedding_loss(rg.tensor([0.25]), rg.tensor([-1.0])).item()
    0.75
    """
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``F.cosine_embedding_loss`` with ``reduction`` as an int.

    >>> import retrograd as rg
    >>> round(rg.cosine_embedding_loss(rg.tensor([[1.0, 0.0]]), rg.tensor([[1.0, 0.0]]), rg.tensor([1])).item(), 6)
    0.0
    """
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-06, swap: bool = False, reduction: int = 0) -> Tensor:
    """``F.triplet_margin_loss`` with ``reduction`` as an int.

    >>> import retrograd as rg
    >>> rg.triplet_margin_loss(rg.zeros(1, 2), rg.zeros(1, 2), rg.zeros(1, 2), eps=0.0).item()
    1.0
    """
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Tensor:
    """``F.poisson_nll_loss`` with every argument required and ``reduction`` as an int.

    >>> import retrograd as rg
    >>> rg.poisson_nll_loss(rg.tensor([0.0]), rg.tensor([1.0]), True, False, 1e-8, 1).item()
    1.0
    """
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    """``F.binary_cross_entropy_with_logits`` with ``pos_weight`` before ``reduction`` (an int).

    >>> import retrograd as rg
    >>> round(rg.binary_cross_entropy_with_logits(rg.tensor([0.0]), rg.tensor([1.0])).item(), 4)
    0.6931
    """
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


# -- pooling and padding ------------------------------------------------------------------------


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """``F.max_pool1d`` (an empty ``stride`` is the kernel size).

    >>> import retrograd as rg
    >>> rg.max_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[3.0, 2.0]]
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """``F.max_pool2d`` (an empty ``stride`` is the kernel size).

    >>> import retrograd as rg
    >>> rg.max_pool2d(rg.tensor([[[1.0, 3.0], [2.0, 0.0]]]), 2).tolist()
    [[[3.0]]]
    """
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """``F.max_pool3d`` (an empty ``stride`` is the kernel size).

    >>> import retrograd as rg
    >>> rg.max_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of ``max_pool1d``.

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.max_pool1d_with_indices(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)]
    [[[3.0, 2.0]], [[1, 2]]]
    """
    out = F.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, True)
    return tuple(out)  # type: ignore[return-value]


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """``F.avg_pool1d`` (an empty ``stride`` is the kernel size).

    >>> import retrograd as rg
    >>> rg.avg_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[2.0, 1.0]]
    """
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(values, indices)`` of ``F.adaptive_max_pool1d``.

    >>> import retrograd as rg
    >>> [t.tolist() for t in rg.adaptive_max_pool1d(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)]
    [[[3.0, 2.0]], [[1, 2]]]
    """
    return tuple(F.adaptive_max_pool1d_with_indices(input, output_size))  # type: ignore[return-value]


def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:  # noqa: A002
    """``F.pad(input, pad, value=value)``: pairs of (before, after) counts from the last dim back;
    negative counts crop.

    >>> import retrograd as rg
    >>> rg.constant_pad_nd(rg.tensor([1.0, 2.0]), [1, -1], 9.0).tolist()
    [9.0, 1.0]
    """
    return F.pad(input, list(pad), "constant", value)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss`` with ``reduction`` as an int.

    >>> import retrograd as rg
    >>> lp = rg.zeros(2, 1, 2).log_softmax(2)
    >>> [round(v, 4) for v in rg.ctc_loss(lp, rg.tensor([[1]]), [2], [1]).tolist()]
    [0.2877]
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


# -- embedding_bag: ATen's signature and its three extra outputs -------------------------------


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                  mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None,
                  ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``F.embedding_bag`` (mode 0 sum, 1 mean, 2 max) with ATen's extra outputs: the bag of each
    index (``offset2bag``), each bag's count of non-padding indices (``bag_size``; zeros for
    sum) and ``max_indices`` (max: the weight row giving each maximum; mean: ``bag_size``; sum:
    zeros).

    >>> import retrograd as rg
    >>> w = rg.tensor([[1.0], [5.0], [3.0]])
    >>> [t.tolist() for t in rg.embedding_bag(w, rg.tensor([0, 1, 2]), rg.tensor([0, 2]), mode=2)]
    [[[5.0], [3.0]], [0, 0, 1], [2, 1], [[1], [2]]]
    """
    import numpy as np

    # ATen's own checks, where they differ from F.embedding_bag's
    if weight.dim() != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if indices.dim() != 1:  # (ATen reads other ranks inconsistently: refused here)
        raise RuntimeError(f"embedding_bag: expected 1-D indices with offsets, got {indices.dim()}-D indices; "
                           "nn.functional.embedding_bag takes 2-D indices without offsets")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.numel() != indices.numel():
            raise RuntimeError("Expected per_sample_weights.value().numel() == indices.numel() to be true, but got "
                               "false.  (Could this error message be improved?  If so, please report an enhancement "
                               "request to PyTorch.)")
        per_sample_weights = per_sample_weights.reshape(indices.shape)
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq and mode != 2,
                          mode=("sum", "mean", "max")[mode], sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx = indices._data.reshape(-1)
    starts = offsets._data.astype(np.int64)
    num_bags = out.shape[0]
    itype = idx.dtype
    bag = np.maximum(np.searchsorted(starts[:num_bags], np.arange(len(idx)), side="right") - 1, 0)
    kept = np.ones(len(idx), bool)
    if padding_idx is not None:
        kept = idx != (padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx)
    if mode == 0:
        sizes = np.zeros(num_bags, itype)
        max_indices = np.zeros(num_bags, itype)
    else:
        sizes = np.bincount(bag[kept], minlength=num_bags).astype(itype)
        max_indices = sizes
    if mode == 2:
        # the first kept index whose row holds each bag's maximum, 0 for an empty bag
        rows = weight._data[idx[kept]]
        hit = rows == out._data[bag[kept]]
        position = np.where(hit, np.arange(len(rows))[:, None], len(rows))
        first = np.full(out.shape, len(rows))
        np.minimum.at(first, bag[kept], position)
        chosen = np.append(idx[kept], 0)
        max_indices = chosen[first].astype(itype)
    make = Tensor._make
    return out, make(bag.astype(itype)), make(sizes), make(np.asarray(max_indices))
