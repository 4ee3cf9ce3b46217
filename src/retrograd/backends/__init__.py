"""``torch.backends``: the backend switches ported programs set or read, with PyTorch's defaults
on a CPU-only build. The flags are plain settable attributes; NumPy computes the same way whatever
they say (they choose among GPU or oneDNN kernels in PyTorch).

>>> import retrograd as rg
>>> rg.backends.mps.is_available(), rg.backends.cudnn.enabled, rg.backends.cudnn.benchmark
(False, True, False)
>>> import retrograd.backends.cudnn as cudnn
>>> cudnn.deterministic = True; rg.backends.cudnn.deterministic
True
>>> cudnn.deterministic = False
"""

from __future__ import annotations

import sys
import types
from typing import Any


def _false(*args: Any, **kwargs: Any) -> bool:
    return False


def _true(*args: Any, **kwargs: Any) -> bool:
    return True


def _none(*args: Any, **kwargs: Any) -> None:
    return None


def _module(name: str, doc: str, **attrs: Any) -> types.ModuleType:
    # Registered in sys.modules so that ``import retrograd.backends.cudnn as cudnn`` (and, after
    # ``install_as_torch``, ``import torch.backends.cudnn``) finds them.
    module = types.ModuleType(f"{__name__}.{name}", doc)
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[module.__name__] = module
    return module


cudnn = _module("cudnn", "cuDNN: not built in (retrograd has no CUDA); its flags keep PyTorch's defaults.",
                is_available=_false, version=_none, enabled=True, benchmark=False, benchmark_limit=None,
                deterministic=False, allow_tf32=True)
mps = _module("mps", "Apple's Metal backend: not available.", is_available=_false, is_built=_false,
              is_macos_or_newer=_false)
mkldnn = _module("mkldnn", "oneDNN: its flag as PyTorch's (enabled); NumPy computes either way.",
                 is_available=_true, enabled=True, deterministic=False, allow_tf32=False)
mkl = _module("mkl", "MKL: reported available, as in PyTorch's CPU wheels.", is_available=_true)
openmp = _module("openmp", "OpenMP: reported available, as in PyTorch's CPU wheels.", is_available=_true)
opt_einsum = _module("opt_einsum", "opt_einsum contraction ordering: not used (the package is not a dependency).",
                     is_available=_false, get_opt_einsum=_none, enabled=False, strategy=None)
_matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                allow_bf16_reduced_precision_reduction=True)
cuda = _module("cuda", "CUDA: not built in; its matmul and attention flags keep PyTorch's defaults.",
               is_built=_false, matmul=_matmul, flash_sdp_enabled=_true, math_sdp_enabled=_true,
               mem_efficient_sdp_enabled=_true, cudnn_sdp_enabled=_true)
cpu = _module("cpu", "The CPU backend.", get_cpu_capability=lambda: "DEFAULT")

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
