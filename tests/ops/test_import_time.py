"""``import retrograd`` makes no node class, no plan and no call path: the operators and hot
methods (the ops' own call paths) are set on ``Tensor`` at their first lookup, and then behave,
and cost per call, as when they were bound at import (docs/architecture.md, "Public forms")."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip
from retrograd.ops import variants
from retrograd.ops.op import Op

SRC = Path(__file__).resolve().parents[2] / "src"


def _fresh(code: str) -> object:
    """Run ``code`` in a fresh interpreter and return what it prints as JSON."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(SRC), "PATH": ""})
    return json.loads(result.stdout)


def test_import_makes_no_node_class_and_the_operators_wait_for_their_first_lookup() -> None:
    before, classes, after = _fresh("""
import gc, json
import retrograd as rg
from retrograd.autograd.graph import Node
from retrograd.ops.op import Op
T = rg.Tensor
names = ("__add__", "__rmul__", "__neg__", "__abs__", "__lt__", "tanh", "exp")
before = [type(vars(T)[n]).__name__ for n in names]
ops = [o for o in gc.get_objects() if type(o) is Op]
classes = [sorted(o.name for o in ops if "node_cls" in o.__dict__ or "plan" in o.__dict__),
           sorted(c.__name__ for c in Node.__subclasses__() if c.__name__.endswith(("Backward0", "Backward1")))]
x = rg.tensor([1.0, 2.0], requires_grad=True)
y = (-(x + 1) * 2).tanh().exp() < 3
after = [type(vars(T)[n]).__name__ for n in names]
print(json.dumps([before, classes, after]))
""")
    assert before == ["_Method"] * 7
    assert classes == [[], []]
    # Made by their first use: the operators used, and the reflected ones untouched.
    assert after == ["function", "_Method", "function", "_Method", "function", "function", "function"]


def test_an_operator_made_on_first_lookup_is_the_ops_call_path() -> None:
    from retrograd.ops import elementwise

    x = rg.tensor([0.5, -1.0], requires_grad=True)
    assert rg.Tensor.tanh is elementwise.tanh.unary and rg.Tensor.__neg__ is elementwise.neg.unary
    add, mul, tanh = rg.Tensor.__add__, rg.Tensor.__mul__, rg.Tensor.tanh
    assert type(vars(rg.Tensor)["__add__"]) is types.FunctionType and vars(rg.Tensor)["__add__"] is add
    assert rg.Tensor.__add__ is add and rg.Tensor.__mul__ is mul and rg.Tensor.tanh is tanh
    assert type(tanh(mul(add(x, 1.0), x)).grad_fn).__name__ == "TanhBackward0"


# Each expression is the first lookup of its operator or method in the fresh interpreter, each a
# different way: reflected, through a subclass (Parameter), on the class, with a bad operand.
_FIRST_USES = (
    "x >> 'a'", "x - 'a'", "x < 'a'", "2.0 + x", "2.0 - x", "3.0 * x", "x / w", "-x", "abs(x)", "x <= 0.5",
    "x > w", "x >= w", "P(x.detach().clone()) * w", "T.__add__(x, w)", "x.sigmoid()", "T.exp(x)",
    "P(x.detach().clone()).relu()", "x.sqrt()", "x.sign()", "x.reciprocal()", "x.cos() - x.sin()",
    "x.log()", "x.tanh()", "x.neg()", "x.abs()",
)

_RUN_ALL = """
import json
import LIB as lib
T, P = lib.Tensor, lib.nn.Parameter
out = []
for expr in EXPRS:
    x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.0, -2.0, 2.0], dtype=lib.float64)
    try:
        y = eval(expr)
    except TypeError as e:
        out.append(["TypeError", str(e)])
        continue
    row = [y.tolist(), str(y.dtype), type(y.grad_fn).__name__ if y.grad_fn is not None else None]
    if y.requires_grad:
        y.sum().backward()
        row.append(None if x.grad is None else x.grad.tolist())
    out.append(row)
print(json.dumps(out))
"""


