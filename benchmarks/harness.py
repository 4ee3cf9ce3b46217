"""The small harness behind ``bench.py``: interleaved timing, medians, fresh-interpreter runs, the table.

Nothing here imports NumPy, so ``bench.py`` can pin the BLAS thread counts before NumPy loads.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SRC_DIR = BENCH_DIR.parent / "src"

# One BLAS / OpenMP thread for every library, set before NumPy (or PyTorch) is imported.
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads() -> None:
    for var in THREAD_VARS:
        os.environ[var] = "1"


def use_checkout_sources() -> None:
    """Benchmark this checkout's ``src/retrograd``, not whichever copy happens to be installed."""
    if (SRC_DIR / "retrograd").is_dir() and str(SRC_DIR) not in sys.path:
        sys.path.insert(0, str(SRC_DIR))


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh interpreter: this one's, with the checkout's sources first on the path."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = "1"
    paths = [str(BENCH_DIR)]
    if (SRC_DIR / "retrograd").is_dir():
        paths.insert(0, str(SRC_DIR))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------
# Timing


def interleaved_medians(runners: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """Median seconds of each runner (which times itself and returns seconds).

    One untimed warm-up each, then ``repeats`` rounds that run every library once, in turn, so that
    drift in the machine's load affects all of them alike. A garbage collection before each run keeps
    one library's garbage from being collected on another's clock.
    """
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for run in runners.values():
        gc.collect()
        run()
    for _ in range(repeats):
        for name, run in runners.items():
            gc.collect()
            samples[name].append(run())
    return {name: statistics.median(values) for name, values in samples.items()}


def run_isolated(args: Sequence[str], env: dict[str, str] | None = None, timeout: float = 1800) -> dict[str, float]:
    """Run ``isolated.py ARGS`` in a fresh interpreter and return the JSON object it prints last."""
    cmd = [sys.executable, str(BENCH_DIR / "isolated.py"), *args]
    proc = subprocess.run(cmd, env=env or child_env(), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def median_of_runs(results: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in results)


# ---------------------------------------------------------------------------------------------
# The table


@dataclass
class Row:
    """One line of the table: the three figures (None: not run / not applicable) and the verdict."""

    workload: str
    unit: str
    ours: float | None
    torch: float | None
    floor: float | None
    target: str
    met: str  # "yes (0.62×)", "no (1.8× PyTorch)", "n/a", ...
    show_ratios: bool = True


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    if abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".rstrip()


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def verdict(value: float | None, limit: float | None, label: str = "") -> tuple[bool | None, str]:
    """Whether ``value <= limit``, and a short text saying so; None when either is missing."""
    if value is None or limit is None:
        return None, f"n/a{(' ' + label) if label else ''}"
    ok = value <= limit
    return ok, f"{'yes' if ok else 'no'}{(' ' + label) if label else ''}"


def combine(*parts: tuple[bool | None, str]) -> str:
    return "; ".join(text for _, text in parts)


def markdown_table(rows: list[Row]) -> str:
    lines = [
        "| workload | retrograd | PyTorch | NumPy floor | retrograd/PyTorch | retrograd/floor | target | met? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        vs_torch = fmt_ratio(ratio(r.ours, r.torch)) if r.show_ratios else "—"
        vs_floor = fmt_ratio(ratio(r.ours, r.floor)) if r.show_ratios else "—"
        lines.append(
            f"| {r.workload} | {fmt(r.ours, r.unit)} | {fmt(r.torch, r.unit)} | {fmt(r.floor, r.unit)} "
            f"| {vs_torch} | {vs_floor} | {r.target} | {r.met} |"
        )
    return "\n".join(lines)
