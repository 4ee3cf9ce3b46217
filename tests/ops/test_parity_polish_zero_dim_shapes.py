"""The shape functions on a 0-d tensor refuse what PyTorch's refuse, with its errors:
``flatten`` with a dim out of range (it returned a 1-element tensor), ``narrow``/``narrow_copy``,
``chunk`` and ``split`` (found by a differential run over bad inputs). Compared with real
PyTorch: exception type and message, or the result."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome

_CALLS: list[tuple[str, Any]] = [
    ("flatten(1)", lambda x: x.flatten(1)),
    ("flatten(0, 1)", lambda x: x.flatten(0, 1)),
    ("flatten(-2)", lambda x: x.flatten(-2)),
    ("flatten(0, -1)", lambda x: x.flatten(0, -1)),
    ("flatten()", lambda x: x.flatten()),
    ("narrow(0, 0, 1)", lambda x: x.narrow(0, 0, 1)),
    ("narrow(5, 0, 1)", lambda x: x.narrow(5, 0, 1)),
    ("narrow_copy(0, 0, 1)", lambda x: x.narrow_copy(0, 0, 1)),
    ("chunk(2)", lambda x: x.chunk(2)),
    ("chunk(0)", lambda x: x.chunk(0)),
    ("split(1)", lambda x: x.split(1)),
    ("split([1])", lambda x: x.split([1])),
]


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_zero_dim_shape_functions_as_torch(torch: Any, call: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(1.5)
        kind, message = outcome(lambda: call[1](x))
        if kind != "ok":
            return kind, message
        out = call[1](x)
        return tuple(out.shape), out.tolist()
    assert run(rg) == run(torch)
