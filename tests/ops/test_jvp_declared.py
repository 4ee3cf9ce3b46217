"""Every op entry declares its JVP (``jvp=``) beside its VJP rules, and the declaration is checked
when the entry is made: a new differentiable op cannot silently take a derivation it never asked
for (issue #13). Whether each declared JVP is right is tests/ops/test_opdb_forward_ad.py's job."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.ops.forward import jvp_kind
from retrograd.ops.op import Op

# Run in a fresh interpreter: the table as the library defines it, without the throwaway ops that
# tests (these included) make.
_SURVEY = """
import gc, importlib, json, pkgutil
import retrograd
from retrograd.ops.declaration import JVP_DERIVATIONS
from retrograd.ops.forward import jvp_kind
from retrograd.ops.op import Op
for module in pkgutil.walk_packages(retrograd.__path__, "retrograd."):  # the lazily loaded topics too
    try:
        importlib.import_module(module.name)
    except ImportError:  # an optional extra that is not installed
        pass
ops = [o for o in gc.get_objects() if type(o) is Op]
bad = [f"{o.name} ({o.node_name}): jvp={o.jvp!r}" for o in ops
       if (o.jvp in JVP_DERIVATIONS or callable(o.jvp)) != o.differentiable
       or jvp_kind(o) != (None if not o.differentiable else o.jvp if isinstance(o.jvp, str) else "explicit")]
print(json.dumps({"ops": len(ops), "differentiable": sum(o.differentiable for o in ops), "bad": sorted(set(bad))}))
"""


def test_every_differentiable_op_declares_its_jvp() -> None:
    survey = subprocess.run([sys.executable, "-c", _SURVEY], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    found = json.loads(survey.stdout.splitlines()[-1])
    assert found["ops"] > 400 and found["differentiable"] > 350
    assert not found["bad"], f"differentiable ops without a valid jvp= (or non-differentiable ones with one): {found['bad']}"


def test_the_softmax_family_carries_its_own_rules() -> None:
    from retrograd.ops import nn

    for op in (nn.softmax, nn.log_softmax, nn.softmax_backward, nn.log_softmax_backward):
        assert callable(op.jvp) and jvp_kind(op) == "explicit"


def _identity_grad(grad):  # type: ignore[no-untyped-def]
    return grad


def test_an_unknown_derivation_is_refused_when_the_entry_is_made() -> None:
    with pytest.raises(ValueError, match=r"Op 'f': jvp='linaer' is not one of 'affine_multilinear', "
                                         r"'elementwise', 'linear', 'multilinear', 'transpose', 'unsupported'"):
        Op("f", np.negative, grads=(_identity_grad,), jvp="linaer")
    with pytest.raises(TypeError, match="Op 'f': jvp must be one of .* or a rule function, got int"):
        Op("f", np.negative, grads=(_identity_grad,), jvp=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Op 'f': jvp='linear' declared, and the op is not differentiable"):
        Op("f", np.negative, jvp="linear")


def test_an_op_without_a_declared_jvp_refuses_forward_ad() -> None:
    """Never a derivation it did not ask for: PyTorch's not-implemented error instead."""
    undeclared = Op("my_neg", np.negative, grads=(lambda grad: -grad,))
    declared = Op("my_neg", np.negative, grads=(lambda grad: -grad,), jvp="linear")
    x = rg.randn(3, dtype=rg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, rg.ones(3, dtype=rg.float64))
        out = declared(dual)
        np.testing.assert_array_equal(fwAD.unpack_dual(out).tangent.numpy(), -np.ones(3))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with my_neg that does not support"):
            undeclared(dual)
    assert rg.equal(undeclared(x), -x)  # (outside a level it is an ordinary op)


def test_unsupported_refuses_only_where_a_tangent_arrives() -> None:
    refusing = Op("my_op", np.negative, grads=(lambda grad: -grad,), jvp="unsupported")
    x = rg.randn(3, dtype=rg.float64)
    with fwAD.dual_level():
        assert rg.equal(refusing(x), -x)  # no tangent in: nothing to refuse
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with my_op that does not support"):
            refusing(fwAD.make_dual(x, rg.ones(3, dtype=rg.float64)))
