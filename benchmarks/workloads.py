"""In-process workloads: one runner factory per workload per library.

A factory builds its inputs once and returns ``run() -> seconds`` timing one repetition. ``lib`` is
the ``retrograd`` or ``torch`` module: the same code runs on both, written as users write it (``nn``
modules, an ``optim`` optimizer: the module forms) or with tensor ops only (the raw forms). The
``*_numpy`` factories are the NumPy floor: the same computation, forward and backward (and update),
written by hand with no autograd bookkeeping.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from overhead import SIZE, build_chain, chain_lib, chain_numpy

LR = 0.01
Runner = Callable[[], float]


def functional(lib: Any) -> Any:
    return importlib.import_module(lib.__name__ + ".nn.functional")


# ---------------------------------------------------------------------------------------------
# 1. Elementwise chain (benchmarks/overhead.py's chains; a run returns forward and backward times)


def chain_runner_lib(lib: Any, n_ops: int) -> Runner:
    run = chain_lib(lib, n_ops)
    return lambda: sum(run())


def chain_runner_numpy(n_ops: int) -> Runner:
    run = chain_numpy(n_ops)
    return lambda: sum(run())


# ---------------------------------------------------------------------------------------------
# 2-4. MLP: Linear layers as ``h @ W + b``, ReLU between them, cross-entropy on class indices


def init_mlp(sizes: tuple[int, ...], batch: int, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """float32 parameters [W1, b1, W2, b2, ...] (W: fan_in x fan_out), an input batch and class targets."""
    rng = np.random.default_rng(seed)
    params: list[np.ndarray] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    return params, x, y


def mlp_loss(F: Any, params: list[Any], x: Any, y: Any) -> Any:
    n_layers = len(params) // 2
    h = x
    for i in range(n_layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            h = F.relu(h)
    return F.cross_entropy(h, y)


def _lib_mlp(lib: Any, sizes: tuple[int, ...], batch: int) -> tuple[list[Any], Any, Any]:
    arrays, x, y = init_mlp(sizes, batch)
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    return params, lib.tensor(x), lib.tensor(y)


def mlp_step_lib(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """One SGD step: forward, loss, backward, ``p -= lr * p.grad`` under no_grad, grads reset to None."""
    F = functional(lib)
    params, x, y = _lib_mlp(lib, sizes, batch)

    def run() -> float:
        t0 = time.perf_counter()
        loss = mlp_loss(F, params, x, y)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return time.perf_counter() - t0

    return run


def mlp_step_numpy(sizes: tuple[int, ...], batch: int) -> Runner:
    """The same SGD step by hand: stable log-softmax, softmax-minus-one-hot gradient, ReLU masks."""
    params, x, y = init_mlp(sizes, batch)
    n_layers = len(params) // 2
    rows = np.arange(batch)

    def run() -> float:
        t0 = time.perf_counter()
        acts = [x]  # the input of each layer (x, then the ReLU outputs)
        h = x
        for i in range(n_layers):
            h = h @ params[2 * i]
            h += params[2 * i + 1]
            if i < n_layers - 1:
                np.maximum(h, 0, out=h)
                acts.append(h)
        loss, g = cross_entropy_and_grad(h, rows, y)
        for i in reversed(range(n_layers)):
            w, b = params[2 * i], params[2 * i + 1]
            grad_w = acts[i].T @ g
            grad_b = g.sum(axis=0)
            if i > 0:
                g = g @ w.T
                g *= acts[i] > 0
            w -= LR * grad_w
            b -= LR * grad_b
        elapsed = time.perf_counter() - t0
        assert np.isfinite(loss)
        return elapsed

    return run


def cross_entropy_and_grad(logits: np.ndarray, rows: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """The NumPy floor's mean cross-entropy and its gradient w.r.t. the logits: (softmax - onehot) / batch."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    loss = float(-(shifted[rows, y] - np.log(total[:, 0])).mean())
    g = exp / total
    g[rows, y] -= 1
    g /= len(logits)
    return loss, g


