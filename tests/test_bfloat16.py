"""bfloat16 (issue #12): retrograd.bfloat16 via ml_dtypes, held to PyTorch's values, dtypes and errors.

Values are compared bit for bit as bfloat16 where PyTorch computes the same way (one float32
operation rounded once: elementwise ufuncs, mul/div by a number, float32-accumulated reductions
and products); composites that PyTorch fuses into one kernel (sigmoid, gelu, silu, layer_norm,
the gradients of tanh and sigmoid...) are held to a few bfloat16 ulps, said per test.
"""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import retrograd as rg

pytest.importorskip("ml_dtypes")

_X = (np.random.default_rng(0).standard_normal((4, 5)) * 2).astype(np.float32)
_Y = (np.random.default_rng(1).random((4, 5)) + 0.5).astype(np.float32)


def _ulps(ours: Any, theirs: Any) -> int:
    """The largest difference in bfloat16 ulps between two bfloat16 tensors of the same dtype and
    shape (each element measured in the spacing of the larger magnitude; NaNs must agree)."""
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a = ours.detach().double().numpy()
    b = theirs.detach().double().numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    a, b = np.nan_to_num(a), np.nan_to_num(b)
    assert np.array_equal(np.isinf(a), np.isinf(b))
    big = np.maximum(np.abs(a), np.abs(b))
    spacing = np.exp2(np.floor(np.log2(np.maximum(big, 2.0**-126))) - 7)  # bfloat16 keeps 8 significant bits
    d = np.where(np.isinf(a), 0, np.abs(a - b) / spacing)
    return int(np.ceil(d.max())) if d.size else 0


def _ulps_of_largest(ours: Any, theirs: Any) -> int:
    """The largest difference in ulps of the tensor's largest magnitude: for sums that cancel."""
    a = ours.detach().double().numpy()
    b = theirs.detach().double().numpy()
    spacing = 2.0 ** (np.floor(np.log2(np.abs(b).max())) - 7)
    return int(np.ceil(np.abs(a - b).max() / spacing))


def _both(torch: Any, fn: Any, grad: bool = True) -> tuple[Any, Any]:
    """(ours, theirs): ``fn(lib, x, y)`` on the same bfloat16 inputs, with the inputs' gradients."""
    out = []
    for lib in (rg, torch):
        x = lib.tensor(_X, dtype=lib.bfloat16, requires_grad=grad)
        y = lib.tensor(_Y, dtype=lib.bfloat16, requires_grad=grad)
        o = fn(lib, x, y)
        if grad:
            o.sum().backward()
        out.append((o, x.grad, y.grad))
    return out[0], out[1]


def test_missing_ml_dtypes_is_one_line_at_use_not_at_import() -> None:
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import retrograd as rg\n"
            "assert 'ml_dtypes' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "try:\n    rg.bfloat16\nexcept ModuleNotFoundError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == 'bfloat16 needs the ml_dtypes package: pip install "retrograd[bfloat16]"\n'


def test_import_does_not_load_ml_dtypes() -> None:
    code = "import sys, retrograd\nprint('ml_dtypes' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_dtype_object(torch: Any) -> None:
    b = rg.bfloat16
    assert repr(b) == repr(torch.bfloat16) == "torch.bfloat16"
    assert (b.is_floating_point, b.is_signed, b.is_complex, b.itemsize) == (
        torch.bfloat16.is_floating_point, torch.bfloat16.is_signed, torch.bfloat16.is_complex, torch.bfloat16.itemsize)
    from retrograd._dtype import bfloat16  # the name pickling uses

    assert bfloat16 is b
    f, g = rg.finfo(b), torch.finfo(torch.bfloat16)
    assert repr(f) == repr(g)
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.resolution) == (g.bits, g.eps, g.max, g.min, g.tiny, g.resolution)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1.1, -2.3, 1e-3, 3e38], dtype=lib.bfloat16),
    lambda lib: lib.tensor([1.1, -2.3, 1e-3]).bfloat16(),
    lambda lib: lib.tensor([1.1, -2.3, 1e-3], dtype=lib.float64).to(lib.bfloat16),
    lambda lib: lib.tensor([[1, 2], [3, 4]]).to(dtype=lib.bfloat16),
    lambda lib: lib.ones(2, 3, dtype=lib.bfloat16),
    lambda lib: lib.zeros(2, dtype=lib.bfloat16) + 1e-40,
    lambda lib: lib.arange(5, dtype=lib.bfloat16) / 3,
])
def test_creation_and_printing(torch: Any, make: Any) -> None:
    ours, theirs = make(rg), make(torch)
    assert repr(ours) == repr(theirs)
    assert _ulps(ours, theirs) == 0
    assert ours.tolist() == theirs.tolist()


