"""Calls where NumPy's own error used to leak out raise PyTorch's exception type and message."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd

CASES: list[tuple[str, Any]] = [
    ("cat empty list", lambda t: t.cat([])),
    ("cat empty tuple", lambda t: t.cat(())),
    ("cat non-tensor", lambda t: t.cat([t.ones(2), 1])),
    ("stack empty", lambda t: t.stack([])),
    ("stack shapes", lambda t: t.stack([t.ones(2), t.ones(3)])),
    ("matmul batch", lambda t: t.matmul(t.ones(2, 3, 4), t.ones(3, 4, 5))),
    ("matmul 4-d batch", lambda t: t.ones(2, 1, 3, 4) @ t.ones(3, 3, 4, 5)),
    ("invert float", lambda t: ~t.ones(2)),
    ("invert double", lambda t: ~t.ones(2, dtype=t.float64)),
    ("and float", lambda t: t.ones(3) & t.ones(3)),
    ("or float scalar", lambda t: t.ones(3) | 1),
    ("xor double", lambda t: t.ones(2, dtype=t.float64) ^ t.ones(2, dtype=t.float64)),
    ("and int with float", lambda t: t.ones(3, dtype=t.int64) & t.ones(3)),
    ("and int32 with python float", lambda t: t.ones(2, dtype=t.int32) & 1.5),
    ("and bool with float", lambda t: t.tensor([True]) & t.tensor([1.5])),
    ("tensor 2**63", lambda t: t.tensor(2**63)),
    ("tensor -2**63-1", lambda t: t.tensor(-2**63 - 1)),
    ("tensor 2**64", lambda t: t.tensor(2**64)),
    ("tensor [2**63]", lambda t: t.tensor([2**63])),
    ("ragged short", lambda t: t.tensor([[1, 2], [3]])),
    ("ragged long", lambda t: t.tensor([[1, 2], [3, 4, 5]])),
    ("ragged deep", lambda t: t.tensor([[[1], [2]], [[1], [2, 3]]])),
    ("number where a list belongs", lambda t: t.tensor([[1, 2], 3])),
    ("list where an int belongs", lambda t: t.tensor([1, [2]])),
    ("list where a float belongs", lambda t: t.tensor([1.5, [2]])),
    ("string", lambda t: t.tensor("a")),
    ("string in a list", lambda t: t.tensor([1, "a"])),
    ("bytes", lambda t: t.tensor(b"ab")),
    ("object", lambda t: t.tensor(object())),
    ("None", lambda t: t.tensor(None)),
    ("None in a list", lambda t: t.tensor([None])),
    ("dict", lambda t: t.tensor({})),
    ("argmax empty", lambda t: t.ones(0).argmax()),
    ("argmin empty", lambda t: t.ones(0).argmin()),
    ("argmax empty 2-d", lambda t: t.ones(0, 3).argmax()),
    ("argmax empty dim", lambda t: t.ones(0, 3).argmax(0)),
    ("argmin empty dim", lambda t: t.ones(0, 3).argmin(0)),
    ("max empty", lambda t: t.ones(0).max()),
    ("min empty", lambda t: t.ones(0).min()),
    ("max empty dim", lambda t: t.ones(0, 3).max(0)),
    ("min empty dim", lambda t: t.ones(0, 3).min(dim=0)),
    ("randint equal bounds", lambda t: t.randint(5, 5, (2,))),
    ("randint reversed bounds", lambda t: t.randint(5, 3, (2,))),
    ("randint float dtype", lambda t: t.randint(5, 5, (2,), dtype=t.float32)),
    ("randint huge bound", lambda t: t.randint(0, 2**70, (2,))),
    ("randint negative size", lambda t: t.randint(3, (-1,))),
    ("zeros negative", lambda t: t.zeros(-1)),
    ("zeros negative 2-d", lambda t: t.zeros(2, -1)),
    ("ones negative", lambda t: t.ones(2, -3)),
    ("empty negative", lambda t: t.empty(-1)),
    ("randn negative", lambda t: t.randn(-1)),
    ("rand negative", lambda t: t.rand(2, -1)),
    ("full negative", lambda t: t.full((-1,), 1.0)),
    ("arange sign", lambda t: t.arange(10, 0, 1)),
    ("arange float sign", lambda t: t.arange(0.0, 1.0, -0.5)),
    ("arange zero step", lambda t: t.arange(0, 10, 0)),
    ("reshape bad size", lambda t: t.ones(6).reshape(4)),
    ("reshape -1 no fit", lambda t: t.ones(6).reshape(4, -1)),
    ("reshape two -1", lambda t: t.ones(6).reshape(-1, -1)),
    ("reshape -2", lambda t: t.ones(6).reshape(2, -2)),
    ("view -2", lambda t: t.ones(6).view(2, -2)),
    ("view non-contiguous", lambda t: t.ones(2, 3).t().view(6)),
    ("view strided", lambda t: t.ones(2, 3)[:, ::2].view(-1)),
    ("index out of range", lambda t: t.ones(3)[3]),
    ("negative index out of range", lambda t: t.ones(3)[-4]),
    ("index_select first dim", lambda t: t.ones(3).index_select(0, t.tensor([3]))),
    ("index_select first dim of 2-d", lambda t: t.ones(6, 2).index_select(0, t.tensor([6]))),
    ("index_select other dim", lambda t: t.ones(2, 6).index_select(1, t.tensor([6]))),
    ("gather 1-d", lambda t: t.ones(3).gather(0, t.tensor([3]))),
    ("mean int dtype", lambda t: t.ones(3).mean(dtype=t.int64)),
    ("mean int input, int dtype", lambda t: t.ones(3, dtype=t.int64).mean(dtype=t.int64)),
    ("mean dim bool dtype", lambda t: t.mean(t.ones(3), 0, dtype=t.bool)),
    ("mean int input", lambda t: t.ones(3, dtype=t.int64).mean()),
    ("matmul vector with batch", lambda t: t.matmul(t.ones(3), t.ones(5, 4, 2))),
    ("matmul matrix with batch", lambda t: t.matmul(t.ones(2, 3), t.ones(2, 5, 4, 2))),
    ("permute too many dims", lambda t: t.ones(2, 3).permute(0, 1, 2)),
    ("kron with a number", lambda t: t.kron(t.ones(2), 3)),
    ("zeros float size", lambda t: t.zeros(2.5)),
    ("ones str size", lambda t: t.ones("a")),
    ("zeros bool size", lambda t: t.zeros(True)),
    ("zeros None size", lambda t: t.zeros(None)),
    ("zeros float tensor size", lambda t: t.zeros(t.tensor(2.0))),
    ("zeros float in varargs", lambda t: t.zeros(2, 2.5)),
    ("empty str in varargs", lambda t: t.empty(2, "a")),
    ("rand float in varargs", lambda t: t.rand(2, 2.5)),
    ("zeros float in tuple", lambda t: t.zeros((2, 2.5))),
    ("zeros float first in tuple", lambda t: t.zeros((2.5,))),
    ("zeros float in list", lambda t: t.zeros([2, 2.5])),
    ("zeros bool first in list", lambda t: t.zeros([True])),
    ("zeros None in tuple", lambda t: t.zeros((None,))),
    ("zeros numpy float", lambda t: t.zeros(2, np.float64(2.0))),
    ("full float size", lambda t: t.full((2.5,), 1.0)),
    ("full str value", lambda t: t.full((2,), "a")),
    ("full None value", lambda t: t.full((2,), None)),
    ("new_full str value", lambda t: t.ones(2).new_full((2,), "x")),
    ("new_zeros negative", lambda t: t.empty(2, 3).new_zeros(-1)),
    ("randint float size", lambda t: t.randint(3, (2.5,))),
    ("randint int size", lambda t: t.randint(3, 5)),
    ("randperm negative", lambda t: t.randperm(-1)),
    ("randn int dtype", lambda t: t.randn(2, dtype=t.int32)),
    ("randn bool dtype", lambda t: t.randn(2, dtype=t.bool)),
    ("rand int dtype", lambda t: t.rand(2, dtype=t.int64)),
    ("normal negative std", lambda t: t.normal(0.0, -1.0, (2,))),
    ("normal negative fraction std", lambda t: t.normal(0.0, -0.5, (2,))),
    ("normal negative std tensor", lambda t: t.normal(t.zeros(2), t.tensor([-1.0, -2.0]))),
    ("arange to inf", lambda t: t.arange(0, float("inf"))),
    ("arange from -inf", lambda t: t.arange(float("-inf"), 0)),
    ("arange nan step", lambda t: t.arange(0, 5, float("nan"))),
    ("arange too big", lambda t: t.arange(1e20)),
    ("eye negative n", lambda t: t.eye(-1)),
    ("eye negative m", lambda t: t.eye(2, -1)),
    ("broadcast add", lambda t: t.ones(2, 3) + t.ones(3, 2)),
    ("sum dim", lambda t: t.ones(2, 3).sum(2)),
    ("transpose dim", lambda t: t.ones(2, 3).transpose(0, 2)),
    ("dot sizes", lambda t: t.ones(3).dot(t.ones(4))),
    ("mm shapes", lambda t: t.mm(t.ones(2, 3), t.ones(2, 3))),
    ("bmm batch", lambda t: t.bmm(t.ones(2, 3, 4), t.ones(3, 4, 5))),
]


@pytest.mark.parametrize("call", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_error_matches_pytorch(torch: Any, call: Any) -> None:
    expected = outcome(lambda: call(torch))
    assert expected[0] != "ok"  # every row is an error in PyTorch
    assert outcome(lambda: call(retrograd)) == expected


def test_valid_calls_still_work() -> None:
    assert retrograd.cat([retrograd.ones(2), retrograd.zeros(1)]).tolist() == [1.0, 1.0, 0.0]
    assert retrograd.arange(3, 0, -1).tolist() == [3, 2, 1]
    assert (retrograd.tensor([6]) & retrograd.tensor([3])).tolist() == [2]
    assert retrograd.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert retrograd.randint(4, 5, (2,)).tolist() == [4, 4]
    assert retrograd.tensor(2**63, dtype=retrograd.float32).item() == 2.0**63
    assert retrograd.ones(0, 3).argmax(1).shape == (0,)
    assert retrograd.zeros(2, True).shape == (2, 1) and retrograd.zeros(retrograd.tensor(2)).shape == (2,)
    assert retrograd.zeros((2, np.int64(3))).shape == (2, 3) and retrograd.full([2], 1.0).shape == (2,)
    assert retrograd.ones(2).new_full((2,), 3).tolist() == [3.0, 3.0]
