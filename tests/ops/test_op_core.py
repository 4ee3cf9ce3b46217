"""The op core (ops/op.py, ops/declaration.py): a declaration validated at registration, the
generated backward (installed with the node class, debuggable, never unpacking what was not
saved) and the generic loop behind ``RETROGRAD_GENERIC_BACKWARD=1``."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import op as op_module
from retrograd.ops.op import Op

TESTS = Path(__file__).resolve().parents[1]
SRC = TESTS.parent / "src"


# -- the declaration ------------------------------------------------------------------------


def test_misspelt_dtype_rule_fails_at_registration() -> None:
    with pytest.raises(ValueError, match=r"Op 'exp2': dtype='promte' is not one of .*'promote'"):
        Op("exp2", np.exp2, dtype="promte", grads=(lambda grad, result: grad * result,))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"variants": ("function", "methd")}, ValueError, "variants has 'methd'"),
        ({"variants": ("method", "method")}, ValueError, "repeats a form"),
        ({"inputs": ("self", "self")}, ValueError, "must be distinct"),
        ({"inputs": ("self",), "params": ("self",)}, ValueError, "must be distinct"),
        ({"inputs": ("needs",)}, ValueError, "'needs' means something else"),
        ({"inputs": ("not a name",)}, ValueError, "must be identifiers"),
        ({"inputs": ()}, ValueError, "at least one input"),
        ({"outputs": 0}, ValueError, "outputs must be"),
        ({"view": "yes"}, TypeError, "view must be True or False"),
        ({"node": "Exp2 Backward"}, ValueError, "node must be a class name"),
        ({"outputs": 2, "differentiable_outputs": (True,)}, ValueError, "1 flags for 2 outputs"),
    ],
)
def test_bad_declarations_fail_at_registration(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Op("exp2", np.exp2, **kwargs)


def test_declaration_is_frozen_and_kept_with_variants() -> None:
    op = Op("exp2", np.exp2, variants=["function", "method"], grads=(lambda grad, result: grad * result,))
    assert op.variants == ("function", "method")
    assert op.declaration.variants == ("function", "method")
    assert op.declaration.dtype == "same"
    with pytest.raises(AttributeError):
        op.declaration.dtype = "promote"  # type: ignore[misc]
    assert Op("exp3", np.exp2).variants == ()


# -- the generated backward ------------------------------------------------------------------


def test_rule_reading_an_untracked_inputs_slot_is_not_unpacked() -> None:
    # The generated apply used to unpack every slot any rule names, raising IndexError here.
    op = Op("reads_other", np.multiply, node="ReadsOtherBackward0", inputs=("self", "other"),
            grads=(lambda grad: grad * 2.0, lambda grad, self: grad * self))
    a = rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64, requires_grad=True)
    b = rg.tensor([4.0, 5.0, 6.0], dtype=rg.float64)
    (ga,) = rg.autograd.grad(op(a, b).sum(), [a])
    np.testing.assert_array_equal(ga.numpy(), [2.0, 2.0, 2.0])  # the rule's own value: 2 * grad
    # Only ``other`` tracked: its rule gets the saved ``self``.
    b.requires_grad_()
    (gb,) = rg.autograd.grad(op(a.detach(), b).sum(), [b])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 2.0, 3.0])
    # Both tracked: the same values.
    ga, gb = rg.autograd.grad(op(a, b).sum(), [a, b])
    np.testing.assert_array_equal(ga.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 2.0, 3.0])


def test_relu_double_backward_with_only_the_gradient_tracked() -> None:
    # threshold_backward(grad, self) with only ``grad`` requiring grad (relu's double backward).
    from retrograd.ops.elementwise import threshold_backward

    x = rg.tensor([-1.0, 2.0, 0.5], dtype=rg.float64)
    g = rg.tensor([1.0, 1.0, 1.0], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda gg: threshold_backward(gg, x), (g,))


def test_generated_apply_is_installed_with_the_class() -> None:
    def rule(grad: Any, result: Any) -> Any:
        return grad * result

    op = Op("fresh_exp", np.exp, node="FreshExpBackward0", grads=(rule,))
    cls = op.node_cls
    assert cls is not None
    generated = cls.__dict__["apply"]  # before any backward ran through the op
    assert generated is not op_module.OpNode.apply
    assert inspect.getsource(generated) == op.backward_source  # registered with linecache
    code = rule.__code__
    assert f"# rule for 'self' at {code.co_filename}:{code.co_firstlineno}" in op.backward_source


def _failing_rule(grad: Any, self: Any) -> Any:
    raise ZeroDivisionError("the rule's own fault")


def test_traceback_through_generated_code_shows_its_source() -> None:
    op = Op("fails_later", np.sin, node="FailsLaterBackward0", grads=(_failing_rule,))
    x = rg.tensor([0.5], requires_grad=True)
    with pytest.raises(ZeroDivisionError) as info:
        op(x).sum().backward()
    frames = traceback.extract_tb(info.value.__traceback__)
    names = [f.filename for f in frames]
    generated = next(f for f in frames if f.filename == "<retrograd generated: FailsLaterBackward0.apply for op 'fails_later'>")
    where = f"{_failing_rule.__code__.co_filename}:{_failing_rule.__code__.co_firstlineno}"
    assert generated.line == f"return (rule0(grad, saved0),)  # rule for 'self' at {where}"
    # No extra frame: the engine calls the generated apply, which calls the rule.
    k = names.index(generated.filename)
    assert frames[k + 1].name == "_failing_rule"
    assert frames[k - 1].filename.endswith(os.path.join("autograd", "engine.py"))
    text = "".join(traceback.format_exception(info.value))
    assert f"    return (rule0(grad, saved0),)  # rule for 'self' at {where}\n" in text


# -- the generic loop, RETROGRAD_GENERIC_BACKWARD=1 ---------------------------------------------

_PROBE = r"""
import json, sys, zlib
import numpy as np
import retrograd as rg
from retrograd.ops import op as op_module
from opdb import all_ops, to_lib

