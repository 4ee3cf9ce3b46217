"""What ``import retrograd`` binds and what waits for first use (docs/architecture.md, "Public
forms"): an op's run plan is made on its first use, a derived public form (``Tensor.erfc``,
``retrograd.erfc``) on its first lookup, the operators and ``hot`` methods (the ops' own call
paths) too. Everything that looks at the surface (``hasattr``, ``dir``,
``inspect.signature``) sees the same as when every form was bound at import."""

from __future__ import annotations

import inspect
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
from retrograd.ops.plan import Plan

SRC = Path(__file__).resolve().parents[2] / "src"


def _fresh(code: str) -> object:
    """Run ``code`` in a fresh interpreter (nothing looked up yet) and return what it prints as JSON."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(SRC), "PATH": ""})
    return json.loads(result.stdout)


def test_import_plans_only_the_ops_bound_at_import_and_makes_no_derived_form() -> None:
    planned, eager, made, waiting = _fresh("""
import gc, json
import retrograd
from retrograd.ops.op import Op
from retrograd.ops import variants
ops = [o for o in gc.get_objects() if type(o) is Op]
planned = sorted(o.name for o in ops if "plan" in o.__dict__)
eager = sorted(o.name for o in ops if o.declaration.hot or o.declaration.operators)
made = sorted(n for _, forms in variants._BINDINGS for n in forms.made)
waiting = [type(vars(retrograd.Tensor)["erfc"]).__name__, "erfc" in vars(retrograd)]
print(json.dumps([planned, eager, made, waiting]))
""")
    # Not even the operators and hot methods (the ops' own call paths) are made at import: they
    # wait for their first lookup like every other form (tests/ops/test_import_time.py).
    assert planned == [] and {"add", "mul", "tanh"} <= set(eager)
    assert made == []
    assert waiting == ["_Method", False]


def test_the_surface_is_whole_before_any_lookup() -> None:
    seen = _fresh("""
import inspect, json
import retrograd as rg
print(json.dumps([hasattr(rg.Tensor, "logaddexp"), "logaddexp" in dir(rg.Tensor), "erfc_" in dir(rg.Tensor),
                  "erfc" in dir(rg), hasattr(rg, "erfc"), str(inspect.signature(rg.Tensor.add)),
                  str(inspect.signature(rg.add)), rg.Tensor.erfc.__qualname__, rg.erfc.__qualname__,
                  hasattr(rg.Tensor, "no_such_method"), hasattr(rg, "no_such_function")]))
