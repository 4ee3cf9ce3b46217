"""Bad input to the reductions raises PyTorch's exception type and message (checked against real
PyTorch when it is installed); degenerate variances warn as PyTorch does."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip

CASES: list[tuple[str, Callable[[Any], Any], type[BaseException], str]] = [
    ("var int", lambda lib: lib.var(lib.tensor([1, 2])), RuntimeError,
     "std and var only support floating point and complex dtypes"),
    ("std int", lambda lib: lib.tensor([1, 2]).std(), RuntimeError,
     "std and var only support floating point and complex dtypes"),
    ("var_mean int", lambda lib: lib.var_mean(lib.tensor([1, 2])), RuntimeError,
     "var_mean only support floating point and complex dtypes"),
    ("std_mean int", lambda lib: lib.std_mean(lib.tensor([1, 2])), RuntimeError,
     "std_mean only support floating point and complex dtypes"),
    ("var dim out of range", lambda lib: lib.var(lib.ones(3, 4), 5), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ("var repeated dim", lambda lib: lib.ones(3, 4).var((1, -1)), RuntimeError,
     "dim 1 appears multiple times in the list of dims"),
    ("prod dim out of range", lambda lib: lib.prod(lib.ones(3), 1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("amax empty dim", lambda lib: lib.amax(lib.ones(0, 3), 0), IndexError,
     "amax(): Expected reduction dim 0 to have non-zero size."),
    ("amin empty all", lambda lib: lib.ones(2, 0).amin(), RuntimeError,
     "amin(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
     "'dim' argument."),
    ("amax empty inner dim", lambda lib: lib.ones(2, 0).amax(1), IndexError,
     "amax(): Expected reduction dim 1 to have non-zero size."),
    ("amax repeated dim", lambda lib: lib.amax(lib.ones(3, 4), (0, 0)), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
    ("topk k too large", lambda lib: lib.topk(lib.ones(3, 4), 5), RuntimeError, "selected index k out of range"),
    ("topk negative k", lambda lib: lib.ones(3, 4).topk(-1), RuntimeError, "selected index k out of range"),
    ("kthvalue k zero", lambda lib: lib.kthvalue(lib.ones(3, 4), 0), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 1"),
    ("kthvalue k too large", lambda lib: lib.ones(3, 4).kthvalue(4, 0), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 0"),
    ("median empty dim", lambda lib: lib.median(lib.ones(3, 0), 1), IndexError,
     "median(): Expected reduction dim 1 to have non-zero size."),
    ("mode empty", lambda lib: lib.mode(lib.ones(0)), IndexError,
     "mode(): Expected reduction dim 0 to have non-zero size."),
    ("sort dim out of range", lambda lib: lib.sort(lib.tensor([[1, 2], [3, 4]]), dim=2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("logsumexp without dim", lambda lib: lib.logsumexp(lib.ones(2)), TypeError, "missing 1 required positional"),
    ("norm int", lambda lib: lib.norm(lib.tensor([1, 2])), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("norm fro with three dims", lambda lib: lib.norm(lib.ones(2, 3, 4), "fro", dim=(0, 1, 2)), RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    ("norm nuc with one dim", lambda lib: lib.ones(2, 3).norm("nuc", dim=1), RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 1"),
    ("norm unknown order", lambda lib: lib.ones(2, 3).norm("abc"), RuntimeError,
     "linalg.matrix_norm: Order abc not supported."),
    ("norm narrowing dtype", lambda lib: lib.ones(2, dtype=lib.float64).norm(dtype=lib.float32), RuntimeError,
     "linalg.vector_norm: the dtype of the input (Double) should be convertible without narrowing to the "
     "specified dtype (Float)"),
    ("norm dim out of range", lambda lib: lib.ones(3, 4).norm(p=2, dim=5), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ("dist int", lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([3, 4])), RuntimeError,
     "norm(): input dtype should be either floating point or complex. Got Long instead."),
    ("dist broadcast", lambda lib: lib.dist(lib.ones(3, 4), lib.ones(5)), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"),
    ("cumsum dim out of range", lambda lib: lib.cumsum(lib.ones(3, 4), 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("cumprod 0-d dim", lambda lib: lib.ones(()).cumprod(1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("cumsum_ int to float", lambda lib: lib.tensor([1, 2]).cumsum_(0, dtype=lib.float32), RuntimeError,
     "Bad in-place call: input tensor dtype long int and output tensor dtype float should match"),
    ("cumprod_ float to double", lambda lib: lib.ones(2).cumprod_(0, dtype=lib.float64), RuntimeError,
     "Bad in-place call: input tensor dtype float and output tensor dtype double should match"),
    ("sum repeated negative dim", lambda lib: lib.ones(3, 4, 5).sum((2, 0, -1)), RuntimeError,
     "dim 2 appears multiple times in the list of dims"),
    ("count_nonzero repeated dim", lambda lib: lib.count_nonzero(lib.ones(2, 3), dim=(0, 0)), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
    ("nanmean int", lambda lib: lib.nanmean(lib.tensor([1, 2])), RuntimeError,
     "nanmean(): expected input to have floating point or complex dtype but got Long"),
    ("topk bool", lambda lib: lib.topk(lib.tensor([True, False]), 1), RuntimeError,
     "topk does not support bool dtypes on CPU"),
    ("kthvalue bool", lambda lib: lib.tensor([True, False]).kthvalue(1), NotImplementedError,
     "\"kthvalue_cpu\" not implemented for 'Bool'"),
    ("median bool", lambda lib: lib.median(lib.tensor([True, False])), NotImplementedError,
     "\"median_cpu\" not implemented for 'Bool'"),
    ("median dim bool", lambda lib: lib.tensor([True, False]).median(0), NotImplementedError,
     "\"median_out\" not implemented for 'Bool'"),
    ("dist bool", lambda lib: lib.dist(lib.tensor([True]), lib.tensor([False])), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported."),
    ("mean repeated dims", lambda lib: lib.mean(lib.ones(3, 4), (0, 0)), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
]


@pytest.mark.parametrize(("fn", "exc", "message"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error(fn: Callable[[Any], Any], exc: type[BaseException], message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        fn(rg)


@pytest.mark.parametrize(("fn", "exc", "message"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error_matches_torch(fn: Callable[[Any], Any], exc: type[BaseException], message: str) -> None:
    torch = torch_or_skip()
    with pytest.raises(exc, match=re.escape(message)):
        fn(torch)


def test_var_unbiased_and_correction_together() -> None:
    with pytest.raises(TypeError, match="var"):
        rg.ones(3).var(unbiased=True, correction=0)


@pytest.mark.parametrize("name", ["var", "std"])
def test_degrees_of_freedom_warning(name: str) -> None:
    x = rg.tensor([1.0, 2.0], dtype=rg.float64)
    with pytest.warns(UserWarning, match=re.escape(f"{name}(): degrees of freedom is <= 0")):
        out = getattr(x, name)(correction=3)
    assert out.item() == np.inf
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        single = getattr(rg.ones(1), name)()
    assert np.isnan(single.item())


def test_nuclear_norm_is_not_silently_wrong() -> None:
    with pytest.raises(NotImplementedError, match="nuc"):
        rg.ones(2, 3).norm("nuc")


def test_logsumexp_of_huge_inputs_is_finite() -> None:
    data = [[1e4, -1e4, 1e4], [-1e4, -1e4 + 1.0, -1e4]]
    expected = [1e4 + np.log(2), -1e4 + 1 + np.log1p(2 * np.exp(-1))]
    for dtype, rtol in ((rg.float64, 1e-11), (rg.float32, 1e-3)):  # 1e4 has an ulp of 2e-12 / 1e-3
        x = rg.tensor(data, dtype=dtype, requires_grad=True)
        out = x.logsumexp(1)
        out.sum().backward()
        assert np.all(np.isfinite(out.detach().numpy())) and np.all(np.isfinite(x.grad.numpy()))
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-7)
        np.testing.assert_allclose(x.grad.numpy().sum(1), [1.0, 1.0], rtol=rtol)
