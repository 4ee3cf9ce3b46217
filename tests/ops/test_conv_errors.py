"""Bad arguments to convolution, pooling, unfold/fold and interpolation raise PyTorch's exception type
and message. Each case is run on retrograd against the message written here and, when PyTorch is
installed, on PyTorch too, so the expected messages are PyTorch's own."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import retrograd as rg
from conftest import torch_or_skip

X = (2, 4, 6, 6)  # a batched image
W = (6, 4, 3, 3)  # a matching conv2d weight


def _f(lib: Any) -> Any:
    return lib.nn.functional


def _x(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.ones(*(shape or X), dtype=getattr(lib, dtype))


Case = tuple[str, Callable[[Any], Any], type, str]

CASES: list[Case] = [
    # -- convolution --
    ("conv2d 2-d input", lambda lib: _f(lib).conv2d(_x(lib, 6, 6), _x(lib, *W)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [6, 6]"),
    ("conv2d 5-d input", lambda lib: _f(lib).conv2d(_x(lib, 1, 2, 4, 6, 6), _x(lib, *W)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [1, 2, 4, 6, 6]"),
    ("conv1d 4-d input", lambda lib: _f(lib).conv1d(_x(lib), _x(lib, *W)), RuntimeError,
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [2, 4, 6, 6]"),
    ("conv_transpose2d 2-d input", lambda lib: _f(lib).conv_transpose2d(_x(lib, 6, 6), _x(lib, *W)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: [6, 6]"),
    ("conv2d 3-d weight", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, 6, 4, 3)), RuntimeError,
     "expected stride to be a single integer value or a list of 1 values to match the convolution dimensions, "
     "but got stride=[1, 1]"),
    ("conv2d stride length", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), stride=(1, 1, 1)), RuntimeError,
     "expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, "
     "but got stride=[1, 1, 1]"),
    ("conv2d padding length", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), padding=(1, 1, 1)), RuntimeError,
     "expected padding to be a single integer value or a list of 2 values to match the convolution dimensions, "
     "but got padding=[1, 1, 1]"),
    ("conv2d channels", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, 6, 3, 3, 3)), RuntimeError,
     "Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 6, 6] to have 3 channels, but got 4 "
     "channels instead"),
    ("conv2d channels unbatched", lambda lib: _f(lib).conv2d(_x(lib, 4, 6, 6), _x(lib, 6, 3, 3, 3)), RuntimeError,
     "Given groups=1, weight of size [6, 3, 3, 3], expected input[1, 4, 6, 6] to have 3 channels, but got 4 "
     "channels instead"),
    ("conv2d groups divide weight", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), groups=4), RuntimeError,
     "Given groups=4, expected weight to be divisible by 4 at dimension 0, but got weight of size [[6, 4, 3, 3]] "
     "instead"),
    ("conv2d groups channels", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, 6, 4, 3, 3), groups=2), RuntimeError,
     "Given groups=2, weight of size [6, 4, 3, 3], expected input[2, 4, 6, 6] to have 8 channels, but got 4 "
     "channels instead"),
    ("conv2d groups 0", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), groups=0), RuntimeError,
     "non-positive groups is not supported"),
    ("conv2d kernel too large", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, 6, 4, 7, 7)), RuntimeError,
     "Calculated padded input size per channel: (6 x 6). Kernel size: (7 x 7). Kernel size can't be greater than "
     "actual input size"),
    ("conv2d dilated kernel too large", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), dilation=3), RuntimeError,
     "Calculated padded input size per channel: (6 x 6). Kernel size: (7 x 7). Kernel size can't be greater than "
     "actual input size"),
    ("conv2d negative padding", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), padding=-1), RuntimeError,
     "negative padding is not supported"),
    ("conv2d zero stride", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), stride=0), RuntimeError,
     "non-positive stride is not supported"),
    ("conv2d zero dilation", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), dilation=0), RuntimeError,
     "non-positive dilation is not supported"),
    ("conv2d same strided", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), padding="same", stride=2), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    ("conv2d padding string", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), padding="full"), RuntimeError,
     "Invalid padding string: 'full'"),
    ("conv2d bias size", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), _x(lib, 5)), RuntimeError,
     "Given weight of size [6, 4, 3, 3], expected bias to be 1-dimensional with 6 elements, but got bias of size "
     "[5] instead"),
    ("conv2d empty weight", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, 0, 4, 3, 3)), RuntimeError,
     "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size [0, 4, 3, 3] instead"),
    ("conv2d double input float weight",
     lambda lib: _f(lib).conv2d(_x(lib, dtype="float64"), _x(lib, *W)), RuntimeError,
     "expected scalar type Double but found Float"),
    ("conv2d float input double weight",
     lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W, dtype="float64")), RuntimeError,
     "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same or input should be a "
     "MKLDNN tensor and weight is a dense tensor"),
    ("conv2d bias dtype", lambda lib: _f(lib).conv2d(_x(lib), _x(lib, *W), _x(lib, 6, dtype="float64")), RuntimeError,
     "Input type (float) and bias type (double) should be the same"),
    ("conv_transpose2d channels", lambda lib: _f(lib).conv_transpose2d(_x(lib), _x(lib, 3, 6, 3, 3)), RuntimeError,
     "Given transposed=1, weight of size [3, 6, 3, 3], expected input[2, 4, 6, 6] to have 3 channels, but got 4 "
     "channels instead"),
    ("conv_transpose2d output_padding", lambda lib: _f(lib).conv_transpose2d(_x(lib), _x(lib, 4, 6, 3, 3),
                                                                              output_padding=1), RuntimeError,
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 1 "
     "output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 dilation_width: 1"),
    ("conv_transpose2d padding string", lambda lib: _f(lib).conv_transpose2d(_x(lib), _x(lib, 4, 6, 3, 3),
                                                                              padding="same"), TypeError,
     "conv_transpose2d(): argument 'padding' must be tuple of ints, not str"),
    ("conv_transpose2d groups", lambda lib: _f(lib).conv_transpose2d(_x(lib), _x(lib, 4, 6, 3, 3), groups=3),
     RuntimeError,
     "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [[4, 6, 3, 3]] "
     "instead"),
    ("conv_transpose2d bias", lambda lib: _f(lib).conv_transpose2d(_x(lib), _x(lib, 4, 6, 3, 3), _x(lib, 4)),
     RuntimeError,
     "Given transposed=1, weight of size [4, 6, 3, 3], expected bias to be 1-dimensional with 6 elements, but got "
     "bias of size [4] instead"),
    ("conv_transpose2d output too small", lambda lib: _f(lib).conv_transpose2d(_x(lib, 1, 1, 2, 2, dtype="float64"),
                                                                                _x(lib, 1, 1, 1, 1, dtype="float64"),
                                                                                padding=1), RuntimeError,
     "Given input size per channel: (2 x 2). Calculated output size per channel: (0 x 0). Output size is too small"),
    # -- max pooling --
    ("max_pool2d kernel 0", lambda lib: _f(lib).max_pool2d(_x(lib), 0), RuntimeError, "stride should not be zero"),
    ("max_pool2d kernel 0 stride 1", lambda lib: _f(lib).max_pool2d(_x(lib), 0, 1), RuntimeError,
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    ("max_pool2d padding", lambda lib: _f(lib).max_pool2d(_x(lib), 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    ("max_pool2d negative padding", lambda lib: _f(lib).max_pool2d(_x(lib), 2, padding=-1), RuntimeError,
     "pad must be non-negative, but got pad: -1"),
    ("max_pool2d stride 0", lambda lib: _f(lib).max_pool2d(_x(lib), 2, stride=0), RuntimeError,
     "stride should not be zero"),
    ("max_pool2d dilation 0", lambda lib: _f(lib).max_pool2d(_x(lib), 2, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    ("max_pool2d too large", lambda lib: _f(lib).max_pool2d(_x(lib), 7), RuntimeError,
     "Given input size: (4x6x6). Calculated output size: (4x0x0). Output size is too small"),
    ("max_pool2d 2-d input", lambda lib: _f(lib).max_pool2d(_x(lib, 6, 6), 2), RuntimeError,
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    ("max_pool2d 5-d input", lambda lib: _f(lib).max_pool2d(_x(lib, 1, 2, 3, 6, 6), 2), RuntimeError,
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    ("max_pool2d empty channels", lambda lib: _f(lib).max_pool2d(_x(lib, 2, 0, 6, 6), 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 6, 6]"),
    ("max_pool2d kernel tuple", lambda lib: _f(lib).max_pool2d(_x(lib), (2, 2, 2)), RuntimeError,
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("max_pool2d stride tuple", lambda lib: _f(lib).max_pool2d(_x(lib), 2, (2, 2, 2)), RuntimeError,
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    ("max_pool2d padding tuple", lambda lib: _f(lib).max_pool2d(_x(lib), 2, 2, (0, 0, 0)), RuntimeError,
     "max_pool2d: padding must either be a single int, or a tuple of two ints"),
    ("max_pool2d dilation tuple", lambda lib: _f(lib).max_pool2d(_x(lib), 2, 2, 0, (1, 1, 1)), RuntimeError,
     "max_pool2d: dilation must be either a single int, or a tuple of two ints"),
    ("max_pool1d 1-d input", lambda lib: _f(lib).max_pool1d(_x(lib, 6), 2), RuntimeError,
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[6]"),
    ("max_pool1d 4-d input", lambda lib: _f(lib).max_pool1d(_x(lib), 2), RuntimeError,
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
     "[2, 4, 6, 6]"),
    ("max_pool1d kernel 0", lambda lib: _f(lib).max_pool1d(_x(lib, 2, 6), 0, 1), RuntimeError,
     "max_pool1d() kernel_size must be greater than zero, but got 0"),
    ("max_pool1d stride 0", lambda lib: _f(lib).max_pool1d(_x(lib, 2, 6), 2, 0), RuntimeError,
     "max_pool1d() stride must be greater than zero, but got 0"),
    ("max_pool1d padding", lambda lib: _f(lib).max_pool1d(_x(lib, 2, 6), 2, 1, 2), RuntimeError,
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2"),
    ("max_pool1d dilation 0", lambda lib: _f(lib).max_pool1d(_x(lib, 2, 6), 2, 1, 0, 0), RuntimeError,
     "max_pool1d() dilation must be greater than zero, but got 0"),
    # -- average pooling --
    ("avg_pool2d padding", lambda lib: _f(lib).avg_pool2d(_x(lib), 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    ("avg_pool2d too large", lambda lib: _f(lib).avg_pool2d(_x(lib), 7), RuntimeError,
     "Given input size: (4x6x6). Calculated output size: (4x0x0). Output size is too small"),
    ("avg_pool2d divisor 0", lambda lib: _f(lib).avg_pool2d(_x(lib), 2, divisor_override=0), RuntimeError,
     "divisor must be not zero"),
    ("avg_pool2d 2-d input", lambda lib: _f(lib).avg_pool2d(_x(lib, 6, 6), 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    ("avg_pool2d kernel tuple", lambda lib: _f(lib).avg_pool2d(_x(lib), (2, 2, 2)), RuntimeError,
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("avg_pool2d stride tuple", lambda lib: _f(lib).avg_pool2d(_x(lib), 2, (2, 2, 2)), RuntimeError,
     "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    ("avg_pool2d 5-d input", lambda lib: _f(lib).avg_pool2d(_x(lib, 1, 2, 3, 6, 6), 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 2, 3, 6, 6]"),
    ("avg_pool2d kernel 0", lambda lib: _f(lib).avg_pool2d(_x(lib, 6, 6, 6), 0, 1), RuntimeError,
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    ("avg_pool2d padding tuple", lambda lib: _f(lib).avg_pool2d(_x(lib), 2, 2, (0, 0, 0)), RuntimeError,
     "avg_pool2d: padding must either be a single int, or a tuple of two ints"),
    ("avg_pool2d bool", lambda lib: _f(lib).avg_pool2d(_x(lib, dtype="bool"), 2), NotImplementedError,
     "\"avg_pool2d\" not implemented for 'Bool'"),
    ("max_pool2d bool", lambda lib: _f(lib).max_pool2d(_x(lib, dtype="bool"), 2), NotImplementedError,
     "\"max_pool2d\" not implemented for 'Bool'"),
    ("avg_pool1d kernel pair", lambda lib: _f(lib).avg_pool1d(_x(lib, 6, 6), (2, 2)), RuntimeError,
     "avg_pool1d() argument 'kernel_size' should contain one int (got 2)"),
    ("max_pool1d kernel pair", lambda lib: _f(lib).max_pool1d(_x(lib, 6, 6), (2, 2)), RuntimeError,
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size 2"),
    ("adaptive_avg_pool1d size pair", lambda lib: _f(lib).adaptive_avg_pool1d(_x(lib, 6, 6), (2, 2)), RuntimeError,
     "adaptive_avg_pool1d() argument 'output_size' should contain one int (got 2)"),
    ("adaptive_max_pool2d negative size", lambda lib: _f(lib).adaptive_max_pool2d(_x(lib, 6, 6, 6), -1),
     RuntimeError, "Trying to create tensor with negative dimension -1: [6, -1, -1]"),
    ("avg_pool1d 4-d input", lambda lib: _f(lib).avg_pool1d(_x(lib), 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for "
     "avg_pool1d)"),
    # -- adaptive pooling --
    ("adaptive_avg_pool2d negative size", lambda lib: _f(lib).adaptive_avg_pool2d(_x(lib), -1), RuntimeError,
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, -1}"),
    ("adaptive_avg_pool2d 2-d input", lambda lib: _f(lib).adaptive_avg_pool2d(_x(lib, 6, 6), 2), RuntimeError,
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [6, 6]"),
    ("adaptive_avg_pool2d size length", lambda lib: _f(lib).adaptive_avg_pool2d(_x(lib), (2, 2, 2)), RuntimeError,
     "adaptive_avg_pool2d: output_size must be 2"),
    ("adaptive_avg_pool2d empty height", lambda lib: _f(lib).adaptive_avg_pool2d(_x(lib, 2, 4, 0, 6), 2),
     RuntimeError,
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 4, 0, 6] with dimension 2 being empty"),
    ("adaptive_max_pool2d empty height", lambda lib: _f(lib).adaptive_max_pool2d(_x(lib, 2, 4, 0, 6), 2),
     RuntimeError,
     "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 4, 0, 6] with dimension 2 being empty"),
    ("avg_pool2d empty height", lambda lib: _f(lib).avg_pool2d(_x(lib, 2, 4, 0, 6), 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 4, 0, 6]"),
    ("unfold empty height", lambda lib: _f(lib).unfold(_x(lib, 2, 4, 0, 6), 1), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
     "got: [2, 4, 0, 6]"),
    ("interpolate empty input", lambda lib: _f(lib).interpolate(_x(lib, 2, 4, 0, 6), size=3), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 0, W: 6) output (H: 3, W: 3)"),
    ("interpolate 3-d size 0", lambda lib: _f(lib).interpolate(_x(lib, 1, 2, 3, 6, 6), size=(3, 0, 1),
                                                               mode="trilinear"), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (D: 3, H: 6, W: 6) output (D: 3, H: 0, W: 1)"),
    ("interpolate bicubic 3-d", lambda lib: _f(lib).interpolate(_x(lib, 1, 2, 6), size=3, mode="bicubic"),
     NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D) for the modes: nearest | linear | bilinear | "
     "bicubic | trilinear | lanczos | area | nearest-exact (got bicubic)"),
    ("adaptive_avg_pool2d integer", lambda lib: _f(lib).adaptive_avg_pool2d(_x(lib, dtype="int64"), 2),
     NotImplementedError, "\"adaptive_avg_pool2d\" not implemented for 'Long'"),
    ("adaptive_avg_pool1d 4-d input", lambda lib: _f(lib).adaptive_avg_pool1d(_x(lib), 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for "
     "adaptive_avg_pool1d)"),
    ("adaptive_max_pool2d 2-d input", lambda lib: _f(lib).adaptive_max_pool2d(_x(lib, 6, 6), 2), RuntimeError,
     "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [6, 6]"),
    ("adaptive_max_pool2d integer", lambda lib: _f(lib).adaptive_max_pool2d(_x(lib, dtype="int64"), 2),
     NotImplementedError, "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    # -- unfold / fold --
    ("unfold 5-d input", lambda lib: _f(lib).unfold(_x(lib, 1, 2, 3, 6, 6), 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
     "got: [1, 2, 3, 6, 6]"),
    ("unfold kernel too large", lambda lib: _f(lib).unfold(_x(lib), 7), RuntimeError,
     "Given input with spatial size (6, 6), kernel_size=(7, 7), dilation=(1, 1), padding=(0, 0), calculated shape "
     "of the array of sliding blocks as (0, 0), but its components must be at least one."),
    ("unfold kernel 0", lambda lib: _f(lib).unfold(_x(lib), 0), RuntimeError,
     "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0"),
    ("unfold negative padding", lambda lib: _f(lib).unfold(_x(lib), 2, padding=-1), RuntimeError,
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    ("unfold stride 0", lambda lib: _f(lib).unfold(_x(lib), 2, stride=0), RuntimeError,
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    ("unfold dilation 0", lambda lib: _f(lib).unfold(_x(lib), 2, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0"),
    ("unfold integer", lambda lib: _f(lib).unfold(_x(lib, dtype="int64"), 2), NotImplementedError,
     "\"im2col_out_cpu\" not implemented for 'Long'"),
    ("fold channels", lambda lib: _f(lib).fold(_x(lib, 2, 7, 25), (6, 6), 2), RuntimeError,
     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=7 "
     "and kernel_size=(2, 2)."),
    ("fold blocks", lambda lib: _f(lib).fold(_x(lib, 2, 16, 24), (6, 6), 2), RuntimeError,
     "Given output_size=(6, 6), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size "
     "of input's dimension 2 to match the calculated number of sliding blocks 5 * 5 = 25, but got "
     "input.size(2)=24."),
    ("fold output size 0", lambda lib: _f(lib).fold(_x(lib, 1, 4, 4), (0, 3), 2), RuntimeError,
     "Given output_size=(0, 3), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size "
     "of input's dimension 2 to match the calculated number of sliding blocks -1 * 2 = -2, but got "
     "input.size(2)=4."),
    ("fold 4-d input", lambda lib: _f(lib).fold(_x(lib, 2, 16, 24, 1), (6, 6), 2), RuntimeError,
     "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, "
     "but got: [2, 16, 24, 1]"),
    ("fold integer", lambda lib: _f(lib).fold(_x(lib, 2, 16, 25, dtype="int64"), (6, 6), 2), NotImplementedError,
     "\"col2im_out_cpu\" not implemented for 'Long'"),
    # -- interpolate --
    ("interpolate size and scale", lambda lib: _f(lib).interpolate(_x(lib), size=3, scale_factor=2), ValueError,
     "only one of size or scale_factor should be defined"),
    ("interpolate neither", lambda lib: _f(lib).interpolate(_x(lib)), ValueError,
     "either size or scale_factor should be defined"),
    ("interpolate mode", lambda lib: _f(lib).interpolate(_x(lib), size=3, mode="foo"), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) for the modes: nearest | linear | bilinear | "
     "bicubic | trilinear | lanczos | area | nearest-exact (got foo)"),
    ("interpolate 2-d input", lambda lib: _f(lib).interpolate(_x(lib, 3, 3), size=3), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for the modes: nearest | linear | bilinear | "
     "bicubic | trilinear | lanczos | area | nearest-exact (got nearest)"),
    ("interpolate bilinear 3-d", lambda lib: _f(lib).interpolate(_x(lib, 4, 6, 6), size=3, mode="bilinear"),
     NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"),
    ("interpolate linear 4-d", lambda lib: _f(lib).interpolate(_x(lib), size=3, mode="linear"),
     NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
    ("interpolate align_corners nearest", lambda lib: _f(lib).interpolate(_x(lib), size=3, align_corners=True),
     ValueError,
     "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"),
    ("interpolate size length", lambda lib: _f(lib).interpolate(_x(lib), size=(3, 3, 3)), ValueError,
     "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of "
     "[6, 6] and output size of (3, 3, 3). Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
     "size in (o1, o2, ...,oK) format."),
    ("interpolate scale length", lambda lib: _f(lib).interpolate(_x(lib), scale_factor=(2, 2, 2)), ValueError,
     "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions "
     "of [6, 6] and scale_factor of shape (2, 2, 2). Please provide input tensor in (N, C, d1, d2, ...,dK) format "
     "and scale_factor in (s1, s2, ...,sK) format."),
    ("interpolate size 0", lambda lib: _f(lib).interpolate(_x(lib), size=0), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 6, W: 6) output (H: 0, W: 0)"),
    ("interpolate scale too small", lambda lib: _f(lib).interpolate(_x(lib, 1, 2, 6), scale_factor=0.1),
     RuntimeError, "Input and output sizes should be greater than 0, but got input (W: 6) and output (W: 0)"),
    ("interpolate recompute with size",
     lambda lib: _f(lib).interpolate(_x(lib), size=3, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size."),
    ("interpolate integer nearest", lambda lib: _f(lib).interpolate(_x(lib, dtype="int64"), size=3),
     NotImplementedError, "\"upsample_nearest2d_channels_last\" not implemented for 'Long'"),
    ("interpolate integer bilinear",
     lambda lib: _f(lib).interpolate(_x(lib, dtype="int64"), size=3, mode="bilinear"),
     NotImplementedError, "\"upsample_bilinear2d_channels_last\" not implemented for 'Long'"),
]

IDS = [case[0] for case in CASES]


def _raise(lib: Any, fn: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(lib)


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_retrograd_raises(name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    with pytest.raises(exc, match="^" + re.escape(message) + "$"):
        _raise(rg, fn)


@pytest.mark.parametrize(("name", "fn", "exc", "message"), CASES, ids=IDS)
def test_pytorch_raises_the_same(name: str, fn: Callable[[Any], Any], exc: type, message: str) -> None:
    torch = torch_or_skip()
    with pytest.raises(exc, match="^" + re.escape(message) + "$"):
        _raise(torch, fn)


def test_same_padding_warns_for_even_kernels() -> None:
    f = rg.nn.functional
    with pytest.warns(UserWarning, match="Using padding='same' with even kernel lengths and odd dilation"):
        f.conv2d(rg.ones(1, 1, 5, 5), rg.ones(1, 1, 2, 2), padding="same")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.conv2d(rg.ones(1, 1, 5, 5), rg.ones(1, 1, 3, 3), padding="same")  # symmetric: no warning
