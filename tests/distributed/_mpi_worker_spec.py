"""Run by tests/distributed/test_distributed_spec.py under ``mpiexec -n N``:
``python _mpi_worker_spec.py SCENARIO[,SCENARIO...] [TIMEOUT]``.

``all_reduce``'s prepared calls (issue #15): a repeated call of one tensor and op hands mpi4py a
prebuilt buffer spec ``[array, count, datatype]`` (unchecked: ``pg._direct``; checked: the
slot's and the two-round call's), and whatever changed since the call that prepared it (the
tensor's memory, the op, ``async_op``, the check switched on) is seen: results against NumPy,
and a mismatch after unchecked calls is still the error naming every rank. Each scenario prints
``OK <scenario> rank <r>``; a failed check raises, which aborts every rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _mpi_worker import main  # (the same directory: the scripts' own)
from _mpi_worker_fold import expected, in_step, raises_naming, rank_data
from mpi4py import MPI

import retrograd as rg
import retrograd.distributed as dist


def _is_spec(spec: Any, arr: np.ndarray) -> bool:
    """``spec`` is mpi4py's ``[buffer, count, datatype]`` for exactly ``arr``'s memory and type."""
    return (isinstance(spec, list) and isinstance(spec[0], MPI.buffer) and spec[0].address == MPI.buffer(arr).address
            and spec[0].nbytes == arr.nbytes and spec[1] == arr.size
            and spec[2].Get_size() == arr.itemsize and spec[2] == MPI.Datatype.fromcode(arr.dtype.char))


def _fresh(t: Any, shape: tuple[int, ...], dtype: Any, r: int) -> None:
    t._data[...] = rank_data(shape, dtype, r)


def unchecked(r: int, n: int) -> None:
    pg = dist.group.WORLD
    pg._check = False
    ops = {"SUM": dist.ReduceOp.SUM, "MAX": dist.ReduceOp.MAX, "MIN": dist.ReduceOp.MIN}
    # every dtype the direct path takes, every op, small and past the blocking limit
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16, np.float32,
                  np.float64):
        for shape in ((), (3, 5), (pg._small // np.dtype(dtype).itemsize + 3,)):
            for op in ops.values():
                x = rg.from_numpy(rank_data(shape, dtype, r))
                for i in range(3):
                    _fresh(x, shape, dtype, r)
                    before = x._version
                    assert dist.all_reduce(x, op=op) is None
                    np.testing.assert_array_equal(x.numpy(), expected(shape, dtype, op, n), err_msg=f"{dtype} {op}")
                    assert x._version == before + 1
                    plan = pg._direct
                    assert plan is not None and plan[0] is x and _is_spec(plan[5], x._data), (dtype, shape, i)
    # the op changes: the new op, not the prepared one
    x = rg.from_numpy(rank_data((7,), np.float32, r))
    dist.all_reduce(x)
    _fresh(x, (7,), np.float32, r)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(x.numpy(), expected((7,), np.float32, dist.ReduceOp.MAX, n))
    # the tensor's memory changes (x.data = ...): the new memory, with its count; the old one untouched
    old = x._data
    _fresh(x, (7,), np.float32, r)
    dist.all_reduce(x)
    kept = old.copy()
    x.data = rg.from_numpy(rank_data((300,), np.float64, r))
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), expected((300,), np.float64, dist.ReduceOp.SUM, n))
    np.testing.assert_array_equal(old, kept)
    assert _is_spec(pg._direct[5], x._data)
    # resize_ (new memory, another count): likewise
    x.resize_(50)
    _fresh(x, (50,), np.float64, r)
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), expected((50,), np.float64, dist.ReduceOp.SUM, n))
    assert _is_spec(pg._direct[5], x._data) and pg._direct[5][1] == 50
    _fresh(x, (50,), np.float64, r)
    # async_op after blocking calls of a tensor past the blocking limit: a Work, done at wait()
    big = rg.from_numpy(rank_data((pg._small // 4 + 1000,), np.float32, r))
    dist.all_reduce(big)
    _fresh(big, big.shape, np.float32, r)
    work = dist.all_reduce(big, async_op=True)
    assert isinstance(work, dist.Work)
    work.wait()
    np.testing.assert_array_equal(big.numpy(), expected(tuple(big.shape), np.float32, dist.ReduceOp.SUM, n))
    # and a small one: a finished Work
    work = dist.all_reduce(x, async_op=True)
    assert work is not None and work.is_completed()
    np.testing.assert_array_equal(x.numpy(), expected((50,), np.float64, dist.ReduceOp.SUM, n))
    # a group of its own: its own prepared call, the world's untouched
    sub = dist.new_group(list(range(n)))
    sub._check = False
    y = rg.from_numpy(rank_data((5,), np.int64, r))
    dist.all_reduce(y, group=sub)
    np.testing.assert_array_equal(y.numpy(), expected((5,), np.int64, dist.ReduceOp.SUM, n))
    assert sub._direct is not None and sub._direct[0] is y and pg._direct[0] is x
    pg._check = True


def check_back_on(r: int, n: int) -> None:
    """Unchecked calls prepare x's call; with the check on again, a mismatch on x is still the
    error naming every rank, x unchanged, and the ranks stay in step."""
    pg = dist.group.WORLD
    x = rg.full((2, 3), 1.0)
    pg._check = False
    dist.all_reduce(x)
    dist.all_reduce(x)
    assert pg._direct is not None and pg._direct[0] is x
    pg._check = True
    mine = x if r == 0 else rg.full((3, 2), 1.0)
    before = mine.numpy().copy()
    raises_naming("all_reduce", lambda: dist.all_reduce(mine), ("rank 0: [2, 3] torch.float32",
                                                                f"rank {n - 1}: [3, 2] torch.float32"), n)
    np.testing.assert_array_equal(mine.numpy(), before)
    in_step(n)
    _fresh(x, (2, 3), np.float32, r)
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), expected((2, 3), np.float32, dist.ReduceOp.SUM, n))


def checked(r: int, n: int) -> None:
    """The checked calls' prepared specs: the folded slot's, and the two-round call's (the
    fingerprint words and the tensor's own memory), with results against NumPy."""
    pg = dist.group.WORLD
    assert pg._check
    for dtype in (np.float32, np.float64, np.int32, np.complex64):
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG) if np.dtype(dtype).kind in "fc" else (dist.ReduceOp.SUM,):
            for shape in ((40,), (pg._small // np.dtype(dtype).itemsize + 5,)):
                x = rg.from_numpy(rank_data(shape, dtype, r))
                for _ in range(3):
                    _fresh(x, shape, dtype, r)
                    dist.all_reduce(x, op=op)
                    np.testing.assert_allclose(x.numpy(), expected(shape, dtype, op, n), rtol=1e-6)
                small = x._data.nbytes <= pg._small
                if small:
                    plan = pg._plan
                    assert plan is not None and plan[0] is x._data
                    slot = pg._scratch[:plan[3][0].nbytes].view(x._data.dtype)  # (the slot: the scratch's start)
                    assert _is_spec(plan[3], slot)
                else:
                    big = pg._big_plan
                    assert big is not None and big[0] is x._data
                    assert _is_spec(big[7], big[3]) and _is_spec(big[8], x._data)


def _prepared(shape: tuple[int, ...], dtype: Any, r: int, op: Any = dist.ReduceOp.SUM) -> Any:
    """A tensor whose checked call is prepared on this rank (two calls: the second folds)."""
    x = rg.from_numpy(rank_data(shape, dtype, r))
    for _ in range(2):
        dist.all_reduce(x, op=op)
    return x


def prepared_checked(r: int, n: int) -> None:
    """A repeated checked call (the prepared one ``all_reduce`` runs first, on the same tensor,
    memory and op): results against NumPy (SUM, AVG, MAX; async_op), whatever changed since is
    seen (the tensor's memory), and a rank whose repeated call meets another rank's other call
    (another shape of the same size, more elements, another dtype of the same size, another op)
    raises the error naming every rank on every rank, its tensor unchanged, the ranks in step."""
    from _mpi_worker_extra import raises

    pg = dist.group.WORLD
    for dtype, op in ((np.float32, dist.ReduceOp.SUM), (np.float64, dist.ReduceOp.AVG),
                      (np.int32, dist.ReduceOp.MAX), (np.complex64, dist.ReduceOp.SUM)):
        x = _prepared((3, 5), dtype, r, op)
        for i in range(3):
            _fresh(x, (3, 5), dtype, r)
            before = x._version
            work = dist.all_reduce(x, op=op, async_op=i == 2)
            assert (work is None) if i < 2 else (work is not None and work.is_completed())
            assert x._version == before + 1 and pg._plan is not None and pg._plan[11] is x
            np.testing.assert_allclose(x.numpy(), expected((3, 5), dtype, op, n), rtol=1e-6, err_msg=f"{dtype} {op}")
    # another tensor object over the same memory (x.detach() each step): the prepared views serve it
    x = _prepared((2, 5), np.float64, r, dist.ReduceOp.MAX)
    for _ in range(2):
        _fresh(x, (2, 5), np.float64, r)
        view = x.detach()
        before = x._version
        dist.all_reduce(view, op=dist.ReduceOp.MAX)
        assert pg._plan is not None and pg._plan[0] is x._data and pg._plan[11] is view
        assert x._version == before + 1  # (one storage, one version counter)
        np.testing.assert_array_equal(x.numpy(), expected((2, 5), np.float64, dist.ReduceOp.MAX, n))
    # new memory of the same shape (x.data = ...): the new memory is reduced, the old one untouched
    x = _prepared((6,), np.float32, r)
    old, kept = x._data, x._data.copy()
    x.data = rg.from_numpy(rank_data((6,), np.float32, r))
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), expected((6,), np.float32, dist.ReduceOp.SUM, n))
    np.testing.assert_array_equal(old, kept)
    # rank 0 repeats its prepared call; the others call with another tensor or op
    f32 = np.float32
    cases = [((2, 3), f32, (3, 2), f32), ((6,), f32, (7,), f32), ((4,), f32, (4,), np.int32),
             ((4,), np.float64, (8,), f32)]
    for shape, dtype, other_shape, other_dtype in cases:
        x = _prepared(shape, dtype, r)
        mine = x if r == 0 else rg.from_numpy(np.full(other_shape, 2, dtype=other_dtype))
        before = mine.numpy().copy()
        raises(lambda: dist.all_reduce(mine), "all_reduce: tensor shapes or dtypes differ across ranks (",
               f"rank 0: {list(shape)} {x.dtype}", f"rank {n - 1}: {list(other_shape)} {rg.from_numpy(np.zeros(1, other_dtype)).dtype}")
        np.testing.assert_array_equal(mine.numpy(), before)
        in_step(n)
    x = _prepared((4,), np.float32, r)
    op = dist.ReduceOp.SUM if r == 0 else dist.ReduceOp.MAX
    raises(lambda: dist.all_reduce(x, op=op), "all_reduce: the ops differ across ranks (rank 0: SUM; rank 1: MAX")
    in_step(n)