def test_numpy_is_an_ml_dtypes_array() -> None:
    import ml_dtypes

    a = rg.tensor([1.1, 2.0], dtype=rg.bfloat16).numpy()
    assert a.dtype == ml_dtypes.bfloat16
    back = rg.from_numpy(np.array([0.5, 3.3], dtype=ml_dtypes.bfloat16))
    assert back.dtype is rg.bfloat16


@pytest.mark.parametrize("pair", [
    ("bfloat16", "float16"), ("bfloat16", "float32"), ("bfloat16", "float64"), ("bfloat16", "int64"),
    ("bfloat16", "int8"), ("bfloat16", "bool"), ("bfloat16", "complex64"), ("uint8", "bfloat16"),
])
def test_promotion(torch: Any, pair: tuple[str, str]) -> None:
    for zero_dim in (False, True):
        made = []
        for lib in (rg, torch):
            a = lib.ones(2, dtype=getattr(lib, pair[0]))
            b = lib.ones(2, dtype=getattr(lib, pair[1]))
            b = b[0] if zero_dim else b
            made.append((a + b).dtype)
        assert str(made[0]) == str(made[1])
    assert str(rg.promote_types(getattr(rg, pair[0]), getattr(rg, pair[1]))) == str(
        torch.promote_types(getattr(torch, pair[0]), getattr(torch, pair[1])))


@pytest.mark.parametrize("number", [2, 2.5, True, 1j])
def test_promotion_with_numbers(torch: Any, number: Any) -> None:
    ours = rg.ones(2, dtype=rg.bfloat16) + number
    theirs = torch.ones(2, dtype=torch.bfloat16) + number
    assert str(ours.dtype) == str(theirs.dtype)


_UNARY = ["abs", "neg", "exp", "expm1", "sin", "cos", "tan", "sinh", "cosh", "asinh", "atan", "relu",
          "square", "sign", "floor", "ceil", "round", "trunc", "frac", "erf", "erfc", "tanh", "exp2"]
_UNARY_POSITIVE = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "lgamma", "digamma"]


@pytest.mark.parametrize("name", _UNARY + _UNARY_POSITIVE)
def test_unary_ops_round_once_as_pytorch(torch: Any, name: str) -> None:
    # Each is one float32 operation rounded to bfloat16: bit-equal forward. The backward is a
    # composite here and one fused kernel in PyTorch: within 4 ulps (tanh's 1 - y^2 rounds twice).
    (o, gx, gy), (p, hx, hy) = _both(torch, lambda lib, x, y: getattr(y if name in _UNARY_POSITIVE else x, name)())
    assert _ulps(o, p) == 0
    g, h = (gy, hy) if name in _UNARY_POSITIVE else (gx, hx)
    assert str(g.dtype) == "torch.bfloat16"
    assert _ulps(g, h) <= 4


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "fmod",
                                  "remainder", "hypot", "copysign"])
def test_binary_ops(torch: Any, name: str) -> None:
    (o, gx, gy), (p, hx, hy) = _both(torch, lambda lib, x, y: getattr(lib, name)(x, y))
    assert _ulps(o, p) == 0
    for g, h in ((gx, hx), (gy, hy)):
        assert (g is None) == (h is None)
        if g is not None:
            assert _ulps(g, h) <= 2  # (div's -g*x/y^2 rounds per op here)


@pytest.mark.parametrize("number", [3.3, 2, -0.7])
@pytest.mark.parametrize("form", ["x + s", "x - s", "x * s", "x / s", "s - x", "s + x", "s * x", "s / y", "y ** s",
                                  "x.clamp(min=s)"])
def test_ops_with_a_number(torch: Any, form: str, number: Any) -> None:
    # mul and div take the number in float32 (PyTorch's opmath), add and sub round it to bfloat16
    # first: both bit-equal.
    (o, gx, gy), (p, hx, hy) = _both(torch, lambda lib, x, y: eval(form, {"x": x, "y": y, "s": number}))
    assert _ulps(o, p) == 0
    assert str(o.dtype) == "torch.bfloat16"
    for g, h in ((gx, hx), (gy, hy)):
        if h is not None:
            assert _ulps(g, h) <= 1


