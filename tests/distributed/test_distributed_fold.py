"""The checked all_reduce's one-round slot (issue #15): results against NumPy in every dtype and
op, the capacity the ranks agree on, and mismatched shapes and dtypes (same numel, fewer or more
elements, past the slot, another dtype) in all_reduce, broadcast and reduce named on every rank,
on 2 and 4 processes; and the fingerprint's arithmetic, exact by hand-derived sums."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_distributed_mpi import assert_all_ok, launch

WORKER = Path(__file__).resolve().parent / "_mpi_worker_fold.py"
pytestmark = pytest.mark.mpi


def _launch(n: int) -> subprocess.CompletedProcess[str]:
    return launch(n, "folds,mismatches", "60", timeout=240, worker=WORKER)


@pytest.fixture(scope="module")
def two() -> subprocess.CompletedProcess[str]:
    return _launch(2)


@pytest.fixture(scope="module")
def four() -> subprocess.CompletedProcess[str]:
    return _launch(4)


@pytest.mark.parametrize("n", [2, 4])
def test_folded_all_reduce_matches_numpy_in_every_dtype_and_op_and_agrees_on_the_capacity(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "folds", n)


@pytest.mark.parametrize("n", [2, 4])
def test_mismatched_numel_shape_and_dtype_in_all_reduce_broadcast_reduce_name_every_rank(
        n: int, two: subprocess.CompletedProcess[str], four: subprocess.CompletedProcess[str]) -> None:
    assert_all_ok(two if n == 2 else four, "mismatches", n)


@pytest.mark.parametrize("comp", ["float32", "float64", "int32", "int64", "uint32", "uint64"])
@pytest.mark.parametrize("n", [2, 3, 4, 16, 1000])
@pytest.mark.parametrize("summed", [True, False])
def test_fingerprint_passes_on_every_rank_iff_all_ranks_agree(comp: str, n: int, summed: bool) -> None:
    from retrograd.distributed._c10d import _HEADER, _fingerprint

    dt = np.dtype(comp)
    rng = np.random.default_rng(n)
    keys = [int(k) for k in rng.integers(0, 1 << 62, size=4)]
    mine, want = _fingerprint(keys[0], dt, summed, n)
    assert mine.dtype == dt and mine.nbytes == _HEADER and len(want) == _HEADER

    def reduce(headers: list[np.ndarray]) -> np.ndarray:
        if summed:  # in the header's own type, as MPI adds: every partial sum must be exact
            out = headers[0].copy()
            for h in headers[1:]:
                out = (out + h).astype(dt)
            return out
        return np.maximum.reduce(headers)

    # all equal: every rank reads n times its own (SUM) or its own (MAX), exactly as the bytes say
    assert reduce([mine] * n).tobytes() == want
    if summed:
        ints = np.array(mine, dtype=object)
        assert all(int(v) * n == int(w) for v, w in zip(ints, np.frombuffer(want, dt)))
    # one rank (or all but one) with another call: no rank passes, whichever it is
    for other in keys[1:]:
        theirs, want_theirs = _fingerprint(other, dt, summed, n)
        for odd in (1, n - 1):
            headers = [theirs] * odd + [mine] * (n - odd)
            got = reduce(headers).tobytes()
            assert got != want and got != want_theirs
