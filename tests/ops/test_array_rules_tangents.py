"""Backward rules on arrays inside a forward-AD level (``ops/op.py``: ``with_array_rule(...,
tangent=)``, ``rule_with_tangents``): when nothing is recorded but tangents are wanted (the backward
pass of forward over reverse), the generated ``apply`` of an op whose rules carry a tangent form
runs the rule and its tangent on arrays. On every op-database sample, in float32 and float64, each
such node must give the very gradients and tangents (bits, dtype, shape) the rule's own ops give,
whichever of the gradient and the saved values carry a tangent; a wrong tangent form must fail
that comparison; and where a graph is wanted, or a tangent has another dtype, the rules stay in
ops."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from opdb import OpInfo, Sample, gradcheck_cases, graph_nodes, to_lib
from retrograd.autograd.graph import Node
from retrograd.ops.op import OpNode

CASES = gradcheck_cases()
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


def _tangent_rules(node: Any) -> list[Any]:
    if not isinstance(node, OpNode) or node._op.joint_rule is not None:
        return []
    return [rule for rule, _ in node._op.edge_rules if hasattr(rule, "tangent_on_arrays")]


def _values(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator, special: bool) -> np.ndarray:
    """Normal values, with a -0.0, an inf and a NaN where there is room (``special``)."""
    values = rng.standard_normal(shape).astype(dtype)
    flat = values.reshape(-1)
    for i, value in enumerate((-0.0, np.inf, np.nan) if special else ()):
        if flat.size > 3 * (i + 1):
            flat[3 * (i + 1)] = value
    return values


def _gradient(node: Node, rng: np.random.Generator, with_tangent: bool) -> rg.Tensor:
    """A gradient for the node's output; inside a level, with a tangent if ``with_tangent``."""
    grad = rg.tensor(_values(node._shape, node._dtype, rng, special=True))
    if not with_tangent:
        return grad
    return fwAD.make_dual(grad, rg.tensor(_values(node._shape, node._dtype, rng, special=True)))


def _bits(t: rg.Tensor) -> Any:
    data = t._data
    return data.view(BITS[data.itemsize]).tolist(), str(data.dtype), data.shape


def _describe(grads: tuple[Any, ...]) -> list[Any]:
    out = []
    for g in grads:
        if g is None:
            out.append(None)
            continue
        tangent = fwAD.unpack_dual(g).tangent
        out.append((_bits(g), g._data.strides, g.requires_grad, g.grad_fn,
                    None if tangent is None else _bits(tangent)))
    return out


@contextmanager
def _counting_array_forms(node: Node) -> Iterator[list[int]]:
    """Counts the calls of the node's array forms (the rule's, or its pair form's) made through
    ``rule_with_tangents``."""
    taken = [0]
    forms = [(rule, name, getattr(rule, name)) for rule in _tangent_rules(node)
             for name in ("on_arrays", "pair_on_arrays") if hasattr(rule, name)]

    def counting(array_rule: Any) -> Any:
        def run(*args: Any) -> Any:
            taken[0] += 1
            return array_rule(*args)
        return run

    for rule, name, form in forms:
        setattr(rule, name, counting(form))
    try:
        yield taken
    finally:
        for rule, name, form in forms:
            setattr(rule, name, form)


def _apply_both(node: Node, grad: rg.Tensor) -> tuple[list[Any], list[Any], int]:
    """The node's gradients (with their tangents) by its generated ``apply`` as it runs, and with
    every rule run in ops (``rule_with_tangents`` shut), and how many rules ran on arrays."""
    namespace = type(node).apply.__globals__
    opened = namespace["rule_with_tangents"]
    try:  # (as the engine runs a node: grad mode off, NumPy's floating-point warnings quiet)
        with _counting_array_forms(node) as taken, rg.no_grad(), np.errstate(all="ignore"):
            open_path = _describe(node.apply([grad]))
        namespace["rule_with_tangents"] = lambda rule, level, args, tensors: rule(*args)
        with rg.no_grad(), np.errstate(all="ignore"):
            shut_path = _describe(node.apply([grad]))
    finally:
        namespace["rule_with_tangents"] = opened
    return open_path, shut_path, taken[0]


