"""retrograd's benchmark suite: retrograd vs PyTorch vs the NumPy floor, one Markdown table.

    python benchmarks/bench.py [--quick] [--only NAME[,NAME]] [--repeats N] [--no-torch]

Workloads (NAME): chain, mlp_small, mlp_large, hvp, hvp_forward, long_chain, deep_mlp, import, lstm, transformer,
dynamic_net, mnist_cnn, per_sample_grads, compile. Timed workloads run
the libraries interleaved in one process (one warm-up each, then rounds that run each library once),
and report medians and same-run ratios; the memory workloads and the import times use a fresh
interpreter per library and per repetition. The NumPy floor is the same computation hand-written in
NumPy, forward and backward, with no autograd bookkeeping. PyTorch runs single-threaded
(``torch.set_num_threads(1)``) and every library's BLAS is pinned to one thread. PyTorch is optional:
without it (or with ``--no-torch``) its columns show —.

This benchmarks the checkout's ``src/retrograd`` (put first on the path), not an installed copy.
"""

from __future__ import annotations

import os

# Single-threaded BLAS for everyone: this must happen before NumPy (or PyTorch) is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import harness  # noqa: E402
from harness import Row, child_env, combine, interleaved_medians, median_of_runs, ratio, run_isolated, verdict  # noqa: E402

harness.use_checkout_sources()

import numpy as np  # noqa: E402

import retrograd  # noqa: E402
import workloads as wl  # noqa: E402

WORKLOADS = ("chain", "mlp_small", "mlp_large", "hvp", "hvp_forward", "long_chain", "deep_mlp", "import", "lstm",
             "transformer", "dynamic_net", "mnist_cnn", "per_sample_grads", "compile")
MiB = 1024 * 1024


@dataclass
class Config:
    """Sizes and repetition counts; ``--quick`` shrinks them so the whole run takes seconds."""

    quick: bool
    chain_ops: int = 2000
    chain_repeats: int = 15
    compile_repeats: int = 15
    small_sizes: tuple[int, ...] = (64, 128, 128, 10)
    small_batch: int = 64
    small_repeats: int = 30
    large_sizes: tuple[int, ...] = (1024, 2048, 2048, 10)
    large_batch: int = 256
    large_repeats: int = 10
    hvp_repeats: int = 30
    long_chain_ops: int = 1_000_000
    long_chain_repeats: int = 3
    deep_layers: int = 50
    deep_width: int = 512
    deep_batch: int = 256
    deep_repeats: int = 3
    import_repeats: int = 7
    transformer_sizes: tuple[int, int, int, int] = (128, 4, 64, 16)  # d_model, heads, sequence, batch
    transformer_repeats: int = 10
    lstm_sizes: tuple[int, int, int, int, int] = (128, 128, 2, 50, 32)  # input, hidden, layers, seq, batch
    lstm_repeats: int = 7
    dynamic_net_steps: int = 1000  # of the tutorial's 30,000
    dynamic_net_repeats: int = 5
    mnist_cnn_steps: int = 3  # batches of 64 per run
    mnist_cnn_repeats: int = 5
    per_sample_sizes: tuple[int, ...] = (64, 128, 10)
    per_sample_batch: int = 64
    per_sample_repeats: int = 15

    @classmethod
    def make(cls, quick: bool, repeats: int | None) -> Config:
        cfg = cls(quick=quick)
        if quick:
            cfg.chain_ops, cfg.large_sizes, cfg.large_batch = 60, (128, 256, 256, 10), 32
            cfg.long_chain_ops = 20_000
            cfg.deep_layers, cfg.deep_width, cfg.deep_batch = 8, 128, 32
            cfg.transformer_sizes = (16, 2, 8, 2)
            cfg.lstm_sizes = (8, 8, 2, 5, 4)
            cfg.dynamic_net_steps, cfg.mnist_cnn_steps = 20, 1
            cfg.per_sample_batch = 8
            for name in ("chain", "small", "large", "hvp", "long_chain", "deep", "import", "lstm", "transformer",
                         "dynamic_net", "mnist_cnn", "per_sample", "compile"):
                setattr(cfg, f"{name}_repeats", 1 if name in ("long_chain", "deep") else 2)
        if repeats is not None:
            for name in ("chain", "small", "large", "hvp", "long_chain", "deep", "import", "lstm", "transformer",
                         "dynamic_net", "mnist_cnn", "per_sample", "compile"):
                setattr(cfg, f"{name}_repeats", repeats)
        return cfg


