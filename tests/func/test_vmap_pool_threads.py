"""The memory pool of per-sample weight gradients (``func/_batching._recycled``) under threads:
its look-up, take and eviction are one step, so threads neither share a live block nor grow the
pool past its bound."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from retrograd.func import _batching

_SHAPE = (_batching._POOL_MIN_BYTES // 8,)  # (a pooled size)
_F64 = np.dtype(np.float64)


class _SlowList(list):  # type: ignore[type-arg]
    """A pool whose append lets the other threads run first (as a thread switch there would)."""

    def append(self, item: Any) -> None:
        time.sleep(0.02)
        super().append(item)


def _run_threads(target: Any, n: int) -> None:
    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_evicting_at_once_keep_the_pool_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batching, "_POOL", _SlowList())
    held = [_batching._recycled(_SHAPE, _F64) for _ in range(_batching._POOL_BLOCKS)]  # (a full pool, all in use)
    got: list[np.ndarray] = []
    _run_threads(lambda k: got.append(_batching._recycled(_SHAPE, _F64)), 3)
    assert len(_batching._POOL) == _batching._POOL_BLOCKS
    live = held + got
    assert not any(np.shares_memory(a, b) for i, a in enumerate(live) for b in live[i + 1:])


def test_threads_never_share_a_live_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batching, "_POOL", [])
    clashes: list[int] = []

    def work(k: int) -> None:
        held: list[np.ndarray] = []
        for _ in range(300):
            a = _batching._recycled(_SHAPE, _F64)
            a.fill(k)
            held = held[-2:] + [a]
            time.sleep(0)  # (the other threads take blocks meanwhile)
            if any(h[0] != k or h[-1] != k for h in held):
                clashes.append(k)
                return

    _run_threads(work, 4)
    assert clashes == []
    assert len(_batching._POOL) <= _batching._POOL_BLOCKS
