"""Every op in the database: gradcheck, gradgradcheck (float64) and parity with real PyTorch
(forward values, output dtype, grad_fn names and edges, and gradients)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip
from opdb import OpInfo, Sample, cases, to_lib

CASES = cases()


def _outputs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_gradcheck(op: OpInfo, sample: Sample) -> None:
    if not op.gradcheck:
        pytest.skip("not differentiable")
    args, kwargs, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    assert rg.autograd.gradcheck(lambda *_: op.fn(rg, *args, **kwargs), leaves, atol=op.atol, rtol=op.rtol)


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_gradgradcheck(op: OpInfo, sample: Sample) -> None:
    if not (op.gradcheck and op.gradgradcheck):
        pytest.skip("no second derivative to check")
    args, kwargs, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    assert rg.autograd.gradgradcheck(lambda *_: op.fn(rg, *args, **kwargs), leaves, atol=op.atol, rtol=op.rtol)


def _node_signature(node: Any) -> Any:
    if node is None:
        return None
    return (type(node).__name__, [None if n is None else type(n).__name__ for n, _ in node.next_functions])


def _compare_outputs(op: OpInfo, ours: tuple[Any, ...], theirs: tuple[Any, ...], atol: float, rtol: float) -> None:
    assert len(ours) == len(theirs)
    for mine, ref in zip(ours, theirs):
        assert list(mine.shape) == list(ref.shape)
        assert str(mine.dtype) == str(ref.dtype)
        np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), atol=atol, rtol=rtol, equal_nan=True)
        assert mine.requires_grad == ref.requires_grad
        if op.check_node:
            assert _node_signature(mine.grad_fn) == _node_signature(ref.grad_fn)


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_torch_parity(op: OpInfo, sample: Sample) -> None:
    if not op.parity:
        pytest.skip("no PyTorch counterpart")
    torch = torch_or_skip()
    dtypes = ("float64", "float32") if op.float32 else ("float64",)
    for dtype in dtypes:
        r_args, r_kwargs, r_leaves = to_lib(rg, sample, dtype)
        t_args, t_kwargs, t_leaves = to_lib(torch, sample, dtype)
        ours = _outputs(op.fn(rg, *r_args, **r_kwargs))
        theirs = _outputs(op.fn(torch, *t_args, **t_kwargs))
        tol = (op.parity_atol, op.parity_rtol) if dtype == "float64" else (1e-4, 1e-4)
        _compare_outputs(op, ours, theirs, *tol)
        if dtype != "float64" or not r_leaves:
            continue
        rng = np.random.default_rng(0)
        pairs = [(o, t) for o, t in zip(ours, theirs) if t.requires_grad]
        if not pairs:
            continue
        cotangents = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
        rg.autograd.backward([o for o, _ in pairs], [rg.tensor(c) for c in cotangents])
        torch.autograd.backward([t for _, t in pairs], [torch.tensor(c) for c in cotangents])
        for mine, ref in zip(r_leaves, t_leaves):
            assert (mine.grad is None) == (ref.grad is None)
            if ref.grad is not None:
                np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), atol=1e-6, rtol=1e-5)
