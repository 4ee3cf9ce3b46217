"""``retrograd.<op>(x)`` takes what ``torch.<op>(x)`` takes as its first argument: a tensor, or a
number where PyTorch allows one; a list, tuple, array or string is PyTorch's TypeError."""
from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

_FUNCTIONS = ("sin", "abs", "exp", "sum", "mean", "add", "mul", "sigmoid", "flip", "clone")
_NOT_TENSORS = ([1.0, 2.0], (1.0, 2.0), np.ones(2), "x")


@pytest.mark.parametrize("name", _FUNCTIONS)
@pytest.mark.parametrize("value", _NOT_TENSORS, ids=lambda v: type(v).__name__)
def test_a_non_tensor_first_argument_is_pytorchs_type_error(torch, name: str, value: object) -> None:
    extra = {"add": (1.0,), "mul": (2.0,), "flip": ((0,),)}.get(name, ())
    ours = outcome(lambda: getattr(rg, name)(value, *extra))
    theirs = outcome(lambda: getattr(torch, name)(value, *extra))
    assert ours == theirs
    assert ours[0] == "TypeError"


def test_a_number_first_argument_still_works_where_pytorch_takes_one(torch) -> None:
    assert rg.add(1.5, 2).item() == torch.add(1.5, 2).item()
    assert rg.mul(2, rg.tensor([1.0, 2.0])).tolist() == torch.mul(2, torch.tensor([1.0, 2.0])).tolist()
