"""The layering of docs/architecture.md, checked: ``retrograd.autograd`` imports nothing above it
at module level, reaches up only through the documented call-time imports, and importing the op
table builds only the node classes the doc names."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
AUTOGRAD = SRC / "retrograd" / "autograd"

# What the autograd layer may import from above it, inside functions only (docs/architecture.md,
# "The layers"): the Tensor class, the in-place check for custom Functions' dirty outputs,
# ``stack`` for jacobians, and dtype names for messages.
CALL_TIME_IMPORTS = {"retrograd.tensor", "retrograd.ops.inplace", "retrograd._functions", "retrograd._dtype"}


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_autograd_imports_nothing_above_it_at_module_level() -> None:
    # ``retrograd/__init__.py`` imports every layer, so the parent package is replaced by a bare
    # module with the same path: importing ``retrograd.autograd.*`` then runs only what those
    # modules import at module level. An import hook records every retrograd module loaded.
    code = f"""
import importlib, json, pkgutil, sys, types
root = types.ModuleType("retrograd")
root.__path__ = [{str(SRC / "retrograd")!r}]
sys.modules["retrograd"] = root
loaded = []

class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("retrograd."):
            loaded.append(name)
        return None

sys.meta_path.insert(0, Recorder())
import retrograd.autograd
for info in pkgutil.iter_modules(retrograd.autograd.__path__):
    importlib.import_module("retrograd.autograd." + info.name)
print(json.dumps(loaded))
"""
    loaded = json.loads(_run(code))
    assert "retrograd.autograd.engine" in loaded and "retrograd.autograd.gradcheck" in loaded
    above = [name for name in loaded if not name.startswith("retrograd.autograd")]
    assert above == []


def test_autograd_reaches_up_only_through_the_documented_call_time_imports() -> None:
    found: dict[str, set[str]] = {}
    for path in sorted(AUTOGRAD.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:  # ``from ..x import y``
                parts = ["retrograd"] + ([node.module] if node.module else [])
                target = ".".join(parts)
                if not target.startswith("retrograd.autograd"):
                    found.setdefault(target, set()).add(path.name)
    assert set(found) <= CALL_TIME_IMPORTS, found
    assert "retrograd.tensor" in found  # (the scan sees them)


def test_importing_retrograd_builds_only_the_node_classes_of_tensor_call_paths() -> None:
    # docs/architecture.md: node classes are made on an op's first use; the call paths that bind
    # one (the operators, the hot one-input methods) are set on Tensor at their first lookup, so
    # importing builds none, and nothing on Tensor binds an op at import.
    code = """
import gc, json
import retrograd
from retrograd.ops.op import Op
from retrograd.tensor import Tensor
built = sorted(o.name for o in gc.get_objects() if isinstance(o, Op) and "node_cls" in o.__dict__)
bound = set()
for value in vars(Tensor).values():
    code = getattr(value, "__code__", None)
    if code is not None and code.co_filename.endswith("variants.py"):
        continue  # methods derived from the table's variants dispatch on call: no class at import
    for cell in getattr(value, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:
            continue
        if isinstance(content, Op) and content.differentiable:  # (comparisons have no node class)
            bound.add(content.name)
print(json.dumps([built, sorted(bound)]))
"""
    built, bound = json.loads(_run(code))
    assert built == bound == []
