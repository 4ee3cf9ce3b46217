"""The max and average pools and max_unpool show their window from one base (``_WindowPoolNd``,
issue #9's duplicate pairs): every such layer's ``repr`` is PyTorch's, argument forms included."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg

LAYERS = [
    ("MaxPool1d", (2,)), ("MaxPool2d", ((2, 3), None, 1, 2, True, True)), ("MaxPool3d", (3, 1, 1, 2, False, True)),
    ("AvgPool1d", (2, 1, 1, True, False)), ("AvgPool2d", (3, 2, 1)), ("AvgPool3d", (2, None, 0, False, True, 3)),
    ("MaxUnpool1d", (2,)), ("MaxUnpool2d", (3, 1, 1)), ("MaxUnpool3d", ((1, 2, 3),)),
]


@pytest.mark.parametrize("name,args", LAYERS, ids=[n for n, _ in LAYERS])
def test_window_pool_repr_matches_pytorch(torch: Any, name: str, args: tuple[Any, ...]) -> None:
    ours, theirs = getattr(rg.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert (ours.kernel_size, ours.stride, ours.padding) == (theirs.kernel_size, theirs.stride, theirs.padding)
    assert sorted(k for k in vars(ours) if not k.startswith("_")) == sorted(
        k for k in vars(theirs) if not k.startswith("_"))
