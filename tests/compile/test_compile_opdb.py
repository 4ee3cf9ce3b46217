"""retrograd.compile against eager on every op-database sample: values, dtypes and gradients.

The sample's function is compiled and called twice on fresh leaves: the first call traces (and
runs eagerly), the second runs the generated forward and backward. Both must equal eager."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from opdb import OpInfo, Sample, cases, to_lib

CASES = cases()

COMPILED: dict[str, bool] = {}  # case -> ran compiled code (no graph break)


def _outputs(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _run(fn: Any, op: OpInfo, sample: Sample, seed_grads: list[np.ndarray] | None) -> tuple[list[Any], list[Any]]:
    args, kwargs, leaves = to_lib(rg, sample)
    outs = _outputs(fn(op, args, kwargs))
    tensors = [o for o in outs if isinstance(o, rg.Tensor)]
    diff = [o for o in tensors if o.requires_grad]
    if diff and seed_grads is not None:
        rg.autograd.backward(diff, [rg.tensor(g) for g in seed_grads[: len(diff)]])
    return outs, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize(("op", "sample"), CASES)
def test_compiled_equals_eager_on_opdb(op: OpInfo, sample: Sample) -> None:
    def eager(op: OpInfo, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return op.fn(rg, *args, **kwargs)

    compiled = rg.compile(lambda *a, **k: op.fn(rg, *a, **k))

    def via_compiled(op: OpInfo, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return compiled(*args, **kwargs)

    try:
        probe, _ = _run(eager, op, sample, None)
    except Exception as error:  # noqa: BLE001 - a sample that raises must raise the same way compiled
        with pytest.raises(type(error)):
            _run(via_compiled, op, sample, None)
        return
    rng = np.random.default_rng(0)
    seeds = [rng.standard_normal(o.shape).astype(np.asarray(o.detach()._data).dtype)
             for o in probe if isinstance(o, rg.Tensor) and o.requires_grad]
    want_out, want_grads = _run(eager, op, sample, seeds)
    for _ in range(2):  # the trace (an eager run), then the generated code
        got_out, got_grads = _run(via_compiled, op, sample, seeds)
        assert len(got_out) == len(want_out)
        for g, w in zip(got_out, want_out):
            if isinstance(w, rg.Tensor):
                assert g.dtype == w.dtype and g.shape == w.shape
                assert g.requires_grad == w.requires_grad
                np.testing.assert_allclose(g.detach()._data, w.detach()._data, rtol=1e-12, atol=1e-12, equal_nan=True)
            else:
                assert g == w
        for g, w in zip(got_grads, want_grads):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_allclose(g._data, w._data, rtol=1e-7, atol=1e-10, equal_nan=True)  # (sums in another order)
    COMPILED[f"{op.name}-{sample.name}"] = not compiled.breaks
