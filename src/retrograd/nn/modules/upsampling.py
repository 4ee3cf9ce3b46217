"""``Upsample`` and its fixed-mode forms ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resize (N, C, *spatial) input to ``size`` or by ``scale_factor`` (``F.interpolate``).

    >>> import retrograd as rg
    >>> up = rg.nn.Upsample(scale_factor=2, mode='nearest')
    >>> up, up(rg.tensor([[[1.0, 2.0]]])).tolist()
    (Upsample(scale_factor=2.0, mode='nearest'), [[[1.0, 1.0, 2.0, 2.0]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')``.

    >>> import retrograd as rg
    >>> rg.nn.UpsamplingNearest2d(scale_factor=2)(rg.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)``.

    >>> import retrograd as rg
    >>> rg.nn.UpsamplingBilinear2d(size=3)(rg.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 3, 3])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
