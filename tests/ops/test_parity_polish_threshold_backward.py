"""relu's backward op (``threshold_backward``, internal: PyTorch reaches it as
``torch.ops.aten.threshold_backward``) promotes its two inputs' dtypes as PyTorch's does, so an
integer gradient against a float output gives a float result. Compared with PyTorch's aten op."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from retrograd.ops.elementwise import threshold_backward
from retrograd.ops.op import apply

_PAIRS = [("float64", "float32"), ("int64", "float32"), ("float32", "int64"), ("float16", "float32"),
          ("bool", "float16"), ("int32", "int64"), ("float32", "float32")]


@pytest.mark.parametrize("grad_dtype,self_dtype", _PAIRS)
def test_threshold_backward_promotes_as_torch(torch: Any, grad_dtype: str, self_dtype: str) -> None:
    grad, out = [1, -2, 3, 0], [1.5, -1.0, 0.0, 2.0]
    ours = apply(threshold_backward, (rg.tensor(grad).to(getattr(rg, grad_dtype)),
                                      rg.tensor(out).to(getattr(rg, self_dtype))))
    theirs = torch.ops.aten.threshold_backward(torch.tensor(grad).to(getattr(torch, grad_dtype)),
                                                 torch.tensor(out).to(getattr(torch, self_dtype)), 0)
    assert (str(ours.dtype), ours.tolist()) == (str(theirs.dtype), theirs.tolist())