def sizes_text(sizes: tuple[int, ...]) -> str:
    return "-".join(str(s) for s in sizes)


def vs(value: float | None, reference: float | None, limit: float, name: str) -> tuple[bool | None, str]:
    """Target ``value <= limit * reference``, with the actual ratio in the verdict."""
    r = ratio(value, reference)
    return verdict(r, limit, f"({r:.2f}× {name})" if r is not None else f"({name} absent)")


# ---------------------------------------------------------------------------------------------
# The workloads. Each returns its table rows; ``torch`` is None when PyTorch is not used.


def bench_chain(cfg: Config, torch: Any) -> list[Row]:
    n = cfg.chain_ops
    runners = {"retrograd": wl.chain_runner_lib(retrograd, n), "floor": wl.chain_runner_numpy(n)}
    if torch is not None:
        runners["torch"] = wl.chain_runner_lib(torch, n)
    us = {k: v / n * 1e6 for k, v in interleaved_medians(runners, cfg.chain_repeats).items()}
    met = vs(us["retrograd"], us.get("torch"), 1.0, "PyTorch")[1]  # (#14: eager parity; compile goes below it)
    return [Row(f"1. {n:,}-op elementwise chain, 16 floats, fwd+bwd", "µs/op", us["retrograd"], us.get("torch"),
                us["floor"], "≤ 1.0× PyTorch", met)]


def _mlp_timings(torch: Any, sizes: tuple[int, ...], batch: int, repeats: int, optimizer: str | None) -> dict[str, float]:
    """One training step's median ms per library: the module form with ``optimizer``, or the raw
    form (``h @ W + b``, a hand-written update) when it is None."""
    if optimizer is None:
        runners = {"retrograd": wl.mlp_step_lib(retrograd, sizes, batch), "floor": wl.mlp_step_numpy(sizes, batch)}
        if torch is not None:
            runners["torch"] = wl.mlp_step_lib(torch, sizes, batch)
    else:
        runners = {"retrograd": wl.module_step_lib(retrograd, sizes, batch, optimizer),
                   "floor": wl.module_step_numpy(sizes, batch, optimizer)}
        if torch is not None:
            runners["torch"] = wl.module_step_lib(torch, sizes, batch, optimizer)
    return {k: v * 1e3 for k, v in interleaved_medians(runners, repeats).items()}


# The MLP rows: the module form with each optimizer (the main rows), then the raw form.
MLP_FORMS = (
    ("", "sgd", "nn.Linear+ReLU, cross_entropy, optim.SGD(momentum=0.9), zero_grad: one step"),
    ("b", "adam", "nn.Linear+ReLU, cross_entropy, optim.Adam, zero_grad: one step"),
    ("c", None, "raw h @ W + b, hand-written SGD step"),
)


def bench_mlp_small(cfg: Config, torch: Any) -> list[Row]:
    rows = []
    for suffix, optimizer, form in MLP_FORMS:
        ms = _mlp_timings(torch, cfg.small_sizes, cfg.small_batch, cfg.small_repeats, optimizer)
        name = f"2{suffix}. MLP {sizes_text(cfg.small_sizes)}, batch {cfg.small_batch}, {form}"
        met = vs(ms["retrograd"], ms.get("torch"), 1.0, "PyTorch")[1]
        rows.append(Row(name, "ms", ms["retrograd"], ms.get("torch"), ms["floor"], "≤ 1.0× PyTorch", met))
    return rows


def bench_mlp_large(cfg: Config, torch: Any) -> list[Row]:
    rows = []
    for suffix, optimizer, form in MLP_FORMS:
        ms = _mlp_timings(torch, cfg.large_sizes, cfg.large_batch, cfg.large_repeats, optimizer)
        name = f"3{suffix}. MLP {sizes_text(cfg.large_sizes)}, batch {cfg.large_batch}, {form}"
        met = vs(ms["retrograd"], ms["floor"], 1.05, "floor")[1]
        rows.append(Row(name, "ms", ms["retrograd"], ms.get("torch"), ms["floor"], "≤ 1.05× floor", met))
    return rows


