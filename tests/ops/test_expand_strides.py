"""expand keeps the stride of every dim that keeps its size, size-1 dims included, as PyTorch's
does (NumPy's broadcast_to zeroes them); only the expanded dims step by 0."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

CASES = [((1, 10), (3, 4, 1, 10)), ((2, 1), (5, 2, 1)), ((1, 10), (1, 10)), ((3, 1), (3, 4)), ((1,), (5,)),
         ((), (2, 3)), ((2, 3), (4, 2, 3)), ((2, 3), (-1, 3)), ((1, 1), (1, 1)), ((1, 1), (2, 1, 1))]


@pytest.mark.parametrize(("shape", "size"), CASES)
def test_expand_strides_match_pytorch(torch: Any, shape: tuple[int, ...], size: tuple[int, ...]) -> None:
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ours = rg.tensor(values).expand(*size)
    theirs = torch.tensor(values).expand(*size)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_expand_of_non_contiguous_views_keeps_their_strides(torch: Any) -> None:
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for make in (lambda t: t[:, ::2].unsqueeze(1).expand(4, 5, 3), lambda t: t[:3, :1].t().expand(4, 1, 3)):
        x = rg.tensor(base, requires_grad=True)
        t = torch.tensor(base, requires_grad=True)
        ours, theirs = make(x), make(t)
        assert ours.stride() == theirs.stride()
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
        weights = np.arange(ours.numel(), dtype=np.float64).reshape(tuple(ours.shape))
        (ours * rg.tensor(weights)).sum().backward()
        (theirs * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
