"""Run by tests/distributed under ``mpiexec -n N``: ``python _mpi_worker.py SCENARIO[,SCENARIO...] [TIMEOUT]``.

Several scenarios share one launch (starting Python N times is most of a launch's cost). Each checks its results against NumPy (or a one-process reference) on every rank and
prints ``OK <scenario> rank <r>``; a failed check raises, which aborts every rank.
"""

from __future__ import annotations

import datetime
import sys
import time
import warnings
from typing import Any

import numpy as np

import retrograd as rg
import retrograd.distributed as dist


def data(rank: int, shape: tuple[int, ...] = (3, 4), dtype: type = np.float64) -> np.ndarray:
    values = np.random.default_rng(100 + rank).integers(-5, 6, size=shape)
    return values.astype(dtype)


def t(a: np.ndarray) -> rg.Tensor:
    return rg.tensor(a.copy())


def close(got: rg.Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0)
    assert got.numpy().dtype == want.dtype, (got.dtype, want.dtype)


def collectives(r: int, n: int) -> None:
    every = [data(q) for q in range(n)]
    for op, fold in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.AVG, np.mean), (dist.ReduceOp.MAX, np.max),
                     (dist.ReduceOp.MIN, np.min), (dist.ReduceOp.PRODUCT, np.prod)):
        x = t(every[r])
        assert dist.all_reduce(x, op=op) is None
        close(x, fold(np.stack(every), axis=0))
    ints = [data(q, dtype=np.int32) for q in range(n)]
    x = t(ints[r])
    dist.all_reduce(x, op=dist.ReduceOp.BXOR)
    close(x, np.bitwise_xor.reduce(np.stack(ints), axis=0))
    # async: a Work handle
    x = t(every[r])
    work = dist.all_reduce(x, async_op=True)
    assert work.wait() is True and work.is_completed()
    close(x, np.sum(np.stack(every), axis=0))
    # a non-contiguous tensor is reduced in place, its base untouched elsewhere
    base = t(np.stack([every[r], every[r]], axis=1))  # (3, 2, 4)
    view = base[:, 0]
    dist.all_reduce(view)
    close(base[:, 0], np.sum(np.stack(every), axis=0))
    close(base[:, 1], every[r])
    # float16 and complex128 sums, AVG of complex; AVG of integers is refused on every rank
    x = t(every[r].astype(np.float16))
    dist.all_reduce(x)
    close(x, np.sum(np.stack(every), axis=0).astype(np.float16))
    cplx = [every[q] + 1j * every[(q + 1) % n] for q in range(n)]
    x = t(cplx[r])
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    close(x, np.mean(np.stack(cplx), axis=0))
    try:
        dist.all_reduce(t(ints[r]), op=dist.ReduceOp.AVG)
    except ValueError as e:
        assert str(e) == "all_reduce: RedOpType.AVG is not supported on torch.int32 tensors", str(e)
    else:
        raise AssertionError("AVG of integers did not raise")
    # bool: sum is "any"
    flags = [np.array([q == 0, False, True]) for q in range(n)]
    b = t(flags[r])
    dist.all_reduce(b)
    close(b, np.any(np.stack(flags), axis=0))
    # broadcast from the last rank
    x = t(every[r])
    dist.broadcast(x, src=n - 1)
    close(x, every[n - 1])
    x = t(every[r])
    dist.broadcast(x, src=0, async_op=True).wait()
    close(x, every[0])
    # reduce to rank 1: others unchanged
    x = t(every[r])
    dist.reduce(x, dst=1, op=dist.ReduceOp.SUM)
    close(x, np.sum(np.stack(every), axis=0) if r == 1 else every[r])
    # all_gather, all_gather_into_tensor
    out = [rg.zeros(3, 4, dtype=rg.float64) for _ in range(n)]
    dist.all_gather(out, t(every[r]))
    for q in range(n):
        close(out[q], every[q])
    flat = rg.zeros(n * 3, 4, dtype=rg.float64)
    dist.all_gather_into_tensor(flat, t(every[r]))
    close(flat, np.concatenate(every))
    # reduce_scatter_tensor: rank r gets row block r of the sum
    big = [data(q, shape=(2 * n, 3)) for q in range(n)]
    out1 = rg.zeros(2, 3, dtype=rg.float64)
    dist.reduce_scatter_tensor(out1, t(big[r]))
    close(out1, np.sum(np.stack(big), axis=0)[2 * r: 2 * r + 2])
    out1 = rg.zeros(2, 3, dtype=rg.float64)
    dist.reduce_scatter_tensor(out1, t(big[r]), op=dist.ReduceOp.AVG)
    close(out1, np.mean(np.stack(big), axis=0)[2 * r: 2 * r + 2])
    # gather to 0, scatter from 1
    glist = [rg.zeros(3, 4, dtype=rg.float64) for _ in range(n)] if r == 0 else None
    dist.gather(t(every[r]), glist, dst=0)
    if r == 0:
        for q in range(n):
            close(glist[q], every[q])
    recv = rg.zeros(3, 4, dtype=rg.float64)
    dist.scatter(recv, [t(every[q] * 10) for q in range(n)] if r == 1 else None, src=1)
    close(recv, every[r] * 10)
    # the async forms of the others
    flat = rg.zeros(n * 3, 4, dtype=rg.float64)
    w1 = dist.all_gather_into_tensor(flat, t(every[r]), async_op=True)
    out1 = rg.zeros(2, 3, dtype=rg.float64)
    w2 = dist.reduce_scatter_tensor(out1, t(big[r]), async_op=True)
    glist = [rg.zeros(3, 4, dtype=rg.float64) for _ in range(n)] if r == n - 1 else None
    w3 = dist.gather(t(every[r]), glist, dst=n - 1, async_op=True)
    for w in (w1, w2, w3):
        assert w.wait() is True
    close(flat, np.concatenate(every))
    close(out1, np.sum(np.stack(big), axis=0)[2 * r: 2 * r + 2])
    if r == n - 1:
        for q in range(n):
            close(glist[q], every[q])
    # all_to_all with unequal sizes: rank r sends q + 1 values r*10 + q to rank q
    ins = [rg.full((q + 1,), float(r * 10 + q), dtype=rg.float64) for q in range(n)]
    outs = [rg.zeros(r + 1, dtype=rg.float64) for _ in range(n)]
    dist.all_to_all(outs, ins)
    for q in range(n):
        close(outs[q], np.full(r + 1, float(q * 10 + r)))
    outs = [rg.zeros(r + 1, dtype=rg.float64) for _ in range(n)]
    assert dist.all_to_all(outs, ins, async_op=True).wait()
    for q in range(n):
        close(outs[q], np.full(r + 1, float(q * 10 + r)))
    # send/recv around a ring, isend/irecv back
    right, left = (r + 1) % n, (r - 1) % n
    if r % 2 == 0:
        dist.send(t(every[r]), dst=right)
        got = rg.zeros(3, 4, dtype=rg.float64)
        assert dist.recv(got, src=left) == left
    else:
        got = rg.zeros(3, 4, dtype=rg.float64)
        assert dist.recv(got) == left  # any source
        dist.send(t(every[r]), dst=right)
    close(got, every[left])
    back = rg.zeros(3, 4, dtype=rg.float64)
    works = [dist.isend(t(every[r]), dst=left), dist.irecv(back, src=right)]
    for w in works:
        w.wait()
    close(back, every[right])
    # objects
    objs = [{"rank": r, "a": np.arange(3) * r}] if r == 0 else [None]
    dist.broadcast_object_list(objs, src=0)
    assert objs[0]["rank"] == 0
    gathered: list = [None] * n
    dist.all_gather_object(gathered, ("r", r))
    assert gathered == [("r", q) for q in range(n)]
    # groups: the even ranks only
    evens = dist.new_group([q for q in range(n) if q % 2 == 0])
    x = t(every[r])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist.all_reduce(x, group=evens)
    assert (r % 2 == 1) == any("does not belong to the given group" in str(w.message) for w in caught)
    if r % 2 == 0:
        assert dist.get_world_size(evens) == len(range(0, n, 2)) and dist.get_rank(evens) == r // 2
        close(x, np.sum(np.stack(every[0::2]), axis=0))
    else:
        assert dist.get_rank(evens) == -1
        close(x, every[r])
    dist.barrier()
    assert dist.barrier(async_op=True).wait()


