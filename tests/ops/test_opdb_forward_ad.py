"""Every op in the database under forward AD (float64): the JVP along a random tangent against
central finite differences, and against PyTorch's forward AD (``torch.autograd.forward_ad``)
where PyTorch has a JVP for the op (where it has none, or its own forward AD fails on a sample,
the finite differences are the only oracle)."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import torch_or_skip
from opdb import OpInfo, Sample, all_ops, to_lib

OPS = all_ops()

# Entries whose finite differences along a random direction are not meaningful (random ops,
# outputs that jump under any perturbation) are checked against PyTorch only.
NO_FINITE_DIFFERENCES: set[str] = set()
# Entries that read the input's storage (as_strided's absolute geometry): a noncontiguous sample
# perturbed into a fresh array is a different storage, so only PyTorch checks those samples.
READS_STORAGE = {"as_strided", "as_strided_"}

# Samples where PyTorch's JVP is wrong: det at an exactly singular matrix ([[0]]: d det = the
# tangent; PyTorch 2.13 gives 0, as its gradient there, see tests/opdb/linalg.py). Finite
# differences check ours.
TORCH_WRONG = {("det_near_singular", "zero 1x1")}
# Entries where PyTorch 2.13's JVP disagrees with finite differences (its own gradcheck with
# check_forward_ad=True fails too): cholesky_inverse at a triangular factor, triangular_solve with
# ``transpose=True`` or a tangent of A outside the triangle the forward reads. Finite differences
# check ours; tests/ops/test_jvp_linalg_views.py compares with PyTorch where PyTorch is right.
TORCH_JVP_WRONG = {"triangular_solve", "triangular_solve_method", "cholesky_inverse", "cholesky_inverse_method"}


def _samples(op: OpInfo) -> list[Sample]:
    return op.samples(np.random.default_rng(zlib.crc32(op.name.encode())))


CASES = [
    pytest.param(op, sample, id=f"{op.name}-{sample.name or i}")
    for op in OPS
    if op.gradcheck
    for i, sample in enumerate(_samples(op))
]


def _outputs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _tangents(leaves: list[Any], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(t.shape)) for t in leaves]


def _run_dual(lib: Any, op: OpInfo, sample: Sample, tangents: list[np.ndarray]) -> list[Any]:
    """The op's outputs' tangents (None where an output has none) with the leaves made dual."""
    fwad = lib.autograd.forward_ad
    args, kwargs, leaves = to_lib(lib, sample)
    with fwad.dual_level():
        duals = {id(leaf): fwad.make_dual(leaf.detach(), lib.tensor(t)) for leaf, t in zip(leaves, tangents)}
        swapped = [duals.get(id(a), a) if not isinstance(a, list) else [duals.get(id(x), x) for x in a] for a in args]
        outs = _outputs(op.fn(lib, *swapped, **kwargs))
        result = []
        for o in outs:
            if not hasattr(o, "dtype") or not (o.dtype.is_floating_point or o.dtype.is_complex):
                result.append(None)
                continue
            t = fwad.unpack_dual(o).tangent
            result.append(None if t is None else _numpy(t))
        return result


def _numpy(t: Any) -> np.ndarray:
    try:
        return t.detach().numpy().copy()  # type: ignore[no-any-return]
    except RuntimeError:  # PyTorch's ZeroTensor (a tangent known to be zero)
        return np.zeros(tuple(t.shape))


def _evaluate(op: OpInfo, sample: Sample, shifts: list[np.ndarray]) -> list[Any]:
    args, kwargs, leaves = to_lib(rg, sample)
    with rg.no_grad():
        for leaf, s in zip(leaves, shifts):
            leaf._data = leaf._data + s  # (a fresh array: the sample's own is not touched)
        return [o.detach().numpy().copy() if hasattr(o, "numpy") and o.dtype.is_floating_point else None
                for o in _outputs(op.fn(rg, *args, **kwargs))]


# Entries whose ops declare no JVP (``jvp="unsupported"``, where PyTorch has none either): they must
# raise PyTorch's error.
NO_JVP_ENTRIES = {"lstm_layer_node"}


def _refuses(op: OpInfo, sample: Sample) -> bool:
    """For an entry without a JVP: forward AD through it raises PyTorch's not-implemented error."""
    if op.name not in NO_JVP_ENTRIES:
        return False
    _, _, leaves = to_lib(rg, sample)
    with pytest.raises(NotImplementedError, match="Trying to use forward AD with .* that does not support it"):
        _run_dual(rg, op, sample, _tangents(leaves, 0))
    return True


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_jvp_matches_finite_differences(op: OpInfo, sample: Sample) -> None:
    _, _, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    if _refuses(op, sample):
        return
    if op.name in NO_FINITE_DIFFERENCES or op.name in READS_STORAGE and sample.noncontiguous:
        pytest.skip("checked against PyTorch only")
    tangents = _tangents(leaves, zlib.crc32(op.name.encode()))
    ours = _run_dual(rg, op, sample, tangents)
    eps = 1e-6
    plus = _evaluate(op, sample, [eps * t for t in tangents])
    minus = _evaluate(op, sample, [-eps * t for t in tangents])
    for mine, p, m in zip(ours, plus, minus):
        if p is None:
            continue
        numerical = (p - m) / (2 * eps)
        analytical = np.zeros_like(numerical) if mine is None else mine
        np.testing.assert_allclose(analytical, numerical, atol=max(op.atol, 1e-5) * 10, rtol=op.rtol * 10,
                                   equal_nan=True)


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_jvp_matches_torch_forward_ad(op: OpInfo, sample: Sample) -> None:
    if not op.parity or (op.name, sample.name) in TORCH_WRONG or op.name in TORCH_JVP_WRONG:
        pytest.skip("no PyTorch counterpart")
    torch = torch_or_skip()
    _, _, leaves = to_lib(rg, sample)
    if not leaves:
        pytest.skip("no differentiable input")
    if _refuses(op, sample):
        return
    tangents = _tangents(leaves, zlib.crc32(op.name.encode()))
    try:
        theirs = _run_dual(torch, op, sample, tangents)
    except NotImplementedError as err:
        assert "forward AD" in str(err) or "jvp" in str(err)
        pytest.skip(f"PyTorch has no JVP: {str(err).splitlines()[0]}")
    except (RuntimeError, IndexError) as err:  # PyTorch's own forward AD fails on this sample
        pytest.skip(f"PyTorch's forward AD fails here: {str(err).splitlines()[0]}")
    ours = _run_dual(rg, op, sample, tangents)
    assert len(ours) == len(theirs)
    for mine, ref in zip(ours, theirs):
        if ref is None:  # (PyTorch leaves some outputs without a tangent: finite differences check ours)
            continue
        assert mine is not None, "PyTorch gives this output a tangent"
        assert mine.shape == ref.shape
        np.testing.assert_allclose(mine, ref, atol=1e-6, rtol=1e-5, equal_nan=True)
