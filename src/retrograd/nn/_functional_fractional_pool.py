"""``nn.functional.fractional_max_pool2d`` / ``fractional_max_pool3d`` (and ``_with_indices``):
PyTorch's argument handling and checks around ``ops/fractional_pool.py``. Without
``_random_samples`` the samples are ``rand(N, C, 2 or 3)`` from the global stream, as in PyTorch,
so a seeded program picks PyTorch's windows. Re-exported by ``nn/functional.py``."""

from __future__ import annotations

from typing import Any

from .._dtype import scalar_type_name
from ..ops import fractional_pool as _P
from ..ops.op import apply
from ..tensor import Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _ntuple(value: Any, nd: int) -> tuple[Any, ...]:
    # PyTorch's _pair/_triple: an iterable passes through, anything else is repeated
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * nd


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _check(nd: int, input: Tensor, kernel: tuple[int, ...], out: tuple[int, ...],  # noqa: A002
           samples: Tensor) -> None:
    """ATen's checks, in its order."""
    name = f"fractional_max_pool{nd}d"
    where = name + ("(): " if nd == 2 else "_out(): ")
    three = "" if nd == 2 else " three"
    if len(kernel) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of{three} Ints")
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of{three} Ints")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}Expected {nd + 1}D or {nd + 2}D tensor, but got: {_sizes(input)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{where}Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{_sizes(input)} with dimension {i} being empty.")
    size = input.shape[-nd:]
    # 2-D checks height then width and allows out + pool - 1 == size; 3-D checks time, width,
    # height and does not
    order = range(nd) if nd == 2 else (0, 2, 1)
    for a in order:
        last = out[a] + kernel[a] - 1
        if last > size[a] or (nd == 3 and last == size[a]):
            raise RuntimeError(f"{where}pool {_AXES[nd][a]} {kernel[a]} too large relative to input "
                               f"{_AXES[nd][a]} {size[a]}")
    if samples._data.dtype != input._data.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch, channels = (1, input.shape[0]) if input.dim() == nd + 1 else input.shape[:2]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    if not input.is_floating_point():
        kernel_name = "fractional_max_pool2d_out_frame" if nd == 2 else "fractional_max_pool3d_out_frame"
        raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                  f"'{scalar_type_name(input._data.dtype)}'")


def _pool(nd: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,  # noqa: A002
          _random_samples: Tensor | None) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # (PyTorch's own len(): a bare float is a TypeError)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.size(-nd + a) * ratio[a]) for a in range(nd)]
    if _random_samples is None:
        from .. import factories

        batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = factories.rand(batch, input.size(-nd - 1), nd, dtype=input.dtype)
    kernel = tuple(int(k) for k in _ntuple(kernel_size, nd))
    out = tuple(int(o) for o in _ntuple(output_size, nd))
    _check(nd, input, kernel, out, _random_samples)
    op = _P.fractional_max_pool2d if nd == 2 else _P.fractional_max_pool3d
    return apply(op, (input, kernel, out, _random_samples._data))  # type: ignore[no-any-return]


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Fractional max pooling over (N, C, H, W) or (C, H, W) input to ``output_size`` (or
    ``output_ratio`` of the input size), returning ``(values, indices)``; the window starts come
    from ``_random_samples`` (N, C, 2) in [0, 1), drawn with ``rand`` when not given.

    >>> import retrograd as rg
    >>> x = rg.arange(16.0).reshape(1, 1, 4, 4)
    >>> v, i = rg.nn.functional.fractional_max_pool2d_with_indices(x, 2, (2, 2), _random_samples=rg.zeros(1, 1, 2))
    >>> v.tolist(), i.tolist()
    ([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])
    """
    return _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool2d_with_indices``'s values, or both when ``return_indices``.

    >>> import retrograd as rg
    >>> x = rg.arange(16.0).reshape(1, 4, 4)
    >>> rg.nn.functional.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5), _random_samples=rg.zeros(1, 1, 2)).tolist()
    [[[10.0, 11.0], [14.0, 15.0]]]
    """
    values, indices = _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (values, indices) if return_indices else values


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input, returning ``(values,
    indices)`` (flat over T * H * W); ``_random_samples`` is (N, C, 3).

    >>> import retrograd as rg
    >>> x = rg.arange(27.0).reshape(1, 1, 3, 3, 3)
    >>> v, i = rg.nn.functional.fractional_max_pool3d_with_indices(x, 2, 1, _random_samples=rg.zeros(1, 1, 3))
    >>> v.tolist(), i.tolist()
    ([[[[[26.0]]]]], [[[[[26]]]]])
    """
    return _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool3d_with_indices``'s values, or both when ``return_indices``.

    >>> import retrograd as rg
    >>> x = rg.arange(27.0).reshape(1, 3, 3, 3)
    >>> rg.nn.functional.fractional_max_pool3d(x, 2, 1, _random_samples=rg.zeros(1, 1, 3)).tolist()
    [[[[26.0]]]]
    """
    values, indices = _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (values, indices) if return_indices else values