def bench_hvp(cfg: Config, torch: Any) -> list[Row]:
    rows = []
    for suffix, factory, form in (("", wl.module_hvp_lib, "nn.Sequential of nn.Linear+ReLU"),
                                  ("b", wl.mlp_hvp_lib, "raw h @ W + b")):
        runners = {"retrograd": factory(retrograd, cfg.small_sizes, cfg.small_batch)}
        if torch is not None:
            runners["torch"] = factory(torch, cfg.small_sizes, cfg.small_batch)
        ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.hvp_repeats).items()}
        name = f"4{suffix}. Hessian-vector product, MLP {sizes_text(cfg.small_sizes)} loss, {form}"
        met = vs(ms["retrograd"], ms.get("torch"), 1.0, "PyTorch")[1]
        rows.append(Row(name, "ms", ms["retrograd"], ms.get("torch"), None, "≤ 1.0× PyTorch", met))
    return rows


def bench_hvp_forward(cfg: Config, torch: Any) -> list[Row]:
    """Forward-over-reverse H v (a JVP of the gradient) against reverse-over-reverse (grad of
    grad . v), both retrograd, same run; PyTorch's forward-over-reverse beside it."""
    sizes, batch = cfg.small_sizes, cfg.small_batch
    runners = {"retrograd": wl.mlp_hvp_forward_lib(retrograd, sizes, batch),
               "reverse": wl.mlp_hvp_lib(retrograd, sizes, batch),
               "func": wl.mlp_hvp_func_lib(retrograd, sizes, batch)}
    if torch is not None:
        runners["torch"] = wl.mlp_hvp_forward_lib(torch, sizes, batch)
        runners["torch_func"] = wl.mlp_hvp_func_lib(torch, sizes, batch)
    ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.hvp_repeats).items()}
    # The same product as torch.func writes it, jvp(grad(f)), beside: its ratio to reverse-over-reverse
    # and to torch.func's.
    func_text = f"jvp(grad(f)): {ms['func']:.2f} ms, {ms['func'] / ms['reverse']:.2f}× reverse-over-reverse"
    if "torch_func" in ms:
        func_text += f", {ms['func'] / ms['torch_func']:.2f}× torch.func's {ms['torch_func']:.2f} ms"
    name = (f"4c. Hessian-vector product, forward-over-reverse, MLP {sizes_text(sizes)} loss, raw h @ W + b "
            f"(reverse-over-reverse: {ms['reverse']:.2f} ms; {func_text})")
    met = vs(ms["retrograd"], ms["reverse"], 0.8, "reverse-over-reverse")[1]
    return [Row(name, "ms", ms["retrograd"], ms.get("torch"), None, "≤ 0.8× reverse-over-reverse", met)]


def _isolated_runs(libs: list[str], args: list[str], repeats: int, env: dict[str, str]) -> dict[str, list[dict[str, float]]]:
    """``isolated.py`` once per library per repetition, alternating libraries."""
    results: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
    for _ in range(repeats):
        for lib in libs:
            results[lib].append(run_isolated([args[0], lib, *args[1:]], env))
    return results


def bench_long_chain(cfg: Config, torch: Any) -> list[Row]:
    n = cfg.long_chain_ops
    libs = ["retrograd"] + (["torch"] if torch is not None else [])
    runs = _isolated_runs(libs, ["long_chain", str(n)], cfg.long_chain_repeats, child_env())
    if not all(r["completed"] for rs in runs.values() for r in rs):
        raise RuntimeError(f"the {n:,}-op chain's backward did not produce a finite gradient: {runs}")
    us = {lib: median_of_runs(rs, "us_per_op") for lib, rs in runs.items()}
    ref = {lib: median_of_runs(rs, "reference_us_per_op") for lib, rs in runs.items()}
    per_op = {lib: median_of_runs(rs, "bytes_per_op") for lib, rs in runs.items()}
    own = ratio(us["retrograd"], ref["retrograd"])
    own_text = f"({own:.2f}× its 2,000-op {ref['retrograd']:.2f} µs" if own is not None else "("
    if "torch" in us:  # for context: how much PyTorch itself slows down on the long chain
        own_text += f"; PyTorch {us['torch'] / ref['torch']:.2f}× its {ref['torch']:.2f} µs"
    own_text += ")"
    time_met = verdict(own, 1.2, own_text)[1]
    return [
        Row(f"5a. {n:,}-op chain fwd+bwd completes, time", "µs/op", us["retrograd"], us.get("torch"), None,
            "≤ 1.2× own 2,000-op figure", time_met),
        Row(f"5b. {n:,}-op chain, graph memory (RSS growth)", "B/op", per_op["retrograd"], per_op.get("torch"), None,
            "≤ PyTorch", vs(per_op["retrograd"], per_op.get("torch"), 1.0, "PyTorch")[1]),
    ]