def probe(step):
    results, generated, loop = {}, 0, 0
    for n, info in enumerate(all_ops()):
        if n % step or not info.gradcheck:
            continue
        rng = np.random.default_rng(zlib.crc32(info.name.encode()))
        for s, sample in enumerate(info.samples(rng)):
            args, kwargs, leaves = to_lib(rg, sample)
            if not leaves:
                continue
            key = f"{info.name}-{s}"
            out = info.fn(rg, *args, **kwargs)
            outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                    if isinstance(o, rg.Tensor) and o.requires_grad]
            if not outs:
                continue
            op_nodes = [o.grad_fn for o in outs if isinstance(o.grad_fn, op_module.OpNode)]
            generated += sum("apply" in type(node).__dict__ for node in op_nodes)
            loop += sum(type(node).apply is op_module.OpNode.apply for node in op_nodes)
            seeds = [rg.tensor(np.cos(np.arange(o.numel()) + 1.0).reshape(o.shape), dtype=o.dtype) for o in outs]
            try:
                grads = rg.autograd.grad(outs, leaves, seeds, allow_unused=True, create_graph=True)
                first = [None if g is None else g.detach().numpy().tolist() for g in grads]
                used = [g for g in grads if g is not None and g.requires_grad]
                second = None
                if used:
                    total = sum((g * g).sum() for g in used)
                    second = [None if g is None else g.numpy().tolist()
                              for g in rg.autograd.grad(total, leaves, allow_unused=True)]
                results[key] = [first, second]
            except Exception as err:  # the same error either way
                results[key] = f"{type(err).__name__}: {err}"
    return results, generated, loop

if __name__ == "__main__":
    results, generated, loop = probe(int(sys.argv[1]))
    print(json.dumps({"generic": op_module.GENERIC_BACKWARD, "generated": generated, "loop": loop,
                      "results": results}))
"""


def test_generic_backward_switch_gives_the_same_gradients(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    step = 3  # every third opdb entry, first and second order
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)])}
    runs = {}
    for switch in ("0", "1"):
        env["RETROGRAD_GENERIC_BACKWARD"] = switch
        done = subprocess.run([sys.executable, str(script), str(step)], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[switch] = json.loads(done.stdout.strip().splitlines()[-1])
    plain, generic = runs["0"], runs["1"]
    assert plain["generic"] is False and generic["generic"] is True
    assert plain["generated"] > 20  # most sampled ops ran generated code...
    assert plain["loop"] > 5  # (joint rules and several outputs run the loop anyway)
    assert generic["generated"] == 0  # ...and none did under the switch
    assert generic["loop"] > plain["loop"] + 20
    assert len(plain["results"]) > 40
    assert generic["results"] == plain["results"]  # the same rules on the same values: equal bit for bit


def test_anomaly_creation_traceback_leaves_out_generated_frames() -> None:
    # A node made inside a generated apply (create_graph) remembers the user's line, not ours.
    x = rg.tensor([0.5, 1.5], requires_grad=True)
    with rg.autograd.detect_anomaly():
        (g,) = rg.autograd.grad(x.exp().sum(), x, create_graph=True)  # the line to remember
    assert type(g.grad_fn).__name__ == "MulBackward0"
    stack = g.grad_fn.metadata["traceback_"]
    assert "the line to remember" in stack[-1]
    assert not any("retrograd generated" in frame for frame in stack)


# -- one definition each ----------------------------------------------------------------------


def test_node_recording_and_argument_meaning_are_written_once() -> None:
    text = Path(op_module.__file__).read_text()
    # Making a node: once in the snippet, spliced into the three recording paths.
    assert text.count("node._sequence_nr = seq = next_sequence_nr()") == 1
    assert op_module.RECORDING_SOURCE.count("node._sequence_nr = seq = next_sequence_nr()") == 3
    assert text.count("result._grad_fn = node") == 1
    # What a rule argument reads: once, in ARG_EXPRESSIONS.
    assert text.count("self._params[") == 1
    assert text.count("self._input_meta[") == 2  # (the shape and the dtype)


def test_recording_paths_are_readable_source() -> None:
    # The Tensor operators are closures compiled from the recording source; it is registered
    # with linecache, so their source can be read and their frames show lines.
    source = inspect.getsource(rg.Tensor.__mul__)
    assert source.lstrip().startswith("def binary(")
    assert "node = _new(node_cls)" in source
    assert rg.Tensor.__mul__.__code__.co_filename.startswith("<retrograd generated: ")
