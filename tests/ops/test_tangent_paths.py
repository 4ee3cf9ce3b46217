"""The generated tangent paths (``ops/forward.py``, ``tangent_path``): each is ``propagate_general``
written out for one op, so on every op-database sample it must give the very same tangents (bit
for bit, dtype, ``requires_grad``, ``grad_fn``) as the general path, in the three situations a
tangent is computed in: grad mode on with nothing requiring grad, a graph wanted (primals and
tangents requiring grad: reverse over forward), and grad mode off (the backward pass of forward
over reverse). The general path itself is checked against finite differences and PyTorch's
forward AD (tests/ops/test_opdb_forward_ad.py); the forward-over-reverse HVP the paths are for is
checked against PyTorch's here too."""

from __future__ import annotations

import contextlib
import zlib
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from opdb import OpInfo, Sample, gradcheck_cases, to_lib
from retrograd.ops import forward as fw
from retrograd.ops import op as op_module

CASES = gradcheck_cases()
MODES = ("grad", "tracked", "no_grad")


def _outputs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _describe(out: Any, sources: list[Any]) -> Any:
    """What a tangent is: its values, dtype, whether it has a graph, its node's name, and where it
    has one, the gradients of the sum of its elements w.r.t. ``sources`` (the primals and tangents
    made dual: reverse over forward)."""
    if not isinstance(out, rg.Tensor) or not (out.dtype.is_floating_point or out.dtype.is_complex):
        return None
    t = fwAD.unpack_dual(out).tangent
    if t is None:
        return None
    grads: tuple[Any, ...] = ()
    if t.requires_grad:
        total = t.real.sum() if t.is_complex() else t.sum()
        grads = tuple(None if g is None else g.numpy().copy()
                      for g in rg.autograd.grad(total, sources, retain_graph=True, allow_unused=True))
    return (t.detach().numpy().copy(), str(t.dtype), t.requires_grad,
            None if t.grad_fn is None else type(t.grad_fn).__name__, grads)


def _run(op: OpInfo, sample: Sample, mode: str) -> list[Any]:
    args, kwargs, leaves = to_lib(rg, sample)
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    tangents = [rng.standard_normal(tuple(leaf.shape)) for leaf in leaves]
    tracked = mode == "tracked"
    rg.manual_seed(0)
    with fwAD.dual_level():
        tangent_leaves = [rg.tensor(t, requires_grad=tracked) for t in tangents]
        duals = {id(leaf): fwAD.make_dual(leaf if tracked else leaf.detach(), t)
                 for leaf, t in zip(leaves, tangent_leaves)}
        swapped = [duals.get(id(a), a) if not isinstance(a, list) else [duals.get(id(x), x) for x in a] for a in args]
        with rg.no_grad() if mode == "no_grad" else contextlib.nullcontext():
            outs = _outputs(op.fn(rg, *swapped, **kwargs))
        return [_describe(o, [*leaves, *tangent_leaves]) for o in outs]


def assert_same_tangents(mine: list[Any], ref: list[Any], mode: str) -> None:
    """Two runs' ``_describe``d tangents are the same: values (bits), dtype, graph, node name, and
    the gradients through the tangent's graph."""
    assert len(mine) == len(ref)
    for a, b in zip(mine, ref):
        assert (a is None) == (b is None), mode
        if b is not None:
            np.testing.assert_array_equal(a[0], b[0], err_msg=mode)
            assert a[1:4] == b[1:4], mode
            assert len(a[4]) == len(b[4])
            for g, h in zip(a[4], b[4]):  # (the tangent's graph: its gradients)
                assert (g is None) == (h is None), mode
                np.testing.assert_array_equal(g, h, err_msg=mode)


