"""Lazy modules: ``LazyLinear``, the lazy convolutions and norms. Their input size (features,
channels) is read from the first input: until then their parameters and running statistics are
``UninitializedParameter``/``UninitializedBuffer`` placeholders; the first forward (or a
``load_state_dict``) materialises them, initialises them as the plain module does, and turns the
module into that plain class (``LazyLinear`` becomes ``Linear``), as PyTorch's ``LazyModuleMixin``."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping
from typing import Any

from ...tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, _UninitializedMixin
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = [
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
]


def is_lazy(value: Any) -> bool:
    return isinstance(value, _UninitializedMixin)


class LazyModuleMixin:
    """Shape inference on the first call: a forward pre-hook calls ``initialize_parameters(*args)``
    once, then the module becomes ``cls_to_become``.

    >>> import retrograd as rg
    >>> m = rg.nn.LazyLinear(2)
    >>> m.has_uninitialized_params(), m(rg.ones(4, 3)).shape, m
    (True, torch.Size([4, 2]), Linear(in_features=3, out_features=2, bias=True))
    """

    cls_to_become: type | None = None
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still a placeholder."""
        return any(is_lazy(v) for v in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise the placeholders from the input (each lazy module defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _infer_parameters(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore[attr-defined]
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, *args: Any, **kwargs: Any) -> None:
        # A checkpoint gives the placeholders their shapes (PyTorch's lazy load hook).
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if is_lazy(value) and key in state_dict and isinstance(state_dict[key], Tensor) \
                    and not is_lazy(state_dict[key]):
                value.materialize(state_dict[key].shape)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)  # type: ignore[misc]


# -- Linear ---------------------------------------------------------------------------------------


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of its first input.

    >>> import retrograd as rg
    >>> rg.nn.LazyLinear(4)
    LazyLinear(in_features=0, out_features=4, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]  # noqa: A002
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad

            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (loaded from a checkpoint: the weight has the shape)
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# -- convolutions ---------------------------------------------------------------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    _nd: int
    _out_channels: int
    weight: Any
    bias: Any

    def _lazy_setup(self, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = self._out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]  # noqa: A002
        if not self.has_uninitialized_params():
            return
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.dim() == nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        from ...autograd.grad_mode import no_grad

        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base: type) -> type:
    """``Lazy<base>``: ``base``'s constructor without ``in_channels``."""
    name = "Lazy" + base.__name__
    signature = inspect.signature(base.__init__)  # type: ignore[misc]

    def __init__(self: Any, out_channels: int, kernel_size: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, 0, out_channels, kernel_size, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["self"]
        bias = arguments["bias"]
        # (in_channels and out_channels 0, no bias, until the first input, as PyTorch's)
        arguments.update(in_channels=0, out_channels=0, bias=False)
        self._out_channels = out_channels
        LazyModuleMixin.__init__(self, **arguments)
        self._lazy_setup(bias, arguments["dtype"])

    doc = (f"``{base.__name__}`` whose ``in_channels`` is read from its first input.\n\n"
           f"    >>> import retrograd as rg\n    >>> rg.nn.{name}(4, 3).has_uninitialized_params()\n    True\n")
    return type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "cls_to_become": base, "__doc__": doc,
                                                  "__module__": __name__})


LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv(base) for base in (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


# -- batch and instance norms ---------------------------------------------------------------------


class _LazyNormBase(LazyModuleMixin):
    num_features: int
    affine: bool
    track_running_stats: bool
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def _lazy_setup(self, dtype: Any) -> None:
        if self.affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]  # noqa: A002
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]  # (dim 1 even for an unbatched instance norm, as PyTorch)
        from ...autograd.grad_mode import no_grad

        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                value = getattr(self, name)
                if is_lazy(value):
                    value.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base: type) -> type:
    """``Lazy<base>``: ``base``'s constructor without ``num_features``."""
    name = "Lazy" + base.__name__
    defaults = (True, True)  # affine, track_running_stats: PyTorch's lazy norms default both to True

    def __init__(self: Any, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = defaults[0],
                 track_running_stats: bool = defaults[1], device: Any = None, dtype: Any = None) -> None:
        LazyModuleMixin.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            from ... import factories
            from ..._dtype import int64

            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", factories.tensor(0, dtype=int64))
        self._lazy_setup(dtype)

    doc = (f"``{base.__name__}`` whose ``num_features`` is read from its first input.\n\n"
           f"    >>> import retrograd as rg\n    >>> rg.nn.{name}()\n"
           f"    {name}(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n")
    return type(name, (_LazyNormBase, base), {"__init__": __init__, "cls_to_become": base,
                                              "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm(base) for base in (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
