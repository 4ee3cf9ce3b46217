"""``nn.functional.affine_grid``: the sampling grid of a batch of affine matrices (the op is
``ops/conv.py``'s ``affine_grid_generator``). Re-exported by ``nn/functional.py``."""

from __future__ import annotations

import warnings
from typing import Any

from ..ops import conv as _C
from ..ops.op import apply
from ..tensor import Tensor

__all__ = ["affine_grid"]


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) grid of normalised input coordinates that the affine
    matrices ``theta`` (N, 2, 3) (or (N, 3, 4)) map the output grid of ``size`` to; with
    ``grid_sample`` it gives spatial transformer networks.

    >>> import retrograd as rg
    >>> rg.nn.functional.affine_grid(rg.tensor([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 2, 2), align_corners=True).tolist()
    [[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]]
    """
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size) if not isinstance(size, tuple) else size
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(size[2:]) <= 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)


def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: ``affine_grid`` without its checks and warnings.

    >>> import retrograd as rg
    >>> rg.affine_grid_generator(rg.tensor([[[2.0, 0, 0], [0, 1, 0]]]), [1, 1, 1, 2], True).tolist()
    [[[[-2.0, 0.0], [2.0, 0.0]]]]
    """
    size = tuple(int(s) for s in size)
    if theta.shape[0] != size[0]:
        nd = len(size) - 2
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {nd + 1}] "
                           f"but got: [{theta.shape[0]}, {nd + 1}].")
    return apply(_C.affine_grid_generator, (theta, size, bool(align_corners)))  # type: ignore[no-any-return]
