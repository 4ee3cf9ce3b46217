"""``NLLLoss2d``, ``Container`` (deprecated: PyTorch's FutureWarning) and ``SyncBatchNorm``
(no process group: batch norm over (N, C, *) input) against real PyTorch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _warned(make: Any) -> tuple[Any, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = make()
    return value, [(w.category, str(w.message)) for w in caught]


def test_nll_loss_2d(torch: Any) -> None:
    (ours, w_ours), (theirs, w_theirs) = (_warned(lambda: lib.nn.NLLLoss2d(ignore_index=1, reduction="sum"))
                                          for lib in (rg, torch))
    assert w_ours == w_theirs and w_ours[0][0] is FutureWarning
    assert isinstance(ours, rg.nn.NLLLoss) and repr(ours) == repr(theirs)
    x = np.ascontiguousarray(np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 5)).transpose(0, 3, 1, 2)))
    t = np.random.default_rng(1).integers(0, 3, (2, 4, 5))
    a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    la, lb = ours(a, rg.tensor(t)), theirs(b, torch.tensor(t))
    la.backward()
    lb.backward()
    assert la.item() == pytest.approx(lb.item(), rel=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_container(torch: Any) -> None:
    (ours, w_ours), (theirs, w_theirs) = (_warned(lambda: lib.nn.Container(a=lib.nn.ReLU(), b=lib.nn.Tanh()))
                                          for lib in (rg, torch))
    assert w_ours == w_theirs and w_ours[0][0] is FutureWarning
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_children()] == ["a", "b"]


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_sync_batch_norm_without_process_group(torch: Any, shape: tuple[int, ...], momentum: Any) -> None:
    ours, theirs = rg.nn.SyncBatchNorm(3, momentum=momentum), torch.nn.SyncBatchNorm(3, momentum=momentum)
    assert repr(ours) == repr(theirs) and ours.process_group is None
    for step in range(2):
        x = np.random.default_rng(step).standard_normal(shape).astype(np.float32)  # (the parameters' dtype)
        a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = ours(a), theirs(b)
        assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-5)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    for ka, kb in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert ka[0] == kb[0]
        np.testing.assert_allclose(ka[1].detach().numpy(), kb[1].detach().numpy(), rtol=1e-5)
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(9).standard_normal(shape)
    np.testing.assert_allclose(ours(rg.tensor(x, dtype=rg.float32)).detach().numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sync_batch_norm_errors_and_conversion(torch: Any) -> None:
    for call in (lambda L: L.nn.SyncBatchNorm(3)(L.ones(3)), lambda L: L.nn.SyncBatchNorm(3)(L.ones(2, 0, 4))):
        assert outcome(lambda: call(rg)) == outcome(lambda: call(torch)) != ("ok", "")
    model = rg.nn.Sequential(rg.nn.Conv2d(2, 3, 1), rg.nn.BatchNorm2d(3, affine=False), rg.nn.ReLU())
    model.eval()
    converted = rg.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    reference = torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3, affine=False), torch.nn.ReLU()).eval())
    assert repr(converted) == repr(reference)
    assert converted[1].running_mean is model[1].running_mean and not converted[1].training
