"""Everything retrograd writes as source (the recording paths, every op's generated backward
``apply`` and argument getters and forward-AD tangent path, the public forms derived from the
table's variants) is checked
as code a person wrote: rendered for every op, written out as ``.py`` files with a header that
defines the names it reads from its namespace, compiled, and run through ``ruff check`` with the
project's rules. ruff and mypy do not see source that lives in strings; this test does."""

from __future__ import annotations

import builtins
import gc
import keyword
import linecache
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import retrograd  # noqa: F401  (binds the variant forms)
from retrograd.autograd.anomaly_mode import GENERATED_FILE_PREFIX
from retrograd.ops import op as op_module
from retrograd.ops.op import Op

ROOT = Path(__file__).resolve().parents[2]


def _render_everything() -> dict[str, tuple[str, dict[str, Any]]]:
    """``{file name: (source, namespace)}`` for every generated source, after making every op's
    node class (its ``apply``) and every rule's argument getter (the generic loop's)."""
    import retrograd.ops.linalg  # noqa: F401  (the lazily imported topics too)
    import retrograd.ops.nn  # noqa: F401
    from retrograd.ops import variants
    from retrograd.ops.forward import tangent_path

    variants.bind_all()  # (the public forms are made on first lookup)
    getters = []  # (kept alive until they are found below)
    for op in [o for o in gc.get_objects() if type(o) is Op]:
        if op.differentiable:
            op.node_cls  # noqa: B018  (makes the class and its generated apply)
            tangent_path(op)  # (its forward-AD tangent path, made on first use inside a dual level)
            if op.joint_rule is None:
                for i, (_, specs) in zip(op.diff_inputs, op.edge_rules, strict=True):
                    getters.append(op_module._arg_getter(op, specs, f"the rule for {op.inputs[i]!r}"))
    sources: dict[str, tuple[str, dict[str, Any]]] = {}
    for f in gc.get_objects():
        if type(f) is not types.FunctionType:
            continue
        code = f.__code__
        if code.co_filename.startswith(GENERATED_FILE_PREFIX):
            lines = linecache.getlines(code.co_filename)
            assert lines, code.co_filename  # every generated source is registered with linecache
            sources.setdefault(code.co_filename, ("".join(lines), f.__globals__))
    return sources


def _header(source: str, namespace: dict[str, Any]) -> str:
    """Definitions of the namespace names the source reads, so that ruff can resolve them."""
    words = set(re.findall(r"\b[A-Za-z_]\w*\b", source))
    defined = set(re.findall(r"^def (\w+)", source, re.M))
    names = sorted(n for n in namespace if n in words and n not in defined and not keyword.iskeyword(n)
                   and not n.startswith("__"))
    builtin = set(dir(builtins))
    return ("# Names the generated source below reads from the namespace it is compiled in.\n"
            + "".join(f"{n} = None{'  # noqa: A001' if n in builtin else ''}\n" for n in names) + "\n\n")


def test_every_generated_source_compiles_and_passes_ruff(tmp_path: Path) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    sources = _render_everything()
    kinds = {"apply for op": 0, "arguments of": 0, "recording paths": 0, "from the op table": 0, "tangent path for op": 0}
    for i, (filename, (source, namespace)) in enumerate(sorted(sources.items())):
        for kind in kinds:
            kinds[kind] += kind in filename
        text = _header(source, namespace) + f"# {filename}\n" + source
        compile(text, filename, "exec")
        (tmp_path / f"generated_{i:04d}.py").write_text(text)
    assert all(kinds.values()), kinds  # each kind of generated source was rendered
    assert kinds["apply for op"] > 200
    result = subprocess.run([ruff, "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(tmp_path)],
                            capture_output=True, text=True)
    # (on failure, ``cat`` the named file under tmp_path: its last comment line before the source names it)
    assert result.returncode == 0, result.stdout[-6000:]
