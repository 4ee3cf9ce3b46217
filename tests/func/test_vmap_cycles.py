"""``vmap`` leaves nothing for the cyclic garbage collector: its batched tensors, their graphs and
their memory are freed by reference counting the moment the last reference goes (per-sample
gradients' memory is reused on the next call, whatever the collector's timing). Each transform
runs once to warm up, then again with the collector off; collecting afterwards must find nothing."""

from __future__ import annotations

import gc
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd import func as rfunc

RS = np.random.RandomState(0)


def _t(*shape: int) -> rg.Tensor:
    return rg.tensor(RS.randn(*shape))


def _mlp_loss(params: list[Any], x: Any, y: Any) -> Any:
    h = F.relu(x.unsqueeze(0) @ params[0] + params[1])
    return F.nll_loss(F.log_softmax(h @ params[2] + params[3], dim=1), y.unsqueeze(0))


_PARAMS = [_t(8, 6), _t(6), _t(6, 3), _t(3)]
_X, _Y = _t(5, 8), rg.tensor(RS.randint(0, 3, 5))
_W, _IMAGES = _t(3, 2, 3, 3), _t(4, 2, 6, 6)


def _conv_loss(w: Any, image: Any) -> Any:
    return F.max_pool2d(F.conv2d(image.unsqueeze(0), w), 2).sum()


CASES: dict[str, Callable[[], Any]] = {
    "per_sample_grads": lambda: rfunc.vmap(rfunc.grad(_mlp_loss), in_dims=(None, 0, 0))(_PARAMS, _X, _Y),
    "per_sample_grads_chunked": lambda: rfunc.vmap(rfunc.grad(_mlp_loss), in_dims=(None, 0, 0),
                                                   chunk_size=2)(_PARAMS, _X, _Y),
    "per_sample_conv_grads": lambda: rfunc.vmap(rfunc.grad(_conv_loss), in_dims=(None, 0))(_W, _IMAGES),
    "nested_vmap": lambda: rfunc.vmap(rfunc.vmap(lambda a, b: (a * b).sin().sum()))(_t(3, 4, 5), _t(3, 4, 5)),
    "vmap_jacrev": lambda: rfunc.vmap(rfunc.jacrev(lambda v: v.sin() * v.sum()))(_t(4, 5)),
    "vmap_jacfwd": lambda: rfunc.vmap(rfunc.jacfwd(lambda v: v.sin() * v.sum()))(_t(4, 5)),
    "vmap_hessian": lambda: rfunc.vmap(rfunc.hessian(lambda v: (v.sin() * v).sum()))(_t(4, 5)),
    "grad_of_vmap": lambda: rfunc.grad(lambda v: rfunc.vmap(lambda r: r.sin().sum())(v).sum())(_t(4, 5)),
    # a batched tensor given to an op as a param (nll_loss's target): found through its array
    "batched_target": lambda: rfunc.vmap(rfunc.grad(lambda logits, t: F.nll_loss(logits, t)))(
        _t(4, 3, 5), rg.tensor(RS.randint(0, 5, (4, 3)))),
    "in_place_view_op": lambda: rfunc.vmap(lambda v: v.t_() * 2)(_t(4, 2, 3)),
    # the whole function rerun per sample (code that reads a batched tensor's array)
    "per_sample_fallback": lambda: rfunc.vmap(lambda v: v * float(np.asarray(v._data).sum()))(_t(3, 2)),
}


@contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic collector off, and what it would find saved in ``gc.garbage``."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
        gc.collect()


def _left_for_the_collector() -> str:
    found = gc.collect()
    return f"{found}: {Counter(type(o).__name__ for o in gc.garbage).most_common(12)}" if found else ""


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_leaves_no_reference_cycles(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the per-sample fallback's performance warning)
        CASES[name]()  # (warm-up: lazily imported modules, tables and caches)
        with _collector_off():
            result = CASES[name]()
            del result
            assert _left_for_the_collector() == ""


def test_per_sample_results_free_their_memory_without_the_collector() -> None:
    """The weight gradients' block is free again the moment the results are dropped: the next
    call reuses it (the pool of ``func/_batching.py``), with the collector off."""
    from retrograd.func import _batching

    params = [rg.tensor(RS.randn(*s).astype(np.float32)) for s in ((64, 128), (128,), (128, 10), (10,))]
    x, y = rg.tensor(RS.randn(64, 64).astype(np.float32)), rg.tensor(RS.randint(0, 10, 64))
    per_sample = rfunc.vmap(rfunc.grad(_mlp_loss), in_dims=(None, 0, 0))
    with _collector_off():
        first = per_sample(params, x, y)
        address = first[0].numpy().__array_interface__["data"][0]
        del first
        again = per_sample(params, x, y)
        assert again[0].numpy().__array_interface__["data"][0] == address
        assert len(_batching._POOL) <= _batching._POOL_BLOCKS
