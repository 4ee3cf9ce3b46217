"""``torch.autocast`` on the CPU: PyTorch's CPU op lists, cast policies, nesting and weight cache.

Autocast costs nothing while it is off: no op checks for it. Entering the outermost enabled
region installs casting wrappers over the public forms of the listed ops (``retrograd.mm``,
``Tensor.__matmul__``, ``F.linear``, the conv modules' kernels, the losses...) and leaving the
last one puts the originals back. A wrapper casts its floating tensor arguments (float64 is
never cast, as in PyTorch) by its op's policy, then runs the op with autocast off inside it, as
PyTorch's dispatcher excludes autocast within an autocast kernel. The state is process-wide (one
thread), where PyTorch's is per thread.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable
from typing import Any

from .. import _dtype
from ..tensor import Tensor

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "set_autocast_dtype"]

# PyTorch's CPU lists (aten/src/ATen/autocast_mode.cpp), by the retrograd names that reach them.
# Lower precision: cast to the autocast dtype.
_LOWER = {
    # (einsum, tensordot and inner: PyTorch's run as bmm/mm, which it lists)
    "retrograd": ("mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "einsum", "tensordot", "inner", "conv1d", "conv2d", "conv3d",
                  "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu"),
    "retrograd.tensor:Tensor": ("mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "__matmul__", "__rmatmul__",
                                "prelu", "inner"),
    "retrograd.nn.functional": ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                                "conv_transpose3d", "prelu", "scaled_dot_product_attention"),
    "retrograd.nn.modules.conv:Conv1d": ("_conv",), "retrograd.nn.modules.conv:Conv2d": ("_conv",),
    "retrograd.nn.modules.conv:Conv3d": ("_conv",), "retrograd.nn.modules.conv:ConvTranspose1d": ("_conv",),
    "retrograd.nn.modules.conv:ConvTranspose2d": ("_conv",), "retrograd.nn.modules.conv:ConvTranspose3d": ("_conv",),
    "retrograd.linalg": ("vecdot",),
}
# Float32: cast to float32.
_FP32 = {
    "retrograd": ("prod", "trace", "cdist"),
    "retrograd.tensor:Tensor": ("prod", "trace"),
    "retrograd.nn.functional": (
        "mse_loss", "cross_entropy", "nll_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "margin_ranking_loss",
        "cosine_embedding_loss", "hinge_embedding_loss", "soft_margin_loss", "triplet_margin_loss",
        "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "ctc_loss",
        "gaussian_nll_loss"),
}
# Promote: cast to float32 if any argument is float32, else to the autocast dtype (``_prioritize``).
_PROMOTE = {"retrograd": ("cat", "stack", "concat", "concatenate")}

_CPU_DTYPES = ("bfloat16", "float16")
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")

# enabled, the CPU autocast dtype (None: bfloat16, made on first need), the weight cache flag,
# the nesting depth, whether a wrapped op is running (autocast is off inside it).
_STATE: dict[str, Any] = {"enabled": False, "dtype": None, "cache": True, "nesting": 0, "inside": False}
_CACHE: dict[int, tuple[Tensor, Tensor]] = {}
_SAVED: list[tuple[Any, str, Any]] = []  # (owner, name, original class-dict entry) while installed


def _check_device(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    name = device_type.split(":")[0]
    if name not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return name


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type``: the CPU only.

    >>> import retrograd as rg
    >>> rg.amp.is_autocast_available("cpu"), rg.amp.is_autocast_available("cuda")
    (True, False)
    """
    return _check_device(device_type) == "cpu"


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype autocast lowers to on ``device_type`` (the CPU's: bfloat16 unless set).

    >>> import retrograd as rg
    >>> rg.get_autocast_dtype("cpu")
    torch.bfloat16
    """
    if _check_device(device_type) == "cuda":
        return _dtype.float16
    if _STATE["dtype"] is None:
        _STATE["dtype"] = _dtype.load_bfloat16()
    return _STATE["dtype"]  # type: ignore[no-any-return]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype autocast lowers to on the CPU (what ``autocast(dtype=None)`` uses).

    >>> import retrograd as rg
    >>> rg.set_autocast_dtype("cpu", rg.float16); rg.get_autocast_dtype("cpu")
    torch.float16
    >>> rg.set_autocast_dtype("cpu", rg.bfloat16)
    """
    if _check_device(device_type) == "cpu":
        _STATE["dtype"] = _dtype.to_dtype(dtype)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: CUDA's, never on here)."""
    if device_type is None:
        return False
    return _check_device(device_type) == "cpu" and bool(_STATE["enabled"])


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn CPU autocast on or off outside a context (PyTorch's low-level switch)."""
    if _check_device(device_type) == "cpu":
        _STATE["enabled"] = bool(enabled)
        if enabled:
            _install()
        elif _STATE["nesting"] == 0:
            _uninstall()


def clear_autocast_cache() -> None:
    """Forget the casts of parameters autocast has cached."""
    _CACHE.clear()


class autocast:  # noqa: N801 - PyTorch's name
    """Run the listed ops in lower precision inside a ``with`` block (or a decorated function).

    As ``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: on the CPU,
    ``dtype`` is bfloat16 (the default) or float16; matrix products, linear and convolutions run
    in it, losses and a few reductions in float32, ``cat``/``stack`` in the widest input dtype.

    >>> import retrograd as rg
    >>> with rg.autocast("cpu", dtype=rg.bfloat16):
    ...     y = rg.ones(2, 3) @ rg.ones(3, 2)
    >>> y.dtype
    torch.bfloat16
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_device(device_type)
        if dtype is None:
            dtype = get_autocast_dtype(self.device)
        self.fast_dtype = _dtype.to_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = _STATE["cache"] if cache_enabled is None else bool(cache_enabled)
        if self.device == "cuda":
            if self._enabled:
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        elif self.device == "cpu":
            if self._enabled and self.fast_dtype.name not in _CPU_DTYPES:
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                self._enabled = False
        elif self._enabled:
            raise RuntimeError(f"retrograd runs on the CPU only: autocast for device_type {self.device!r} is not "
                               "available")

    def __enter__(self) -> None:
        if self.device != "cpu":
            return
        self._prev = (_STATE["enabled"], _STATE["dtype"], _STATE["cache"])
        _STATE["enabled"], _STATE["dtype"], _STATE["cache"] = self._enabled, self.fast_dtype, self._cache_enabled
        _STATE["nesting"] += 1
        if self._enabled:
            _install()

    def __exit__(self, *exc: Any) -> None:
        if self.device != "cpu":
            return
        _STATE["nesting"] -= 1
        _STATE["enabled"], _STATE["dtype"], _STATE["cache"] = self._prev
        if _STATE["nesting"] == 0:
            _CACHE.clear()
            if not _STATE["enabled"]:
                _uninstall()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorated


# -- the casting wrappers ---------------------------------------------------------------------


def _eligible(value: Any) -> bool:
    # A floating tensor, never float64 (PyTorch's is_eligible).
    return isinstance(value, Tensor) and value._data.dtype.kind in "fV" and value._data.dtype.itemsize < 8


def _cast(value: Any, target: _dtype.dtype) -> Any:
    if _eligible(value):
        if value._data.dtype == target.np:
            return value
        cacheable = (_STATE["cache"] and target.np in _dtype.REDUCED_FLOATS and value._data.dtype.itemsize == 4
                     and value._requires_grad and value._grad_fn is None and value._base is None)
        if cacheable:
            hit = _CACHE.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
        out = value.to(target)
        if cacheable:
            _CACHE[id(value)] = (value, out)
        return out
    if type(value) in (list, tuple):
        return type(value)(_cast(v, target) for v in value)
    return value


def _widest(values: Any, found: list[Any]) -> None:
    for v in values:
        if _eligible(v):
            found.append(v._data.dtype)
        elif type(v) in (list, tuple):
            _widest(v, found)


def _prioritize(found: list[Any]) -> _dtype.dtype:
    """PyTorch's ``prioritize``: float32 if any argument is float32, else the autocast dtype; a
    16-bit float other than the autocast dtype (and no float32 before it) is an error."""
    current = _STATE["dtype"]
    for np_dtype in found:
        if current is _dtype.float32 or np_dtype == _dtype.float32.np:
            current = _dtype.float32
        elif np_dtype != current.np:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current  # type: ignore[no-any-return]


def _wrap(fn: Callable[..., Any], policy: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def cast_then_run(*args: Any, **kwargs: Any) -> Any:
        if not _STATE["enabled"] or _STATE["inside"]:
            return fn(*args, **kwargs)
        if policy == "lower":
            target = _STATE["dtype"]
        elif policy == "fp32":
            target = _dtype.float32
        else:
            found: list[Any] = []
            _widest((*args, *kwargs.values()), found)
            target = _prioritize(found)
        args = tuple(_cast(a, target) for a in args)
        kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
        _STATE["inside"] = True
        try:
            return fn(*args, **kwargs)
        finally:
            _STATE["inside"] = False

    return cast_then_run


def _owner(spec: str) -> Any:
    module, _, cls = spec.partition(":")
    owner = importlib.import_module(module)
    return getattr(owner, cls) if cls else owner


def _install() -> None:
    if _SAVED:
        return
    for table, policy in ((_LOWER, "lower"), (_FP32, "fp32"), (_PROMOTE, "promote")):
        for spec, names in table.items():
            owner = _owner(spec)
            for name in names:
                original = getattr(owner, name, None)  # (makes a lazily bound form)
                if original is None:
                    continue
                entry = vars(owner).get(name)
                if isinstance(entry, staticmethod):
                    setattr(owner, name, staticmethod(_wrap(entry.__func__, policy)))
                else:
                    setattr(owner, name, _wrap(original, policy))
                _SAVED.append((owner, name, entry))


def _uninstall() -> None:
    while _SAVED:
        owner, name, entry = _SAVED.pop()
        if entry is None:
            delattr(owner, name)
        else:
            setattr(owner, name, entry)