""")
    assert seen == [True, True, True, True, True, "(self, other, *, alpha=1)", "(input, other, *, alpha=1)",
                    "Tensor.erfc", "erfc", False, False]


def test_a_method_is_made_once_and_then_is_a_plain_class_attribute() -> None:
    first = rg.Tensor.arcsin  # an alias: made with its form, for all its names
    assert first is rg.Tensor.asin
    assert type(vars(rg.Tensor)["asin"]) is types.FunctionType and vars(rg.Tensor)["arcsin"] is first
    x = rg.tensor([0.5], dtype=rg.float64, requires_grad=True)
    y = x.arcsin()
    assert type(y.grad_fn).__name__ == "AsinBackward0"
    np.testing.assert_allclose(y.detach().numpy(), np.arcsin([0.5]))
    # A subclass's lookup binds it on Tensor, where it is declared.
    assert rg.nn.Parameter(rg.ones(2)).erfinv_ is not None
    assert type(vars(rg.Tensor)["erfinv_"]) is types.FunctionType and "erfinv_" not in vars(rg.nn.Parameter)


def test_a_function_is_made_once_and_stored_where_it_is_looked_up() -> None:
    import retrograd._functions as fn
    from retrograd import logaddexp  # (``from`` goes through the module's __getattr__ too)

    assert logaddexp is rg.logaddexp is fn.logaddexp
    assert vars(rg)["logaddexp"] is logaddexp and vars(fn)["logaddexp"] is logaddexp
    assert rg.arccos is rg.acos
    out = rg.logaddexp(rg.tensor([0.0]), rg.tensor([0.0]))
    np.testing.assert_allclose(out.numpy(), [np.log(2.0)])
    with pytest.raises(AttributeError, match="module 'retrograd' has no attribute 'logaddexpp'"):
        rg.logaddexpp  # noqa: B018
    with pytest.raises(AttributeError, match="module 'retrograd._functions' has no attribute 'logaddexpp'"):
        fn.logaddexpp  # noqa: B018


def test_threads_racing_for_a_fresh_method_get_one_function() -> None:
    class Fresh:
        pass

    op = Op("racer", np.negative, node="RacerBackward0", variants=("method", "inplace"),
            grads=(lambda grad: -grad,))
    variants.bind_methods(Fresh, [op])
    start = threading.Barrier(8)
    got: list[object] = []

    def look_up() -> None:
        start.wait()
        got.append(Fresh.racer)

    threads = [threading.Thread(target=look_up) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got) and vars(Fresh)["racer"] is got[0]
    assert inspect.signature(Fresh.racer_) == inspect.signature(lambda self: None)


def test_a_clash_leaves_the_class_untouched() -> None:
    class Hand:
        def b(self) -> None: ...

    a = Op("a", np.negative, variants=("method",))
    b = Op("b", np.negative, variants=("method",))
    with pytest.raises(ValueError, match="Hand.b is defined by hand"):
        variants.bind_methods(Hand, [a, b])
    assert "a" not in vars(Hand)


def test_a_rule_asking_for_an_unknown_name_fails_when_the_plan_is_made() -> None:
    # The plan (and its check of the rules' parameter names) is made on first use; every table
    # entry's is made by tests/ops/test_op_plan.py's walk of the whole table.
    op = Op("typo", np.negative, node="TypoBackward0", grads=(lambda grad, slef: -grad,))
    assert "plan" not in vars(op)
    with pytest.raises(ValueError, match="typo: backward rule asks for unknown 'slef'"):
        op(rg.ones(2, requires_grad=True))
    with pytest.raises(ValueError, match="asks for unknown 'slef'"):
        op.plan  # noqa: B018
    good = Op("fine", np.negative, node="FineBackward0", grads=(lambda grad: -grad,))
    assert isinstance(good.plan, Plan) and good.unary_fast and vars(good)["unary_fast"] is True
    assert not hasattr(good, "no_such_field") and not hasattr(Op("other", np.negative), "__len__")


def test_bind_all_makes_every_waiting_form() -> None:
    variants.bind_all()
    assert variants.bind_all() == 0
    for _, forms in variants._BINDINGS:
        assert set(forms.made) == set(forms.forms)
    assert not [n for n, v in vars(rg.Tensor).items() if type(v).__name__ == "_Method"]


def test_import_loads_neither_return_types_nor_threading() -> None:
    # The named tuples of torch.return_types are made when their module loads: on first use. The
    # hooks' thread state is ``_thread``'s (threading.local is that class), so ``import retrograd``
    # brings no threading module that NumPy does not bring itself.
    loaded, numpy_alone, same, kinds = _fresh("""
import json, sys
import retrograd as rg
loaded = sorted(m for m in ("retrograd.ops.return_types", "threading") if m in sys.modules)
import subprocess  # (after the look: it imports threading)
alone = subprocess.run([sys.executable, "-c", "import sys, numpy; print('threading' in sys.modules)"],
                       capture_output=True, text=True).stdout.strip() == "True"
values = rg.tensor([3.0, 1.0]).max(0)
print(json.dumps([loaded, alone, rg.return_types is rg.ops.return_types,
                  [type(values).__name__, isinstance(values, rg.return_types.max), "return_types" in dir(rg)]]))
""")
    assert loaded == (["threading"] if numpy_alone else [])
    assert same and kinds == ["max", True, True]


def test_import_loads_no_sampler_until_first_use() -> None:
    # The mt19937 engine and the samplers are a twentieth of the bytecode ``import retrograd`` would
    # read: they load on first use, and then serve the same names.
    before, after, drawn = _fresh("""
import json, sys
import retrograd as rg
names = ("retrograd._random", "retrograd._sampling")
before = [m for m in names if m in sys.modules]
rg.manual_seed(0)
x = rg.randn(3, dtype=rg.float64, requires_grad=True)
ok = rg.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
drawn = rg.bernoulli(rg.full((4,), 0.5)).tolist()
print(json.dumps([before, [m for m in names if m in sys.modules], [ok, drawn]]))
""")
    assert before == []
    assert after == ["retrograd._random", "retrograd._sampling"]
    torch = torch_or_skip()
    torch.manual_seed(0)
    torch.randn(3, dtype=torch.float64)
    assert drawn[0] is True and drawn[1] == torch.bernoulli(torch.full((4,), 0.5)).tolist()
