"""all_to_all_single, gather_object, scatter_object_list, Work.get_future() and DDP's
communication hooks in one process (MPI's world of one) against PyTorch's gloo backend at world
size one: the same results, return values and error wording. Across processes:
test_distributed_extra.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import test_distributed_api as api

import retrograd as rg
from conftest import outcome

pytestmark = api.needs_mpi
world, torch_world = api.world, api.torch_world  # (the fixtures: MPI's world of one, gloo's)


def test_all_to_all_single_with_and_without_split_sizes_as_in_pytorch(world: Any, torch_world: Any,
                                                                       torch: Any) -> None:
    dist, tdist = world, torch_world
    for splits in (None, [4], []):
        out, tout = rg.zeros(4, 3), torch.zeros(4, 3)
        x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
        assert dist.all_to_all_single(out, rg.tensor(x), splits, splits) is None
        assert tdist.all_to_all_single(tout, torch.tensor(x), splits, splits) is None
        np.testing.assert_array_equal(out.numpy(), tout.numpy())
    out = rg.zeros(2, dtype=rg.int64)
    dist.all_to_all_single(out, rg.tensor([5, 6]), async_op=True).wait()
    assert out.tolist() == [5, 6]
    for out_splits, in_splits in (([3], [2]), ([1, 2], [3])):
        assert outcome(lambda: dist.all_to_all_single(rg.zeros(3), rg.zeros(3), out_splits, in_splits)) == \
            outcome(lambda: tdist.all_to_all_single(torch.zeros(3), torch.zeros(3), out_splits, in_splits))
    # unequal totals: gloo's own enforce message; ours names the sizes
    assert outcome(lambda: dist.all_to_all_single(rg.zeros(2), rg.zeros(3))) == (
        "RuntimeError", "all_to_all_single: sizes differ across ranks (rank 0: from rank 0: 3 elements, output block 0 "
                        "holds 2)")
    assert outcome(lambda: dist.all_to_all_single(rg.zeros(3, dtype=rg.float64), rg.zeros(3))) == \
        outcome(lambda: tdist.all_to_all_single(torch.zeros(3, dtype=torch.float64), torch.zeros(3)))


def test_gather_object_and_scatter_object_list_as_in_pytorch(world: Any, torch_world: Any) -> None:
    dist, tdist = world, torch_world
    ours: list[Any] = [None]
    theirs: list[Any] = [None]
    assert dist.gather_object({"a": [1, 2]}, ours, dst=0) is tdist.gather_object({"a": [1, 2]}, theirs, dst=0)
    assert ours == theirs == [{"a": [1, 2]}]
    ours, theirs = [None, 5], [None, 5]
    dist.scatter_object_list(ours, [("x", 1)], src=0)
    tdist.scatter_object_list(theirs, [("x", 1)], src=0)
    assert ours == theirs == [("x", 1), 5]
    for call in (lambda d: d.gather_object(1, None, dst=0), lambda d: d.gather_object(1, [], dst=0),
                 lambda d: d.scatter_object_list([], [1], src=0), lambda d: d.scatter_object_list([None], None, src=0)):
        assert outcome(lambda: call(dist)) == outcome(lambda: call(tdist))
    msg = outcome(lambda: dist.scatter_object_list([None], [1, 2], src=0))
    assert msg == ("RuntimeError", "scatter_object_list: Incorrect input list size 2. Input list size should be 1, "
                                   "same as size of the process group.")


def test_work_get_future_gives_the_output_tensors_as_in_pytorch(world: Any, torch_world: Any, torch: Any) -> None:
    dist, tdist = world, torch_world
    pairs = [
        (lambda: dist.all_reduce(rg.ones(2), async_op=True), lambda: tdist.all_reduce(torch.ones(2), async_op=True)),
        (lambda: dist.broadcast(rg.ones(2), 0, async_op=True), lambda: tdist.broadcast(torch.ones(2), 0, async_op=True)),
        (lambda: dist.all_to_all_single(rg.zeros(3), rg.arange(3.0), async_op=True),
         lambda: tdist.all_to_all_single(torch.zeros(3), torch.arange(3.0), async_op=True)),
        (lambda: dist.barrier(async_op=True), lambda: tdist.barrier(async_op=True)),
    ]
    for ours, theirs in pairs:
        fut, tfut = ours().get_future(), theirs().get_future()
        got, want = fut.wait(), tfut.wait()
        assert [t.tolist() for t in got] == [t.tolist() for t in want]
        assert fut.done() and [t.tolist() for t in fut.value()] == [t.tolist() for t in tfut.value()]
        chained = ours().get_future().then(lambda f: f.value()[0] * 2 if f.value() else "empty")
        tchained = theirs().get_future().then(lambda f: f.value()[0] * 2 if f.value() else "empty")
        c, tc = chained.wait(), tchained.wait()
        assert (c if isinstance(c, str) else c.tolist()) == (tc if isinstance(tc, str) else tc.tolist())


def test_a_future_callback_error_is_raised_by_wait_and_a_future_completes_once(world: Any, torch: Any) -> None:
    from retrograd.distributed._future import Future

    fut = world.all_reduce(rg.ones(2), async_op=True).get_future()
    bad = fut.then(lambda f: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()
    with pytest.raises(ZeroDivisionError):  # (kept: every later wait raises it too)
        bad.value()
    plain, tplain = Future(), torch.futures.Future()
    plain.set_result(3)
    tplain.set_result(3)
    assert outcome(lambda: plain.set_result(4))[0] == outcome(lambda: tplain.set_result(4))[0] == "RuntimeError"
    assert plain.wait() == tplain.wait() == 3


class _Net(rg.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = rg.nn.Linear(3, 4).double()
        self.b = rg.nn.Linear(4, 2).double()

    def forward(self, x: rg.Tensor) -> rg.Tensor:
        return self.b(self.a(x).tanh())


@pytest.fixture
def models(world: Any) -> Iterator[tuple[Any, Any]]:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    rg.manual_seed(0)
    plain = _Net()
    hooked = DDP(_Net(), bucket_cap_mb=1e-4)  # (several buckets: the hook runs once per bucket)
    hooked.module.load_state_dict(plain.state_dict())
    yield plain, hooked


def test_ddp_with_the_default_allreduce_hook_gives_the_built_in_gradients(models: tuple[Any, Any]) -> None:
    import retrograd.distributed as dist
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks

    plain, hooked = models
    calls: list[tuple[int, bool, int]] = []

    def hook(state: Any, bucket: dist.GradBucket) -> Any:
        calls.append((bucket.index(), bucket.is_last(), bucket.buffer().numel()))
        assert sum(g.numel() for g in bucket.gradients()) == bucket.buffer().numel()
        assert [tuple(g.shape) for g in bucket.gradients()] == [tuple(p.shape) for p in bucket.parameters()]
        return default_hooks.allreduce_hook(state, bucket)

    hooked.register_comm_hook(None, hook)
    x = rg.tensor(np.random.default_rng(0).standard_normal((5, 3)))
    plain(x).pow(2).sum().backward()
    hooked(x).pow(2).sum().backward()
    for p, q in zip(plain.parameters(), hooked.module.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-15)
    n = len(hooked._buckets)
    assert n > 1 and [c[0] for c in calls] == list(range(n)) and [c[1] for c in calls] == [False] * (n - 1) + [True]


def test_a_comm_hook_replaces_the_reduction_and_is_checked_as_in_pytorch(models: tuple[Any, Any]) -> None:
    import retrograd.distributed as dist
    from retrograd.distributed._future import Future

    plain, hooked = models

    def triple(state: list[int], bucket: dist.GradBucket) -> Any:  # (a hook's own reduction: no averaging)
        state.append(bucket.index())
        fut = Future()
        fut.set_result(bucket.buffer() * 3)
        return fut

    with pytest.raises(TypeError, match="^Communication hook must be callable.$"):
        hooked.register_comm_hook(None, 3)

    def annotated(state: Any, bucket: int) -> Any:
        return None

    annotated.__annotations__["bucket"] = int
    with pytest.raises(ValueError, match="^Communication hook: bucket annotation should be dist.GradBucket.$"):
        hooked.register_comm_hook(None, annotated)
    seen: list[int] = []
    hooked.register_comm_hook(seen, triple)
    with pytest.raises(RuntimeError, match="can only be called once"):
        hooked.register_comm_hook(seen, triple)
    x = rg.ones(2, 3, dtype=rg.float64)
    plain(x).sum().backward()
    hooked(x).sum().backward()
    for p, q in zip(plain.parameters(), hooked.module.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), 3 * p.grad.numpy(), rtol=1e-15)
    assert seen == list(range(len(hooked._buckets)))


def test_gather_and_scatter_refuse_an_empty_list_at_the_root_as_in_pytorch(world: Any, torch_world: Any,
                                                                           torch: Any) -> None:
    dist, tdist = world, torch_world
    assert outcome(lambda: dist.gather(rg.ones(2), [], dst=0)) == outcome(lambda: tdist.gather(torch.ones(2), [], dst=0))
    assert outcome(lambda: dist.scatter(rg.ones(2), [], src=0)) == \
        outcome(lambda: tdist.scatter(torch.ones(2), [], src=0))
    assert outcome(lambda: dist.gather(rg.ones(2), [], dst=0))[1] == \
        "Argument ``gather_list`` must be specified on destination rank."


def test_premul_sum_scales_then_sums_and_refuses_what_it_cannot(world: Any) -> None:
    dist = world
    x = rg.tensor([1.0, -2.0, 4.0], dtype=rg.float32)
    before = x._version
    dist.all_reduce(x, op=dist._make_nccl_premul_sum(0.25))
    np.testing.assert_array_equal(x.numpy(), np.array([0.25, -0.5, 1.0], dtype=np.float32))
    assert x.dtype == rg.float32 and x._version == before + 1
    z = rg.tensor([1 + 1j])
    dist.all_reduce(z, op=dist._make_nccl_premul_sum(2j))
    assert z.tolist() == [(-2 + 2j)]
    ints = rg.tensor([1, 2])
    assert outcome(lambda: dist.all_reduce(ints, op=dist._make_nccl_premul_sum(2.0))) == (
        "ValueError", "all_reduce: RedOpType.PREMUL_SUM is not supported on torch.int64 tensors")
    assert ints.tolist() == [1, 2]  # (left as it was)
    assert outcome(lambda: dist._make_nccl_premul_sum(rg.ones(2))) == (
        "ValueError", "_make_nccl_premul_sum: the factor must be a number or a one-element tensor, got shape [2]")
    assert outcome(lambda: dist._make_nccl_premul_sum("2"))[0] == "TypeError"
