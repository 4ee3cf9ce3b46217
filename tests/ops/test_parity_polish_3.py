"""Calls where retrograd raised (or NumPy's own error leaked out) and PyTorch returns a result,
or where the two raised differently: ``torch.linalg.cross``, ``searchsorted``/``kthvalue``/
``roll``/``cat`` on empty or 0-d inputs. Each call is compared with real PyTorch: exception type
and message, or the result's values, shape and dtype."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome, outcome_and_value


def _result(fn: Any, lib: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, out = outcome_and_value(lambda: fn(lib))
    if seen[0] != "ok":
        return seen
    outs = out if isinstance(out, tuple) else (out,)
    return [(t.tolist(), tuple(t.shape), str(t.dtype)) for t in outs]


def _cross_calls() -> list[tuple[str, Any]]:
    f32 = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]
    return [
        ("linalg.cross last dim", lambda lib: lib.linalg.cross(lib.tensor(f32), lib.tensor(f32[::-1]))),
        ("linalg.cross broadcast", lambda lib: lib.linalg.cross(lib.tensor(f32), lib.tensor([f32[0]]))),
        ("linalg.cross dim=0", lambda lib: lib.linalg.cross(lib.tensor(f32).T, lib.tensor(f32[::-1]).T, dim=0)),
        ("linalg.cross keywords", lambda lib: lib.linalg.cross(input=lib.tensor(f32), other=lib.tensor(f32), dim=-1)),
        ("linalg.cross int64", lambda lib: lib.linalg.cross(lib.tensor([1, 2, 3]), lib.tensor([4, 5, 6]))),
        ("linalg.cross complex", lambda lib: lib.linalg.cross(lib.tensor([1j, 2, 3]), lib.tensor([4, 5j, 6]))),
        ("linalg.cross empty batch", lambda lib: lib.linalg.cross(lib.ones(0, 3), lib.ones(1, 3))),
        ("linalg.cross ndim mismatch", lambda lib: lib.linalg.cross(lib.ones(1, 3), lib.ones(3))),
        ("linalg.cross size 2", lambda lib: lib.linalg.cross(lib.ones(2, 2), lib.ones(2, 2))),
        ("linalg.cross size 2 dim=1", lambda lib: lib.linalg.cross(lib.ones(3, 2), lib.ones(3, 2), dim=1)),
        ("linalg.cross dim out of range", lambda lib: lib.linalg.cross(lib.ones(3, 2), lib.ones(3, 2), dim=-3)),
        ("linalg.cross no broadcast", lambda lib: lib.linalg.cross(lib.ones(4, 3), lib.ones(2, 3))),
        ("linalg.cross size before broadcast", lambda lib: lib.linalg.cross(lib.ones(4, 2), lib.ones(2, 2))),
        ("linalg.cross 0-d", lambda lib: lib.linalg.cross(lib.tensor(1.0), lib.tensor(1.0))),
        ("linalg.cross bool", lambda lib: lib.linalg.cross(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool))),
        ("linalg.cross dtypes", lambda lib: lib.linalg.cross(lib.ones(3, dtype=lib.float64), lib.ones(3))),
        ("linalg.cross dtypes after shape", lambda lib: lib.linalg.cross(lib.ones(2, 2, dtype=lib.float64),
                                                                         lib.ones(2, 2))),
        ("linalg.cross empty dtypes", lambda lib: lib.linalg.cross(lib.ones(0, 3, dtype=lib.float64), lib.ones(0, 3))),
        ("linalg.cross other not a tensor", lambda lib: lib.linalg.cross(lib.ones(3), 2)),
        ("linalg.cross input not a tensor", lambda lib: lib.linalg.cross([1.0, 2.0, 3.0], lib.ones(3))),
        ("linalg.cross float dim", lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3), dim=0.0)),
        ("cross dim as given", lambda lib: lib.cross(lib.ones(3, 2), lib.ones(3, 2), dim=-1)),
        ("cross 0-d dim", lambda lib: lib.cross(lib.tensor(1.0), lib.tensor(1.0), dim=0)),
        ("cross other not a tensor", lambda lib: lib.cross(lib.ones(3), 1, dim=0)),
    ]


_EMPTY_CALLS: list[tuple[str, Any]] = [
    ("searchsorted (2, 0) boundaries", lambda lib: lib.searchsorted(lib.ones(2, 0), lib.ones(2, 3))),
    ("searchsorted (2, 0) right", lambda lib: lib.searchsorted(lib.ones(2, 0), lib.ones(2, 3), right=True)),
    ("searchsorted (2, 0) values", lambda lib: lib.searchsorted(lib.ones(2, 5), lib.ones(2, 0))),
    ("searchsorted (2, 3, 0) boundaries", lambda lib: lib.searchsorted(lib.ones(2, 3, 0), lib.ones(2, 3, 1))),
    ("kthvalue empty vector", lambda lib: lib.kthvalue(lib.ones(0), 1)),
    ("kthvalue empty dim k=0", lambda lib: lib.kthvalue(lib.ones(3, 0), 0, dim=-1)),
    ("kthvalue empty bool", lambda lib: lib.kthvalue(lib.ones(0, dtype=lib.bool), 1)),
    ("kthvalue empty other dim", lambda lib: lib.kthvalue(lib.ones(3, 0), 1, dim=0)),
    ("roll 0-d dim 0", lambda lib: lib.roll(lib.tensor(1.0), 1, 0)),
    ("roll 0-d dim -1", lambda lib: lib.roll(lib.tensor(1.0), 1, -1)),
    ("roll 0-d two dims", lambda lib: lib.roll(lib.tensor(1.0), (1, 1), (0, -1))),
    ("roll dims=()", lambda lib: lib.roll(lib.arange(6).reshape(2, 3), 1, ())),
    ("roll dims=() two shifts", lambda lib: lib.roll(lib.arange(6), (1, 2), ())),
    ("roll no shifts", lambda lib: lib.roll(lib.ones(2, 3), (), ())),
    ("roll empty", lambda lib: lib.roll(lib.ones(2, 0), 1, 1)),
    ("cat legacy empties dim=1", lambda lib: lib.cat([lib.ones(0), lib.ones(0)], dim=1)),
    ("cat legacy empties dim=-5", lambda lib: lib.cat([lib.ones(0), lib.ones(0, dtype=lib.float64)], dim=-5)),
    ("cat one legacy empty dim=3", lambda lib: lib.cat([lib.ones(0, dtype=lib.int64)], dim=3)),
    ("cat legacy empty and 0-d", lambda lib: lib.cat([lib.ones(0), lib.tensor(1.0)], dim=1)),
    ("cat legacy empty skipped", lambda lib: lib.cat([lib.ones(0), lib.ones(2, 3)], dim=1)),
]


_CALLS = _cross_calls() + _EMPTY_CALLS


@pytest.mark.parametrize("call", _CALLS, ids=[c[0] for c in _CALLS])
def test_call_as_torch(torch: Any, call: Any) -> None:
    _, fn = call
    assert _result(fn, rg) == _result(fn, torch)


def test_linalg_cross_gradients_and_forward_ad() -> None:
    """gradcheck, gradgradcheck (float64, broadcast batch and a dim other than the last) and the
    forward-mode tangent against finite differences of the function itself."""
    rng = np.random.default_rng(0)
    a = rg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    b = rg.tensor(rng.standard_normal((1, 3, 1)), requires_grad=True)

    def f(x: Any, y: Any) -> Any:
        return rg.linalg.cross(x, y, dim=1)

    assert rg.autograd.gradcheck(f, (a, b))
    assert rg.autograd.gradgradcheck(f, (a, b))
    import retrograd.autograd.forward_ad as fwAD

    ta, tb = rg.tensor(rng.standard_normal((2, 3, 4))), rg.tensor(rng.standard_normal((1, 3, 1)))
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(f(fwAD.make_dual(a.detach(), ta), fwAD.make_dual(b.detach(), tb))).tangent
    eps = 1e-6
    numeric = (f(a.detach() + eps * ta, b.detach() + eps * tb) - f(a.detach() - eps * ta, b.detach() - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), numeric.numpy(), rtol=1e-6, atol=1e-8)


def test_cat_of_legacy_empties_backward(torch: Any) -> None:
    """Only (0,) tensors, any ``dim``: the result and each gradient are (0,), as PyTorch's."""
    def grads(lib: Any) -> Any:
        a, b = lib.ones(0, requires_grad=True), lib.ones(0, requires_grad=True)
        out = lib.cat([a, b], dim=2)
        out.sum().backward()
        return tuple(out.shape), type(out.grad_fn).__name__, tuple(a.grad.shape), tuple(b.grad.shape)

    assert grads(rg) == grads(torch)


