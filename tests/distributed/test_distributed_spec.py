"""all_reduce's prepared calls (issue #15): a repeated call hands mpi4py a prebuilt buffer spec
(no buffer parsing per call), unchecked and checked, and a prepared call never outlives what it
was prepared for (the tensor's memory, the op, async_op, the check switched back on): results
against NumPy and mismatches named on every rank, on 2 and 4 processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_distributed_mpi import assert_all_ok, launch

WORKER = Path(__file__).resolve().parent / "_mpi_worker_spec.py"
SCENARIOS = "unchecked,check_back_on,checked,prepared_checked,mixed_async_large"
pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module", params=[2, 4])
def run(request: pytest.FixtureRequest) -> tuple[int, subprocess.CompletedProcess[str]]:
    return request.param, launch(request.param, SCENARIOS, "60", timeout=240, worker=WORKER)


@pytest.mark.parametrize("scenario", SCENARIOS.split(","))
def test_prepared_all_reduce_matches_numpy_and_sees_every_change(
        scenario: str, run: tuple[int, subprocess.CompletedProcess[str]]) -> None:
    n, result = run
    assert_all_ok(result, scenario, n)


def test_benchmark_python_per_call_part_runs_and_reports_both_sizes() -> None:
    """``benchmarks/distributed.py --only python`` (one process, no mpiexec): a row per size with
    mpi4py's time and the Python on top, unchecked and checked."""
    import os
    import sys

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root / "src"), OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, str(root / "benchmarks" / "distributed.py"), "--only", "python",
                             "--repeats", "1"], capture_output=True, text=True, timeout=240, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().endswith(tuple("0123456789"))]
    assert [row[:2] for row in rows] == [["1", "KB"], ["16", "KB"]], result.stdout
    for row in rows:
        mpi4py, unchecked, stand_in, checked = map(float, row[2:])
        assert mpi4py > 0 and stand_in > 0, row


def test_watchdog_times_each_call_not_a_run_of_calls_nor_idle_time() -> None:
    """The watchdog sees a new (name, group) tuple per call: calls for longer than the timeout,
    and idle time longer than it, end normally; a call that never completes in a group with a
    shorter timeout than the world's is aborted after the group's timeout, not the world's."""
    import time

    assert_all_ok(launch(2, "watchdog_quiet", "3", timeout=120, worker=WORKER), "watchdog_quiet", 2)
    started = time.monotonic()
    result = launch(2, "watchdog_group_stuck", "60", timeout=60, worker=WORKER)
    assert result.returncode != 0
    assert "retrograd.distributed: rank 0: all_reduce timed out after 1 s" in result.stderr, result.stderr
    assert time.monotonic() - started < 30  # (the world's 60 s would not have fired)
