"""``np.asarray``/``np.array`` on tensors: PyTorch's error for a tensor that requires grad, shared
memory otherwise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd

CALLS = [
    ("asarray", lambda t: np.asarray(t)),
    ("array", lambda t: np.array(t)),
    ("array dtype", lambda t: np.array(t, dtype=np.float64)),
    ("ufunc", lambda t: np.sin(t)),
    ("concatenate", lambda t: np.concatenate([t, t])),
]


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # torch's own
@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
def test_requires_grad_tensor_refuses_numpy_as_pytorch(torch: Any, call: Any) -> None:
    expected = outcome(lambda: call(torch.ones(3, requires_grad=True)))
    assert expected[0] == "RuntimeError"
    assert outcome(lambda: call(retrograd.ones(3, requires_grad=True))) == expected
    # a non-leaf that requires grad too
    assert outcome(lambda: call(retrograd.ones(3, requires_grad=True) * 2)) == expected


def test_detached_and_plain_tensors_share_memory() -> None:
    w = retrograd.ones(3, requires_grad=True)
    t = retrograd.ones(3)
    assert np.shares_memory(np.asarray(t), t.numpy())
    assert np.shares_memory(np.asarray(w.detach()), w.detach().numpy())
    with retrograd.no_grad():
        y = w * 2
    assert np.asarray(y).tolist() == [2.0, 2.0, 2.0]


def test_copy_and_dtype_keywords() -> None:
    t = retrograd.ones(3)
    assert not np.shares_memory(np.array(t), t.numpy())  # np.array copies by default
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.asarray(t, dtype=np.float64, copy=False)
    assert np.shares_memory(np.asarray(t, copy=False), t.numpy())
