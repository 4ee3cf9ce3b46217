"""Per-op overhead: a chain of 2,000 elementwise ops on 16-element tensors, forward and backward.

Runs retrograd, PyTorch (if installed; single thread) and hand-written NumPy (the floor: the same
forward and backward with no autograd bookkeeping) interleaved in one process, and prints the
median microseconds per op and same-run ratios.

    python benchmarks/overhead.py [--ops 2000] [--repeats 15] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SIZE = 16


def build_chain(x: Any, c: Any, d: Any, n_ops: int) -> Any:
    """mul, add, tanh, repeated ``n_ops`` times from ``x``: the chain every workload times."""
    y = x
    for i in range(n_ops):
        k = i % 3
        if k == 0:
            y = y * c
        elif k == 1:
            y = y + d
        else:
            y = y.tanh()
    return y


def chain_lib(lib: Any, n_ops: int) -> Callable[[], tuple[float, float]]:
    """mul, add, tanh, repeated: every op saves something and has a real backward."""
    rng = np.random.default_rng(0)
    c = lib.tensor(rng.uniform(0.9, 1.1, SIZE).astype(np.float32))
    d = lib.tensor(rng.uniform(-0.1, 0.1, SIZE).astype(np.float32))
    x0 = rng.uniform(-1, 1, SIZE).astype(np.float32)

    def run() -> tuple[float, float]:
        x = lib.tensor(x0, requires_grad=True)
        t0 = time.perf_counter()
        loss = build_chain(x, c, d, n_ops).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    return run


def chain_numpy(n_ops: int) -> Callable[[], tuple[float, float]]:
    rng = np.random.default_rng(0)
    c = rng.uniform(0.9, 1.1, SIZE).astype(np.float32)
    d = rng.uniform(-0.1, 0.1, SIZE).astype(np.float32)
    x0 = rng.uniform(-1, 1, SIZE).astype(np.float32)

    def run() -> tuple[float, float]:
        t0 = time.perf_counter()
        y = x0
        saved = []
        for i in range(n_ops):
            k = i % 3
            if k == 0:
                y = y * c
            elif k == 1:
                y = y + d
            else:
                y = np.tanh(y)
                saved.append(y)
        loss = y.sum()
        t1 = time.perf_counter()
        g = np.ones_like(y)
        for i in reversed(range(n_ops)):
            k = i % 3
            if k == 0:
                g = g * c
            elif k == 2:
                out = saved.pop()
                g = g * (1 - out * out)
        t2 = time.perf_counter()
        assert np.isfinite(loss) and g.shape == x0.shape
        return t1 - t0, t2 - t1

    return run


def measure(runners: dict[str, Callable[[], tuple[float, float]]], repeats: int, n_ops: int) -> dict[str, dict[str, float]]:
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runners}
    for run in runners.values():
        run()  # warm up
    for _ in range(repeats):
        for name, run in runners.items():  # interleaved, so drift affects all alike
            samples[name].append(run())
    result = {}
    for name, values in samples.items():
        fwd = statistics.median(v[0] for v in values) / n_ops * 1e6
        bwd = statistics.median(v[1] for v in values) / n_ops * 1e6
        total = statistics.median(v[0] + v[1] for v in values) / n_ops * 1e6
        result[name] = {"forward": fwd, "backward": bwd, "total": total}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="tiny run that only proves the script works")
    args = parser.parse_args()
    if args.quick:
        args.ops, args.repeats = 60, 2
    import retrograd  # here, so that importing build_chain does not load a library

    runners: dict[str, Callable[[], tuple[float, float]]] = {"retrograd": chain_lib(retrograd, args.ops)}
    try:
        import torch

        torch.set_num_threads(1)
        runners["pytorch"] = chain_lib(torch, args.ops)
    except ImportError:
        pass
    runners["numpy floor"] = chain_numpy(args.ops)
    result = measure(runners, args.repeats, args.ops)
    print(f"{args.ops}-op chain on {SIZE}-element float32 tensors, median of {args.repeats} (µs per op)\n")
    print("| library | forward | backward | total | total / retrograd |")
    print("|---|---|---|---|---|")
    ours = result["retrograd"]["total"]
    for name, r in result.items():
        print(f"| {name} | {r['forward']:.2f} | {r['backward']:.2f} | {r['total']:.2f} | {r['total'] / ours:.2f} |")
    if "pytorch" in result:
        print(f"\nretrograd / PyTorch = {ours / result['pytorch']['total']:.2f}; "
              f"retrograd / NumPy floor = {ours / result['numpy floor']['total']:.2f}")


if __name__ == "__main__":
    main()
