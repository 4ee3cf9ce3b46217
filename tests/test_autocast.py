"""torch.autocast on the CPU (issue #12): PyTorch's op lists, policies, nesting, decorator, cache, errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

pytest.importorskip("ml_dtypes")

_X = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
_W = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
_IMG = np.random.default_rng(2).standard_normal((1, 2, 6, 6)).astype(np.float32)
_K = np.random.default_rng(3).standard_normal((3, 2, 3, 3)).astype(np.float32)

# (expression, with x, w float32, xb bfloat16, img, k float32): PyTorch's result dtype decides.
_CASES = [
    # lower precision
    "lib.mm(x, w.T)", "x @ w.T", "x.matmul(w.T)", "x.mm(w.T)", "F.linear(x, w)", "F.linear(x, w, w[:, 0])",
    "lib.bmm(x[None], w.T[None])", "lib.addmm(x[:, :3], x, w.T)", "lib.baddbmm(x[None, :, :3], x[None], w.T[None])",
    "lib.addbmm(x[:, :3], x[None], w.T[None])", "F.conv2d(img, k)", "F.conv1d(img[:, :, 0], k[:, :, 0])",
    "F.conv_transpose2d(img, k.transpose(0, 1))", "F.prelu(x, lib.ones(1))",
    "F.scaled_dot_product_attention(x[None], x[None], x[None])", "lib.linalg.vecdot(x, x)",
    "lib.einsum('ij,kj->ik', x, w)", "lib.tensordot(x, w, ([1], [1]))", "lib.inner(x, w)", "xb @ w.T",
    "lib.nn.Linear(5, 3)(x)", "lib.nn.Conv2d(2, 3, 3)(img)", "x.half() @ w.T.half()",
    # float32
    "F.mse_loss(xb, xb)", "F.cross_entropy(xb, lib.tensor([0, 1, 2, 3]))", "F.nll_loss(xb, lib.tensor([0, 1, 2, 3]))",
    "xb.prod()", "F.l1_loss(xb, xb)", "F.binary_cross_entropy_with_logits(xb, xb)", "F.smooth_l1_loss(xb, xb)",
    "F.huber_loss(xb, xb)", "xb[:, :4].trace()", "F.binary_cross_entropy(xb.sigmoid(), xb.sigmoid())",
    "lib.nn.MSELoss()(xb, xb)",
    # promote
    "lib.cat([x, xb])", "lib.stack([x, xb])", "lib.cat([xb, xb])",
    # not listed: run in their inputs' dtype
    "F.softmax(xb, 1)", "F.log_softmax(xb, 1)", "F.layer_norm(xb, (5,))", "xb.sum()", "xb.exp()", "x.exp()",
    "x + xb", "F.gelu(xb)", "lib.dot(x[0], x[1])", "lib.mv(x, x[0])", "lib.outer(x[0], x[1])",
    "lib.ones(2, 2, dtype=lib.long) @ lib.ones(2, 2, dtype=lib.long)", "x.double() @ w.double().T",
]


def _run(lib: Any, expr: str, dtype: str) -> str:
    env = {"lib": lib, "F": lib.nn.functional, "x": lib.tensor(_X), "w": lib.tensor(_W),
           "xb": lib.tensor(_X).bfloat16(), "img": lib.tensor(_IMG), "k": lib.tensor(_K)}
    with lib.autocast("cpu", dtype=getattr(lib, dtype)):
        return str(eval(expr, env).dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("expr", _CASES)
def test_result_dtypes_follow_pytorchs_cpu_lists(torch: Any, expr: str, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = outcome(lambda: _run(torch, expr, dtype))
        assert outcome(lambda: _run(rg, expr, dtype)) == theirs  # (cat of bfloat16 under float16: an error)
        if theirs[0] == "ok":
            assert _run(rg, expr, dtype) == _run(torch, expr, dtype)


def test_values_and_gradients_of_a_training_step(torch: Any) -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    ours = rg.nn.Sequential(rg.nn.Linear(5, 8), rg.nn.ReLU(), rg.nn.Linear(8, 3))
    ours.load_state_dict({k: rg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    target = [0, 1, 2, 0]
    results = []
    for lib, model in ((rg, ours), (torch, theirs)):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            logits = model(lib.tensor(_X))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(target))
        loss.backward()
        results.append((logits, loss, [p.grad for p in model.parameters()]))
    (lo, so, go), (lp, sp, gp) = results
    assert str(lo.dtype) == str(lp.dtype) == "torch.bfloat16"
    assert str(so.dtype) == str(sp.dtype) == "torch.float32"
    assert np.allclose(lo.float().detach().numpy(), lp.float().detach().numpy(), rtol=2 ** -7, atol=2 ** -7)
    assert abs(so.item() - sp.item()) < 1e-2
    for a, b in zip(go, gp):
        assert str(a.dtype) == str(b.dtype) == "torch.float32"  # the cast's backward returns float32 to the leaf
        assert np.allclose(a.numpy(), b.numpy(), rtol=2 ** -6, atol=2 ** -6 * float(b.abs().max()))


def test_grad_fn_chain_of_a_cast_weight(torch: Any) -> None:
    names = []
    for lib in (rg, torch):
        layer = lib.nn.Linear(5, 3)
        with lib.autocast("cpu"):
            out = layer(lib.tensor(_X))
        names.append([out.grad_fn.name()] + [fn.name() if fn is not None else None
                                             for fn, _ in out.grad_fn.next_functions])
        names.append([fn.name() for fn, _ in out.grad_fn.next_functions[2][0].next_functions])
    assert names[:2] == names[2:]


def test_state_nesting_and_decorator(torch: Any) -> None:
    for lib in (rg, torch):
        seen = []
        assert lib.is_autocast_enabled("cpu") is False and lib.is_autocast_enabled() is False
        with lib.autocast("cpu"):
            seen.append((lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(), str(lib.get_autocast_dtype("cpu"))))
            with lib.autocast("cpu", enabled=False):
                seen.append((lib.is_autocast_enabled("cpu"), str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype)))
            with lib.autocast("cpu", dtype=lib.float16):
                seen.append(str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype))
                seen.append(str(lib.get_autocast_dtype("cpu")))
            seen.append(str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype))
        seen.append((lib.is_autocast_enabled("cpu"), str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype)))

        @lib.autocast("cpu", dtype=lib.bfloat16)
        def product(a: Any) -> Any:
            return a @ a

        seen.append((str(product(lib.ones(2, 2)).dtype), product.__name__, lib.is_autocast_enabled("cpu")))
        with lib.amp.autocast("cpu"):
            seen.append(str(lib.mm(lib.ones(1, 1), lib.ones(1, 1)).dtype))
        seen.append(lib.is_autocast_cache_enabled())
        if lib is rg:
            ours = seen
    assert ours == seen


def test_autocast_off_restores_the_originals() -> None:
    before = (rg.Tensor.__matmul__, rg.nn.functional.linear, rg.nn.Conv2d.__dict__["_conv"], rg.mm)
    with rg.autocast("cpu"):
        assert rg.Tensor.__matmul__ is not before[0]
        with rg.autocast("cpu"):
            pass
        assert rg.Tensor.__matmul__ is not before[0]  # (still inside the outer region)
    after = (rg.Tensor.__matmul__, rg.nn.functional.linear, rg.nn.Conv2d.__dict__["_conv"], rg.mm)
    assert after == before
    try:
        with rg.autocast("cpu"):
            raise KeyError("inside")
    except KeyError:
        pass
    assert rg.Tensor.__matmul__ is before[0] and not rg.is_autocast_enabled("cpu")


def test_weight_cache_reuses_one_cast_per_region() -> None:
    layer = rg.nn.Linear(5, 3)
    casts = []
    real_to = rg.Tensor.to

    def counting_to(self: Any, *args: Any, **kwargs: Any) -> Any:
        casts.append(self is layer.weight)
        return real_to(self, *args, **kwargs)

    rg.Tensor.to = counting_to  # type: ignore[method-assign]
    try:
        with rg.autocast("cpu"):
            layer(rg.tensor(_X))
            layer(rg.tensor(_X))
        with rg.autocast("cpu", cache_enabled=False):
            layer(rg.tensor(_X))
            layer(rg.tensor(_X))
    finally:
        rg.Tensor.to = real_to  # type: ignore[method-assign]
    assert casts.count(True) == 1 + 2


@pytest.mark.parametrize("args", [
    {"device_type": 1}, {"device_type": "foo"}, {"device_type": "cuda"},
    {"device_type": "cpu", "dtype": "float32"}, {"device_type": "cpu", "dtype": "float64"},
    {"device_type": "cpu", "dtype": "float16", "enabled": False},
])
def test_errors_and_warnings(torch: Any, args: dict[str, Any]) -> None:
    got = []
    for lib in (rg, torch):
        kwargs = dict(args)
        if "dtype" in kwargs:
            kwargs["dtype"] = getattr(lib, kwargs["dtype"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            def enter(lib: Any = lib, kwargs: dict[str, Any] = kwargs) -> None:
                with lib.autocast(**kwargs):
                    assert not lib.is_autocast_enabled("cpu")

            got.append((outcome(enter), [str(w.message) for w in caught if w.category is UserWarning]))
    assert got[0] == got[1]


def test_unsupported_device_type_is_refused() -> None:
    with pytest.raises(RuntimeError, match="retrograd runs on the CPU only"):
        rg.autocast("mps")


def test_set_autocast_dtype_is_the_default(torch: Any) -> None:
    seen = []
    for lib in (rg, torch):
        lib.set_autocast_dtype("cpu", lib.float16)
        try:
            with lib.autocast("cpu"):
                seen.append(str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype))
        finally:
            lib.set_autocast_dtype("cpu", lib.bfloat16)
        seen.append(str(lib.get_autocast_dtype("cpu")))
    assert seen[:2] == seen[2:] == ["torch.float16", "torch.bfloat16"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("expr", ["lib.cat([xb, xb.half()])", "lib.cat([xb.half(), x])", "lib.cat([x, xb.half()])",
                                  "lib.stack([x.double(), xb])", "lib.cat([x.double(), x.double()])"])
def test_promote_policy_and_its_error(torch: Any, expr: str, dtype: str) -> None:
    assert outcome(lambda: _run(rg, expr, dtype)) == outcome(lambda: _run(torch, expr, dtype))
    if outcome(lambda: _run(torch, expr, dtype))[0] == "ok":
        assert _run(rg, expr, dtype) == _run(torch, expr, dtype)


# -- GradScaler -------------------------------------------------------------------------------


def test_grad_scaler_matches_pytorch_through_overflows(torch: Any) -> None:
    # float32 weights, a loss that overflows on some steps (a huge input), growth every 3 clean
    # steps: the same parameters, scales and skipped steps as PyTorch's.
    inputs = [1.0, 2.0, 1e38, 0.5, 1.0, 3.0, float("inf"), 1.0, 2.0, 1.0, 1.0, 0.25]
    traces = []
    for lib in (rg, torch):
        w = lib.nn.Parameter(lib.tensor([0.5, -0.25, 2.0]))
        opt = lib.optim.SGD([w], lr=0.01, momentum=0.9)
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
        trace = []
        for x in inputs:
            opt.zero_grad()
            loss = (w * w * x).sum()
            scaler.scale(loss).backward()
            scaler.unscale_(opt) if x == 0.5 else None
            ret = scaler.step(opt)
            scaler.update()
            trace.append((ret, scaler.get_scale(), w.detach().tolist(), dict(scaler.state_dict())))
        traces.append(trace)
    assert traces[0] == traces[1]


@pytest.mark.parametrize("calls", ["unscale_ unscale_", "step unscale_", "step step", "closure", "update_tensor",
                                   "update_float"])
def test_grad_scaler_errors(torch: Any, calls: str) -> None:
    got = []
    for lib in (rg, torch):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(w.sum()).backward()

        def run(lib: Any = lib, opt: Any = opt, scaler: Any = scaler) -> None:
            if calls == "closure":
                scaler.step(opt, closure=lambda: 0)
            elif calls == "update_tensor":
                scaler.update(lib.ones(2))
            elif calls == "update_float":
                scaler.update(8.0)
                assert scaler.get_scale() == 8.0
            else:
                for name in calls.split():
                    getattr(scaler, name)(opt)

        got.append(outcome(run))
    assert got[0] == got[1]


def test_grad_scaler_disabled_on_cuda_with_pytorchs_warning(torch: Any) -> None:
    got = []
    for lib in (rg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = lib.amp.GradScaler()
        got.append((scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(), [str(w.message) for w in caught]))
    assert got[0] == got[1]
