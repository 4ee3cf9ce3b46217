"""retrograd.distributed across processes: each test launches ``mpiexec -n N`` on
``_mpi_worker.py`` (2 or 4 processes, oversubscribing a small machine) and checks that every rank
reported OK. The worker compares every collective with NumPy, DDP with one process training on the
whole batch; the fault scenarios must end within their timeout instead of hanging.

They need the ``distributed`` extra (mpi4py and an MPI with ``mpiexec``) and skip without it,
unless ``RETROGRAD_REQUIRE_MPI=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from retrograd.distributed.run import find_mpiexec

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
WORKER = HERE / "_mpi_worker.py"
pytestmark = pytest.mark.mpi


def _mpiexec() -> str:
    mpiexec = find_mpiexec()
    if mpiexec is None or importlib.util.find_spec("mpi4py") is None:
        if os.environ.get("RETROGRAD_REQUIRE_MPI") == "1":
            pytest.fail("mpi4py or mpiexec is missing (RETROGRAD_REQUIRE_MPI=1)")
        pytest.skip('needs the distributed extra: pip install -e ".[distributed]" (mpi4py, mpich)')
    return mpiexec


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):  # (the workers' own, from MPI)
        env.pop(name, None)
    return env


def launch(n: int, *args: str, timeout: float = 120, worker: Path = WORKER) -> subprocess.CompletedProcess[str]:
    """``mpiexec -n N python WORKER ARGS...`` (the other test files pass their own worker)."""
    command = [_mpiexec(), "-n", str(n), sys.executable, str(worker), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_env())


def assert_all_ok(result: subprocess.CompletedProcess[str], scenario: str, n: int) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    for r in range(n):
        assert f"OK {scenario} rank {r}" in result.stdout, result.stdout + result.stderr


# One launch per process count runs several scenarios (through the launcher for 2 processes);
# each test checks its own scenario's report. A failed check aborts the launch, so the output is shown.
TWO = "launcher,collectives,errors,ddp,torch_names"
FOUR = "collectives,errors,ddp"


@pytest.fixture(scope="module")
def two() -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "retrograd.distributed.run", "-n", "2", "--mpiexec", _mpiexec(), str(WORKER),
               TWO, "60"]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=_env())


@pytest.fixture(scope="module")
def four() -> subprocess.CompletedProcess[str]:
    return launch(4, FOUR, "60", timeout=180)


def test_every_collective_matches_numpy_on_2_processes(two: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two, "collectives", 2)


def test_every_collective_matches_numpy_on_4_processes(four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(four, "collectives", 4)


def test_mismatched_shapes_are_an_error_naming_each_ranks_shape(two: subprocess.CompletedProcess[str],
                                                                four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two, "errors", 2)
    assert_all_ok(four, "errors", 4)


def test_ddp_equals_one_process_on_the_whole_batch_and_no_sync_and_unused_parameters(
        two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two, "ddp", 2)
    assert_all_ok(four, "ddp", 4)


def test_launcher_runs_the_script_on_n_processes_with_torchruns_variables(
        two: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two, "launcher", 2)


def test_a_pytorch_program_runs_unchanged_with_retrograd_installed_as_torch(
        two: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two, "torch_names", 2)


def test_a_rank_that_raises_ends_every_rank() -> None:
    started = time.monotonic()
    result = launch(2, "fault_raise", timeout=60)  # (a hang would raise TimeoutExpired)
    assert result.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in result.stderr
    assert "retrograd.distributed: rank 1 raised ValueError; aborting all ranks" in result.stderr
    assert time.monotonic() - started < 50


def test_a_rank_that_never_arrives_times_the_collective_out() -> None:
    started = time.monotonic()
    result = launch(2, "fault_stuck", "2", timeout=60)  # rank 1 sleeps 60 s; the group's timeout is 2 s
    assert result.returncode != 0
    assert "retrograd.distributed: rank 0: all_reduce timed out after 2 s" in result.stderr, result.stderr
    assert time.monotonic() - started < 50
