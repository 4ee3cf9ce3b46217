"""conv2d forward + backward: retrograd against PyTorch CPU (one thread).

A 32x3x32x32 float32 input, a 16x3x3x3 kernel with bias, padding 1; input, weight and bias all
require grad. Prints the median wall time of forward + backward for each library and the ratio
retrograd / torch. Without torch installed, prints retrograd's figure only. Both run on one thread:
torch.set_num_threads(1), and NumPy's BLAS is limited to one thread unless the environment says
otherwise (the variables must be set before NumPy loads).

    PYTHONPATH=src python benchmarks/conv2d.py [--repeats 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import retrograd as rg  # noqa: E402


def _median_ms(steps: list[Callable[[], Any]], repeats: int, warmup: int = 5) -> list[float]:
    """Median wall time of each step, the steps interleaved so that load changes hit them alike."""
    for _ in range(warmup):
        for step in steps:
            step()
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(repeats):
        for step, record in zip(steps, times, strict=False):
            start = time.perf_counter()
            step()
            record.append(time.perf_counter() - start)
    return [statistics.median(record) * 1e3 for record in times]


def _step(lib: Any, functional: Any, arrays: dict[str, np.ndarray]) -> Callable[[], Any]:
    x = lib.tensor(arrays["x"], requires_grad=True)
    w = lib.tensor(arrays["w"], requires_grad=True)
    b = lib.tensor(arrays["b"], requires_grad=True)
    g = lib.tensor(arrays["g"])

    def step() -> None:
        x.grad = w.grad = b.grad = None
        y = functional.conv2d(x, w, b, padding=1)
        y.backward(g)

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    arrays = {
        "x": rng.standard_normal((32, 3, 32, 32)).astype(np.float32),
        "w": rng.standard_normal((16, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(16).astype(np.float32),
        "g": rng.standard_normal((32, 16, 32, 32)).astype(np.float32),
    }
    steps = [_step(rg, rg.nn.functional, arrays)]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        steps.append(_step(torch, torch.nn.functional, arrays))
    medians = _median_ms(steps, args.repeats)
    ours = medians[0]
    print(f"retrograd conv2d fwd+bwd: {ours:.3f} ms (median of {args.repeats})")
    if torch is None:
        return
    theirs = medians[1]
    print(f"torch     conv2d fwd+bwd: {theirs:.3f} ms (median of {args.repeats}, 1 thread)")
    print(f"ratio retrograd / torch: {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
