"""The factories take ``size=`` as a keyword, as PyTorch's (``rand(size=(2,))``): the shape,
dtype and numbers against real PyTorch, and PyTorch's TypeErrors for a bad keyword size."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

_CALLS = [
    ("rand", lambda lib: lib.rand(size=(2, 3))),
    ("rand-list", lambda lib: lib.rand(size=[4])),
    ("rand-0d", lambda lib: lib.rand(size=())),
    ("rand-Size", lambda lib: lib.rand(size=lib.Size([2, 2]), dtype=lib.float64)),
    ("randn", lambda lib: lib.randn(size=(3, 2))),
    ("randn-generator", lambda lib: lib.randn(size=(3,), generator=lib.Generator().manual_seed(7))),
    ("zeros", lambda lib: lib.zeros(size=(2, 3))),
    ("ones", lambda lib: lib.ones(size=(2, 3), dtype=lib.int64)),
    ("empty", lambda lib: lib.empty(size=(2,)).zero_()),
    ("full", lambda lib: lib.full(size=(2,), fill_value=3)),
    ("full-kw-first", lambda lib: lib.full(fill_value=1.5, size=[1, 2])),
    ("randint", lambda lib: lib.randint(0, 5, size=(3,))),
    ("randint-high", lambda lib: lib.randint(5, size=(3,))),
    ("randint-kw", lambda lib: lib.randint(low=1, high=5, size=(3, 2))),
    ("randint-high-kw", lambda lib: lib.randint(high=5, size=(3,))),
    ("zeros-requires-grad", lambda lib: lib.zeros(size=(2,), requires_grad=True)),
]


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_size_keyword_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    torch.manual_seed(3)
    rg.manual_seed(3)
    want = fn(torch)
    got = fn(rg)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    assert got.requires_grad == want.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


_ERRORS = [
    ("zeros-int", lambda lib: lib.zeros(size=2)),
    ("rand-int", lambda lib: lib.rand(size=2)),
    ("ones-none", lambda lib: lib.ones(size=None)),
    ("empty-float-item", lambda lib: lib.empty(size=(2.0,))),
    ("zeros-bool-item", lambda lib: lib.zeros(size=(True,))),
    ("zeros-twice", lambda lib: lib.zeros((2,), size=(2,))),
    ("ones-twice", lambda lib: lib.ones(2, size=(2,))),
    ("rand-negative", lambda lib: lib.rand(size=(-1,))),
    ("zeros-negative", lambda lib: lib.zeros(size=(2, -3))),
]


@pytest.mark.parametrize("call", _ERRORS, ids=[c[0] for c in _ERRORS])
def test_bad_size_keyword_errors_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert outcome(lambda: fn(rg)) == outcome(lambda: fn(torch))


def test_size_keyword_under_vmap_draws_per_sample(torch: Any) -> None:
    import torch.func as tfunc

    from retrograd import func as rfunc
    torch.manual_seed(5)
    rg.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = tfunc.vmap(lambda t: t + torch.rand(size=(2,)), randomness="different")(torch.zeros(3, 2))
        got = rfunc.vmap(lambda t: t + rg.rand(size=(2,)), randomness="different")(rg.zeros(3, 2))
    assert tuple(got.shape) == tuple(want.shape) == (3, 2)
    assert not np.allclose(got.numpy()[0], got.numpy()[1])  # (each sample its own draw)
