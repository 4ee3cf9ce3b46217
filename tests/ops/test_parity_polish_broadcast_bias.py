"""A broadcast gradient reduced on a recorded graph (``create_graph=True``: the bias of
``x @ W + b``) shows PyTorch's nodes: ``sum_to_size`` is a keepdim ``SumBackward1`` then, past
leading dims, a ``ViewBackward0`` (``SumBackward0`` for a 0-d target), with PyTorch's saved
attributes; the public ``sum_to_size`` the same, and its error PyTorch's. Compared with real
PyTorch: node names down the graph, saved attributes, gradients (and gradgradcheck)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _walk(node: Any, depth: int = 0, out: list[str] | None = None) -> list[str]:
    out = [] if out is None else out
    if node is None:
        out.append("  " * depth + "None")
        return out
    # (Strides are left out: mm's nodes do not keep their operands' strides here.)
    saved = sorted((a, _plain(getattr(node, a))) for a in dir(node)
                   if a.startswith("_saved_") and a != "_saved_self" and not a.endswith("_sym_strides"))
    out.append("  " * depth + f"{node.name()} {saved}")
    for nxt, _ in node.next_functions:
        _walk(nxt, depth + 1, out)
    return out


def _plain(value: Any) -> Any:
    """A saved value comparable across the libraries (a tensor as its rounded values)."""
    if hasattr(value, "detach"):
        return np.round(value.detach().numpy(), 10).tolist()
    return tuple(value) if isinstance(value, (list, tuple)) else value


_MODELS: list[tuple[str, Any]] = [
    ("x @ W + b", lambda lib, x, w, b: x @ w + b),
    ("b + x @ W", lambda lib, x, w, b: b + x @ w),
    ("batched x @ W + b", lambda lib, x, w, b: x.reshape(2, 2, 3) @ w + b),
    ("bias (1, 2)", lambda lib, x, w, b: x @ w + b.reshape(1, 2)),
    ("tanh(x @ W + b)", lambda lib, x, w, b: (x @ w + b).tanh()),
    ("x @ W * b", lambda lib, x, w, b: x @ w * b),
    ("sigmoid(x @ W + b)", lambda lib, x, w, b: (x @ w + b).sigmoid()),
]


@pytest.mark.parametrize("model", _MODELS, ids=[m[0] for m in _MODELS])
def test_bias_gradient_graph_as_torch(torch: Any, model: Any) -> None:
    rng = np.random.default_rng(0)
    arrays = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)

    def graph(lib: Any) -> Any:
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = model[1](lib, x, w, b)
        g = lib.tensor(np.linspace(-1.0, 1.0, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
        (gb,) = lib.autograd.grad(y, (b,), g, create_graph=True)
        return _walk(gb.grad_fn), np.round(gb.detach().numpy(), 12).tolist()

    assert graph(rg) == graph(torch)


_SIZES = [((4, 2), (2,)), ((1, 2), (2,)), ((4, 2), (4, 1)), ((4, 2), (1, 2)), ((3, 4, 2), (4, 1)), ((2,), ()),
          ((3, 1, 2), (1, 2)), ((4, 2), (1, 1, 2)), ((4, 2), (3,))]


@pytest.mark.parametrize(("shape", "size"), _SIZES, ids=[f"{s}->{z}" for s, z in _SIZES])
def test_sum_to_size_graph_as_torch(torch: Any, shape: tuple[int, ...], size: tuple[int, ...]) -> None:
    def graph(lib: Any) -> Any:
        x = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
        kind, message = outcome(lambda: x.sum_to_size(size))
        if kind != "ok":
            return kind, message
        y = x.sum_to_size(size)
        return y.tolist(), _walk(y.grad_fn)

    assert graph(rg) == graph(torch)


def test_sum_to_size_without_grad_is_one_pass_with_torchs_values(torch: Any) -> None:
    data = np.arange(24.0).reshape(2, 3, 4)
    for size in ((3, 1), (1, 4), (4,), (1, 1, 1)):
        ours = rg.tensor(data).sum_to_size(size)
        assert ours.grad_fn is None
        np.testing.assert_allclose(ours.numpy(), torch.tensor(data).sum_to_size(size).numpy())


def test_broadcast_bias_second_derivatives() -> None:
    x = rg.randn(4, 3, dtype=rg.float64, requires_grad=True)
    w = rg.randn(3, 2, dtype=rg.float64, requires_grad=True)
    b = rg.randn(2, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda x, w, b: (x @ w + b).tanh(), (x, w, b))
