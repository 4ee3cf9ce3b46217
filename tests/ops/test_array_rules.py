"""Backward rules on arrays (``ops/op.py``, ``with_array_rule``): when no graph and no tangent is
wanted, the generated ``apply`` of an op whose rules carry an array form runs that form on the
gradient's and saved tensors' arrays. On every op-database sample, in float32 and float64, each
node of such an op must give the very same gradients (bits, dtype, shape, strides) with the
array path as with its tensor rules; and the second backward of the MLP Hessian-vector product
(issue #8), which is what the path is for, must take it on every node it can."""

from __future__ import annotations

import linecache
import warnings
import zlib
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from opdb import OpInfo, Sample, gradcheck_cases, graph_nodes, to_lib
from retrograd.autograd.graph import Node
from retrograd.ops import op as op_module
from retrograd.ops.op import OpNode, with_array_rule

CASES = gradcheck_cases()
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


def _has_array_rules(node: Any) -> bool:
    return isinstance(node, OpNode) and any(hasattr(rule, "on_arrays") for rule, _ in node._op.edge_rules)


def _first_gradients(outputs: list[Any], leaves: list[Any]) -> list[Any]:
    """The gradients of the outputs w.r.t. the leaves, for output gradients that require grad
    themselves, recorded (create_graph): the nodes of a second backward, each rule's gradient
    input tracked; none where the sample has no first-order graph to differentiate."""
    tracked = [o for o in outputs if isinstance(o, rg.Tensor) and o.requires_grad and o.dtype.is_floating_point]
    if not tracked:
        return []
    rng = np.random.default_rng(0)
    weights = [rg.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype), requires_grad=True)
               for o in tracked]
    try:
        return [g for g in rg.autograd.grad(tracked, leaves, weights, create_graph=True, allow_unused=True)
                if g is not None]
    except RuntimeError:  # (an op with no second-order rule: PyTorch's error)
        return []


def _gradient(node: Node, rng: np.random.Generator) -> rg.Tensor:
    """A gradient for the node's output, with a -0.0, an inf and a NaN among normal values where
    it has room (a rule must pass them as the tensor rule does)."""
    values = rng.standard_normal(node._shape).astype(node._dtype)
    flat = values.reshape(-1)
    for i, special in enumerate((-0.0, np.inf, np.nan)):
        if flat.size > 3 * (i + 1):
            flat[3 * (i + 1)] = special
    return rg.tensor(values)


def _describe(grads: tuple[Any, ...]) -> list[Any]:
    return [None if g is None else (g._data.view(BITS[g._data.itemsize]).tolist(), str(g._data.dtype), g._data.shape,
                                    g._data.strides, g.requires_grad, g.grad_fn)
            for g in grads]


def _apply_both(node: Node, grad: rg.Tensor) -> tuple[list[Any], list[Any], int]:
    """The node's gradients by its generated ``apply`` as it runs (array path open) and with the
    array path shut (every rule in ops), and how many rules ran on arrays."""
    namespace = type(node).apply.__globals__
    taken = [0]
    wrap = namespace["_wrap"]

    def counting_wrap(array: np.ndarray) -> rg.Tensor:
        taken[0] += 1
        return wrap(array)  # type: ignore[no-any-return]

    namespace["_wrap"] = counting_wrap
    try:  # (as the engine runs a node: grad mode off, NumPy's floating-point warnings quiet)
        with rg.no_grad(), np.errstate(all="ignore"):
            open_path = _describe(node.apply([grad]))
        namespace["ARRAY_RULE_DTYPES"] = frozenset()
        with rg.no_grad(), np.errstate(all="ignore"):
            shut_path = _describe(node.apply([grad]))
    finally:
        namespace["_wrap"] = wrap
        namespace["ARRAY_RULE_DTYPES"] = op_module.ARRAY_RULE_DTYPES
    return open_path, shut_path, taken[0]


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_array_rules_give_the_tensor_rules_bits(op: OpInfo, sample: Sample) -> None:
    compared = 0
    for dtype in ("float32", "float64"):
        args, kwargs, leaves = to_lib(rg, sample, dtype)
        if not leaves:
            pytest.skip("no differentiable input")
        rg.manual_seed(0)
        try:
            out = op.fn(rg, *args, **kwargs)
        except Exception:  # (a sample that tests an error)
            continue
        outputs = list(out) if isinstance(out, (tuple, list)) else [out]
        outputs += _first_gradients(outputs, leaves)  # (their graph: the rules' own ops' nodes)
        rng = np.random.default_rng(zlib.crc32(f"{op.name}{dtype}".encode()))
        for node in graph_nodes(outputs):
            if not _has_array_rules(node) or node._shape is None:
                continue
            open_path, shut_path, _ = _apply_both(node, _gradient(node, rng))
            assert open_path == shut_path, type(node).__name__
            compared += 1
    if compared == 0:
        pytest.skip("no node of an op with array rules")


