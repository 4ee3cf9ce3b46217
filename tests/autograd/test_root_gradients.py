"""``backward``/``autograd.grad`` given a different number of gradients than outputs: PyTorch
ignores extra ones and refuses too few with its engine's message."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def _run(lib: Any, call: str, n_out: int, grads: Any) -> Any:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    outs = [(x * (k + 2)).sum() for k in range(n_out)]
    given = grads(lib)
    if call == "backward":
        lib.autograd.backward(outs, given)
        return x.grad.tolist()
    return [g.tolist() for g in lib.autograd.grad(outs, [x], given)]


CASES = [
    (1, lambda lib: [lib.tensor(1.0), lib.tensor(5.0)]),
    (2, lambda lib: [lib.tensor(1.0)]),
    (2, lambda lib: [None]),
    (2, lambda lib: lib.tensor(1.0)),
    (2, lambda lib: [lib.tensor(2.0), None, lib.tensor(7.0)]),
]


@pytest.mark.parametrize("call", ["backward", "grad"])
@pytest.mark.parametrize(("n_out", "grads"), CASES)
def test_gradient_count_is_handled_as_pytorch(torch: Any, call: str, n_out: int, grads: Any) -> None:
    ours: list[Any] = []
    theirs: list[Any] = []
    assert outcome(lambda: ours.append(_run(rg, call, n_out, grads))) == outcome(
        lambda: theirs.append(_run(torch, call, n_out, grads)))
    assert ours == theirs
