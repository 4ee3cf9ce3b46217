"""Complex inputs through the rest of the op table (issue #8), compared with real PyTorch: the
activations, losses and reductions PyTorch has no complex kernel for raise its own error (NumPy
would compare or exponentiate complex values and return a result), and the ops PyTorch does run on
complex numbers give its values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg


def _outcome(fn: Any) -> str:
    """``fn()``'s error (type and message), or its dtype and values rounded to 4 decimals."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
        return f"{type(e).__name__}: {e}"
    values = np.round(np.asarray(result.detach().numpy()).astype(complex), 4).tolist()
    return f"ok {str(result.dtype).split('.')[-1]} {values}"


# Each called on complex ``z``, ``w`` (2x2) of the parametrized dtype, with the library ``L`` and
# its functional module ``F``.
_CASES: dict[str, Any] = {
    "elu": lambda L, F, z, w: F.elu(z), "elu_": lambda L, F, z, w: F.elu(z.clone(), inplace=True),
    "celu": lambda L, F, z, w: L.celu(z), "selu": lambda L, F, z, w: F.selu(z),
    "leaky_relu": lambda L, F, z, w: F.leaky_relu(z), "leaky_relu_": lambda L, F, z, w: F.leaky_relu_(z.clone()),
    "rrelu": lambda L, F, z, w: F.rrelu(z), "rrelu_training": lambda L, F, z, w: F.rrelu(z, training=True),
    "torch_rrelu": lambda L, F, z, w: L.rrelu(z),
    "threshold": lambda L, F, z, w: F.threshold(z, 0.5, 0.0), "threshold_": lambda L, F, z, w: L.threshold_(z.clone(), 0.5, 0.0),
    "hardshrink": lambda L, F, z, w: z.hardshrink(), "softshrink": lambda L, F, z, w: F.softshrink(z),
    "softshrink_negative": lambda L, F, z, w: F.softshrink(z, -1.0),
    "hardtanh": lambda L, F, z, w: F.hardtanh(z), "hardtanh_": lambda L, F, z, w: F.hardtanh_(z.clone()),
    "relu6": lambda L, F, z, w: F.relu6(z), "relu6_": lambda L, F, z, w: F.relu6(z.clone(), inplace=True),
    "hardsigmoid": lambda L, F, z, w: F.hardsigmoid(z), "hardswish": lambda L, F, z, w: F.hardswish(z),
    "logsigmoid": lambda L, F, z, w: F.logsigmoid(z), "softplus": lambda L, F, z, w: F.softplus(z),
    "mish": lambda L, F, z, w: F.mish(z), "gelu": lambda L, F, z, w: F.gelu(z),
    "gelu_tanh": lambda L, F, z, w: F.gelu(z, approximate="tanh"), "silu": lambda L, F, z, w: F.silu(z),
    "glu": lambda L, F, z, w: F.glu(z), "glu_odd": lambda L, F, z, w: F.glu(z[:, :1]),
    "prelu": lambda L, F, z, w: F.prelu(z, L.tensor([0.25], dtype=z.dtype)),
    "softmax": lambda L, F, z, w: F.softmax(z, 1), "softmax_dim0": lambda L, F, z, w: z.softmax(0),
    "log_softmax": lambda L, F, z, w: F.log_softmax(z, 1), "softmin": lambda L, F, z, w: F.softmin(z, 1),
    "mse_loss": lambda L, F, z, w: F.mse_loss(z, w), "mse_loss_real_input": lambda L, F, z, w: F.mse_loss(z.real, w),
    "smooth_l1_loss": lambda L, F, z, w: F.smooth_l1_loss(z, w), "huber_loss": lambda L, F, z, w: F.huber_loss(z, w),
    "kl_div": lambda L, F, z, w: F.kl_div(z, w, reduction="sum"),
    "kl_div_log_target": lambda L, F, z, w: F.kl_div(z, w, reduction="sum", log_target=True),
    "kl_div_real_target": lambda L, F, z, w: F.kl_div(z, w.real, reduction="sum"),
    "binary_cross_entropy": lambda L, F, z, w: F.binary_cross_entropy(z, w),
    "bce_with_logits": lambda L, F, z, w: F.binary_cross_entropy_with_logits(z, w),
    "bce_with_logits_real_input": lambda L, F, z, w: F.binary_cross_entropy_with_logits(z.real, w),
    "multilabel_soft_margin_loss": lambda L, F, z, w: F.multilabel_soft_margin_loss(z, w),
    "cross_entropy": lambda L, F, z, w: F.cross_entropy(z, L.tensor([0, 1])),
    "nll_loss": lambda L, F, z, w: F.nll_loss(z, L.tensor([0, 1])),
    "multi_margin_loss": lambda L, F, z, w: F.multi_margin_loss(z, L.tensor([0, 1])),
    "soft_margin_loss": lambda L, F, z, w: F.soft_margin_loss(z, w),
    "soft_margin_loss_none": lambda L, F, z, w: F.soft_margin_loss(z, w.real, reduction="none"),
    "soft_margin_loss_real_input": lambda L, F, z, w: F.soft_margin_loss(z.real, w),
    "soft_margin_loss_grad": lambda L, F, z, w: F.soft_margin_loss(z.requires_grad_(), w),
    "cosine_similarity": lambda L, F, z, w: F.cosine_similarity(z, w),
    "cosine_similarity_mixed": lambda L, F, z, w: F.cosine_similarity(z.real, w),
    "pdist": lambda L, F, z, w: F.pdist(z),
    "local_response_norm_3d": lambda L, F, z, w: F.local_response_norm(z[None], 2),
    "local_response_norm_4d": lambda L, F, z, w: F.local_response_norm(z[None, None], 2),
    "dropout": lambda L, F, z, w: F.dropout(z), "dropout_p1": lambda L, F, z, w: F.dropout(z, 1.0),
    "dropout2d": lambda L, F, z, w: F.dropout2d(z[None]),
    "alpha_dropout": lambda L, F, z, w: F.alpha_dropout(z, training=True),
    "alpha_dropout_p1": lambda L, F, z, w: F.alpha_dropout(z, 1.0, training=True),
    "nansum": lambda L, F, z, w: L.nansum(z), "nansum_dim": lambda L, F, z, w: z.nansum(0),
    "nansum_into_complex": lambda L, F, z, w: L.nansum(z.real, dtype=z.dtype),
    "nanmean": lambda L, F, z, w: L.nanmean(z), "nanmean_dim": lambda L, F, z, w: z.nanmean(1),
    "isin": lambda L, F, z, w: L.isin(z, w), "isin_real_elements": lambda L, F, z, w: L.isin(z.real, w),
    "isin_number": lambda L, F, z, w: L.isin(z.real, 1j), "isin_number_elements": lambda L, F, z, w: L.isin(1j, w.real),
    "abs_": lambda L, F, z, w: z.clone().abs_(), "absolute_": lambda L, F, z, w: z.clone().absolute_(),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # (kl_div's 'mean', softmax's implicit dim...)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_complex_inputs_behave_as_in_pytorch(torch: Any, name: str, dtype: str) -> None:
    def outcome(lib: Any) -> str:
        z = lib.tensor([[1.5 + 2j, -3 - 1j], [0j, 0.5 - 0.5j]], dtype=getattr(lib, dtype))
        w = lib.tensor([[0.5 + 1j, 2 + 0j], [-1j, 1 + 1j]], dtype=getattr(lib, dtype))
        return _outcome(lambda: _CASES[name](lib, lib.nn.functional, z, w))

    assert outcome(rg) == outcome(torch)


# -- ops PyTorch runs on complex numbers: values and gradients -------------------------------
_INF, _NAN = float("inf"), float("nan")
# Special values pairwise: infinite and NaN parts, huge real parts either side, zero.
_SPECIAL = [complex(_INF, 1), complex(-_INF, 2), complex(_NAN, 0), complex(0, _NAN), 1 + 1j, complex(_INF, 0),
            complex(-_INF, 0), -1e30 + 1j, 1e30 - 1j, 0j, 2.5 - 3j]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logaddexp_of_complex_values_is_pytorchs(torch: Any, dtype: str) -> None:
    def run(lib: Any) -> np.ndarray:
        a = lib.tensor([x for x in _SPECIAL for _ in _SPECIAL], dtype=getattr(lib, dtype))
        b = lib.tensor([y for _ in _SPECIAL for y in _SPECIAL], dtype=getattr(lib, dtype))
        out = lib.logaddexp(a, b)
        assert str(out.dtype).split(".")[-1] == dtype
        return np.asarray(out.numpy())

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-6, equal_nan=True)