def _graph(op: OpInfo, sample: Sample, dtype: str, dual: bool, rng: np.random.Generator) -> list[Any]:
    """The sample's nodes and those of its first gradients (create_graph); with ``dual``, made in
    the current level from inputs with tangents (so saved inputs and outputs carry them)."""
    args, kwargs, leaves = to_lib(rg, sample, dtype)
    if dual:
        duals = {id(leaf): fwAD.make_dual(leaf, rg.tensor(_values(tuple(leaf.shape), leaf._data.dtype, rng, False)))
                 for leaf in leaves}
        args = [duals.get(id(a), a) if not isinstance(a, list) else [duals.get(id(x), x) for x in a] for a in args]
    rg.manual_seed(0)
    out = op.fn(rg, *args, **kwargs)
    outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    tracked = [o for o in outputs if isinstance(o, rg.Tensor) and o.requires_grad and o.dtype.is_floating_point]
    if tracked:
        weights = [rg.tensor(_values(tuple(o.shape), o._data.dtype, rng, False), requires_grad=True) for o in tracked]
        try:
            outputs += [g for g in rg.autograd.grad(tracked, leaves, weights, create_graph=True, allow_unused=True)
                        if g is not None]
        except (RuntimeError, NotImplementedError):  # (no second-order rule, or no JVP: PyTorch's errors)
            pass
    return graph_nodes(outputs)


def _compare_nodes(nodes: list[Any], rng: np.random.Generator, label: str) -> int:
    """Applies each node with tangent forms both ways, to a gradient with and without a tangent
    (inside the current level); how many rules ran on arrays."""
    taken_total = 0
    for node in nodes:
        if not _tangent_rules(node) or node._shape is None:
            continue
        for grad_tangent in (True, False):
            open_path, shut_path, taken = _apply_both(node, _gradient(node, rng, grad_tangent))
            assert open_path == shut_path, (type(node).__name__, grad_tangent, label)
            taken_total += taken
    return taken_total


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_rules_with_tangents_on_arrays_give_the_rules_ops_bits(op: OpInfo, sample: Sample) -> None:
    compared = 0
    for dtype in ("float32", "float64"):
        if not to_lib(rg, sample, dtype)[2]:
            pytest.skip("no differentiable input")
        rng = np.random.default_rng(zlib.crc32(f"{op.name}{dtype}".encode()))
        # Saved values with tangents: the graph made in the level the nodes then run in.
        with fwAD.dual_level():
            try:
                nodes = _graph(op, sample, dtype, True, rng)
            except Exception:  # (a sample that tests an error; an op without forward AD)
                nodes = []
            compared += _compare_nodes(nodes, rng, "saved values with tangents")
        # Saved values without: a graph made outside any level; only the gradient has one.
        try:
            nodes = _graph(op, sample, dtype, False, rng)
        except Exception:
            nodes = []
        with fwAD.dual_level():
            compared += _compare_nodes(nodes, rng, "saved values without tangents")
    if compared == 0:
        pytest.skip("no node of an op with tangent forms")