def bench_deep_mlp(cfg: Config, torch: Any) -> list[Row]:
    libs = ["retrograd"] + (["torch"] if torch is not None else [])
    sizes = [str(cfg.deep_layers), str(cfg.deep_width), str(cfg.deep_batch)]
    # A fixed mmap threshold: freed buffers of 64 KiB and more go back to the system at once.
    env = child_env(MALLOC_MMAP_THRESHOLD_="65536")
    runs = _isolated_runs(libs, ["deep_mlp", *sizes], cfg.deep_repeats, env)
    peak = {lib: median_of_runs(rs, "extra_peak") / MiB for lib, rs in runs.items()}
    held = {lib: median_of_runs(rs, "held_after_backward") / MiB for lib, rs in runs.items()}
    activation = runs["retrograd"][0]["activation_bytes"] / MiB
    name = f"{cfg.deep_layers}-layer {cfg.deep_width}-wide tanh MLP, batch {cfg.deep_batch}"
    # "Only the grads remain": less than one layer's activation (plus a little heap) is left.
    held_limit = activation + 0.25
    return [
        Row(f"6a. {name}: extra peak (VmHWM) over baseline, fwd+bwd", "MiB", peak["retrograd"], peak.get("torch"),
            None, "≤ PyTorch", vs(peak["retrograd"], peak.get("torch"), 1.0, "PyTorch")[1]),
        Row(f"6b. {name}: RSS held after backward − grads", "MiB", held["retrograd"], held.get("torch"), None,
            f"≈ 0 (≤ {held_limit:.2f} MiB: only grads remain)", verdict(held["retrograd"], held_limit)[1],
            show_ratios=False),
    ]


