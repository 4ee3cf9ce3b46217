"""Run by tests/distributed/test_distributed_extra.py under ``mpiexec -n N``:
``python _mpi_worker_extra.py SCENARIO[,SCENARIO...] [TIMEOUT]``.

The one-round checked ``all_reduce`` (a small tensor travels with its fingerprint in one Allreduce
of the group's slot; a larger one follows a fingerprint round in MPI's Allreduce), the mismatch errors of every
collective, and the later additions (``all_to_all_single``, the object collectives, futures,
``PREMUL_SUM``, DDP's communication hooks), each against NumPy on every rank. Each scenario prints
``OK <scenario> rank <r>``; a failed check raises, which aborts every rank.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from _mpi_worker import _mlp, main  # (the same directory: the scripts' own)

import retrograd as rg
import retrograd.distributed as dist


def t(a: np.ndarray) -> rg.Tensor:
    return rg.tensor(a.copy())


def raises(call: Callable[[], Any], start: str, *parts: str, kind: type = RuntimeError) -> str:
    try:
        call()
    except kind as e:
        msg = str(e)
        assert msg.startswith(start), msg
        for part in parts:
            assert part in msg, (part, msg)
        return msg
    raise AssertionError(f"no {kind.__name__} starting {start!r}")


def in_step(n: int) -> None:
    """After an error every rank is still in step: the next collective works."""
    x = rg.ones(2)
    dist.all_reduce(x)
    assert x.tolist() == [float(n)] * 2


def agreed(got: rg.Tensor, want: np.ndarray) -> None:
    """The sum MPI made (in its own order): the same bits on every rank, and the sum to rounding."""
    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, got.numpy().tobytes())
    assert all(b == everyone[0] for b in everyone), "ranks disagree"
    assert got.numpy().dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14, atol=1e-14)


def checks(r: int, n: int) -> None:
    small = dist.group.WORLD._small
    assert small >= 1024
    rng = np.random.default_rng(7)
    every = [rng.standard_normal(37) for _ in range(n)]  # small: 296 bytes
    want = every[0].copy()
    for q in range(1, n):
        want = want + every[q]
    x = t(every[r])
    dist.all_reduce(x)  # (the slot's initial capacity holds it: one round)
    agreed(x, want)
    # the same tensor again (the reused views), then another op on it, then AVG
    for _ in range(3):
        x = t(every[r])
        dist.all_reduce(x)
        agreed(x, want)
    y = t(every[r])
    for op, fold in ((dist.ReduceOp.SUM, np.add), (dist.ReduceOp.MAX, np.maximum), (dist.ReduceOp.SUM, np.add),
                     (dist.ReduceOp.AVG, np.add)):
        y._data[...] = every[r]
        dist.all_reduce(y, op=op)
        expect = every[0].copy()
        for q in range(1, n):
            expect = fold(expect, every[q])
        if op is dist.ReduceOp.AVG:
            expect = expect / n
        agreed(y, expect)
    # a larger tensor (header round, then MPI's Allreduce), contiguous and not, blocking and async
    big = [rng.integers(-9, 9, size=(2 * small // 8 + 5,)).astype(np.float64) for _ in range(n)]
    z = t(big[r])
    dist.all_reduce(z)
    np.testing.assert_array_equal(z.numpy(), np.sum(big, axis=0))
    z = t(big[r])
    assert dist.all_reduce(z, op=dist.ReduceOp.AVG, async_op=True).wait()
    np.testing.assert_allclose(z.numpy(), np.mean(big, axis=0), rtol=1e-15)
    base = t(np.stack([big[r], big[r]], axis=1))
    dist.all_reduce(base[:, 1], op=dist.ReduceOp.MIN)
    np.testing.assert_array_equal(base[:, 1].numpy(), np.min(big, axis=0))
    np.testing.assert_array_equal(base[:, 0].numpy(), big[r])
    # the same small tensor again after a large one in between (its header filled the slot)
    a = t(every[r])
    dist.all_reduce(a)
    dist.all_reduce(t(big[r]))
    a._data[...] = every[r]
    dist.all_reduce(a)
    agreed(a, want)
    # a small async call is done at once; its Work still answers
    w = dist.all_reduce(t(every[r]), async_op=True)
    assert w.is_completed() and w.wait()
    # the version counter moves on every rank, whichever path ran
    for a in (every[r], big[r]):
        v = t(a)
        before = v._version
        dist.all_reduce(v)
        assert v._version == before + 1
    # an int32 scalar and a bool flag (small path)
    s = rg.tensor(r + 1, dtype=rg.int32)
    dist.all_reduce(s, op=dist.ReduceOp.PRODUCT)
    assert s.item() == int(np.prod(np.arange(1, n + 1)))
    flag = rg.tensor([r == n - 1, False])
    dist.all_reduce(flag)
    assert flag.tolist() == [True, False]


def mismatches(r: int, n: int) -> None:
    small = dist.group.WORLD._small
    last = f"rank {n - 1}: ["
    # all_reduce: shapes (small, large, one of each), dtypes, ops; the cached views of the last call
    cases: list[tuple[str, Callable[[], Any], tuple[str, ...]]] = [
        ("shapes, small", lambda: dist.all_reduce(rg.zeros(2 + r)), ("rank 0: [2] torch.float32", last)),
        ("shapes, large", lambda: dist.all_reduce(rg.zeros(small + r)), (f"rank 0: [{small}] torch.float32",)),
        ("small and large", lambda: dist.all_reduce(rg.zeros(3 if r == 0 else small * 4)),
         ("rank 0: [3] torch.float32", f"rank 1: [{small * 4}] torch.float32")),
        ("dtypes", lambda: dist.all_reduce(rg.zeros(3, dtype=rg.float64 if r == 0 else rg.float32)),
         ("rank 0: [3] torch.float64", "rank 1: [3] torch.float32")),
        # rank 0 asks for an AVG its integer dtype refuses: it still takes part, so nobody waits
        ("refused on one rank", lambda: dist.all_reduce(rg.zeros(3, dtype=rg.int64 if r == 0 else rg.float32),
                                                         op=dist.ReduceOp.AVG),
         ("rank 0: [3] torch.int64", "rank 1: [3] torch.float32")),
        ("async", lambda: dist.all_reduce(rg.zeros(2 + r), async_op=True), ("rank 0: [2] torch.float32",)),
    ]
    for what, call, parts in cases:
        msg = raises(call, "all_reduce: tensor shapes or dtypes differ across ranks (", *parts)
        assert msg.count("rank ") == n, (what, msg)
        in_step(n)
    raises(lambda: dist.all_reduce(rg.ones(3), op=dist.ReduceOp.MAX if r == 0 else dist.ReduceOp.SUM),
           "all_reduce: the ops differ across ranks (rank 0: MAX; rank 1: SUM")
    in_step(n)
    cached = rg.ones(5)
    dist.all_reduce(cached)
    dist.all_reduce(cached)  # (the views are reused now)
    raises(lambda: dist.all_reduce(cached if r == 0 else rg.ones(6)), "all_reduce: tensor shapes or dtypes differ",
           "rank 0: [5] torch.float32", "rank 1: [6] torch.float32")
    in_step(n)
    # a refused op on every rank is the local error, on every rank
    raises(lambda: dist.all_reduce(rg.zeros(3, dtype=rg.int64), op=dist.ReduceOp.AVG),
           "all_reduce: RedOpType.AVG is not supported on torch.int64 tensors", kind=ValueError)
    in_step(n)
    # every other collective: shapes that differ, then dtypes that differ
    for differ in ("shape", "dtype"):
        rows = 1 + r if differ == "shape" else 2
        kind = rg.float64 if differ == "dtype" and r == 0 else rg.float32

        def z(k: int) -> rg.Tensor:
            return rg.zeros(k, dtype=kind)

        others: list[tuple[str, Callable[[], Any]]] = [
            ("reduce", lambda: dist.reduce(z(rows), dst=0)),
            ("all_gather_into_tensor", lambda: dist.all_gather_into_tensor(z(n * rows), z(rows))),
            ("reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(z(rows), z(n * rows))),
            ("gather", lambda: dist.gather(z(rows), [z(rows) for _ in range(n)] if r == 0 else None)),
            ("scatter", lambda: dist.scatter(z(rows), [z(rows) for _ in range(n)] if r == 0 else None)),
            ("broadcast", lambda: dist.broadcast(z(rows), src=0)),
            ("all_gather", lambda: dist.all_gather([z(rows) for _ in range(n)], z(rows))),
            ("all_reduce", lambda: dist.all_reduce(z(rows))),
        ]
        named = ("] torch.float64;", "] torch.float32") if differ == "dtype" else ()
        for name, call in others:
            raises(call, f"{name}: tensor shapes or dtypes differ across ranks (", "rank 0: [", last, *named)
            in_step(n)


def additions(r: int, n: int) -> None:
    # all_to_all_single, equal blocks: rank r's block q (2 rows) goes to rank q
    x = np.arange(2 * n * 3, dtype=np.float64).reshape(2 * n, 3) + 100 * r
    out = rg.zeros(2 * n, 3, dtype=rg.float64)
    dist.all_to_all_single(out, t(x))
    want = np.concatenate([(np.arange(2 * n * 3).reshape(2 * n, 3) + 100 * q)[2 * r:2 * r + 2] for q in range(n)])
    np.testing.assert_array_equal(out.numpy(), want)
    # with split sizes: rank r sends q + 1 rows of value 10 r + q to rank q; it receives r + 1 rows from each
    in_splits = [q + 1 for q in range(n)]
    rows = np.concatenate([np.full((q + 1, 2), 10.0 * r + q) for q in range(n)])
    out = rg.zeros(n * (r + 1), 2, dtype=rg.float64)
    fut = dist.all_to_all_single(out, t(rows), [r + 1] * n, in_splits, async_op=True).get_future()
    got = fut.wait()
    assert len(got) == 1 and got[0] is out
    np.testing.assert_array_equal(out.numpy(), np.concatenate([np.full((r + 1, 2), 10.0 * q + r) for q in range(n)]))
    # a rank that expects another size: every rank raises, naming the sizes
    wrong = [r + 2 if r == 0 else r + 1] * n
    raises(lambda: dist.all_to_all_single(rg.zeros(sum(wrong), 2, dtype=rg.float64), t(rows), wrong, in_splits),
           "all_to_all_single: sizes differ across ranks (rank 0: from rank 0: 2 elements, output block 0 holds 4")
    in_step(n)
    # gather_object to the last rank, scatter_object_list from rank 1
    got_objects: list[Any] | None = [None] * n if r == n - 1 else None
    dist.gather_object({"rank": r, "data": np.arange(r + 1)}, got_objects, dst=n - 1)
    if r == n - 1:
        assert got_objects is not None and [o["rank"] for o in got_objects] == list(range(n))
        for q, o in enumerate(got_objects):
            np.testing.assert_array_equal(o["data"], np.arange(q + 1))
    one: list[Any] = [None]
    dist.scatter_object_list(one, [("for", q) for q in range(n)] if r == 1 else None, src=1)
    assert one == [("for", r)]
    # futures of the other collectives: their values are the outputs, with the reduced data
    every = [np.arange(4.0) * (q + 1) for q in range(n)]
    y = t(every[r])
    doubled = dist.all_reduce(y, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    np.testing.assert_array_equal(doubled.wait().numpy(), 2 * np.sum(every, axis=0))
    big = t(np.ones(4096) * r)  # (the large path: a pending Iallreduce behind the future)
    fut = dist.all_reduce(big, async_op=True).get_future()
    fut.wait()
    np.testing.assert_array_equal(fut.value()[0].numpy(), np.full(4096, float(sum(range(n)))))
    assert dist.barrier(async_op=True).get_future().wait() == []
    # PREMUL_SUM: every rank's tensor times the factor, summed (small and large; reduce; reduce_scatter)
    half = dist._make_nccl_premul_sum(0.5)
    for size in (4, 4096):
        parts = [np.arange(float(size)) + q for q in range(n)]
        y = t(parts[r])
        dist.all_reduce(y, op=half)
        np.testing.assert_allclose(y.numpy(), np.sum([0.5 * p for p in parts], axis=0), rtol=1e-15)
    parts = [np.arange(2.0 * n) * (q + 1) for q in range(n)]
    y = t(parts[r])
    assert dist.reduce(y, dst=n - 1, op=dist._make_nccl_premul_sum(rg.tensor(3.0)), async_op=True).wait()
    np.testing.assert_allclose(y.numpy(), np.sum([3 * p for p in parts], axis=0) if r == n - 1 else parts[r])
    out = rg.zeros(2, dtype=rg.float64)
    dist.reduce_scatter_tensor(out, t(parts[r]), op=half)
    np.testing.assert_allclose(out.numpy(), np.sum([0.5 * p for p in parts], axis=0)[2 * r:2 * r + 2])


def comm_hook(r: int, n: int) -> None:
    """DDP with PyTorch's default allreduce hook: the same steps as one process on the whole batch
    and as the built-in reduction, for one bucket and for several."""
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    rng = np.random.default_rng(0)
    X = rg.tensor(rng.standard_normal((10, 4 * n, 5)))
    Y = rg.tensor(rng.standard_normal((10, 4 * n, 3)))
    mine = slice(4 * r, 4 * r + 4)
    for cap in (None, 1e-4):
        ref = _mlp(0)
        ref_opt = rg.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        model = DDP(_mlp(r), bucket_cap_mb=cap)
        model.register_comm_hook(None, default_hooks.allreduce_hook)
        builtin = DDP(_mlp(r), bucket_cap_mb=cap)
        opt = rg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt2 = rg.optim.SGD(builtin.parameters(), lr=0.1, momentum=0.9)
        for step in range(10):
            for m, o, xs, ys in ((ref, ref_opt, X[step], Y[step]), (model, opt, X[step][mine], Y[step][mine]),
                                 (builtin, opt2, X[step][mine], Y[step][mine])):
                o.zero_grad()
                rg.nn.functional.mse_loss(m(xs), ys).backward()
                o.step()
        for p, q, b in zip(model.module.parameters(), ref.parameters(), builtin.module.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-6)
            np.testing.assert_allclose(p.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)
        every: list[Any] = [None] * n
        dist.all_gather_object(every, [p.detach().numpy() for p in model.parameters()])
        for theirs in every:  # the same parameters on every rank
            for a, b in zip(theirs, every[0]):
                np.testing.assert_array_equal(a, b)


def mixed_async(r: int, n: int) -> None:
    """``async_op`` is each rank's own choice: even ranks wait on a Work, odd ones block (MPI's
    blocking and non-blocking collectives do not match each other)."""
    mine = r % 2 == 0

    def run(call: Callable[[bool], Any]) -> None:
        work = call(mine)
        if mine:
            assert work is not None and work.wait()
        else:
            assert work is None

    every = [np.arange(6.0) + 10 * q for q in range(n)]
    pg = dist.group.WORLD
    for check in (True, False):
        pg._check = check  # (every rank alike: the checked and the unchecked paths)
        for size in (6, 3000):  # (small: one Allgather; large: header round, then the data)
            parts = [np.resize(e, size) for e in every]
            x = t(parts[r])
            run(lambda a: dist.all_reduce(x, async_op=a))
            np.testing.assert_array_equal(x.numpy(), np.sum(parts, axis=0))
    pg._check = True
    x = t(every[r])
    run(lambda a: dist.broadcast(x, src=n - 1, async_op=a))
    np.testing.assert_array_equal(x.numpy(), every[n - 1])
    x = t(every[r])
    run(lambda a: dist.reduce(x, dst=0, async_op=a))
    np.testing.assert_array_equal(x.numpy(), np.sum(every, axis=0) if r == 0 else every[r])
    outs = [rg.zeros(6, dtype=rg.float64) for _ in range(n)]
    run(lambda a: dist.all_gather(outs, t(every[r]), async_op=a))
    flat = rg.zeros(6 * n, dtype=rg.float64)
    run(lambda a: dist.all_gather_into_tensor(flat, t(every[r]), async_op=a))
    np.testing.assert_array_equal(flat.numpy(), np.concatenate(every))
    part = rg.zeros(2, dtype=rg.float64)
    run(lambda a: dist.reduce_scatter_tensor(part, t(np.resize(every[r], 2 * n)), async_op=a))
    np.testing.assert_array_equal(part.numpy(), np.sum([np.resize(e, 2 * n) for e in every], axis=0)[2 * r:2 * r + 2])
    glist = [rg.zeros(6, dtype=rg.float64) for _ in range(n)] if r == 0 else None
    run(lambda a: dist.gather(t(every[r]), glist, dst=0, async_op=a))
    got = rg.zeros(6, dtype=rg.float64)
    run(lambda a: dist.scatter(got, [t(e) for e in every] if r == 0 else None, src=0, async_op=a))
    np.testing.assert_array_equal(got.numpy(), every[r])
    out = rg.zeros(n, dtype=rg.float64)
    run(lambda a: dist.all_to_all_single(out, rg.full((n,), float(r), dtype=rg.float64), async_op=a))
    np.testing.assert_array_equal(out.numpy(), np.arange(float(n)))
    outs = [rg.zeros(1, dtype=rg.float64) for _ in range(n)]
    run(lambda a: dist.all_to_all(outs, [rg.full((1,), float(r), dtype=rg.float64) for _ in range(n)], async_op=a))
    assert [o.item() for o in outs] == [float(q) for q in range(n)]
    run(lambda a: dist.barrier(async_op=a))


def agree(r: int, n: int) -> None:
    """Launched with different settings per rank: every rank uses the most cautious."""
    import os

    pg = dist.group.WORLD
    assert pg._small == 1024 and pg._check is True, (pg._small, pg._check, os.environ)
    x = rg.ones(600)  # (2.4 KB: a header round and MPI's Allreduce on every rank)
    dist.all_reduce(x)
    assert x.tolist() == [float(n)] * 600
    y = rg.ones(600 + r)  # (and the check is on everywhere, so a mismatch is the error)
    try:
        dist.all_reduce(y)
    except RuntimeError as e:
        assert str(e).startswith("all_reduce: tensor shapes or dtypes differ across ranks (rank 0: [600]"), str(e)
    else:
        raise AssertionError("no error")


if __name__ == "__main__":
    main(globals())
