"""The ``safetensors`` file format, read and written directly (the ``safetensors`` package is not needed).

A file is an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape
and byte range (``data_offsets``) plus an optional ``__metadata__`` of strings, then the raw
little-endian bytes. Unlike a pickle, loading one cannot run code. The functions follow
``safetensors.torch``: ``save_file``, ``load_file``, ``save`` (to bytes) and ``load`` (from bytes).

>>> import retrograd as rg
>>> from retrograd.utils import safetensors
>>> blob = safetensors.save({"w": rg.ones(2, 2)}, metadata={"format": "pt"})
>>> safetensors.load(blob)["w"].shape
torch.Size([2, 2])
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..tensor import Tensor

__all__ = ["SafetensorError", "load", "load_file", "save", "save_file"]

_NAMES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
          "I32": np.int32, "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_}
_DTYPES = {np.dtype(v).newbyteorder("<"): k for k, v in _NAMES.items()}
# The package writes tensors in the descending order of its dtype enum, then by name.
_RANK = {name: i for i, name in enumerate(("BOOL", "U8", "I8", "I16", "F16", "I32", "F32", "F64", "I64"))}
_MAX_HEADER = 100_000_000


def _know_bfloat16() -> None:
    """Add BF16 (ml_dtypes' bfloat16, loaded only when a file or a tensor has one) to the tables."""
    if "BF16" not in _NAMES:
        from .. import _dtype

        bf16 = _dtype.load_bfloat16().np
        _NAMES["BF16"] = bf16.type
        _DTYPES[bf16.newbyteorder("<")] = "BF16"
        _RANK["BF16"] = _RANK["F16"] + 0.5  # type: ignore[assignment]  # between F16 and I32 in the enum
  # the safetensors package's limit: a larger header is a corrupted file


class SafetensorError(Exception):
    """A file or buffer that is not a valid safetensors file (the ``safetensors`` package's name)."""


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (a dict of name -> Tensor), with optional string metadata.

    >>> import retrograd as rg
    >>> from retrograd.utils import safetensors
    >>> len(safetensors.save({"b": rg.zeros(3, dtype=rg.uint8)}))
    67
    """
    header: dict[str, Any] = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise TypeError("metadata must be a dict[str, str]")
        header["__metadata__"] = metadata
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of name -> Tensor, got {type(tensors).__name__}")
    arrays = []
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise TypeError(f"tensors must be a dict of str -> Tensor, got {type(name).__name__} -> "
                            f"{type(t).__name__}")
        if t._data.dtype.name == "bfloat16":
            _know_bfloat16()
        array = t._data.astype(t._data.dtype.newbyteorder("<"), order="C", copy=False)
        arrays.append((name, array))
    arrays.sort(key=lambda item: (-_RANK[_DTYPES[item[1].dtype]], item[0]))
    offset = 0
    for name, array in arrays:
        header[name] = {"dtype": _DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return b"".join([len(text).to_bytes(8, "little"), text, *(a.tobytes() for _, a in arrays)])


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors in safetensors bytes, by name; each owns a fresh writable array.

    >>> import retrograd as rg
    >>> from retrograd.utils import safetensors
    >>> safetensors.load(safetensors.save({"x": rg.tensor([1.5])}))
    {'x': tensor([1.5000])}
    """
    view = memoryview(data)
    if len(view) < 8:
        raise SafetensorError("Error while deserializing header: header too small")
    n = int.from_bytes(view[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(view):
        raise SafetensorError("Error while deserializing header: invalid header length")
    try:
        header = json.loads(bytes(view[8:8 + n]))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorError(f"Error while deserializing header: invalid JSON in header: {exc}") from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: the header is not a JSON object")
    header.pop("__metadata__", None)
    body = view[8 + n:]
    entries = []
    for name, info in header.items():
        if isinstance(info, dict) and info.get("dtype") == "BF16":
            _know_bfloat16()
        try:
            dtype = np.dtype(_NAMES[info["dtype"]]).newbyteorder("<")
            shape = tuple(int(s) for s in info["shape"])
            begin, end = (int(v) for v in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorError(f"Error while deserializing header: invalid entry for tensor {name!r}: "
                                  f"{info!r} (unsupported dtype or malformed fields)") from None
        if any(s < 0 for s in shape) or not 0 <= begin <= end <= len(body):
            raise SafetensorError(f"Error while deserializing header: tensor {name!r} lies outside the data")
        if end - begin != int(np.prod(shape)) * dtype.itemsize:
            raise SafetensorError(f"Error while deserializing header: tensor {name!r} has {end - begin} bytes, "
                                  f"its shape {list(shape)} and dtype {info['dtype']} need "
                                  f"{int(np.prod(shape)) * dtype.itemsize}")
        entries.append((begin, end, name, dtype, shape))
    # The package requires the tensors to tile the data exactly: no gaps, no overlaps, no tail.
    position = 0
    for begin, end, name, _, _ in sorted(entries):
        if begin != position:
            raise SafetensorError("Error while deserializing header: invalid offset for tensor "
                                  f"{name!r} (tensors overlap or leave gaps)")
        position = end
    if position != len(body):
        raise SafetensorError("Error while deserializing header: incomplete metadata, file not fully covered")
    out = {}
    for begin, end, name, dtype, shape in entries:
        array = np.frombuffer(body[begin:end], dtype=dtype).astype(dtype.newbyteorder("="), copy=True)
        out[name] = Tensor._make(array.reshape(shape))
    return out


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike[str],
              metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` to ``filename`` in the safetensors format.

    >>> import os, tempfile, retrograd as rg
    >>> from retrograd.utils import safetensors
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> safetensors.save_file({"w": rg.zeros(2)}, path)
    >>> safetensors.load_file(path)
    {'w': tensor([0., 0.])}
    """
    data = save(tensors, metadata)  # fails before the file is opened
    with open(filename, "wb") as handle:
        handle.write(data)


def load_file(filename: str | os.PathLike[str], device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors in the safetensors file ``filename``, by name (``device`` must be the CPU).

    >>> import os, tempfile, retrograd as rg
    >>> from retrograd.utils import safetensors
    >>> path = os.path.join(tempfile.mkdtemp(), "b.safetensors")
    >>> safetensors.save_file({"b": rg.tensor([True])}, path)
    >>> safetensors.load_file(path)["b"]
    tensor([True])
    """
    if str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"retrograd runs on the CPU only; device {device!r} is not available")
    with open(filename, "rb") as handle:
        return load(handle.read())
