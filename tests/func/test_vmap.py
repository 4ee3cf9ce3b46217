"""retrograd.func.vmap against torch.vmap: batching rules, in_dims/out_dims, nesting, chunks,
randomness, errors, the fallbacks, and the composition with grad/vjp (the per-sample-gradients
and model-ensembling tutorials of torch.func, ported)."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome
from retrograd import func as rfunc
from retrograd.func import _vmap


def _libs(torch: Any) -> list[tuple[Any, Any]]:
    import torch.func as tfunc
    return [(rg, rfunc), (torch, tfunc)]


def _np(t: Any) -> Any:
    if isinstance(t, (tuple, list)):
        return [_np(x) for x in t]
    if isinstance(t, dict):
        return {k: _np(v) for k, v in t.items()}
    return t.detach().numpy() if hasattr(t, "detach") else t


def _close(a: Any, b: Any, tol: float) -> None:
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
    else:
        assert np.shape(a) == np.shape(b), (np.shape(a), np.shape(b))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _same(torch: Any, fn: Any, tol: float = 1e-10, batched_only: bool = True) -> None:
    """``fn(lib, func)`` gives the same values under both libraries; on retrograd's side with no
    fallback (every op ran through its batching rule) unless ``batched_only`` is False."""
    results = []
    for lib, func in _libs(torch):
        with warnings.catch_warnings():
            if lib is rg and batched_only:
                warnings.filterwarnings("error", message="There is a performance drop")
            results.append(_np(fn(lib, func)))
    _close(results[0], results[1], tol)


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((5, 3, 4)), "v": rng.standard_normal((5, 4)), "m": rng.standard_normal((4, 2)),
            "s": rng.standard_normal(5), "w": rng.standard_normal((5, 4, 2)), "u": rng.standard_normal((3, 4))}


# Functions of one sample, run by vmap over the first argument and, with in_dims, over others.
_CASES: list[tuple[str, Any, tuple[str, ...], Any]] = [
    ("elementwise", lambda L, x: (x.sin() * 2 + 1).exp().tanh() - x.abs().sqrt(), ("x",), 0),
    ("broadcast unbatched wider", lambda L, v, u: v * u + u.relu(), ("v", "u"), (0, None)),
    ("broadcast batched wider", lambda L, x, v: x / (v.abs() + 1) + v, ("x", "v"), (0, 0)),
    ("scalar tensors", lambda L, s, x: s * x + s.exp(), ("s", "x"), (0, 0)),
    ("where and clamp", lambda L, x: L.where(x > 0, x, x * 0.1).clamp(-0.5, 0.5), ("x",), 0),
    ("reductions", lambda L, x: (x.sum(), x.sum(0), x.mean(-1, keepdim=True), x.amax(1), x.max(), x.var(0),
                                 x.logsumexp(-1), x.sum((0, 1))), ("x",), 0),
    ("max with indices", lambda L, x: tuple(x.max(dim=1)), ("x",), 0),
    ("softmax family", lambda L, x: (x.softmax(-1), L.nn.functional.log_softmax(x, dim=0)), ("x",), 0),
    ("matmul batched @ shared", lambda L, v, m: (v @ m, v.unsqueeze(0) @ m, L.mm(v.unsqueeze(0), m)),
     ("v", "m"), (0, None)),
    ("matmul shared @ batched", lambda L, u, w: (u @ w, L.mv(u, w[:, 0]), u[0].dot(w[:, 1])), ("u", "w"), (None, 0)),
    ("matmul batched @ batched", lambda L, x, w: (x @ w, L.bmm(x.unsqueeze(0), w.unsqueeze(0)), x[0].dot(w[:, 0])),
     ("x", "w"), (0, 0)),
    ("linear", lambda L, x, w: L.nn.functional.linear(x, w.t(), w[0]), ("x", "w"), (0, 0)),
    ("linear shared weight", lambda L, v, m: L.nn.functional.linear(v, m.t(), m[0]), ("v", "m"), (0, None)),
    ("shape ops", lambda L, x: (x.view(12), x.reshape(-1, 2), x.t(), x.transpose(0, 1), x.permute(1, 0),
                                x.unsqueeze(0), x.unsqueeze(-1).squeeze(-1), x.flatten(), x.expand(2, 3, 4),
                                x[1], x[:, 1:3], x[None, ..., 0], x.unbind(1)[2], x.flip(0), x.T, x.mT),
     ("x",), 0),
    ("cat and stack", lambda L, x, u: (L.cat([x, u], 0), L.stack([x, u], -1), L.cat([u, x], dim=1)),
     ("x", "u"), (0, None)),
    ("mse loss", lambda L, v, u: (L.nn.functional.mse_loss(v, u[0]), L.nn.functional.mse_loss(v, u[0], reduction="sum")),
     ("v", "u"), (0, None)),
    ("activations", lambda L, x: (L.nn.functional.gelu(x), L.nn.functional.silu(x), L.nn.functional.leaky_relu(x),
                                  L.nn.functional.softplus(x), L.sigmoid(x)), ("x",), 0),
]


@pytest.mark.parametrize("name,fn,args,in_dims", _CASES, ids=[c[0] for c in _CASES])
def test_batching_rules_match_torch(torch: Any, name: str, fn: Any, args: tuple[str, ...], in_dims: Any) -> None:
    data = _arrays()
    _same(torch, lambda lib, func: func.vmap(lambda *a: fn(lib, *a), in_dims=in_dims)(
        *[lib.tensor(data[k]) for k in args]))


def test_batch_dim_stays_physical_not_a_loop() -> None:
    """Each op runs once on the whole batch: the function sees one sample's shape, and the value
    inside is the batch with its batch dim in front."""
    seen: list[Any] = []

    def f(a: Any) -> Any:
        seen.append((tuple(a.shape), a.dim(), a.size(), a.size(-1), a.ndim, a.numel(), len(a)))
        out = a * 2
        seen.append((type(out).__name__, tuple(out._value.shape)))
        return out

    rfunc.vmap(f, in_dims=1)(rg.ones(3, 7, 4))
    assert seen == [((3, 4), 2, (3, 4), 4, 2, 12, 3), ("BatchedTensor", (7, 3, 4))]


def test_in_dims_out_dims_and_pytrees_match_torch(torch: Any) -> None:
    data = _arrays()

    def case(lib: Any, func: Any) -> Any:
        x, v, m = (lib.tensor(data[k]) for k in ("x", "v", "m"))
        out = [func.vmap(lambda a: a.sum(0), in_dims=1)(x), func.vmap(lambda a: a * 2, in_dims=-1)(x),
               func.vmap(lambda a, b: a @ b, in_dims=(0, None))(v, m),
               func.vmap(lambda a: a + 1, out_dims=1)(x), func.vmap(lambda a: a + 1, out_dims=-1)(x)]
        t = func.vmap(lambda d: {"p": d["a"] * d["b"][0], "q": (d["b"][1].sum(),)},
                      in_dims=({"a": 0, "b": [1, None]},))({"a": v, "b": [v.t(), m]})
        out += [t["p"], t["q"][0]]
        pair = func.vmap(lambda a: (a.sum(), a * 3, 7), out_dims=(0, 1, None))(v)
        out += [pair[0], pair[1], lib.tensor(float(pair[2]))]
        out.append(func.vmap(lambda a: lib.ones(2))(v))  # an unbatched output is expanded
        out.append(func.vmap(lambda a, n: a * n, in_dims=(0, None))(v, 3))
        return out

    _same(torch, case)


def test_nested_vmap_and_chunk_size_match_torch(torch: Any) -> None:
    data = _arrays()

    def case(lib: Any, func: Any) -> Any:
        x, w, u = (lib.tensor(data[k]) for k in ("x", "w", "u"))
        inner = lambda a, b: (a.unsqueeze(0) @ b).squeeze(0).sum() * a.exp().mean()
        out = [func.vmap(func.vmap(inner, in_dims=(0, None)), in_dims=(0, None))(x, w[0]),
               func.vmap(func.vmap(inner), in_dims=(1, None))(x, w),
               func.vmap(func.vmap(lambda a: a.softmax(0), in_dims=1), in_dims=0)(x),
               func.vmap(func.vmap(lambda a, b: a * b), in_dims=(0, None))(x, u)]
        for chunk in (1, 2, 5, 9):
            out.append(func.vmap(lambda a, b: a @ b, in_dims=(0, 0), chunk_size=chunk)(x, w))
        return out

    _same(torch, case)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_vmap_errors_match_torch(torch: Any) -> None:
    def cases(lib: Any, func: Any) -> list[Any]:
        x, y = lib.randn(3, 4), lib.randn(2, 4)

        def f(a: Any) -> Any:
            return a

        return [
            lambda: func.vmap(lambda a, b: a + b)(x, y),
            lambda: func.vmap(lambda a, b: a + b, in_dims=(0,))(x, y),
            lambda: func.vmap(f, in_dims=2)(x),
            lambda: func.vmap(f, in_dims=-3)(x),
            lambda: func.vmap(f, in_dims=None)(x),
            lambda: func.vmap(lambda a, n: a, in_dims=(0, 0))(x, 3),
            lambda: func.vmap(f, in_dims=1.0)(x),
            lambda: func.vmap(f, in_dims=[0])(x),
            lambda: func.vmap(lambda a: 3)(x),
            lambda: func.vmap(lambda a: (a, a), out_dims=(0,))(x),
            lambda: func.vmap(f, out_dims=1.5)(x),
            lambda: func.vmap(f, randomness="foo")(x),
            lambda: func.vmap(lambda a: a.item())(x),
            lambda: func.vmap(lambda a: a if a.sum() > 0 else a)(x),
            lambda: func.vmap(f)(),
            lambda: func.vmap(f)(lib.tensor(1.0)),
            lambda: func.vmap(f, chunk_size=0)(x),
            lambda: func.vmap(lambda a: a.shape)(x),
            lambda: func.vmap(f, in_dims={"a": 0})({"a": x}),
            lambda: func.vmap(lambda a: a["a"], in_dims=({"b": 0},))({"a": x}),
            lambda: func.vmap(lambda a: a + 1, out_dims=None)(x),
            lambda: func.vmap(lambda a: lib.bernoulli(a.sigmoid()))(x),
            lambda: func.vmap(f, out_dims=2)(x),
            lambda: func.vmap(f, out_dims=-3)(x),
            lambda: func.vmap(lambda a: a.sum().backward())(x),
        ]

    (ours, theirs) = [[outcome(c) for c in cases(lib, func)] for lib, func in _libs(torch)]
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # (bernoulli runs per sample)
def test_randomness_modes(torch: Any) -> None:
    p = rg.full((4, 1000), 0.5)
    rg.manual_seed(0)
    different = rfunc.vmap(lambda a: rg.bernoulli(a), randomness="different")(p)
    assert different.shape == (4, 1000)
    assert not all(bool((different[0] == different[i]).all()) for i in range(1, 4))
    same = rfunc.vmap(lambda a: rg.bernoulli(a), randomness="same")(p)
    assert all(bool((same[0] == same[i]).all()) for i in range(1, 4))
    (ours, theirs) = [[outcome(lambda: func.vmap(f)(lib.ones(3, 2)))
                       for f in (lambda a: a + lib.randn(2), lambda a: lib.nn.functional.dropout(a),
                                 lambda a: lib.rand(()) * a)]
                      for lib, func in _libs(torch)]
    assert ours == theirs
    state = rg.get_rng_state()
    rfunc.vmap(lambda a: a + rg.randn(2), randomness="same")(rg.ones(3, 2))
    assert not (rg.get_rng_state() == state).all()  # the generator is back in place and was used


def test_op_without_a_rule_runs_per_sample_with_torchs_warning(torch: Any) -> None:
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((4, 3, 5))
    with pytest.warns(UserWarning, match=r"There is a performance drop because we have not yet implemented the "
                                         r"batching rule for aten::renorm\. Please file us an issue"):
        ours = rfunc.vmap(lambda a: a.renorm(2, 0, 1.0) * 2)(rg.tensor(x0))
    with pytest.warns(UserWarning, match=r"batching rule for aten::renorm\. Please file us an issue"):
        theirs = torch.vmap(lambda a: a.renorm(2, 0, 1.0) * 2)(torch.tensor(x0))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_code_outside_the_op_table_makes_the_function_run_per_sample(torch: Any) -> None:
    """A batched index (here) or any other direct read of a batched array: the whole function
    reruns once per sample, with the warning, and gives torch's values."""
    x0 = np.arange(20.0).reshape(4, 5)
    idx = np.array([[0, 1], [2, 2], [4, 0], [3, 3]])
    with pytest.warns(UserWarning, match="There is a performance drop"):
        ours = rfunc.vmap(lambda a, i: a[i] * 2)(rg.tensor(x0), rg.tensor(idx))
    theirs = torch.vmap(lambda a, i: a[i] * 2)(torch.tensor(x0), torch.tensor(idx))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    assert not _vmap._LEVELS and not rg.ops.op._BATCHING  # no vmap left running