def test_first_use_of_every_operator_and_hot_method_matches_pytorch() -> None:
    torch_or_skip()
    code = _RUN_ALL.replace("EXPRS", repr(_FIRST_USES))
    got = _fresh(code.replace("LIB", "retrograd"))
    want = json.loads(subprocess.run([sys.executable, "-c", code.replace("LIB", "torch")], capture_output=True,
                                     text=True, check=True).stdout)
    for expr, g, w in zip(_FIRST_USES, got, want, strict=True):  # type: ignore[call-overload]
        assert len(g) == len(w), expr
        if g[0] == "TypeError":  # the operator said NotImplemented, and Python's message follows
            assert g == w, expr
            continue
        np.testing.assert_allclose(g[0], w[0], rtol=1e-14, err_msg=expr)  # (values: to the last bits)
        assert g[1:3] == w[1:3], expr  # dtype, node name
        if len(g) > 3 and w[3] is not None:
            np.testing.assert_allclose(g[3], w[3], rtol=1e-14, err_msg=expr)  # the gradient
        elif len(g) > 3:
            assert g[3] is None, expr  # (a Parameter made from x: x itself gets no gradient)


def test_threads_racing_for_a_fresh_operator_get_one_function() -> None:
    class Fresh:
        pass

    op = Op("racer_neg", np.negative, node="RacerNegBackward0", variants=("method",), operators=("__neg__",),
            hot=True, grads=(lambda grad: -grad,))
    variants.bind_methods(Fresh, [op])
    assert type(vars(Fresh)["__neg__"]).__name__ == "_Method" and "node_cls" not in vars(op)
    start = threading.Barrier(8)
    got: list[object] = []

    def look_up() -> None:
        start.wait()
        got.append(Fresh.__neg__)

    threads = [threading.Thread(target=look_up) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g is op.unary for g in got) and vars(Fresh)["__neg__"] is op.unary
    assert Fresh.racer_neg is op.unary


def test_bind_all_makes_the_operators_too() -> None:
    variants.bind_all()
    for name in ("__add__", "__radd__", "__lshift__", "__ge__", "__abs__", "relu"):
        assert type(vars(rg.Tensor)[name]) is types.FunctionType, name


def test_import_brings_no_dataclasses_module() -> None:
    loaded = _fresh("""
import json, sys
import retrograd
print(json.dumps(sorted(m for m in ("dataclasses", "copy") if m in sys.modules)))
""")
    assert loaded == []


def test_declaration_behaves_as_the_frozen_dataclass_it_was() -> None:
    import dataclasses
    import inspect

    from retrograd.ops.declaration import _FIELDS, Declaration

    # The oracle: a frozen dataclass of the same annotated fields and defaults.
    annotated = list(Declaration.__annotations__)
    assert annotated == list(_FIELDS)
    parameters = list(inspect.signature(Declaration.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == annotated
    for p in parameters[2:]:
        assert p.default == getattr(Declaration, p.name), p.name  # (the class attribute is the default)
    Frozen = dataclasses.make_dataclass(  # noqa: N806
        "Declaration", [(n, object) if n in ("name", "forward") else (n, object, dataclasses.field(default=getattr(
            Declaration, n))) for n in annotated], frozen=True)
    kwargs = {"inputs": ("self", "other"), "dtype": "promote", "variants": ("function", "method"), "hot": False,
              "aliases": ("mul_alias",), "signature": "other"}
    ours, theirs = Declaration("mul", np.multiply, **kwargs), Frozen("mul", np.multiply, **kwargs)
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs)
    assert ours == Declaration("mul", np.multiply, **kwargs) and ours != Declaration("mul", np.add, **kwargs)
    assert (ours == theirs) is False  # (another class: NotImplemented both ways, as a dataclass's __eq__)
    for name in ("dtype", "brand_new"):
        with pytest.raises(AttributeError, match=f"cannot assign to field '{name}'"):
            setattr(ours, name, "x")
    with pytest.raises(AttributeError, match="cannot delete field 'dtype'"):
        del ours.dtype
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtpye'"):
        Declaration("mul", np.multiply, dtpye="promote")  # type: ignore[call-arg]
    assert ours.dtype == "promote" and ours.params == () and ours.jvp is None


def test_the_written_out_bernoulli_numbers_are_the_exact_ones() -> None:
    # Oracle: B_n from sum_{k<=n} C(n+1, k) B_k = 0 (B_0 = 1), in exact fractions.
    from fractions import Fraction
    from math import comb

    from retrograd.ops import special_math

    b = [Fraction(1)]
    for n in range(1, 25):
        b.append(-sum(comb(n + 1, k) * b[k] for k in range(n)) / (n + 1))
    assert [Fraction(p, q) for p, q in special_math._B2K] == b[2::2]
    assert all(q > 0 and Fraction(p, q).denominator == q for p, q in special_math._B2K)  # (in lowest terms)
