"""``save`` and ``load`` in PyTorch's checkpoint format, and ``load``'s restricted unpickler.

``save`` writes what ``torch.save`` writes: a zip archive holding ``data.pkl`` (the object,
pickled with protocol 2, tensors as ``torch._utils._rebuild_tensor_v2`` calls) and one raw record
per storage (``data/<key>``), so ``torch.load(..., weights_only=True)`` reads it. ``load`` reads
such files (from ``torch.save`` too) without importing torch, and, as PyTorch ≥ 2.6 does, by
default (``weights_only=True``) admits only the globals that tensors, state dicts, optimizer
states and containers of them need: a crafted file cannot run code. Files written by retrograd
before this format (a plain pickle) still load.

>>> import io, retrograd as rg
>>> buffer = io.BytesIO()
>>> rg.save({"w": rg.ones(2, requires_grad=True)}, buffer)
>>> _ = buffer.seek(0)
>>> rg.load(buffer)["w"]
tensor([1., 1.], requires_grad=True)
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import io
import os
import pickle
import sys
import warnings
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import numpy as np

from . import _dtype
from .tensor import Size, Tensor, device

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

_ZIP_MAGIC = b"PK\x03\x04"
_ALIGNMENT = 64  # PyTorch's writer starts every record's data at a multiple of 64 bytes (for mmap)
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` "
    "to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result "
    "in arbitrary code execution. Do it only if you got the file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html."
)


# -- the objects a checkpoint names -------------------------------------------------------------
class _StorageType:
    """A typed storage class of PyTorch's (``torch.FloatStorage``...): names a record's dtype."""

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return f"<class 'torch.{self.name}'>"


class _BFloat16StorageType(_StorageType):
    """``torch.BFloat16Storage``: its NumPy dtype comes from ml_dtypes, loaded when a record of it is read."""

    def __init__(self) -> None:
        self.name = "BFloat16Storage"

    @property  # type: ignore[override]
    def np(self) -> np.dtype:
        return _dtype.load_bfloat16().np


_BF16_STORAGE = _BFloat16StorageType()


class _Storage:
    """One loaded storage record: a flat, writable array that every tensor on it views."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class _TorchGlobal:
    """A global that a checkpoint names as ``module.name`` (``torch._utils._rebuild_tensor_v2``)
    and retrograd implements as ``target``; ``save`` writes the name, ``load`` finds the target."""

    def __init__(self, module: str, name: str, target: Any) -> None:
        self.module, self.name, self.target = module, name, target

    def __call__(self, *args: Any) -> Any:
        return self.target(*args)


def _check_storage(storage: Any, offset: Any, size: Any, stride: Any) -> None:
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")
    if not (isinstance(offset, int) and all(isinstance(v, int) for v in (*size, *stride)) and len(size) == len(stride)):
        raise pickle.UnpicklingError(f"invalid tensor geometry: offset {offset!r}, size {size!r}, stride {stride!r}")
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"invalid tensor geometry: offset {offset}, size {tuple(size)}, stride {tuple(stride)}")
    numel = storage.array.size
    if all(s > 0 for s in size):
        needed = offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))
        if needed > numel:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
                f"{storage.array.itemsize} requiring a storage size of {needed * storage.array.itemsize} are out of "
                f"bounds for storage of size {numel * storage.array.itemsize}"
            )


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    _check_storage(storage, storage_offset, size, stride)
    array = storage.array
    if any(s == 0 for s in size):
        return Tensor._make(np.empty(tuple(size), dtype=array.dtype))
    # A view of the storage's array: tensors loaded from one storage share memory, as in PyTorch.
    view = np.lib.stride_tricks.as_strided(array[storage_offset:], shape=tuple(size),
                                           strides=tuple(s * array.itemsize for s in stride))
    return Tensor._make(view)


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                       backward_hooks: Any = None, metadata: Any = None) -> Tensor:
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        if t._data.dtype.kind not in "fV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        t._requires_grad = True
    return t


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any = None) -> Any:
    from .nn.parameter import Parameter

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"expected a Tensor to rebuild a Parameter from, got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any) -> Any:
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(param, state)
    return param


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    out = func(*args)
    _set_state(out, state)
    return out