def mlp_hvp_lib(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """Hessian-vector product of the MLP's loss w.r.t. its parameters: grad, dot with v, grad again."""
    F = functional(lib)
    params, x, y = _lib_mlp(lib, sizes, batch)
    rng = np.random.default_rng(1)
    vector = [lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in params]

    def run() -> float:
        t0 = time.perf_counter()
        hessian_vector_product(lib, mlp_loss(F, params, x, y), params, vector)
        return time.perf_counter() - t0

    return run


def hessian_vector_product(lib: Any, loss: Any, params: list[Any], vector: list[Any]) -> tuple[Any, ...]:
    """The Hessian of ``loss`` w.r.t. ``params`` times ``vector``: grad with create_graph, dot with
    the vector, grad again."""
    grads = lib.autograd.grad(loss, params, create_graph=True)
    dot = (grads[0] * vector[0]).sum()
    for g, v in zip(grads[1:], vector[1:]):
        dot = dot + (g * v).sum()
    hvp = lib.autograd.grad(dot, params)
    assert len(hvp) == len(params)
    return tuple(hvp)


# ---------------------------------------------------------------------------------------------
# 2-4, as users write them: nn.Sequential of nn.Linear + nn.ReLU, F.cross_entropy, an optimizer
# from ``optim`` (SGD with momentum, or Adam) and ``zero_grad()``. The floor is the same math by
# hand, weights laid out as nn.Linear's (out x in), optimizer update included.

MOMENTUM = 0.9
BETAS = (0.9, 0.999)
EPS = 1e-8
OPTIMIZERS = ("sgd", "adam")


def init_linear_mlp(sizes: tuple[int, ...], batch: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """``init_mlp``'s values with each weight as nn.Linear keeps it: (fan_out x fan_in), row-major."""
    params, x, y = init_mlp(sizes, batch)
    return [np.ascontiguousarray(p.T) if p.ndim == 2 else p for p in params], x, y


def _module_mlp(lib: Any, sizes: tuple[int, ...], batch: int) -> tuple[Any, Any, Any]:
    arrays, x, y = init_linear_mlp(sizes, batch)
    layers: list[Any] = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layer = lib.nn.Linear(fan_in, fan_out)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(arrays[2 * i]))
            layer.bias.copy_(lib.tensor(arrays[2 * i + 1]))
        layers.append(layer)
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers), lib.tensor(x), lib.tensor(y)


def make_optimizer(lib: Any, params: Any, optimizer: str) -> Any:
    if optimizer == "sgd":
        return lib.optim.SGD(params, lr=LR, momentum=MOMENTUM)
    return lib.optim.Adam(params, lr=LR, betas=BETAS, eps=EPS)


def module_step_lib(lib: Any, sizes: tuple[int, ...], batch: int, optimizer: str) -> Runner:
    """One training step as users write it: zero_grad, forward, cross_entropy, backward, step."""
    F = functional(lib)
    model, x, y = _module_mlp(lib, sizes, batch)
    opt = make_optimizer(lib, model.parameters(), optimizer)

    def run() -> float:
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return time.perf_counter() - t0

    return run