@pytest.mark.parametrize("form", [
    "x.sum()", "x.sum(0)", "x.sum(1, keepdim=True)", "x.mean()", "x.mean(0)", "x.prod(1)", "x.norm()",
    "x.norm(dim=0)", "x.var()", "x.var(0)", "x.std(1)", "x.logsumexp(1)", "x.logsumexp(0)", "x.amax(0)",
    "x.cumsum(1)", "x.cumsum(0)", "x.cumprod(1)", "x.softmax(1)", "x.log_softmax(0)", "x.logcumsumexp(1)",
    "x.nansum(0)",
])
def test_reductions_accumulate_in_float32(torch: Any, form: str) -> None:
    # PyTorch's opmath: float32 accumulation, one rounding: bit-equal values.
    (o, gx, _), (p, hx, _) = _both(torch, lambda lib, x, y: eval(form, {"x": x}))
    assert _ulps(o, p) == 0
    assert _ulps(gx, hx) <= 2


def test_long_sum_is_not_accumulated_in_bfloat16(torch: Any) -> None:
    # 4096 ones: a bfloat16 accumulator would stop at 256.
    ours = rg.ones(4096, 3, dtype=rg.bfloat16).sum(0)
    theirs = torch.ones(4096, 3, dtype=torch.bfloat16).sum(0)
    assert _ulps(ours, theirs) == 0
    assert ours.tolist() == [4096.0] * 3
    assert rg.ones(4096, dtype=rg.bfloat16).mean().item() == 1.0


@pytest.mark.parametrize("form", [
    "x @ y.T", "x[0] @ y[0]", "x @ y[0]", "x[None].expand(3, 4, 5) @ y.T[None]",
    "lib.nn.functional.linear(x, y, y[:, 0])", "lib.addmm(x[:, :4], x, y.T)", "lib.mm(x, y.T)",
])
def test_products_accumulate_in_float32(torch: Any, form: str) -> None:
    (o, gx, gy), (p, hx, hy) = _both(torch, lambda lib, x, y: eval(form, {"x": x, "y": y, "lib": lib}))
    assert str(o.dtype) == "torch.bfloat16"
    assert _ulps(o, p) <= 1  # (summation order: PyTorch's blocked kernel versus one float32 dot)
    assert _ulps(gx, hx) <= 1 and _ulps(gy, hy) <= 1


@pytest.mark.parametrize("form", [
    "lib.sigmoid(x)", "lib.nn.functional.gelu(x)", "lib.nn.functional.silu(x)",
    "lib.nn.functional.layer_norm(x, (5,))", "lib.nn.functional.mse_loss(x, y)",
    "lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 3]))",
])
def test_composites_within_a_few_ulps(torch: Any, form: str) -> None:
    # PyTorch runs each as one fused float32 kernel; here they are compositions rounding per op:
    # forward within 2 bfloat16 ulps.
    (o, _, _), (p, _, _) = _both(torch, lambda lib, x, y: eval(form, {"x": x, "y": y, "lib": lib}))
    assert str(o.dtype) == str(p.dtype) == "torch.bfloat16"
    assert _ulps(o, p) <= 2


def test_mixed_precision_mm_error(torch: Any) -> None:
    from tests.conftest import outcome

    for form in ("lib.mm(a, b)", "lib.mm(b, a)", "lib.dot(a[0], b[0])"):
        got = [outcome(lambda lib=lib: eval(form, {"lib": lib, "a": lib.ones(2, 2, dtype=lib.bfloat16),
                                                    "b": lib.ones(2, 2)})) for lib in (rg, torch)]
        assert got[0] == got[1]


def test_gradients_are_bfloat16_and_match(torch: Any) -> None:
    (o, gx, gy), (p, hx, hy) = _both(torch, lambda lib, x, y: (x * y).exp().sum())
    assert str(gx.dtype) == str(gy.dtype) == "torch.bfloat16"
    assert o.grad_fn.name() == p.grad_fn.name()
    assert _ulps(gx, hx) <= 1 and _ulps(gy, hy) <= 1


