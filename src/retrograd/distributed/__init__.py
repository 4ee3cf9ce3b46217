"""``retrograd.distributed``: PyTorch's ``torch.distributed`` over MPI (mpi4py).

Launch N processes with ``mpiexec -n N python train.py`` (or ``python -m retrograd.distributed.run
-n N train.py``); each calls ``init_process_group("mpi")``. Needs the ``distributed`` extra
(``pip install "retrograd[distributed]"``: mpi4py and the MPICH library with its ``mpiexec``).
Collectives are not differentiable, as in PyTorch's default API. See docs/distributed.md.
"""

from ._c10d import (
    Backend,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    _make_nccl_premul_sum,  # noqa: F401  (PyTorch's private name, public in use)
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_available,
    is_initialized,
    is_mpi_available,
    isend,
    new_group,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
)
from ._grad_bucket import GradBucket

__all__ = [
    "Backend", "GradBucket", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_initialized", "is_mpi_available", "isend", "new_group", "recv", "reduce", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send",
]
