"""``save`` and ``load``: tensors, modules' state dicts and optimizers' states, with pickle.

>>> import io, retrograd as rg
>>> buffer = io.BytesIO()
>>> rg.save({"w": rg.ones(2, requires_grad=True)}, buffer)
>>> _ = buffer.seek(0)
>>> rg.load(buffer)["w"]
tensor([1., 1.], requires_grad=True)
"""

from __future__ import annotations

import os
import pickle
from typing import Any, BinaryIO


def save(obj: Any, f: str | os.PathLike[str] | BinaryIO, pickle_protocol: int = pickle.DEFAULT_PROTOCOL) -> None:
    """Write ``obj`` (tensors, dicts of them, any picklable object) to a path or binary file."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            pickle.dump(obj, handle, protocol=pickle_protocol)
    else:
        pickle.dump(obj, f, protocol=pickle_protocol)


def load(f: str | os.PathLike[str] | BinaryIO, map_location: Any = None, weights_only: bool | None = None,
         **kwargs: Any) -> Any:
    """Read an object written by ``save``. Only load files you trust: this unpickles."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            return pickle.load(handle)
    return pickle.load(f)
