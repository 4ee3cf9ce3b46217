"""``benchmarks/bench.py --quick`` runs to completion and prints its Markdown table (timings not checked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench.py"
HEADER = "| workload | retrograd | PyTorch | NumPy floor | retrograd/PyTorch | retrograd/floor | target | met? |"
ROW_STARTS = ("| 1. ", "| 2. ", "| 2b. ", "| 2c. ", "| 3. ", "| 3b. ", "| 3c. ", "| 4. ", "| 4b. ", "| 4c. ", "| 5a. ", "| 5b. ",
              "| 6a. ", "| 6b. ", "| 7. ", "| 8. ", "| 9. ",
              "| 10. ", "| 11. ", "| 12. ", "| 12b. ",
              "| 13a. ", "| 13b. ", "| 13c. ", "| 13d. ")


def run_bench(*args: str) -> list[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def table(lines: list[str]) -> list[str]:
    start = lines.index(HEADER)
    assert lines[start + 1] == "|" + "---|" * 8
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        assert line.endswith("|") and line.count("|") == 9, line
        rows.append(line)
    return rows


@pytest.mark.slow
def test_quick_run_prints_the_table() -> None:
    rows = table(run_bench())
    assert [r.split(" ", 2)[1] for r in rows] == [s.split(" ")[1] for s in ROW_STARTS]
    for row in rows:
        verdict = row.rstrip("|").rsplit("|", 1)[1].strip()
        assert verdict.split(" ")[0] in ("yes", "no", "n/a"), row


@pytest.mark.slow
def test_quick_run_without_torch_shows_dashes() -> None:
    rows = table(run_bench("--no-torch", "--only", "chain,hvp"))
    assert [r.split(" ", 2)[1] for r in rows] == ["1.", "4.", "4b."]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2] == "—" and cells[4] == "—", row  # the PyTorch column and its ratio
        assert cells[1] != "—", row


def test_unknown_workload_is_refused() -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--only", "nope"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 2 and "unknown workload(s) nope" in proc.stderr
