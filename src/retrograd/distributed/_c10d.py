"""Process groups and collectives over MPI (mpi4py): PyTorch's ``torch.distributed`` API.

Every collective works on the tensor's NumPy array in place, through mpi4py's buffer (upper-case,
pickle-free) calls; only the ``*_object*`` functions pickle. A collective checks that every rank
passed the same dtype and shape (``all_reduce`` with a fingerprint in the same ``Allreduce`` as a
small tensor's data, the others with one small ``Allreduce`` first), so a mismatch is an error naming each rank's shape
instead of MPI's undefined behaviour. A watchdog thread aborts every rank
when a collective outlasts the group's timeout, and an uncaught exception on one rank aborts the
others (``sys.excepthook``): a failure never leaves the other ranks waiting for ever.
"""

from __future__ import annotations

import datetime
import enum
import os
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..tensor import Tensor

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group", "irecv",
    "is_available", "is_initialized", "is_mpi_available", "isend", "new_group", "recv", "reduce",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]

MPI4PY_MISSING = ('retrograd.distributed needs mpi4py and an MPI library: pip install "retrograd[distributed]" '
                  "(or pip install mpi4py mpich)")
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # PyTorch's default_pg_timeout
_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


_MPI: Any = None
_HEADER = 32  # bytes of a checked all_reduce's slot before its payload (keeps complex128 aligned)
_INITIAL_CAP = 1024  # the slot's payload capacity before any checked call (and after a mismatch)


def _small_bytes(size: int) -> int:
    """The largest payload a checked ``all_reduce`` folds into its check round (one Allreduce of
    [fingerprint | payload]): 32 KB, about where copying the payload in and out of the slot costs
    as much as the separate check round it saves. ``RETROGRAD_DISTRIBUTED_SMALL_BYTES`` sets it.

    >>> _small_bytes(2)
    32768
    """
    value = os.environ.get("RETROGRAD_DISTRIBUTED_SMALL_BYTES", "")
    if not value.strip().isdigit():
        if value:
            raise ValueError(f"RETROGRAD_DISTRIBUTED_SMALL_BYTES must be a number of bytes, got {value!r}")
        return 32768
    return int(value) // 16 * 16  # (every payload stays 16-byte aligned)


def _mpi() -> Any:
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except (ImportError, OSError, RuntimeError):  # (mpi4py without an MPI library to load raises too)
            raise ImportError(MPI4PY_MISSING) from None
        _MPI = MPI
    return _MPI


class ReduceOp:
    """The reductions of ``all_reduce``/``reduce``/``reduce_scatter_tensor`` (PyTorch's names).

    >>> import retrograd.distributed as dist
    >>> dist.ReduceOp.SUM
    <RedOpType.SUM: 0>
    """

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = list(RedOpType)[:9]


class _PremulSum:
    """``ReduceOp.PREMUL_SUM`` with its factor (``_make_nccl_premul_sum``)."""

    __slots__ = ("factor",)

    def __init__(self, factor: Any) -> None:
        self.factor = factor

    def __repr__(self) -> str:
        return f"<RedOpType.PREMUL_SUM: 8>(factor={self.factor!r})"


def _make_nccl_premul_sum(factor: Any) -> Any:
    """``ReduceOp.PREMUL_SUM`` with a factor (PyTorch's name; NCCL's op, here on any backend):
    ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor`` sum every rank's tensor times
    ``factor`` (a number or a one-element tensor), for floating-point tensors.

    >>> import retrograd as rg, retrograd.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = rg.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    >>> t
    tensor([0.5000, 1.0000])
    >>> dist.destroy_process_group()
    """
    if isinstance(factor, Tensor):
        if factor.numel() != 1:
            raise ValueError(f"_make_nccl_premul_sum: the factor must be a number or a one-element tensor, got "
                             f"shape {list(factor.shape)}")
        factor = factor.item()
    if not isinstance(factor, (int, float, complex)) or isinstance(factor, bool):
        raise TypeError(f"_make_nccl_premul_sum: the factor must be a number, got {type(factor).__name__}")
    return _PremulSum(factor)


def _premul(op: _PremulSum, t: Tensor, name: str) -> Tensor:
    """A new tensor, ``t`` times the factor (the caller's tensor changes only once the sum is there)."""
    if t._data.dtype.kind not in "fc" or (isinstance(op.factor, complex) and t._data.dtype.kind != "c"):
        raise ValueError(f"{name}: RedOpType.PREMUL_SUM is not supported on {t.dtype} tensors"
                         + (" with a complex factor" if isinstance(op.factor, complex) else ""))
    return Tensor._make(np.asarray(t._data * op.factor, dtype=t._data.dtype))


class Backend(str):
    """A backend name (``Backend.MPI == "mpi"``)."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UNDEFINED = "undefined"


class ProcessGroup:
    """A group of ranks and the MPI communicator that connects them (``new_group`` makes one).

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size.
    """

    def __init__(self, comm: Any, ranks: list[int], timeout: float) -> None:
        self._comm = comm
        self._ranks = ranks  # the group's members, as global ranks
        self._timeout = timeout
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        # The cross-rank dtype/shape check costs one small Allreduce per collective (one latency;
        # all_reduce folds it into its data round up to _small bytes). RETROGRAD_DISTRIBUTED_CHECKS=0
        # turns it off.
        self._check = os.environ.get("RETROGRAD_DISTRIBUTED_CHECKS", "1") != "0"
        self._small = _small_bytes(self._size)
        # The checked all_reduce's slot: every rank's check round must move the same number of
        # bytes whatever its tensor (MPICH aborts the job on a truncated message), so its payload
        # capacity is state the ranks agree on: the previous checked call's size (see _fold_round).
        self._cap = 0
        self._scratch: np.ndarray | None = None  # the slot's memory, reused by every call
        self._plan: tuple[Any, ...] | None = None  # the last folded all_reduce's views, for the next one
        self._big_plan: tuple[Any, ...] | None = None  # the last two-round all_reduce's, likewise
        self._direct: tuple[Any, ...] | None = None  # the last unchecked direct all_reduce's (_direct_plan)
        if self._size > 1:
            # The ranks' collectives must match, so they must agree on these: the most cautious wins
            # (the check stays on if any rank asks for it; the smallest slot).
            agreed = np.array([-int(self._check), self._small], dtype=np.int64)
            comm.Allreduce(_mpi().IN_PLACE, agreed, op=_mpi().MIN)
            self._check, self._small = bool(agreed[0] < 0), int(agreed[1])
        self._cap = _INITIAL_CAP if self._small >= _INITIAL_CAP else 0

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return Backend.MPI

    def __repr__(self) -> str:
        return f"ProcessGroup(backend='mpi', ranks={self._ranks})"


class _State:
    world: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    previous_excepthook: Any = None
    watchdog: _Watchdog | None = None


# The collective running now, for the watchdog: a new (name, group) tuple per call, None between
# calls. A list item, not an attribute: the cheapest store a call can make (two per collective).
_RUNNING: list[tuple[str, ProcessGroup] | None] = [None]


class _Watchdog(threading.Thread):
    """Aborts every rank when one collective runs past the timeout (another rank failed, or never
    reached it). A collective only stores a new ``(name, group)`` tuple in ``_RUNNING[0]`` (and
    None when it returns): no per-call thread, timer or clock read. The thread wakes every
    ``min(1 s, timeout / 20)``; the same tuple seen on two wakes is the same call (the thread
    holds the tuple, so no later call can have its identity), timed from the wake that first saw
    it: a call is aborted after its group's timeout and at most two wakes more, never before."""

    def __init__(self) -> None:
        super().__init__(name="retrograd.distributed watchdog", daemon=True)
        self.timeout = DEFAULT_TIMEOUT.total_seconds()  # (the wake interval's, between calls)
        self.stop = threading.Event()

    def run(self) -> None:
        seen: tuple[str, ProcessGroup] | None = None
        since = 0.0
        timeout = self.timeout
        while not self.stop.wait(min(1.0, max(timeout / 20, 0.05))):
            op = _RUNNING[0]
            if op is None or op is not seen:
                seen, since = op, time.monotonic()
                timeout = self.timeout if op is None else op[1]._timeout
            elif time.monotonic() - since > timeout:
                world = _State.world
                rank = -1 if world is None else world.rank()
                sys.stderr.write(
                    f"retrograd.distributed: rank {rank}: {op[0]} timed out after {timeout:g} s: another rank "
                    "failed or did not call the same collective; aborting all ranks\n")
                sys.stderr.flush()
                _mpi().COMM_WORLD.Abort(1)


