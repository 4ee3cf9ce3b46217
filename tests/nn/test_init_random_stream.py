"""Modules, ``nn.init``, dropout and the data samplers draw from PyTorch's stream: after the same
``manual_seed`` a freshly built module has PyTorch's weights bit for bit, a dropout mask is
PyTorch's, and a shuffling DataLoader visits the same order."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from tests.test_random_stream import skip_if_mkl_bernoulli, skip_unless_avx2_normal

import retrograd as rg


def _same(ours: Any, theirs: Any) -> None:
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _both(torch: Any, seed: int, fn: Any) -> None:
    torch.manual_seed(seed)
    theirs = list(fn(torch))
    rg.manual_seed(seed)
    ours = list(fn(rg))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        _same(a, b)


MODULES = [
    lambda nn: nn.Linear(4, 3),
    lambda nn: nn.Linear(784, 128),
    lambda nn: nn.Linear(5, 2, bias=False),
    lambda nn: nn.Conv2d(3, 8, 3),
    lambda nn: nn.Conv2d(4, 6, (3, 5), groups=2),
    lambda nn: nn.Conv1d(3, 8, 5),
    lambda nn: nn.Conv3d(2, 3, 2),
    lambda nn: nn.ConvTranspose2d(3, 4, 3),
    lambda nn: nn.Embedding(10, 5),
    lambda nn: nn.Bilinear(3, 4, 5),
    lambda nn: nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5), nn.Conv1d(1, 2, 3)),
]


@pytest.mark.parametrize("case", range(len(MODULES)))
@pytest.mark.parametrize("seed", [0, 42])
def test_default_initialisation_matches_pytorch(torch: Any, case: int, seed: int) -> None:
    skip_unless_avx2_normal(torch)
    _both(torch, seed, lambda lib: MODULES[case](lib.nn).parameters())


def test_modules_built_in_sequence_stay_in_step(torch: Any) -> None:
    def build(lib: Any) -> Any:
        a = lib.nn.Linear(3, 3)
        x = lib.randn(2, 3)
        b = lib.nn.Conv2d(1, 2, 2)
        return [*a.parameters(), x, *b.parameters(), lib.rand(4)]
    _both(torch, 0, build)


INITS = [
    lambda lib, t: lib.nn.init.uniform_(t, -0.3, 0.2),
    lambda lib, t: lib.nn.init.normal_(t, 0.5, 0.02),
    lambda lib, t: lib.nn.init.xavier_uniform_(t),
    lambda lib, t: lib.nn.init.xavier_normal_(t, gain=2.0),
    lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
    lambda lib, t: lib.nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
    lambda lib, t: lib.nn.init.trunc_normal_(t, std=0.02),
    lambda lib, t: lib.nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=1.5, b=3.0),
]


@pytest.mark.parametrize("case", range(len(INITS)))
@pytest.mark.parametrize("shape", [(3, 5), (8, 4, 3, 3), (40, 50)])
def test_init_functions_match_pytorch(torch: Any, case: int, shape: tuple[int, ...]) -> None:
    skip_unless_avx2_normal(torch)
    _both(torch, 1, lambda lib: [INITS[case](lib, lib.empty(shape)), lib.rand(3)])


def test_init_generator_keyword(torch: Any) -> None:
    ours = rg.nn.init.kaiming_uniform_(rg.empty(6, 7), generator=rg.Generator().manual_seed(5))
    theirs = torch.nn.init.kaiming_uniform_(torch.empty(6, 7), generator=torch.Generator().manual_seed(5))
    _same(ours, theirs)


@pytest.mark.parametrize("shape", [(5, 8), (8, 5), (4, 3, 2)])
def test_orthogonal_draws_pytorch_normals(torch: Any, shape: tuple[int, ...]) -> None:
    """Same normal draw; the QR is LAPACK's on both sides, so equal to rounding (and the stream
    stays in step afterwards)."""
    torch.manual_seed(3)
    theirs = torch.nn.init.orthogonal_(torch.empty(shape), gain=1.5)
    after_t = torch.rand(4)
    rg.manual_seed(3)
    ours = rg.nn.init.orthogonal_(rg.empty(shape), gain=1.5)
    after_r = rg.rand(4)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)
    _same(after_r, after_t)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_masks_match_pytorch(torch: Any, p: float) -> None:
    skip_if_mkl_bernoulli(torch)
    x = np.linspace(-2, 2, 7 * 30, dtype=np.float32).reshape(7, 30)

    def draw(lib: Any) -> Any:
        t = lib.tensor(x)
        f = lib.nn.functional
        return [f.dropout(t, p), f.dropout(t.double(), p), f.dropout2d(t.reshape(7, 3, 10, 1), p),
                lib.nn.Dropout(p)(t), f.dropout(t.clone(), p, inplace=True), lib.rand(2)]
    _both(torch, 0, draw)


def test_rrelu_training_slopes_match_pytorch(torch: Any) -> None:
    x = np.linspace(-3, 3, 41, dtype=np.float32)
    _both(torch, 0, lambda lib: [lib.nn.functional.rrelu(lib.tensor(x), training=True),
                                 lib.nn.functional.rrelu(lib.tensor(x).double(), 0.2, 0.6, training=True),
                                 lib.rand(2)])


def test_gumbel_softmax_draws_pytorch_noise(torch: Any) -> None:
    torch.manual_seed(0)
    theirs = (torch.nn.functional.gumbel_softmax(torch.zeros(4, 6), tau=0.5), torch.rand(3))
    rg.manual_seed(0)
    ours = (rg.nn.functional.gumbel_softmax(rg.zeros(4, 6), tau=0.5), rg.rand(3))
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-5, atol=1e-7)
    _same(ours[1], theirs[1])


def test_data_loading_orders_match_pytorch(torch: Any) -> None:
    def draw(lib: Any) -> Any:
        data = lib.utils.data
        out = []
        loader = data.DataLoader(data.TensorDataset(lib.arange(50)), batch_size=16, shuffle=True)
        for _ in range(2):
            out += [b for (b,) in loader]
        out.append(lib.tensor(list(data.RandomSampler(range(40), replacement=True, num_samples=70))))
        out.append(lib.tensor(list(data.RandomSampler(range(9), num_samples=20))))
        out.append(lib.tensor(list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5))))
        out.append(lib.tensor(list(data.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 4, False))))
        out.append(lib.tensor(list(data.SubsetRandomSampler([3, 5, 7, 9]))))
        first, _ = data.random_split(range(10), [0.7, 0.3])
        out.append(lib.tensor(list(first.indices)))
        g = lib.Generator().manual_seed(7)
        out += [b for (b,) in data.DataLoader(data.TensorDataset(lib.arange(10)), batch_size=4, shuffle=True,
                                               generator=g)]
        out.append(lib.rand(2))
        return out
    _both(torch, 0, draw)
