"""Run by tests/distributed/test_distributed_fold.py under ``mpiexec -n N``:
``python _mpi_worker_fold.py SCENARIO[,SCENARIO...] [TIMEOUT]``.

The checked ``all_reduce``'s slot (a fingerprint folded into one Allreduce with the data, the
capacity every rank agrees on from the previous call) against NumPy, and the mismatches it must
turn into an error naming every rank's tensor (never MPI's truncation abort, never a tensor half
written) in ``all_reduce``, ``broadcast`` and ``reduce``. Each scenario prints
``OK <scenario> rank <r>``; a failed check raises, which aborts every rank.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from _mpi_worker import main  # (the same directory: the scripts' own)

import retrograd as rg
import retrograd.distributed as dist


def rank_data(shape: tuple[int, ...], dtype: Any, q: int) -> np.ndarray:
    """Rank q's tensor: small integers (sums and means exact in every dtype), different per rank."""
    size = int(np.prod(shape))
    values = (np.arange(size) * 7 + 3 * q) % 11 - 5
    if np.dtype(dtype).kind == "u":
        values = values + 5
    out = values.astype(dtype).reshape(shape)
    if np.dtype(dtype).kind == "c":
        out = out + 1j * ((np.arange(size) + q) % 5).reshape(shape)
    return np.asarray(out, dtype=dtype)  # (a 0-d result of arithmetic is a NumPy scalar)


def expected(shape: tuple[int, ...], dtype: Any, op: Any, n: int) -> np.ndarray:
    every = np.stack([rank_data(shape, dtype, q) for q in range(n)])
    if op is dist.ReduceOp.MAX:
        return every.max(axis=0)
    if op is dist.ReduceOp.MIN:
        return every.min(axis=0)
    total = every.sum(axis=0, dtype=dtype)
    return total / n if op is dist.ReduceOp.AVG else total