def _excepthook(kind: Any, value: Any, tb: Any) -> None:
    # One rank's uncaught exception must not leave the others blocked in a collective: report it,
    # then abort the whole job (mpiexec ends every rank).
    previous = _State.previous_excepthook or sys.__excepthook__
    if previous is sys.__excepthook__:
        # One write, flushed: mpiexec forwards output in chunks and ends the job at Abort, so a
        # traceback printed piece by piece can lose its last line (the message) on the way.
        sys.stderr.write("".join(traceback.format_exception(kind, value, tb)))
        sys.stderr.flush()
    else:
        previous(kind, value, tb)
    world = _State.world
    if world is not None and world.size() > 1:
        sys.stderr.write(f"retrograd.distributed: rank {world.rank()} raised {kind.__name__}; aborting all ranks\n")
        sys.stderr.flush()
        _mpi().COMM_WORLD.Abort(1)


class _GroupNamespace:
    """``dist.group.WORLD``: the default group (``None`` before ``init_process_group``)."""

    @property
    def WORLD(self) -> ProcessGroup | None:  # noqa: N802  (PyTorch's name)
        return _State.world


group = _GroupNamespace()
GroupMember = group


def is_available() -> bool:
    """Whether the distributed package can run here (mpi4py is installed).

    >>> import retrograd.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    """Whether the MPI backend is available (the only backend: mpi4py is installed)."""
    return is_available()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not).

    >>> import retrograd.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _State.world is not None


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return None if value in (None, "") else int(value)  # type: ignore[arg-type]


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Join the default group: every process that ``mpiexec`` started (``MPI.COMM_WORLD``).

    ``backend`` is ``"mpi"`` (or None; ``"gloo"`` runs over MPI too). The rank and world size are MPI's; ``rank``/``world_size``
    and the ``RANK``/``WORLD_SIZE`` environment variables, when given, must agree with them.
    ``timeout`` bounds every collective (default 30 minutes): past it, all ranks are aborted.

    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi")  # one process, without mpiexec
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if _State.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        # "gloo" (PyTorch's CPU backend, and "cpu:gloo,cuda:nccl" strings) runs over MPI here, so
        # that PyTorch scripts run unchanged; a GPU-only backend cannot.
        kinds = {part.split(":")[-1].strip() for part in str(backend).lower().split(",")}
        if not kinds & {Backend.MPI, Backend.GLOO}:
            raise ValueError(f"retrograd.distributed runs on the CPU over MPI: backend {backend!r} is not available; "
                             "use 'mpi' (or 'gloo', which runs over MPI here)")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    for what, given, actual in (("rank", rank, mpi_rank), ("world_size", world_size, mpi_size),
                                ("RANK", _env_int("RANK"), mpi_rank),
                                ("WORLD_SIZE", _env_int("WORLD_SIZE"), mpi_size)):
        if given is not None and given != -1 and given != actual:
            raise ValueError(f"init_process_group: {what}={given} disagrees with MPI's {actual} "
                             f"(rank {mpi_rank} of {mpi_size}): launch with mpiexec -n N")
    seconds = (timeout or DEFAULT_TIMEOUT).total_seconds()
    for red, name in ((ReduceOp.SUM, "SUM"), (ReduceOp.PRODUCT, "PROD"), (ReduceOp.MIN, "MIN"), (ReduceOp.MAX, "MAX")):
        _DIRECT_OPS[red] = getattr(MPI, name)
    global _DIRECT_SUM, _IN_PLACE
    _DIRECT_SUM = MPI.SUM
    _IN_PLACE = MPI.IN_PLACE
    _State.world = ProcessGroup(comm.Dup(), list(range(mpi_size)), seconds)
    _State.groups = [_State.world]
    watchdog = _State.watchdog = _Watchdog()
    watchdog.timeout = seconds
    watchdog.start()
    _State.previous_excepthook = sys.excepthook
    sys.excepthook = _excepthook


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default group (all groups) or free one group made by ``new_group``."""
    if group is None or group is _State.world:
        if _State.world is None:
            raise AssertionError("Process group cannot be None")
        for pg in _State.groups:
            if pg._comm is not None:
                pg._comm.Free()
                pg._comm = None
        _State.world = None
        _State.groups = []
        if _State.watchdog is not None:
            _State.watchdog.stop.set()
            _State.watchdog = None
        if sys.excepthook is _excepthook:
            sys.excepthook = _State.previous_excepthook
        _State.previous_excepthook = None
        return
    if group in _State.groups:
        _State.groups.remove(group)
        if group._comm is not None:
            group._comm.Free()
            group._comm = None


def _world() -> ProcessGroup:
    world = _State.world
    if world is None:
        raise ValueError(_NOT_INITIALIZED)
    return world


def _resolve(group: ProcessGroup | None) -> ProcessGroup | None:
    """The group to use, or None when this rank is not a member (the call is then a no-op)."""
    world = _world()
    if group is None:
        return world
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group(), got {type(group).__name__}")
    if group._comm is None:  # a non-member's handle (or a destroyed group)
        return None
    return group


def _not_member(op_name: str) -> Any:
    """PyTorch's warning for a collective called by a non-member of the group; the call returns None."""
    world = _State.world
    warnings.warn(f"Running {op_name} on global rank {-1 if world is None else world.rank()} which does not "
                  "belong to the given group.", stacklevel=3)
    return None


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 when it is not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (default: the world); -1 when this rank is not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The group's backend name: ``"mpi"``."""
    _world()
    return Backend.MPI


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list((_world() if group is None else group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank within ``group`` of the process whose global rank is ``global_rank``."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def new_group(ranks: Sequence[int] | None = None, timeout: datetime.timedelta | None = None,
              backend: str | None = None, pg_options: Any = None, use_local_synchronization: bool = False,
              group_desc: str | None = None, device_id: Any = None) -> ProcessGroup:
    """A group of some ranks (default: all). Every rank must call it, members or not, as in PyTorch;
    a non-member gets a handle on which collectives do nothing."""
    world = _world()
    members = sorted(range(world.size()) if ranks is None else {int(r) for r in ranks})
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}, rank should be in the interval [0, {world.size() - 1}]")
    comm = world._comm.Create(world._comm.Get_group().Incl(members))
    seconds = world._timeout if timeout is None else timeout.total_seconds()
    if comm == _mpi().COMM_NULL:
        pg = ProcessGroup.__new__(ProcessGroup)
        pg._comm, pg._ranks, pg._timeout, pg._rank, pg._size, pg._check = None, members, seconds, -1, -1, False
        pg._small, pg._cap, pg._scratch, pg._plan, pg._big_plan = 0, 0, None, None, None
        return pg
    pg = ProcessGroup(comm, members, seconds)
    _State.groups.append(pg)
    return pg


