"""retrograd.testing.assert_close and make_tensor against torch.testing: the same pass/fail
decisions, exception types and messages on the same inputs."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

NAN, INF = float("nan"), float("inf")

# (actual, expected, kwargs): numpy data, turned into tensors of each library
TENSOR_CASES = [
    (np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 2.5, 3.1], np.float32), {}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0 + 1e-6], np.float32), {}),
    (np.array(1.0, np.float32), np.array(2.0, np.float32), {}),
    (np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 5]]), {}),
    (np.array([[1, 2], [3, 4]], np.uint8), np.array([[1, 9], [3, 4]], np.uint8), {}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0], np.float64), {}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0], np.float64), {"check_dtype": False}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.1], np.float64), {"check_dtype": False}),
    (np.array([1, 2], np.int32), np.array([1.0, 2.5], np.float64), {"check_dtype": False}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32), {}),
    (np.array([1.0, NAN], np.float32), np.array([1.0, NAN], np.float32), {}),
    (np.array([1.0, NAN], np.float32), np.array([1.0, NAN], np.float32), {"equal_nan": True}),
    (np.array([1.0, NAN], np.float32), np.array([1.0, 2.0], np.float32), {"equal_nan": True}),
    (np.array([INF, -INF], np.float64), np.array([INF, -INF], np.float64), {}),
    (np.array([INF, 1.0], np.float64), np.array([-INF, 1.0], np.float64), {}),
    (np.array([0.0, 0.0], np.float32), np.array([0.0, 1e-3], np.float32), {}),
    (np.array([0.0, 5.0], np.float32), np.array([1.0, 0.0], np.float32), {}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 3.0], np.float32), {"msg": "custom"}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 3.0], np.float32), {"rtol": 1e-3}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 3.0], np.float32), {"atol": 1e-3}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.1], np.float32), {"rtol": 0.1, "atol": 0.0}),
    (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.3], np.float32), {"rtol": 0.1, "atol": 0.0}),
    (np.array([1.0, 2.0], np.float16), np.array([1.0, 2.001], np.float16), {}),
    (np.array([1.0, 2.0], np.float16), np.array([1.0, 2.1], np.float16), {}),
    (np.array([1e-9, 2.0], np.float64), np.array([2e-9, 2.0], np.float64), {}),
    (np.array([True, False]), np.array([True, True]), {}),
    (np.arange(24.0).reshape(2, 3, 4), np.arange(24.0).reshape(2, 3, 4) * 1.01, {}),
    (np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), {}),
]


@pytest.mark.parametrize("case", range(len(TENSOR_CASES)))
def test_tensor_comparisons_match_torch(torch: Any, case: int) -> None:
    a, e, kwargs = TENSOR_CASES[case]
    ours = outcome(lambda: rg.testing.assert_close(rg.from_numpy(a.copy()), rg.from_numpy(e.copy()), **kwargs))
    theirs = outcome(lambda: torch.testing.assert_close(torch.from_numpy(a.copy()), torch.from_numpy(e.copy()),
                                                        **kwargs))
    assert ours == theirs


def test_callable_msg_and_nested_containers(torch: Any) -> None:
    def both(make: Any, **kwargs: Any) -> None:
        kind, message = outcome(lambda: rg.testing.assert_close(*make(rg), **kwargs))
        # (the classes' own names differ: <class 'retrograd.tensor.Tensor'> for <class 'torch.Tensor'>)
        ours = (kind, message.replace("retrograd.tensor.Tensor", "torch.Tensor"))
        assert ours == outcome(lambda: torch.testing.assert_close(*make(torch), **kwargs))

    both(lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 3.0])), msg=lambda m: f"Header\n\n{m}\n\nFooter")
    both(lambda lib: ({"a": lib.ones(1), "b": [lib.ones(2), 2.0]}, {"b": [lib.ones(2), 2.5], "a": lib.ones(1)}))
    both(lambda lib: ({"a": lib.ones(1)}, {"b": lib.ones(1)}))
    both(lambda lib: ([lib.ones(1)], [lib.ones(1), lib.ones(1)]))
    both(lambda lib: (OrderedDict(w=lib.zeros(2)), {"w": lib.zeros(2)}))
    both(lambda lib: ((lib.ones(2), 1.0), [lib.ones(2), 1.0]))
    both(lambda lib: (lib.ones(1), [1.0]))
    both(lambda lib: (lib.ones(1), np.ones(1)))
    both(lambda lib: (None, lib.ones(1)))
    both(lambda lib: (None, None))


@pytest.mark.parametrize("pair", [(1.0, 1.0 + 1e-7), (1.0, 1.0 + 1e-6), (1, 2), (1, 1), (1.0, 2), (True, False),
                                  (True, True), (NAN, NAN), (np.float32(1.0), np.float32(1.5)), ("a", "a"),
                                  (np.array(3.0), np.array(3.5))])
@pytest.mark.parametrize("kwargs", [{}, {"check_dtype": False}, {"equal_nan": True}])
def test_scalar_comparisons_match_torch(torch: Any, pair: tuple[Any, Any], kwargs: dict[str, Any]) -> None:
    assert outcome(lambda: rg.testing.assert_close(*pair, **kwargs)) == \
        outcome(lambda: torch.testing.assert_close(*pair, **kwargs))


def test_subclasses_and_stride(torch: Any) -> None:
    p, t = rg.nn.Parameter(rg.ones(2)), rg.ones(2)
    tp, tt = torch.nn.Parameter(torch.ones(2)), torch.ones(2)
    assert outcome(lambda: rg.testing.assert_close(p, t)) == outcome(lambda: torch.testing.assert_close(tp, tt))
    ours = outcome(lambda: rg.testing.assert_close(p, t, allow_subclasses=False))
    theirs = outcome(lambda: torch.testing.assert_close(tp, tt, allow_subclasses=False))
    assert ours[0] == theirs[0] == "TypeError"
    assert ours[1].replace("retrograd.nn.parameter", "torch.nn.parameter").replace("retrograd.tensor", "torch") \
        == theirs[1].replace("torch._tensor", "torch")
    x, tx = rg.ones(2, 3), torch.ones(2, 3)
    assert outcome(lambda: rg.testing.assert_close(x.t(), x.t().contiguous(), check_stride=True)) == \
        outcome(lambda: torch.testing.assert_close(tx.t(), tx.t().contiguous(), check_stride=True))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool"])
def test_make_tensor_ranges_and_dtypes(torch: Any, dtype: str) -> None:
    rg.manual_seed(0)
    t = rg.testing.make_tensor(200, 3, dtype=getattr(rg, dtype), device="cpu")
    theirs = torch.testing.make_tensor(200, 3, dtype=getattr(torch, dtype), device="cpu")
    assert t.dtype is getattr(rg, dtype) and tuple(t.shape) == (200, 3)
    values, reference = t.numpy().astype(np.float64), theirs.numpy().astype(np.float64)
    # the same default interval: every value inside the interval PyTorch draws from
    low, high = reference.min(), reference.max()
    assert values.min() >= min(low, -9 if dtype != "uint8" and dtype != "bool" else 0)
    assert values.max() < (10 if dtype in ("int64", "int32", "uint8", "int8") else 2 if dtype == "bool" else 9)
    assert high < (10 if dtype in ("int64", "int32", "uint8", "int8") else 2 if dtype == "bool" else 9)
    if dtype != "bool":
        assert len(np.unique(values)) > 5


def test_make_tensor_options(torch: Any) -> None:
    t = rg.testing.make_tensor((4, 5), dtype=rg.float64, device="cpu", low=2, high=3, requires_grad=True,
                               noncontiguous=True, exclude_zero=True)
    tt = torch.testing.make_tensor((4, 5), dtype=torch.float64, device="cpu", low=2, high=3, requires_grad=True,
                                   noncontiguous=True, exclude_zero=True)
    assert t.requires_grad and t.is_leaf and t.stride() == tt.stride() == (10, 2)
    assert t.is_contiguous() == tt.is_contiguous() is False
    assert ((t >= 2) & (t < 3)).all().item()
    z = rg.testing.make_tensor(1000, dtype=rg.int8, device="cpu", low=-1, high=1, exclude_zero=True)
    assert set(np.unique(z.numpy()).tolist()) <= {-1, 1}
    w = rg.testing.make_tensor(1000, dtype=rg.float32, device="cpu", low=0.5, high=0.5000001)
    assert ((w >= 0.5) & (w < 0.5000001)).all().item()

    def both(**kwargs: Any) -> None:
        shape = kwargs.pop("shape", (2,))
        dtype = kwargs.pop("dtype", "float32")
        assert outcome(lambda: rg.testing.make_tensor(shape, dtype=getattr(rg, dtype), device="cpu", **kwargs)) \
            == outcome(lambda: torch.testing.make_tensor(shape, dtype=getattr(torch, dtype), device="cpu", **kwargs))

    both(low=3, high=1)
    both(low=float("nan"))
    both(dtype="int64", requires_grad=True)
    both(dtype="bool", requires_grad=True)
    both(dtype="uint8", low=-20, high=-10)
    both(noncontiguous=True, memory_format=object())
    assert rg.testing.make_tensor(3, dtype=rg.uint8, device="cpu", low=-20, high=300).numpy().max() <= 255