def time_import(module: str, env: dict[str, str]) -> float:
    """Seconds for ``import MODULE`` in a fresh interpreter (the statement itself; start-up excluded)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def bench_import(cfg: Config, torch: Any) -> list[Row]:
    env = child_env()
    modules = ["retrograd", "numpy"] + (["torch"] if torch is not None else [])
    samples: dict[str, list[float]] = {m: [] for m in modules}
    # As after ``pip install``: bytecode compiled (numpy's and torch's are; ours may not be when
    # PYTHONDONTWRITEBYTECODE is set, and then every import would compile every module).
    package = Path(__file__).resolve().parents[1] / "src" / "retrograd"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env, check=True)
    if not cfg.quick:
        for m in modules:  # warm-up: bytecode caches written, files in the page cache
            time_import(m, env)
    for _ in range(cfg.import_repeats):
        for m in modules:
            samples[m].append(time_import(m, env))
    ms = {m: statistics.median(v) * 1e3 for m, v in samples.items()}
    met = vs(ms["retrograd"], ms["numpy"], 1.25, "import numpy")[1]
    return [Row("7. import time, fresh interpreter (floor column: import numpy)", "ms", ms["retrograd"],
                ms.get("torch"), ms["numpy"], "≤ 1.25× import numpy", met)]


def _transformer_step(lib: Any, sizes: tuple[int, int, int, int]) -> Callable[[], float]:
    """One training step of ``nn.TransformerEncoderLayer`` with its defaults (dim_feedforward 2048,
    dropout 0.1, ReLU), batch_first: zero_grad, forward, MSE loss, backward, SGD step."""
    d_model, heads, seq, batch = sizes
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(d_model, heads, batch_first=True)
    opt = lib.optim.SGD(layer.parameters(), lr=0.01)
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal((batch, seq, d_model)).astype(np.float32))
    target = lib.tensor(gen.standard_normal((batch, seq, d_model)).astype(np.float32))

    def run() -> float:
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(layer(x), target)
        loss.backward()
        opt.step()
        return time.perf_counter() - t0

    return run


def bench_transformer(cfg: Config, torch: Any) -> list[Row]:
    runners = {"retrograd": _transformer_step(retrograd, cfg.transformer_sizes)}
    if torch is not None:
        runners["torch"] = _transformer_step(torch, cfg.transformer_sizes)
    ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.transformer_repeats).items()}
    d_model, heads, seq, batch = cfg.transformer_sizes
    name = (f"9. TransformerEncoderLayer d_model {d_model}, {heads} heads, sequence {seq}, batch {batch}: "
            "one training step (MSE, optim.SGD)")
    met = vs(ms["retrograd"], ms.get("torch"), 1.5, "PyTorch")[1]
    return [Row(name, "ms", ms["retrograd"], ms.get("torch"), None, "≤ 1.5× PyTorch", met)]


def bench_lstm(cfg: Config, torch: Any) -> list[Row]:
    runners = {"retrograd": wl.lstm_step_lib(retrograd, cfg.lstm_sizes), "floor": wl.lstm_step_numpy(cfg.lstm_sizes)}
    if torch is not None:
        runners["torch"] = wl.lstm_step_lib(torch, cfg.lstm_sizes)
    ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.lstm_repeats).items()}
    n_in, hidden, layers, seq, batch = cfg.lstm_sizes
    met = vs(ms["retrograd"], ms.get("torch"), 1.5, "PyTorch")[1]
    name = (f"8. nn.LSTM {layers} layers, input {n_in}, hidden {hidden}, sequence {seq}, batch {batch}: forward, "
            "mean of squares, backward, optim.SGD step")
    return [Row(name, "ms", ms["retrograd"], ms.get("torch"), ms["floor"], "≤ 1.5× PyTorch", met)]


def bench_dynamic_net(cfg: Config, torch: Any) -> list[Row]:
    n = cfg.dynamic_net_steps
    runners = {"retrograd": wl.dynamic_net_lib(retrograd, n)}
    if torch is not None:
        runners["torch"] = wl.dynamic_net_lib(torch, n)
    us = {k: v / n * 1e6 for k, v in interleaved_medians(runners, cfg.dynamic_net_repeats).items()}
    name = (f"10. PyTorch tutorial dynamic_net.py (5 scalar parameters, polynomial of 2,000 points, MSE, "
            f"optim.SGD momentum 0.9): {n:,} training steps per run")
    met = vs(us["retrograd"], us.get("torch"), 1.0, "PyTorch")[1]
    return [Row(name, "µs/step", us["retrograd"], us.get("torch"), None, "≤ 1.0× PyTorch", met)]


def bench_mnist_cnn(cfg: Config, torch: Any) -> list[Row]:
    n = cfg.mnist_cnn_steps
    runners = {"retrograd": wl.mnist_cnn_lib(retrograd, n)}
    if torch is not None:
        runners["torch"] = wl.mnist_cnn_lib(torch, n)
    ms = {k: v / n * 1e3 for k, v in interleaved_medians(runners, cfg.mnist_cnn_repeats).items()}
    name = (f"11. pytorch/examples MNIST CNN (conv 32, conv 64, max_pool2d, dropout, fc 9216-128-10, nll_loss, "
            f"Adadelta + StepLR), batch 64 of 28×28: {n} training steps per run")
    met = vs(ms["retrograd"], ms.get("torch"), 1.0, "PyTorch")[1]
    return [Row(name, "ms/step", ms["retrograd"], ms.get("torch"), None, "≤ 1.0× PyTorch", met)]


def bench_per_sample_grads(cfg: Config, torch: Any) -> list[Row]:
    sizes, batch = cfg.per_sample_sizes, cfg.per_sample_batch
    runners = {"retrograd": wl.per_sample_grads_vmap(retrograd, sizes, batch),
               "loop": wl.per_sample_grads_loop(retrograd, sizes, batch)}
    if torch is not None:
        runners["torch"] = wl.per_sample_grads_vmap(torch, sizes, batch)
    ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.per_sample_repeats).items()}
    name = (f"12. Per-sample gradients, 2-layer MLP {sizes_text(sizes)}, batch {batch}: "
            "func.vmap(func.grad(loss)) vs torch.func")
    met = vs(ms["retrograd"], ms.get("torch"), 1.0, "PyTorch")[1]
    speedup = ratio(ms["loop"], ms["retrograd"])
    loop_met = verdict(None if speedup is None else 1 / speedup, 0.1,
                       f"({speedup:.1f}× faster than the loop)" if speedup is not None else "")[1]
    return [Row(name, "ms", ms["retrograd"], ms.get("torch"), None, "≤ 1.0× PyTorch", met),
            Row(f"12b. The same, retrograd: vmap(grad) vs a loop of {batch} backward passes (loop in the "
                "retrograd column)", "ms", ms["loop"], None, None, "vmap ≥ 10× faster than the loop", loop_met)]


def _torch_compiled_step(torch: Any, sizes: tuple[int, ...], batch: int) -> Callable[[], float] | None:
    """``torch.compile`` of the same loss function and step, when it runs on this machine (its default
    backend needs a C compiler); None when it does not."""
    try:
        run = wl.module_step_lib(torch, sizes, batch, "sgd", compiled=True)
        run()
        run()
    except Exception:  # noqa: BLE001 - any failure of torch.compile here means "does not run here"
        return None
    return run


def bench_compile(cfg: Config, torch: Any) -> list[Row]:
    """retrograd.compile (issue #14): the chain and the small MLP step, compiled, beside PyTorch
    eager and the NumPy floor; torch.compile of the same step when it runs here."""
    n = cfg.chain_ops
    runners = {"retrograd": wl.compiled_chain_runner(retrograd, n), "floor": wl.chain_runner_numpy(n)}
    if torch is not None:
        runners["torch"] = wl.chain_runner_lib(torch, n)
    us = {k: v / n * 1e6 for k, v in interleaved_medians(runners, cfg.compile_repeats).items()}
    met = combine(vs(us["retrograd"], us.get("torch"), 0.35, "PyTorch"), vs(us["retrograd"], us["floor"], 1.5, "floor"))
    rows = [Row(f"13a. {n:,}-op elementwise chain, 16 floats, fwd+bwd, retrograd.compile", "µs/op", us["retrograd"],
                us.get("torch"), us["floor"], "≤ 0.35× PyTorch eager and ≤ 1.5× floor", met)]
    sizes, batch = cfg.small_sizes, cfg.small_batch
    first: list[float] = []
    runners = {"retrograd": wl.module_step_lib(retrograd, sizes, batch, "sgd", compiled=True, first_call=first),
               "floor": wl.module_step_numpy(sizes, batch, "sgd")}
    if torch is not None:
        runners["torch"] = wl.module_step_lib(torch, sizes, batch, "sgd")
    torch_compiled = _torch_compiled_step(torch, sizes, batch) if torch is not None else None
    if torch_compiled is not None:
        runners["torch.compile"] = torch_compiled
    ms = {k: v * 1e3 for k, v in interleaved_medians(runners, cfg.compile_repeats).items()}
    form = (f"MLP {sizes_text(sizes)}, batch {batch}, optim.SGD(momentum=0.9) step, the loss function (model and "
            "cross_entropy) and opt.step compiled")
    rows.append(Row(f"13b. {form}", "ms", ms["retrograd"], ms.get("torch"), ms["floor"], "≤ 0.6× PyTorch eager",
                    vs(ms["retrograd"], ms.get("torch"), 0.6, "PyTorch")[1]))
    if "torch.compile" in ms:
        rows.append(Row("13c. the same, against torch.compile of the same loss function and step (its ms in the PyTorch column)",
                        "ms", ms["retrograd"], ms["torch.compile"], ms["floor"], "report",
                        f"n/a ({ms['retrograd'] / ms['torch.compile']:.2f}× torch.compile)"))
    else:
        rows.append(Row("13c. the same, against torch.compile of the same loss function", "ms", ms["retrograd"], None,
                        ms["floor"], "report", "n/a (torch.compile does not run here)"))
    rows.append(Row("13d. first call of that compiled step (trace, compile, eager run)", "ms", first[0] * 1e3,
                    None, None, "≤ 50 ms", verdict(first[0] * 1e3 / 50, 1.0, f"({first[0] * 1e3:.0f} ms)")[1],
                    show_ratios=False))
    return rows


BENCHES: dict[str, Callable[[Config, Any], list[Row]]] = {
    "chain": bench_chain,
    "mlp_small": bench_mlp_small,
    "mlp_large": bench_mlp_large,
    "hvp": bench_hvp,
    "hvp_forward": bench_hvp_forward,
    "long_chain": bench_long_chain,
    "deep_mlp": bench_deep_mlp,
    "import": bench_import,
    "transformer": bench_transformer,
    "lstm": bench_lstm,
    "dynamic_net": bench_dynamic_net,
    "mnist_cnn": bench_mnist_cnn,
    "per_sample_grads": bench_per_sample_grads,
    "compile": bench_compile,
}


# ---------------------------------------------------------------------------------------------


def load_torch(disabled: bool) -> Any:
    if disabled:
        return None
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def environment_notes(cfg: Config, torch: Any, only: list[str]) -> list[str]:
    threads = ", ".join(f"{v}={os.environ.get(v)}" for v in harness.THREAD_VARS)
    notes = [
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        + (f"PyTorch {torch.__version__} ({torch.get_num_threads()} thread)" if torch is not None else "PyTorch absent")
        + f", retrograd from {os.path.dirname(retrograd.__file__)}; {os.cpu_count()} CPUs; {threads}.",
    ]
    try:
        from threadpoolctl import threadpool_info

        pools = "; ".join(f"{p.get('internal_api')} {p.get('version')}: {p.get('num_threads')} thread(s)"
                          for p in threadpool_info())
        notes.append(f"threadpoolctl: {pools or 'no BLAS/OpenMP pools found'}.")
    except ImportError:
        notes.append("threadpoolctl not installed: BLAS thread counts are pinned by the variables above only.")
    repeats = {
        "chain": cfg.chain_repeats, "mlp_small": cfg.small_repeats, "mlp_large": cfg.large_repeats,
        "hvp": cfg.hvp_repeats, "hvp_forward": cfg.hvp_repeats, "long_chain": cfg.long_chain_repeats,
        "deep_mlp": cfg.deep_repeats,
        "import": cfg.import_repeats, "transformer": cfg.transformer_repeats, "lstm": cfg.lstm_repeats,
        "dynamic_net": cfg.dynamic_net_repeats, "mnist_cnn": cfg.mnist_cnn_repeats,
        "per_sample_grads": cfg.per_sample_repeats, "compile": cfg.compile_repeats,
    }
    notes += [
        "Medians of " + ", ".join(f"{k} {repeats[k]}" for k in only) + " repetitions"
        + (" (--quick: tiny sizes, the figures mean nothing)." if cfg.quick else "."),
        "Rows 2, 3 and 4 time the model as users write it (nn modules, an optim optimizer, zero_grad); "
        "2c, 3c and 4b the same network as raw tensor ops with a hand-written update. "
        "Timed rows (1-4) interleave the libraries in this process; rows 5-7 start a fresh interpreter per "
        "library per repetition, alternating libraries.",
        "Memory is resident set size for both libraries: 5b is RSS growth (/proc/self/statm) while the forward "
        "graph is built; 6a is VmHWM (/proc/self/status) after resetting it with '5' > /proc/self/clear_refs, "
        "minus the RSS before forward (parameters already allocated, after one warm-up step); 6b is RSS after "
        "backward (the loss, and so the graph, kept alive) minus that baseline minus the new grads. Row 6 runs "
        "with MALLOC_MMAP_THRESHOLD_=65536 so freed large buffers leave the RSS at once.",
        "Ratios are retrograd's figure over the other column's, from the same run; lower is better.",
    ]
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and repeats: only proves the script runs")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {','.join(WORKLOADS)}")
    parser.add_argument("--repeats", type=int, default=None, help="repetitions for every workload")
    parser.add_argument("--no-torch", action="store_true", help="run as if PyTorch were not installed")
    args = parser.parse_args()
    only = [n.strip() for n in args.only.split(",") if n.strip()] or list(WORKLOADS)
    unknown = [n for n in only if n not in BENCHES]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    cfg = Config.make(args.quick, args.repeats)
    torch = load_torch(args.no_torch)

    started = time.perf_counter()
    rows: list[Row] = []
    for name in only:
        t0 = time.perf_counter()
        rows += BENCHES[name](cfg, torch)
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)

    print(harness.markdown_table(rows))
    print()
    for note in environment_notes(cfg, torch, only):
        print(f"- {note}")
    print(f"- Total time {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