def _mixed_dtype_tangent_calls() -> list[tuple[str, Any]]:
    """(name, primal dtype, tangent dtype, what to do with the dual tensor ``d`` and ``lib``)."""
    return [
        ("mul", "float32", "float64", lambda lib, d: d * 2),
        ("exp", "float32", "float64", lambda lib, d: d.exp()),
        ("sin exp chain", "float32", "float64", lambda lib, d: (d * 2).sin().exp()),
        ("sum", "float32", "float64", lambda lib, d: d.sum()),
        ("view", "float32", "float64", lambda lib, d: d.view(4)),
        ("view float16 tangent", "float32", "float16", lambda lib, d: d.view(4)),
        ("exp float16 tangent", "float32", "float16", lambda lib, d: d.exp()),
        ("t", "float32", "float64", lambda lib, d: d.t()),
        ("relu", "float32", "float64", lambda lib, d: d.relu()),
        ("softmax", "float32", "float64", lambda lib, d: d.softmax(-1)),
        ("log_softmax", "float32", "float64", lambda lib, d: d.log_softmax(-1)),
        ("cat", "float32", "float64", lambda lib, d: lib.cat([d, lib.ones(2, 2)])),
        ("stack", "float32", "float64", lambda lib, d: lib.stack([d, lib.ones(2, 2)])),
        ("add float32", "float32", "float64", lambda lib, d: d + lib.ones(2, 2)),
        ("max (transpose)", "float32", "float64", lambda lib, d: d.max()),
        ("max dim", "float32", "float64", lambda lib, d: d.max(0)[0]),
        ("where (transpose)", "float32", "float64", lambda lib, d: lib.where(d > 0, d, lib.ones(2, 2))),
        ("sort", "float32", "float64", lambda lib, d: d.sort(0)[0]),
        ("index", "float32", "float64", lambda lib, d: d[0]),
        ("unbind", "float32", "float64", lambda lib, d: d.unbind(0)[0]),
        ("to float16", "float32", "float64", lambda lib, d: d.half()),
        ("times 1j", "float32", "float64", lambda lib, d: d * 1j),
        ("norm", "float32", "float64", lambda lib, d: d.norm()),
        ("in-place mul_", "float32", "float64", lambda lib, d: d.clone().mul_(2)),
        ("in-place add_ into float32", "float32", "float64", lambda lib, d: lib.ones(2, 2).add_(d)),
        ("float32 tangent of float64 exp", "float64", "float32", lambda lib, d: d.exp()),
        ("mm refuses the mixed dtypes", "float32", "float64", lambda lib, d: d @ lib.ones(2, 2)),
        ("mm of a float64 primal", "float64", "float32", lambda lib, d: d @ lib.ones(2, 2, dtype=lib.float64)),
        ("linear refuses", "float32", "float64", lambda lib, d: lib.nn.functional.linear(d, lib.ones(2, 2))),
        ("matmul vector refuses", "float32", "float64", lambda lib, d: d @ lib.ones(2)),
    ]