# -- running a call ----------------------------------------------------------------------------

def _timed(pg: ProcessGroup, name: str, call: Callable[[], Any]) -> Any:
    """Run one blocking MPI call under the watchdog; MPI's own errors become RuntimeError."""
    _RUNNING[0] = (name, pg)
    try:
        return call()
    except _mpi().Exception as e:
        raise RuntimeError(f"{name}: MPI error: {e.Get_error_string()}") from None
    finally:
        _RUNNING[0] = None


class Work:
    """A collective started with ``async_op=True``: ``wait()`` blocks until it is done.

    ``is_completed()`` says whether it is done without blocking; ``result()`` is the tensors it wrote.
    """

    def __init__(self, pg: ProcessGroup, name: str, requests: list[Any], finish: Callable[[], None] | None,
                 outputs: list[Tensor]) -> None:
        self._pg = pg
        self._name = name
        self._requests = requests
        self._finish = finish
        self._outputs = outputs
        self._done = False

    def _complete(self) -> None:
        self._done = True
        self._requests = []
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        if not self._done:
            requests = self._requests
            MPI = _mpi()
            _timed(self._pg, self._name, lambda: MPI.Request.Waitall(requests))
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done and _mpi().Request.Testall(self._requests):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self) -> None:
        return None

    def result(self) -> list[Tensor]:
        return list(self._outputs)

    def get_future(self) -> Any:
        """A future completed by this work: its ``wait()``/``value()`` is the list of output tensors
        (``[]`` for a barrier), and ``then(callback)`` chains a computation on it."""
        from ._future import Future

        return Future._of(lambda: self.wait() and self.result(), self.is_completed)

    def __repr__(self) -> str:
        return f"Work({self._name}, completed={self._done})"


class _DoneWork(Work):
    """A finished blocking call returned as a handle (``async_op=True`` on a call with no overlap)."""

    def __init__(self, pg: ProcessGroup, name: str, outputs: list[Tensor]) -> None:
        super().__init__(pg, name, [], None, outputs)
        self._done = True


# -- tensors and MPI buffers -------------------------------------------------------------------

_MPI_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
            ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