def _set_state(obj: Any, state: Any) -> None:
    # Python attributes that PyTorch saved with a tensor (``t.note = ...``): never one that the
    # class defines (``_data``, ``_grad_fn``, methods), which would corrupt the tensor.
    if isinstance(state, tuple):
        state = state[0]
    if isinstance(state, dict):
        for key, value in state.items():
            if not isinstance(key, str) or hasattr(type(obj), key):
                raise pickle.UnpicklingError(f"refusing to set attribute {key!r} on a loaded tensor")
            setattr(obj, key, value)


def _parameter_class() -> Any:
    from .nn.parameter import Parameter

    return Parameter


def _legacy_rebuild(data: Any, requires_grad: Any) -> Tensor:
    # retrograd's own format before the zip archive: a pickled NumPy array per tensor.
    if not isinstance(data, np.ndarray) or data.dtype not in _dtype.FROM_NUMPY:
        raise pickle.UnpicklingError("expected a NumPy array of a supported dtype to rebuild a tensor from")
    return Tensor._make(data, bool(requires_grad))


def _legacy_rebuild_parameter(data: Any, requires_grad: Any) -> Any:
    return _rebuild_parameter(_legacy_rebuild(data, False), requires_grad)


def _torch_device(*args: Any) -> device:
    return device(*args)


_STORAGE_TYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16, "ByteStorage": np.uint8,
    "CharStorage": np.int8, "ShortStorage": np.int16, "IntStorage": np.int32, "LongStorage": np.int64,
    "BoolStorage": np.bool_, "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
_STORAGE_BY_DTYPE = {np.dtype(v): _StorageType(k, v) for k, v in _STORAGE_TYPES.items()}
_UNTYPED = _StorageType("UntypedStorage", np.uint8)

_REBUILD_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2", _rebuild_tensor_v2)
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter", _rebuild_parameter)
_TORCH_SIZE = _TorchGlobal("torch", "Size", Size)
_TORCH_DEVICE = _TorchGlobal("torch", "device", _torch_device)


def _default_globals() -> dict[str, Any]:
    """``module.name`` -> object, for every global a weights-only load admits by default."""
    table: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter, "builtins.set": set,
        "builtins.frozenset": frozenset, "builtins.complex": complex, "builtins.bytearray": bytearray,
        "builtins.slice": slice, "_codecs.encode": _codecs_encode,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.Tensor": Tensor, "torch.storage.UntypedStorage": _UNTYPED, "retrograd.tensor.Size": Size,
        # retrograd's format before the zip archive
        "retrograd.tensor._rebuild": _legacy_rebuild,
        "retrograd.nn.parameter._rebuild_parameter": _legacy_rebuild_parameter,
        "numpy.ndarray": _NDARRAY, "numpy.dtype": np.dtype,
        "numpy.core.multiarray._reconstruct": _np_reconstruct, "numpy._core.multiarray._reconstruct": _np_reconstruct,
    }
    for g in (_REBUILD_V2, _REBUILD_PARAMETER, _TORCH_SIZE, _TORCH_DEVICE):
        table[f"{g.module}.{g.name}"] = g.target
    for storage_type in _STORAGE_BY_DTYPE.values():
        table["torch." + storage_type.name] = storage_type
    table["torch.BFloat16Storage"] = _BF16_STORAGE
    for d in _dtype.ALL_DTYPES:
        table["torch." + d.name] = d
        table["retrograd._dtype." + d.name] = d
    return table


