"""Tangents computed with grad mode off (the backward pass of forward over reverse, ``no_grad``
inside a dual level): linear and multilinear ops take their array paths (``_linear_arrays``,
``_multilinear_arrays`` in ops/forward.py). Their tangents, dtypes and graphs against PyTorch's
forward AD, and forward-over-reverse Hessian-vector products against PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import forward as fw_rules

RS = np.random.RandomState(3)


def _tangent_under_no_grad(lib: Any, fn: Any, primals: list[np.ndarray], tangents: list[np.ndarray | None],
                           requires_grad: bool = False) -> list[Any]:
    """``fn`` of duals (a primal without a tangent stays plain), run under no_grad; the output
    tangents (None where there is none)."""
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        args = []
        for p, t in zip(primals, tangents):
            x = lib.tensor(p, requires_grad=requires_grad)
            args.append(x if t is None else fwad.make_dual(x, lib.tensor(t)))
        with lib.no_grad():
            out = fn(*args)
        outs = out if isinstance(out, tuple) else (out,)
        return [fwad.unpack_dual(o).tangent for o in outs]


def _same(mine: list[Any], theirs: list[Any]) -> None:
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert a.requires_grad is False and b.requires_grad is False
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


CASES = [
    ("mm, both tangents", lambda lib, a, b: a.mm(b), [(4, 3), (3, 5)], [True, True]),
    ("mm, first tangent", lambda lib, a, b: a.mm(b), [(4, 3), (3, 5)], [True, False]),
    ("mm, second tangent", lambda lib, a, b: a.mm(b), [(4, 3), (3, 5)], [False, True]),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), [(2, 4, 3), (2, 3, 5)], [True, True]),
    ("dot", lambda lib, a, b: lib.dot(a, b), [(5,), (5,)], [True, True]),
    ("matmul of a transposed view", lambda lib, a, b: a @ b.t(), [(4, 3), (5, 3)], [True, True]),
    ("t", lambda lib, a: a.t(), [(4, 3)], [True]),
    ("sum_to_size", lambda lib, a: a.sum_to_size(1, 3), [(4, 3)], [True]),
    ("unbind (several outputs)", lambda lib, a: a.unbind(0), [(3, 2)], [True]),
    ("cat, one tangent missing", lambda lib, a, b: lib.cat([a, b]), [(2, 3), (1, 3)], [True, False]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name,fn,shapes,has_tangent", CASES, ids=[c[0] for c in CASES])
def test_tangents_with_grad_mode_off_match_pytorch(torch: Any, name: str, fn: Any, shapes: list[tuple[int, ...]],
                                                   has_tangent: list[bool], dtype: str, requires_grad: bool) -> None:
    primals = [RS.randn(*s).astype(dtype) for s in shapes]
    tangents = [RS.randn(*s).astype(dtype) if h else None for s, h in zip(shapes, has_tangent)]
    mine = _tangent_under_no_grad(rg, lambda *a: fn(rg, *a), primals, tangents, requires_grad)
    theirs = _tangent_under_no_grad(torch, lambda *a: fn(torch, *a), primals, tangents, requires_grad)
    _same(mine, theirs)


def test_grad_mode_off_takes_the_array_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    # The general helpers are for tangents that may need a graph: with grad mode off they are
    # not reached (the array paths give the same tangents with less work per op).
    def refuse(*args: Any) -> Any:
        raise AssertionError("a graph-aware helper ran with grad mode off")

    monkeypatch.setattr(fw_rules, "_linear", refuse)
    monkeypatch.setattr(fw_rules, "_multilinear", refuse)
    a, b = RS.randn(4, 3), RS.randn(3, 5)
    ta, tb = RS.randn(4, 3), RS.randn(3, 5)
    (tangent,) = _tangent_under_no_grad(rg, lambda x, y: x.t().t().mm(y), [a, b], [ta, tb], requires_grad=True)
    np.testing.assert_allclose(tangent.numpy(), ta @ b + a @ tb, rtol=1e-12)


def _forward_over_reverse_hvp(lib: Any, params: list[np.ndarray], vector: list[np.ndarray], x: np.ndarray,
                              y: np.ndarray) -> list[np.ndarray]:
    """The benchmark's form (benchmarks/workloads.py): duals of the parameters, one backward pass,
    the gradients' tangents."""
    fwad = lib.autograd.forward_ad
    F = lib.nn.functional
    ps = [lib.tensor(p, requires_grad=True) for p in params]
    with fwad.dual_level():
        duals = [fwad.make_dual(p, lib.tensor(v)) for p, v in zip(ps, vector)]
        h = lib.tensor(x)
        for i in range(0, len(duals), 2):
            h = h @ duals[i] + duals[i + 1]
            if i + 2 < len(duals):
                h = F.relu(h)
        grads = lib.autograd.grad(F.cross_entropy(h, lib.tensor(y)), duals)
        return [fwad.unpack_dual(g).tangent.numpy() for g in grads]


def test_forward_over_reverse_hvp_equals_pytorch_and_reverse_over_reverse(torch: Any) -> None:
    sizes = (6, 7, 5, 3)
    params = [a for i, o in zip(sizes[:-1], sizes[1:]) for a in (RS.randn(i, o), RS.randn(o))]
    vector = [RS.randn(*p.shape) for p in params]
    x, y = RS.randn(9, sizes[0]), RS.randint(0, sizes[-1], 9)
    mine = _forward_over_reverse_hvp(rg, params, vector, x, y)
    theirs = _forward_over_reverse_hvp(torch, params, vector, x, y)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # The same product by reverse over reverse (an independent derivation, retrograd's own).
    ps = [rg.tensor(p, requires_grad=True) for p in params]
    h = rg.tensor(x)
    for i in range(0, len(ps), 2):
        h = h @ ps[i] + ps[i + 1]
        if i + 2 < len(ps):
            h = rg.nn.functional.relu(h)
    grads = rg.autograd.grad(rg.nn.functional.cross_entropy(h, rg.tensor(y)), ps, create_graph=True)
    dot = sum((g * rg.tensor(v)).sum() for g, v in zip(grads, vector))
    for a, b in zip(mine, rg.autograd.grad(dot, ps)):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-10, atol=1e-12)