_MIXED = _mixed_dtype_tangent_calls()


@pytest.mark.parametrize("call", _MIXED, ids=[c[0] for c in _MIXED])
def test_tangent_of_another_dtype_carries_on_as_torch(torch: Any, call: Any) -> None:
    """``make_dual`` of a float32 primal with a float64 tangent: each op's tangent keeps (or
    promotes to) the tangent's dtype as PyTorch's formulas compute it, not cast back to the
    primal's; where PyTorch's formula refuses the mixed dtypes (mm), retrograd refuses them too."""
    _, primal_dtype, tangent_dtype, fn = call

    def run(lib: Any) -> Any:
        fw = lib.autograd.forward_ad
        primal = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=getattr(lib, primal_dtype))
        tangent = lib.tensor([[1.0, 0.5], [-2.0, 3.0]], dtype=getattr(lib, tangent_dtype))
        with fw.dual_level():
            kind, message = outcome(lambda: fn(lib, fw.make_dual(primal, tangent)))
            if kind != "ok":
                return kind, message
            out = fw.unpack_dual(fn(lib, fw.make_dual(primal, tangent)))
            return str(out.primal.dtype), str(out.tangent.dtype), out.tangent.to(lib.complex128).tolist()

    ours, theirs = run(rg), run(torch)
    assert ours[:2] == theirs[:2]
    if ours[0] not in ("RuntimeError", "TypeError"):
        np.testing.assert_allclose(np.array(ours[2]), np.array(theirs[2]), rtol=1e-6, atol=1e-7)