def _codecs_encode(obj: Any, encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
    # Protocol 2 pickles bytes as _codecs.encode(str, "latin1"); only text codecs are admitted.
    import codecs

    if not isinstance(obj, str) or not isinstance(encoding, str) or not codecs.lookup(encoding)._is_text_encoding:
        raise pickle.UnpicklingError(f"refusing _codecs.encode with encoding {encoding!r}")
    return codecs.encode(obj, encoding, errors)


# NumPy pickles an array as _reconstruct(ndarray, ...) then ndarray.__setstate__, which checks the
# data's size. The type itself is not admitted: called with a buffer and strides it could view
# memory outside that buffer. This token stands for it as _reconstruct's argument only.
class _ArrayTypeToken:
    def __call__(self, *args: Any) -> Any:
        raise pickle.UnpicklingError("Trying to call reduce for unrecognized function numpy.ndarray: it is admitted "
                                     "only as the type a pickled NumPy array names")


_NDARRAY = _ArrayTypeToken()


def _np_reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    if subtype is not _NDARRAY and subtype is not np.ndarray:  # np.ndarray itself: weights_only=False
        raise pickle.UnpicklingError(f"refusing to rebuild a NumPy array of type {subtype!r}")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


_DEFAULT_GLOBALS: dict[str, Any] | None = None
_USER_GLOBALS: list[Any] = []


def _allowed_globals() -> dict[str, Any]:
    global _DEFAULT_GLOBALS
    if _DEFAULT_GLOBALS is None:
        _DEFAULT_GLOBALS = _default_globals()
    return _DEFAULT_GLOBALS


def _global_name(entry: Any) -> tuple[Any, str]:
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise ValueError(f"Expected tuple of (obj, str) in safe globals, got {entry!r}")
        return entry[0], entry[1]
    return entry, f"{entry.__module__}.{entry.__qualname__}"


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Admit these globals (classes, functions, or ``(obj, "module.name")`` pairs) in weights-only loads.

    >>> import collections, retrograd as rg
    >>> rg.serialization.add_safe_globals([collections.defaultdict])
    >>> collections.defaultdict in rg.serialization.get_safe_globals()
    True
    >>> rg.serialization.clear_safe_globals()
    """
    for entry in safe_globals:
        _global_name(entry)  # a malformed entry fails here, before anything is added
    _USER_GLOBALS.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals added by ``add_safe_globals`` (a copy).

    >>> import retrograd as rg
    >>> rg.serialization.get_safe_globals()
    []
    """
    return list(_USER_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every global added by ``add_safe_globals``.

    >>> import retrograd as rg
    >>> rg.serialization.clear_safe_globals()
    """
    _USER_GLOBALS.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """Context manager: admit ``safe_globals`` in weights-only loads within the ``with`` block.

    >>> import collections, retrograd as rg
    >>> with rg.serialization.safe_globals([collections.defaultdict]):
    ...     len(rg.serialization.get_safe_globals())
    1
    >>> rg.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        self._before = list(_USER_GLOBALS)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _USER_GLOBALS[:] = self._before


# -- load ---------------------------------------------------------------------------------------
class _WeightsOnlyError(pickle.UnpicklingError):
    pass


class _Resolver:
    """Resolves PyTorch's globals to retrograd's objects; with ``weights_only`` admits nothing else
    (``find_class`` is the only way a pickle reaches a callable)."""

    def __init__(self, file: BinaryIO, weights_only: bool, storages: Callable[[Any], Any] | None,
                 **kwargs: Any) -> None:
        super().__init__(file, **kwargs)  # type: ignore[call-arg]
        self.weights_only = weights_only
        self.storages = storages

    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 writes Python 2's names (``__builtin__.set``): map them as pickle's own find_class does.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        allowed = _allowed_globals()
        if full == "numpy.ndarray" and not self.weights_only:
            return np.ndarray
        if full in allowed:
            return allowed[full]
        for entry in _USER_GLOBALS:
            obj, entry_name = _global_name(entry)
            if entry_name == full:
                return obj
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(f"retrograd cannot rebuild {full}: a PyTorch object that retrograd does not "
                                         "have (a dtype or tensor kind it lacks, or a whole pickled module: save "
                                         "its state_dict() instead)")
        if not self.weights_only:
            return super().find_class(module, name)  # type: ignore[misc]
        if module in _BLOCKED_MODULES:
            raise _WeightsOnlyError(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        shown = full[len("builtins."):] if full.startswith("builtins.") else full
        raise _WeightsOnlyError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function."
        )

    def persistent_load(self, pid: Any) -> Any:
        if self.storages is None or not isinstance(pid, tuple) or not pid or pid[0] != "storage" or len(pid) != 5:
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        return self.storages(pid)


class _Unpickler(_Resolver, pickle.Unpickler):
    """For ``weights_only=False``: the C unpickler, with PyTorch's names resolved to retrograd's."""


_PureUnpickler: Any = pickle._Unpickler  # type: ignore[attr-defined]
# Types that a weights-only pickle may instantiate (NEWOBJ) or fill in (BUILD), besides those added
# with add_safe_globals. Classes themselves are never filled in: that would set class attributes.
_NEWOBJ_TYPES = (OrderedDict, Counter, set, frozenset, complex, bytearray, Size)
_BUILD_TYPES = (OrderedDict, Counter)


def _user_types() -> list[Any]:
    return [_global_name(entry)[0] for entry in _USER_GLOBALS]


class _WeightsOnlyUnpickler(_Resolver, _PureUnpickler):  # type: ignore[misc]
    """For ``weights_only=True``: Python's own unpickler (the C one offers no hook for the opcodes
    below), refusing to create or fill in objects of types that were not admitted."""

    def _load_newobj(self) -> None:
        cls = self.stack[-2]
        if not (isinstance(cls, type) and (cls in _NEWOBJ_TYPES or cls in _user_types())):
            raise _WeightsOnlyError("Can only create new object for nn.Parameter or classes allowlisted via "
                                    f"`add_safe_globals` but got {cls}")
        _PureUnpickler.load_newobj(self)

    def _load_newobj_ex(self) -> None:
        cls = self.stack[-3]
        if not (isinstance(cls, type) and (cls in _NEWOBJ_TYPES or cls in _user_types())):
            raise _WeightsOnlyError("Can only create new object for nn.Parameter or classes allowlisted via "
                                    f"`add_safe_globals` but got {cls}")
        _PureUnpickler.load_newobj_ex(self)

    def _load_build(self) -> None:
        inst = self.stack[-2]
        if isinstance(inst, type) or not (type(inst) in _BUILD_TYPES or isinstance(inst, (np.ndarray, np.dtype))
                                          or type(inst) in _user_types()):
            raise _WeightsOnlyError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                    f"`add_safe_globals`, but got {type(inst)}")
        _PureUnpickler.load_build(self)

    dispatch = dict(_PureUnpickler.dispatch)
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = _load_newobj_ex
    dispatch[pickle.BUILD[0]] = _load_build


def _unpickler(file: BinaryIO, weights_only: bool, storages: Callable[[Any], Any] | None, **kwargs: Any) -> Any:
    return (_WeightsOnlyUnpickler if weights_only else _Unpickler)(file, weights_only, storages, **kwargs)


def _wo_message(message: str) -> str:
    # PyTorch's wording around a refused weights-only load.
    if "was not an allowed global by default" in message:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    else:
        text = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
        if "is blocked" not in message:
            text += ("Please file an issue with the following so that we can make `weights_only=True` compatible "
                     "with your use case: WeightsUnpickler error: ")
        text += "\n\n" + message
    return text + _DOCS_MESSAGE


def _target_location(map_location: Any, storage: _Storage, location: str) -> str:
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    if isinstance(map_location, (str, device)) or hasattr(map_location, "type"):
        return str(map_location)
    if callable(map_location):
        result = map_location(storage, location)
        return "cpu" if result is None or isinstance(result, _Storage) else str(result)
    raise TypeError(f"map_location should be a str, a torch.device, a dict or a callable, got {type(map_location)}")


def _check_location(target: str) -> None:
    if target.split(":")[0] == "cpu":
        return
    if target.startswith("cuda"):
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
            "storages to the CPU."
        )
    raise RuntimeError(f"don't know how to restore data location of a storage saved on {target!r}: retrograd runs "
                       "on the CPU only (pass map_location='cpu')")


