"""mm/mv/dot share one opmath-product body and addmm/addbmm one dtype check (issue #9's duplicate
pairs): every error each op can raise, in PyTorch's order of checks, and the bfloat16 opmath result,
compared with PyTorch itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg


def _z(lib: Any, dtype: str, *shape: int) -> Any:
    return lib.ones(*shape, dtype=getattr(lib, dtype))


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("mm self rank", lambda lib: lib.mm(_z(lib, "float64", 3), _z(lib, "float64", 3, 2))),
    ("mm mat2 rank", lambda lib: lib.mm(_z(lib, "float64", 2, 3), _z(lib, "float64", 3))),
    ("mm both ranks", lambda lib: lib.mm(_z(lib, "float64", 3), _z(lib, "float32", 3))),
    ("mm sizes", lambda lib: lib.mm(_z(lib, "float64", 2, 3), _z(lib, "float64", 4, 2))),
    ("mm sizes before dtype", lambda lib: lib.mm(_z(lib, "float64", 2, 3), _z(lib, "float32", 4, 2))),
    ("mm dtype", lambda lib: lib.mm(_z(lib, "float64", 2, 3), _z(lib, "float32", 3, 2))),
    ("mv rank", lambda lib: lib.mv(_z(lib, "float64", 2, 3), _z(lib, "float64", 3, 1))),
    ("mv sizes", lambda lib: lib.mv(_z(lib, "float64", 2, 3), _z(lib, "float64", 4))),
    ("mv dtype", lambda lib: lib.mv(_z(lib, "float32", 2, 3), _z(lib, "float64", 3))),
    ("dot rank", lambda lib: lib.dot(_z(lib, "float64", 2, 3), _z(lib, "float64", 3))),
    ("dot sizes", lambda lib: lib.dot(_z(lib, "float64", 3), _z(lib, "float64", 4))),
    ("dot sizes before dtype", lambda lib: lib.dot(_z(lib, "float64", 3), _z(lib, "float32", 4))),
    ("vdot sizes", lambda lib: lib.vdot(_z(lib, "float64", 3), _z(lib, "float64", 2))),
    ("addmm mat dtypes first", lambda lib: lib.addmm(_z(lib, "float32", 2, 4), _z(lib, "float32", 2, 3),
                                                     _z(lib, "float64", 3, 4))),
    ("addmm self dtype", lambda lib: lib.addmm(_z(lib, "float32", 2, 4), _z(lib, "float64", 2, 3),
                                               _z(lib, "float64", 3, 4))),
    ("addbmm self dtype first", lambda lib: lib.addbmm(_z(lib, "float32", 2, 4), _z(lib, "float32", 5, 2, 3),
                                                       _z(lib, "float64", 5, 3, 4))),
    ("addbmm mat dtypes", lambda lib: lib.addbmm(_z(lib, "float64", 2, 4), _z(lib, "float32", 5, 2, 3),
                                                 _z(lib, "float64", 5, 3, 4))),
    ("addbmm ok", lambda lib: lib.addbmm(_z(lib, "float64", 2, 4), _z(lib, "float64", 5, 2, 3),
                                         _z(lib, "float64", 5, 3, 4))),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_product_errors_match_pytorch(torch: Any, name: str, call: Callable[[Any], Any]) -> None:
    expected = outcome(lambda: call(torch))
    assert outcome(lambda: call(rg)) == expected
    if not name.endswith("ok"):
        assert expected[0] == "RuntimeError"


@pytest.mark.parametrize("op,shapes", [("mm", [(3, 40), (40, 2)]), ("mv", [(3, 40), (40,)]),
                                       ("dot", [(40,), (40,)])])
def test_bfloat16_products_accumulate_like_pytorch(torch: Any, op: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = getattr(rg, op)(*(rg.tensor(a).to(rg.bfloat16) for a in arrays))
    theirs = getattr(torch, op)(*(torch.tensor(a).to(torch.bfloat16) for a in arrays))
    assert ours.dtype == rg.bfloat16 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
