"""PyTorch's default DDP communication hook: ``allreduce_hook`` (DDP's built-in averaging)."""

from __future__ import annotations

from typing import Any

from ... import _c10d
from ..._grad_bucket import GradBucket


def allreduce_hook(process_group: Any, bucket: GradBucket) -> Any:
    """Average the bucket over ``process_group`` (None: the world): divide by its size first (no
    overflow in low precision), then all-reduce; a future of the averaged flat tensor.

    >>> import retrograd as rg, retrograd.distributed as dist
    >>> from retrograd.nn.parallel import DistributedDataParallel as DDP
    >>> from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
    >>> dist.init_process_group("mpi")
    >>> model = DDP(rg.nn.Linear(2, 1))
    >>> model.register_comm_hook(None, default_hooks.allreduce_hook)
    >>> model(rg.ones(3, 2)).sum().backward()
    >>> model.module.weight.grad
    tensor([[3., 3.]])
    >>> dist.destroy_process_group()
    """
    group: Any = process_group if process_group is not None else _c10d.group.WORLD
    tensor = bucket.buffer()
    tensor.div_(group.size())
    work = _c10d.all_reduce(tensor, group=process_group, async_op=True)
    assert work is not None  # (this rank is a member: DDP runs only there)
    return work.get_future().then(lambda fut: fut.value()[0])