def _load_zip(handle: BinaryIO, map_location: Any, weights_only: bool, pickle_kwargs: dict[str, Any]) -> Any:
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise RuntimeError(
            "PytorchStreamReader failed reading zip archive: failed finding central directory. If you are seeing "
            "this error, there is a high likelihood that your checkpoint file is corrupted (truncated or modified "
            f"after saving). ({exc})"
        ) from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if not pickles:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        prefix = pickles[0][: -len("data.pkl")]

        def record(name: str) -> bytes:
            try:
                return archive.read(prefix + name)
            except KeyError:
                raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None
            except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {exc} (the checkpoint file "
                                   "is corrupted)") from None

        byteorder = record("byteorder").decode() if prefix + "byteorder" in names else "little"
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"Unknown endianness type: {byteorder}")
        loaded: dict[str, _Storage] = {}

        def storages(pid: tuple[Any, ...]) -> _Storage:
            _, storage_type, key, location, numel = pid
            if not isinstance(storage_type, _StorageType):
                raise pickle.UnpicklingError(f"unsupported storage type {storage_type!r}")
            key = str(key)
            if key not in loaded:
                raw = record(f"data/{key}")
                itemsize = storage_type.np.itemsize
                if not isinstance(numel, int) or numel < 0 or len(raw) < numel * itemsize:
                    raise RuntimeError(f"storage data/{key} holds {len(raw)} bytes, too few for {numel} elements of "
                                       f"{storage_type.np} (the checkpoint file is corrupted)")
                if storage_type is _UNTYPED:
                    numel = len(raw)
                array = np.frombuffer(bytearray(raw[: numel * itemsize]),
                                      dtype=storage_type.np.newbyteorder("<" if byteorder == "little" else ">"))
                if not array.dtype.isnative:
                    array = array.astype(storage_type.np)
                storage = _Storage(array)
                _check_location(_target_location(map_location, storage, str(location)))
                loaded[key] = storage
            return loaded[key]

        unpickler = _unpickler(io.BytesIO(record("data.pkl")), weights_only, storages, **pickle_kwargs)
        return unpickler.load()


