"""``nn.functional.affine_grid`` and ``torch.affine_grid_generator`` against real PyTorch: warnings
and errors (values, gradients, gradcheck and gradgradcheck are the op database's, tests/opdb/conv.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

CALLS = [
    ("default align_corners", lambda L: L.nn.functional.affine_grid(L.ones(2, 2, 3), (2, 1, 3, 3))),
    ("integer theta", lambda L: L.nn.functional.affine_grid(L.ones(2, 2, 3, dtype=L.int64), (2, 1, 3, 3), False)),
    ("2-D shape", lambda L: L.nn.functional.affine_grid(L.ones(2, 3, 3), (2, 1, 3, 3), False)),
    ("3-D shape", lambda L: L.nn.functional.affine_grid(L.ones(2, 2, 3), (2, 1, 3, 3, 3), False)),
    ("rank of size", lambda L: L.nn.functional.affine_grid(L.ones(2, 3, 4), (2, 1, 3, 3, 3, 3), False)),
    ("zero size", lambda L: L.nn.functional.affine_grid(L.ones(2, 3, 4), (2, 1, 0, 3, 3), False)),
    ("unit size aligned", lambda L: L.nn.functional.affine_grid(L.ones(2, 2, 3), (2, 1, 1, 3), True)),
    ("batch mismatch", lambda L: L.nn.functional.affine_grid(L.ones(2, 2, 3), (3, 1, 2, 3), False)),
    ("generator", lambda L: L.affine_grid_generator(L.ones(2, 2, 3), [2, 1, 2, 3], False)),
]


def _run(lib: Any, call: Any) -> tuple[Any, list[tuple[type, str]], Any]:
    values: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(lambda: values.append(call(lib)))
    return result, [(w.category, str(w.message)) for w in caught], values[0].numpy() if values else None


@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_matches_torch(torch: Any, label: str, call: Any) -> None:
    (out_a, warn_a, value_a), (out_b, warn_b, value_b) = _run(rg, call), _run(torch, call)
    assert (out_a, warn_a) == (out_b, warn_b)
    if value_b is not None:
        np.testing.assert_allclose(value_a, value_b, rtol=1e-6)


def test_gradient_and_node(torch: Any) -> None:
    theta = np.random.default_rng(0).standard_normal((2, 3, 4))
    a, b = rg.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
    ga, gb = rg.affine_grid_generator(a, [2, 1, 3, 2, 4], False), torch.affine_grid_generator(b, [2, 1, 3, 2, 4], False)
    assert type(ga.grad_fn).__name__ == type(gb.grad_fn).__name__ == "AffineGridGeneratorBackward0"
    seed = np.random.default_rng(1).standard_normal(tuple(gb.shape))
    ga.backward(rg.tensor(seed))
    gb.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
