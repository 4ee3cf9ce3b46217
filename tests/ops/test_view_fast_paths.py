"""The shortcuts of the view methods (a shape that already fits, dims already in range, a
contiguous ``reshape``, a broadcasting ``expand``) and the fallbacks next to them, against
PyTorch: the view's values, shape, strides, ``_is_view()``/``_base``, the version counter it
shares with its base, gradients through an in-place write on it, and the errors of bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

# (name, make the view from a (4, 1, 6) tensor, whether an in-place write through it is allowed)
_VIEWS: list[tuple[str, Callable[[Any], Any], bool]] = [
    ("view-same-shape", lambda x: x.view(4, 1, 6), True),
    ("view-tuple", lambda x: x.view((6, 4)), True),
    ("view-size", lambda x: x.view(x.shape), True),
    ("view-list", lambda x: x.view([2, 12]), True),
    ("view-numpy-ints", lambda x: x.view(np.int64(3), np.int64(8)), True),
    ("view-minus-one", lambda x: x.view(-1), True),
    ("view-minus-one-middle", lambda x: x.view(2, -1, 3), True),
    ("reshape-contiguous", lambda x: x.reshape(3, 8), True),
    ("reshape-minus-one", lambda x: x.reshape(-1, 4), True),
    ("reshape-of-transpose-copies", lambda x: x.transpose(0, 2).reshape(24), True),
    ("reshape-of-transpose-views", lambda x: x.transpose(0, 2).reshape(6, 4), True),
    ("transpose", lambda x: x.transpose(0, 2), True),
    ("transpose-negative", lambda x: x.transpose(-1, 0), True),
    ("transpose-same-dim", lambda x: x.transpose(1, 1), True),
    ("permute", lambda x: x.permute(2, 0, 1), True),
    ("permute-tuple-negative", lambda x: x.permute((-1, 0, -2)), True),
    ("squeeze-dim", lambda x: x.squeeze(1), True),
    ("squeeze-dim-negative", lambda x: x.squeeze(-2), True),
    ("squeeze-dim-not-one", lambda x: x.squeeze(0), True),
    ("squeeze-of-transpose", lambda x: x.transpose(0, 2).squeeze(1), True),
    ("unsqueeze-front", lambda x: x.unsqueeze(0), True),
    ("unsqueeze-end", lambda x: x.unsqueeze(3), True),
    ("unsqueeze-negative", lambda x: x.unsqueeze(-2), True),
    ("unsqueeze-of-transpose", lambda x: x.transpose(0, 2).unsqueeze(1), True),
    ("expand-size-one-dim", lambda x: x.expand(4, 5, 6), False),
    ("expand-leading", lambda x: x.expand(2, 4, 3, 6), False),
    ("expand-minus-one", lambda x: x.expand(-1, 2, -1), False),
    ("expand-of-transpose", lambda x: x.transpose(0, 1).expand(3, 4, 6), False),
    ("expand-to-empty", lambda x: x.expand(4, 0, 6), False),
    ("expand-unchanged", lambda x: x.expand(4, 1, 6), True),
]


def _root(lib: Any, grad: bool) -> Any:
    leaf = lib.arange(24.0, dtype=lib.float64).reshape(4, 1, 6).requires_grad_(grad)
    return leaf, (leaf * 1 if grad else leaf)


@pytest.mark.parametrize(("name", "make", "writable"), _VIEWS, ids=[c[0] for c in _VIEWS])
def test_view_metadata_matches_pytorch(torch: Any, name: str, make: Callable[[Any], Any], writable: bool) -> None:
    for grad in (False, True):
        _, ours_x = _root(rg, grad)
        _, theirs_x = _root(torch, grad)
        ours, theirs = make(ours_x), make(theirs_x)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride()
        assert ours._is_view() == theirs._is_view()
        assert (ours._base is ours_x) == (theirs._base is theirs_x)
        assert ours.requires_grad == theirs.requires_grad
        if name != "reshape-of-transpose-views":  # (ViewBackward0; PyTorch's ReshapeAliasBackward0: docs/differences.md)
            assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


@pytest.mark.parametrize(("name", "make", "writable"), [c for c in _VIEWS if c[2]], ids=[c[0] for c in _VIEWS if c[2]])
def test_inplace_through_view_matches_pytorch(torch: Any, name: str, make: Callable[[Any], Any], writable: bool) -> None:
    """A write through the view bumps the base's version when they share it, changes the base's
    values when they share memory, and its gradient flows to the leaf (CopySlices)."""
    results = []
    for lib in (rg, torch):
        leaf, x = _root(lib, True)
        view = make(x)
        before = x._version
        view.mul_(3.0)
        weights = lib.arange(24.0, dtype=lib.float64).reshape(4, 1, 6) - 5.0
        ((x * weights).sum() + (view * view).sum()).backward()
        results.append((x._version - before, x.detach().numpy().copy(), leaf.grad.numpy().copy()))
    (ours_bump, ours_x, ours_grad), (theirs_bump, theirs_x, theirs_grad) = results
    assert ours_bump == theirs_bump
    np.testing.assert_array_equal(ours_x, theirs_x)
    np.testing.assert_allclose(ours_grad, theirs_grad)


_BAD: list[tuple[str, Callable[[Any], Any]]] = [
    ("view-negative-pair", lambda x: x.view(-4, -6)),
    ("view-two-minus-ones", lambda x: x.view(-1, -1)),
    ("view-wrong-numel", lambda x: x.view(5, 5)),
    ("view-minus-one-not-dividing", lambda x: x.view(-1, 5)),
    ("view-minus-one-with-zero", lambda x: x.view(0, -1)),
    ("view-negative-size", lambda x: x.view(4, -6)),
    ("view-non-contiguous", lambda x: x.transpose(0, 2).view(24)),
    ("reshape-negative-pair", lambda x: x.reshape(-4, -6)),
    ("transpose-out-of-range", lambda x: x.transpose(0, 3)),
    ("transpose-below-range", lambda x: x.transpose(-4, 0)),
    ("permute-out-of-range", lambda x: x.permute(0, 3, 1)),
    ("permute-repeated", lambda x: x.permute(0, 0, 1)),
    ("permute-repeated-negative", lambda x: x.permute(0, -3, 1)),
    ("permute-too-few", lambda x: x.permute(1, 0)),
    ("squeeze-out-of-range", lambda x: x.squeeze(3)),
    ("unsqueeze-out-of-range", lambda x: x.unsqueeze(4)),
    ("unsqueeze-below-range", lambda x: x.unsqueeze(-5)),
    ("expand-mismatch", lambda x: x.expand(4, 2, 5)),
    ("expand-too-few", lambda x: x.expand(1, 6)),
    ("expand-negative-leading", lambda x: x.expand(-1, 4, 1, 6)),
]


@pytest.mark.parametrize(("name", "make"), _BAD, ids=[c[0] for c in _BAD])
def test_bad_view_arguments_raise_pytorchs_error(torch: Any, name: str, make: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as theirs:
        make(_root(torch, False)[1])
    with pytest.raises(Exception) as ours:
        make(_root(rg, False)[1])
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_views_share_the_version_counter_of_their_base(torch: Any) -> None:
    """A write to the base shows in every view's ``_version`` (one counter), as in PyTorch."""
    versions = []
    for lib in (rg, torch):
        x = lib.zeros(4, 1, 6)
        views = [x.view(24), x.reshape(6, 4), x.transpose(0, 2), x.permute(1, 2, 0), x.squeeze(1),
                 x.unsqueeze(0), x.expand(4, 3, 6), x.view(-1).view(4, 6)]
        x.add_(1)
        views[0].add_(1)
        versions.append([v._version for v in views] + [x._version])
    assert versions[0] == versions[1]


