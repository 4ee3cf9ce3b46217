"""retrograd.distributed in one process (no mpiexec: MPI's singleton world of size 1), compared
with PyTorch's gloo backend at world size 1 for names and error wording; loading; the missing-extra
message; DistributedSampler against PyTorch's partitions; DDP at world size 1."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

SRC = Path(__file__).resolve().parents[2] / "src"
needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                               reason='needs the distributed extra: pip install -e ".[distributed]"')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def world() -> Iterator[Any]:
    import retrograd.distributed as dist

    dist.init_process_group("mpi")
    try:
        yield dist
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


@pytest.fixture
def torch_world(torch: Any) -> Iterator[Any]:
    import torch.distributed as tdist

    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)
    try:
        yield tdist
    finally:
        tdist.destroy_process_group()


def test_loading_retrograd_loads_neither_distributed_nor_mpi4py() -> None:
    code = ("import sys, retrograd, retrograd.nn, retrograd.utils.data; "
            "print(sorted(m for m in sys.modules if m.startswith(('retrograd.distributed', 'mpi4py')))); "
            "import retrograd as rg; rg.distributed; print('retrograd.distributed' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(SRC), "PATH": ""}, check=True).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"


def test_a_missing_mpi4py_is_a_one_line_message_naming_the_extra() -> None:
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import retrograd.distributed as dist\n"
            "try:\n    dist.init_process_group('mpi')\n"
            "except ImportError as e:\n    print(repr(str(e)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(SRC), "PATH": ""}, check=True).stdout.strip()
    assert out == repr('retrograd.distributed needs mpi4py and an MPI library: pip install '
                       '"retrograd[distributed]" (or pip install mpi4py mpich)')


def test_calls_before_init_fail_as_in_pytorch(torch: Any) -> None:
    import torch.distributed as tdist

    import retrograd.distributed as dist

    assert dist.is_initialized() is tdist.is_initialized() is False
    for name in ("get_rank", "get_world_size", "barrier", "new_group", "destroy_process_group"):
        assert outcome(getattr(dist, name)) == outcome(getattr(tdist, name)), name
    assert outcome(lambda: dist.all_reduce(rg.ones(2))) == outcome(lambda: tdist.all_reduce(torch.ones(2)))


def test_reduce_op_names_as_in_pytorch(torch: Any) -> None:
    import torch.distributed as tdist

    import retrograd.distributed as dist

    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(tdist.ReduceOp, name)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))


@needs_mpi
def test_errors_at_world_size_one_as_in_pytorch(world: Any, torch_world: Any, torch: Any) -> None:
    dist, tdist = world, torch_world
    cases = [
        (lambda: dist.init_process_group("mpi"), lambda: tdist.init_process_group("gloo")),
        (lambda: dist.all_reduce(rg.ones(2, dtype=rg.complex64), op=dist.ReduceOp.MAX),
         lambda: tdist.all_reduce(torch.ones(2, dtype=torch.complex64), op=tdist.ReduceOp.MAX)),
        (lambda: dist.all_reduce([1.0]), lambda: tdist.all_reduce([1.0])),
        (lambda: dist.broadcast(rg.ones(2)), lambda: tdist.broadcast(torch.ones(2))),
        (lambda: dist.reduce(rg.ones(2)), lambda: tdist.reduce(torch.ones(2))),
        (lambda: dist.broadcast(rg.ones(2), src=0, group_src=0),
         lambda: tdist.broadcast(torch.ones(2), src=0, group_src=0)),
        (lambda: dist.send(rg.ones(2), dst=0), lambda: tdist.send(torch.ones(2), dst=0)),
    ]
    for ours, theirs in cases:
        assert outcome(ours) == outcome(theirs)
    # (gloo's recv from itself fails inside gloo; PyTorch's irecv checks as send does)
    assert outcome(lambda: dist.recv(rg.ones(2), src=0)) == (
        "ValueError", "Invalid source rank: source rank should not be the same as the rank of the current process.")


@needs_mpi
def test_world_of_one_collectives_match_numpy_and_return_what_pytorch_returns(world: Any, torch_world: Any,
                                                                             torch: Any) -> None:
    dist, tdist = world, torch_world
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    x, tx = rg.tensor([1.0, -2.0], requires_grad=True), torch.tensor([1.0, -2.0], requires_grad=True)
    assert dist.all_reduce(x) is None and tdist.all_reduce(tx) is None
    assert x.tolist() == tx.tolist() and x.requires_grad and x.is_leaf
    w, tw = dist.all_reduce(rg.ones(2), op=dist.ReduceOp.AVG, async_op=True), tdist.all_reduce(torch.ones(2),
                                                                                              async_op=True)
    assert (w.wait(), w.is_completed()) == (tw.wait(), tw.is_completed()) == (True, True)
    assert w.result()[0].tolist() == [1.0, 1.0]
    out = [rg.zeros(3)]
    dist.all_gather(out, rg.arange(3.0))
    assert out[0].tolist() == [0.0, 1.0, 2.0]
    objs: list[Any] = [None]
    dist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]
    assert dist.get_process_group_ranks(dist.group.WORLD) == [0]


@needs_mpi
def test_pytorchs_cpu_backend_name_runs_over_mpi_and_a_gpu_backend_is_refused() -> None:
    import retrograd.distributed as dist

    for backend in ("gloo", "cpu:gloo,cuda:nccl", "MPI"):
        dist.init_process_group(backend)
        assert dist.get_backend() == "mpi" and dist.get_world_size() == 1
        dist.destroy_process_group()
    kind, message = outcome(lambda: dist.init_process_group("nccl"))
    assert kind == "ValueError" and "backend 'nccl' is not available" in message
    assert not dist.is_initialized()


@needs_mpi
def test_an_uncaught_exception_aborts_only_while_initialized(world: Any) -> None:
    from retrograd.distributed import _c10d

    assert sys.excepthook is _c10d._excepthook
    world.destroy_process_group()
    assert sys.excepthook is not _c10d._excepthook and not world.is_initialized()


@needs_mpi
def test_ddp_at_world_size_one_is_the_plain_model(world: Any) -> None:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    rg.manual_seed(0)
    plain = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 1)).double()
    wrapped = DDP(rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.ReLU(), rg.nn.Linear(4, 1)).double())
    wrapped.module.load_state_dict(plain.state_dict())
    x = rg.randn(5, 3, dtype=rg.float64)
    plain(x).sum().backward()
    wrapped(x).sum().backward()
    for p, q in zip(plain.parameters(), wrapped.module.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-15)
    assert list(wrapped.state_dict()) == [f"module.{k}" for k in plain.state_dict()]


def test_ddp_has_pytorchs_signature_and_refuses_what_it_does_not_do(torch: Any) -> None:
    import inspect

    from retrograd.nn.parallel import DistributedDataParallel as DDP

    ours = inspect.signature(DDP.__init__).parameters
    theirs = inspect.signature(torch.nn.parallel.DistributedDataParallel.__init__).parameters
    assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()]


@needs_mpi
def test_ddp_a_parameter_used_outside_forward_with_find_unused_parameters_is_an_error(world: Any) -> None:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    class FirstOnly(rg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = rg.nn.Linear(2, 2)
            self.b = rg.nn.Linear(2, 2)

        def forward(self, x: rg.Tensor) -> rg.Tensor:
            return self.a(x)

    model = DDP(FirstOnly(), find_unused_parameters=True)
    loss = model(rg.ones(1, 2)).sum() + model.module.b.weight.sum()  # b: used outside forward
    with pytest.raises(RuntimeError, match="^Expected to mark a variable ready only once"):
        loss.backward()


@needs_mpi
def test_ddp_refuses_options_it_does_not_implement(world: Any) -> None:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(ValueError, match="does not support mixed_precision"):
        DDP(rg.nn.Linear(2, 2), mixed_precision=object())


@pytest.mark.parametrize("n", [7, 10, 13])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (True, True), (False, False), (False, True)])
def test_distributed_sampler_partitions_equal_pytorchs(torch: Any, n: int, replicas: int, shuffle: bool,
                                                       drop_last: bool) -> None:
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from retrograd.utils.data import DistributedSampler

    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        for epoch in (0, 3):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_checks_the_rank_as_pytorch(torch: Any) -> None:
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from retrograd.utils.data.distributed import DistributedSampler

    for rank in (-1, 2):
        assert outcome(lambda: DistributedSampler(range(4), 2, rank)) == outcome(lambda: TorchSampler(range(4), 2, rank))
