"""What a user's set-up gives: without PyTorch the parity tests skip and one line says so; tests and
doctests that draw skip without Graphviz, hypothesis-based ones without hypothesis; .ci/run refuses
to start without the shared conformance suite."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS_CONFTEST = ROOT / "tests" / "conftest.py"
SUMMARY = "3 PyTorch-parity tests skipped: torch is not installed (pip install -e '.[parity]')"

# A conftest for a scratch directory: torch cannot be imported (None in sys.modules makes
# `import torch` raise ImportError, whether or not it is installed), and the repository's
# tests/conftest.py supplies the `torch` fixture, torch_or_skip and the summary hook.
SCRATCH_CONFTEST = f"""
import importlib.util, sys
sys.modules["torch"] = None
_spec = importlib.util.spec_from_file_location("retrograd_tests_conftest", {str(TESTS_CONFTEST)!r})
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
torch = _mod.torch
pytest_terminal_summary = _mod.pytest_terminal_summary
torch_or_skip = _mod.torch_or_skip
"""

SCRATCH_TESTS = """
import pytest
from conftest import torch_or_skip

def test_a(torch): pass
def test_b(torch): pass
def test_c(): torch_or_skip()
def test_plain(): assert 1 + 1 == 2
def test_other_skip(): pytest.skip("not about torch")
"""


def _run_scratch(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(SCRATCH_CONFTEST)
    (tmp_path / "test_scratch.py").write_text(SCRATCH_TESTS)
    environ = {k: v for k, v in os.environ.items() if k not in ("RETROGRAD_REQUIRE_TORCH", "PYTEST_ADDOPTS")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"],
                          cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120)


def test_without_torch_parity_tests_skip_with_one_summary_line(tmp_path: Path) -> None:
    proc = _run_scratch(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [line for line in lines if "PyTorch-parity" in line] == [SUMMARY]
    assert "1 passed, 4 skipped" in lines[-1]
    assert lines.index(SUMMARY) < len(lines) - 1  # just before pytest's own closing line


def test_require_torch_turns_the_skips_into_failures(tmp_path: Path) -> None:
    proc = _run_scratch(tmp_path, RETROGRAD_REQUIRE_TORCH="1")
    assert proc.returncode == 1
    assert "1 failed, 1 passed, 1 skipped, 2 errors" in proc.stdout.splitlines()[-1]  # fixture: errors
    assert "PyTorch-parity" not in proc.stdout
    assert "PyTorch is required (RETROGRAD_REQUIRE_TORCH=1) but is not installed" in proc.stdout


def test_without_graphviz_and_hypothesis_their_tests_and_doctests_skip(tmp_path: Path) -> None:
    # both hidden by a plugin loaded before collection (None in sys.modules), and no `dot` on an
    # empty PATH: every test and doctest needing them skips with a reason, none fails or errors
    # (hypothesis's own pytest plugin, which an installed hypothesis registers, is switched off)
    (tmp_path / "hide_optional.py").write_text("import sys\nsys.modules['graphviz'] = sys.modules['hypothesis'] = None\n")
    (tmp_path / "bin").mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    environ.update(PATH=str(tmp_path / "bin"),
                   PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "src"), environ.get("PYTHONPATH", "")]))
    paths = ["src/retrograd/viz", "src/retrograd/debug/op_check.py", "tests/viz/test_viz.py",
             "tests/debug/test_check_op.py", "tests/ops/test_hypothesis_broadcast.py"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:hypothesispytest", "-p", "hide_optional", "-p", "no:randomly", "-q", "-rs",
                           *paths], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    # "SKIPPED [count] path[:line]: reason" -> "path: reason" (counts and lines move as files change)
    skips = {re.sub(r"^(\S+?)(:\d+)?: ", r"\1: ", line.split(" ", 2)[2])
             for line in out.splitlines() if line.startswith("SKIPPED")}
    graphviz = "needs the 'graphviz' Python package (pip install graphviz, or the '.[dev]' extra)"
    hypothesis = "needs the 'hypothesis' package (in the '.[test]' extra; pip install hypothesis)"
    no_import = "could not import '{0}': import of {0} halted; None in sys.modules"
    assert skips == {
        f"src/retrograd/viz/__init__.py: {graphviz}", f"src/retrograd/viz/lifecycle.py: {graphviz}",
        f"src/retrograd/viz/explore.py: {graphviz}", f"src/retrograd/debug/op_check.py: {hypothesis}",
        f"tests/viz/test_viz.py: {no_import.format('graphviz')}",
        f"tests/debug/test_check_op.py: {no_import.format('hypothesis')}",
        f"tests/ops/test_hypothesis_broadcast.py: {no_import.format('hypothesis')}"}, out
    last = out.splitlines()[-1]
    assert "passed" in last and "failed" not in last and "error" not in last, out  # capture_lifecycle's run


def test_doctest_skip_reason_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import conftest as root_conftest

    reason = root_conftest.doctest_skip_reason
    monkeypatch.setattr(root_conftest, "_available", lambda need: need != "dot")  # the package, no program
    assert "apt-get install graphviz" in reason(">>> page = explore(f, 'g.html')")
    assert reason(">>> dot = make_dot(y)") is None  # builds DOT source only: no program needed
    monkeypatch.setattr(root_conftest, "_available", lambda need: False)
    assert "'graphviz' Python package" in reason(">>> make_dot_lifecycle(f)")
    assert "'graphviz' Python package" in reason(">>> explore(f, p)")
    assert reason(">>> beats = capture_lifecycle(f)") is None
    monkeypatch.setattr(root_conftest, "_available", lambda need: True)
    assert reason(">>> explore(f, p)") is None


def _ci_run(tmp_path: Path, with_shared: bool) -> subprocess.CompletedProcess[str]:
    """.ci/run copied into a scratch checkout, with stand-ins on PATH: `dot`, `chromium` and
    `chromedriver` (so no apt-get) and a `python3` that notes it ran and exits 42 (so nothing is
    installed): it tells how far the script got."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    if with_shared:
        (tmp_path / "shared" / "conformance").mkdir(parents=True)
        (tmp_path / "shared" / "conformance" / "run.py").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("dot", "exit 0"), ("chromium", "exit 0"), ("chromedriver", "exit 0"),
                       ("python3", f"touch {tmp_path / 'python3-ran'}; exit 42")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    return subprocess.run(["bash", str(repo / ".ci" / "run")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_ci_run_stops_at_once_without_the_shared_suite(tmp_path: Path) -> None:
    proc = _ci_run(tmp_path, with_shared=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        ".ci/run: ../shared/conformance/run.py is missing: check out the shared conformance suite next to "
        "this repository, as ../shared"]
    assert not (tmp_path / "python3-ran").exists()  # nothing was installed or run
    assert not (tmp_path / "repo" / ".venv").exists()


def test_ci_run_goes_on_with_the_shared_suite(tmp_path: Path) -> None:
    proc = _ci_run(tmp_path, with_shared=True)
    assert proc.returncode == 42, proc.stderr  # the stand-in python3: past the check, making the venv
    assert (tmp_path / "python3-ran").exists()
    assert "is missing" not in proc.stderr


def test_extras_user_test_run_is_light_and_ci_installs_them_all() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {key: {re.split(r"[<>=!~\[ ]", req)[0] for req in reqs} for key, reqs in extras.items()}
    assert names["test"] == {"pytest", "hypothesis"}  # NumPy is a dependency already
    assert {"torch", "safetensors"} <= names["parity"]
    assert {"ruff", "mypy", "graphviz", "matplotlib", "selenium"} <= names["dev"]
    assert "torch==2.13.0" in extras["parity"]
    script = (ROOT / ".ci" / "run").read_text()
    assert names["distributed"] == {"mpi4py", "mpich"}
    assert 'pip install -q -e ".[test,parity,dev,demo,docs,distributed]"' in script
    assert "RETROGRAD_REQUIRE_MPI=1" in script
    assert "export RETROGRAD_REQUIRE_TORCH=1" in script
