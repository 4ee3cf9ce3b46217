"""The ``torch.*`` functions that ported programs call at start-up: dtype queries (``finfo``,
``promote_types``...), process settings (threads, determinism, matmul precision, default device)
and conversions from other array libraries (``asarray``, ``frombuffer``, ``from_dlpack``).

The settings are recorded and reported back as PyTorch reports them on a CPU-only machine; NumPy
computes the same way whatever they say (they select among GPU kernels or thread pools in PyTorch).

>>> import retrograd as rg
>>> rg.finfo(rg.float32).eps, rg.iinfo(rg.int8).max
(1.1920928955078125e-07, 127)
"""

from __future__ import annotations

import builtins
import os
import warnings
from typing import Any

import numpy as np

from . import _dtype
from ._complex import _tensor  # (PyTorch's TypeError for a non-tensor argument)
from ._dtype import dtype, get_default_dtype, to_dtype
from .tensor import Tensor, device


class layout:
    """A memory layout; retrograd tensors are all ``torch.strided``.

    >>> import retrograd as rg
    >>> rg.strided
    torch.strided
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")


def _dtype_arg(d: Any, who: str) -> dtype:
    if d is None:
        return get_default_dtype()
    return to_dtype(d)


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``.

    >>> import retrograd as rg
    >>> f = rg.finfo(rg.float16); f.bits, f.max, f.resolution, f.dtype
    (16, 65504.0, 0.001, 'float16')
    """

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - PyTorch's name
        d = _dtype_arg(type, "finfo")
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = np.finfo(d.np)
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # (PyTorch's exact power of ten)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo``.

    >>> import retrograd as rg
    >>> i = rg.iinfo(rg.uint8); i.bits, i.min, i.max, i.dtype
    (8, 0, 255, 'uint8')
    """

    def __init__(self, type: Any) -> None:  # noqa: A002 - PyTorch's name
        d = to_dtype(type)
        if d is _dtype.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.category != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins.int(info.max), builtins.int(info.min), d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def promote_types(type1: Any, type2: Any) -> dtype:
    """The smallest dtype both promote to, by PyTorch's rules.

    >>> import retrograd as rg
    >>> rg.promote_types(rg.int32, rg.float16)
    torch.float16
    """
    return _dtype.FROM_NUMPY[_dtype._promote_pair(to_dtype(type1).np, to_dtype(type2).np)]


def result_type(tensor1: Any, tensor2: Any) -> dtype:
    """The dtype an arithmetic op on these tensors or numbers would give.

    >>> import retrograd as rg
    >>> rg.result_type(rg.tensor([1]), 1.0)
    torch.float32
    """
    return _dtype.FROM_NUMPY[_dtype.result_type((tensor1, tensor2))]


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` (no float to integer, nothing to bool).

    >>> import retrograd as rg
    >>> rg.can_cast(rg.float32, rg.int32), rg.can_cast(rg.int32, rg.float32)
    (False, True)
    """
    a, b = to_dtype(from_), to_dtype(to)
    return not (a.category > b.category and b.category <= 1)


def is_signed(input: Any) -> bool:  # noqa: A002
    """Whether the tensor's dtype is signed.

    >>> import retrograd as rg
    >>> rg.is_signed(rg.ones(1, dtype=rg.uint8))
    False
    """
    return to_dtype(_tensor("is_signed", input)._data.dtype).is_signed


def is_inference(input: Any) -> bool:  # noqa: A002
    """Whether the tensor was made in inference mode.

    >>> import retrograd as rg
    >>> rg.is_inference(rg.ones(1))
    False
    """
    return _tensor("is_inference", input).is_inference()


def is_same_size(input: Any, other: Any) -> bool:  # noqa: A002
    """Whether two tensors have the same shape.

    >>> import retrograd as rg
    >>> rg.is_same_size(rg.ones(2), rg.zeros(2))
    True
    """
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return _tensor("is_same_size", input)._data.shape == _tensor("is_same_size", other)._data.shape


