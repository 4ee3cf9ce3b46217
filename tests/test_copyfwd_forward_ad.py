"""Forward AD through PyTorch's ``*_copy`` functions: the copy carries its view's tangent (values,
dtype, shape and contiguous strides as PyTorch's), with and without a backward graph, and through
``func.jvp``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD

# (name, positional arguments after the input) on a (2, 3, 4) input
CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2))), ("diagonal_copy", ()),
    ("expand_copy", ((5, 2, 3, 4),)), ("narrow_copy", (1, 0, 2)), ("permute_copy", ((2, 0, 1),)),
    ("select_copy", (1, 1)), ("slice_copy", (1, 0, 3, 2)), ("split_copy", (1,)),
    ("split_with_sizes_copy", ([1, 2], 1)), ("squeeze_copy", ()), ("transpose_copy", (0, 2)),
    ("unbind_copy", (2,)), ("unfold_copy", (2, 2, 1)), ("unsqueeze_copy", (0,)), ("view_copy", ((6, 4),)),
]


def _tangents(lib: Any, fw: Any, name: str, args: tuple[Any, ...], primal: np.ndarray, tangent: np.ndarray,
              requires_grad: bool | str) -> list[Any]:
    with fw.dual_level():
        p = lib.tensor(primal, requires_grad=bool(requires_grad))
        if requires_grad == "nonleaf":  # (a view of a non-leaf: the copy's other node path)
            p = p * 1
        d = fw.make_dual(p, lib.tensor(tangent))
        out = getattr(lib, name)(d, *args)
        outs = out if isinstance(out, tuple) else (out,)
        return [(fw.unpack_dual(o).tangent, o) for o in outs]


@pytest.mark.parametrize("requires_grad", [False, True, "nonleaf"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_copy_carries_tangent_as_torch(torch: Any, name: str, args: tuple[Any, ...], dtype: Any,
                                       requires_grad: bool | str) -> None:
    rng = np.random.default_rng(0)
    primal, tangent = rng.random((2, 3, 4)).astype(dtype), rng.random((2, 3, 4)).astype(dtype)
    ours = _tangents(rg, fwAD, name, args, primal, tangent, requires_grad)
    theirs = _tangents(torch, torch.autograd.forward_ad, name, args, primal, tangent, requires_grad)
    assert len(ours) == len(theirs)
    for (t, o), (tt, to) in zip(ours, theirs):
        assert t is not None, name
        np.testing.assert_array_equal(t.numpy(), tt.numpy())
        assert str(t.dtype) == str(tt.dtype)
        assert t.stride() == tt.stride() and t.is_contiguous()
        assert (o.grad_fn is None) == (to.grad_fn is None)
        assert not np.shares_memory(t.numpy(), tangent)  # (the tangent is the copy's own, as the copy is)


def test_t_copy_tangent_is_transposed(torch: Any) -> None:
    tangent = np.arange(6.0).reshape(2, 3)
    with fwAD.dual_level():
        out = rg.t_copy(fwAD.make_dual(rg.ones(2, 3, dtype=rg.float64), rg.tensor(tangent)))
        t = fwAD.unpack_dual(out).tangent
    np.testing.assert_array_equal(t.numpy(), tangent.T)  # hand-derived: the copy is linear, so its JVP is itself
    assert t.stride() == (2, 1)


def test_view_as_real_and_complex_copy_tangents(torch: Any) -> None:
    z, tz = np.array([1 + 2j, 3 - 1j]), np.array([0.5 - 1j, 2 + 0.25j])
    res = []
    for lib, fw in ((rg, fwAD), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            out = lib.view_as_real_copy(fw.make_dual(lib.tensor(z), lib.tensor(tz)))
            back = lib.view_as_complex_copy(fw.make_dual(lib.tensor(z.view(np.float64).reshape(2, 2)),
                                                         lib.tensor(tz.view(np.float64).reshape(2, 2))))
            res.append((fw.unpack_dual(out).tangent.numpy().copy(), fw.unpack_dual(back).tangent.numpy().copy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_func_jvp_of_copies(torch: Any, name: str, args: tuple[Any, ...]) -> None:
    rng = np.random.default_rng(1)
    primal, tangent = rng.random((2, 3, 4)), rng.random((2, 3, 4))
    ours = rg.func.jvp(lambda x: getattr(rg, name)(x, *args), (rg.tensor(primal),), (rg.tensor(tangent),))[1]
    theirs = torch.func.jvp(lambda x: getattr(torch, name)(x, *args), (torch.tensor(primal),),
                            (torch.tensor(tangent),))[1]
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_reverse_over_forward_through_copy() -> None:
    # The copy's tangent keeps its graph: d/dv sum(w * t_copy(tangent v)) = w^T, and the primal's
    # gradient flows as well (hand-derived; the copy is linear in both).
    w = rg.arange(6.0, dtype=rg.float64).view(3, 2)
    x = rg.ones(2, 3, dtype=rg.float64, requires_grad=True)
    v = rg.zeros(2, 3, dtype=rg.float64, requires_grad=True)
    with fwAD.dual_level():
        out = rg.t_copy(fwAD.make_dual(x, v))
        p, t = fwAD.unpack_dual(out)
        ((w * t).sum() + (w * p).sum()).backward()
    np.testing.assert_array_equal(v.grad.numpy(), w.numpy().T)
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy().T)
