"""``DistributedDataParallel``: one model replica per process, gradients averaged during backward.

At wrap time the replicas' parameter shapes are compared and rank 0's parameters and buffers are
broadcast. The parameters are split into buckets (reverse registration order: roughly the order in
which backward produces their gradients). A post-accumulate-grad hook copies each gradient into
its bucket; a full bucket starts a non-blocking ``Iallreduce``, so communication overlaps the rest
of backward. Buckets start in index order on every rank (MPI requires one order of collectives).
The hook that completes the last bucket waits for all of them and writes the averages into
``.grad``.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...autograd.grad_mode import STATE, no_grad
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES
_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs participate "
    "in calculating loss.")

_READY_TWICE = (
    "Expected to mark a variable ready only once. Parameter {index} (shape {shape}) was not reached from "
    "forward's output, so find_unused_parameters=True marked it ready with no gradient, and then a gradient "
    "for it arrived: it is used outside the module's `forward` (e.g. in the loss).")


class _Bucket:
    __slots__ = ("params", "offsets", "buffer", "pending", "request")

    def __init__(self, params: list[Tensor]) -> None:
        self.params = params
        sizes = [p._data.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.buffer = np.zeros(int(self.offsets[-1]), dtype=params[0]._data.dtype)
        self.pending = len(params)
        self.request: Any = None


class DistributedDataParallel(Module):
    """Data parallelism over the processes of a group (``retrograd.distributed``).

    Every rank builds the same model, wraps it, and trains on its own share of each batch; after
    ``loss.backward()`` each parameter's ``.grad`` is the average of the ranks' gradients, so every
    rank's optimizer takes the same step. ``no_sync()`` skips the averaging (gradient
    accumulation); ``module`` is the wrapped model.

    >>> import retrograd as rg, retrograd.distributed as dist
    >>> from retrograd.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group("mpi")
    >>> model = DDP(rg.nn.Linear(2, 1))
    >>> model(rg.ones(3, 2)).sum().backward()
    >>> model.module.weight.grad
    tensor([[3., 3.]])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool | None = None, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None, skip_all_reduce_unused_params: bool = False,
                 bucket_cap_mb_list: list[int] | None = None, batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        from ... import distributed as dist
        from ...distributed import _c10d

        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:  # (a clear error rather than an option silently ignored)
                raise ValueError(f"DistributedDataParallel: retrograd does not support {name}")
        self.module = module
        self.process_group = process_group
        sync = forward_sync_buffers if forward_sync_buffers is not None else broadcast_buffers
        self.broadcast_buffers = True if sync is None else bool(sync)
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        # PyTorch's: a small first bucket only with the default cap (it starts communication early)
        self._first_bucket_bytes = _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        pg = _c10d._resolve(process_group)
        if pg is None:
            raise RuntimeError("DistributedDataParallel: this rank is not a member of process_group")
        self._pg = pg
        self._world_size = pg.size()
        params: list[Tensor] = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._params = params
        if init_sync:  # (init_sync=False: the caller guarantees identical replicas)
            self._verify_same_model(dist)
            self._broadcast_state()
        self._buckets = self._make_buckets(params)
        self._where: dict[int, tuple[_Bucket, int]] = {}
        for bucket in self._buckets:
            for i, p in enumerate(bucket.params):
                self._where[id(p)] = (bucket, i)
        self._next_launch = 0
        self._comm_hook: tuple[Callable[[Any, Any], Any], Any] | None = None
        self._armed = False  # a synchronised backward is expected (set by forward)
        self._started = False  # ... and has begun: a gradient arrived, the reduction is under way
        self._used = np.ones(len(params), dtype=np.uint8)
        self._ready = np.zeros(len(params), dtype=np.uint8)
        self._index = {id(p): i for i, p in enumerate(params)}
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    # -- wrap time ---------------------------------------------------------------------------
    def _verify_same_model(self, dist: Any) -> None:
        mine = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        every: list[Any] = [None] * self._world_size
        dist.all_gather_object(every, mine, group=self.process_group)
        for r, theirs in enumerate(every):
            if len(theirs) != len(mine):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {self._pg.rank()} has "
                                   f"{len(mine)} params, while rank {r} has inconsistent {len(theirs)} params.")
            for i, (a, b) in enumerate(zip(mine, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank {self._pg.rank()} has "
                                       f"parameter {i} of shape {list(a[0])} {a[1]}, while rank {r} has "
                                       f"{list(b[0])} {b[1]}.")

    def _broadcast_state(self) -> None:
        from ...distributed import _c10d

        tensors = [*self.module.parameters(), *self.module.buffers()]
        by_dtype: dict[Any, list[Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, group in by_dtype.items():  # one Bcast per dtype (parameters coalesced)
            flat = np.concatenate([t._data.reshape(-1) for t in group]).astype(dtype, copy=False)
            buf = _c10d._buffer(flat)
            self._bcast(buf, "DistributedDataParallel (broadcast)")  # from the group's rank 0
            if not np.may_share_memory(buf, flat):  # (bfloat16 travelled as float32)
                flat = buf.astype(dtype)
            offset = 0
            for t in group:
                n = t._data.size
                np.copyto(t._data, flat[offset:offset + n].reshape(t._data.shape))
                offset += n

    def _bcast(self, buf: np.ndarray, name: str) -> None:
        from ...distributed import _c10d

        comm = self._pg._comm
        _c10d._timed(self._pg, name, lambda: comm.Bcast(buf, root=0))

    def _make_buckets(self, params: list[Tensor]) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: dict[Any, list[Tensor]] = {}
        filled: dict[Any, int] = {}
        for p in reversed(params):
            dtype = p._data.dtype
            current.setdefault(dtype, []).append(p)
            filled[dtype] = filled.get(dtype, 0) + p._data.nbytes
            cap = self._first_bucket_bytes if not buckets else self.bucket_bytes_cap
            if filled[dtype] >= cap:
                buckets.append(_Bucket(current.pop(dtype)))
                filled[dtype] = 0
        buckets.extend(_Bucket(ps) for ps in current.values() if ps)
        return buckets

    # -- forward ------------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._armed and self._started:  # (a forward without backward just re-arms, as in PyTorch)
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and any(True for _ in self.module.buffers()):
            self._broadcast_buffers()
        output = self.module(*inputs, **kwargs)
        if STATE.grad_enabled and self.require_backward_grad_sync:
            self._arm(output)
        return output

    def _broadcast_buffers(self) -> None:
        from ...distributed import _c10d

        for b in self.module.buffers():
            buf = _c10d._buffer(b._data)
            self._bcast(buf, "DistributedDataParallel (buffers)")
            if buf is not b._data:
                np.copyto(b._data, buf.reshape(b._data.shape), casting="unsafe")

    def _arm(self, output: Any) -> None:
        self._armed = True
        self._started = False
        self._next_launch = 0
        for bucket in self._buckets:
            bucket.pending = len(bucket.params)
            bucket.request = None
        self._used[:] = 1
        self._ready[:] = 0
        if self.find_unused_parameters:
            used = _reached_leaves(output)
            for p in self._params:
                if id(p) not in used:  # never gets a gradient this iteration: ready now, contributes zero
                    self._used[self._index[id(p)]] = 0
                    self._ready[self._index[id(p)]] = 1
                    bucket, i = self._where[id(p)]
                    bucket.buffer[bucket.offsets[i]:bucket.offsets[i + 1]] = 0
                    self._mark_ready(bucket)

    # -- backward -----------------------------------------------------------------------------
    def _grad_ready(self, p: Tensor) -> None:
        if not self._armed:
            return
        self._started = True
        index = self._index[id(p)]
        if self._ready[index]:
            # find_unused_parameters judged it unused from forward's output, yet a gradient came
            raise RuntimeError(_READY_TWICE.format(index=index, shape=list(p.shape)))
        self._ready[index] = 1
        bucket, i = self._where[id(p)]
        grad = p._grad
        assert grad is not None  # (a post-accumulate-grad hook runs after .grad is set)
        bucket.buffer[bucket.offsets[i]:bucket.offsets[i + 1]] = grad._data.reshape(-1)
        self._mark_ready(bucket)

    def _mark_ready(self, bucket: _Bucket) -> None:
        from ...distributed import _c10d

        bucket.pending -= 1
        MPI = _c10d._mpi()
        comm = self._pg._comm
        buckets = self._buckets
        while self._next_launch < len(buckets) and buckets[self._next_launch].pending == 0:
            ready = buckets[self._next_launch]
            if self._comm_hook is None:
                ready.request = comm.Iallreduce(MPI.IN_PLACE, ready.buffer, op=MPI.SUM)
            else:
                ready.request = self._run_comm_hook(ready, self._next_launch)
            self._next_launch += 1
        if self._next_launch < len(buckets):
            # MPI progresses a non-blocking collective only inside MPI calls: poke it while backward runs
            started = [b.request for b in buckets[: self._next_launch] if b.request is not None]
            if started and self._comm_hook is None:
                MPI.Request.Testall(started)
            elif started:
                for future in started:
                    future.done()
            return
        self._finish()

    def _finish(self) -> None:
        from ...distributed import _c10d

        MPI = _c10d._mpi()
        self._armed = self._started = False
        hooked = self._comm_hook is not None
        requests = [] if hooked else [b.request for b in self._buckets]
        used = self._used
        if self.find_unused_parameters:
            requests.append(self._pg._comm.Iallreduce(MPI.IN_PLACE, used, op=MPI.MAX))
        if hooked:
            self._wait_comm_hooks()
        _c10d._timed(self._pg, "DistributedDataParallel (gradient all_reduce)", lambda: MPI.Request.Waitall(requests))
        n = self._world_size
        with no_grad():
            for bucket in self._buckets:
                bucket.request = None
                if not hooked:  # (a communication hook averages, or not, itself)
                    np.divide(bucket.buffer, n, out=bucket.buffer)
                for i, p in enumerate(bucket.params):
                    if not used[self._index[id(p)]]:
                        continue  # unused on every rank: its .grad is left as it was
                    view = bucket.buffer[bucket.offsets[i]:bucket.offsets[i + 1]].reshape(p._data.shape)
                    if p._grad is None:
                        p.grad = Tensor._make(view.copy())
                    else:
                        np.copyto(p._grad._data, view)
                        p._grad._counter().bump("DistributedDataParallel")

    # -- communication hooks ----------------------------------------------------------------------
    def register_comm_hook(self, state: object, hook: Callable[[Any, Any], Any]) -> None:
        """Reduce each bucket with ``hook(state, bucket)`` instead of the built-in average.

        ``bucket`` is a ``dist.GradBucket`` (``buffer()``: the flattened gradients, ``index()``,
        ``is_last()``, ``parameters()``, ``gradients()``); the hook returns a future whose value is
        the reduced flat tensor, e.g. ``dist.all_reduce(t, async_op=True).get_future()...``.
        Hooks start in bucket order on every rank. PyTorch's
        ``default_hooks.allreduce_hook`` (in ``retrograd.distributed.algorithms.ddp_comm_hooks``)
        divides by the world size and all-reduces: the built-in behaviour.
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        from ...distributed import GradBucket

        bucket_annotation = inspect.signature(hook).parameters["bucket"].annotation
        if isinstance(bucket_annotation, str):  # (postponed annotations: the name is what there is)
            bucket_annotation = GradBucket if bucket_annotation.rsplit(".", 1)[-1] == "GradBucket" else None
        if bucket_annotation not in (inspect.Parameter.empty, GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = (hook, state)

    def _run_comm_hook(self, bucket: _Bucket, index: int) -> Any:
        from ...distributed import GradBucket

        hook, state = self._comm_hook  # type: ignore[misc]
        future = hook(state, GradBucket(index, len(self._buckets), bucket.buffer, bucket.params, bucket.offsets))
        if not callable(getattr(future, "wait", None)):
            raise RuntimeError(f"DistributedDataParallel: the communication hook must return a future (from "
                               f"Work.get_future()), got {type(future).__name__}")
        return future

    def _wait_comm_hooks(self) -> None:
        for bucket in self._buckets:
            result = bucket.request.wait()
            data = getattr(result, "_data", None)
            if not isinstance(data, np.ndarray) or data.size != bucket.buffer.size:
                raise RuntimeError(f"DistributedDataParallel: the communication hook's future must hold the bucket's "
                                   f"flat tensor of {bucket.buffer.size} elements, got {result!r:.80}")
            if not np.may_share_memory(data, bucket.buffer):
                np.copyto(bucket.buffer, data.reshape(-1), casting="same_kind")

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes run in this block accumulate local gradients without averaging them;
        the first synchronised backward after it averages the accumulated sums."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _reached_leaves(output: Any) -> set[int]:
    """ids of the leaves whose AccumulateGrad the autograd graph of ``output`` reaches (iterative)."""
    stack: list[Any] = []
    pending = [output]
    while pending:  # the tensors in a (nested) output structure
        item = pending.pop()
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                stack.append(item.grad_fn)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    seen: set[int] = set()
    leaves: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves
