"""var/std (and var_mean/std_mean) and the vector norms of a complex tensor are real, as
PyTorch's: the squared moduli of the deviations for var/std (not the complex squares), float32
for complex64. Found by a differential run over common ops with unusual inputs. Compared with
real PyTorch: values, dtypes and gradients; gradcheck in complex128."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

_DATA = [[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 1 + 1j]]

_CALLS: list[tuple[str, Any]] = [
    ("std()", lambda lib, x: x.std()),
    ("var()", lambda lib, x: x.var()),
    ("var(1)", lambda lib, x: x.var(1)),
    ("std(0, keepdim)", lambda lib, x: x.std(0, keepdim=True)),
    ("var(correction=0)", lambda lib, x: x.var(correction=0)),
    ("var_mean(1)[0]", lambda lib, x: lib.var_mean(x, 1)[0]),
    ("std_mean()[0]", lambda lib, x: lib.std_mean(x)[0]),
    ("norm()", lambda lib, x: x.norm()),
    ("vector_norm(dim=1)", lambda lib, x: lib.linalg.vector_norm(x, dim=1)),
    ("vector_norm(inf)", lambda lib, x: lib.linalg.vector_norm(x, ord=float("inf"))),
    ("vector_norm(3, dim=0)", lambda lib, x: lib.linalg.vector_norm(x, ord=3, dim=0)),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_complex_reduction_is_real_as_torch(torch: Any, call: Any, dtype: str) -> None:
    def run(lib: Any) -> Any:
        out = call[1](lib, lib.tensor(_DATA, dtype=getattr(lib, dtype)))
        return str(out.dtype), out.numpy()
    (ours_dtype, ours), (theirs_dtype, theirs) = run(rg), run(torch)
    assert ours_dtype == theirs_dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_complex_var_std_norm_gradients_as_torch(torch: Any) -> None:
    def grad(lib: Any) -> Any:
        x = lib.tensor(_DATA, dtype=lib.complex128, requires_grad=True)
        (x.std() + x.var(1).sum() + x.norm()).backward()
        return x.grad.numpy()
    np.testing.assert_allclose(grad(rg), grad(torch), rtol=1e-10)
    x = rg.randn(2, 3, dtype=rg.complex128, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: t.std(1), (x,))
    assert rg.autograd.gradcheck(lambda t: t.var(), (x,))