def test_a_wrong_tangent_form_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparison above fails for a tangent form that leaves out a term of the product rule,
    # or sums the terms in another order than mm's JVP (a NaN + NaN keeps the first one's bits).
    from retrograd.ops.linalg import mm

    rule = mm.edge_rules[1][0]
    rng = np.random.default_rng(0)
    with fwAD.dual_level():
        a = fwAD.make_dual(rg.tensor(rng.standard_normal((3, 4)), requires_grad=True), rg.tensor(rng.standard_normal((3, 4))))
        b = fwAD.make_dual(rg.tensor(rng.standard_normal((4, 2)), requires_grad=True), rg.tensor(rng.standard_normal((4, 2))))
        node = a.mm(b).grad_fn
        grad = _gradient(node, rng, True)
        open_path, shut_path, taken = _apply_both(node, grad)
        assert taken == 2 and open_path == shut_path
        wrong = [
            lambda tangents, grad, self: rule.on_arrays(tangents[0], self),  # (the saved input's term left out)
            lambda tangents, grad, self: np.add(rule.on_arrays(tangents[0], self), rule.on_arrays(grad, tangents[1])),
        ]
        # (a NaN in both terms at one place, of opposite signs, for the order to show)
        nan_grad = fwAD.make_dual(rg.tensor(np.full((3, 2), np.nan)), rg.tensor(-np.full((3, 2), np.nan)))
        a_nan = rg.tensor(-np.full((3, 4), np.nan))
        for form in wrong:
            monkeypatch.setattr(rule, "tangent_on_arrays", form)
            differs = []
            for g in (grad, nan_grad):
                open_path, shut_path, _ = _apply_both(node, g)
                differs.append(open_path != shut_path)
            a_dual = fwAD.make_dual(rg.tensor(np.ones((3, 4)), requires_grad=True), a_nan)
            nan_node = a_dual.mm(b).grad_fn
            open_path, shut_path, _ = _apply_both(nan_node, nan_grad)
            differs.append(open_path != shut_path)
            assert any(differs), form


def test_the_rules_stay_in_ops_where_a_graph_or_another_tangent_dtype_is_wanted(monkeypatch: pytest.MonkeyPatch,
                                                                                torch: Any) -> None:
    from retrograd.ops import op as op_module

    calls: list[str] = []
    real = op_module.rule_with_tangents

    def watched(rule: Any, level: Any, args: Any, tensors: Any) -> Any:
        out = real(rule, level, args, tensors)
        calls.append(type(out).__name__)
        return out

    def run(tangent_dtype: Any, create_graph: bool) -> Any:
        rng = np.random.default_rng(1)
        x = rg.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        w = rg.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
        with fwAD.dual_level():
            wd = fwAD.make_dual(w, rg.tensor(rng.standard_normal((4, 3))).to(tangent_dtype))
            loss = rg.relu(x * wd).exp().sum()
            (g,) = rg.autograd.grad(loss, wd, create_graph=create_graph)
            return g, fwAD.unpack_dual(g).tangent

    from retrograd.ops.elementwise import exp, mul, relu
    from retrograd.ops.reduce import sum_all

    for op in (mul, relu, exp, sum_all):  # (each generated apply reads the name from its own namespace)
        monkeypatch.setitem(op.node_cls.apply.__globals__, "rule_with_tangents", watched)
    # Grad mode on (create_graph): the rules record, in ops; rule_with_tangents is not reached.
    g, t = run(rg.float32, True)
    assert calls == [] and g.grad_fn is not None and t.grad_fn is not None
    # A float64 tangent of a float32 primal: the rules' ops keep its dtype (PyTorch's), so the
    # arrays are not used (the rule runs in ops from rule_with_tangents).
    g64, t64 = run(rg.float64, False)
    assert calls and t64.dtype == rg.float64 and g64.dtype == rg.float32
    calls.clear()
    g32, t32 = run(rg.float32, False)
    assert calls and t32.dtype == rg.float32
    np.testing.assert_allclose(t64.numpy(), t32.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t.detach().numpy(), t32.numpy(), rtol=1e-6, atol=1e-6)
    # The same values as PyTorch's forward over reverse.
    rng = np.random.default_rng(1)
    tx = torch.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    tw = torch.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    tfw = torch.autograd.forward_ad
    with tfw.dual_level():
        twd = tfw.make_dual(tw, torch.tensor(rng.standard_normal((4, 3))).to(torch.float32))
        (tg,) = torch.autograd.grad(torch.relu(tx * twd).exp().sum(), twd)
        np.testing.assert_allclose(t32.numpy(), tfw.unpack_dual(tg).tangent.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g32.numpy(), tfw.unpack_dual(tg).primal.detach().numpy(), rtol=1e-6)