def test_module_to_bfloat16(torch: Any) -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    ours = rg.nn.Sequential(rg.nn.Linear(5, 3), rg.nn.Tanh(), rg.nn.Linear(3, 2))
    ours.load_state_dict({k: rg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    theirs.bfloat16()
    ours.to(rg.bfloat16)
    assert all(p.dtype is rg.bfloat16 for p in ours.parameters())
    x = _X[:, :5]
    o = ours(rg.tensor(x, dtype=rg.bfloat16))
    p = theirs(torch.tensor(x, dtype=torch.bfloat16))
    assert _ulps(o, p) <= 1
    o.sum().backward()
    p.sum().backward()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert str(a.grad.dtype) == "torch.bfloat16"
        assert _ulps_of_largest(a.grad, b.grad) <= 2  # (the batch sums cancel: measured on the scale)
    assert rg.nn.Linear(2, 2).bfloat16().weight.dtype is rg.bfloat16


def test_torch_zip_round_trip(torch: Any) -> None:
    t = torch.randn(3, 4).bfloat16()
    buf = io.BytesIO()
    torch.save({"w": t, "p": torch.nn.Parameter(t.clone())}, buf)
    buf.seek(0)
    loaded = rg.load(buf)
    assert loaded["w"].dtype is rg.bfloat16 and _ulps(loaded["w"], t) == 0
    assert loaded["p"].requires_grad
    back = io.BytesIO()
    rg.save(loaded, back)
    back.seek(0)
    again = torch.load(back)
    assert again["w"].dtype == torch.bfloat16 and torch.equal(again["w"], t)
    assert isinstance(again["p"], torch.nn.Parameter)


def test_safetensors_round_trip(torch: Any) -> None:
    st = pytest.importorskip("safetensors.torch")
    from retrograd.utils import safetensors

    t = torch.randn(3, 4).bfloat16()
    data = st.save({"w": t, "h": t.half(), "f": t.float()})
    loaded = safetensors.load(data)
    assert loaded["w"].dtype is rg.bfloat16 and _ulps(loaded["w"], t) == 0
    assert safetensors.save(loaded) == data  # the same bytes as the reference writer
    assert torch.equal(st.load(safetensors.save({"w": loaded["w"]}))["w"], t)


# -- Tensor.view(dtype) -----------------------------------------------------------------------
_VIEWS = {
    "same size": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).view(t.int32),
    "same size, transposed": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).t().view(t.int32),
    "same size, 0-d": lambda t: t.arange(12, dtype=t.float32)[3].view(t.int32),
    "smaller": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).view(t.uint8),
    "smaller, bool": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).view(t.bool),
    "larger": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).view(t.float64),
    "larger, empty": lambda t: t.ones(0, 4).view(t.float64),
    "a column": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4)[:, 1:2].view(t.float16),
    "float as bfloat16": lambda t: t.tensor([1.5, -2.0, 1e30]).view(t.bfloat16),
    "bfloat16 as int16": lambda t: t.tensor([1.5, -2.0], dtype=t.bfloat16).view(t.int16),
    "bfloat16 as float16": lambda t: t.tensor([1.5, -2.0], dtype=t.bfloat16).view(t.float16),
    "complex as float": lambda t: t.ones(2, 2, dtype=t.complex64).view(t.float32),
    "float as complex": lambda t: t.arange(8.0).reshape(2, 4).view(t.complex64),
    "keyword": lambda t: t.ones(2, 4).view(dtype=t.int32),
    "of a tensor requiring grad": lambda t: t.ones(2, 4, requires_grad=True).view(t.float16),
    # PyTorch's errors
    "transposed, smaller": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).t().view(t.float16),
    "last size not divisible": lambda t: t.arange(12, dtype=t.float32).reshape(3, 4)[:, :3].view(t.float64),
    "offset not divisible": lambda t: t.arange(12, dtype=t.float32).view(-1)[1:5].view(t.float64),
    "0-d, other size": lambda t: t.arange(12, dtype=t.float32)[0].view(t.float16),
    "stride(-1) not 1, larger": lambda t: t.arange(24, dtype=t.float16).reshape(3, 8)[:, ::2].view(t.float32),
    "stride(0) not divisible": lambda t: t.arange(27, dtype=t.float16).reshape(3, 9)[:, :4].view(t.float32),
    "a size too": lambda t: t.ones(2).view(t.float16, 3),
}


def _view_result(lib: Any, make: Any) -> Any:
    from tests.conftest import outcome

    box: list[Any] = []
    got = outcome(lambda: box.append(make(lib)))
    if got[0] != "ok":
        return got
    r = box[0]
    return (str(r.dtype), tuple(r.shape), r.tolist(), r.requires_grad, r.grad_fn is None, r.is_leaf)


@pytest.mark.parametrize("case", list(_VIEWS))
def test_view_dtype(torch: Any, case: str) -> None:
    assert _view_result(rg, _VIEWS[case]) == _view_result(torch, _VIEWS[case])


def test_view_dtype_shares_memory_and_version(torch: Any) -> None:
    seen = []
    for lib in (rg, torch):
        a = lib.arange(12, dtype=lib.float32).reshape(3, 4)
        y = a.view(lib.int32)
        y[0, 1] = 1
        h = a.view(lib.bfloat16)
        h.mul_(2)
        seen.append((a.tolist(), a._version, y._version, h._version))
    assert seen[0] == seen[1]
