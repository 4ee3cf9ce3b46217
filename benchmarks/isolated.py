"""Workloads that measure memory, run in a fresh interpreter per library so they cannot disturb each other.

    python benchmarks/isolated.py long_chain LIB N_OPS
    python benchmarks/isolated.py deep_mlp LIB LAYERS WIDTH BATCH

LIB is ``retrograd`` or ``torch``. Prints one JSON object. ``bench.py`` starts these with the BLAS
thread variables set to 1, this checkout's ``src`` first on PYTHONPATH and, for ``deep_mlp``,
``MALLOC_MMAP_THRESHOLD_`` fixed so that glibc returns freed large buffers to the system at once
(otherwise its dynamic threshold keeps them in the heap and the resident size stops following what
is live).

Memory is the process's resident set size for both libraries, read from /proc/self/statm; the peak
is VmHWM from /proc/self/status after resetting it by writing "5" to /proc/self/clear_refs.
"""

from __future__ import annotations

import os

from harness import pin_blas_threads, use_checkout_sources

pin_blas_threads()
use_checkout_sources()

import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from overhead import build_chain  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")
SIZE = 16  # elements per tensor in the chain, as in overhead.py


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def load(name: str) -> Any:
    lib = importlib.import_module(name)
    if name == "torch":
        lib.set_num_threads(1)
    return lib


def long_chain(lib: Any, n_ops: int) -> dict[str, float]:
    """overhead.py's op mix (mul, add, tanh, repeated) n_ops long: time, graph bytes per op, completion."""
    from overhead import chain_lib

    rng = np.random.default_rng(0)
    c = lib.tensor(rng.uniform(0.9, 1.1, SIZE).astype(np.float32))
    d = lib.tensor(rng.uniform(-0.1, 0.1, SIZE).astype(np.float32))
    x = lib.tensor(rng.uniform(-1, 1, SIZE).astype(np.float32), requires_grad=True)
    gc.collect()

    rss0 = rss_bytes()
    t0 = time.perf_counter()
    y = build_chain(x, c, d, n_ops)
    loss = y.sum()
    t1 = time.perf_counter()
    rss1 = rss_bytes()
    del y
    loss.backward()
    t2 = time.perf_counter()
    completed = x.grad is not None and bool(np.isfinite(x.grad.numpy()).all())
    del loss
    gc.collect()

    # The 2,000-op figure this is compared against, measured in the same process afterwards.
    reference_ops = 2000
    run = chain_lib(lib, reference_ops)
    run()
    reference = sorted(sum(run()) for _ in range(5))[2]
    return {
        "us_per_op": (t2 - t0) / n_ops * 1e6,
        "forward_us_per_op": (t1 - t0) / n_ops * 1e6,
        "reference_us_per_op": reference / reference_ops * 1e6,
        "bytes_per_op": (rss1 - rss0) / n_ops,
        "completed": float(completed),
    }


def deep_mlp(lib: Any, layers: int, width: int, batch: int) -> dict[str, float]:
    """tanh MLP, ``layers`` Linear layers width x width: extra peak during forward+backward, and what is
    still held after backward beyond the parameters (in the baseline) and their new grads."""
    rng = np.random.default_rng(0)
    params = []
    for _ in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        params += [lib.tensor(w, requires_grad=True), lib.tensor(np.zeros(width, np.float32), requires_grad=True)]
    x = lib.tensor(rng.standard_normal((batch, width)).astype(np.float32))

    def forward_backward() -> Any:
        h = x
        for i in range(layers):
            h = (h @ params[2 * i] + params[2 * i + 1]).tanh()
        loss = h.sum()
        del h
        loss.backward()
        return loss  # kept alive, so whatever the graph still holds after backward is counted

    forward_backward()  # warm-up: first-call costs stay out of the measurement
    for p in params:
        p.grad = None
    gc.collect()

    baseline = rss_bytes()
    peak_was_reset = reset_peak()
    loss = forward_backward()
    peak = peak_bytes()
    after = rss_bytes()
    grad_bytes = sum(p.grad.numel() * 4 for p in params)
    assert loss is not None
    return {
        "extra_peak": float(peak - baseline) if peak_was_reset else float("nan"),
        "held_after_backward": float(after - baseline - grad_bytes),
        "grad_bytes": float(grad_bytes),
        "activation_bytes": float(batch * width * 4),
    }


def main() -> None:
    kind, name, *sizes = sys.argv[1:]
    lib = load(name)
    numbers = [int(s) for s in sizes]
    if kind == "long_chain":
        result = long_chain(lib, *numbers)
    elif kind == "deep_mlp":
        result = deep_mlp(lib, *numbers)
    else:
        raise SystemExit(f"unknown workload {kind!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
