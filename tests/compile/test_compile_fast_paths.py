"""retrograd.compile's per-call fast paths: tanh's backward in place, cached module guards."""

from __future__ import annotations

from typing import Any

import numpy as np

import retrograd as rg


def _chain(x: Any, c: Any) -> Any:
    y = x
    for _ in range(4):
        y = (y * c + 0.1).tanh()
    return y.sum()


def test_tanh_backward_runs_as_ufuncs_in_place_with_eagers_gradient(torch: Any) -> None:
    rng = np.random.default_rng(0)
    cs = rng.uniform(0.5, 1.5, 16).astype(np.float32)
    c = rg.tensor(cs)
    compiled = rg.compile(lambda x: _chain(x, c))
    xs = rng.uniform(-1, 1, 16).astype(np.float32)
    for _ in range(3):
        x, eager_x = rg.tensor(xs, requires_grad=True), rg.tensor(xs, requires_grad=True)
        tx = torch.tensor(xs, requires_grad=True)
        compiled(x).backward()
        _chain(eager_x, c).backward()
        _chain(tx, torch.tensor(cs)).backward()
        # The same NumPy steps as the eager rule, so the same bits; and PyTorch's to rounding.
        assert np.array_equal(x.grad.numpy(), eager_x.grad.numpy())
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    backward = compiled.code.split("def backward")[1]
    assert "_tanh_backward" not in backward
    assert backward.count("subtract(") == 4 and "out=b" in backward


def test_tanh_backward_of_float64_and_of_a_broadcast_gradient_stay_right(torch: Any) -> None:
    w = rg.tensor([[0.5], [-2.0]], dtype=rg.float64, requires_grad=True)

    def fn(x: Any) -> Any:
        return (x.tanh() * w).sum()  # tanh's gradient arrives broadcast from (2, 1) * (3,)

    compiled = rg.compile(fn)
    tw = torch.tensor([[0.5], [-2.0]], dtype=torch.float64, requires_grad=True)
    for _ in range(3):
        x = rg.tensor([0.3, -1.2, 2.0], dtype=rg.float64, requires_grad=True)
        tx = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
        compiled(x).backward()
        (tx.tanh() * tw).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14)


def test_a_compiled_module_follows_a_replaced_submodule_parameter_and_mode() -> None:
    rg.manual_seed(0)
    model = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Dropout(0.5), rg.nn.Linear(4, 2))
    compiled = rg.compile(model)
    x = rg.randn(5, 3)
    model.eval()
    for _ in range(3):
        assert np.array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    model[2] = rg.nn.Linear(4, 2)  # the same number of children, one of them new
    for _ in range(2):
        assert np.array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    model[0].weight = rg.nn.Parameter(rg.ones(4, 3))  # a new parameter on a cached submodule
    for _ in range(2):
        assert np.array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    model[0].register_buffer("scale", rg.ones(1))  # a new buffer: a new guard key
    keys = len(compiled._compiled._cache)
    compiled(x)
    assert len(compiled._compiled._cache) == keys + 1
    model.train()  # dropout on: a new variant, with the same random draws as eager
    rg.manual_seed(1)
    got = compiled(x)
    rg.manual_seed(1)
    assert np.array_equal(got.detach().numpy(), model(x).detach().numpy())


def _relu_mlp(lib: Any, dtype: Any) -> Any:
    """Linear-ReLU-Linear-ReLU-Linear whose gradients into each ReLU hold inf, NaN and -0.0
    (the next layer's weights do), and whose ReLUs give 0 for some rows (negative pre-activations)."""
    rng = np.random.default_rng(3)
    w3 = rng.standard_normal((2, 6))
    w3[:, 0], w3[:, 1], w3[:, 2] = np.inf, np.nan, -0.0
    arrays = [rng.standard_normal((6, 3)), rng.standard_normal(6), rng.standard_normal((6, 6)),
              rng.standard_normal(6), w3, rng.standard_normal(2)]
    kind = getattr(lib, np.dtype(dtype).name)
    model = lib.nn.Sequential(lib.nn.Linear(3, 6, dtype=kind), lib.nn.ReLU(), lib.nn.Linear(6, 6, dtype=kind),
                              lib.nn.ReLU(), lib.nn.Linear(6, 2, dtype=kind))
    with lib.no_grad():
        for p, a in zip(model.parameters(), arrays, strict=True):
            p.copy_(lib.tensor(a.astype(dtype)))
    return model


def test_relu_backward_written_into_the_fresh_gradient_keeps_eagers_bits(torch: Any) -> None:
    # threshold_backward in place: +0 where the ReLU gave 0 even for an inf or NaN gradient, the
    # gradient's own bits (inf, NaN, -0.0) elsewhere, as the eager kernel and PyTorch.
    xs = np.random.default_rng(4).standard_normal((5, 3))
    for dtype in (np.float32, np.float64):
        model, eager_model, tmodel = _relu_mlp(rg, dtype), _relu_mlp(rg, dtype), _relu_mlp(torch, dtype)
        compiled = rg.compile(lambda x: model(x).sum())  # noqa: B023 - called within this iteration
        for _ in range(3):
            model.zero_grad()
            eager_model.zero_grad()
            tmodel.zero_grad()
            with np.errstate(invalid="ignore"):  # (eager's matmuls, and the first call's trace, meet inf * 0 and say so)
                compiled(rg.tensor(xs.astype(dtype))).backward()
                eager_model(rg.tensor(xs.astype(dtype))).sum().backward()
            tmodel(torch.tensor(xs.astype(dtype))).sum().backward()
            for p, e, t in zip(model.parameters(), eager_model.parameters(), tmodel.parameters(), strict=True):
                bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
                assert np.array_equal(p.grad.numpy().view(bits), e.grad.numpy().view(bits))
                np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, equal_nan=True)
        backward = compiled.code.split("def backward")[1]
        assert backward.count("threshold_backward, in place") == 2 and "_threshold_backward(" not in backward
    # (the gradients hold inf and NaN: the test would not see a select done as a product)
    assert np.isnan(model[0].weight.grad.numpy()).any() and np.isinf(model[2].weight.grad.numpy()).any()
