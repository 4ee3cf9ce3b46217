"""Every public op (``retrograd.*`` functions, ``nn.functional``, ``linalg``) has an op database entry,
and every differentiable ``Op`` of the op table records its node when the database runs."""

from __future__ import annotations

import functools
import warnings
import zlib
from typing import Any

import numpy as np

import retrograd as rg
import retrograd._functions as functions
import retrograd.linalg as linalg
import retrograd.nn.functional as F
from opdb import all_ops, to_lib

# Public names that are not differentiable ops, each with where it is tested instead.
NOT_OPS = {
    "allclose", "equal", "isclose", "is_tensor", "is_floating_point", "numel",  # predicates: tests/test_tensor.py
    "positive", "not_equal",  # the tensor itself / ne's alias: tests/test_tensor_methods_more.py
    "broadcast_shapes",  # shape arithmetic, no tensor: tests/ops/test_shape_errors.py
    "linalg.LinAlgError",  # an exception class
    # random: distributions, masks and seeding are tested in tests/ops/test_nn_functional_errors.py
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "gumbel_softmax", "rrelu_",
    # aliases and in-place forms of covered functions
    "native_channel_shuffle", "upsample", "upsample_bilinear", "upsample_nearest", "celu_", "selu_",
    "threshold_",
    "matrix_rank",  # removed from PyTorch: raises its RuntimeError (tests/ops/test_linalg_extra.py)
    "linear_cross_entropy",  # linear then cross_entropy, both in the database: tests/nn/test_linear_cross_entropy.py
}


def public_ops() -> set[str]:
    # (the op table's function forms are made on first lookup, so not in the module's __all__)
    names = set(functions.__all__) | set(functions._VARIANT_FUNCTIONS) | set(F.__all__)
    names |= {"linalg." + n for n in linalg.__all__}
    return names


def test_every_public_op_is_in_the_database() -> None:
    covered: set[str] = set()
    for op in all_ops():
        covered.add(op.name)
        covered.update(op.covers)
    missing = sorted(
        n for n in public_ops() - NOT_OPS if n not in covered and n.split(".")[-1] not in covered
    )
    assert missing == []


def test_exemptions_are_real_public_names() -> None:
    assert NOT_OPS <= public_ops()
    assert callable(rg.allclose)


# -- every differentiable Op of the op table records a node when the database runs --------------

# Differentiable ops (by node class name) that no database sample records, each with the reason.
NODE_EXEMPT = {
    # In-place asinh_/acosh_/atanh_: PyTorch records the node but its backward is not implemented
    # (derivatives.yaml: not_implemented("inplace version of ...")), so there is nothing to gradcheck.
    "AsinhBackward1": "backward not implemented, as in PyTorch",
    "AcoshBackward1": "backward not implemented, as in PyTorch",
    "AtanhBackward1": "backward not implemented, as in PyTorch",
    # scatter(..., reduce=...): PyTorch records a node whose backward raises
    # (tests/ops/test_shape_errors.py checks the error).
    "NotImplemented": "backward not implemented, as in PyTorch",
    # unique / unique(dim=) / unique_consecutive: PyTorch records the node, its backward raises
    # NotImplementedError (tests/ops/test_reduce_more.py checks the error).
    "Unique2Backward0": "backward not implemented, as in PyTorch",
    "UniqueDimBackward0": "backward not implemented, as in PyTorch",
    "UniqueConsecutiveBackward0": "backward not implemented, as in PyTorch",
    # scatter_reduce/index_reduce(prod) with >1 zeros at one position: the second derivative's
    # node, which raises (tests/ops/test_reduce_more.py checks it).
    "Error": "raises when reached, as in PyTorch",
    # geqrf: PyTorch records GeqrfBackward0, whose backward raises (tests/ops/test_householder.py).
    "GeqrfBackward0": "backward not implemented, as in PyTorch",
}
# The samplers' nodes (ops/sampling.py): a random draw is no gradcheck input; their node names and
# zero gradients are checked against PyTorch in tests/test_random_stream.py.
NODE_EXEMPT.update(dict.fromkeys(
    ["NormalBackward0", "NormalBackward1", "NormalBackward2", "NormalBackward3", "UniformBackward0",
     "RandomBackward0", "RandomBackward1", "RandomBackward2", "ExponentialBackward0", "GeometricBackward0",
     "LogNormalBackward0", "CauchyBackward0", "BernoulliBackward0", "BernoulliBackward1", "BernoulliBackward2",
     "PoissonBackward0"], "a sampler: node and zero gradient checked in tests/test_random_stream.py"))
