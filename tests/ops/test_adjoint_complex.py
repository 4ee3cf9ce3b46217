"""``mH``, ``H`` and ``adjoint()`` conjugate a complex tensor (they only transposed it: a silent
wrong result), with PyTorch's values, node and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

_A = np.array([[[1 + 2j, 3 - 1j, 0.5], [0.5j, 2, -1j]], [[2 - 2j, 1j, 1], [4, -3 + 1j, 2j]]])


@pytest.mark.parametrize("form", ["mH", "adjoint", "H"])
def test_conjugate_transpose_matches_pytorch(torch, form: str) -> None:
    a = _A[0] if form == "H" else _A
    x_r = rg.tensor(a, requires_grad=True)
    x_t = torch.tensor(a, requires_grad=True)
    get = (lambda t: t.adjoint()) if form == "adjoint" else (lambda t: getattr(t, form))
    y_r, y_t = get(x_r), get(x_t)
    np.testing.assert_array_equal(y_r.detach().numpy(), y_t.detach().resolve_conj().numpy())
    np.testing.assert_array_equal(y_r.detach().numpy(), np.conj(np.swapaxes(a, -1, -2)))
    assert y_r.grad_fn.name() == y_t.grad_fn.name()
    w = np.arange(y_r.numel()).reshape(y_r.shape) * (1 - 0.5j)
    (y_r * rg.tensor(w)).abs().sum().backward()
    (y_t * torch.tensor(w)).abs().sum().backward()
    np.testing.assert_allclose(x_r.grad.numpy(), x_t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_real_adjoint_is_still_a_transpose_view(torch) -> None:
    x = rg.ones(2, 3, requires_grad=True)
    assert x.mH.grad_fn.name() == torch.ones(2, 3, requires_grad=True).mH.grad_fn.name() == "TransposeBackward0"
    assert x.mH._is_view()


def test_gradcheck_of_complex_adjoint() -> None:
    x = rg.tensor(_A, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: t.mH, (x,))
    assert rg.autograd.gradgradcheck(lambda t: t.mH, (x,))