def mixed_async_large(r: int, n: int) -> None:
    """A checked call past the slot (a fingerprint round, then the data): whether the data goes
    by MPI's blocking Allreduce (every rank blocks) or by Iallreduce (some rank is async) is
    decided by the fingerprint round, alike on every rank, so a rank's own ``async_op`` never
    leaves the ranks in collectives that do not match. Each pattern is repeated (the prepared
    call's path too); results against NumPy."""
    pg = dist.group.WORLD
    shape = (pg._small // 4 + 100,)
    x = rg.from_numpy(rank_data(shape, np.float32, r))
    want = expected(shape, np.float32, dist.ReduceOp.SUM, n)
    patterns = [[False] * n, [q % 2 == 0 for q in range(n)], [q == n - 1 for q in range(n)], [True] * n,
                [False] * n]
    calls: list[str] = []

    class Counting:
        """The group's communicator, noting which reductions each call starts."""

        def __init__(self, comm: Any) -> None:
            self.comm = comm

        def __getattr__(self, name: str) -> Any:
            if name in ("Allreduce", "Iallreduce"):
                calls.append(name)
            return getattr(self.comm, name)

    comm, pg._comm = pg._comm, Counting(pg._comm)
    try:
        for pattern in patterns:
            for i in range(3):
                _fresh(x, shape, np.float32, r)
                calls.clear()
                work = dist.all_reduce(x, async_op=pattern[r])
                if pattern[r]:
                    assert isinstance(work, dist.Work)
                    work.wait()
                else:
                    assert work is None
                    assert pg._big_plan is not None and pg._big_plan[0] is x._data
                np.testing.assert_array_equal(x.numpy(), want, err_msg=f"{pattern} call {i}")
                # the fingerprint round, then the data: blocking only when every rank blocks
                assert calls == ["Allreduce", "Iallreduce" if any(pattern) else "Allreduce"], (pattern, i, calls)
    finally:
        pg._comm = comm


def watchdog_quiet(r: int, n: int) -> None:
    """Run with a 3 s timeout: short calls one after another for longer than the timeout (every
    prepared path, and a group with a shorter timeout of its own), and idle time longer than the
    timeout between two calls, never trip the watchdog (it times each call, not a run of them).
    (Seconds, not less: on a loaded machine one call of two oversubscribed ranks can take 0.5 s.)"""
    import datetime
    import time

    pg = dist.group.WORLD
    small = rg.from_numpy(rank_data((6,), np.float32, r))
    big = rg.from_numpy(rank_data((pg._small // 4 + 10,), np.float32, r))
    sub = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=2))
    ends = time.monotonic() + 7
    calls = 0
    while time.monotonic() < ends or calls < 50:
        dist.all_reduce(small)
        dist.all_reduce(big)
        dist.all_reduce(small, group=sub)
        dist.broadcast(small, src=0)
        calls += 1
    time.sleep(4)  # (no collective running: nothing to time)
    x = rg.from_numpy(rank_data((6,), np.float32, r))
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), expected((6,), np.float32, dist.ReduceOp.SUM, n))


def watchdog_group_stuck(r: int, n: int) -> None:
    """Run with a 60 s timeout: a group whose timeout is 1 s, and rank 1 never reaches its
    collective: rank 0 aborts the job after the group's timeout."""
    import datetime
    import time

    sub = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=1))
    if r == 1:
        time.sleep(60)
    dist.all_reduce(rg.ones(2), group=sub)


if __name__ == "__main__":
    main(globals())
