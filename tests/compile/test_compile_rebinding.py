"""A compiled function reads the tensor a global or closure name holds at each call, as
torch.compile's guards on a source make it (a rebound name retraces), and its gradient lands on
that tensor."""

from __future__ import annotations

import numpy as np

import retrograd as rg

W = rg.ones(3, requires_grad=True)
HELD = [rg.ones(3)]


def _uses_global(x: rg.Tensor) -> rg.Tensor:
    return (x * W).sum()


def _uses_list(x: rg.Tensor) -> rg.Tensor:
    return (x * HELD[0]).sum()


def test_a_rebound_global_is_read_again_and_gets_the_gradient() -> None:
    global W
    f = rg.compile(_uses_global)
    x = rg.tensor([1.0, 2.0, 3.0])
    assert f(x).item() == 6.0
    assert f(x).item() == 6.0  # (the straight-line guard's path)
    W = rg.full((3,), 2.0, requires_grad=True)
    out = f(x)
    assert out.item() == _uses_global(x).item() == 12.0
    out.backward()
    assert W.grad is not None
    np.testing.assert_array_equal(W.grad.numpy(), x.numpy())
    with rg.no_grad():
        W.mul_(2)  # an in-place write to the new tensor is seen too
    assert f(x).item() == 24.0


def test_a_rebound_list_item_and_closure_cell_are_read_again() -> None:
    x = rg.tensor([1.0, 2.0, 3.0])
    g = rg.compile(_uses_list)
    assert g(x).item() == 6.0
    HELD[0] = rg.full((3,), 5.0)
    assert g(x).item() == 30.0

    c = rg.ones(3)
    h = rg.compile(lambda x: (x * c).sum())
    assert h(x).item() == 6.0
    assert h(x).item() == 6.0
    c = rg.full((3,), 7.0)
    assert h(x).item() == 42.0
