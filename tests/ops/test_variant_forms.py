"""The public forms derived from the op table (ops/variants.py): every function, method and
in-place method an entry declares behaves as PyTorch's (values, ``grad_fn``, gradients, errors),
takes PyTorch's parameter names and defaults, and the declaration refuses forms it cannot make."""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd.ops import elementwise as E
from retrograd.ops import variants
from retrograd.ops.op import Op

ENTRIES = variants.declared()
FORMS = [(form, name, ops) for form in ("function", "method", "inplace")
         for name, ops in variants._public_forms(ENTRIES, form)]


def _ids(item: Any) -> str:
    return f"{item[0]}-{item[1]}" if isinstance(item, tuple) else str(item)


def _value(name: str, default: Any) -> Any:
    """A number for a param: a dim is 0, a flag True, an int 1, anything else 0.5."""
    if name == "dim":
        return 0
    if type(default) is bool:
        return True
    return 1 if type(default) is int else 0.5


def _calls(ops: tuple[Op, ...]) -> list[tuple[list[str], dict[str, Any]]]:
    """For each entry behind a public name, two calls: the required arguments only, and every
    argument given. Each call: which arguments are tensors (by name), and the numbers."""
    calls = []
    for op in ops:
        signature = inspect.signature(eval(f"lambda self, {variants._signature(op)}: None"))  # noqa: S307
        params = list(signature.parameters.items())[1:]
        for every in (False, True):
            given = [(n, p.default) for n, p in params if every or p.default is inspect.Parameter.empty]
            calls.append(([n for n, _ in given if n in op.inputs],
                          {n: _value(n, d) for n, d in given if n not in op.inputs}))
    return calls


