"""Named tuples returned by ops with several outputs, as ``torch.return_types``.

>>> import retrograd as rg
>>> rg.tensor([3.0, 1.0, 2.0]).max(0)
torch.return_types.max(
values=tensor(3.),
indices=tensor(0))
"""

from __future__ import annotations

import collections
from typing import Any


def _repr(self: Any) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def return_type(name: str, fields: tuple[str, ...]) -> Any:
    """A named tuple class called ``name`` (PyTorch's name) with PyTorch's ``repr``."""
    cls = collections.namedtuple(name, fields)  # type: ignore[misc]
    cls.__repr__ = _repr  # type: ignore[method-assign]
    cls.__module__ = __name__
    return cls


_VALUES_INDICES = ("values", "indices")
max = return_type("max", _VALUES_INDICES)  # noqa: A001 - PyTorch's names
min = return_type("min", _VALUES_INDICES)  # noqa: A001
sort = return_type("sort", _VALUES_INDICES)
topk = return_type("topk", _VALUES_INDICES)
kthvalue = return_type("kthvalue", _VALUES_INDICES)
median = return_type("median", _VALUES_INDICES)
mode = return_type("mode", _VALUES_INDICES)
nanmedian = return_type("nanmedian", _VALUES_INDICES)
linalg_slogdet = return_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet = return_type("slogdet", ("sign", "logabsdet"))
linalg_qr = return_type("linalg_qr", ("Q", "R"))
linalg_svd = return_type("linalg_svd", ("U", "S", "Vh"))
svd = return_type("svd", ("U", "S", "V"))
linalg_eigh = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
frexp = return_type("frexp", ("mantissa", "exponent"))
aminmax = return_type("aminmax", ("min", "max"))
cummax = return_type("cummax", _VALUES_INDICES)
cummin = return_type("cummin", _VALUES_INDICES)
histogram = return_type("histogram", ("hist", "bin_edges"))
histogramdd = return_type("histogramdd", ("hist", "bin_edges"))
geqrf = return_type("geqrf", ("a", "tau"))