def errors(r: int, n: int) -> None:
    for name, call in (
        ("all_reduce", lambda: dist.all_reduce(rg.zeros(2 + r))),
        ("broadcast", lambda: dist.broadcast(rg.zeros(2, dtype=rg.float64 if r else rg.float32), src=0)),
        ("all_gather", lambda: dist.all_gather([rg.zeros(1 + r) for _ in range(n)], rg.zeros(1 + r))),
    ):
        try:
            call()
        except RuntimeError as e:
            msg = str(e)
            assert msg.startswith(f"{name}: tensor shapes or dtypes differ across ranks"), msg
            assert "rank 0: [" in msg and f"rank {n - 1}: [" in msg, msg
        else:
            raise AssertionError(f"{name} with mismatched shapes did not raise")
    # every rank is still in step after an error
    x = rg.ones(2)
    dist.all_reduce(x)
    assert x.tolist() == [float(n)] * 2
    # all_to_all: rank 0 expects more than the others send it
    outs = [rg.zeros(2 if r == 0 else 1) for _ in range(n)]
    try:
        dist.all_to_all(outs, [rg.zeros(1) for _ in range(n)])
    except RuntimeError as e:
        assert "all_to_all: sizes differ across ranks" in str(e) and "holds 2" in str(e), str(e)
    else:
        raise AssertionError("all_to_all with mismatched sizes did not raise")
    # recv of the wrong size names both sizes
    if r == 0:
        dist.send(rg.zeros(5), dst=1)
    elif r == 1:
        try:
            dist.recv(rg.zeros(4), src=0)
        except RuntimeError as e:
            assert "recv: rank 0 sent 5 elements; the receiving tensor holds 4" in str(e), str(e)
        else:
            raise AssertionError("recv of the wrong size did not raise")
        buf = rg.zeros(5)  # the message is still there, for a receiver of the right size
        dist.recv(buf, src=0)
    dist.barrier()


