"""Every op database entry under ``vmap``, against the op run on each sample alone: the batching
rules (and the fallbacks) give the per-sample results, with every float argument batched, and
with only the first one batched (the others shared: the broadcasting rules)."""

from __future__ import annotations

import warnings
import zlib
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from opdb import OpInfo, Sample, all_ops, to_lib
from retrograd import func as rfunc

_SCALES = (1.0, 0.93, 1.07)  # three samples: the op's own sample, scaled (domains keep their sign)
_CASES = [(op, s) for op in all_ops() for s in op.samples(np.random.default_rng(zlib.crc32(op.name.encode())))]


def _outputs(out: Any) -> list[Any]:
    if isinstance(out, rg.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, rg.Tensor)]
    return []


def _check(op: OpInfo, sample: Sample, batch_all: bool) -> None:
    float_positions = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not float_positions:
        pytest.skip("no float array argument to batch")
    batched = float_positions if batch_all else float_positions[:1]
    per_sample = []
    for scale in _SCALES:
        args = tuple(np.asarray(a * scale) if i in batched else a for i, a in enumerate(sample.args))
        lib_args, kwargs, _ = to_lib(rg, Sample(args, dict(sample.kwargs), grad=(False,) * 99))
        try:
            per_sample.append(_outputs(op.fn(rg, *lib_args, **kwargs)))
        except Exception:  # noqa: BLE001 - an error sample: nothing to batch
            pytest.skip("the sample raises")
    if not per_sample[0]:
        pytest.skip("no tensor output")
    base, kwargs, _ = to_lib(rg, Sample(sample.args, dict(sample.kwargs), grad=(False,) * 99))
    stacked = [rg.stack([rg.tensor(np.asarray(sample.args[i] * s)) for s in _SCALES]) for i in batched]

    def f(*xs: Any) -> Any:
        args = list(base)
        for i, x in zip(batched, xs):
            args[i] = x
        return tuple(_outputs(op.fn(rg, *args, **kwargs)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the per-sample fallback's performance warning)
        try:
            got = rfunc.vmap(f)(*stacked)
        except RuntimeError as err:
            if "randomness" in str(err):
                pytest.skip("a random op")
            raise
    assert len(got) == len(per_sample[0])
    for k, g in enumerate(got):
        want = np.stack([np.asarray(outs[k].detach().numpy()) for outs in per_sample])
        assert g.shape == want.shape and g.dtype == per_sample[0][k].dtype
        np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("op,sample", _CASES, ids=[f"{op.name}-{s.name or i}" for i, (op, s) in enumerate(_CASES)])
def test_vmap_matches_per_sample_all_batched(op: OpInfo, sample: Sample) -> None:
    _check(op, sample, True)


@pytest.mark.parametrize("op,sample", _CASES, ids=[f"{op.name}-{s.name or i}" for i, (op, s) in enumerate(_CASES)])
def test_vmap_matches_per_sample_first_batched(op: OpInfo, sample: Sample) -> None:
    _check(op, sample, False)