_PICKLE_LOAD_ARGS = ("encoding", "errors", "fix_imports", "buffers")


@contextlib.contextmanager
def _opened(f: Any, mode: str) -> Iterator[Any]:
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


def load(f: str | os.PathLike[str] | BinaryIO, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read an object written by ``save`` or ``torch.save`` (or a ``.safetensors`` file).

    As in PyTorch ≥ 2.6, ``weights_only`` defaults to True: only tensors, parameters, dtypes,
    sizes and containers of them (and globals added with ``add_safe_globals``) are admitted.
    Pass ``weights_only=False`` only for files you trust: that unpickles anything.

    >>> import io, retrograd as rg
    >>> buffer = io.BytesIO()
    >>> rg.save([rg.tensor([1, 2]), "note"], buffer)
    >>> _ = buffer.seek(0)
    >>> rg.load(buffer, map_location="cpu")
    [tensor([1, 2]), 'note']
    """
    if weights_only is None:
        weights_only = True
    for key in pickle_load_args:
        if key not in _PICKLE_LOAD_ARGS:  # worded as the unpickler PyTorch would hand it to
            raise TypeError(f"Unpickler.__init__() got an unexpected keyword argument '{key}'" if weights_only
                            else f"'{key}' is an invalid keyword argument for Unpickler()")
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise ValueError("retrograd.load supports only the standard pickle module as pickle_module")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
        pickle_load_args = {}
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        raise ValueError("retrograd.load does not support mmap=True: call it without mmap to read the file into memory")
    pickle_load_args.setdefault("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        from .utils.safetensors import load_file

        return load_file(f)
    with _opened(f, "rb") as handle:
        if not handle.seekable():
            handle = io.BytesIO(handle.read())
        start = handle.tell()
        magic = handle.read(4)
        handle.seek(start)
        try:
            if magic == _ZIP_MAGIC:
                return _load_zip(handle, map_location, weights_only, pickle_load_args)
            if magic[:1] != pickle.PROTO:
                if not magic:
                    raise EOFError("Ran out of input")
                raise pickle.UnpicklingError(
                    f"invalid load key, {magic[:1]!r}: not a checkpoint (neither the zip archive that save and "
                    "torch.save write nor a pickle)")
            # retrograd's format before the zip archive: one pickle, arrays inline.
            return _unpickler(handle, weights_only, None, **pickle_load_args).load()
        except _WeightsOnlyError as exc:
            raise pickle.UnpicklingError(_wo_message(str(exc))) from None


# -- save ---------------------------------------------------------------------------------------
class _Rebuild:
    """A value that pickles as ``func(*args)``."""

    def __init__(self, func: _TorchGlobal, args: tuple[Any, ...]) -> None:
        self.func, self.args = func, args


class _SavedStorage:
    def __init__(self, key: str, storage_type: _StorageType, data: np.ndarray) -> None:
        self.key, self.storage_type, self.data = key, storage_type, data


# The pure-Python pickler: it lets save() write a global by name (``torch._utils ...``) for
# objects that live in retrograd, which the C pickler cannot without importing torch.
_PurePickler: Any = pickle._Pickler  # type: ignore[attr-defined]


class _Pickler(_PurePickler):  # type: ignore[misc]
    def __init__(self, file: BinaryIO, protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[tuple[int, Any], _SavedStorage] = {}
        self.keep: list[Any] = []  # arrays whose ids key self.storages stay alive while pickling

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _SavedStorage):
            return ("storage", obj.storage_type, obj.key, "cpu", int(obj.data.size))
        return None

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, (_TorchGlobal, _StorageType, _dtype.dtype)):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            module, name = ("torch", obj.name) if not isinstance(obj, _TorchGlobal) else (obj.module, obj.name)
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, _Rebuild):
            return obj.func, obj.args
        if isinstance(obj, Size):
            return _TORCH_SIZE, (tuple(obj),)
        if isinstance(obj, device):
            return _TORCH_DEVICE, (str(obj),)
        return NotImplemented

    def _storage_of(self, array: np.ndarray) -> tuple[_SavedStorage, int, tuple[int, ...]]:
        """The storage ``array`` lives in, its offset there and its strides, in elements: arrays
        viewing one owner's memory share one storage, as PyTorch's views do."""
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        itemsize = array.itemsize
        strides = tuple(s // itemsize if n > 1 else 1 for s, n in zip(array.strides, array.shape))
        offset_bytes = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        shareable = (root.dtype == array.dtype and root.flags.c_contiguous
                     and all(s % itemsize == 0 and s >= 0 for s in array.strides) and offset_bytes % itemsize == 0
                     and offset_bytes >= 0)
        if not shareable:  # a view across dtypes, or with negative strides: saved as its own copy
            root = array.copy(order="C")
            offset_bytes = 0
            strides = tuple(s // itemsize if n > 1 else 1 for s, n in zip(root.strides, root.shape))
        key = (id(root), root.dtype)
        storage = self.storages.get(key)
        if storage is None:
            storage = _SavedStorage(str(len(self.storages)), _STORAGE_BY_DTYPE[root.dtype], root)
            self.storages[key] = storage
            self.keep.append(root)
        return storage, offset_bytes // itemsize, strides

    def _tensor(self, t: Tensor) -> Any:
        array = t._data
        if array.dtype.name == "bfloat16":  # (its storage class is known once a bfloat16 tensor exists)
            _STORAGE_BY_DTYPE.setdefault(array.dtype, _BF16_STORAGE)
        if array.dtype not in _STORAGE_BY_DTYPE:
            raise pickle.PicklingError(f"cannot save a tensor of dtype {array.dtype}")
        storage, offset, strides = self._storage_of(array)
        tensor = _Rebuild(_REBUILD_V2, (storage, offset, tuple(array.shape), strides,
                                        bool(t._requires_grad), OrderedDict()))
        if isinstance(t, _parameter_class()):
            return _REBUILD_PARAMETER, (tensor, bool(t._requires_grad), OrderedDict())
        return tensor.func, tensor.args


def _record_info(archive: zipfile.ZipFile, start: int, name: str) -> zipfile.ZipInfo:
    """A stored (uncompressed) record whose data starts at a multiple of 64 bytes, as PyTorch's."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    position = archive.fp.tell() - start  # type: ignore[union-attr]
    pad = -(position + 30 + len(name.encode())) % _ALIGNMENT
    if pad and pad < 4:
        pad += _ALIGNMENT
    if pad:  # an extra field ("FB" and its length), filled with "Z" as PyTorch's writer does
        info.extra = b"FB" + (pad - 4).to_bytes(2, "little") + b"Z" * (pad - 4)
    return info


def save(obj: Any, f: str | os.PathLike[str] | BinaryIO, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` (tensors, state dicts, optimizer states, containers) to a path or binary file
    in PyTorch's format: ``torch.load`` reads it. Tensors viewing one storage save it once.

    >>> import io, retrograd as rg
    >>> buffer = io.BytesIO()
    >>> rg.save({"step": 3, "w": rg.zeros(2)}, buffer)
    >>> _ = buffer.seek(0)
    >>> rg.load(buffer)
    {'step': 3, 'w': tensor([0., 0.])}
    """
    if not _use_new_zipfile_serialization:
        raise ValueError("retrograd.save writes only PyTorch's zip format (_use_new_zipfile_serialization=True)")
    if pickle_module is not pickle:
        raise ValueError("retrograd.save supports only the standard pickle module as pickle_module")
    # Pickle first: an object that cannot be pickled fails before anything is written.
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    with _opened(f, "wb") as handle:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED) as archive:
            start = archive.fp.tell()  # type: ignore[union-attr]

            def write(name: str, payload: bytes | memoryview) -> None:
                archive.writestr(_record_info(archive, start, "archive/" + name), payload)

            write("data.pkl", data.getvalue())
            write(".format_version", b"1")
            write(".storage_alignment", str(_ALIGNMENT).encode())
            if not _disable_byteorder_record:
                write("byteorder", sys.byteorder.encode())
            for storage in pickler.storages.values():
                write(f"data/{storage.key}", storage.data.reshape(-1).view(np.uint8).data)
            write("version", b"3\n")
