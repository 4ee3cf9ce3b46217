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
SCENARIOS = "unchecked,check_back_on,checked"
pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module", params=[2, 4])
def run(request: pytest.FixtureRequest) -> tuple[int, subprocess.CompletedProcess[str]]:
    return request.param, launch(request.param, SCENARIOS, "60", timeout=240, worker=WORKER)


@pytest.mark.parametrize("scenario", SCENARIOS.split(","))
def test_prepared_all_reduce_matches_numpy_and_sees_every_change(
        scenario: str, run: tuple[int, subprocess.CompletedProcess[str]]) -> None:
    n, result = run
    assert_all_ok(result, scenario, n)