def folds(r: int, n: int) -> None:
    pg = dist.group.WORLD
    assert pg._cap == 1024, pg._cap  # (the initial capacity, on every rank)
    ops_of = {"f": ("SUM", "AVG", "MAX", "MIN"), "c": ("SUM", "AVG"), "i": ("SUM", "MAX", "MIN"),
              "u": ("SUM", "MAX", "MIN")}
    for dtype in (np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64,
                  np.int8, np.float16):
        for op_name in ops_of[np.dtype(dtype).kind]:
            op = getattr(dist.ReduceOp, op_name)
            for shape in ((), (5,), (3, 4), (257,)):
                want = expected(shape, dtype, op, n)
                x = rg.from_numpy(rank_data(shape, dtype, r).copy())
                for _ in range(3):  # the first call may need a fingerprint round; then the cached views
                    x._data[...] = rank_data(shape, dtype, r)
                    before = x._version
                    assert dist.all_reduce(x, op=op) is None
                    assert x._version == before + 1
                    np.testing.assert_array_equal(x.numpy(), want, err_msg=f"{dtype} {op_name} {shape}")
                nbytes = want.nbytes
                foldable = np.dtype(dtype).itemsize >= 4
                # every rank set the next capacity from this call's size: the same on every rank
                assert pg._cap == (-(-nbytes // 16) * 16 if foldable else 0), (dtype, shape, pg._cap)
    # a tensor that is not contiguous (a column), then an async call (done at once)
    base = rg.from_numpy(np.stack([rank_data((6,), np.float64, r)] * 2, axis=1).copy())
    dist.all_reduce(base[:, 1], op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(base[:, 1].numpy(), expected((6,), np.float64, dist.ReduceOp.MAX, n))
    np.testing.assert_array_equal(base[:, 0].numpy(), rank_data((6,), np.float64, r))
    x = rg.from_numpy(rank_data((7,), np.float32, r).copy())
    w = dist.all_reduce(x, async_op=True)
    assert w is not None and w.is_completed() and w.wait()
    np.testing.assert_array_equal(x.numpy(), expected((7,), np.float32, dist.ReduceOp.SUM, n))
    # at the largest folded size, and one word past it (a fingerprint round, then MPI's Allreduce)
    for count in (pg._small // 4, pg._small // 4 + 4):
        want = expected((count,), np.float32, dist.ReduceOp.SUM, n)
        for _ in range(2):
            x = rg.from_numpy(rank_data((count,), np.float32, r).copy())
            dist.all_reduce(x)
            np.testing.assert_array_equal(x.numpy(), want)
    assert pg._cap == 0
    # the same large tensor again and again (a fingerprint round, then MPI's Allreduce in its
    # memory, from a cached plan), each op, then another op on it and another tensor
    count = pg._small // 8 + 3
    big = rg.from_numpy(rank_data((count,), np.float64, r).copy())
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.MIN):
        want = expected((count,), np.float64, op, n)
        for i in range(3):
            big._data[...] = rank_data((count,), np.float64, r)
            before = big._version
            assert dist.all_reduce(big, op=op) is None
            assert big._version == before + 1
            np.testing.assert_array_equal(big.numpy(), want, err_msg=f"{op} call {i}")
            assert pg._big_plan is not None and pg._big_plan[0] is big._data and pg._big_plan[1] is op
    # a repeated call larger than the slot's capacity, within its limit: two rounds once, then one
    mid = rg.from_numpy(rank_data((3000,), np.float32, r).copy())
    assert pg._cap < mid._data.nbytes <= pg._small
    for i in range(3):
        mid._data[...] = rank_data((3000,), np.float32, r)
        dist.all_reduce(mid)
        np.testing.assert_array_equal(mid.numpy(), expected((3000,), np.float32, dist.ReduceOp.SUM, n))
        assert pg._cap == 12000
        assert pg._plan is not None and (pg._plan[0] is mid._data) == (i > 0), i  # (folded from the 2nd call)
    # an empty tensor
    e = rg.zeros(0)
    dist.all_reduce(e)
    assert e.shape == (0,)


def in_step(n: int) -> None:
    """After an error every rank is still in step: the next collectives work."""
    x = rg.ones(2)
    dist.all_reduce(x)
    assert x.tolist() == [float(n)] * 2
    y = rg.ones(3000, dtype=rg.float64)
    dist.all_reduce(y)
    assert y.numpy().tolist() == [float(n)] * 3000


def raises_naming(name: str, call: Callable[[], Any], parts: tuple[str, ...], n: int) -> None:
    try:
        call()
    except RuntimeError as e:
        msg = str(e)
        assert msg.startswith(f"{name}: tensor shapes or dtypes differ across ranks ("), msg
        for part in parts:
            assert part in msg, (part, msg)
        assert msg.count("rank ") == n, msg
        return
    raise AssertionError(f"{name}: no error")


def mismatches(r: int, n: int) -> None:
    """Rank 0's tensor differs from the others': same numel another shape, fewer or more elements
    (within the slot, past it, far past it: MPI would truncate), another dtype (of the same size,
    of another size, one that does not fold). Each call comes after a matching call of rank 0's
    tensor, so the slot's capacity and the cached views are rank 0's tensor's."""
    pg = dist.group.WORLD
    f32, f64 = rg.float32, rg.float64
    cases: list[tuple[str, tuple[tuple[int, ...], Any], tuple[tuple[int, ...], Any]]] = [
        ("same numel, another shape", ((2, 3), f32), ((3, 2), f32)),
        ("same numel, flat", ((6,), f32), ((2, 3), f32)),
        ("fewer elements", ((5,), f32), ((9,), f32)),
        ("more elements", ((9,), f32), ((5,), f32)),
        ("past the slot", ((3,), f32), ((pg._small // 4 + 100,), f32)),
        ("far past the slot", ((100_000,), f32), ((3,), f32)),
        ("both large", ((20_000,), f64), ((20_001,), f64)),
        ("dtype of another size", ((4,), f64), ((4,), f32)),
        ("dtype of the same size", ((4,), f32), ((4,), rg.int32)),
        ("complex and real", ((4,), rg.complex128), ((8,), f64)),
        ("a dtype that does not fold", ((4,), f32), ((4,), rg.int8)),
        ("int8 and float16", ((4,), rg.int8), ((2,), rg.float16)),
    ]
    for what, zero, other in cases:
        shape, dtype = zero if r == 0 else other
        parts = (f"rank 0: {list(zero[0])} {zero[1]}", f"rank {n - 1}: {list(other[0])} {other[1]}")
        for name in ("all_reduce", "broadcast", "reduce"):
            mine = rg.full(shape, 2, dtype=dtype)
            # a matching call first: every rank's slot and views are rank 0's tensor's now
            agreed = rg.full(zero[0], 1, dtype=zero[1])
            dist.all_reduce(agreed)
            dist.all_reduce(agreed)
            call: dict[str, Callable[[], Any]] = {
                "all_reduce": lambda: dist.all_reduce(agreed if r == 0 else mine),
                "broadcast": lambda: dist.broadcast(mine, src=n - 1),
                "reduce": lambda: dist.reduce(mine, dst=0),
            }
            target = agreed if (name == "all_reduce" and r == 0) else mine
            before = target.numpy().copy()
            raises_naming(name, call[name], parts, n)
            np.testing.assert_array_equal(target.numpy(), before, err_msg=f"{what}: {name} wrote into the tensor")
            in_step(n)
        # (the capacity after a mismatch is the initial one, on every rank)
        raises_naming("all_reduce", lambda: dist.all_reduce(rg.zeros(shape, dtype=dtype)), parts, n)
        assert pg._cap == 1024, pg._cap
        in_step(n)


if __name__ == "__main__":
    main(globals())
