"""Complex tensors against PyTorch: dtypes, creation, printing, promotion, the views between a
complex tensor and its real parts, and gradients in PyTorch's conjugate Wirtinger convention
(``.grad`` after ``backward()`` of a real loss, and gradcheck on complex inputs)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

Z = [1 + 2j, -3 + 0.5j, 0.3j, -0.7 - 1.1j]
X = [0.5, 1.5, -2.0, 0.25]


def test_complex_dtypes_and_their_properties(torch: Any) -> None:
    for name in ("complex64", "complex128", "cfloat", "cdouble"):
        ours, theirs = getattr(rg, name), getattr(torch, name)
        assert repr(ours) == repr(theirs)
        assert (ours.is_complex, ours.is_floating_point, ours.is_signed, ours.itemsize) == (
            theirs.is_complex, theirs.is_floating_point, theirs.is_signed, theirs.itemsize)
    assert not rg.float32.is_complex


def test_creation_infers_the_default_complex_dtype(torch: Any) -> None:
    for data in ([1 + 2j], [1, 2j, 3.5], 1j, [[1, 2], [3j, True]], [np.complex128(1j)]):
        assert repr(rg.tensor(data).dtype) == repr(torch.tensor(data).dtype)
    rg.set_default_dtype(rg.float64)
    try:
        assert rg.tensor([1j]).dtype == rg.complex128
    finally:
        rg.set_default_dtype(rg.float32)
    t = rg.tensor([1, 2])
    assert t.cfloat().dtype == rg.complex64 and t.cdouble().dtype == rg.complex128
    assert rg.tensor([1j]).is_complex() and rg.is_complex(rg.tensor([1j])) and not rg.tensor([1.]).is_complex()
    assert not rg.tensor([1j]).is_floating_point()


@pytest.mark.parametrize("data", [[1 + 2j], [1.5 - 2.25j, 3, 1e-5j], 1j, [1e10 + 1j], [[1 + 2j, 3 - 4j]], [0j, 0j],
                                  [float("nan") + 1j, float("inf") - 2j], [1.123456 + 2j, -3 - 0.5j],
                                  [complex(k, -k) for k in range(2000)]])
def test_printing_as_pytorch(torch: Any, data: Any) -> None:
    for dt in ("complex64", "complex128"):
        for requires_grad in (False, True):
            ours = rg.tensor(data, dtype=getattr(rg, dt), requires_grad=requires_grad)
            theirs = torch.tensor(data, dtype=getattr(torch, dt), requires_grad=requires_grad)
            assert repr(ours) == repr(theirs)
    assert repr(rg.zeros(0, dtype=rg.complex64)) == repr(torch.zeros(0, dtype=torch.complex64))


def test_promotion_with_complex(torch: Any) -> None:
    def cases(lib: Any) -> list[Any]:
        f64, f32, i64 = (lib.ones(2, dtype=getattr(lib, d)) for d in ("float64", "float32", "int64"))
        c64 = lib.ones(2, dtype=lib.complex64)
        return [f32 + 1j, f64 + 1j, i64 + 1j, 1j * i64, c64 + f64, c64 + lib.tensor(1., dtype=lib.float64),
                f64 + lib.tensor(1j, dtype=lib.complex64), c64 * 2, c64 / 2, 2 - c64, c64 ** 2, c64 + True,
                lib.ones((), dtype=lib.float64) + 1j, lib.tensor(True) * 1j]
    for ours, theirs in zip(cases(rg), cases(torch)):
        assert repr(ours.dtype) == repr(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_real_imag_are_views_written_through(torch: Any) -> None:
    for lib in (rg, torch):
        z = lib.tensor([1 + 2j, 3 - 4j])
        z.real.mul_(10)
        z.imag[1] = 7
        z.real = lib.tensor([5., 6.])
        assert z.tolist() == [5 + 2j, 6 + 7j]
    x = rg.tensor([1., 2.])
    assert x.real is x
    assert outcome(lambda: rg.tensor([1.]).imag) == outcome(lambda: torch.tensor([1.]).imag)


def test_view_as_real_and_view_as_complex_share_memory(torch: Any) -> None:
    z = rg.tensor([1 + 2j, 3 - 4j])
    r = rg.view_as_real(z)
    assert r.dtype == rg.float32 and r.shape == (2, 2)
    r[0, 1] = 9
    assert z.tolist() == [1 + 9j, 3 - 4j]
    x = rg.randn(4, 2)
    c = rg.view_as_complex(x)
    c.mul_(2)
    assert np.shares_memory(c.numpy(), x.numpy())
    strided = rg.view_as_complex(rg.randn(4, 2)[::2])
    assert strided.shape == (2,)

    def errors(lib: Any) -> list[Any]:
        return [outcome(f) for f in (
            lambda: lib.view_as_complex(lib.ones(2, 3)), lambda: lib.view_as_complex(lib.ones(3, 2).t()),
            lambda: lib.view_as_complex(lib.ones(2, 2, dtype=lib.int64)), lambda: lib.view_as_real(lib.ones(2)),
            lambda: lib.view_as_complex(lib.ones(2, 4)[:, 1:3]), lambda: lib.view_as_complex(lib.ones(5, 2)[1:]),
            lambda: lib.view_as_complex(lib.ones(())),
            lambda: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)),
            lambda: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
            lambda: lib.polar(lib.ones(2), lib.ones(2, dtype=lib.float64)))]
    assert errors(rg) == errors(torch)


def test_conj_is_materialised_and_consistent(torch: Any) -> None:
    z = rg.tensor([1 + 2j])
    c = z.conj()
    assert c.tolist() == [1 - 2j] and not c.is_conj() and c.resolve_conj() is c
    x = rg.tensor([1.])
    assert x.conj() is x and x.conj_physical() is x and rg.conj(x) is x and not rg.is_neg(x)
    y = rg.tensor([1 + 1j, 2 - 1j])
    assert rg.conj_physical_(y) is y and y.tolist() == [1 - 1j, 2 + 1j]


def _grad_of(lib: Any, fn: Any, *values: Any) -> list[Any]:
    leaves = [lib.tensor(v, dtype=lib.complex128 if isinstance(v[0], complex) else lib.float64, requires_grad=True)
              for v in values]
    out = fn(lib, *leaves)
    out.backward()
    return [(type(out.grad_fn).__name__, leaf.grad.numpy()) for leaf in leaves]


LOSSES = {
    "abs_of_product": lambda lib, z, x: (z * z * x).abs().sum(),
    "real_imag": lambda lib, z, x: (z.real * 3 + z.imag * x).sum(),
    "exp_div": lambda lib, z, x: (z.exp() / (z + x)).abs().sum(),
    "log_sqrt": lambda lib, z, x: (z.sqrt().log() * x).imag.sum(),
    "trig": lambda lib, z, x: (z.sin() * z.cos().tanh() * x).real.sum(),
    "sigmoid": lambda lib, z, x: (z.sigmoid() * x).abs().sum(),
    "pow_neg_sub": lambda lib, z, x: (-(z ** 3) - 2j * z + x ** 2).abs().sum(),
    "reciprocal": lambda lib, z, x: (z.reciprocal() * x).real.sum(),
    "view_as_real": lambda lib, z, x: (lib.view_as_real(z * x) ** 2).sum(),
    "view_as_complex": lambda lib, z, x: lib.view_as_complex(lib.stack([x, x * x], -1)).mul(z).abs().sum(),
    "conj": lambda lib, z, x: (z.conj() * z * 1j).real.sum() + (z.conj_physical() * x).imag.sum(),
    "complex_polar": lambda lib, z, x: (lib.complex(x, x.exp()) * lib.polar(x.abs() + 1, x) * z).abs().sum(),
    "shapes": lambda lib, z, x: (lib.cat([z.reshape(2, 2).t(), z[1:3].reshape(1, 2)]) * 1j).sum().imag
    + lib.stack([z, z * x]).mean(0).abs().sum(),
    "real_to_complex_cast": lambda lib, z, x: (x.to(lib.complex128) * z).imag.sum(),
    "matmul_mm_bmm": lambda lib, z, x: (z.reshape(2, 2) @ (z.reshape(2, 2).t() * x.reshape(2, 2))).abs().sum()
    + lib.bmm(z.reshape(1, 2, 2), z.reshape(1, 2, 2) * 1j).real.sum() + (z.reshape(2, 2).mv(z[:2]) * x[:2]).abs().sum()
    + lib.dot(z, z * x).imag,
    "linear": lambda lib, z, x: lib.nn.functional.linear(x.reshape(2, 2).to(lib.complex128), z.reshape(2, 2), z[:2])
    .abs().sum() + lib.nn.functional.linear(x.to(lib.complex128), z.reshape(1, 4)).abs().sum(),
    "prod_with_a_zero": lambda lib, z, x: (lib.cat([z[:2], z[2:] * 0]).reshape(2, 2).prod(1) * x[:2]).abs().sum()
    + lib.cat([z[:3], z[3:] * 0]).prod().imag,
    "prod": lambda lib, z, x: (z.prod() * x).abs().sum() + (z.reshape(2, 2) * x.reshape(2, 2)).prod(1).real.sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_grad_of_a_real_loss_matches_pytorch(torch: Any, name: str) -> None:
    ours = _grad_of(rg, LOSSES[name], Z, X)
    theirs = _grad_of(torch, LOSSES[name], Z, X)
    for (our_fn, our_grad), (their_fn, their_grad) in zip(ours, theirs):
        assert our_fn == their_fn
        assert our_grad.dtype == their_grad.dtype
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradcheck_on_complex_inputs(name: str) -> None:
    z = rg.tensor(Z, dtype=rg.complex128, requires_grad=True)
    x = rg.tensor(X, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda z, x: LOSSES[name](rg, z, x), (z, x))
    assert rg.autograd.gradcheck(lambda z, x: LOSSES[name](rg, z, x), (z, x), fast_mode=True)


def test_gradcheck_checks_complex_outputs_and_catches_a_missing_conjugate() -> None:
    z = rg.tensor(Z, dtype=rg.complex128, requires_grad=True)
    assert rg.autograd.gradcheck(lambda z: z * z.exp(), (z,))

    class Scale(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * (2 + 1j)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * (2 + 1j)  # should be the conjugate, 2 - 1j

    for fast in (False, True):
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            rg.autograd.gradcheck(Scale.apply, (z,), fast_mode=fast)


def test_to_real_discards_the_imaginary_part_with_pytorchs_warning(torch: Any) -> None:
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        assert rg.tensor([1 + 2j]).to(rg.float32).tolist() == [1.0]


def test_save_and_load_with_pytorch(torch: Any, tmp_path: Any) -> None:
    theirs = {"a": torch.tensor([1 + 2j]), "b": torch.tensor([[1j, 2]], dtype=torch.cdouble)}
    torch.save(theirs, tmp_path / "t.pt")
    ours = rg.load(tmp_path / "t.pt")
    assert [(repr(v.dtype), v.tolist()) for v in ours.values()] == [(repr(v.dtype), v.tolist()) for v in theirs.values()]
    rg.save(ours, tmp_path / "r.pt")
    back = torch.load(tmp_path / "r.pt")
    assert [(repr(v.dtype), v.tolist()) for v in back.values()] == [(repr(v.dtype), v.tolist()) for v in theirs.values()]


def test_python_number_conversions(torch: Any) -> None:
    for lib in (rg, torch):
        t = lib.tensor([1 + 2j])
        assert complex(t) == t.item() == 1 + 2j and t.tolist() == [1 + 2j]
    assert outcome(lambda: float(rg.tensor([1j]))) == outcome(lambda: float(torch.tensor([1j])))
