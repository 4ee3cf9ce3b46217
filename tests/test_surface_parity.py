"""Small parity gaps with PyTorch: ``autograd.__all__``, ``expand`` with -1 on a 0-d tensor, and
the ``*_copy`` functions (values, ``grad_fn`` names, gradients, no memory shared with the input)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def test_autograd_all_is_torchs_list_where_retrograd_has_the_name(torch: Any) -> None:
    theirs = [n for n in torch.autograd.__all__ if hasattr(rg.autograd, n)]
    assert sorted(rg.autograd.__all__) == sorted(theirs)
    assert "is_grad_enabled" not in rg.autograd.__all__ and callable(rg.autograd.is_grad_enabled)
    scope: dict[str, Any] = {}
    exec("from retrograd.autograd import *", scope)
    assert "grad_mode" in scope and "Node" not in scope


@pytest.mark.parametrize("size", [(-1,), (2, -1), (-2,), (1, -1, 3)])
def test_expand_with_negative_sizes_on_a_0d_tensor_errors_as_torch(torch: Any, size: tuple[int, ...]) -> None:
    assert outcome(lambda: rg.tensor(1.0).expand(*size)) == outcome(lambda: torch.tensor(1.0).expand(*size))


def test_expand_with_negative_leading_size_still_errors_as_torch(torch: Any) -> None:
    assert outcome(lambda: rg.ones(3).expand(-1, 3)) == outcome(lambda: torch.ones(3).expand(-1, 3))


X = np.random.default_rng(0).standard_normal((3, 4))

COPIES: dict[str, Any] = {
    "alias_copy": lambda lib, x: lib.alias_copy(x),
    "as_strided_copy": lambda lib, x: lib.as_strided_copy(x, (2, 2), (1, 2)),
    "diagonal_copy": lambda lib, x: lib.diagonal_copy(x, 1),
    "expand_copy": lambda lib, x: lib.expand_copy(x[:1], (2, 3, 4)),
    "narrow_copy": lambda lib, x: lib.narrow_copy(x, 0, 1, 2),
    "narrow_copy method": lambda lib, x: x.narrow_copy(1, 1, 2),
    "permute_copy": lambda lib, x: lib.permute_copy(x, (1, 0)),
    "select_copy": lambda lib, x: lib.select_copy(x, 0, -1),
    "slice_copy": lambda lib, x: lib.slice_copy(x, 1, 1, 4, 2),
    "slice_copy whole": lambda lib, x: lib.slice_copy(x),
    "split_copy": lambda lib, x: lib.split_copy(x, 2),
    "split_with_sizes_copy": lambda lib, x: lib.split_with_sizes_copy(x, [1, 2]),
    "squeeze_copy": lambda lib, x: lib.squeeze_copy(x[:1]),
    "squeeze_copy dim": lambda lib, x: lib.squeeze_copy(x[:1], 0),
    "t_copy": lambda lib, x: lib.t_copy(x),
    "transpose_copy": lambda lib, x: lib.transpose_copy(x, 0, 1),
    "unbind_copy": lambda lib, x: lib.unbind_copy(x, 1),
    "unfold_copy": lambda lib, x: lib.unfold_copy(x, 1, 2, 1),
    "unsqueeze_copy": lambda lib, x: lib.unsqueeze_copy(x, -1),
    "view_copy": lambda lib, x: lib.view_copy(x, (12,)),
    "view_as_real_copy": lambda lib, x: lib.view_as_real_copy(x * 1j),
}


@pytest.mark.parametrize("case", list(COPIES))
def test_copy_functions_match_torch(torch: Any, case: str) -> None:
    results = []
    for lib in (rg, torch):
        x = lib.tensor(X, requires_grad=True)
        out = COPIES[case](lib, x)
        pieces = out if isinstance(out, tuple) else (out,)
        weights = [np.random.default_rng(i).standard_normal(tuple(p.shape)) for i, p in enumerate(pieces)]
        sum((p * lib.tensor(w)).sum() for p, w in zip(pieces, weights)).backward()
        results.append((type(out).__name__, [p.detach().numpy() for p in pieces],
                        [type(p.grad_fn).__name__ for p in pieces], x.grad.numpy(), [p._base is None for p in pieces]))
    (kind, values, nodes, grad, owns), (kind_t, values_t, nodes_t, grad_t, _) = results
    assert kind == kind_t and nodes == nodes_t and all(owns)
    for v, w in zip(values, values_t):
        np.testing.assert_allclose(v, w)
    np.testing.assert_allclose(grad, grad_t)


def test_copies_share_no_memory_and_work_without_grad() -> None:
    x = rg.tensor(X)
    y = rg.permute_copy(x, (1, 0))
    y.zero_()
    assert x.abs().sum().item() > 0 and y.grad_fn is None and not y.requires_grad


def test_copy_gradients_gradcheck_and_gradgradcheck() -> None:
    x = rg.tensor(X, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: rg.unfold_copy(t, 1, 2, 1), (x,))
    assert rg.autograd.gradgradcheck(lambda t: rg.transpose_copy(t, 0, 1) ** 2, (x,))


ERRORS: dict[str, Any] = {
    "view_as_complex_copy with grad": lambda lib: lib.view_as_complex_copy(lib.ones(3, 2, requires_grad=True)),
    "permute_copy dims": lambda lib: lib.permute_copy(lib.ones(3, 4), (0,)),
    "t_copy list": lambda lib: lib.t_copy([1.0]),
    "transpose_copy dim": lambda lib: lib.transpose_copy(lib.ones(3, 4), 0, 2),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_copy_errors_match_torch(torch: Any, case: str) -> None:
    assert outcome(lambda: ERRORS[case](rg)) == outcome(lambda: ERRORS[case](torch))


def test_view_as_complex_copy_without_grad_matches_torch(torch: Any) -> None:
    got = rg.view_as_complex_copy(rg.tensor(X.reshape(3, 2, 2)))
    want = torch.view_as_complex_copy(torch.tensor(X.reshape(3, 2, 2)))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
