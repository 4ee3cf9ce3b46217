"""Shared test setup: the op database is importable, and PyTorch is the reference when present.

With ``RETROGRAD_REQUIRE_TORCH=1`` (CI), tests that need PyTorch fail instead of skipping.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


# A user's `pip install -e ".[test]"` has no PyTorch: its parity tests skip with this reason, and
# the run ends with one line counting them (pytest_terminal_summary below) instead of a list.
TORCH_SKIP_REASON = "PyTorch is not installed"


def torch_or_skip() -> Any:
    try:
        import torch
    except ImportError:
        if os.environ.get("RETROGRAD_REQUIRE_TORCH") == "1":
            pytest.fail("PyTorch is required (RETROGRAD_REQUIRE_TORCH=1) but is not installed")
        pytest.skip(TORCH_SKIP_REASON)
    torch.set_num_threads(1)
    return torch


def outcome(fn: Any) -> tuple[str, str]:
    """(exception type, message) or ('ok', ''): what a call does, to compare between libraries.
    What retrograd adds after PyTorch's message (" [retrograd] ...", e.g. where the backward that
    freed a graph ran) is left out: PyTorch's part must match exactly."""
    return outcome_and_value(fn)[0]


def outcome_and_value(fn: Any) -> tuple[tuple[str, str], Any]:
    """``outcome(fn)`` and what the call returned (None if it raised), from one call."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).split(" [retrograd]")[0]), None
    return ("ok", ""), value


@pytest.fixture
def torch() -> Any:
    return torch_or_skip()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if isinstance(r.longrepr, tuple) and r.longrepr[2].endswith(TORCH_SKIP_REASON)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} PyTorch-parity tests skipped: torch is not installed "
                                    "(pip install -e '.[parity]')", yellow=True, bold=True)


# Doctests (collected from src/ with ``--doctest-modules``) whose examples draw with Graphviz skip,
# with the reason, when the ``graphviz`` package or Graphviz's ``dot`` program is missing: a user's
# ``pip install -e ".[test]"`` has neither, and the drawing is not what those examples check.
# (Here rather than in a conftest.py at the root, which would shadow this one's `from conftest import`.)
#
# What an example's source calls -> what it needs. make_dot* only build DOT source (the package);
# explore lays the graph out (the package and the `dot` program).
_NEEDS = (
    (re.compile(r"\bexplore\("), ("graphviz", "dot")),
    (re.compile(r"\bmake_dot(?:_lifecycle)?\(|\.(?:render|pipe)\("), ("graphviz",)),
    (re.compile(r"\bcheck_op\("), ("hypothesis",)),  # draws its inputs with hypothesis
    (re.compile(r"\binit_process_group\("), ("mpi4py",)),  # retrograd.distributed runs on MPI
)
_MISSING = {
    "graphviz": "needs the 'graphviz' Python package (pip install graphviz, or the '.[dev]' extra)",
    "hypothesis": "needs the 'hypothesis' package (in the '.[test]' extra; pip install hypothesis)",
    "mpi4py": "needs mpi4py and MPI (the '.[distributed]' extra; pip install mpi4py mpich)",
    "dot": "needs Graphviz's `dot` program (apt-get install graphviz / brew install graphviz / "
           "conda install -c conda-forge graphviz)",
}


def _available(need: str) -> bool:
    if need == "dot":
        return shutil.which("dot") is not None
    return importlib.util.find_spec(need) is not None


def doctest_skip_reason(source: str) -> str | None:
    """Why a doctest with this source cannot run here, or None when it can."""
    for pattern, needs in _NEEDS:
        if pattern.search(source):
            for need in needs:
                if not _available(need):
                    return _MISSING[need]
    return None


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        dtest = getattr(item, "dtest", None)  # a DoctestItem
        if dtest is None:
            continue
        reason = doctest_skip_reason("\n".join(example.source for example in dtest.examples))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