# bool tensors travel as uint8: a sum or a product of truth values is their OR or AND
_BOOL_OPS = {ReduceOp.SUM: "MAX", ReduceOp.PRODUCT: "MIN", ReduceOp.MIN: "MIN", ReduceOp.MAX: "MAX",
             ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
_NO_COMPLEX = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def _tensor(t: Any, name: str, what: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{what}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")
    return t


def _mpi_op(op: Any, t: Tensor, name: str) -> Any:
    return getattr(_mpi(), _op_name(op, t, name))


def _op_name(op: Any, t: Tensor, name: str) -> str:
    """MPI's name of the reduction ``op`` on ``t``'s dtype (bool: the logical one), or the error."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{name}(): op must be a ReduceOp (dist.ReduceOp.SUM, ...), got {op!r}")
    kind = t._data.dtype.kind
    if kind == "c" and op in _NO_COMPLEX:
        raise ValueError(f"{name} does not support {op} on complex tensors")
    table = _BOOL_OPS if kind == "b" else _MPI_OPS
    if op not in table or (op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "biu") or (
            op is ReduceOp.AVG and kind not in "fc"):
        raise ValueError(f"{name}: {op} is not supported on {_dtype_name(t)} tensors")
    return table[op]


def _dtype_name(t: Tensor) -> str:
    return str(t.dtype)


def _buffer(arr: np.ndarray) -> np.ndarray:
    """What MPI reads and writes: the array itself when it is contiguous (bool as uint8)."""
    if arr.dtype == np.bool_:
        return arr.view(np.uint8) if arr.flags.c_contiguous else np.ascontiguousarray(arr).view(np.uint8)
    if arr.dtype.kind == "V" or arr.dtype.char not in _MPI_TYPECODES:  # (bfloat16: MPI has no such type)
        return np.ascontiguousarray(arr, dtype=np.float32)
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)


_MPI_TYPECODES = frozenset("bBhHiIlLqQefdDFgG?")
# all_reduce's direct path: these ops on these real types need no conversion, check or division
_DIRECT_OPS: dict[Any, Any] = {}
_DIRECT_TYPES = frozenset("bBhHiIlLqQefdg")
_DIRECT_SUM: Any = None
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_MPI_DATATYPES: dict[str, Any] = {}  # a NumPy type code's MPI datatype (_spec)
_IN_PLACE: Any = None


def _store(t: Tensor, buf: np.ndarray, name: str) -> None:
    """Bring a result computed in ``buf`` back into ``t`` (a no-op when ``buf`` is ``t``'s memory)."""
    data = t._data
    if buf.dtype == np.uint8 and data.dtype == np.bool_:
        buf = buf.view(np.bool_)
    if buf is not data and not np.may_share_memory(buf, data):  # (else MPI wrote into t's memory)
        np.copyto(data, buf.reshape(data.shape), casting="unsafe")
    t._counter().bump(name)


def _check_same(pg: ProcessGroup, name: str, tensors: Sequence[Tensor]) -> None:
    """All ranks passed tensors of one dtype and shape, or every rank raises naming each rank's."""
    if pg._size == 1 or not pg._check:
        return
    # (a hash of ints only: a str's hash differs between processes)
    key = tuple((ord(t._data.dtype.char), t._data.ndim, *t._data.shape) for t in tensors)
    sig = np.array([hash(key) & ((1 << 62) - 1)], dtype=np.int64)
    both = np.concatenate([sig, -sig])
    _timed(pg, name, lambda: pg._comm.Allreduce(_mpi().IN_PLACE, both, op=_mpi().MAX))
    if both[0] == -both[1]:
        return
    _mismatch(pg, name, tensors)


def _mismatch(pg: ProcessGroup, name: str, tensors: Sequence[Tensor], op: Any = None) -> NoReturn:
    """Every rank found that the ranks' calls differ: one more round gathers each rank's tensors
    (and op) so that the error names them, the same on every rank."""
    mine = ", ".join(f"{list(t._data.shape)} {t.dtype}" for t in tensors)
    every = _timed(pg, name, lambda: pg._comm.allgather((mine, getattr(op, "name", None))))
    if op is not None and all(s == every[0][0] for s, _ in every):  # same tensors: the ops differ
        described = "; ".join(f"rank {pg._ranks[r]}: {o}" for r, (_, o) in enumerate(every))
        raise RuntimeError(f"{name}: the ops differ across ranks ({described})")
    described = "; ".join(f"rank {pg._ranks[r]}: {s}" for r, (s, _) in enumerate(every))
    raise RuntimeError(f"{name}: tensor shapes or dtypes differ across ranks ({described})")


def _group_rank(pg: ProcessGroup, global_rank: int | None, group_rank: int | None, what: str,
                default: int | None = 0) -> int:
    """The rank in ``pg`` named by a global rank or a group rank (PyTorch's rules and messages:
    ``gather``/``scatter`` default to rank 0, ``broadcast``/``reduce``/``send`` need one)."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < pg._size:
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    if global_rank is None:
        if default is None:
            raise ValueError("Must specify global_rank or group_rank")
        global_rank = default
    if pg is _State.world:
        if not 0 <= global_rank < pg._size:
            raise RuntimeError(f"invalid {what} rank: {global_rank} (ranks are 0..{pg._size - 1})")
        return global_rank
    return get_group_rank(pg, global_rank)


def _finish(pg: ProcessGroup, name: str, requests: list[Any], finish: Callable[[], None],
            outputs: list[Tensor], async_op: bool) -> Work | None:
    """Return a Work for an async call; else wait for the requests.

    Blocking calls start MPI's non-blocking collective too and wait for it: in MPI a blocking and a
    non-blocking collective do not match (MPICH hangs), while ``async_op`` is each rank's own
    choice in PyTorch."""
    if async_op:
        return Work(pg, name, requests, finish, outputs)
    _timed(pg, name, lambda: _mpi().Request.Waitall(requests))
    finish()
    return None


# -- collectives -------------------------------------------------------------------------------

def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over all ranks of ``group``, in place on every rank.

    >>> import retrograd as rg, retrograd.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = rg.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    pg = _State.world if group is None else group if (
        type(group) is ProcessGroup and group._comm is not None and _State.world is not None) else _resolve(group)
    if pg is not None:
        plan = pg._plan
        if plan is not None and plan[11] is tensor and plan[0] is tensor._data and plan[1] is op and (
                plan[2] == pg._cap) and pg._check:
            # The same tensor, memory and op as the last folded call (a training loop's): every
            # view is ready, and the less Python runs between two collectives, the less a loaded
            # machine's ranks drift. (See _all_reduce_checked, which prepared it.)
            _, _, _, slot, head, header, want, payload, source, mpi_op, avg, _, reduce = plan
            head[:] = header  # (memoryviews: plain memcpys)
            payload[:] = source
            _RUNNING[0] = ("all_reduce", pg)  # (_timed's work, inline)
            try:
                reduce(_IN_PLACE, slot, mpi_op)  # (slot: its buffer spec)
            except _MPI.Exception as e:
                raise RuntimeError(f"all_reduce: MPI error: {e.Get_error_string()}") from None
            finally:
                _RUNNING[0] = None
            if head != want:
                _fold_failed(pg, tensor, op)
            source[:] = payload
            if avg:
                np.divide(plan[0], pg._size, out=plan[0])
            (tensor._version_counter or tensor._counter()).bump("all_reduce")
            return _DoneWork(pg, "all_reduce", [tensor]) if async_op else None
        plan = pg._direct
        if plan is not None and plan[0] is tensor and plan[1] is op and plan[2] is tensor._data and (
                plan[3] is pg._check) and (plan[4] or not async_op):
            # The same tensor (and memory) and op as the last unchecked call: every check passed
            # then and holds now, and the buffer spec is built, so mpi4py parses nothing either.
            _RUNNING[0] = ("all_reduce", pg)  # (_timed's work, inline)
            try:
                if plan[4]:
                    plan[6](_IN_PLACE, plan[5], plan[7])
                else:
                    plan[6](_IN_PLACE, plan[5], plan[7]).Wait()  # (Iallreduce: matches another rank's async call)
            except _MPI.Exception as e:
                raise RuntimeError(f"all_reduce: MPI error: {e.Get_error_string()}") from None
            finally:
                _RUNNING[0] = None
            (tensor._version_counter or tensor._counter()).bump("all_reduce")
            return _DoneWork(pg, "all_reduce", [tensor]) if async_op else None
        plan = pg._big_plan
        if plan is not None and plan[9] is tensor and plan[0] is tensor._data and plan[1] is op and (
                plan[2] == pg._cap) and pg._check and not async_op:
            # The same tensor, memory and op as the last two-round call: its fingerprint words and
            # buffer specs are ready (see _all_reduce_checked).
            _all_reduce_again(pg, tensor, plan)
            return None
    if pg is None:
        if _State.world is None:
            raise ValueError(_NOT_INITIALIZED)
        return _not_member("all_reduce")
    return _all_reduce_unprepared(pg, tensor, op, group, async_op)


def _all_reduce_unprepared(pg: ProcessGroup, tensor: Tensor, op: Any, group: ProcessGroup | None,
                           async_op: bool) -> Work | None:
    """``all_reduce`` of a call that is not the prepared repeat of the last one: the checks, and
    the path for the tensor, op and group (it prepares the next repeat where it can). Apart from
    ``all_reduce`` because its closure (``finish``) would make every local of ``all_reduce`` a
    cell, costing the prepared path about 0.2 us a call."""
    if not isinstance(tensor, Tensor):
        _tensor(tensor, "all_reduce")
    if op is not ReduceOp.SUM and type(op) is _PremulSum:
        scaled = _premul(op, tensor, "all_reduce")
        all_reduce(scaled, group=group)
        _store(tensor, scaled._data, "all_reduce")
        return _DoneWork(pg, "all_reduce", [tensor]) if async_op else None
    data = tensor._data
    if pg._check and pg._size > 1:
        return _all_reduce_checked(pg, tensor, op, async_op)
    fast = _DIRECT_SUM if op is ReduceOp.SUM else _DIRECT_OPS.get(op)  # (an Enum's hash is slow)
    dt = data.dtype
    if fast is not None and (dt is _F32 or dt is _F64 or dt.char in _DIRECT_TYPES) and data.flags.c_contiguous:
        # The common case in a few attribute reads: MPI reduces the tensor's own memory. Up to
        # pg._small bytes MPI's blocking Allreduce (cheaper per call than Iallreduce and Wait),
        # whatever async_op says: MPI never matches a blocking call with a non-blocking one, and
        # a size every rank shares picks the same one on every rank.
        small = data.nbytes <= pg._small
        if small or not async_op:
            # The plan made, this call runs as every repeat of it does: by the prepared path above.
            pg._direct = _direct_plan(pg, tensor, op, small, fast)
            return all_reduce(tensor, op, group, async_op)
    mpi_op = _mpi_op(op, tensor, "all_reduce")
    buf = _buffer(data)
    comm, MPI = pg._comm, _mpi()

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.divide(buf, pg._size, out=buf)
        _store(tensor, buf, "all_reduce")

    if buf.nbytes <= pg._small:  # (blocking, as above)
        _timed(pg, "all_reduce", lambda: comm.Allreduce(MPI.IN_PLACE, buf, op=mpi_op))
        finish()
        return _DoneWork(pg, "all_reduce", [tensor]) if async_op else None
    return _finish(pg, "all_reduce", [comm.Iallreduce(MPI.IN_PLACE, buf, op=mpi_op)], finish, [tensor], async_op)


def _spec(arr: np.ndarray) -> Any:
    """mpi4py's buffer spec ``[buffer, count, datatype]`` for a contiguous array of an MPI type:
    given the count and type, mpi4py skips parsing the buffer's format, and given its own
    ``MPI.buffer`` (made once, over the array's memory) it skips NumPy's buffer export too
    (together about 0.25 us of mpi4py's 0.8 per call). The buffer keeps the array alive.

    >>> spec = _spec(np.zeros(3, np.float32))
    >>> spec[0].nbytes, spec[1], spec[2].name
    (12, 3, 'MPI_FLOAT')
    """
    dt = _MPI_DATATYPES.get(arr.dtype.char)
    if dt is None:
        dt = _MPI_DATATYPES[arr.dtype.char] = _mpi().Datatype.fromcode(arr.dtype.char)
    return [_mpi().buffer(arr), arr.size, dt]


def _direct_plan(pg: ProcessGroup, tensor: Tensor, op: Any, small: bool, mpi_op: Any) -> tuple[Any, ...]:
    """What the next unchecked ``all_reduce`` of this tensor and op needs (see ``all_reduce``):
    (tensor, op, its memory, the check flag it was made under, blocking?, the buffer spec, the
    bound MPI call, MPI's op)."""
    comm = pg._comm
    return (tensor, op, tensor._data, pg._check, small, _spec(tensor._data),
            comm.Allreduce if small else comm.Iallreduce, mpi_op)


def _all_reduce_checked(pg: ProcessGroup, tensor: Tensor, op: Any, async_op: bool) -> Work | None:
    """``all_reduce`` with the cross-rank check, in one round when the tensor fits the slot.

    Every rank's first call is one ``Allreduce`` of the group's slot: ``_slot_bytes(pg, pg._cap)``
    bytes on every rank whatever its tensor, so a mismatch can never truncate a message (MPICH
    aborts the job on one). When the call folds (SUM/AVG/MAX/MIN on a 4- to 16-byte type, up to
    ``pg._cap`` bytes) the slot is [fingerprint | payload] in the tensor's dtype and op: the
    reduced fingerprint says whether every rank passed the same op, dtype and shape (exactly,
    for ranks of one dtype; see ``_fingerprint``), and the payload is the result. Otherwise the
    slot carries a 62-bit hash (int64 MAX of (h, -h)) and the data follows in MPI's ``Allreduce``
    in place. After a check that passes, every rank sets the next call's capacity from this one's
    size (identical everywhere: the sizes matched), so a loop's repeated call folds from its
    second time on. A folded call's ``async_op=True`` is done at once; a failure leaves the
    tensor as it was.
    """
    name = "all_reduce"
    data = tensor._data
    plan = pg._plan
    if plan is not None and plan[0] is data and plan[1] is op and plan[2] == pg._cap:
        # The same memory and op as the last folded call, through another tensor object (a view
        # made afresh each step): the prepared views serve it, by all_reduce's prepared path.
        pg._plan = (*plan[:11], tensor, plan[12])
        return all_reduce(tensor, op, pg, async_op)
    big = pg._big_plan
    if big is not None and big[0] is data and big[1] is op and big[2] == pg._cap and not async_op:
        _all_reduce_again(pg, tensor, big)
        return None
    try:  # (an op this dtype refuses raises after the check round, so no rank is left waiting)
        refused: Exception | None = None
        op_name = _op_name(op, tensor, name)
    except (TypeError, ValueError) as e:
        refused, op_name = e, "SUM"
    buf = _buffer(data)
    nbytes = buf.nbytes
    comp = _component(buf.dtype)
    foldable = refused is None and comp is not None and op_name in ("SUM", "MAX", "MIN")
    key = hash((getattr(op, "value", -1), ord(data.dtype.char), data.ndim, *data.shape)) & ((1 << 62) - 1)
    scratch = pg._scratch
    if scratch is None:  # (complex128 words: every view of it is aligned)
        scratch = pg._scratch = np.zeros(_slot_bytes(pg, pg._small) // 16, dtype=np.complex128).view(np.uint8)
    cap, comm, MPI = pg._cap, pg._comm, _mpi()
    if foldable and comp is not None and nbytes <= cap:
        slot = scratch[:_slot_bytes(pg, cap)].view(buf.dtype)
        head = scratch[:_HEADER].view(comp)
        header, want = _fingerprint(key, comp, op_name == "SUM", pg._size)
        head[:] = header
        payload = scratch[_HEADER:_HEADER + nbytes].view(buf.dtype).reshape(buf.shape)
        np.copyto(payload, buf)
        mpi_op = getattr(MPI, op_name)
        _timed(pg, name, lambda: comm.Allreduce(MPI.IN_PLACE, slot, op=mpi_op))
        if head.tobytes() != want:
            _fold_failed(pg, tensor, op)
        if op is ReduceOp.AVG:
            np.divide(payload, pg._size, out=payload)
        _store(tensor, payload, name)
        pg._cap = -(-nbytes // 16) * 16
        if buf is data and nbytes:  # (contiguous: the next call with this tensor and op copies bytes only)
            pg._plan = (data, op, pg._cap, _spec(scratch[:_slot_bytes(pg, pg._cap)].view(buf.dtype)),
                        scratch[:_HEADER].data, header.tobytes(), memoryview(want),
                        payload.reshape(-1).data.cast("B"), data.reshape(-1).data.cast("B"), mpi_op,
                        op is ReduceOp.AVG, tensor, comm.Allreduce)
        return _DoneWork(pg, name, [tensor]) if async_op else None
    words = scratch[:_slot_bytes(pg, cap)].view(np.int64)
    words[0], words[1], words[2] = key, -key, async_op  # (words[2]: under MAX, whether any rank is async)
    _timed(pg, name, lambda: comm.Allreduce(MPI.IN_PLACE, words, op=MPI.MAX))
    if words[0] != key or words[1] != -key:
        _fold_failed(pg, tensor, op)
    every_rank_blocks = not words[2]
    pg._cap = -(-nbytes // 16) * 16 if foldable and nbytes <= pg._small else 0
    if refused is not None:
        raise refused
    mpi_op = getattr(MPI, op_name)
    if buf is data and not async_op and not pg._cap and nbytes:
        # (the next call with this tensor and op runs two rounds again: it skips the preparation)
        words = scratch[:_slot_bytes(pg, pg._cap)].view(np.int64)
        pg._big_plan = (data, op, pg._cap, words, key, mpi_op, op is ReduceOp.AVG, _spec(words), _spec(data),
                        tensor)

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.divide(buf, pg._size, out=buf)
        _store(tensor, buf, name)

    if every_rank_blocks:  # (the check round said so: MPI's blocking Allreduce matches on every rank)
        _timed(pg, name, lambda: comm.Allreduce(MPI.IN_PLACE, buf, op=mpi_op))
        finish()
        return None
    return _finish(pg, name, [comm.Iallreduce(MPI.IN_PLACE, buf, op=mpi_op)], finish, [tensor], async_op)


def _all_reduce_again(pg: ProcessGroup, tensor: Tensor, plan: tuple[Any, ...]) -> None:
    """A blocking two-round ``all_reduce`` of the same tensor and op as the last one: the
    fingerprint round, then MPI's reduction in the tensor's memory, with nothing recomputed.
    The fingerprint round also says whether every rank's call blocks (``words[2]``, under MAX,
    is 1 if any rank's is ``async_op``): then the data goes by MPI's blocking ``Allreduce``,
    else by ``Iallreduce``, which is what an async rank starts (the two do not match)."""
    name = "all_reduce"
    data, op, _, words, key, mpi_op, avg, words_spec, data_spec, _ = plan
    comm = pg._comm
    words[0], words[1], words[2] = key, -key, 0
    _RUNNING[0] = (name, pg)  # (_timed's work, inline)
    try:
        comm.Allreduce(_MPI.IN_PLACE, words_spec, _MPI.MAX)
        agreed = words[0] == key and words[1] == -key
        if agreed:
            if words[2]:
                comm.Iallreduce(_MPI.IN_PLACE, data_spec, mpi_op).Wait()  # (matches another rank's async call)
            else:
                comm.Allreduce(_MPI.IN_PLACE, data_spec, mpi_op)
    except _MPI.Exception as e:
        raise RuntimeError(f"{name}: MPI error: {e.Get_error_string()}") from None
    finally:
        _RUNNING[0] = None
    if not agreed:
        _fold_failed(pg, tensor, op)
    if avg:
        np.divide(data, pg._size, out=data)
    (tensor._version_counter or tensor._counter()).bump(name)


def _fold_failed(pg: ProcessGroup, tensor: Tensor, op: Any) -> NoReturn:
    """A checked ``all_reduce`` found that the ranks' calls differ: every rank forgets the slot's
    capacity the same way (the next call starts from the initial one), then raises naming them."""
    pg._cap = _INITIAL_CAP if pg._small >= _INITIAL_CAP else 0
    pg._plan = pg._big_plan = None
    _mismatch(pg, "all_reduce", (tensor,), op)


def _slot_bytes(pg: ProcessGroup, cap: int) -> int:
    """The bytes of the check round for a payload capacity ``cap``: the header and the payload,
    rounded up to 16 bytes per rank, so that however MPI splits the slot among the ranks
    (reduce-scatter, ring) a rank with another dtype splits it at the same bytes."""
    unit = 16 * pg._size
    return -(-(_HEADER + cap) // unit) * unit


# bits b of a fingerprint number 1 <= s <= 2**b: n * s * s stays exact in the header's type
# (floats' mantissas; integers clear of the sign bit); 1- and 2-byte types have too few and do not fold
_EXACT_BITS = {"f4": 24, "f8": 53, "i4": 30, "i8": 62, "u4": 31, "u8": 63}


def _component(dt: np.dtype) -> np.dtype | None:
    """The real type a folded slot's header is written in (a complex type's parts), or None when
    the dtype does not fold."""
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    return dt if f"{dt.kind}{dt.itemsize}" in _EXACT_BITS and dt.isnative else None


def _fingerprint(key: int, comp: np.dtype, summed: bool, n: int) -> tuple[np.ndarray, bytes]:
    """The 32-byte header of a folded call whose (op, dtype, shape) hash is ``key`` on a group of
    ``n`` ranks, and the bytes it must hold after the reduction.

    The header holds pairs of small integers s cut from the hash: (s, s*s) under SUM, where every
    rank reads (n s, n s*s) only if all ranks' s are equal (then sum (s_i - s)^2 = 0: a rank cannot
    pass alone); (s, -s) under MAX or MIN, where the max and the min of the s_i are both s only if
    all are equal. Both are exact: every sum is an integer the type holds exactly.

    >>> header, want = _fingerprint(5, np.dtype(np.float32), True, 2)
    >>> header[:2].tolist(), np.frombuffer(want, np.float32)[:2].tolist()
    ([6.0, 36.0], [12.0, 72.0])
    """
    bits = min(31, (_EXACT_BITS[f"{comp.kind}{comp.itemsize}"] - (n - 1).bit_length()) // 2)
    values: list[int] = []
    for j in range(_HEADER // comp.itemsize // 2):
        s = (key >> (bits * j) & ((1 << bits) - 1)) + 1
        values += [s, s * s] if summed else [s, -s]
    header = np.array(values, dtype=np.int64).astype(comp)  # (an unsigned -s wraps: MAX/MIN still exact)
    want = np.array([v * n for v in values] if summed else values, dtype=np.int64).astype(comp)
    return header, want.tobytes()


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every other rank."""
    tensor = _tensor(tensor, "broadcast")
    pg = _resolve(group)
    if pg is None:
        return _not_member("broadcast")
    root = _group_rank(pg, src, group_src, "src", None)
    _check_same(pg, "broadcast", (tensor,))
    buf = _buffer(tensor._data)
    comm = pg._comm

    def finish() -> None:
        if pg._rank != root:
            _store(tensor, buf, "broadcast")

    return _finish(pg, "broadcast", [comm.Ibcast(buf, root=root)], finish, [tensor], async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor`` (the others' are unchanged)."""
    tensor = _tensor(tensor, "reduce")
    pg = _resolve(group)
    if pg is None:
        return _not_member("reduce")
    root = _group_rank(pg, dst, group_dst, "dst", None)
    if type(op) is _PremulSum:
        scaled = _premul(op, tensor, "reduce")
        reduce(scaled, group=group, group_dst=root)
        if pg._rank == root:
            _store(tensor, scaled._data, "reduce")
        return _DoneWork(pg, "reduce", [tensor]) if async_op else None
    mpi_op = _mpi_op(op, tensor, "reduce")
    _check_same(pg, "reduce", (tensor,))
    MPI, comm = _mpi(), pg._comm
    at_root = pg._rank == root
    buf = _buffer(tensor._data)
    send: Any = MPI.IN_PLACE if at_root else buf.copy()  # (a copy: the caller's tensor stays as it was)
    recv: Any = buf if at_root else None

    def finish() -> None:
        if at_root:
            if op is ReduceOp.AVG:
                np.divide(buf, pg._size, out=buf)
            _store(tensor, buf, "reduce")

    return _finish(pg, "reduce", [comm.Ireduce(send, recv, op=mpi_op, root=root)], finish, [tensor], async_op)


def _gather_buffer(name: str, tensor: Tensor, outputs: Sequence[Tensor], size: int, what: str) -> np.ndarray:
    if len(outputs) != size:
        raise ValueError(f"{name}: {what} must have {size} tensors (the group's size), got {len(outputs)}")
    for i, out in enumerate(outputs):
        _tensor(out, name, what)
        if out.shape != tensor.shape or out.dtype != tensor.dtype:
            raise ValueError(f"{name}: {what}[{i}] has shape {list(out.shape)} and dtype {out.dtype}; "
                             f"the input has {list(tensor.shape)} and {tensor.dtype}")
    return np.empty((size, *_buffer(tensor._data).shape), dtype=_buffer(tensor._data).dtype)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor``, into ``tensor_list[r]`` on every rank."""
    tensor = _tensor(tensor, "all_gather")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_gather")
    out = _gather_buffer("all_gather", tensor, tensor_list, pg._size, "tensor_list")
    _check_same(pg, "all_gather", (tensor,))
    buf = _buffer(tensor._data)
    comm = pg._comm

    def finish() -> None:
        for r, t in enumerate(tensor_list):
            _store(t, out[r], "all_gather")

    return _finish(pg, "all_gather", [comm.Iallgather(buf, out)], finish, list(tensor_list), async_op)


def _group_of_n_parts(name: str, part: Tensor, whole: Tensor, part_what: str, whole_what: str,
                      group: ProcessGroup | None) -> ProcessGroup | None:
    """The group of a collective between ``part`` and ``whole`` (``world_size`` parts, one dtype),
    after checking their sizes; None when this rank is not a member."""
    pg = _resolve(group)
    if pg is not None and (whole.numel() != part.numel() * pg._size or whole.dtype != part.dtype):
        raise ValueError(f"{name}: {whole_what} tensor must have {pg._size} times the {part_what}'s {part.numel()} "
                         f"elements and its dtype {part.dtype}; got {whole.numel()} of {whole.dtype}")
    return pg


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, concatenated (or stacked) along dim 0 into ``output_tensor``."""
    out_t = _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    in_t = _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _group_of_n_parts("all_gather_into_tensor", in_t, out_t, "input", "output", group)
    if pg is None:
        return _not_member("all_gather_into_tensor")
    _check_same(pg, "all_gather_into_tensor", (in_t,))
    buf = _buffer(in_t._data)
    out = _buffer(out_t._data)
    if out is out_t._data:
        out = out.reshape(-1)
    comm = pg._comm

    def finish() -> None:
        _store(out_t, out, "all_gather_into_tensor")

    return _finish(pg, "all_gather_into_tensor", [comm.Iallgather(buf, out)], finish, [out_t], async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,  # noqa: A002  (PyTorch's name)
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` over the group and give rank r the r-th of its ``world_size`` equal parts."""
    out_t = _tensor(output, "reduce_scatter_tensor", "output")
    in_t = _tensor(input, "reduce_scatter_tensor", "input")
    pg = _group_of_n_parts("reduce_scatter_tensor", out_t, in_t, "output", "input", group)
    if pg is None:
        return _not_member("reduce_scatter_tensor")
    if type(op) is _PremulSum:
        reduce_scatter_tensor(out_t, _premul(op, in_t, "reduce_scatter_tensor"), group=group)
        return _DoneWork(pg, "reduce_scatter_tensor", [out_t]) if async_op else None
    mpi_op = _mpi_op(op, in_t, "reduce_scatter_tensor")
    _check_same(pg, "reduce_scatter_tensor", (in_t,))
    send = _buffer(in_t._data)
    recv = np.empty(out_t.numel(), dtype=send.dtype)
    comm = pg._comm

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.divide(recv, pg._size, out=recv)
        _store(out_t, recv, "reduce_scatter_tensor")

    return _finish(pg, "reduce_scatter_tensor", [comm.Ireduce_scatter_block(send, recv, op=mpi_op)], finish,
                   [out_t], async_op)


def _root_and_list(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, items: Any,
                   name: str) -> tuple[int, bool]:
    """The root of a gather or scatter (default: rank 0) and whether this rank is it; the list
    ``name`` must be given there and only there (PyTorch's checks and messages)."""
    root = _group_rank(pg, rank, group_rank, what)
    kind = "destination" if what == "dst" else "source"
    if pg._rank == root and not items:
        raise ValueError(f"Argument ``{name}`` must be specified on {kind} rank.")
    if pg._rank != root and items:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{kind} ranks.")
    return root, pg._rank == root


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor``, into ``gather_list`` on rank ``dst`` (the others pass no list)."""
    tensor = _tensor(tensor, "gather")
    pg = _resolve(group)
    if pg is None:
        return _not_member("gather")
    root, at_root = _root_and_list(pg, dst, group_dst, "dst", gather_list, "gather_list")
    out: Any = _gather_buffer("gather", tensor, gather_list, pg._size, "gather_list") if gather_list else None
    _check_same(pg, "gather", (tensor,))
    buf = _buffer(tensor._data)
    comm = pg._comm
    outputs = list(gather_list or [])

    def finish() -> None:
        if at_root:
            for r, t in enumerate(outputs):
                _store(t, out[r], "gather")

    return _finish(pg, "gather", [comm.Igather(buf, out, root=root)], finish, outputs, async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False, group_src: int | None = None) -> Work | None:
    """``scatter_list[r]`` of rank ``src`` into ``tensor`` on rank r."""
    tensor = _tensor(tensor, "scatter")
    pg = _resolve(group)
    if pg is None:
        return _not_member("scatter")
    root, at_root = _root_and_list(pg, src, group_src, "src", scatter_list, "scatter_list")
    send: Any = None
    if scatter_list:
        send = _gather_buffer("scatter", tensor, scatter_list, pg._size, "scatter_list")
        for r, t in enumerate(scatter_list):
            send[r] = _buffer(t._data)
    _check_same(pg, "scatter", (tensor,))
    recv = np.empty_like(_buffer(tensor._data))
    comm = pg._comm

    def finish() -> None:
        _store(tensor, recv, "scatter")

    return _finish(pg, "scatter", [comm.Iscatter(send, recv, root=root)], finish, [tensor], async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor], group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Rank r's ``input_tensor_list[q]`` into rank q's ``output_tensor_list[r]`` (sizes may differ)."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_to_all")
    n = pg._size
    for what, tensors in (("output_tensor_list", output_tensor_list), ("input_tensor_list", input_tensor_list)):
        if len(tensors) != n:
            raise ValueError(f"all_to_all: {what} must have {n} tensors (the group's size), got {len(tensors)}")
        for t in tensors:
            _tensor(t, "all_to_all", what)
    dtypes = {t.dtype for t in (*output_tensor_list, *input_tensor_list)}
    if len(dtypes) != 1:
        raise ValueError(f"all_to_all: every tensor must have one dtype, got {sorted(map(str, dtypes))}")
    ins = [_buffer(t._data).reshape(-1) for t in input_tensor_list]
    send = np.concatenate(ins) if ins else np.empty(0)
    send_counts = np.array([a.size for a in ins], dtype=np.int64)
    recv_counts = np.array([t.numel() for t in output_tensor_list], dtype=np.int64)

    def finish(recv: np.ndarray, rdispl: np.ndarray) -> None:
        for q, t in enumerate(output_tensor_list):
            _store(t, recv[rdispl[q]: rdispl[q] + recv_counts[q]], "all_to_all")

    return _exchange(pg, "all_to_all", send, send_counts, recv_counts, "output_tensor_list[{q}]", finish,
                     list(output_tensor_list), async_op)


def _exchange(pg: ProcessGroup, name: str, send: np.ndarray, send_counts: np.ndarray, recv_counts: np.ndarray,
              what: str, finish: Callable[[np.ndarray, np.ndarray], None], outputs: list[Tensor],
              async_op: bool) -> Work | None:
    """The ``Alltoallv`` of the flat ``send`` (``send_counts[q]`` elements to rank q), after checking
    that what each rank sends here is what ``recv_counts`` expects (else every rank raises naming
    the sizes); ``finish(recv, displacements)`` stores the result."""
    n = pg._size
    told = np.empty_like(send_counts)  # what each rank will send here: must be what we expect
    MPI, comm = _mpi(), pg._comm
    _timed(pg, name, lambda: comm.Alltoall(send_counts, told))
    bad = [q for q in range(n) if told[q] != recv_counts[q]]
    flag = np.array([len(bad)], dtype=np.int64)
    _timed(pg, name, lambda: comm.Allreduce(MPI.IN_PLACE, flag, op=MPI.MAX))
    if flag[0]:
        mine = "; ".join(f"from rank {pg._ranks[q]}: {int(told[q])} elements, {what.format(q=q)} "
                         f"holds {int(recv_counts[q])}" for q in bad)
        every = _timed(pg, name, lambda: comm.allgather(mine))
        described = " | ".join(f"rank {pg._ranks[r]}: {s}" for r, s in enumerate(every) if s)
        raise RuntimeError(f"{name}: sizes differ across ranks ({described})")
    recv = np.empty(int(recv_counts.sum()), dtype=send.dtype)
    sdispl = np.concatenate([[0], np.cumsum(send_counts)[:-1]])
    rdispl = np.concatenate([[0], np.cumsum(recv_counts)[:-1]])
    sendspec = [send, (send_counts, sdispl)]
    recvspec = [recv, (recv_counts, rdispl)]
    return _finish(pg, name, [comm.Ialltoallv(sendspec, recvspec)], lambda: finish(recv, rdispl), outputs, async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Sequence[int] | None = None,  # noqa: A002  (PyTorch's name)
                      input_split_sizes: Sequence[int] | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0 and send part q to rank q; ``output`` receives rank q's part for
    this rank as its q-th block. Equal blocks without split sizes, else ``*_split_sizes[q]`` rows.

    >>> import retrograd as rg, retrograd.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = rg.zeros(2, 2)
    >>> dist.all_to_all_single(out, rg.arange(4.0).reshape(2, 2))
    >>> out
    tensor([[0., 1.],
            [2., 3.]])
    >>> dist.destroy_process_group()
    """
    out_t = _tensor(output, "all_to_all_single", "output")
    in_t = _tensor(input, "all_to_all_single", "input")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_to_all_single")
    if out_t.dtype != in_t.dtype:
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {out_t.dtype} and  {in_t.dtype}")
    n = pg._size
    counts = []
    for t, splits in ((in_t, input_split_sizes), (out_t, output_split_sizes)):
        rows = t.shape[0] if t.dim() else 1
        if not splits:  # (None or [] as in PyTorch: equal blocks)
            if rows % n:
                raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
            splits = [rows // n] * n
        elif len(splits) != n:
            raise RuntimeError("Number of tensor splits not equal to group size")
        elif sum(splits) != rows or min(splits) < 0:
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        row = t.numel() // rows if rows else 0
        counts.append([int(k) * row for k in splits])
    send = _buffer(in_t._data).reshape(-1)

    def finish(recv: np.ndarray, rdispl: np.ndarray) -> None:
        _store(out_t, recv, "all_to_all_single")

    return _exchange(pg, "all_to_all_single", send, np.array(counts[0], dtype=np.int64),
                     np.array(counts[1], dtype=np.int64), "output block {q}", finish, [out_t], async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None,
            timeout: datetime.timedelta | None = None) -> Work | None:
    """Wait until every rank of ``group`` has called ``barrier``."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("barrier")
    comm = pg._comm
    return _finish(pg, "barrier", [comm.Ibarrier()], lambda: None, [], async_op)


# -- point to point ----------------------------------------------------------------------------

def _peer(pg: ProcessGroup, global_rank: int | None, group_rank: int | None, what: str) -> int:
    peer = _group_rank(pg, global_rank, group_rank, what, None)
    if peer == pg._rank:
        kind = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the current process.")
    return peer


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until it can be reused)."""
    isend(tensor, dst, group, tag, group_dst).wait()  # type: ignore[union-attr]


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``; ``wait()`` the returned Work before changing it."""
    tensor = _tensor(tensor, "send")
    pg = _resolve(group)
    if pg is None:
        return _not_member("send")
    peer = _peer(pg, dst, group_dst, "dst")
    buf = _buffer(tensor._data)
    return Work(pg, "send", [pg._comm.Isend(buf, dest=peer, tag=tag)], None, [tensor])


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's rank."""
    tensor = _tensor(tensor, "recv")
    pg = _resolve(group)
    if pg is None:
        _not_member("recv")
        return -1
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "src")
    buf = np.empty_like(_buffer(tensor._data))
    status = MPI.Status()
    # Probe first: a message of another size is an error naming both, not a truncation or a short fill.
    _timed(pg, "recv", lambda: pg._comm.Probe(source=peer, tag=tag, status=status))
    from mpi4py.util.dtlib import from_numpy_dtype

    count = status.Get_count(from_numpy_dtype(buf.dtype))
    if count != buf.size:
        raise RuntimeError(f"recv: rank {pg._ranks[status.Get_source()]} sent {count} elements; the receiving "
                           f"tensor holds {buf.size} ({list(tensor.shape)} {tensor.dtype})")
    sender = status.Get_source()
    _timed(pg, "recv", lambda: pg._comm.Recv(buf, source=sender, tag=status.Get_tag()))
    _store(tensor, buf, "recv")
    return pg._ranks[sender]


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor``; ``wait()`` the returned Work before reading it."""
    tensor = _tensor(tensor, "recv")
    pg = _resolve(group)
    if pg is None:
        return _not_member("recv")
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "src")
    buf = np.empty_like(_buffer(tensor._data))
    return Work(pg, "recv", [pg._comm.Irecv(buf, source=peer, tag=tag)], lambda: _store(tensor, buf, "recv"),
                [tensor])


# -- objects -----------------------------------------------------------------------------------

def _object_comm(pg: ProcessGroup) -> Any:
    # mpi4py's pkl5 sends the out-of-band buffers of pickle protocol 5 (NumPy arrays, tensors'
    # data) as raw MPI messages: large arrays are not copied into the pickle stream.
    from mpi4py.util import pkl5

    return pkl5.Intracomm(pg._comm)


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: ProcessGroup | None = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank with rank ``src``'s (pickled: trusted peers only)."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("broadcast_object_list")
    root = _group_rank(pg, src, group_src, "src")
    comm = _object_comm(pg)
    received = _timed(pg, "broadcast_object_list",
                      lambda: comm.bcast(list(object_list) if pg._rank == root else None, root=root))
    if len(received) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg._ranks[root]} sent {len(received)} objects; "
                         f"this rank's object_list has {len(object_list)}")
    object_list[:] = received
    return None


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """Every rank's ``obj``, into ``object_list[r]`` on every rank (pickled: trusted peers only)."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_gather_object")
    if len(object_list) != pg._size:
        raise ValueError(f"all_gather_object: object_list must have {pg._size} items (the group's size), "
                         f"got {len(object_list)}")
    comm = _object_comm(pg)
    object_list[:] = _timed(pg, "all_gather_object", lambda: comm.allgather(obj))
    return None


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Every rank's ``obj``, into ``object_gather_list[r]`` on rank ``dst`` (default 0; the others
    pass no list). Pickled: trusted peers only.

    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> got = [None]
    >>> dist.gather_object({"rank": dist.get_rank()}, got)
    >>> got
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return _not_member("gather_object")
    root, _ = _root_and_list(pg, dst, group_dst, "dst", object_gather_list, "gather_list")
    comm = _object_comm(pg)
    gathered = _timed(pg, "gather_object", lambda: comm.gather(obj, root=root))
    if pg._rank == root:
        assert object_gather_list is not None
        if len(object_gather_list) < pg._size:  # (nothing written: PyTorch's IndexError, said clearly)
            raise IndexError(f"gather_object: object_gather_list has {len(object_gather_list)} items; "
                             f"the group has {pg._size} ranks")
        object_gather_list[:pg._size] = gathered
    return None


def scatter_object_list(scatter_object_output_list: list[Any], scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_input_list[r]`` of rank ``src`` (default 0) into
    ``scatter_object_output_list[0]`` on rank r. Pickled: trusted peers only.

    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [None]
    >>> dist.scatter_object_list(out, ["for rank 0"])
    >>> out
    ['for rank 0']
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group)
    if pg is None:
        return _not_member("scatter_object_list")
    root = _group_rank(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    if pg._rank == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        if len(scatter_object_input_list) != pg._size:
            raise RuntimeError(f"scatter_object_list: Incorrect input list size {len(scatter_object_input_list)}. "
                               f"Input list size should be {pg._size}, same as size of the process group.")
    comm = _object_comm(pg)
    items = list(scatter_object_input_list) if pg._rank == root and scatter_object_input_list is not None else None
    scatter_object_output_list[0] = _timed(pg, "scatter_object_list", lambda: comm.scatter(items, root=root))
    return None