def _run(lib: Any, form: str, name: str, tensors: list[str], numbers: dict[str, Any]) -> dict[str, Any]:
    """One call of a public form on ``lib`` (arguments by keyword, as PyTorch names them)."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.uniform(0.1, 0.9, (2, 3)), dtype=lib.float64, requires_grad=True)
    kwargs: dict[str, Any] = {n: lib.tensor(rng.uniform(0.2, 0.8, (2, 3)), dtype=lib.float64, requires_grad=True)
                              for n in tensors}
    kwargs.update(numbers)
    if "index" in kwargs:  # (an index or a mask is a tensor of its own kind)
        kwargs["index"] = lib.tensor([1, 0])
    if "mask" in kwargs:
        kwargs["mask"] = lib.tensor([[True, False, True], [False, True, True]])
    leaves = [x, *(kwargs[n] for n in tensors)]
    try:
        if form == "function":
            y = getattr(lib, name)(x, **kwargs)
        elif form == "method":
            y = getattr(x, name)(**kwargs)
        else:
            y = x.clone()
            assert getattr(y, name)(**kwargs) is y
    except (RuntimeError, TypeError, IndexError) as e:
        return {"error": (type(e).__name__, str(e))}
    if isinstance(y, tuple):  # (frexp: the mantissa; the exponent is not differentiable)
        y = y[0]
    result: dict[str, Any] = {"value": y.detach().numpy(), "dtype": str(y.dtype),
                              "node": type(y.grad_fn).__name__ if y.grad_fn is not None else None}
    if y.requires_grad:
        grads: list[Any] = []
        result["backward"] = outcome(lambda: grads.extend(lib.autograd.grad(y.sum(), leaves, allow_unused=True)))
        # (PyTorch's zero gradients may be its ZeroTensor, which converts only by force)
        result["grads"] = [None if g is None else g.numpy(force=True) if lib is not rg else g.numpy() for g in grads]
    return result


@pytest.mark.parametrize("item", FORMS, ids=_ids)
def test_every_derived_form_matches_torch(item: tuple[str, str, tuple[Op, ...]], torch: Any) -> None:
    form, name, ops = item
    for tensors, numbers in _calls(ops):  # both overloads of a Tensor/Scalar pair
        ours, theirs = _run(rg, form, name, tensors, numbers), _run(torch, form, name, tensors, numbers)
        assert ours.get("error") == theirs.get("error"), (tensors, numbers)
        if "error" in ours:
            continue
        np.testing.assert_allclose(ours["value"], theirs["value"], rtol=1e-12, equal_nan=True)
        assert (ours["dtype"], ours["node"]) == (theirs["dtype"], theirs["node"]), (tensors, numbers)
        assert ours.get("backward") == theirs.get("backward")
        for g, h in zip(ours.get("grads", ()), theirs.get("grads", ()), strict=True):
            if g is None or h is None:
                assert g is None and h is None or not np.any(g if g is not None else h)  # unused vs zeros
            else:
                np.testing.assert_allclose(g, h, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("item", [f for f in FORMS if f[0] != "inplace"], ids=_ids)
def test_derived_forms_refuse_a_wrong_call_as_torch_does(item: tuple[str, str, tuple[Op, ...]], torch: Any) -> None:
    form, name, _ = item
    for lib in (rg, torch):
        x = lib.tensor([0.5])
        call = getattr(lib, name) if form == "function" else getattr(x, name)
        first = (x,) if form == "function" else ()
        assert outcome(lambda: call(*first, nonsense=1))[0] == "TypeError"  # noqa: B023
        assert outcome(lambda: call(*first, x, x, x, x, x))[0] == "TypeError"  # noqa: B023


def test_declared_signatures_are_pytorchs() -> None:
    # PyTorch's documented signatures (torch.add(input, other, *, alpha=1, out=None), ...; out=
    # is not supported here).
    assert str(inspect.signature(rg.Tensor.add)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(rg.Tensor.sub_)) == "(self, other, *, alpha=1)"
    assert str(inspect.signature(rg.add)) == "(input, other, *, alpha=1)"
    assert str(inspect.signature(rg.addcmul)) == "(input, tensor1, tensor2, *, value=1)"
    assert str(inspect.signature(rg.Tensor.nan_to_num)) == "(self, nan=0.0, posinf=None, neginf=None)"
    assert str(inspect.signature(rg.clamp_min)) == "(input, min)"
    assert str(inspect.signature(rg.Tensor.lerp_)) == "(self, end, weight)"


def test_keywords_reach_the_op(torch: Any) -> None:
    a, b = np.array([1.0, -2.0, 3.5]), np.array([0.5, 4.0, -1.0])
    for lib in (rg, torch):
        x, y = lib.tensor(a), lib.tensor(b)
        got = [lib.add(x, other=y, alpha=2), x.sub(other=y, alpha=0.5), lib.addcdiv(x, tensor1=y, tensor2=x, value=3),
               lib.nan_to_num(lib.tensor([np.inf, np.nan, 1.0]), posinf=7.0), x.lerp(end=y, weight=0.25), lib.clamp_min(x, min=y)]
        if lib is rg:
            ours = [g.numpy() for g in got]
        else:
            for g, o in zip(got, ours, strict=True):
                np.testing.assert_allclose(o, g.numpy(), rtol=1e-12)


def test_aliases_are_the_same_functions() -> None:
    assert rg.Tensor.arcsin is rg.Tensor.asin and rg.Tensor.arcsin_ is rg.Tensor.asin_
    assert rg.Tensor.subtract_ is rg.Tensor.sub_ and rg.fix is rg.trunc
    assert rg.Tensor.arcsinh_ is rg.Tensor.asinh_ and rg.Tensor.asinh_ is not rg.Tensor.asinh
    # An alias names the forms it lists: PyTorch has Tensor.multiply_ and negative_, so do we.
    assert rg.Tensor.negative_ is rg.Tensor.neg_ and rg.Tensor.multiply_ is rg.Tensor.mul_


def test_operators_and_hot_methods_are_the_call_paths_themselves() -> None:
    # No wrapper frame: the dunder is the op's binary closure (alpha=1 bound), the hot method its unary one.
    assert rg.Tensor.__add__ is rg.Tensor.__radd__
    assert E.add in [c.cell_contents for c in rg.Tensor.__add__.__closure__]
    assert rg.Tensor.exp is E.exp.unary and rg.Tensor.__neg__ is rg.Tensor.neg is rg.Tensor.negative
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    assert (x + 1).tolist() == [2.0, 3.0] and (3 - x).tolist() == [2.0, 1.0] and (2 * x).tolist() == [2.0, 4.0]
    assert x.__add__("a") is NotImplemented


def test_generated_forms_show_their_source() -> None:
    source = inspect.getsource(rg.Tensor.fmod)
    assert "if isinstance(other, Tensor):" in source and "fmod_FmodBackward0" in source
    assert rg.Tensor.fmod.__code__.co_filename.startswith("<retrograd generated: Tensor methods")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"inputs": ("self", "other"), "variants": ("method",), "signature": "other, alpha=1"},
         "must name the arguments after the first input exactly once"),
        ({"inputs": ("self", "other"), "variants": ("method",), "signature": "other, *rest"}, "may not take"),
        ({"inputs": ("self", "other"), "variants": ("method",), "signature": "other,,"}, "not a Python parameter"),
        ({"inputs": ("self", "other"), "signature": "other"}, "declares no variants"),
        ({"variants": ("method",), "convert": {"other": "scalar"}}, "convert names 'other'"),
        ({"variants": ("method",), "params": ("dim",), "convert": {"dim": "dims!"}}, "'dims!', which is not one of"),
        ({"variants": ("method",), "aliases": ("twin_",)}, "names an in-place form"),
        ({"aliases": ("twin",)}, "declares no variants"),
        ({"operators": ("add",)}, "dunder names"),
        ({"inputs": ("a", "b", "c"), "operators": ("__add__",)}, "one-input op or a two-input op"),
        ({"inputs": ("self", "other"), "variants": ("method",), "hot": True}, "hot binds the method form"),
    ],
)
def test_bad_forms_fail_at_declaration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Op("twin", np.add, **kwargs)


def test_two_entries_under_one_name_must_be_an_overload_pair() -> None:
    tensor = Op("twin", np.add, inputs=("self", "other"), variants=("method",))
    scalar = Op("twin", np.add, params=("other",), variants=("method",))
    other_name = Op("twin", np.add, params=("value",), variants=("method",))
    assert variants.declared([types.SimpleNamespace(a=tensor, b=scalar)]) == [tensor, scalar]
    with pytest.raises(ValueError, match="not a Tensor/Scalar overload pair"):
        variants.declared([types.SimpleNamespace(a=tensor, b=other_name)])


def test_type_checking_stubs_match_the_derived_forms() -> None:
    # mypy cannot see forms made at import, so tensor.py states the ones retrograd's own code
    # calls in its TYPE_CHECKING block: each stub must have the derived form's parameters.
    import ast
    from pathlib import Path

    tree = ast.parse((Path(rg.__file__).parent / "tensor.py").read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"]
    stubs = [f for block in cls.body if isinstance(block, ast.If) for f in block.body if isinstance(f, ast.FunctionDef)]
    derived = {name for _, name, _ in FORMS} | {n for op in ENTRIES for n in op.declaration.operators}
    checked = 0
    for stub in stubs:
        if stub.name not in derived:
            continue
        a = stub.args
        stated = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        method = getattr(rg.Tensor, stub.name)
        if method.__code__.co_filename.startswith("<retrograd generated: Tensor methods"):
            assert stated == list(inspect.signature(method).parameters), stub.name
            checked += 1
    assert checked >= 10


def test_comparison_operators_are_the_table_and_refuse_other_types_as_torch(torch: Any) -> None:
    # Declared ``operators``: an operand that is no number or tensor gives NotImplemented, so
    # Python raises its own TypeError, as for PyTorch (it used to fail inside the op).
    assert E.lt.forward in [c.cell_contents for c in rg.Tensor.__lt__.__closure__]  # (the table entry's forward)
    for op in ("__lt__", "__le__", "__gt__", "__ge__"):
        for other in ("a", None, [1]):
            ours = outcome(lambda: eval(f"x {_SYMBOL[op]} y", {"x": rg.ones(2), "y": other}))  # noqa: S307
            theirs = outcome(lambda: eval(f"x {_SYMBOL[op]} y", {"x": torch.ones(2), "y": other}))  # noqa: S307
            assert ours == theirs, (op, other)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
    for lib in (rg, torch):
        x, y = lib.tensor(a), lib.tensor(b)
        got = [(x < y).tolist(), (x >= 2).tolist(), (2 > x).tolist(), lib.less(x, y).tolist(), x.greater(y).tolist()]
        if lib is rg:
            ours_values = got
    assert got == ours_values


_SYMBOL = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}