# Complex ops and the FFTs (the database's samples are real): each is gradchecked on complex inputs
# (real and imaginary perturbations) and compared with PyTorch in tests/test_complex.py, tests/test_fft.py.
NODE_EXEMPT.update(dict.fromkeys(
    ["ComplexBackward0", "PolarBackward0", "ConjBackward0", "ConjPhysicalBackward0", "ViewAsRealBackward0",
     "ViewAsComplexBackward0", "FftC2CBackward0", "FftR2CBackward0", "FftC2RBackward0"],
    "complex: gradchecked and checked against PyTorch in tests/test_complex.py and tests/test_fft.py"))


def differentiable_op_nodes() -> dict[str, str]:
    """Node class name -> op name for every differentiable ``Op`` of the op table.

    The one place these tests know the op table's internals: every ``retrograd.ops`` module is
    walked for ``Op`` instances (module attributes, or one level inside a tuple, list or dict)."""
    import importlib
    import pkgutil

    import retrograd.ops as ops_package
    from retrograd.ops.op import Op

    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(ops_package.__path__):
        module = importlib.import_module(f"{ops_package.__name__}.{info.name}")
        for value in vars(module).values():
            inner = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
            for candidate in (value, *inner):
                if isinstance(candidate, Op) and candidate.differentiable:
                    found[candidate.node_name] = candidate.name
    return found


def _node_names(roots: list[Any]) -> set[str]:
    """The class names of every node reachable from ``roots`` (iterative: graphs can be deep)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return names


@functools.cache  # one walk of the database serves both tests below
def recorded_nodes() -> frozenset[str]:
    """Node class names recorded by the database's gradcheck/gradgradcheck cases: the forward
    graph, and (with cotangents that require grad, as gradgradcheck's) the graph of the gradients."""
    names: set[str] = set()
    for op in all_ops():
        if not op.gradcheck:
            continue
        for sample in op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))):
            args, kwargs, leaves = to_lib(rg, sample)
            if not leaves:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = op.fn(rg, *args, **kwargs)
                outs = [o for o in (result if isinstance(result, (tuple, list)) else (result,)) if o.requires_grad]
                names |= _node_names([o.grad_fn for o in outs])
                if not outs or not op.gradgradcheck:
                    continue
                cotangents = [rg.ones_like(o).requires_grad_() for o in outs]
                grads = rg.autograd.grad(outs, leaves, cotangents, create_graph=True, allow_unused=True)
                names |= _node_names([g.grad_fn for g in grads if g is not None])
    return frozenset(names)


def test_every_differentiable_op_records_a_node_in_the_database_run() -> None:
    table = differentiable_op_nodes()
    assert len(table) > 200  # the walk found the op table
    missing = sorted(f"{node} ({table[node]})" for node in set(table) - recorded_nodes() - set(NODE_EXEMPT))
    assert missing == []


def test_node_exemptions_are_real_and_still_needed() -> None:
    table = differentiable_op_nodes()
    assert set(NODE_EXEMPT) <= set(table)
    assert set(NODE_EXEMPT) & recorded_nodes() == set()


# -- the database's own structure -------------------------------------------------------------


def test_entries_are_keyed_by_public_op_and_variant() -> None:
    entries = all_ops()
    keys = [(op.op, op.variant_test_name) for op in entries]
    assert len(keys) == len(set(keys))
    tensor_names = set(dir(rg.Tensor))
    unknown = sorted({op.op for op in entries} - public_ops() - tensor_names)
    assert unknown == []


def test_noncontiguous_samples_give_the_op_noncontiguous_leaves() -> None:
    count = 0
    for op in all_ops():
        for sample in op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))):
            if not sample.noncontiguous:
                continue
            count += 1
            args, _, _ = to_lib(rg, sample)
            tensors = [a for a in args if isinstance(a, rg.Tensor)]
            assert any(not t.is_contiguous() for t in tensors), op.name
            assert all(t.is_leaf for t in tensors), op.name
    assert count >= 50
