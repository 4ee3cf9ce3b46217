"""The in-place view ops' nodes (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) are defined once,
in ``ops/shape.py``, and serve both the public in-place view ops (``ops/strided.py``) and the
composites that end in one on a fresh result as PyTorch's do (``matmul`` of a vector and a matrix,
``quantile``): same node names, saved values, no ``_base``, against PyTorch."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops.op import Op

_NODE_NAMES = {"t_", "transpose_", "squeeze_", "unsqueeze_"}


def test_each_inplace_view_node_is_defined_once() -> None:
    found: dict[str, set[int]] = {}
    where: dict[str, list[str]] = {}
    for topic in ("elementwise", "reduce", "shape", "linalg", "strided", "nn", "sampling"):
        module = importlib.import_module(f"retrograd.ops.{topic}")
        for attr, value in vars(module).items():
            if isinstance(value, Op) and value.name in _NODE_NAMES:
                found.setdefault(value.node_name, set()).add(id(value))
                where.setdefault(value.node_name, []).append(f"{topic}.{attr}")
    assert all(len(ids) == 1 for ids in found.values()), where
    assert set(found) == {"TBackward1", "TransposeBackward1", "SqueezeBackward3", "SqueezeBackward4",
                          "SqueezeBackward5", "UnsqueezeBackward1"}


def _matmul_vector_matrix(lib: Any) -> Any:
    a = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
    b = lib.tensor(np.arange(6.0).reshape(3, 2), dtype=lib.float64, requires_grad=True)
    y = a @ b
    fn = y.grad_fn
    (y * lib.tensor([2.0, -1.0], dtype=lib.float64)).sum().backward()
    return (type(fn).__name__, fn._saved_dim, tuple(fn._saved_self_sym_sizes), y._base is None,
            y.tolist(), a.grad.tolist(), b.grad.tolist())


def test_matmul_of_a_vector_and_a_matrix_ends_in_pytorchs_squeeze_node(torch: Any) -> None:
    assert _matmul_vector_matrix(rg) == _matmul_vector_matrix(torch)


def _quantile(lib: Any, q: Any, interpolation: str) -> Any:
    x = lib.tensor(np.arange(24.0).reshape(2, 3, 4) % 5, dtype=lib.float64, requires_grad=True)
    out = lib.quantile(x, q if np.ndim(q) == 0 else lib.tensor(q, dtype=lib.float64), dim=1,
                       interpolation=interpolation)
    names, sizes = [], []
    fn = out.grad_fn
    while type(fn).__name__.split("Backward")[0] in ("Squeeze", "Transpose", "Unsqueeze"):
        names.append(type(fn).__name__)
        if hasattr(fn, "_saved_self_sym_sizes"):
            sizes.append(tuple(fn._saved_self_sym_sizes))
        fn = fn.next_functions[0][0]
    out.sum().backward()
    return names, sizes, out._base is None, list(out.shape), np.round(out.tolist(), 12).tolist(), x.grad.tolist()


@pytest.mark.parametrize("q", [0.3, [0.2, 0.5, 0.9]])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "midpoint"])
def test_quantiles_last_steps_are_pytorchs_inplace_view_nodes(torch: Any, q: Any, interpolation: str) -> None:
    assert _quantile(rg, q, interpolation) == _quantile(torch, q, interpolation)


def test_quantile_and_matmul_keep_forward_ad_and_gradcheck(torch: Any) -> None:
    import retrograd.autograd.forward_ad as fwAD

    x = np.random.default_rng(0).standard_normal((3, 5))
    t = np.random.default_rng(1).standard_normal((3, 5))
    m = np.random.default_rng(2).standard_normal((5, 2))

    def run(lib: Any, fw: Any) -> Any:
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            q = fw.unpack_dual(lib.quantile(d, lib.tensor([0.25, 0.75], dtype=lib.float64), dim=1)).tangent
            v = fw.unpack_dual(d[0] @ lib.tensor(m)).tangent
        return np.round(q.tolist(), 12).tolist(), np.round(v.tolist(), 12).tolist()

    import torch.autograd.forward_ad as torch_fwAD

    assert run(rg, fwAD) == run(torch, torch_fwAD)
    xs = rg.tensor(x, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda a: rg.quantile(a, rg.tensor([0.25, 0.75], dtype=rg.float64), dim=1),
                                     (xs,))
    assert rg.autograd.gradgradcheck(lambda a: a[0] @ rg.tensor(m), (xs,))


def test_vmap_of_matmul_and_quantile_match_pytorch(torch: Any) -> None:
    from retrograd.func import vmap

    x = np.random.default_rng(3).standard_normal((4, 3, 5))
    m = np.random.default_rng(4).standard_normal((5, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the squeeze_ node has a batching rule: no per-sample fallback
        ours = vmap(lambda v: v[0] @ rg.tensor(m))(rg.tensor(x))
    theirs = torch.func.vmap(lambda v: v[0] @ torch.tensor(m))(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (isnan runs per sample)
        ours = vmap(lambda v: rg.quantile(v, rg.tensor([0.1, 0.6], dtype=rg.float64), dim=1))(rg.tensor(x))
    theirs = torch.func.vmap(lambda v: torch.quantile(v, torch.tensor([0.1, 0.6], dtype=torch.float64), dim=1))(
        torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
