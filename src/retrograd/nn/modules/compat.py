"""Layers PyTorch keeps for old code: the deprecated ``NLLLoss2d`` and ``Container`` (a
``FutureWarning`` on construction) and ``SyncBatchNorm``, which without a process group (always,
here: there is no ``torch.distributed``) is ``BatchNorm`` over any input of two dims or more."""

from __future__ import annotations

import warnings
from typing import Any

from ...tensor import Tensor
from .loss import NLLLoss
from .module import Module
from .normalization import _BatchNorm

__all__ = ["Container", "NLLLoss2d", "SyncBatchNorm"]


class NLLLoss2d(NLLLoss):
    """Deprecated: ``NLLLoss`` (which takes (N, C, H, W) input itself).

    >>> import warnings, retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.nn.NLLLoss2d()(rg.tensor([[-1.0, -2.0]]), rg.tensor([1])).item()
    2.0
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
            "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """Deprecated: a ``Module`` holding the keyword arguments as submodules.

    >>> import warnings, retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     [name for name, _ in rg.nn.Container(a=rg.nn.ReLU()).named_children()]
    ['a']
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation synchronised across processes; with no process group it is
    ``BatchNorm`` over (N, C, *) input.

    >>> import retrograd as rg
    >>> rg.nn.SyncBatchNorm(3)(rg.ones(4, 3, 2)).shape
    torch.Size([4, 3, 2])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` in it replaced by a ``SyncBatchNorm`` sharing its
        parameters and running statistics.

        >>> import retrograd as rg
        >>> rg.nn.SyncBatchNorm.convert_sync_batchnorm(rg.nn.Sequential(rg.nn.BatchNorm2d(2)))
        Sequential(
          (0): SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        )
        """
        output = module
        if isinstance(module, _BatchNorm):
            output = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                         process_group, bias=module.bias is not None)
            if module.affine:
                output.weight = module.weight
                output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
