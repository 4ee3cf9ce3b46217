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


def mlp_hvp_forward_lib(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """``mlp_hvp_lib`` by forward-over-reverse: the parameters made dual with the vector as their
    tangent (``autograd.forward_ad``), one backward pass, the gradients' tangents are H v."""
    F = functional(lib)
    params, x, y = _lib_mlp(lib, sizes, batch)
    rng = np.random.default_rng(1)
    vector = [lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in params]

    def run() -> float:
        t0 = time.perf_counter()
        forward_over_reverse_hvp(lib, F, params, x, y, vector)
        return time.perf_counter() - t0

    return run


def mlp_hvp_func_lib(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """``mlp_hvp_lib`` as ``torch.func`` (and JAX's autodiff cookbook) writes it:
    ``jvp(grad(loss), (params,), (vector,))``, forward over reverse, on plain (detached)
    parameters as the function transforms take them."""
    F = functional(lib)
    params, x, y = _lib_mlp(lib, sizes, batch)
    plain = tuple(p.detach() for p in params)
    rng = np.random.default_rng(1)
    vector = tuple(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in params)

    def loss(ps: tuple[Any, ...]) -> Any:
        return mlp_loss(F, list(ps), x, y)

    def run() -> float:
        t0 = time.perf_counter()
        hvp = lib.func.jvp(lib.func.grad(loss), (plain,), (vector,))[1]
        elapsed = time.perf_counter() - t0
        assert len(hvp) == len(plain)
        return elapsed

    return run


def forward_over_reverse_hvp(lib: Any, F: Any, params: list[Any], x: Any, y: Any, vector: list[Any]) -> list[Any]:
    """H v of the MLP loss: a JVP (forward AD) of its gradient (one backward pass)."""
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        duals = [fwad.make_dual(p, v) for p, v in zip(params, vector)]
        grads = lib.autograd.grad(mlp_loss(F, duals, x, y), duals)
        hvp = [fwad.unpack_dual(g).tangent for g in grads]
    assert len(hvp) == len(params)
    return hvp


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


def module_step_lib(lib: Any, sizes: tuple[int, ...], batch: int, optimizer: str, compiled: bool = False,
                    first_call: list[float] | None = None) -> Runner:
    """One training step as users write it: zero_grad, forward, cross_entropy, backward, step.
    ``compiled``: as torch.compile users write it, the loss function (the model and
    ``cross_entropy``, reading the model from its closure) and the optimizer's step compiled
    (``lib.compile(train_loss)``, ``lib.compile(opt.step)``), the same for both libraries;
    ``first_call`` receives the first step's seconds (tracing and compiling included)."""
    F = functional(lib)
    model, x, y = _module_mlp(lib, sizes, batch)
    opt = make_optimizer(lib, model.parameters(), optimizer)

    def train_loss(inputs: Any, targets: Any) -> Any:
        return F.cross_entropy(model(inputs), targets)

    loss_fn, step = (lib.compile(train_loss), lib.compile(opt.step)) if compiled else (train_loss, opt.step)

    def run() -> float:
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        step()
        return time.perf_counter() - t0

    if first_call is not None:
        first_call.append(run())
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
    """``lstm_step_lib`` by hand, as fast as NumPy goes: the input projection of all steps as one
    product, per step one product for the hidden projection and in-place gate math on
    preallocated buffers (one ``tanh`` for the four gates: sigmoid(x) = tanh(x / 2) / 2 + 1 / 2),
    then backpropagation through time with the step-independent factors computed over the whole
    sequence at once, the weight gradients as one product each over the sequence, the SGD update."""
    n_in, hidden, layers, seq, batch = sizes
    weights, x = init_lstm(sizes)
    h_ = hidden
    g4 = 4 * h_
    scale = np.full(g4, 0.5, np.float32)
    scale[2 * h_:3 * h_] = 1
    shift = np.where(scale == 1, 0, 0.5).astype(np.float32)

    def run() -> float:
        t0 = time.perf_counter()
        inp = x
        caches = []
        for layer in range(layers):
            w_ih, w_hh, b_ih, b_hh = weights[4 * layer:4 * layer + 4]
            act = (inp.reshape(seq * batch, -1) @ w_ih.T).reshape(seq, batch, g4)
            act += b_ih + b_hh
            act *= scale
            w_hh_t = (w_hh * scale[:, None]).T
            tanh_c = np.empty((seq, batch, h_), np.float32)
            cell = np.empty((seq, batch, h_), np.float32)
            out = np.empty((seq, batch, h_), np.float32)
            proj = np.empty((batch, g4), np.float32)
            tmp = np.empty((batch, h_), np.float32)
            h = np.zeros((batch, h_), np.float32)
            c = np.zeros((batch, h_), np.float32)
            for t in range(seq):
                a = act[t]
                np.matmul(h, w_hh_t, out=proj)
                a += proj
                np.tanh(a, out=a)
                a *= scale
                a += shift
                np.multiply(a[:, h_:2 * h_], c, out=cell[t])
                np.multiply(a[:, :h_], a[:, 2 * h_:3 * h_], out=tmp)
                cell[t] += tmp
                np.tanh(cell[t], out=tanh_c[t])
                np.multiply(a[:, 3 * h_:], tanh_c[t], out=out[t])
                h, c = out[t], cell[t]
            caches.append((inp, act, tanh_c, cell, out))
            inp = out
        grad_out = 2 * inp / inp.size
        for layer in reversed(range(layers)):
            w_ih, w_hh, b_ih, b_hh = weights[4 * layer:4 * layer + 4]
            inp, act, tanh_c, cell, out = caches[layer]
            steps = act * act
            steps[..., :2 * h_] = act[..., :2 * h_] - steps[..., :2 * h_]
            steps[..., 2 * h_:3 * h_] = 1 - steps[..., 2 * h_:3 * h_]
            steps[..., 3 * h_:] = act[..., 3 * h_:] - steps[..., 3 * h_:]
            steps[..., :h_] *= act[..., 2 * h_:3 * h_]
            steps[1:, :, h_:2 * h_] *= cell[:-1]
            steps[0, :, h_:2 * h_] = 0  # (c_0 = 0)
            steps[..., 2 * h_:3 * h_] *= act[..., :h_]
            steps[..., 3 * h_:] *= tanh_c
            dtanh = 1 - tanh_c * tanh_c
            dtanh *= act[..., 3 * h_:]
            dh = np.zeros((batch, h_), np.float32)
            dc = np.zeros((batch, h_), np.float32)
            tmp = np.empty((batch, h_), np.float32)
            for t in reversed(range(seq)):
                dh += grad_out[t]
                np.multiply(dh, dtanh[t], out=tmp)
                dc += tmp
                s = steps[t]
                s.reshape(batch, 4, h_)[:, :3] *= dc[:, None, :]
                s[:, 3 * h_:] *= dh
                np.matmul(s, w_hh, out=dh)
                dc *= act[t, :, h_:2 * h_]
            flat = steps.reshape(seq * batch, -1)
            d_w_ih = flat.T @ inp.reshape(seq * batch, -1)
            d_w_hh = steps[1:].reshape(-1, g4).T @ out[:-1].reshape(-1, h_)  # (h_0 = 0)
            d_b = flat.sum(0)
            if layer > 0:
                grad_out = (flat @ w_ih).reshape(seq, batch, -1)
            for p, d in ((w_ih, d_w_ih), (w_hh, d_w_hh), (b_ih, d_b), (b_hh, d_b)):
                p -= 0.01 * d
        return time.perf_counter() - t0

    return run


# -- PyTorch's tutorial dynamic_net.py (bench.py row 10) ------------------------------------------


def dynamic_net_lib(lib: Any, steps: int) -> Runner:
    """Our port of the PyTorch tutorial ``beginner_source/examples_nn/dynamic_net.py``: five scalar
    parameters, a third-to-fifth order polynomial of 2,000 points whose order is drawn at random
    each step (weight sharing: ``e`` is used once or twice), ``MSELoss(reduction='sum')``,
    ``optim.SGD(lr=1e-8, momentum=0.9)``; one run is ``steps`` training steps (zero_grad,
    forward, loss, backward, step). The order draws come from a seeded ``random.Random``, the same
    for every library and run."""
    import math
    import random

    class DynamicNet(lib.nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            gen = np.random.default_rng(0)
            for name in "abcde":
                setattr(self, name, lib.nn.Parameter(lib.tensor(np.float32(gen.standard_normal()))))

        def forward(self, x: Any, order: int) -> Any:
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, order):
                y = y + self.e * x ** exp
            return y

    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    model = DynamicNet()
    criterion = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    draws = random.Random(0)

    def run() -> float:
        orders = [draws.randint(4, 6) for _ in range(steps)]
        t0 = time.perf_counter()
        for order in orders:
            loss = criterion(model(x, order), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        elapsed = time.perf_counter() - t0
        assert math.isfinite(loss.item())
        return elapsed

    return run


# -- the MNIST example's CNN (bench.py row 11) ------------------------------------------------------


def mnist_cnn_lib(lib: Any, steps: int, batch: int = 64) -> Runner:
    """The ``Net`` of pytorch/examples ``mnist/main.py`` (conv 1→32 3×3, ReLU, conv 32→64 3×3, ReLU,
    max_pool2d 2, dropout 0.25, flatten, fc 9216→128, ReLU, dropout 0.5, fc 128→10, log_softmax)
    trained as that script does (``F.nll_loss``, ``optim.Adadelta(lr=1.0)``, ``StepLR(step_size=1,
    gamma=0.7)`` stepped once per run, as per epoch), on synthetic 28×28 digits of the same shape:
    one run is ``steps`` training steps of ``batch`` images."""
    F = functional(lib)
    nn = lib.nn

    class Net(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x: Any) -> Any:
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    lib.manual_seed(0)
    model = Net()
    gen = np.random.default_rng(0)
    with lib.no_grad():  # the same start for every library
        for p in model.parameters():
            bound = 1 / np.sqrt(p[0].numel()) if p.dim() > 1 else 0.05
            p.copy_(lib.tensor(gen.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
    images = [lib.tensor(gen.standard_normal((batch, 1, 28, 28)).astype(np.float32)) for _ in range(steps)]
    labels = [lib.tensor(gen.integers(0, 10, batch)) for _ in range(steps)]
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    model.train()

    def run() -> float:
        t0 = time.perf_counter()
        for data, target in zip(images, labels):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
        scheduler.step()
        elapsed = time.perf_counter() - t0
        assert np.isfinite(loss.item())
        return elapsed

    return run


# ---------------------------------------------------------------------------------------------
# 10. Per-sample gradients (torch.func's tutorial): vmap(grad(loss)) against a loop of backwards
def _per_sample_loss(F: Any) -> Callable[..., Any]:
    def loss(params: list[Any], x: Any, y: Any) -> Any:
        h = F.relu(x.unsqueeze(0) @ params[0] + params[1])
        return F.nll_loss(F.log_softmax(h @ params[2] + params[3], dim=1), y.unsqueeze(0))
    return loss


def per_sample_grads_vmap(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """``vmap(grad(loss), in_dims=(None, 0, 0))``: every sample's gradient of a 2-layer MLP's loss
    (``lib`` is retrograd or torch; ``lib.func`` their function transforms)."""
    func = importlib.import_module(lib.__name__ + ".func")
    params_np, x_np, y_np = init_mlp(sizes, batch)
    params, x, y = [lib.tensor(p) for p in params_np], lib.tensor(x_np), lib.tensor(y_np)
    per_sample = func.vmap(func.grad(_per_sample_loss(functional(lib))), in_dims=(None, 0, 0))

    def run() -> float:
        t0 = time.perf_counter()
        per_sample(params, x, y)
        return time.perf_counter() - t0

    return run


def per_sample_grads_loop(lib: Any, sizes: tuple[int, ...], batch: int) -> Runner:
    """The same gradients as ``batch`` backward passes, one per sample, stacked."""
    params_np, x_np, y_np = init_mlp(sizes, batch)
    params = [lib.tensor(p, requires_grad=True) for p in params_np]
    x, y = lib.tensor(x_np), lib.tensor(y_np)
    loss = _per_sample_loss(functional(lib))

    def run() -> float:
        t0 = time.perf_counter()
        grads = [lib.autograd.grad(loss(params, x[i], y[i]), params) for i in range(batch)]
        [lib.stack(g) for g in zip(*grads)]
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
