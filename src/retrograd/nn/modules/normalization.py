"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``, ``LayerNorm``,
``GroupNorm``, ``RMSNorm`` and ``LocalResponseNorm``.

Batch and instance norms keep ``running_mean``/``running_var`` (float) and ``num_batches_tracked``
(int64) buffers when ``track_running_stats``; ``momentum=None`` makes the running statistics a
cumulative average over the batches seen.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from typing import Any

from ... import factories
from ..._dtype import int64
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _reset_affine, _weight_and_bias

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LayerNorm", "LocalResponseNorm", "RMSNorm",
]


class _NormBase(Module):
    """Parameters, buffers, initialisation and ``repr`` shared by batch and instance norms."""

    _version = 2
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _weight_and_bias(self, num_features if affine else None, num_features if affine and bias else None, device,
                         dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", factories.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", factories.tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()  # type: ignore[union-attr]
            self.running_var.fill_(1)  # type: ignore[union-attr]
            self.num_batches_tracked.zero_()  # type: ignore[union-attr]

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            _reset_affine(self.weight, self.bias)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: Any, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
                              assign: bool = False) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed load with the current count
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict = dict(state_dict)
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else factories.tensor(0, dtype=int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs, assign)


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input over the batch (and length).

    >>> import retrograd as rg
    >>> bn = rg.nn.BatchNorm1d(3)
    >>> [n for n, _ in bn.named_buffers()]
    ['running_mean', 'running_var', 'num_batches_tracked']
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input, per channel.

    >>> import retrograd as rg
    >>> rg.nn.BatchNorm2d(2)(rg.randn(4, 2, 3, 3)).shape
    torch.Size([4, 2, 3, 3])
    """

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input, per channel.

    >>> import retrograd as rg
    >>> rg.nn.BatchNorm3d(2)(rg.randn(2, 2, 2, 2, 2)).shape
    torch.Size([2, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim: int

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        n = self._no_batch_dim
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: Any, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
                              assign: bool = False) -> None:
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because "
                    f"{klass} does not track running stats by default since 0.4.0. Please remove these keys from "
                    "state_dict. If the running stats are actually needed, instead set track_running_stats=True in "
                    f"{klass} to enable them. See the documentation of {klass} for details."
                )
                state_dict = {k: v for k, v in state_dict.items() if k not in keys}
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs, assign)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Normalise each (sample, channel) of (N, C, L) or (C, L) input over its length.

    >>> import retrograd as rg
    >>> rg.nn.InstanceNorm1d(3)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalise each (sample, channel) of (N, C, H, W) or (C, H, W) input over H and W.

    >>> import retrograd as rg
    >>> rg.nn.InstanceNorm2d(2, affine=True)(rg.randn(2, 2, 3, 3)).shape
    torch.Size([2, 2, 3, 3])
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalise each (sample, channel) of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import retrograd as rg
    >>> rg.nn.InstanceNorm3d(1)(rg.randn(1, 2, 2, 2)).shape  # unbatched (C, D, H, W)
    torch.Size([1, 2, 2, 2])
    """

    _no_batch_dim = 4


def _shape_tuple(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with an elementwise affine map.

    >>> import retrograd as rg
    >>> ln = rg.nn.LayerNorm(4)
    >>> ln, ln.weight.shape
    (LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True), torch.Size([4]))
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        shape = self.normalized_shape
        _weight_and_bias(self, shape if elementwise_affine else None, shape if elementwise_affine and bias else None,
                         device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            _reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise over groups of channels (and the spatial dims), with a per-channel affine map.

    >>> import retrograd as rg
    >>> rg.nn.GroupNorm(2, 4)(rg.randn(3, 4, 5)).shape
    torch.Size([3, 4, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _weight_and_bias(self, num_channels if affine else None, num_channels if affine and bias else None, device,
                         dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            _reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x^2) + eps)`` over the trailing ``normalized_shape`` dims, times ``weight``.

    >>> import retrograd as rg
    >>> rg.nn.RMSNorm([2, 3])
    RMSNorm((2, 3), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(factories.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _ResponseNormalization(Module):
    """What ``LocalResponseNorm`` and ``CrossMapLRN2d`` (``cross_map_lrn.py``) share: their parameters
    ``size``, ``alpha``, ``beta``, ``k`` and how they are shown."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_ResponseNormalization):
    """Normalise each channel by the activity of its ``size`` neighbouring channels.

    >>> import retrograd as rg
    >>> rg.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)