def test_vmap_leaves_no_state_behind_when_func_raises() -> None:
    with pytest.raises(ZeroDivisionError):
        rfunc.vmap(lambda a: 1 / 0)(rg.ones(3))
    assert not _vmap._LEVELS and not rg.ops.op._BATCHING


# -- composition with the reverse-mode transforms ---------------------------------------------

def test_vmap_of_grad_vjp_and_jacrev_and_grad_of_vmap_match_torch(torch: Any) -> None:
    data = _arrays()

    def case(lib: Any, func: Any) -> Any:
        x, w, m, v = (lib.tensor(data[k]) for k in ("x", "w", "m", "v"))
        loss = lambda p, a: ((a @ p).tanh() ** 2).sum()
        out = [func.vmap(func.grad(loss), in_dims=(None, 0))(m, x),  # shared parameters: per-sample grads
               func.vmap(func.grad(loss, argnums=(0, 1)), in_dims=(0, 0))(w, x)[0],
               func.vmap(func.grad(func.grad(lambda a: (a ** 3).sin())))(v[:, 0]),
               func.vmap(func.jacrev(lambda a: (a @ m).sin()))(v),
               func.jacrev(func.vmap(lambda a: (a @ m).sin()))(v),
               func.grad(lambda p: func.vmap(lambda a: loss(p, a))(x).sum())(m),
               func.vmap(lambda a: func.vjp(lambda b: b.exp() @ m, a)[1](lib.ones(2, dtype=lib.float64))[0])(v)]
        return out

    _same(torch, case)


