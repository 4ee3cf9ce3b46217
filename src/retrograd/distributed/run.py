"""``python -m retrograd.distributed.run -n 4 train.py [args...]``: run a script on N processes.

A thin wrapper over MPI's ``mpiexec -n 4 python train.py``: it finds ``mpiexec`` (next to the
running Python first: the ``mpich`` wheel installs it there), and starts every process through
this module, which sets PyTorch's launcher variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``) from MPI's before running the script as ``__main__``, so scripts written for
``torchrun`` find them; like ``torchrun`` it sets ``OMP_NUM_THREADS=1`` (and OpenBLAS's and MKL's)
when N > 1 unless they are set. Its exit status is ``mpiexec``'s.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "main"]

_CHILD = "--_retrograd_child"


def find_mpiexec() -> str | None:
    """The ``mpiexec`` to use: the one beside this Python (a venv's), else the first on PATH.

    >>> from retrograd.distributed.run import find_mpiexec
    >>> find_mpiexec() is None or find_mpiexec().endswith("mpiexec")
    True
    """
    here = os.path.dirname(sys.executable)
    return shutil.which("mpiexec", path=here) or shutil.which("mpiexec")


def _run_child(argv: list[str]) -> None:
    # MPICH's Hydra exports PMI_RANK/PMI_SIZE and MPI_LOCALRANKID/MPI_LOCALNRANKS; Open MPI its OMPI_* names.
    env = os.environ
    for ours, theirs in (("RANK", ("PMI_RANK", "OMPI_COMM_WORLD_RANK")),
                         ("WORLD_SIZE", ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")),
                         ("LOCAL_RANK", ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")),
                         ("LOCAL_WORLD_SIZE", ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"))):
        for name in theirs:
            if name in env:
                env[ours] = env[name]
                break
    sys.argv = argv
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


def main(argv: list[str] | None = None) -> int:
    """Parse the launcher's arguments, run ``mpiexec``, return its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == _CHILD:
        _run_child(argv[1:])
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m retrograd.distributed.run",
        description="Run a training script on N processes with mpiexec (retrograd.distributed's MPI backend).")
    parser.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="n", type=int, default=1,
                        help="number of processes (default 1)")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec program (default: beside python, else PATH)")
    parser.add_argument("-m", dest="module", action="store_true", help="run the script argument as a module")
    parser.add_argument("script", help="the training script (or module, with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    ns = parser.parse_args(argv)
    if ns.n < 1:
        parser.error(f"-n must be at least 1, got {ns.n}")
    mpiexec = ns.mpiexec or find_mpiexec()
    if mpiexec is None:
        parser.error('mpiexec not found: pip install "retrograd[distributed]" (or pip install mpich)')
    target = ["-m", ns.script] if ns.module else [ns.script]
    env = dict(os.environ)
    if ns.n > 1:
        # As torchrun does: one BLAS/OpenMP thread per process unless asked otherwise. N processes
        # with a thread per core each oversubscribe the machine, and spinning BLAS threads then
        # starve the processes that MPI is waiting for.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, "1")
    command = [mpiexec, "-n", str(ns.n), sys.executable, "-m", "retrograd.distributed.run", _CHILD, *target, *ns.args]
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
