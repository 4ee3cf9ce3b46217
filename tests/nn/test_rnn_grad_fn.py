"""The recurrent modules' outputs record the node PyTorch records (StackBackward0 for unpacked
input, CatBackward0 when bidirectional, TransposeBackward1 for a GRU/RNN batch_first output, ...)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import retrograd as rg

_OPTIONS = [{}, {"num_layers": 2}, {"bidirectional": True}, {"batch_first": True},
            {"num_layers": 2, "bidirectional": True, "batch_first": True}]


@pytest.mark.parametrize(("mode", "dtype", "options"),
                         list(itertools.product(("LSTM", "GRU", "RNN"), ("float32", "float64"), _OPTIONS)))
def test_output_grad_fn_and_values_match_pytorch(torch, mode: str, dtype: str, options: dict[str, object]) -> None:
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 4, **options).to(getattr(torch, dtype))
    ours = getattr(rg.nn, mode)(3, 4, **options).to(getattr(rg, dtype))
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(dtype)
    out_t = theirs(torch.tensor(x))[0]
    out_r = ours(rg.tensor(x))[0]
    assert out_r.grad_fn.name() == out_t.grad_fn.name()
    assert out_r.is_contiguous() == out_t.is_contiguous()
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    out_r.sum().backward()
    out_t.sum().backward()
    for (name, p_r), p_t in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p_r.grad.numpy(), p_t.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