def _outcome(op: OpInfo, sample: Sample, mode: str) -> Any:
    try:
        return _run(op, sample, mode)
    except Exception as err:  # (both paths must fail alike: PyTorch's not-implemented error...)
        return (type(err), str(err))


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_generated_tangent_paths_give_the_general_paths_tangents(op: OpInfo, sample: Sample,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    for mode in MODES:
        generated = _outcome(op, sample, mode)
        with monkeypatch.context() as m:  # every op through the general path
            m.setattr(op_module, "propagate_tangents", fw.propagate_general)
            m.setattr(fw, "propagate", fw.propagate_general)
            general = _outcome(op, sample, mode)
        assert type(generated) is type(general), (mode, generated, general)
        if isinstance(general, tuple):  # an error
            assert generated == general, mode
            continue
        assert_same_tangents(generated, general, mode)


def test_every_op_of_the_mlp_hvp_takes_a_generated_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Forward over reverse through the benchmark's MLP (benchmarks/workloads.py) reaches no op
    # whose tangents go through ``propagate_general``: the paths this work is for stay generated.
    fallbacks: list[str] = []

    def general(op: Any, *args: Any) -> None:
        fallbacks.append(op.name)
        propagate_general(op, *args)

    propagate_general = fw.propagate_general
    monkeypatch.setattr(fw, "_TANGENT_PATHS", {})  # (made again, with the general path watched)
    monkeypatch.setattr(fw, "propagate_general", general)
    rs = np.random.RandomState(0)
    sizes = (6, 7, 5, 3)
    params = [rg.tensor(rs.randn(*shape).astype(np.float32), requires_grad=True)
              for i, o in zip(sizes[:-1], sizes[1:]) for shape in ((i, o), (o,))]
    x, y = rg.tensor(rs.randn(9, sizes[0]).astype(np.float32)), rg.tensor(rs.randint(0, sizes[-1], 9))
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, rg.tensor(rs.randn(*p.shape).astype(np.float32))) for p in params]
        h = x
        for i in range(0, len(duals), 2):
            h = h @ duals[i] + duals[i + 1]
            if i + 2 < len(duals):
                h = rg.nn.functional.relu(h)
        grads = rg.autograd.grad(rg.nn.functional.cross_entropy(h, y), duals)
        assert all(fwAD.unpack_dual(g).tangent is not None for g in grads)
    used = {op.name for op in fw._TANGENT_PATHS}
    # (the backward's rules of mm, relu and log_softmax compute their tangents on arrays, with no
    # op of their own: tests/ops/test_array_rules_tangents.py)
    assert {"mm", "add", "relu", "log_softmax", "nll_loss", "sum_to_size"} <= used
    assert fallbacks == []
    assert all(fw.tangent_source(op) is not None for op in fw._TANGENT_PATHS if op.differentiable)


@pytest.mark.parametrize("grad", [True, False])
def test_a_tangent_of_another_dtype_than_its_primal_takes_the_general_path(monkeypatch: pytest.MonkeyPatch,
                                                                          grad: bool) -> None:
    # make_dual keeps a tangent's own dtype, and so do the ops' tangents, as PyTorch's (the
    # generated paths hand such a call over to the general one; tests/ops/test_parity_polish_3.py
    # compares the dtypes with PyTorch's, ``mm``'s refusal of the mixed dtypes included).
    def tangents() -> list[Any]:
        with fwAD.dual_level():
            a = fwAD.make_dual(rg.ones(2, 3), rg.full((2, 3), 0.1, dtype=rg.float64))
            b = rg.arange(12.0).reshape(3, 4)
            with rg.set_grad_enabled(grad):
                outs = [a * b[:2, :3], a.t(), a.exp() + a, a.sum(0)]
            return [fwAD.unpack_dual(o).tangent for o in outs]

    generated = tangents()
    with monkeypatch.context() as m:
        m.setattr(op_module, "propagate_tangents", fw.propagate_general)
        general = tangents()
    for mine, ref in zip(generated, general, strict=True):
        assert mine.dtype == ref.dtype == rg.float64
        np.testing.assert_array_equal(mine.numpy(), ref.numpy())


def test_tangent_source_is_registered_with_linecache() -> None:
    import linecache

    from retrograd.ops.elementwise import mul

    source = fw.tangent_source(mul)
    assert source is not None and "rule1(t1, x0)" in source
    path = fw.tangent_path(mul)
    assert "".join(linecache.getlines(path.__code__.co_filename)) == source


def test_make_dual_and_unpack_dual_refuse_a_wrong_level_as_pytorch(torch: Any) -> None:
    # (make_dual and unpack_dual read the level inline on their common path: these stay checked)
    def errors(lib: Any) -> list[str]:
        fwad = lib.autograd.forward_ad
        out = []
        with fwad.dual_level():
            dual = fwad.make_dual(lib.ones(2), lib.ones(2))
            for call in (lambda: fwad.make_dual(lib.ones(2), lib.ones(2), level=3),
                         lambda: fwad.unpack_dual(dual, level=5)):
                with pytest.raises(RuntimeError) as info:
                    call()
                out.append(str(info.value))
            assert fwad.unpack_dual(lib.ones(2), level=5).tangent is None  # (no tangent: nothing checked)
            assert fwad.unpack_dual(dual, level=0).tangent is not None
        with pytest.raises(RuntimeError) as info:
            fwad.make_dual(lib.ones(2), lib.ones(2))
        return [*out, str(info.value)]

    assert errors(rg) == errors(torch)
