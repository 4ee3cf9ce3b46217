"""Random factories inside ``vmap``: ``randomness='different'`` draws per sample (one draw with the
batch sizes in front: PyTorch's very numbers for the same seed), ``'same'`` one draw for the
batch, ``'error'`` PyTorch's error; nested levels mix the two."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.func as rfunc
from conftest import outcome

FACTORIES = {
    "randn": lambda lib, s: s + lib.randn(2),
    "randn unused input": lambda lib, s: lib.randn(2, 2),
    "rand tuple": lambda lib, s: s + lib.rand((2,)),
    "rand 0-d": lambda lib, s: s + lib.rand(()),
    "rand_like batched": lambda lib, s: s + lib.rand_like(s),
    "randn_like shared": lambda lib, s: s + lib.randn_like(lib.zeros(2)),
    "randint low high size": lambda lib, s: s + lib.randint(0, 100, (2,)),
    "randint high size": lambda lib, s: s + lib.randint(100, (2,)),
    "randint size kwarg": lambda lib, s: s + lib.randint(0, 100, size=(2,)),
    "randint_like": lambda lib, s: s + lib.randint_like(s, 0, 50),
    "normal floats": lambda lib, s: s + lib.normal(1.0, 2.0, (2,)),
    "randperm": lambda lib, s: s + lib.randperm(2),
    "generator": lambda lib, s: s + lib.randn(2, generator=lib.Generator().manual_seed(3)),
}


def _run(lib: Any, fn: Any, name: str, randomness: str) -> Any:
    lib.manual_seed(0)
    return fn.vmap(lambda s: FACTORIES[name](lib, s), randomness=randomness)(lib.zeros(4, 2))


@pytest.mark.parametrize("randomness", ["different", "same"])
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_random_factory_under_vmap_matches_torch(torch: Any, name: str, randomness: str) -> None:
    ours, theirs = _run(rg, rfunc, name, randomness), _run(torch, torch.func, name, randomness)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # (the generator is PyTorch's: same numbers)
    rows = ours.reshape(4, -1).numpy()
    if randomness == "same":
        assert (rows == rows[0]).all()
    elif name != "randperm":  # (2 elements: permutations repeat)
        assert len({r.tobytes() for r in rows}) == 4  # each sample its own draw


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_random_factory_under_vmap_error_mode_raises_torchs_error(torch: Any, name: str) -> None:
    got = outcome(lambda: _run(rg, rfunc, name, "error"))
    assert got == outcome(lambda: _run(torch, torch.func, name, "error"))
    assert got[0] == "RuntimeError"


@pytest.mark.parametrize("outer,inner", [("different", "different"), ("same", "same"), ("same", "different"),
                                         ("different", "same")])
def test_nested_levels_draw_per_sample_of_their_different_levels(torch: Any, outer: str, inner: str) -> None:
    def run(lib: Any, fn: Any) -> Any:
        lib.manual_seed(0)
        return fn.vmap(fn.vmap(lambda s: s + lib.rand(()), randomness=inner), randomness=outer)(lib.zeros(3, 2))

    ours, theirs = run(rg, rfunc), run(torch, torch.func)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    a = ours.numpy()
    assert (len(set(a[:, 0])) == 3) == (outer == "different")
    assert (len(set(a[0, :])) == 2) == (inner == "different")


def test_draws_are_batched_with_in_dims_and_under_grad(torch: Any) -> None:
    """Dropout-like noise per sample inside ``vmap(grad)``: each sample's gradient sees its own
    draw (the gradient of sum(x * noise) is the noise)."""
    def run(lib: Any, fn: Any) -> Any:
        lib.manual_seed(0)
        return fn.vmap(fn.grad(lambda x: (x * lib.rand(3)).sum()), in_dims=1, randomness="different")(
            lib.ones(3, 5, dtype=lib.float64))

    np.testing.assert_array_equal(run(rg, rfunc).numpy(), run(torch, torch.func).numpy())
