"""``nn.functional.grid_sample`` and the ``torch.grid_sampler*`` functions under it (the ops are
``ops/grid_sampler.py``). Re-exported by ``nn/functional.py``."""

from __future__ import annotations

import warnings

from .._dtype import scalar_type_name
from ..ops import grid_sampler as _G
from ..ops.op import apply
from ..tensor import Tensor

__all__ = ["grid_sample"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _check_common(input: Tensor, grid: Tensor) -> None:  # noqa: A002
    # ATen's check_grid_sampler_common, in its order
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {_sizes(grid)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {_sizes(input)} with dimension {i} being empty")


def _check_enums(interpolation_mode: int, padding_mode: int) -> None:
    # (PyTorch does not check these; a value outside them would sample with an undefined mode)
    if interpolation_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0 (bilinear), 1 (nearest) or "
                           f"2 (bicubic), but got: {interpolation_mode}")
    if padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0 (zeros), 1 (border) or 2 (reflection), "
                           f"but got: {padding_mode}")


def _sample(nd: int, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
            align_corners: bool) -> Tensor:
    if input.dim() != nd + 2 or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, but "
                           f"got input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    _check_enums(int(interpolation_mode), int(padding_mode))
    if not input.is_floating_point():
        raise NotImplementedError(f'"grid_sampler_{nd}d_cpu_kernel_impl" not implemented for '
                                  f"'{scalar_type_name(input._data.dtype)}'")
    if grid._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._data.dtype)} but found "
                           f"{scalar_type_name(grid._data.dtype)}")
    op = _G.grid_sampler_2d if nd == 2 else _G.grid_sampler_3d
    return apply(op, (input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners)))  # type: ignore[no-any-return]


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_2d``: ``grid_sample`` of a 4-D input with the modes as ATen's enums
    (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection).

    >>> import retrograd as rg
    >>> rg.grid_sampler_2d(rg.tensor([[[[1.0, 3.0]]]]), rg.tensor([[[[0.0, 0.0]]]]), 0, 1, True).tolist()
    [[[[2.0]]]]
    """
    _check_common(input, grid)
    return _sample(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_3d``: ``grid_sample`` of a 5-D input, the modes as ATen's enums.

    >>> import retrograd as rg
    >>> x = rg.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> rg.grid_sampler_3d(x, rg.zeros(1, 1, 1, 1, 3), 0, 0, True).tolist()
    [[[[[3.5]]]]]
    """
    _check_common(input, grid)
    return _sample(3, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                 align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: ``grid_sampler_2d`` for a 4-D input, else ``grid_sampler_3d``.

    >>> import retrograd as rg
    >>> rg.grid_sampler(rg.tensor([[[[1.0, 3.0]]]]), rg.tensor([[[[0.5, 0.0]]]]), 1, 0, False).tolist()
    [[[[3.0]]]]
    """
    _check_common(input, grid)
    return _sample(2 if input.dim() == 4 else 3, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalised coordinates of ``grid``
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), whose last dim is (x, y[, z]) in [-1, 1];
    differentiable in both.

    >>> import retrograd as rg
    >>> x = rg.tensor([[[[0.0, 10.0], [20.0, 30.0]]]])
    >>> rg.nn.functional.grid_sample(x, rg.tensor([[[[0.0, 0.0], [1.0, -1.0]]]]), align_corners=True).tolist()
    [[[[15.0, 10.0]]]]
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", UserWarning, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)