def _mlp(seed: int) -> rg.nn.Module:
    rg.manual_seed(seed)
    return rg.nn.Sequential(rg.nn.Linear(5, 16), rg.nn.Tanh(), rg.nn.Linear(16, 3)).double()


def ddp(r: int, n: int) -> None:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    rng = np.random.default_rng(0)
    X = rg.tensor(rng.standard_normal((20, 8 * n, 5)))
    Y = rg.tensor(rng.standard_normal((20, 8 * n, 3)))
    # The reference: one process, the whole batch (mean loss over all 8n rows)
    ref = _mlp(0)
    ref_opt = rg.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    # Each rank starts from a different model: DDP must broadcast rank 0's
    model = DDP(_mlp(r))
    opt = rg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    mine = slice(8 * r, 8 * r + 8)  # this rank's share of each batch
    for step in range(20):
        ref_opt.zero_grad()
        rg.nn.functional.mse_loss(ref(X[step]), Y[step]).backward()
        ref_opt.step()
        opt.zero_grad()
        rg.nn.functional.mse_loss(model(X[step][mine]), Y[step][mine]).backward()
        opt.step()
    for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-6, err_msg=name)
    assert [k for k in model.state_dict()][0].startswith("module.")
    # The same with a bucket per ~100 bytes: several Iallreduce in flight during backward
    many = DDP(_mlp(r), bucket_cap_mb=1e-4)
    assert len(many._buckets) > 2
    opt = rg.optim.SGD(many.parameters(), lr=0.1, momentum=0.9)
    ref = _mlp(0)
    ref_opt = rg.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(20):
        for m, o, xs, ys in ((ref, ref_opt, X[step], Y[step]), (many, opt, X[step][mine], Y[step][mine])):
            o.zero_grad()
            rg.nn.functional.mse_loss(m(xs), ys).backward()
            o.step()
    for p, q in zip(many.module.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-6)
    many(X[0][mine])  # a forward without backward is allowed (nothing was reduced yet) ...
    many(X[0][mine]).sum().backward()  # ... and the next one still synchronises

    # no_sync: two local backward passes, then a synchronised one, average the per-rank sums
    model = DDP(_mlp(0))
    xs = [rg.tensor(np.random.default_rng(10 * q + k).standard_normal((4, 5))) for q in range(n) for k in range(3)]

    def local_sum(q: int) -> list[np.ndarray]:
        plain = _mlp(0)
        for k in range(3):
            plain(xs[3 * q + k]).pow(2).sum().backward()
        return [p.grad.numpy() for p in plain.parameters()]

    with model.no_sync():
        model(xs[3 * r]).pow(2).sum().backward()
        model(xs[3 * r + 1]).pow(2).sum().backward()
    unsynced = [p.grad.numpy().copy() for p in model.parameters()]
    partial = [_mlp(0) for _ in range(1)][0]
    for k in range(2):
        partial(xs[3 * r + k]).pow(2).sum().backward()
    for a, p in zip(unsynced, partial.parameters()):  # no_sync left the local sums alone
        np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-12)
    model(xs[3 * r + 2]).pow(2).sum().backward()
    sums = [local_sum(q) for q in range(n)]
    for i, p in enumerate(model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), np.mean([s[i] for s in sums], axis=0), rtol=1e-10, atol=1e-12)

    # find_unused_parameters: a branch that only rank 0 uses
    class Two(rg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = rg.nn.Linear(2, 2).double()
            self.b = rg.nn.Linear(2, 2).double()

        def forward(self, x: rg.Tensor, use_b: bool) -> rg.Tensor:
            y = self.a(x)
            return self.b(y) if use_b else y

    two = DDP(Two(), find_unused_parameters=True)
    x = rg.ones(1, 2, dtype=rg.float64)
    two(x, use_b=(r == 0)).sum().backward()
    plain = Two()
    plain.load_state_dict(two.module.state_dict())
    ga, gb = [], []
    for q in range(n):
        plain.zero_grad()
        plain(x, use_b=(q == 0)).sum().backward()
        ga.append(plain.a.weight.grad.numpy().copy())
        gb.append(plain.b.weight.grad.numpy().copy() if q == 0 else np.zeros((2, 2)))
    np.testing.assert_allclose(two.module.a.weight.grad.numpy(), np.mean(ga, axis=0), rtol=1e-12)
    np.testing.assert_allclose(two.module.b.weight.grad.numpy(), np.mean(gb, axis=0), rtol=1e-12)
    # never used anywhere: .grad stays None
    two.zero_grad(set_to_none=True)
    two(x, use_b=False).sum().backward()
    assert two.module.b.weight.grad is None and two.module.a.weight.grad is not None

    # without find_unused_parameters, an unused parameter is caught at the next forward
    strict = DDP(Two())
    strict(x, use_b=False).sum().backward()
    try:
        strict(x, use_b=False)
    except RuntimeError as e:
        assert str(e).startswith("Expected to have finished reduction in the prior iteration"), str(e)
    else:
        raise AssertionError("DDP did not report the unfinished reduction")


def torch_names(r: int, n: int) -> None:
    """A program written for PyTorch, run with retrograd installed as ``torch``."""
    rg.install_as_torch()
    try:
        import torch
        import torch.distributed as tdist
        from torch.nn.parallel import DistributedDataParallel
        from torch.utils.data import DataLoader, TensorDataset
        from torch.utils.data.distributed import DistributedSampler

        assert tdist is dist and tdist.is_initialized() and tdist.get_world_size() == n
        data = TensorDataset(torch.arange(10.0).reshape(10, 1), torch.arange(10.0).reshape(10, 1) * 2)
        sampler = DistributedSampler(data, shuffle=True, seed=1)
        sampler.set_epoch(2)
        model = DistributedDataParallel(torch.nn.Linear(1, 1))
        seen: list[int] = []
        for xb, yb in DataLoader(data, batch_size=2, sampler=sampler):
            seen += [int(v) for v in xb.flatten().tolist()]
            torch.nn.functional.mse_loss(model(xb), yb).backward()
        everyone: list = [None] * n
        tdist.all_gather_object(everyone, seen)
        every_index = sorted(i for part in everyone for i in part)
        assert set(every_index) == set(range(10)) and len(every_index) == sampler.total_size, everyone
        grads: list = [None] * n
        tdist.all_gather_object(grads, model.module.weight.grad.tolist())
        assert all(g == grads[0] for g in grads), grads  # averaged: the same on every rank
    finally:
        rg.uninstall_as_torch()


def fault_raise(r: int, n: int) -> None:
    if r == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.all_reduce(rg.ones(2))  # would wait for rank 1 for ever
    time.sleep(60)


def fault_stuck(r: int, n: int) -> None:
    if r == 1:
        time.sleep(60)  # never reaches the collective
    dist.all_reduce(rg.ones(2))


def launcher(r: int, n: int) -> None:
    import os

    assert os.environ["RANK"] == str(r) and os.environ["WORLD_SIZE"] == str(n), dict(os.environ)
    assert os.environ["LOCAL_RANK"] == str(r)


def main(scenarios: dict[str, Any] | None = None) -> None:
    """Run the scenarios named by argv[1], found in ``scenarios`` (default: this module's)."""
    scenario = sys.argv[1]
    timeout = datetime.timedelta(seconds=float(sys.argv[2])) if len(sys.argv) > 2 else None
    dist.init_process_group("mpi", timeout=timeout)
    r, n = dist.get_rank(), dist.get_world_size()
    for name in scenario.split(","):
        (scenarios or globals())[name](r, n)
        dist.barrier()
        print(f"OK {name} rank {r}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