def module_step_numpy(sizes: tuple[int, ...], batch: int, optimizer: str) -> Runner:
    """``module_step_lib`` by hand: ``x @ W.T + b`` layers, the softmax gradient, and the optimizer's
    update in place (SGD: momentum buffer; Adam: both moments, bias-corrected), fresh gradients."""
    params, x, y = init_linear_mlp(sizes, batch)
    n_layers = len(params) // 2
    rows = np.arange(batch)
    state: list[list[np.ndarray]] = [[] for _ in params]
    step_count = [0]
    beta1, beta2 = BETAS

    def update(k: int, p: np.ndarray, grad: np.ndarray) -> None:
        s = state[k]
        if optimizer == "sgd":
            if not s:
                s.append(grad.copy())
            else:
                s[0] *= MOMENTUM
                s[0] += grad
            p -= LR * s[0]
            return
        if not s:
            s += [np.zeros_like(p), np.zeros_like(p)]
        m, v = s
        m *= beta1
        m += (1 - beta1) * grad
        v *= beta2
        v += (1 - beta2) * grad * grad
        t = step_count[0]
        denom = np.sqrt(v) / np.sqrt(1 - beta2 ** t)
        denom += EPS
        p -= (LR / (1 - beta1 ** t)) * m / denom

    def run() -> float:
        t0 = time.perf_counter()
        step_count[0] += 1
        acts = [x]
        h = x
        for i in range(n_layers):
            h = h @ params[2 * i].T
            h += params[2 * i + 1]
            if i < n_layers - 1:
                np.maximum(h, 0, out=h)
                acts.append(h)
        loss, g = cross_entropy_and_grad(h, rows, y)
        grads: list[np.ndarray] = [g] * len(params)
        for i in reversed(range(n_layers)):
            grads[2 * i] = g.T @ acts[i]
            grads[2 * i + 1] = g.sum(axis=0)
            if i > 0:
                g = g @ params[2 * i]
                g *= acts[i] > 0
        for k, (p, grad) in enumerate(zip(params, grads)):
            update(k, p, grad)
        elapsed = time.perf_counter() - t0
        assert np.isfinite(loss)
        return elapsed

    return run


