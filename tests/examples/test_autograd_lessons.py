"""The lessons in examples/autograd/ run, and print the same under retrograd as under PyTorch.

Each lesson imports its library in one line, ``import retrograd as torch  # swap for: import
torch``; the PyTorch run executes the lesson's source with that line swapped. One subprocess per
library runs every lesson (importing torch once, not once per lesson, keeps this test fast) and
reports each lesson's output separately; the outputs are compared line by line after removing
only what legitimately differs: the sentence retrograd appends to an error message
(`` [retrograd] ...``, e.g. where the backward that freed a graph ran) and object addresses.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import torch_or_skip

ROOT = Path(__file__).resolve().parents[2]
LESSONS_DIR = ROOT / "examples" / "autograd"
LESSONS = sorted(p.name for p in LESSONS_DIR.glob("*.py"))
SWAP_LINE = "import retrograd as torch  # swap for: import torch"
TIMEOUT_S = 240

# Runs the lessons named in argv[2:] with backend argv[1] ("retrograd" or "torch") and prints
# {lesson: {"out": stdout, "error": traceback or None, "module": what the name torch was}} as JSON.
RUNNER = r"""
import contextlib, io, json, sys, traceback
backend, paths = sys.argv[1], sys.argv[2:]
if backend == "torch":
    import torch
    torch.set_num_threads(1)
results = {}
for path in paths:
    src = open(path, encoding="utf-8").read()
    if backend == "torch":
        src = src.replace(SWAP_LINE, "import torch", 1)
    buf, err, ns = io.StringIO(), None, {"__name__": "__main__", "__file__": path}
    sys.argv = [path]
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(src, path, "exec"), ns)
    except BaseException:
        err = traceback.format_exc()
    module = getattr(ns.get("torch"), "__name__", None)
    results[path.rsplit("/", 1)[-1]] = {"out": buf.getvalue(), "error": err, "module": module}
print(json.dumps(results))
""".replace("SWAP_LINE", repr(SWAP_LINE))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _start(backend: str) -> subprocess.Popen[str]:
    paths = [str(LESSONS_DIR / name) for name in LESSONS]
    return subprocess.Popen([sys.executable, "-c", RUNNER, backend, *paths], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"lesson runner failed:\n{err}"
    return json.loads(out.splitlines()[-1])


@pytest.fixture(scope="module")
def outputs() -> dict[str, dict[str, Any]]:
    """Every lesson's output under each library; both runs in parallel (torch only if installed)."""
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    procs = {"retrograd": _start("retrograd")}
    if have_torch:
        procs["torch"] = _start("torch")
    return {backend: _collect(proc) for backend, proc in procs.items()}


def normalise(text: str) -> list[str]:
    """The lines of a lesson's output, less what legitimately differs between the libraries.

    >>> normalise("RuntimeError: freed. [retrograd] The graph was freed at x.py:3.\\n<F object at 0x7f3a>")
    ['RuntimeError: freed.', '<F object at 0x…>']
    """
    text = re.sub(r" \[retrograd\][^\n]*", "", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    return text.splitlines()


def test_there_are_lessons_and_each_swaps_in_one_line() -> None:
    assert len(LESSONS) >= 9, LESSONS
    for name in LESSONS:
        lines = (LESSONS_DIR / name).read_text(encoding="utf-8").splitlines()
        assert lines.count(SWAP_LINE) == 1, f"{name}: needs exactly one line {SWAP_LINE!r}"
        assert "README.md" in (p.name for p in LESSONS_DIR.iterdir())


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_under_retrograd(outputs: dict[str, dict[str, Any]], lesson: str) -> None:
    result = outputs["retrograd"][lesson]
    assert result["error"] is None, result["error"]
    assert result["module"] == "retrograd"
    assert len(result["out"].splitlines()) >= 5, result["out"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_prints_the_same_under_pytorch(outputs: dict[str, dict[str, Any]], lesson: str) -> None:
    if "torch" not in outputs:
        torch_or_skip()  # skips (or fails under RETROGRAD_REQUIRE_TORCH=1)
    ours, theirs = outputs["retrograd"][lesson], outputs["torch"][lesson]
    assert theirs["error"] is None, f"the lesson fails under PyTorch:\n{theirs['error']}"
    assert theirs["module"] == "torch", "the swap line did not switch the lesson to PyTorch"
    assert ours["error"] is None, ours["error"]
    a, b = normalise(ours["out"]), normalise(theirs["out"])
    assert a == b, "retrograd (-) and PyTorch (+) print differently:\n" + "\n".join(
        difflib.unified_diff(a, b, "retrograd", "torch", lineterm=""))


def test_normalise_keeps_real_differences() -> None:
    # only the appended sentence and addresses go: a changed value or word still shows
    assert normalise("x.grad: tensor([2., 4.])") != normalise("x.grad: tensor([2., 5.])")
    assert normalise("RuntimeError: a [retrograd] b") == ["RuntimeError: a"]


def test_lifecycle_lesson_draws_the_four_beats(tmp_path: Path) -> None:
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("graphviz's dot program is not installed")
    proc = subprocess.run([sys.executable, str(LESSONS_DIR / "graph_lifecycle.py"), "--png", str(tmp_path)], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    png = tmp_path / "lifecycle.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "drew the four beats: lifecycle.png" in proc.stdout
