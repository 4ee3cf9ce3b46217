"""retrograd.distributed: all_reduce bandwidth against mpi4py's own Allreduce, and DDP's scaling.

    python benchmarks/distributed.py [-n 2] [--repeats 7] [--steps 30] [--only allreduce|ddp|python]

1. all_reduce (SUM, float32, 1 KB-64 MB): ``dist.all_reduce(t)`` and ``comm.Allreduce(IN_PLACE, a)``
   on the same buffer (``t`` wraps ``a``), timed in alternating blocks in one run; the median
   block's time per call, the bus bandwidth and the ratio (target: retrograd >= 0.9x mpi4py), with
   the cross-rank shape check (the default: up to 32 KB one Allreduce carries a fingerprint and the
   data; above, a fingerprint round then MPI's Allreduce) and without it (RETROGRAD_DISTRIBUTED_CHECKS=0).
2. DDP scaling (weak): one training step of the small MLP (64-128-128-10, batch 64 per process,
   SGD) as a plain model in one process, and wrapped in DistributedDataParallel on N processes;
   efficiency = t(1 process) / t(N processes) (1.0: N times the samples in the same time),
   printed last with its conditions (CPUs, load average before and after, MPI library, threads).

3. ``--only python``: the Python each ``all_reduce`` adds on top of its MPI call, in one process
   without mpiexec (what is left of a small message's ratio once the machine is quiet): the
   unchecked call on a one-rank communicator against mpi4py's ``Allreduce`` on it, and the checked
   one on a stand-in for two ranks with equal calls (a one-rank ``Allreduce``, then the 32-byte
   header doubled, as two ranks' SUM gives) against the same call bare; minimum over blocks of
   process time.

Launches itself with ``mpiexec -n N`` (the ``distributed`` extra). The machine's other load
shows in the figures: compare the ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26)  # bytes
SMALL_SIZES = (64, 128, 128, 10)
BATCH = 64


def _text(nbytes: int) -> str:
    return f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"


def worker_allreduce(repeats: int) -> None:
    from mpi4py import MPI

    import retrograd as rg
    import retrograd.distributed as dist

    dist.init_process_group("mpi")
    comm, rank, n = MPI.COMM_WORLD, dist.get_rank(), dist.get_world_size()
    world: Any = dist.group.WORLD
    if rank == 0:
        print(f"all_reduce SUM float32 on {n} processes (median of {repeats} blocks per size)")
        print(f"{'size':>7} {'calls':>6} {'mpi4py us':>10} {'retrograd us':>13} {'busbw GB/s':>11} {'ratio':>6} "
              f"{'unchecked us':>14} {'ratio':>6}")
    for nbytes in SIZES:
        a = np.zeros(nbytes // 4, dtype=np.float32)
        t = rg.from_numpy(a)
        calls = max(2, min(400, (4 << 20) // nbytes * 4))

        def mpi4py_block() -> float:
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)
            return (time.perf_counter() - t0) / calls

        def retrograd_block(check: bool) -> float:
            world._check = check
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_reduce(t)
            return (time.perf_counter() - t0) / calls

        mpi4py_block(), retrograd_block(True)  # warm up
        ours, unchecked, theirs = [], [], []
        for _ in range(repeats):
            theirs.append(mpi4py_block())
            ours.append(retrograd_block(True))
            unchecked.append(retrograd_block(False))
        # every rank's median, then the slowest rank's (a collective ends when its last rank does)
        mine = np.array([statistics.median(theirs), statistics.median(ours), statistics.median(unchecked)])
        comm.Allreduce(MPI.IN_PLACE, mine, op=MPI.MAX)
        busbw = 2 * (n - 1) / n * nbytes / mine[1] / 1e9
        if rank == 0:
            print(f"{_text(nbytes):>7} {calls:>6} {mine[0] * 1e6:>10.1f} {mine[1] * 1e6:>13.1f} {busbw:>11.2f} "
                  f"{mine[0] / mine[1]:>6.2f} {mine[2] * 1e6:>14.1f} {mine[0] / mine[2]:>6.2f}")
    dist.destroy_process_group()


def python_per_call(blocks: int) -> None:
    """Part 3: microseconds of Python per ``all_reduce`` on top of the same MPI call (see the docstring)."""
    import timeit

    from mpi4py import MPI

    import retrograd as rg
    from retrograd.distributed import _c10d

    class TwoRanks:
        """Two ranks that passed equal tensors: a one-rank Allreduce, then the header as two ranks' SUM."""

        def __init__(self) -> None:
            self.comm = MPI.COMM_SELF.Dup()
            self.heads: dict[int, tuple[Any, np.ndarray]] = {}  # a buffer's id: (it, its header's view)

        def Get_rank(self) -> int:  # noqa: N802  (mpi4py's names)
            return 0

        def Get_size(self) -> int:  # noqa: N802
            return 2

        def Allreduce(self, sendbuf: Any, buf: Any, op: Any) -> None:  # noqa: N802
            self.comm.Allreduce(sendbuf, buf, op)
            if op is MPI.SUM:  # (the header's view made once per buffer: the same cost for every caller)
                known = self.heads.get(id(buf))
                if known is None:
                    arr = buf if isinstance(buf, np.ndarray) else np.frombuffer(buf[0], dtype=buf[2].typechar)
                    known = self.heads[id(buf)] = (buf, arr.reshape(-1)[:32 // arr.itemsize])
                np.multiply(known[1], 2, out=known[1])

        def Iallreduce(self, sendbuf: Any, buf: Any, op: Any) -> Any:  # noqa: N802  (data, not a header)
            return self.comm.Iallreduce(sendbuf, buf, op)

        def Free(self) -> None:  # noqa: N802
            self.comm.Free()

    _c10d.init_process_group("mpi")
    world = _c10d._State.world
    two = TwoRanks()
    pairs = {"unchecked": world, "checked": _c10d.ProcessGroup(two, [0, 1], 1800.0)}
    print(f"Python per all_reduce call on top of its MPI call (SUM float32, min of {blocks} blocks of process time)")
    print(f"{'size':>7} {'mpi4py us':>10} {'unchecked +us':>14} {'stand-in us':>12} {'checked +us':>12}")
    for nbytes in (1 << 10, 1 << 14):
        a = np.zeros(nbytes // 4, dtype=np.float32)
        t = rg.from_numpy(a)
        for pg in pairs.values():  # (the first calls prepare the repeated call)
            for _ in range(3):
                _c10d.all_reduce(t, group=pg)

        def best(call: Any, number: int = 5000) -> float:
            return min(timeit.repeat(call, number=number, repeat=blocks, timer=time.process_time)) / number * 1e6

        comm, checked = world._comm, pairs["checked"]
        bare = best(lambda: comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM))
        ours = best(lambda: _c10d.all_reduce(t))
        bare_two = best(lambda: two.Allreduce(MPI.IN_PLACE, a, MPI.SUM))
        ours_two = best(lambda: _c10d.all_reduce(t, group=checked))
        print(f"{_text(nbytes):>7} {bare:>10.2f} {ours - bare:>+14.2f} {bare_two:>12.2f} {ours_two - bare_two:>+12.2f}")
    _c10d.destroy_process_group()


def _mlp(lib: Any) -> Any:
    lib.manual_seed(0)
    layers: list[Any] = []
    for i, (a, b) in enumerate(zip(SMALL_SIZES[:-1], SMALL_SIZES[1:])):
        layers.append(lib.nn.Linear(a, b))
        if i < len(SMALL_SIZES) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def worker_ddp(steps: int) -> None:
    import retrograd as rg
    import retrograd.distributed as dist
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(rank)
    x = rg.tensor(rng.standard_normal((BATCH, SMALL_SIZES[0])).astype(np.float32))
    y = rg.tensor(rng.integers(0, SMALL_SIZES[-1], BATCH))
    from mpi4py import MPI

    # one process: the plain model, and DDP's own cost (hooks, bucket copies, a world of one)
    for kind in ("plain", "ddp") if n == 1 else ("ddp",):
        model = _mlp(rg) if kind == "plain" else DDP(_mlp(rg))
        opt = rg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        times = []
        for _ in range(steps + 5):
            dist.barrier()
            t0 = time.perf_counter()
            opt.zero_grad()
            rg.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            times.append(time.perf_counter() - t0)
        mine = np.array([statistics.median(times[5:])])
        worst = np.zeros(1)
        MPI.COMM_WORLD.Allreduce(mine, worst, op=MPI.MAX)
        if rank == 0:
            print(f"DDP_STEP {kind} {n} {worst[0]:.9f}")
    dist.destroy_process_group()


def _launch(mpiexec: str, n: int, *args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), env.get("PYTHONPATH", "")])
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # (as the launcher does)
        env.setdefault(name, "1")
    command = [mpiexec, "-n", str(n), sys.executable, str(Path(__file__).resolve()), "--worker", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(result.stdout + result.stderr)
    return result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--only", choices=("allreduce", "ddp", "python"), help="run one of the parts")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.worker:
        kind, value = ns.worker[0], int(ns.worker[1])
        worker_allreduce(value) if kind == "allreduce" else worker_ddp(value)
        return
    sys.path.insert(0, str(HERE.parent / "src"))
    if ns.only == "python":
        python_per_call(ns.repeats * 2)
        return
    from retrograd.distributed.run import find_mpiexec

    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit('needs mpiexec: pip install "retrograd[distributed]"')
    load_before = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load_before:.1f}")
    if ns.only != "ddp":
        print(_launch(mpiexec, ns.n, "allreduce", str(ns.repeats)), end="")
    if ns.only == "allreduce":
        return
    lines = _launch(mpiexec, 1, "ddp", str(ns.steps)).split("\n")
    one, one_ddp = (float(line.split()[-1]) for line in lines if line.startswith("DDP_STEP"))
    many = float(_launch(mpiexec, ns.n, "ddp", str(ns.steps)).split()[-1])
    print(f"\nDDP step, small MLP {'-'.join(map(str, SMALL_SIZES))}, batch {BATCH} per process, SGD "
          f"(median of {ns.steps} steps)")
    print(f"  1 process: plain model {one * 1e3:.3f} ms, DDP in a world of one {one_ddp * 1e3:.3f} ms "
          f"(DDP's own cost {(one_ddp - one) * 1e3:+.3f} ms)")
    print(f"  {ns.n} processes (DDP): {many * 1e3:.3f} ms; weak-scaling efficiency {one / many:.2f}")
    print(f"\nDDP scaling efficiency at {ns.n} processes: {one / many:.2f} ({_conditions(load_before)})")


def _conditions(load_before: float) -> str:
    """What the figure depends on: the machine, its other load, the MPI library, the threads."""
    from mpi4py import MPI

    library = " ".join(MPI.Get_library_version().strip().split("\n")[0].split())
    threads = os.environ.get("OMP_NUM_THREADS", "1")  # (the launch sets 1 unless it is set)
    return (f"weak scaling, small MLP {'-'.join(map(str, SMALL_SIZES))}, batch {BATCH} per process; "
            f"{os.cpu_count()} CPUs, load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after; "
            f"{library}; OMP_NUM_THREADS={threads}")


if __name__ == "__main__":
    main()
