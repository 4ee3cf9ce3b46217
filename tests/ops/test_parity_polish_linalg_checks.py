"""The linalg functions check their input's shape (at least 2 dims, square) before its dtype,
as PyTorch's do (``solve``: an integer A is refused first), and ``qr``/``svd`` refuse half with
their kernels' NotImplementedError. Found by a differential run over bad inputs; each call is
compared with real PyTorch: exception type and message."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome

_INPUTS: list[tuple[str, Any]] = [
    ("int 2x3", lambda lib: lib.ones(2, 3, dtype=lib.int64)),
    ("int 1-d", lambda lib: lib.ones(3, dtype=lib.int64)),
    ("half 2x3", lambda lib: lib.ones(2, 3, dtype=lib.float16)),
    ("half 1-d", lambda lib: lib.ones(3, dtype=lib.float16)),
    ("bool 3x3", lambda lib: lib.ones(3, 3, dtype=lib.bool)),
    ("float 1-d", lambda lib: lib.ones(3)),
]
_FUNCTIONS = ["inv", "det", "slogdet", "cholesky", "eigh", "qr", "svd", "solve"]


@pytest.mark.parametrize("name", _FUNCTIONS)
@pytest.mark.parametrize("make", _INPUTS, ids=[i[0] for i in _INPUTS])
def test_linalg_check_order_as_torch(torch: Any, name: str, make: Any) -> None:
    def call(lib: Any) -> Any:
        a = make[1](lib)
        function = getattr(lib.linalg, name)
        return function(a, a) if name == "solve" else function(a)
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))
