"""A node that saves its own output keeps no version counter until the output makes one
("Saved outputs" in docs/architecture.md): every way of writing into the output afterwards
must still be caught at backward, as PyTorch catches it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

WRITES: dict[str, Callable[[Any], None]] = {
    "in place": lambda y: y.add_(1),
    "through detach()": lambda y: y.detach().mul_(2),
    "through a view": lambda y: y.view(-1)[0].zero_(),
    "after a later op saved it": lambda y: (y * y, y.add_(1)),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid", "sqrt"])
def test_a_write_into_a_saved_output_is_caught(torch: Any, write: Callable[[Any], None], op: str) -> None:
    values = np.array([[0.5, 1.0], [1.5, 2.0]])
    errors = []
    for lib in (rg, torch):
        x = lib.tensor(values, requires_grad=True)
        y = getattr(x, op)()
        write(y)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    ours, theirs = errors
    assert "modified by an inplace operation" in ours
    # Same tensor, same versions in the message as PyTorch's (ours adds where it happened).
    assert ours.startswith(theirs.split(" Hint:")[0].split("[torch.")[0])
    assert re.search(r"is at version \d+; expected version 0", ours)


def test_unmodified_saved_output_given_a_counter_later_still_backpropagates(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.tanh()
        y.detach()  # makes the output's counter (and hands it to the saved value): no write
        assert y._version == 0
        y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh([0.5, 1.0]) ** 2, rtol=1e-6)



def test_a_write_through_data_is_not_tracked_as_in_pytorch(torch: Any) -> None:
    grads = []
    for lib in (rg, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.tanh()
        y.data.sub_(1)  # .data shares the storage but not the version counter
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