def test_views_of_views_record_the_root_base(torch: Any) -> None:
    x = rg.zeros(4, 1, 6)
    chain = x.view(24).view(4, 6).unsqueeze(1).transpose(0, 2).squeeze(1).permute(1, 0).expand(2, 4, 6)
    t = torch.zeros(4, 1, 6)
    theirs = t.view(24).view(4, 6).unsqueeze(1).transpose(0, 2).squeeze(1).permute(1, 0).expand(2, 4, 6)
    assert chain._base is x and theirs._base is t
    assert chain.stride() == theirs.stride()


def test_view_gradients_in_float64() -> None:
    x = rg.randn(4, 1, 6, dtype=rg.float64, requires_grad=True)

    def f(t: Any) -> Any:
        return (t.view(-1).view(2, 12).reshape(6, 4).t().unsqueeze(-1).transpose(0, 2).squeeze(0)
                .permute(1, 0).expand(3, 4, 6) * rg.arange(6.0, dtype=rg.float64)).sin()

    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradgradcheck(f, (x,))


def test_make_dual_and_unpack_dual_views_match_pytorch(torch: Any) -> None:
    """The views ``make_dual``/``unpack_dual`` make: ViewBackward0 of the primal, same counter."""
    results = []
    for lib in (rg, torch):
        fwad = lib.autograd.forward_ad
        primal = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
        with fwad.dual_level():
            dual = fwad.make_dual(primal, lib.ones(2, 3, dtype=lib.float64))
            unpacked = fwad.unpack_dual(dual * 2)
            out = unpacked.primal
            results.append((dual._is_view(), dual._base is primal, dual.stride(), out._is_view(),
                            unpacked.tangent.numpy().tolist(), dual._version == primal._version))
    assert results[0] == results[1]


@pytest.mark.parametrize(("name", "make", "writable"), _VIEWS, ids=[v[0] for v in _VIEWS])
def test_a_views_edge_is_gradient_edges_before_and_after_a_write(torch: Any, name: str, make: Callable[[Any], Any],
                                                                 writable: bool) -> None:
    # The recording paths' ``_edge`` takes a view's own node inline while its base is unwritten
    # since; after a write it must be ``gradient_edge``'s (the view's node remade from the base).
    from retrograd.autograd.engine import gradient_edge
    from retrograd.ops.op import _edge

    for leaf_base in (True, False):
        leaf = rg.arange(24.0).reshape(4, 1, 6).requires_grad_()
        base = leaf if leaf_base else leaf * 1.0
        view = make(base)
        if view.grad_fn is None:  # (a shape that already fits: the base itself)
            continue
        assert _edge(view) == gradient_edge(view)
        assert _edge(view)[0] is view.grad_fn
        if not writable or leaf_base:  # (a leaf that requires grad refuses in-place writes)
            continue
        with rg.no_grad():
            base.mul_(2.0)
        fresh = _edge(view)
        assert fresh == gradient_edge(view)
        assert fresh[0] is view.grad_fn
        if view._base is not None:  # (a reshape that copies is no view: its node stays)
            assert fresh[0].name() == "AsStridedBackward0"
        (g,) = rg.autograd.grad((view * view).sum(), leaf)
        tleaf = torch.arange(24.0).reshape(4, 1, 6).requires_grad_()
        tbase = tleaf * 1.0
        tview = make(tbase)
        with torch.no_grad():
            tbase.mul_(2.0)
        (ref,) = torch.autograd.grad((tview * tview).sum(), tleaf)
        np.testing.assert_array_equal(g.numpy(), ref.numpy())