def _mlp_hvp_dot(lib: Any, params: list[Any], vector: list[Any], x: Any, y: Any) -> Any:
    """The benchmark's MLP loss (benchmarks/workloads.py): its gradient with create_graph, dotted
    with the vector; the second backward of the Hessian-vector product runs from there."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = lib.nn.functional.relu(h)
    grads = lib.autograd.grad(lib.nn.functional.cross_entropy(h, y), params, create_graph=True)
    return sum((g * v).sum() for g, v in zip(grads, vector))


def test_the_mlp_hvp_second_backward_runs_its_rules_on_arrays(torch: Any) -> None:
    rs = np.random.RandomState(0)
    sizes = (6, 7, 5, 3)
    arrays = [rs.randn(*shape).astype(np.float32) for i, o in zip(sizes[:-1], sizes[1:]) for shape in ((i, o), (o,))]
    vectors = [rs.randn(*a.shape).astype(np.float32) for a in arrays]
    x, y = rs.randn(9, sizes[0]).astype(np.float32), rs.randint(0, sizes[-1], 9)
    params = [rg.tensor(a, requires_grad=True) for a in arrays]
    dot = _mlp_hvp_dot(rg, params, [rg.tensor(v) for v in vectors], rg.tensor(x), rg.tensor(y))
    kinds = {type(n).__name__ for n in graph_nodes([dot]) if _has_array_rules(n)}
    assert {"MmBackward0", "MulBackward0", "TBackward0", "SumBackward0", "SumBackward1", "ViewBackward0",
            "ReluBackward0", "ThresholdBackwardBackward0", "LogSoftmaxBackwardDataBackward0"} <= kinds
    # Every such node of the graph takes the array path in a plain backward...
    rng = np.random.default_rng(0)
    for node in graph_nodes([dot]):
        if _has_array_rules(node):
            _, _, taken = _apply_both(node, _gradient(node, rng))
            assert taken == sum(nxt is not None for nxt, _ in node.next_functions), type(node).__name__
    # ...and the product is PyTorch's.
    ours = rg.autograd.grad(dot, params)
    tp = [torch.tensor(a, requires_grad=True) for a in arrays]
    ref = torch.autograd.grad(_mlp_hvp_dot(torch, tp, [torch.tensor(v) for v in vectors], torch.tensor(x),
                                           torch.tensor(y)), tp)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_rules_stay_in_ops_where_a_graph_or_a_tangent_is_wanted() -> None:
    # create_graph: the gradients are recorded (the array path would give them no grad_fn).
    x = rg.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    w = rg.tensor([[0.5, 1.0], [-1.0, 2.0]], requires_grad=True)
    (gx,) = rg.autograd.grad(rg.relu(x.mm(w)).sum(), x, create_graph=True)
    assert gx.grad_fn is not None and gx.grad_fn.name() == "MmBackward0"
    # Forward AD in a backward (forward over reverse): the gradients carry tangents.
    with fwAD.dual_level():
        wd = fwAD.make_dual(w.detach(), rg.ones(2, 2))
        xd = x.detach().requires_grad_()
        (gx,) = rg.autograd.grad(xd.mm(wd).sum(), xd)
        assert fwAD.unpack_dual(gx).tangent is not None
    # Inference mode: the gradients are inference tensors, as the ops make them.
    with rg.inference_mode():
        y = x.mm(w)
    assert y.is_inference()
    (gx,) = rg.autograd.grad(x.mm(w).sum(), x)
    np.testing.assert_array_equal(gx.numpy(), np.ones((2, 2)) @ w.detach().numpy().T)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_rules_on_arrays_keep_nonfinite_and_signed_zero_bits(dtype: str) -> None:
    # ReluBackward0 and ThresholdBackwardBackward0 with inf, NaN and -0.0 in the forward values
    # and the gradients (PyTorch's select: a NaN output passes its gradient).
    specials = np.array([-np.inf, -1.0, -0.0, 0.0, 0.5, np.inf, np.nan, -np.nan, 2.0], dtype)
    x = rg.tensor(np.add.outer(specials, np.zeros(9, dtype)), requires_grad=True)
    w = rg.tensor(np.ones((9, 9), dtype), requires_grad=True)
    (gx,) = rg.autograd.grad(rg.relu(x), x, w, create_graph=True)  # (a tracked gradient into relu's rule)
    rng = np.random.default_rng(0)
    for node in graph_nodes([gx]):
        if type(node).__name__ in ("ReluBackward0", "ThresholdBackwardBackward0"):
            grad = rg.tensor(np.add.outer(np.zeros(9, dtype), specials))
            open_path, shut_path, taken = _apply_both(node, grad)
            assert taken >= 1 and open_path == shut_path, type(node).__name__
            open_path, shut_path, taken = _apply_both(node, _gradient(node, rng))
            assert taken >= 1 and open_path == shut_path, type(node).__name__


def test_a_warning_made_an_error_sends_the_rule_back_to_its_ops() -> None:
    # Outside the engine's quiet error state, with warnings raised as errors, an overflow in an
    # array rule falls back to the tensor rule, whose op path computes it quietly (inf, as PyTorch).
    x = rg.tensor([1e38, 2.0], dtype=rg.float32, requires_grad=True)
    node = (x * rg.tensor([10.0, 3.0], dtype=rg.float32)).grad_fn
    with warnings.catch_warnings(), np.errstate(all="warn"), rg.no_grad():
        warnings.simplefilter("error")
        (g, _) = node.apply([rg.tensor([1e38, 1.0], dtype=rg.float32)])
    assert g.dtype == rg.float32 and g.tolist() == [float("inf"), 3.0]


def test_two_entries_of_one_name_keep_their_own_generated_source() -> None:
    # ops/linalg.py's addmm (beta, alpha) and ops/nn.py's (linear's): both AddmmBackward0 of op
    # 'addmm', with different rules; a traceback through either shows its own lines.
    from retrograd.ops import linalg, nn

    files = []
    for op in (linalg.addmm, nn.addmm):
        code = op.node_cls.apply.__code__
        files.append(code.co_filename)
        assert "".join(linecache.getlines(code.co_filename)) == op.backward_source
    assert files[0] != files[1]


def test_an_array_rule_must_take_the_rules_parameters() -> None:
    with pytest.raises(TypeError, match=r"array rule parameters \('grad', 'self'\) differ from the rule's "
                                        r"\('grad', 'other'\)"):
        with_array_rule(lambda grad, other: grad * other, lambda grad, self: grad * self)