def test_inference_mode_keeps_the_rules_in_ops() -> None:
    # Inference mode: the gradients are inference tensors, as the ops make them.
    x = rg.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    w = rg.tensor([[0.5, 1.0], [-1.0, 2.0]], requires_grad=True)
    node = x.mm(w).grad_fn
    with fwAD.dual_level(), rg.inference_mode():
        grad = fwAD.make_dual(rg.ones(2, 2), rg.ones(2, 2))
        open_path, shut_path, taken = _apply_both(node, grad)
    assert taken == 0 and open_path == shut_path


def test_the_mlp_forward_over_reverse_runs_its_rules_on_arrays(torch: Any) -> None:
    # The benchmark's MLP (benchmarks/workloads.py, ``mlp_hvp_forward_lib``): every node with
    # tangent forms takes them, and H v is PyTorch's.
    rs = np.random.RandomState(0)
    sizes = (6, 7, 5, 3)
    arrays = [rs.randn(*shape).astype(np.float32) for i, o in zip(sizes[:-1], sizes[1:]) for shape in ((i, o), (o,))]
    vectors = [rs.randn(*a.shape).astype(np.float32) for a in arrays]
    x, y = rs.randn(9, sizes[0]).astype(np.float32), rs.randint(0, sizes[-1], 9)

    def hvp(lib: Any, watch: bool) -> list[np.ndarray]:
        fwad = lib.autograd.forward_ad
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        with fwad.dual_level():
            duals = [fwad.make_dual(p, lib.tensor(v)) for p, v in zip(params, vectors)]
            h = lib.tensor(x)
            for i in range(0, len(duals), 2):
                h = h @ duals[i] + duals[i + 1]
                if i + 2 < len(duals):
                    h = lib.nn.functional.relu(h)
            loss = lib.nn.functional.cross_entropy(h, lib.tensor(y))
            if watch:
                kinds = {type(n).__name__ for n in graph_nodes([loss]) if _tangent_rules(n)}
                assert {"MmBackward0", "ReluBackward0", "LogSoftmaxBackward0"} <= kinds
                for node in graph_nodes([loss]):
                    if _tangent_rules(node):
                        g = _gradient(node, np.random.default_rng(0), True)
                        open_path, shut_path, taken = _apply_both(node, g)
                        assert open_path == shut_path, type(node).__name__
                        assert taken == sum(nxt is not None for nxt, _ in node.next_functions), type(node).__name__
            grads = lib.autograd.grad(loss, duals)
            return [fwad.unpack_dual(g).tangent.detach().numpy() for g in grads]

    for a, b in zip(hvp(rg, True), hvp(torch, False)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_loss_gradient_with_a_tangent_keeps_it(torch: Any) -> None:
    # ``_plain_arrays`` lets the loss's rules (nll_loss, log_softmax) compute on arrays inside a
    # level only while no argument has a tangent: a dual output gradient still gets its JVP.
    rs = np.random.RandomState(0)
    logits, target = rs.randn(4, 3), rs.randint(0, 3, 4)

    def tangents(lib: Any) -> list[np.ndarray]:
        fwad = lib.autograd.forward_ad
        z = lib.tensor(logits, requires_grad=True)
        out = []
        with fwad.dual_level():
            loss = lib.nn.functional.cross_entropy(z, lib.tensor(target))
            for tangent in (lib.tensor(0.5, dtype=lib.float64), None):
                grad_output = lib.ones((), dtype=lib.float64)
                if tangent is not None:
                    grad_output = fwad.make_dual(grad_output, tangent)
                (g,) = lib.autograd.grad(loss, z, grad_output, retain_graph=True)
                t = fwad.unpack_dual(g).tangent
                out.append(None if t is None else t.numpy())
        return out

    mine, ref = tangents(rg), tangents(torch)
    assert (mine[1] is None) == (ref[1] is None)
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-12)