def _per_sample_model(lib: Any) -> Any:
    nn, F = lib.nn, lib.nn.functional

    class SimpleCNN(nn.Module):  # the tutorial's model, its sizes scaled down (28x28 -> 10x10 images)
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(72, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x: Any) -> Any:
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    lib.manual_seed(0)
    return SimpleCNN()


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-6), ("float32", 1e-5)])
def test_per_sample_gradients_tutorial(torch: Any, dtype: str, tol: float) -> None:
    rng = np.random.default_rng(0)
    data0 = rng.standard_normal((8, 1, 10, 10)).astype(dtype)
    targets0 = rng.integers(0, 10, 8)
    results = []
    for lib, func in _libs(torch):
        F = lib.nn.functional
        model = _per_sample_model(lib).to(getattr(lib, dtype))
        data, targets = lib.tensor(data0), lib.tensor(targets0)

        def loss_fn(predictions: Any, targets: Any) -> Any:
            return F.nll_loss(predictions, targets)

        def compute_grad(sample: Any, target: Any) -> Any:
            prediction = model(sample.unsqueeze(0))
            return lib.autograd.grad(loss_fn(prediction, target.unsqueeze(0)), list(model.parameters()))

        per_sample = [compute_grad(data[i], targets[i]) for i in range(8)]
        per_sample = [lib.stack(shards) for shards in zip(*per_sample)]
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params: Any, buffers: Any, sample: Any, target: Any) -> Any:
            predictions = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return loss_fn(predictions, target.unsqueeze(0))

        with warnings.catch_warnings():
            if lib is rg:  # every op through its batching rule
                warnings.filterwarnings("error", message="There is a performance drop")
            ft = func.vmap(func.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
        for a, b in zip(per_sample, ft.values()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
        results.append([v.numpy() for v in ft.values()])
    _close(results[0], results[1], tol)


_ENSEMBLE_CLASSES: dict[str, Any] = {}


def _ensemble_model(lib: Any) -> Any:
    if lib.__name__ not in _ENSEMBLE_CLASSES:
        _ENSEMBLE_CLASSES[lib.__name__] = _ensemble_class(lib)
    return _ENSEMBLE_CLASSES[lib.__name__]()


def _ensemble_class(lib: Any) -> Any:
    nn, F = lib.nn, lib.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(64, 32)
            self.fc2 = nn.Linear(32, 32)
            self.fc3 = nn.Linear(32, 10)

        def forward(self, x: Any) -> Any:
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return SimpleMLP


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-6), ("float32", 1e-5)])
def test_model_ensembling_tutorial(torch: Any, dtype: str, tol: float) -> None:
    rng = np.random.default_rng(1)
    data0 = rng.standard_normal((10, 16, 1, 8, 8)).astype(dtype)
    results = []
    for lib, func in _libs(torch):
        lib.manual_seed(0)
        models = [_ensemble_model(lib).to(getattr(lib, dtype)) for _ in range(4)]
        data = lib.tensor(data0)
        minibatches = data[:4]
        loop_diff = lib.stack([model(mb) for model, mb in zip(models, minibatches)])
        minibatch = data[0]
        loop_same = lib.stack([model(minibatch) for model in models])
        params, buffers = func.stack_module_state(models)
        base_model = copy.deepcopy(models[0])  # (the tutorial moves it to 'meta'; retrograd has no meta device)

        def fmodel(params: Any, buffers: Any, x: Any) -> Any:
            return func.functional_call(base_model, (params, buffers), (x,))

        with warnings.catch_warnings():
            if lib is rg:
                warnings.filterwarnings("error", message="There is a performance drop")
            diff = func.vmap(fmodel)(params, buffers, minibatches)
            same = func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
        np.testing.assert_allclose(diff.detach().numpy(), loop_diff.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(same.detach().numpy(), loop_same.detach().numpy(), rtol=tol, atol=tol)
        results.append([diff.detach().numpy(), same.detach().numpy()])
    _close(results[0], results[1], tol)


def test_nll_loss_with_batched_targets_matches_torch(torch: Any) -> None:
    rng = np.random.default_rng(4)
    logp0 = np.log(rng.dirichlet(np.ones(4), size=(5, 3)))
    t0 = rng.integers(0, 4, (5, 3))
    t0[1, :] = 2  # a sample whose targets are all ignored below: NaN mean, as PyTorch
    w0 = rng.random(4) + 0.5

    def case(lib: Any, func: Any) -> Any:
        F = lib.nn.functional
        logp, t, w = lib.tensor(logp0), lib.tensor(t0), lib.tensor(w0)
        out = [func.vmap(lambda a, b: F.nll_loss(a, b, reduction=r))(logp, t) for r in ("none", "sum", "mean")]
        out.append(func.vmap(lambda a, b: F.nll_loss(a, b, weight=w, ignore_index=2))(logp, t))
        out.append(func.vmap(lambda a, b: F.nll_loss(a, b))(logp[:, 0], t[:, 0]))  # (C,) scores, () target
        out.append(func.vmap(func.grad(lambda a, b: F.nll_loss(a.log_softmax(-1), b, weight=w)))(logp, t))
        return out

    _same(torch, case)


def test_per_sample_gradients_with_cross_entropy_batch_without_fallback(torch: Any) -> None:
    rng = np.random.default_rng(5)
    x0, t0 = rng.standard_normal((6, 3, 4)), rng.integers(0, 4, (6, 3))
    w0 = rng.standard_normal((4, 4))

    def case(lib: Any, func: Any) -> Any:
        F = lib.nn.functional
        loss = lambda w, a, t: F.cross_entropy(a @ w, t)
        return [func.vmap(func.grad(loss), in_dims=(None, 0, 0))(lib.tensor(w0), lib.tensor(x0), lib.tensor(t0)),
                func.vmap(lambda a, t: F.cross_entropy(a, t, reduction="none"))(lib.tensor(x0), lib.tensor(t0))]

    _same(torch, case)


def test_convolution_and_pooling_rules_match_torch(torch: Any) -> None:
    rng = np.random.default_rng(6)
    x0, w0, b0 = rng.standard_normal((5, 2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    ws0, one0 = rng.standard_normal((5, 4, 3, 3, 3)), rng.standard_normal((5, 3, 7, 7))

    def case(lib: Any, func: Any) -> Any:
        F = lib.nn.functional
        x, w, b, ws, one = (lib.tensor(a) for a in (x0, w0, b0, ws0, one0))

        def loss(w: Any, b: Any, a: Any) -> Any:
            return F.max_pool2d(F.relu(F.conv2d(a, w, b, padding=1)), 2).pow(2).sum()

        return [func.vmap(lambda a: F.conv2d(a, w, b, stride=2))(x),
                func.vmap(lambda a, k: F.conv2d(a, k, b))(x, ws),
                func.vmap(lambda k: F.conv2d(x[0], k, None))(ws),
                func.vmap(lambda a: F.conv2d(a, w, b))(one),
                *func.vmap(func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(w, b, x),
                func.vmap(lambda a: F.max_pool2d(a, 2, return_indices=True))(x)[1].float(),
                func.vmap(lambda a: F.adaptive_max_pool2d(a, 2))(one)]

    _same(torch, case)


def test_batched_backward_of_vjp_matches_per_row_backward_passes(torch: Any) -> None:
    """``vmap(vjp_fn)`` (jacrev's core) runs one backward pass with batched cotangents; the
    rules of the backward ops (select/slice/diagonal backward included) batch it."""
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((3, 3))

    def case(lib: Any, func: Any) -> Any:
        x = lib.tensor(x0)
        f = lambda a: lib.stack([a[0, 1:].sin().sum(), a.diagonal().exp().sum(), a[2, 0] * a[1, 1], a.sum()])
        out, vjp_fn = func.vjp(f, x)
        basis = lib.eye(4, dtype=lib.float64)
        return [func.vmap(vjp_fn)(basis)[0], func.jacrev(f)(x), func.jacrev(func.jacrev(lambda a: f(a).sum()))(x)]

    _same(torch, case)