_HOLOMORPHIC: dict[str, Any] = {
    "logaddexp": (lambda L, a, b, c: L.logaddexp(a, b)),
    "logaddexp_method": (lambda L, a, b, c: a.logaddexp(b)),
    "lerp_scalar": (lambda L, a, b, c: L.lerp(a, b, 0.3)),
    "lerp_scalar_far": (lambda L, a, b, c: L.lerp(a, b, 0.8)),
    "lerp_complex_weight": (lambda L, a, b, c: L.lerp(a, b, 0.3 + 0.4j)),
    "lerp_tensor": (lambda L, a, b, c: L.lerp(a, b, c)),
    "lerp_method": (lambda L, a, b, c: a.lerp(b, c * 0.5)),
}


@pytest.mark.parametrize("name", sorted(_HOLOMORPHIC))
def test_complex_results_and_gradients_match_pytorch(torch: Any, name: str) -> None:
    rng = np.random.default_rng(7)
    values = [rng.normal(size=4) + 1j * rng.normal(size=4) for _ in range(3)]
    upstream = rng.normal(size=4) + 1j * rng.normal(size=4)

    def run(lib: Any) -> list[np.ndarray]:
        xs = [lib.tensor(v, dtype=lib.complex128, requires_grad=True) for v in values]
        out = _HOLOMORPHIC[name](lib, *xs)
        grads = lib.autograd.grad(out, xs, lib.tensor(upstream), allow_unused=True)
        return [np.asarray(out.detach().numpy())] + [np.zeros(4) if g is None else g.numpy() for g in grads]

    for ours, theirs in zip(run(rg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(_HOLOMORPHIC))
def test_complex_gradients_pass_gradcheck(name: str) -> None:
    rng = np.random.default_rng(3)
    xs = [rg.tensor(rng.normal(size=3) + 1j * rng.normal(size=3), dtype=rg.complex128, requires_grad=True)
          for _ in range(3)]

    def fn(a: Any, b: Any, c: Any) -> Any:
        return _HOLOMORPHIC[name](rg, a, b, c)

    assert rg.autograd.gradcheck(fn, xs)
    assert rg.autograd.gradgradcheck(fn, xs)


_LERP_DTYPES: dict[str, Any] = {
    "complex_weight_real_tensors": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]), 0.3 + 0.1j),
    "complex_weight_without_imaginary": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]), 0.3 + 0j),
    "complex_end": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([1j, 2 + 0j]), 0.3),
    "real_weight_tensor": lambda L: L.lerp(L.tensor([1j, 2 + 0j]), L.tensor([1j, 2 + 0j]), L.tensor([0.3, 0.7])),
    "in_place": lambda L: L.tensor([1j, 2 + 0j]).lerp_(L.tensor([3j, 1 + 0j]), 0.6),
}