def module_hvp_lib(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """``mlp_hvp_lib`` on the nn.Sequential model: grad of the loss w.r.t. ``model.parameters()``
    with create_graph, dot with v, grad again."""
    F = functional(lib)
    model, x, y = _module_mlp(lib, sizes, batch)
    params = list(model.parameters())
    rng = np.random.default_rng(1)
    vector = [lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in params]

    def run() -> float:
        t0 = time.perf_counter()
        hessian_vector_product(lib, F.cross_entropy(model(x), y), params, vector)
        return time.perf_counter() - t0

    return run


# -- the LSTM training step (bench.py row 8) ----------------------------------------------------


def init_lstm(sizes: tuple[int, int, int, int, int], seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Float32 weights ``[W_ih, W_hh, b_ih, b_hh]`` per layer (PyTorch's layout and U(-1/sqrt(H),
    1/sqrt(H)) start) and an input ``(seq, batch, input)``; ``sizes`` is (input, hidden, layers,
    seq, batch)."""
    n_in, hidden, layers, seq, batch = sizes
    rng = np.random.default_rng(seed)
    bound = 1 / np.sqrt(hidden)
    weights = []
    for layer in range(layers):
        width = n_in if layer == 0 else hidden
        for shape in ((4 * hidden, width), (4 * hidden, hidden), (4 * hidden,), (4 * hidden,)):
            weights.append(rng.uniform(-bound, bound, shape).astype(np.float32))
    return weights, rng.standard_normal((seq, batch, n_in)).astype(np.float32)


def lstm_step_lib(lib: Any, sizes: tuple[int, int, int, int, int]) -> Runner:
    """``nn.LSTM`` forward, mean of squares of the output, backward, ``optim.SGD`` step."""
    n_in, hidden, layers, _, _ = sizes
    weights, x_np = init_lstm(sizes)
    model = lib.nn.LSTM(n_in, hidden, layers)
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    x = lib.tensor(x_np)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def run() -> float:
        t0 = time.perf_counter()
        opt.zero_grad()
        out, _ = model(x)
        out.pow(2).mean().backward()
        opt.step()
        return time.perf_counter() - t0

    return run


def lstm_step_numpy(sizes: tuple[int, int, int, int, int]) -> Runner:
    """``lstm_step_lib`` by hand: the input projection of all steps at once, per step one product
    for the hidden projection and the gates, then backpropagation through time and the SGD update."""
    n_in, hidden, layers, seq, batch = sizes
    weights, x = init_lstm(sizes)
    h_ = hidden

    def sigmoid(z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-z))

    def run() -> float:
        t0 = time.perf_counter()
        inp = x
        caches = []
        for layer in range(layers):
            w_ih, w_hh, b_ih, b_hh = weights[4 * layer:4 * layer + 4]
            xp = (inp.reshape(seq * batch, -1) @ w_ih.T + (b_ih + b_hh)).reshape(seq, batch, 4 * h_)
            h = np.zeros((batch, h_), np.float32)
            c = np.zeros((batch, h_), np.float32)
            hs, cache = [], []
            for t in range(seq):
                g = xp[t] + h @ w_hh.T
                i, f, gg, o = sigmoid(g[:, :h_]), sigmoid(g[:, h_:2 * h_]), np.tanh(g[:, 2 * h_:3 * h_]), \
                    sigmoid(g[:, 3 * h_:])
                c_prev, h_prev = c, h
                c = f * c + i * gg
                tc = np.tanh(c)
                h = o * tc
                cache.append((i, f, gg, o, c_prev, tc, h_prev))
                hs.append(h)
            caches.append((inp, cache))
            inp = np.stack(hs)
        grad_out = 2 * inp / inp.size
        for layer in reversed(range(layers)):
            w_ih, w_hh, b_ih, b_hh = weights[4 * layer:4 * layer + 4]
            inp, cache = caches[layer]
            dh = np.zeros((batch, h_), np.float32)
            dc = np.zeros((batch, h_), np.float32)
            gates = np.empty((seq, batch, 4 * h_), np.float32)
            d_w_hh = np.zeros_like(w_hh)
            for t in reversed(range(seq)):
                i, f, gg, o, c_prev, tc, h_prev = cache[t]
                dh = dh + grad_out[t]
                dc = dc + dh * o * (1 - tc * tc)
                g = gates[t]
                g[:, :h_] = dc * gg * i * (1 - i)
                g[:, h_:2 * h_] = dc * c_prev * f * (1 - f)
                g[:, 2 * h_:3 * h_] = dc * i * (1 - gg * gg)
                g[:, 3 * h_:] = dh * tc * o * (1 - o)
                dc = dc * f
                dh = g @ w_hh
                d_w_hh += g.T @ h_prev
            flat = gates.reshape(seq * batch, -1)
            d_w_ih = flat.T @ inp.reshape(seq * batch, -1)
            d_b = flat.sum(0)
            grad_out = (flat @ w_ih).reshape(seq, batch, -1)
            for p, d in ((w_ih, d_w_ih), (w_hh, d_w_hh), (b_ih, d_b), (b_hh, d_b)):
                p -= 0.01 * d
        return time.perf_counter() - t0

    return run


# ---------------------------------------------------------------------------------------------
# 10. retrograd.compile: the chain and the small MLP step with a compiled forward (and backward)


def compiled_chain_runner(lib: Any, n_ops: int) -> Runner:
    """The chain of ``chain_runner_lib`` as one compiled function (``lib.compile``): the first
    call traces and compiles (untimed warm-up), later ones run the generated forward and backward."""
    rng = np.random.default_rng(0)
    c = lib.tensor(rng.uniform(0.9, 1.1, SIZE).astype(np.float32))
    d = lib.tensor(rng.uniform(-0.1, 0.1, SIZE).astype(np.float32))
    x0 = rng.uniform(-1, 1, SIZE).astype(np.float32)
    chain = lib.compile(lambda x: build_chain(x, c, d, n_ops).sum())

    def run() -> float:
        x = lib.tensor(x0, requires_grad=True)
        t0 = time.perf_counter()
        chain(x).backward()
        return time.perf_counter() - t0

    return run


def compiled_module_step(lib: Any, sizes: tuple[int, ...], batch: int, optimizer: str,
                         first_call: list[float] | None = None) -> Runner:
    """``module_step_lib`` with the model compiled (``lib.compile(model)``), as torch.compile is
    used: zero_grad, compiled forward, cross_entropy, backward (compiled), step. ``first_call``
    receives the first step's seconds (tracing and compiling included)."""
    F = functional(lib)
    model, x, y = _module_mlp(lib, sizes, batch)
    compiled = lib.compile(model)
    opt = make_optimizer(lib, model.parameters(), optimizer)

    def run() -> float:
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        return time.perf_counter() - t0

    if first_call is not None:
        first_call.append(run())
    return run
