"""The checked all_reduce in one round, mismatch errors of every collective, and the later
additions, across 2 and 4 processes: each test launches ``mpiexec`` on ``_mpi_worker_extra.py``
(one launch per process count runs every scenario) and checks that every rank reported OK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_distributed_mpi import _env, _mpiexec, assert_all_ok, launch

WORKER = Path(__file__).resolve().parent / "_mpi_worker_extra.py"
SCENARIOS = "checks,mismatches,additions,comm_hook,mixed_async"
pytestmark = pytest.mark.mpi


def _launch(n: int) -> subprocess.CompletedProcess[str]:
    return launch(n, SCENARIOS, "60", timeout=180, worker=WORKER)


@pytest.fixture(scope="module")
def two() -> subprocess.CompletedProcess[str]:
    return _launch(2)


@pytest.fixture(scope="module")
def four() -> subprocess.CompletedProcess[str]:
    return _launch(4)


@pytest.mark.parametrize("n", [2, 4])
def test_small_all_reduce_checks_and_reduces_in_one_round_the_same_on_every_rank(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "checks", n)


@pytest.mark.parametrize("n", [2, 4])
def test_mismatched_shapes_dtypes_and_ops_in_every_collective_name_each_ranks(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "mismatches", n)


@pytest.mark.parametrize("n", [2, 4])
def test_all_to_all_single_object_collectives_and_futures_match_numpy(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "additions", n)


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_with_the_default_allreduce_comm_hook_equals_one_process_on_the_whole_batch(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "comm_hook", n)


def test_ranks_launched_with_different_check_settings_agree_on_the_most_cautious() -> None:
    # (rank 0 checks with 1 KB slots, rank 1 asks for no check: both must run the same protocol)
    one = [sys.executable, str(WORKER), "agree", "60"]
    command = [_mpiexec(), "-n", "1", "-env", "RETROGRAD_DISTRIBUTED_SMALL_BYTES", "1024", *one, ":",
               "-n", "1", "-env", "RETROGRAD_DISTRIBUTED_CHECKS", "0", *one]
    assert_all_ok(subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env()), "agree", 2)


def test_a_malformed_small_bytes_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from retrograd.distributed._c10d import _small_bytes

    monkeypatch.setenv("RETROGRAD_DISTRIBUTED_SMALL_BYTES", "4k")
    with pytest.raises(ValueError, match="^RETROGRAD_DISTRIBUTED_SMALL_BYTES must be a number of bytes, got '4k'$"):
        _small_bytes(2)
    monkeypatch.setenv("RETROGRAD_DISTRIBUTED_SMALL_BYTES", "1000")
    assert _small_bytes(2) == 992  # (payloads stay 16-byte aligned)
    monkeypatch.delenv("RETROGRAD_DISTRIBUTED_SMALL_BYTES")
    assert [_small_bytes(n) for n in (2, 8, 16, 64)] == [32768] * 4  # (an Allreduce: no per-rank growth)


@pytest.mark.parametrize("n", [2, 4])
def test_async_op_is_each_ranks_own_choice_in_every_collective(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "mixed_async", n)
