"""Every public op (``retrograd.*`` functions, ``nn.functional``, ``linalg``) has an op database entry."""

from __future__ import annotations

import retrograd as rg
import retrograd._functions as functions
import retrograd.linalg as linalg
import retrograd.nn.functional as F
from opdb import all_ops

# Public names that are not differentiable ops, each with where it is tested instead.
NOT_OPS = {
    "allclose", "equal", "isclose", "is_tensor", "is_floating_point", "numel",  # predicates: tests/test_tensor.py
    "broadcast_shapes",  # shape arithmetic, no tensor: tests/ops/test_shape_errors.py
    "linalg.LinAlgError",  # an exception class
    # random: distributions, masks and seeding are tested in tests/ops/test_nn_functional_errors.py
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "gumbel_softmax", "rrelu_",
    # aliases and in-place forms of covered functions
    "native_channel_shuffle", "upsample", "upsample_bilinear", "upsample_nearest", "celu_", "selu_",
    "threshold_",
}


def public_ops() -> set[str]:
    names = set(functions.__all__) | set(F.__all__)
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