def typename(obj: Any) -> str:
    """A tensor's legacy type name (``torch.FloatTensor``), else the object's qualified type name.

    >>> import retrograd as rg
    >>> rg.typename(rg.ones(1)), rg.typename(1)
    ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[no-any-return]
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    if module == "retrograd" or module.startswith("retrograd."):  # as PyTorch spells its own classes
        module = "torch" + module[len("retrograd"):]
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


def get_device(input: Any) -> int:  # noqa: A002
    """-1: the device index PyTorch gives a CPU tensor.

    >>> import retrograd as rg
    >>> rg.get_device(rg.ones(1))
    -1
    """
    _tensor("get_device", input)
    return -1


def detach(input: Any) -> Tensor:  # noqa: A002
    """``input.detach()``.

    >>> import retrograd as rg
    >>> rg.detach(rg.ones(1, requires_grad=True)).requires_grad
    False
    """
    return _tensor("detach", input).detach()


def detach_(input: Any) -> Tensor:  # noqa: A002
    """``input.detach_()``.

    >>> import retrograd as rg
    >>> t = rg.ones(1, requires_grad=True) * 2; rg.detach_(t) is t, t.requires_grad
    (True, False)
    """
    return _tensor("detach_", input).detach_()


# ---- conversions --------------------------------------------------------------------------------

def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """A tensor from ``obj``, sharing memory with a tensor or NumPy array when ``copy`` allows.

    ``copy=None`` shares when the dtype allows, ``copy=True`` always copies, ``copy=False``
    refuses to copy. A tensor given without a copy is returned itself, its graph kept (as in
    PyTorch 2.13, ``requires_grad`` left unspecified follows the tensor's; ``False`` detaches).

    >>> import numpy as np, retrograd as rg
    >>> a = np.zeros(2); t = rg.asarray(a); a[0] = 5; t
    tensor([5., 0.], dtype=torch.float64)
    """
    from .factories import _finish, tensor
    if device is not None:
        _check_default_device(device)
    want = None if dtype is None else to_dtype(dtype)
    if isinstance(obj, Tensor):
        if copy:
            out = obj.clone() if want is None else obj.to(want, copy=True)
        elif want is None or want.np == obj._data.dtype:
            out = obj
        elif copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_dtype.scalar_type_name(obj._data.dtype)}' into "
                             f"dtype '{_dtype.scalar_type_name(want.np)}'.")
        else:
            out = obj.to(want)
        if requires_grad is False and out.requires_grad:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            out.requires_grad_()
        return out
    array = obj if isinstance(obj, np.ndarray) else None
    if array is None and (hasattr(obj, "__array_interface__") or hasattr(obj, "__dlpack__")
                          or isinstance(obj, (memoryview, np.generic))):
        array = np.asarray(obj)
    if array is not None:
        _dtype.from_numpy_dtype(array.dtype)
        if want is not None and want.np != array.dtype:
            if copy is False:
                raise ValueError(f"can't alias tensor with dtype '{_dtype.scalar_type_name(array.dtype)}' into "
                                 f"dtype '{_dtype.scalar_type_name(want.np)}'.")
            array = array.astype(want.np)
        elif copy:
            array = array.copy()
        return _finish(array, bool(requires_grad))
    if copy is False:
        raise ValueError("can't alias a Python sequence: it has no memory of its own to share")
    return tensor(obj, dtype=want, requires_grad=bool(requires_grad))


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor viewing the bytes of an object with the buffer protocol (no copy).

    >>> import retrograd as rg
    >>> rg.frombuffer(bytearray(b"\\x01\\x02\\x03"), dtype=rg.uint8)
    tensor([1, 2, 3], dtype=torch.uint8)
    """
    from .factories import _finish
    d = to_dtype(dtype)
    view = memoryview(buffer)
    length = view.nbytes
    size = d.itemsize
    if length <= 0 and count == -1 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif length - offset < count * size:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
                      "You may want to copy the buffer to protect its data or make it writable before converting "
                      "it to a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    array = np.frombuffer(view, dtype=d.np, count=count, offset=offset)
    if view.readonly:  # an immutable buffer cannot change under the tensor: a copy keeps it writable
        array = array.copy()
    return _finish(array, requires_grad)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with any object that speaks DLPack (a NumPy array, a PyTorch tensor).

    >>> import numpy as np, retrograd as rg
    >>> rg.from_dlpack(np.arange(3))
    tensor([0, 1, 2])
    """
    from .factories import _finish
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    array = np.from_dlpack(ext_tensor)
    _dtype.from_numpy_dtype(array.dtype)
    return _finish(array, False)


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule sharing the tensor's memory (NumPy makes it), for another library to take.

    >>> import retrograd as rg
    >>> type(rg.to_dlpack(rg.ones(2))).__name__
    'PyCapsule'
    """
    return _tensor("to_dlpack", tensor)._data.__dlpack__()


def is_distributed(input: Any) -> bool:  # noqa: A002
    """False: retrograd tensors are never distributed.

    >>> import retrograd as rg
    >>> rg.is_distributed(rg.ones(1))
    False
    """
    _tensor("is_distributed", input)
    return False


# ---- process settings ---------------------------------------------------------------------------

_settings: dict[str, Any] = {
    "num_threads": os.cpu_count() or 1, "interop_threads": os.cpu_count() or 1, "interop_set": False,
    "deterministic": False, "warn_only": False, "matmul_precision": "highest",
}


def set_num_threads(int: Any) -> None:  # noqa: A002 - PyTorch's name
    """Record the intra-op thread count (NumPy's BLAS keeps its own pool).

    >>> import retrograd as rg
    >>> n = rg.get_num_threads(); rg.set_num_threads(1); rg.get_num_threads(); rg.set_num_threads(n)
    1
    """
    if not isinstance(int, builtins.int) or isinstance(int, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _settings["num_threads"] = int


def get_num_threads() -> int:
    """The intra-op thread count (the CPU count unless set).

    >>> import retrograd as rg
    >>> rg.get_num_threads() >= 1
    True
    """
    return _settings["num_threads"]  # type: ignore[no-any-return]


def set_num_interop_threads(int: Any) -> None:  # noqa: A002
    """Record the inter-op thread count; as in PyTorch it can be set only once.

    >>> import retrograd as rg
    >>> rg.get_num_interop_threads() >= 1
    True
    """
    if not isinstance(int, builtins.int) or isinstance(int, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _settings["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _settings["interop_threads"], _settings["interop_set"] = int, True


def get_num_interop_threads() -> int:
    """The inter-op thread count."""
    return _settings["interop_threads"]  # type: ignore[no-any-return]


def init_num_threads() -> None:
    """Nothing to initialise: NumPy's pool starts itself."""


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag. Every retrograd op is already deterministic on the CPU.

    >>> import retrograd as rg
    >>> rg.use_deterministic_algorithms(True); rg.are_deterministic_algorithms_enabled()
    True
    >>> rg.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _settings["deterministic"], _settings["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _settings["deterministic"]  # type: ignore[no-any-return]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether it was set with ``warn_only=True``."""
    return _settings["warn_only"]  # type: ignore[no-any-return]


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """0/"default", 1/"warn", 2/"error": the same flag as ``use_deterministic_algorithms``.

    >>> import retrograd as rg
    >>> rg.set_deterministic_debug_mode("warn"); rg.get_deterministic_debug_mode()
    1
    >>> rg.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = names[debug_mode]
    if not isinstance(debug_mode, builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 (warn only) or 2, from the current flags."""
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium" (NumPy always multiplies in full float32).

    >>> import retrograd as rg
    >>> rg.get_float32_matmul_precision()
    'highest'
    """
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The recorded float32 matmul precision."""
    return _settings["matmul_precision"]  # type: ignore[no-any-return]


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy cannot flush denormals, which is what PyTorch answers on a CPU without the mode.

    >>> import retrograd as rg
    >>> rg.set_flush_denormal(True)
    False
    """
    return False


_TENSOR_TYPES = {"torch.FloatTensor": _dtype.float32, "torch.DoubleTensor": _dtype.float64,
                 "torch.HalfTensor": _dtype.float16}


def set_default_tensor_type(t: Any) -> None:
    """Deprecated in PyTorch 2.1: sets the default float dtype from a tensor type or its name.

    >>> import retrograd as rg, warnings
    >>> with warnings.catch_warnings(): _ = warnings.simplefilter("ignore"); rg.set_default_tensor_type("torch.FloatTensor")
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else ("torch.FloatTensor" if t is Tensor else typename(t))
    if name not in _TENSOR_TYPES:
        if isinstance(t, str) and not name.endswith("Tensor"):
            raise TypeError(f"invalid type: '{name}'")
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(_TENSOR_TYPES[name])


def _check_default_device(dev: Any) -> device:
    if isinstance(dev, device):
        return dev
    if str(dev).split(":")[0] == "cuda":  # PyTorch's CPU build's answer to a CUDA tensor
        raise AssertionError("Torch not compiled with CUDA enabled")
    return device(dev)


def set_default_device(device: Any) -> None:
    """Only the CPU (or None) is accepted: retrograd has no other device.

    >>> import retrograd as rg
    >>> rg.set_default_device("cpu"); rg.get_default_device()
    device(type='cpu')
    """
    if device is not None:
        _check_default_device(device)


def get_default_device() -> device:
    """``device(type='cpu')``."""
    return device("cpu")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (``retrograd.autocast``; without an argument,
    CUDA's, which is never on).

    >>> import retrograd as rg
    >>> rg.is_autocast_enabled(), rg.is_autocast_enabled("cpu")
    (False, False)
    """
    from .amp import autocast_mode

    return autocast_mode.is_autocast_enabled(device_type)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")``; deprecated in PyTorch, with its warning."""
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use torch.is_autocast_enabled('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches its casts of parameters (True unless ``set_autocast_cache_enabled``)."""
    from .amp import autocast_mode

    return bool(autocast_mode._STATE["cache"])


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's cache of parameter casts on or off.

    >>> import retrograd as rg
    >>> rg.set_autocast_cache_enabled(False); rg.is_autocast_cache_enabled()
    False
    >>> rg.set_autocast_cache_enabled(True)
    """
    from .amp import autocast_mode

    autocast_mode._STATE["cache"] = bool(enabled)
