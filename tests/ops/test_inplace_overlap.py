"""In-place writes whose input overlaps the written-to memory raise as PyTorch does; zero_/fill_
on an expanded tensor work; einsum with a zero-size operand returns PyTorch's result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd

CASES: list[tuple[str, Any]] = [
    ("shifted copy_", lambda t: t.arange(5.0)[1:].copy_(t.arange(5.0)[:-1])),  # no overlap: separate tensors
    ("shifted copy_ same storage", lambda t: (lambda a: a[1:].copy_(a[:-1]))(t.arange(5.0))),
    ("shifted setitem", lambda t: (lambda a: a.__setitem__(slice(1, None), a[:-1]))(t.arange(5.0))),
    ("copy_ transpose", lambda t: (lambda m: m.copy_(m.t()))(t.ones(3, 3))),
    ("add_ transpose", lambda t: (lambda m: m.add_(m.t()))(t.ones(3, 3))),
    ("add_ shifted", lambda t: (lambda a: a[1:].add_(a[:-1]))(t.arange(5.0))),
    ("mul_ shifted", lambda t: (lambda a: a[1:].mul_(a[:-1]))(t.arange(5.0))),
    ("mul_ by own element", lambda t: (lambda a: a.mul_(a[0]))(t.arange(5.0))),
    ("sub_ by element outside", lambda t: (lambda a: a[1:].sub_(a[0]))(t.arange(5.0))),
    ("add_ itself", lambda t: (lambda m: m.add_(m))(t.ones(3, 3))),
    ("copy_ itself", lambda t: (lambda m: m.copy_(m))(t.ones(3, 3))),
    ("disjoint halves", lambda t: (lambda a: a[:2].copy_(a[2:4]))(t.arange(5.0))),
    ("interleaved (not dense)", lambda t: (lambda a: a[::2].copy_(a[1::2]))(t.arange(6.0))),
    ("copy_ from detach alias", lambda t: (lambda a: a[1:].copy_(a.detach()[:-1]))(t.arange(5.0))),
    ("setitem from clone", lambda t: (lambda a: a.__setitem__(slice(1, None), a[:-1].clone()))(t.arange(5.0))),
    ("advanced setitem overlap", lambda t: (lambda a: a.__setitem__(t.tensor([1, 2]), a[:2]))(t.arange(5.0))),
    ("expanded zero_", lambda t: t.ones(3).expand(2, 3).zero_()),
    ("expanded fill_", lambda t: t.ones(3).expand(2, 3).fill_(2.0)),
    ("expanded add_", lambda t: t.ones(3).expand(2, 3).add_(1)),
    ("expanded copy_", lambda t: t.ones(3).expand(2, 3).copy_(t.ones(2, 3))),
    ("expanded exp_", lambda t: t.ones(3, 1).expand(3, 2).exp_()),
]


@pytest.mark.parametrize("call", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_overlap_outcome_matches_pytorch(torch: Any, call: Any) -> None:
    assert outcome(lambda: call(retrograd)) == outcome(lambda: call(torch))


def test_no_write_happens_before_the_error() -> None:
    a = retrograd.arange(5.0)
    version = a._version
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        a[1:] = a[:-1]
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and a._version == version


def test_expanded_fill_writes_the_base() -> None:
    base = retrograd.ones(3)
    base.expand(2, 3).fill_(7.0)
    assert base.tolist() == [7.0, 7.0, 7.0]
    base.expand(4, 3).zero_()
    assert base.tolist() == [0.0, 0.0, 0.0]


EINSUMS: list[tuple[str, Any]] = [
    ("ij,jk->ik", lambda t: (t.ones(0, 3), t.ones(3, 2))),
    ("ij,jk->ik", lambda t: (t.ones(2, 0), t.ones(0, 2))),
    ("ij,jk->ik", lambda t: (t.ones(2, 3), t.ones(3, 0))),
    ("bij,bjk->bik", lambda t: (t.ones(0, 2, 3), t.ones(0, 3, 4))),
    ("bij,jk->bik", lambda t: (t.ones(0, 2, 3), t.ones(3, 4))),
    ("i,j->ij", lambda t: (t.ones(0), t.ones(3))),
    ("ij->j", lambda t: (t.ones(0, 3),)),
    ("ij,ij->", lambda t: (t.ones(0, 3), t.ones(1, 3))),
    ("ij,ij->i", lambda t: (t.ones(0, 3), t.ones(1, 3))),
    ("...j,jk->...k", lambda t: (t.ones(2, 0, 3), t.ones(3, 4))),
]


@pytest.mark.parametrize(("equation", "operands"), EINSUMS, ids=[f"{e}-{i}" for i, (e, _) in enumerate(EINSUMS)])
def test_einsum_zero_size_operand(torch: Any, equation: str, operands: Any) -> None:
    expected = torch.einsum(equation, *operands(torch))
    got = retrograd.einsum(equation, *operands(retrograd))
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


CATS: list[tuple[str, int, Any]] = [
    ("legacy empty first", 0, lambda t: [t.ones(0), t.ones(2, 2)]),
    ("legacy empty last, dim 1", 1, lambda t: [t.ones(2, 2), t.ones(0)]),
    ("legacy empty twice", 0, lambda t: [t.ones(0), t.ones(2, 2), t.ones(0), t.ones(3, 2)]),
    ("only legacy empties", 0, lambda t: [t.ones(0), t.ones(0)]),
]


@pytest.mark.parametrize(("dim", "operands"), [c[1:] for c in CATS], ids=[c[0] for c in CATS])
def test_cat_skips_legacy_empty_tensors(torch: Any, dim: int, operands: Any) -> None:
    expected = torch.cat(operands(torch), dim=dim)
    got = retrograd.cat(operands(retrograd), dim=dim)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_cat_legacy_empty_gets_an_empty_gradient(torch: Any) -> None:
    grads = []
    for lib in (retrograd, torch):
        x = lib.ones(0, requires_grad=True)
        y = lib.ones(2, 2, requires_grad=True)
        (lib.cat([x, y, x]) * 2).sum().backward()
        grads.append((tuple(x.grad.shape), y.grad.tolist()))
    assert grads[0] == grads[1]


@pytest.mark.parametrize("position", [0, 1])
def test_cat_zero_dim_error_names_the_position(torch: Any, position: int) -> None:
    def call(lib: Any) -> Any:
        items = [lib.ones(0), lib.ones(0)]
        items[position] = lib.tensor(1.0)
        return lib.cat(items)

    assert outcome(lambda: call(retrograd)) == outcome(lambda: call(torch))