@pytest.mark.parametrize("name", sorted(_LERP_DTYPES))
def test_lerp_mixing_complex_and_real_is_pytorchs(torch: Any, name: str) -> None:
    assert _outcome(lambda: _LERP_DTYPES[name](rg)) == _outcome(lambda: _LERP_DTYPES[name](torch))


# -- torch.cross's out= ------------------------------------------------------------------------
def _cross_out_cases(lib: Any) -> list[Any]:
    a = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    b = lib.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]])
    z = a.to(lib.complex64) * 1j
    return [
        lambda: lib.cross(a, b, dim=1, out=lib.empty(2, 3)),
        lambda: lib.cross(a, b, 1, out=lib.empty(0)),
        lambda: lib.cross(a, b, dim=1, out=lib.empty(3, 2).t()),
        lambda: lib.cross(a, b, dim=0, out=lib.empty(2, 3)),
        lambda: lib.cross(a, b, dim=1, out=lib.empty(2, 3, dtype=lib.float64)),
        lambda: lib.cross(a.clone().requires_grad_(), b, dim=1, out=lib.empty(2, 3)),
        lambda: lib.cross(a, b, dim=1, out=lib.empty(2, 3, requires_grad=True)),
        lambda: lib.cross(a, b, out=lib.empty(2, 3)),  # (no dim: the first of size 3, and no warning)
        lambda: lib.cross(a, b, dim=1, out=3),
        lambda: lib.cross(a, b),  # (no dim, no out: PyTorch's deprecation warning)
        lambda: lib.cross(z, b.to(lib.complex64), dim=1, out=lib.empty(2, 3, dtype=lib.complex64)),
    ]


def test_cross_writes_out_as_pytorch(torch: Any) -> None:
    import warnings

    def run(lib: Any) -> list[Any]:
        results: list[Any] = []
        for case in _cross_out_cases(lib):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results.append(_outcome(case))
            results.append([str(w.message).split(" (Triggered")[0] for w in caught])
        out = lib.empty(2, 3)
        result = lib.cross(lib.ones(2, 3), lib.tensor([[0.0, 1.0, 0.0]] * 2), dim=1, out=out)
        results.append((result is out, out.tolist()))
        return results

    assert run(rg) == run(torch)


# -- angle and isreal of complex tensors --------------------------------------------------------
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_angle_and_isreal_of_complex_tensors_are_pytorchs(torch: Any, dtype: str) -> None:
    def run(lib: Any) -> list[Any]:
        z = lib.tensor([1.5 + 2j, -3 - 1j, 0j, 2 + 0j, -2 + 0j, complex(float("nan"), 1), 0.25j],
                       dtype=getattr(lib, dtype))
        return [_outcome(lambda: lib.angle(z)), _outcome(lambda: z.angle()), _outcome(lambda: lib.isreal(z))]

    assert repr(run(rg)) == repr(run(torch))


def test_angle_gradient_of_complex_input_is_pytorchs(torch: Any) -> None:
    values = [1.5 + 2j, -3 - 1j, 0j, 2 + 0j, -0.5j]

    def run(lib: Any) -> np.ndarray:
        z = lib.tensor(values, dtype=lib.complex128, requires_grad=True)
        (g,) = lib.autograd.grad(lib.angle(z), z, lib.tensor([1.0, -2.0, 1.0, 0.5, 3.0], dtype=lib.float64))
        return np.asarray(g.numpy())

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12, atol=1e-15)
    z = rg.tensor([1.5 + 2j, -3 - 1j, 0.5j], dtype=rg.complex128, requires_grad=True)
    assert rg.autograd.gradcheck(rg.angle, (z,))
    assert rg.autograd.gradgradcheck(rg.angle, (z,))
