"""retrograd: a define-by-run reverse-mode autodiff engine on NumPy with PyTorch's semantics.

>>> import retrograd as torch
>>> x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""

# isort: skip_file
from __future__ import annotations

import importlib
import warnings
from typing import Any

# The Tensor first: the op table it binds at the end of its module imports it back.
from .tensor import Size, Tensor, device
from . import autograd
from ._dtype import (
    bool_ as bool,  # noqa: A004 - PyTorch's name
    double,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._dtype import cdouble, cfloat, complex64, complex128
from ._dtype import float as float  # noqa: A004, PLC0414
from ._dtype import int as int  # noqa: A004, PLC0414
from ._format import set_printoptions
from ._complex import (
    complex,  # noqa: A004 - PyTorch's name
    conj,
    conj_physical,
    conj_physical_,
    imag,
    is_complex,
    is_conj,
    is_neg,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from ._functions import *  # noqa: F403
from ._functions import _VARIANT_FUNCTIONS
from ._functions import (
    allclose,
    cat,
    concat,
    concatenate,
    equal,
    is_floating_point,
    is_tensor,
    matmul,
    maximum,
    minimum,
    stack,
    where,
)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.warn_state import is_warn_always_enabled, set_warn_always
from .autograd.grad_mode import *  # noqa: F403  (the six modes, named once in grad_mode.__all__)
from .factories import (
    Generator,
    arange,
    as_tensor,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    initial_seed,
    linspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    tensor,
    zeros,
    zeros_like,
)
from . import random
from .random import get_rng_state, set_rng_state
from .factories import (  # issue #12's creation functions
    bartlett_window,
    blackman_window,
    empty_permuted,
    empty_strided,
    hamming_window,
    hann_window,
    kaiser_window,
    logspace,
    scalar_tensor,
    tril_indices,
    triu_indices,
    vander,
)
from .factories import range_inclusive as range  # noqa: A004 (PyTorch's name)

__version__ = "0.1.0"

# NumPy reports floating-point edge cases (log(0), 0/0, overflow to inf) as RuntimeWarnings where
# PyTorch computes the same inf or nan silently. Those raised by retrograd's own calls into NumPy
# are ignored (the user's own NumPy calls still warn); an np.errstate around every op would cost
# about a microsecond per op. Where a filter set later (or pytest's per-test filters) turns them
# into errors, the dispatch points catch the RuntimeWarning and rerun the forward quietly
# (``ops.op.quiet``): nothing is paid until then.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"retrograd(\.|$)")

FloatTensor = Tensor

# The torch.* spellings of nn.functional ops, served by _torch_nn (which imports nn) on first lookup.
_NN_FUNCTIONS = frozenset(
    "adaptive_avg_pool1d adaptive_max_pool1d affine_grid_generator alpha_dropout alpha_dropout_ avg_pool1d batch_norm bilinear "
    "binary_cross_entropy_with_logits celu celu_ channel_shuffle constant_pad_nd conv1d ctc_loss conv2d conv3d "
    "conv_transpose1d conv_transpose2d conv_transpose3d convolution cosine_embedding_loss cosine_similarity "
    "dropout dropout_ embedding embedding_renorm_ feature_alpha_dropout feature_alpha_dropout_ feature_dropout "
    "feature_dropout_ group_norm hardshrink hinge_embedding_loss instance_norm kl_div layer_norm "
    "margin_ranking_loss max_pool1d max_pool1d_with_indices max_pool2d max_pool3d norm_except_dim pairwise_distance pdist "
    "pixel_shuffle pixel_unshuffle poisson_nll_loss prelu rms_norm rrelu rrelu_ selu selu_ threshold threshold_ "
    "triplet_margin_loss grid_sampler grid_sampler_2d grid_sampler_3d embedding_bag".split()
)

_LAZY_SUBMODULES = ("nn", "optim", "viz", "utils", "cuda", "linalg", "serialization", "debug", "fft",
                    "distributions", "distributed", "amp", "func")


# The porting surface (``torch.testing``, ``torch.backends``, ``finfo``, ``set_num_threads``...)
# and ``install_as_torch``: loaded on first use like the layers below.
_PORTING_SUBMODULES = ("testing", "backends", "accelerator")
_PORTING_NAMES = frozenset((
    "finfo", "iinfo", "promote_types", "result_type", "can_cast", "is_signed", "is_inference", "is_same_size",
    "typename",
    "get_device", "detach", "detach_", "asarray", "frombuffer", "from_dlpack", "to_dlpack", "is_distributed",
    "layout", "strided",
    "set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
    "init_num_threads", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
    "set_flush_denormal", "set_default_tensor_type", "set_default_device", "get_default_device",
    "is_autocast_enabled", "is_autocast_cpu_enabled", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
))
# torch.autocast and its switches (retrograd.amp), loaded on first use.
_AUTOCAST_NAMES = frozenset(("autocast", "get_autocast_dtype", "set_autocast_dtype", "set_autocast_enabled",
                             "clear_autocast_cache"))


_SAMPLING_FUNCTIONS = frozenset(("bernoulli", "binomial", "multinomial", "poisson"))

# Composite functions of their own modules (name -> module), loaded on first use.
_COMPOSITE_FUNCTIONS = {"stft": "._spectral", "istft": "._spectral", "histogramdd": "._histogramdd",
                        "geqrf": ".ops.householder", "orgqr": ".ops.householder", "ormqr": ".ops.householder",
                        **{name: "._view_copies" for name in (
                            "alias_copy as_strided_copy diagonal_copy expand_copy narrow_copy permute_copy select_copy "
                            "slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy "
                            "unfold_copy unsqueeze_copy view_copy view_as_real_copy view_as_complex_copy detach_copy").split()},
                        "cond": "._control_flow", "while_loop": "._control_flow",
                        "svd_lowrank": "._lowrank", "pca_lowrank": "._lowrank",
                        **{name: ".amp._deprecated" for name in (
                            "get_autocast_cpu_dtype set_autocast_cpu_dtype set_autocast_cpu_enabled get_autocast_gpu_dtype "
                            "set_autocast_gpu_dtype get_autocast_xla_dtype set_autocast_xla_dtype is_autocast_xla_enabled "
                            "set_autocast_xla_enabled autocast_increment_nesting autocast_decrement_nesting").split()}}


def __getattr__(name: str) -> Any:
    # Heavier layers load on first use, so ``import retrograd`` stays close to ``import numpy``
    # (``save``/``load`` bring zipfile and pickle).
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name == "return_types":  # (torch.return_types: named tuples made when it loads)
        value = globals()[name] = importlib.import_module(".ops.return_types", __name__)
        return value
    if name in ("save", "load"):
        return getattr(importlib.import_module(".serialization", __name__), name)
    if name in _VARIANT_FUNCTIONS:  # the op table's functions, made on first use (ops/variants.py)
        value = globals()[name] = getattr(importlib.import_module("._functions", __name__), name)
        return value
    if name in _PORTING_NAMES:  # (after the op table: an op of the same name wins)
        value = globals()[name] = getattr(importlib.import_module("._porting", __name__), name)
        return value
    if name in _PORTING_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _AUTOCAST_NAMES:
        value = globals()[name] = getattr(importlib.import_module(".amp.autocast_mode", __name__), name)
        return value
    if name == "bfloat16":  # (its dtype comes from ml_dtypes, imported on first use)
        value = globals()[name] = importlib.import_module("._dtype", __name__).load_bfloat16()
        return value
    if name in _SAMPLING_FUNCTIONS:  # (the samplers bring the mt19937 engine, retrograd._random)
        value = globals()[name] = getattr(importlib.import_module("._sampling", __name__), name)
        return value
    if name in _COMPOSITE_FUNCTIONS:
        value = globals()[name] = getattr(importlib.import_module(_COMPOSITE_FUNCTIONS[name], __name__), name)
        return value
    if name in ("install_as_torch", "uninstall_as_torch"):
        return getattr(importlib.import_module("._install", __name__), name)
    if name == "compile":  # (the package is ``_compile``: ``retrograd.compile`` is the function, as torch's)
        value = globals()[name] = importlib.import_module("._compile", __name__).compile
        return value
    if name == "vmap":  # (torch.vmap is torch.func.vmap)
        value = globals()[name] = importlib.import_module(".func", __name__).vmap
        return value
    if name in _NN_FUNCTIONS:  # torch.conv2d, torch.dropout, ...: they import nn, so on first use
        value = globals()[name] = getattr(importlib.import_module("._torch_nn", __name__), name)
        return value
    raise AttributeError(f"module 'retrograd' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "save", "load", "return_types", *_VARIANT_FUNCTIONS, *_PORTING_NAMES,
                   *_PORTING_SUBMODULES, "install_as_torch", "uninstall_as_torch", *_NN_FUNCTIONS, "bfloat16",
                   *_AUTOCAST_NAMES, *_SAMPLING_FUNCTIONS, "compile", "vmap", *_COMPOSITE_FUNCTIONS})


__all__ = [
    "Generator", "Size", "Tensor", "allclose", "arange", "as_tensor", "autograd", "bool", "cat", "concat",
    "concatenate", "default_generator", "device", "double", "dtype", "empty", "empty_like", "enable_grad",
    "equal", "eye", "float", "float16", "float32", "float64", "from_numpy", "full", "full_like",
    "get_default_dtype", "half", "inference_mode", "initial_seed", "int", "int8", "int16", "int32", "int64",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
    "is_floating_point", "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "isclose", "isfinite",
    "isinf", "isnan", "linspace", "long", "manual_seed", "matmul", "maximum", "minimum", "no_grad",
    "normal", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
    "randperm", "return_types", "save", "load", "seed", "set_default_dtype", "set_grad_enabled", "short", "stack", "tensor",
    "uint8", "where", "zeros", "zeros_like",
]
__all__ += ["set_printoptions", "is_warn_always_enabled", "set_warn_always"]
__all__ += ["cdouble", "cfloat", "complex64", "complex128", "complex", "conj", "conj_physical", "conj_physical_",
            "imag", "is_complex", "is_conj", "is_neg", "polar", "real", "resolve_conj", "resolve_neg",
            "view_as_complex", "view_as_real"]
__all__ += ["bernoulli", "binomial", "get_rng_state", "multinomial", "poisson", "random", "set_rng_state"]
