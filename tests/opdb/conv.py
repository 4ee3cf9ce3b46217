"""Op database entries for convolutions, pooling, unfold/fold and interpolation
(``retrograd.nn.functional``). Shapes are small: gradcheck and gradgradcheck cost O(numel^2).

A ``Sample(noncontiguous=True)`` has its arrays (of 2 or more dims) transposed in dims 0 and 1 before the
op sees them, so those samples give the arrays with the first two dims swapped."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import OpInfo, Sample, distinct, uniform


def _F(lib: Any) -> Any:
    return lib.nn.functional


# -- convolution --------------------------------------------------------------------------------


def _conv2d(lib: Any, x: Any, w: Any, b: Any = None, **kwargs: Any) -> Any:
    with warnings.catch_warnings():  # padding='same' with an even kernel warns, as in PyTorch
        warnings.simplefilter("ignore")
        return _F(lib).conv2d(x, w, b, **kwargs)


def _conv1d(lib: Any, x: Any, w: Any, b: Any = None, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _F(lib).conv1d(x, w, b, **kwargs)


def _conv2d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 4, 4), uniform(rng, 3, 2, 3, 3), uniform(rng, 3)), {"padding": 1},
               name="bias padding"),
        Sample((uniform(rng, 1, 4, 5, 5), uniform(rng, 4, 2, 2, 3)),
               {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}, name="stride dilation groups"),
        Sample((uniform(rng, 2, 4, 4), uniform(rng, 2, 2, 2, 2), uniform(rng, 2)), name="unbatched"),
        Sample((uniform(rng, 2, 2, 4, 3), uniform(rng, 2, 3, 2, 2)), {"padding": 1}, name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 1, 2, 4, 4), uniform(rng, 2, 2, 3, 2)), {"padding": "same"}, name="same even kernel"),
        Sample((uniform(rng, 1, 1, 5, 4), uniform(rng, 2, 1, 2, 3), uniform(rng, 2)),
               {"padding": "same", "dilation": 2}, name="same dilated"),
        Sample((uniform(rng, 1, 2, 4, 4), uniform(rng, 2, 2, 3, 3)), {"padding": "valid"}, name="valid"),
        Sample((uniform(rng, 0, 2, 4, 4), uniform(rng, 3, 2, 3, 3), uniform(rng, 3)), name="empty batch"),
    ]


def _conv1d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 6), uniform(rng, 3, 2, 3), uniform(rng, 3)), {"padding": 1}, name="bias padding"),
        Sample((uniform(rng, 2, 4, 7), uniform(rng, 4, 2, 2)), {"stride": 2, "dilation": 2, "groups": 2},
               name="stride dilation groups"),
        Sample((uniform(rng, 2, 5), uniform(rng, 2, 2, 2)), {"padding": "same"}, name="unbatched same even"),
        Sample((uniform(rng, 2, 2, 5), uniform(rng, 2, 3, 3)), {"padding": 2}, name="noncontiguous", noncontiguous=True),
    ]


def _conv3d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 1, 2, 3, 3, 3), uniform(rng, 2, 2, 2, 2, 2), uniform(rng, 2)), {"padding": (1, 0, 0)},
               name="bias padding"),
        Sample((uniform(rng, 2, 3, 4, 3), uniform(rng, 2, 1, 2, 2, 2)), {"stride": 2, "groups": 2},
               name="unbatched groups"),
    ]


def _conv_transpose2d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 3, 3), uniform(rng, 2, 3, 3, 3), uniform(rng, 3)), {"padding": 1},
               name="bias padding"),
        Sample((uniform(rng, 1, 4, 3, 2), uniform(rng, 4, 1, 2, 3), uniform(rng, 2)),
               {"stride": (2, 3), "padding": (0, 1), "output_padding": (1, 2), "groups": 2}, name="stride groups"),
        Sample((uniform(rng, 1, 2, 3, 3), uniform(rng, 2, 2, 2, 2)), {"output_padding": 1, "dilation": 2},
               name="output padding below dilation"),
        Sample((uniform(rng, 2, 3, 2), uniform(rng, 2, 2, 2, 2)), {"stride": 2}, name="unbatched"),
        Sample((uniform(rng, 2, 2, 3, 2), uniform(rng, 2, 2, 2, 2)), {"stride": 2, "output_padding": 1},
               name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 0, 2, 3, 3), uniform(rng, 2, 3, 2, 2)), name="empty batch"),
    ]


def _conv_transpose1d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 4), uniform(rng, 2, 3, 3), uniform(rng, 3)),
               {"stride": 2, "padding": 1, "output_padding": 1}, name="bias stride"),
        Sample((uniform(rng, 4, 3), uniform(rng, 4, 1, 2)), {"groups": 2, "dilation": 2}, name="unbatched groups"),
    ]


def _conv_transpose3d_samples(rng: np.random.Generator) -> list[Sample]:
    return [Sample((uniform(rng, 1, 2, 2, 2, 2), uniform(rng, 2, 1, 2, 2, 2), uniform(rng, 1)),
                   {"stride": (1, 2, 1), "padding": (0, 1, 0)}, name="bias stride")]


# -- pooling ------------------------------------------------------------------------------------


def _max_pool2d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 2, 4, 4), 2), name="kernel 2"),
        Sample((distinct(rng, 1, 2, 5, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil mode"),
        Sample((distinct(rng, 1, 1, 6, 5), (2, 3)), {"stride": (1, 2), "padding": (1, 1), "dilation": (2, 1)},
               name="dilation"),
        Sample((distinct(rng, 2, 5, 4), 2), {"stride": 1}, name="unbatched overlapping"),
        Sample((distinct(rng, 2, 2, 4, 4), 2), name="noncontiguous", noncontiguous=True),
        Sample((distinct(rng, 0, 2, 4, 4), 2), name="empty batch"),
    ]


def _max_pool1d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 2, 7), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil mode"),
        Sample((distinct(rng, 2, 6), 2), {"dilation": 2}, name="unbatched dilation"),
    ]


def _avg_pool2d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 4, 4), 2), name="kernel 2"),
        Sample((uniform(rng, 1, 2, 5, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil mode"),
        Sample((uniform(rng, 1, 2, 5, 4), (3, 2)),
               {"stride": (2, 1), "padding": 1, "ceil_mode": True, "count_include_pad": False},
               name="exclude padding"),
        Sample((uniform(rng, 1, 1, 4, 5), 2), {"stride": 1, "padding": 1, "divisor_override": 3},
               name="divisor override"),
        Sample((uniform(rng, 2, 5, 4), 2), {"stride": 1}, name="unbatched overlapping"),
        Sample((uniform(rng, 2, 2, 4, 4), 2), name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 0, 2, 4, 4), 2), name="empty batch"),
    ]


def _avg_pool1d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 7), 3), {"stride": 2, "padding": 1, "ceil_mode": True,
                                            "count_include_pad": False}, name="ceil mode"),
        Sample((uniform(rng, 2, 6), 2), name="unbatched"),
    ]


def _adaptive2d_samples(values: Any) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((values(rng, 2, 2, 5, 4), (3, 2)), name="shrink"),
            Sample((values(rng, 1, 2, 3, 4), (5, 3)), name="grow"),
            Sample((values(rng, 2, 5, 3), (None, 2)), name="unbatched keep height"),
            Sample((values(rng, 1, 2, 4, 4), 1), name="global"),
            Sample((values(rng, 2, 1, 4, 5), 2), name="noncontiguous", noncontiguous=True),
        ]

    return samples


def _adaptive1d_samples(values: Any) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [Sample((values(rng, 2, 2, 7), 3), name="shrink"), Sample((values(rng, 2, 5), 1), name="global"),
                Sample((values(rng, 2, 3), 5), name="unbatched grow")]

    return samples


# -- unfold / fold ------------------------------------------------------------------------------


def _unfold_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 4, 4), 2), name="kernel 2"),
        Sample((uniform(rng, 1, 2, 5, 4), (2, 3)), {"dilation": (2, 1), "padding": 1, "stride": (2, 1)},
               name="dilation padding stride"),
        Sample((uniform(rng, 2, 3, 3), 2), name="unbatched"),
        Sample((uniform(rng, 2, 1, 4, 3), 2), name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 0, 2, 3, 3), 2), name="empty batch"),
    ]


def _fold_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 8, 9), (4, 4), 2), name="kernel 2"),
        Sample((uniform(rng, 1, 12, 12), (5, 4), (2, 3)), {"dilation": (2, 1), "padding": 1, "stride": (2, 1)},
               name="dilation padding stride"),
        Sample((uniform(rng, 4, 6), (3, 4), 2), name="unbatched"),
        Sample((uniform(rng, 4, 2, 6), (3, 4), 2), name="noncontiguous", noncontiguous=True),
    ]


# -- interpolation ------------------------------------------------------------------------------


def _interp(lib: Any, x: Any, **kwargs: Any) -> Any:
    return _F(lib).interpolate(x, **kwargs)


def _interp_samples(rng: np.random.Generator) -> list[Sample]:
    s = [
        Sample((uniform(rng, 1, 2, 3),), {"scale_factor": 2.5}, name="nearest 1d scale"),
        Sample((uniform(rng, 1, 2, 5),), {"size": 3}, name="nearest 1d shrink"),
        Sample((uniform(rng, 2, 1, 3, 2),), {"size": (4, 5)}, name="nearest 2d size"),
        Sample((uniform(rng, 1, 2, 2, 3),), {"scale_factor": (1.5, 2.0)}, name="nearest 2d scale"),
        Sample((uniform(rng, 1, 1, 2, 2, 3),), {"scale_factor": 2}, name="nearest 3d"),
        Sample((uniform(rng, 1, 2, 5, 3),), {"size": (3, 4), "mode": "nearest-exact"}, name="nearest-exact"),
        Sample((uniform(rng, 1, 2, 4),), {"scale_factor": 1.7, "mode": "linear"}, name="linear scale"),
        Sample((uniform(rng, 1, 2, 4),), {"size": 7, "mode": "linear", "align_corners": True},
               name="linear align corners"),
        Sample((uniform(rng, 1, 2, 3, 3),), {"size": (5, 4), "mode": "bilinear"}, name="bilinear size"),
        Sample((uniform(rng, 1, 1, 4, 3),), {"scale_factor": (0.6, 1.5), "mode": "bilinear", "align_corners": True},
               name="bilinear align corners"),
        Sample((uniform(rng, 1, 1, 3, 3),), {"scale_factor": 1.5, "mode": "bilinear",
                                             "recompute_scale_factor": True}, name="bilinear recompute"),
        Sample((uniform(rng, 1, 1, 3, 4),), {"size": (5, 3), "mode": "bicubic"}, name="bicubic"),
        Sample((uniform(rng, 1, 1, 3, 3),), {"size": (4, 4), "mode": "bicubic", "align_corners": True},
               name="bicubic align corners"),
        Sample((uniform(rng, 1, 1, 2, 3, 2),), {"size": (3, 2, 4), "mode": "trilinear"}, name="trilinear"),
        Sample((uniform(rng, 1, 2, 5, 4),), {"size": (3, 2), "mode": "area"}, name="area"),
        Sample((uniform(rng, 2, 1, 3, 3),), {"size": (4, 5), "mode": "bilinear"}, name="noncontiguous", noncontiguous=True),
        Sample((uniform(rng, 0, 2, 3, 3),), {"scale_factor": 2, "mode": "bilinear"}, name="empty batch"),
    ]
    return s


OPS: list[OpInfo] = [
    OpInfo("conv2d", _conv2d, _conv2d_samples, covers=("conv2d",)),
    OpInfo("conv1d", _conv1d, _conv1d_samples, covers=("conv1d",)),
    OpInfo("conv3d", lambda lib, x, w, b=None, **kw: _F(lib).conv3d(x, w, b, **kw), _conv3d_samples),
    OpInfo("conv_transpose2d", lambda lib, x, w, b=None, **kw: _F(lib).conv_transpose2d(x, w, b, **kw),
           _conv_transpose2d_samples),
    OpInfo("conv_transpose1d", lambda lib, x, w, b=None, **kw: _F(lib).conv_transpose1d(x, w, b, **kw),
           _conv_transpose1d_samples),
    OpInfo("conv_transpose3d", lambda lib, x, w, b=None, **kw: _F(lib).conv_transpose3d(x, w, b, **kw),
           _conv_transpose3d_samples),
    OpInfo("max_pool2d", lambda lib, x, k, **kw: _F(lib).max_pool2d(x, k, **kw), _max_pool2d_samples),
    OpInfo("max_pool2d", lambda lib, x, k, **kw: _F(lib).max_pool2d(x, k, return_indices=True, **kw),
           _max_pool2d_samples, covers=("max_pool2d", "max_pool2d_with_indices"), variant_test_name="indices"),
    OpInfo("max_pool1d", lambda lib, x, k, **kw: _F(lib).max_pool1d(x, k, **kw), _max_pool1d_samples),
    OpInfo("max_pool1d", lambda lib, x, k, **kw: _F(lib).max_pool1d(x, k, return_indices=True, **kw),
           _max_pool1d_samples, covers=("max_pool1d", "max_pool1d_with_indices"), variant_test_name="indices"),
    OpInfo("avg_pool2d", lambda lib, x, k, **kw: _F(lib).avg_pool2d(x, k, **kw), _avg_pool2d_samples),
    OpInfo("avg_pool1d", lambda lib, x, k, **kw: _F(lib).avg_pool1d(x, k, **kw), _avg_pool1d_samples),
    OpInfo("adaptive_avg_pool2d", lambda lib, x, o: _F(lib).adaptive_avg_pool2d(x, o), _adaptive2d_samples(uniform)),
    OpInfo("adaptive_avg_pool1d", lambda lib, x, o: _F(lib).adaptive_avg_pool1d(x, o), _adaptive1d_samples(uniform)),
    OpInfo("adaptive_max_pool2d", lambda lib, x, o: _F(lib).adaptive_max_pool2d(x, o, return_indices=True),
           _adaptive2d_samples(distinct), covers=("adaptive_max_pool2d", "adaptive_max_pool2d_with_indices")),
    OpInfo("adaptive_max_pool1d", lambda lib, x, o: _F(lib).adaptive_max_pool1d(x, o, return_indices=True),
           _adaptive1d_samples(distinct), covers=("adaptive_max_pool1d", "adaptive_max_pool1d_with_indices")),
    OpInfo("unfold", lambda lib, x, k, **kw: _F(lib).unfold(x, k, **kw), _unfold_samples),
    OpInfo("fold", lambda lib, x, size, k, **kw: _F(lib).fold(x, size, k, **kw), _fold_samples),
    OpInfo("interpolate", _interp, _interp_samples, covers=("interpolate",)),
]


# -- 3-D pools, power-average pools and max_unpool ------------------------------------------------


def _max_pool3d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 2, 4, 4, 4), 2), name="kernel 2"),
        Sample((distinct(rng, 1, 2, 5, 4, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil mode"),
        Sample((distinct(rng, 1, 1, 5, 6, 5), (2, 2, 3)), {"stride": (1, 2, 1), "padding": (1, 0, 1),
                                                           "dilation": (2, 1, 1)}, name="dilation"),
        Sample((distinct(rng, 2, 3, 5, 4), 2), {"stride": 1}, name="unbatched overlapping"),
        Sample((distinct(rng, 2, 2, 4, 4, 4), 2), name="noncontiguous", noncontiguous=True),
        Sample((distinct(rng, 0, 2, 4, 4, 4), 2), name="empty batch"),
    ]


def _avg_pool3d_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 4, 4, 4), 2), name="kernel 2"),
        Sample((uniform(rng, 1, 2, 5, 4, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil mode"),
        Sample((uniform(rng, 1, 2, 5, 4, 3), (3, 2, 2)),
               {"stride": (2, 1, 1), "padding": 1, "ceil_mode": True, "count_include_pad": False},
               name="exclude padding"),
        Sample((uniform(rng, 1, 1, 3, 4, 5), 2), {"stride": 1, "padding": 1, "divisor_override": 3},
               name="divisor override"),
        Sample((uniform(rng, 2, 3, 5, 4), 2), {"stride": 1}, name="unbatched overlapping"),
        Sample((uniform(rng, 2, 2, 4, 4, 4), 2), name="noncontiguous", noncontiguous=True),
    ]


def _adaptive3d_samples(values: Any) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((values(rng, 2, 2, 5, 4, 3), (3, 2, 2)), name="shrink"),
            Sample((values(rng, 1, 2, 3, 2, 4), (4, 3, 3)), name="grow"),
            Sample((values(rng, 2, 5, 3, 4), (None, 2, 3)), name="unbatched keep depth"),
            Sample((values(rng, 1, 2, 3, 4, 4), 1), name="global"),
            Sample((values(rng, 2, 1, 4, 5, 3), 2), name="noncontiguous", noncontiguous=True),
        ]

    return samples


def _lp_samples(nd: int) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        spatial = (5, 4, 6)[:nd]
        x = np.abs(uniform(rng, 2, 2, *spatial)) + 0.5  # away from 0, where x ** p is not differentiable
        return [
            Sample((x, 2, 2), name="p 2"),
            Sample((x, 1.5, 3), {"stride": 1}, name="p 1.5 stride 1"),
            Sample((x, 3, 2), {"ceil_mode": True}, name="p 3 ceil mode"),
            Sample((uniform(rng, 2, *spatial), float("inf"), 2), name="p inf unbatched"),
        ]

    return samples


def _unpool(nd: int) -> Any:
    def fn(lib: Any, x: Any, source: Any, **kw: Any) -> Any:
        F = _F(lib)
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
        _, indices = pool(source.detach(), 2, return_indices=True, **kw)
        return unpool(x, indices, 2, **kw)

    return fn


def _unpool_inputs(nd: int) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((uniform(rng, 2, 2, *(2,) * nd), distinct(rng, 2, 2, *(4,) * nd)), grad=(True, False),
                   name="kernel 2"),
            Sample((uniform(rng, 2, *(3,) * nd), distinct(rng, 2, *(4,) * nd)), {"stride": 2, "padding": 1},
                   grad=(True, False), name="unbatched padding"),
        ]

    return samples


OPS += [
    OpInfo("max_pool3d", lambda lib, x, k, **kw: _F(lib).max_pool3d(x, k, **kw), _max_pool3d_samples),
    OpInfo("max_pool3d", lambda lib, x, k, **kw: _F(lib).max_pool3d(x, k, return_indices=True, **kw),
           _max_pool3d_samples, covers=("max_pool3d", "max_pool3d_with_indices"), variant_test_name="indices"),
    OpInfo("avg_pool3d", lambda lib, x, k, **kw: _F(lib).avg_pool3d(x, k, **kw), _avg_pool3d_samples),
    OpInfo("adaptive_avg_pool3d", lambda lib, x, o: _F(lib).adaptive_avg_pool3d(x, o), _adaptive3d_samples(uniform)),
    OpInfo("adaptive_max_pool3d", lambda lib, x, o: _F(lib).adaptive_max_pool3d(x, o, return_indices=True),
           _adaptive3d_samples(distinct), covers=("adaptive_max_pool3d", "adaptive_max_pool3d_with_indices")),
    OpInfo("lp_pool1d", lambda lib, x, p, k, **kw: _F(lib).lp_pool1d(x, p, k, **kw), _lp_samples(1)),
    OpInfo("lp_pool2d", lambda lib, x, p, k, **kw: _F(lib).lp_pool2d(x, p, k, **kw), _lp_samples(2)),
    OpInfo("lp_pool3d", lambda lib, x, p, k, **kw: _F(lib).lp_pool3d(x, p, k, **kw), _lp_samples(3)),
    OpInfo("max_unpool1d", _unpool(1), _unpool_inputs(1)),
    OpInfo("max_unpool2d", _unpool(2), _unpool_inputs(2)),
    OpInfo("max_unpool3d", _unpool(3), _unpool_inputs(3)),
]


def _affine_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((uniform(rng, 2, 2, 3), (2, 3, 4, 5)), {"align_corners": False}, name="2-D"),
        Sample((uniform(rng, 1, 2, 3), (1, 1, 3, 1)), {"align_corners": False}, name="2-D unit width"),
        Sample((uniform(rng, 2, 3, 4), (2, 1, 2, 3, 4)), {"align_corners": True}, name="3-D align corners"),
        Sample((uniform(rng, 1, 3, 4), (1, 2, 3, 2, 2)), {"align_corners": False}, name="3-D"),
    ]


OPS += [
    OpInfo("affine_grid", lambda lib, theta, size, **kw: _F(lib).affine_grid(theta, size, **kw), _affine_samples),
]


def _grid_sample(lib: Any, x: Any, grid: Any, **kwargs: Any) -> Any:
    return _F(lib).grid_sample(x, grid, **kwargs)


def _grid_samples(rng: np.random.Generator) -> list[Sample]:
    def grid(*shape: int) -> np.ndarray:
        return uniform(rng, *shape, low=-1.3, high=1.3)

    return [
        Sample((uniform(rng, 2, 2, 3, 4), grid(2, 2, 3, 2)), {"align_corners": False}, name="bilinear zeros"),
        Sample((uniform(rng, 1, 2, 3, 3), grid(1, 3, 2, 2)), {"padding_mode": "border", "align_corners": True},
               name="bilinear border align"),
        Sample((uniform(rng, 1, 1, 4, 3), grid(1, 2, 2, 2)), {"padding_mode": "reflection", "align_corners": False},
               name="bilinear reflection"),
        Sample((uniform(rng, 1, 2, 3, 4), grid(1, 2, 2, 2)), {"mode": "nearest", "align_corners": False},
               name="nearest"),
        Sample((uniform(rng, 1, 1, 4, 4), grid(1, 2, 2, 2)), {"mode": "bicubic", "align_corners": False},
               name="bicubic zeros"),
        Sample((uniform(rng, 1, 1, 3, 4), grid(1, 2, 2, 2)),
               {"mode": "bicubic", "padding_mode": "reflection", "align_corners": True}, name="bicubic reflection"),
        Sample((uniform(rng, 1, 2, 2, 3, 3), grid(1, 2, 2, 1, 3)), {"align_corners": False}, name="3-D trilinear"),
        Sample((uniform(rng, 1, 1, 2, 2, 3), grid(1, 1, 2, 2, 3)),
               {"padding_mode": "border", "align_corners": True}, name="3-D border"),
        Sample((uniform(rng, 2, 2, 3, 3), grid(2, 2, 3, 2)), {"align_corners": False}, name="noncontiguous",
               noncontiguous=True),
    ]


OPS += [
    OpInfo("grid_sample", _grid_sample, _grid_samples),
]


def _fractional(nd: int) -> Any:
    def fn(lib: Any, x: Any, samples: Any, kernel: Any, **kwargs: Any) -> Any:
        return getattr(_F(lib), f"fractional_max_pool{nd}d")(x, kernel, _random_samples=samples, **kwargs)

    return fn


def _fractional_samples(nd: int) -> Any:
    def samples(rng: np.random.Generator) -> list[Sample]:
        if nd == 2:
            return [
                Sample((distinct(rng, 2, 2, 5, 6), rng.uniform(size=(2, 2, 2)), 2), {"output_size": (3, 4)},
                       grad=(True, False), name="output size"),
                Sample((distinct(rng, 2, 7, 5), rng.uniform(size=(1, 2, 2)), (3, 2)), {"output_ratio": (0.5, 0.5)},
                       grad=(True, False), name="unbatched ratio"),
                Sample((distinct(rng, 1, 2, 4, 4), rng.uniform(size=(1, 2, 2)), 2),
                       {"output_size": 2, "return_indices": True}, grad=(True, False), name="indices"),
            ]
        return [
            Sample((distinct(rng, 1, 2, 5, 4, 5), rng.uniform(size=(1, 2, 3)), 2), {"output_size": (2, 2, 3)},
                   grad=(True, False), name="output size"),
            Sample((distinct(rng, 2, 4, 5, 6), rng.uniform(size=(1, 2, 3)), (1, 2, 2)),
                   {"output_ratio": 0.5, "return_indices": True}, grad=(True, False), name="unbatched ratio indices"),
        ]

    return samples


OPS += [
    OpInfo("fractional_max_pool2d", _fractional(2), _fractional_samples(2),
           covers=("fractional_max_pool2d", "fractional_max_pool2d_with_indices")),
    OpInfo("fractional_max_pool3d", _fractional(3), _fractional_samples(3),
           covers=("fractional_max_pool3d", "fractional_max_pool3d_with_indices")),
]
