"""The random stream: after the same seed, retrograd's samplers give PyTorch's CPU numbers (bit for
bit), keep the stream in step across interleaved calls, and check arguments as PyTorch does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

SIZES = [1, 15, 16, 17, 31, 1000, (3, 5), (4, 4, 2), (0,)]
SEEDS = [0, 1, 12345, 2**40 + 7, -3]
FLOATS = ["float32", "float64", "float16"]


def _same(ours: rg.Tensor, theirs: Any) -> None:
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _both(torch: Any, seed: int, fn: Any) -> None:
    """Run ``fn(lib)`` after ``manual_seed(seed)`` in both libraries; every output must match."""
    torch.manual_seed(seed)
    theirs = fn(torch)
    rg.manual_seed(seed)
    ours = fn(rg)
    if not isinstance(theirs, (tuple, list)):
        ours, theirs = [ours], [theirs]
    for a, b in zip(ours, theirs, strict=True):
        _same(a, b)


def mkl_bernoulli(torch: Any) -> bool:
    """Whether this PyTorch draws ``bernoulli_(p)`` (and dropout) from MKL's own stream, seeded by one
    word of the generator (builds with MKL on Intel CPUs): retrograd follows the per-element kernel
    PyTorch uses everywhere else, so those comparisons only hold there."""
    torch.manual_seed(0)
    torch.empty(64).bernoulli_(0.5)
    return int(torch.get_rng_state().numpy()[16:24].view(np.uint64)[0]) < 64


def skip_unless_avx2_normal(torch: Any) -> None:
    """float32 ``normal_`` follows PyTorch's AVX2 kernel (also used on AVX512 machines)."""
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("PyTorch runs its scalar float normal kernel on this CPU")


def skip_if_mkl_bernoulli(torch: Any) -> None:
    if mkl_bernoulli(torch):
        pytest.skip("PyTorch draws bernoulli_(p) from MKL's stream on this (Intel) CPU")


def _size(size: Any) -> tuple[int, ...]:
    return size if isinstance(size, tuple) else (size,)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn_match_pytorch(torch: Any, seed: int, size: Any, dtype: str) -> None:
    skip_unless_avx2_normal(torch)
    _both(torch, seed, lambda lib: (lib.rand(_size(size), dtype=getattr(lib, dtype)),
                                    lib.randn(_size(size), dtype=getattr(lib, dtype)),
                                    lib.randn(*_size(size), dtype=getattr(lib, dtype))))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", [1, 17, 1000, (5, 7)])
def test_randint_matches_pytorch(torch: Any, seed: int, size: Any) -> None:
    def draw(lib: Any) -> Any:
        return (lib.randint(10, _size(size)), lib.randint(-5, 3, _size(size)), lib.randint(0, 2**29, _size(size)),
                lib.randint(-2**40, 2**40, _size(size)), lib.randint(0, 100, _size(size), dtype=lib.int32),
                lib.randint(0, 7, _size(size), dtype=lib.float32), lib.randint(0, 2, _size(size), dtype=lib.uint8))
    _both(torch, seed, draw)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 1000, 5000])
def test_randperm_matches_pytorch(torch: Any, seed: int, n: int) -> None:
    _both(torch, seed, lambda lib: (lib.randperm(n), lib.randperm(n, dtype=lib.float32)))


@pytest.mark.parametrize("seed", [0, 7])
def test_normal_overloads_match_pytorch(torch: Any, seed: int) -> None:
    skip_unless_avx2_normal(torch)
    def draw(lib: Any) -> Any:
        mean = lib.arange(20, dtype=lib.float32).reshape(4, 5) / 3
        std = lib.linspace(0.1, 2.0, 5)
        return (lib.normal(1.5, 0.25, (3, 7)), lib.normal(1.5, 0.25, size=(40,)), lib.normal(mean, 2.0),
                lib.normal(mean), lib.normal(0.5, std), lib.normal(mean, std), lib.normal(mean[:2, :3], std[:3]),
                lib.normal(-1.0, 3.0, (20,), dtype=lib.float64))
    _both(torch, seed, draw)


@pytest.mark.parametrize("seed", [0, 3])
def test_interleaved_calls_keep_the_stream_in_step(torch: Any, seed: int) -> None:
    """The scalar Box-Muller caches its second normal: odd small randn calls between other draws."""
    def draw(lib: Any) -> Any:
        out = []
        for n in (1, 3, 5, 16, 2, 17, 1, 7, 33):
            out += [lib.randn(n), lib.rand(n), lib.randn(n, dtype=lib.float64), lib.randint(0, 9, (n,))]
            out.append(lib.randperm(n))
        return out
    _both(torch, seed, draw)


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_samplers_match_pytorch(torch: Any, seed: int, dtype: str) -> None:
    skip_unless_avx2_normal(torch)
    skip_if_mkl_bernoulli(torch)
    def draw(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        outs = []
        for n in (1, 16, 19, 300):
            outs += [lib.empty(n, dtype=dt).uniform_(-2.5, 0.75), lib.empty(n, dtype=dt).normal_(0.5, 3.0),
                     lib.empty(n, dtype=dt).exponential_(2.5), lib.empty(n, dtype=dt).geometric_(0.3),
                     lib.empty(n, dtype=dt).log_normal_(0.2, 0.5), lib.empty(n, dtype=dt).cauchy_(1.0, 2.0),
                     lib.empty(n, dtype=dt).random_(), lib.empty(n, dtype=dt).random_(100),
                     lib.empty(n, dtype=dt).random_(-20, 20), lib.empty(n, dtype=dt).bernoulli_(0.3)]
        return outs
    _both(torch, seed, draw)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_integer_random_matches_pytorch(torch: Any, dtype: str) -> None:
    skip_if_mkl_bernoulli(torch)
    def draw(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        out = [lib.empty(50, dtype=dt).random_(), lib.empty(50, dtype=dt).random_(2),
               lib.empty(50, dtype=dt).random_(0, None), lib.empty(50, dtype=dt).bernoulli_(0.5)]
        if dtype != "bool":
            out.append(lib.empty(50, dtype=dt).geometric_(0.5))
        return out
    _both(torch, 11, draw)


def test_non_contiguous_targets_fill_in_memory_order(torch: Any) -> None:
    def draw(lib: Any) -> Any:
        a = lib.zeros(6, 5)
        a.t().uniform_()
        b = lib.zeros(6, 5)
        b.t().normal_()  # non-contiguous: the per-element path even for 30 elements
        c = lib.zeros(8, 6)
        c[:, 1:4].normal_()
        d = lib.zeros(4, 3, dtype=lib.float64)
        d.t().random_(0, 50)
        return a, b, c, d
    _both(torch, 2, draw)


@pytest.mark.parametrize("seed", [0, 9])
def test_bernoulli_matches_pytorch(torch: Any, seed: int) -> None:
    skip_if_mkl_bernoulli(torch)
    def draw(lib: Any) -> Any:
        p32 = lib.linspace(0, 1, 40).reshape(5, 8)
        p64 = lib.linspace(0, 1, 33, dtype=lib.float64)
        return (lib.bernoulli(p32), p32.bernoulli(), lib.bernoulli(p64), lib.bernoulli(p32, 0.25),
                lib.zeros(5, 8).bernoulli_(p32), lib.zeros(5, 8, dtype=lib.int64).bernoulli_(p64[:8]),
                p32.bernoulli(0.9), lib.bernoulli(p32.t()))
    _both(torch, seed, draw)


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_matches_pytorch(torch: Any, seed: int, dtype: str) -> None:
    def draw(lib: Any) -> Any:
        w = lib.tensor([[0.1, 2.0, 0.0, 3.5, 1.0, 0.4], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                        [0.0, 0.0, 5.0, 0.0, 0.0, 1e-3]], dtype=getattr(lib, dtype))
        return (lib.multinomial(w, 1), lib.multinomial(w[:2], 4), lib.multinomial(w[:2], 6), lib.multinomial(w, 2),
                lib.multinomial(w, 20, replacement=True), w[0].multinomial(3), w[1].multinomial(50, True),
                lib.multinomial(w[2], 1, True))
    _both(torch, seed, draw)


@pytest.mark.parametrize("seed", [0, 8])
def test_poisson_and_binomial_match_pytorch(torch: Any, seed: int) -> None:
    def draw(lib: Any) -> Any:
        rates = lib.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 400.0, 1e4])
        counts = lib.tensor([0.0, 1.0, 5.0, 20.0, 100.0, 1000.0, 50.0, 7.0])
        probs = lib.tensor([0.5, 0.3, 0.9, 0.5, 0.02, 0.7, 1.0, 0.0])
        return (lib.poisson(rates), lib.poisson(rates.double()), lib.binomial(counts, probs),
                lib.binomial(counts.double(), probs.double()))
    _both(torch, seed, draw)


def test_like_factories_match_pytorch(torch: Any) -> None:
    skip_unless_avx2_normal(torch)
    def draw(lib: Any) -> Any:
        x = lib.zeros(4, 9)
        i = lib.zeros(3, 3, dtype=lib.int32)
        return (lib.rand_like(x), lib.randn_like(x), lib.randn_like(x, dtype=lib.float64), lib.randint_like(x, 5),
                lib.randint_like(i, -3, 3), lib.rand_like(x, dtype=lib.float16))
    _both(torch, 21, draw)


def test_generator_objects_match_pytorch(torch: Any) -> None:
    skip_unless_avx2_normal(torch)
    g_t, g_r = torch.Generator().manual_seed(99), rg.Generator().manual_seed(99)
    torch.manual_seed(0)
    rg.manual_seed(0)
    for lib in (torch, rg):
        lib.rand(3)  # the default stream moves; the generator's does not
    pairs = [(torch.randn(5, generator=g_t), rg.randn(5, generator=g_r)),
             (torch.rand(20, generator=g_t), rg.rand(20, generator=g_r)),
             (torch.randint(0, 4, (6,), generator=g_t), rg.randint(0, 4, (6,), generator=g_r)),
             (torch.randperm(9, generator=g_t), rg.randperm(9, generator=g_r)),
             (torch.empty(7).normal_(generator=g_t), rg.empty(7).normal_(generator=g_r)),
             (torch.bernoulli(torch.full((9,), 0.5), generator=g_t), rg.bernoulli(rg.full((9,), 0.5), generator=g_r)),
             (torch.multinomial(torch.ones(5), 3, generator=g_t), rg.multinomial(rg.ones(5), 3, generator=g_r)),
             (torch.rand(4), rg.rand(4))]
    for ours, theirs in pairs:
        _same(ours, theirs)
    assert g_r.initial_seed() == g_t.initial_seed() == 99
    assert rg.Generator().initial_seed() == torch.Generator().initial_seed()
    assert rg.Generator().manual_seed(-5).initial_seed() == torch.Generator().manual_seed(-5).initial_seed()


def test_state_layout_matches_pytorch(torch: Any) -> None:
    """get_rng_state is PyTorch's 5056-byte layout: states move between the libraries."""
    for draws in (0, 1, 3, 623, 624, 625, 2000):
        torch.manual_seed(17)
        rg.manual_seed(17)
        torch.randint(0, 2, (draws,))
        rg.randint(0, 2, (draws,))
        torch.randn(3)  # leaves a cached normal
        rg.randn(3)
        _same(rg.get_rng_state(), torch.get_rng_state())
    rg.set_rng_state(rg.tensor(torch.get_rng_state().numpy()))
    _same(rg.randn(5), torch.randn(5))
    torch.set_rng_state(torch.from_numpy(rg.get_rng_state().numpy().copy()))
    _same(rg.rand(40), torch.rand(40))


def test_state_round_trip_replays_the_stream() -> None:
    g = rg.Generator().manual_seed(5)
    rg.randn(3, generator=g)
    state = g.get_state()
    first = (rg.randn(1, generator=g), rg.rand(20, generator=g), rg.randperm(10, generator=g))
    g.set_state(state)
    again = (rg.randn(1, generator=g), rg.rand(20, generator=g), rg.randperm(10, generator=g))
    for a, b in zip(first, again, strict=True):
        assert rg.equal(a, b)
    rg.manual_seed(3)
    saved = rg.get_rng_state()
    a = rg.rand(4)
    rg.set_rng_state(saved)
    assert rg.equal(a, rg.rand(4))
    with rg.random.fork_rng():
        rg.rand(10)
    assert rg.equal(rg.rand(2), (rg.set_rng_state(saved), rg.rand(6))[1][4:])


def test_seed_and_initial_seed(torch: Any) -> None:
    rg.manual_seed(123)
    assert rg.initial_seed() == 123
    s = rg.seed()
    assert rg.initial_seed() == s and 0 <= s < 2**64
    assert rg.random.initial_seed() == s
    rg.manual_seed(2**64 - 1)
    torch.manual_seed(2**64 - 1)
    _same(rg.rand(3), torch.rand(3))
    assert rg.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()


ERRORS = [
    lambda lib: lib.Generator().manual_seed(2**64),
    lambda lib: lib.Generator().manual_seed(-2**63 - 1),
    lambda lib: lib.Generator().manual_seed(1.5),
    lambda lib: lib.set_rng_state(lib.zeros(5056)),
    lambda lib: lib.set_rng_state(lib.zeros(10, dtype=lib.uint8)),
    lambda lib: lib.Generator().set_state(lib.zeros(5056, dtype=lib.uint8)),
    lambda lib: lib.empty(3).uniform_(2, 1),
    lambda lib: lib.empty(3).uniform_(0, float("inf")),
    lambda lib: lib.empty(3, dtype=lib.float16).uniform_(-60000, 60000),
    lambda lib: lib.empty(3).normal_(0, -1),
    lambda lib: lib.empty(3, dtype=lib.int64).normal_(),
    lambda lib: lib.empty(3, dtype=lib.int64).uniform_(),
    lambda lib: lib.empty(3).exponential_(-1),
    lambda lib: lib.empty(3).exponential_(0),
    lambda lib: lib.empty(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.empty(3).geometric_(0),
    lambda lib: lib.empty(3).geometric_(1),
    lambda lib: lib.empty(3).log_normal_(0, 0),
    lambda lib: lib.empty(3).cauchy_(0, -1),
    lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(3).random_(5, 3),
    lambda lib: lib.empty(3, dtype=lib.uint8).random_(0, 300),
    lambda lib: lib.empty(3, dtype=lib.uint8).random_(-1, 3),
    lambda lib: lib.empty(3).bernoulli_(1.5),
    lambda lib: lib.empty(3).bernoulli_(lib.tensor([0.5, 2.0, 0.1])),
    lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 3),
    lambda lib: lib.multinomial(lib.tensor([1.0, -2.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, -2.0]), 1, True),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1, True),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 1, True),
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.poisson(lib.tensor([-1.0])),
    lambda lib: lib.poisson(lib.tensor([1])),
    lambda lib: lib.normal(0.0, -1.0, (3,)),
    lambda lib: lib.normal(lib.zeros(3), lib.tensor([1.0, -1.0, 1.0])),
    lambda lib: lib.normal(lib.zeros(3), -1.0),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.int64), 1.0),
    lambda lib: lib.randint(3, 3, (2,)),
    lambda lib: lib.rand(2, dtype=lib.int64),
    lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.zeros(3, requires_grad=True).uniform_(),
    lambda lib: lib.zeros(3, requires_grad=True).normal_(),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_pytorch(torch: Any, case: int) -> None:
    assert outcome(lambda: ERRORS[case](rg)) == outcome(lambda: ERRORS[case](torch))


def test_failed_bernoulli_advances_like_pytorch(torch: Any) -> None:
    """PyTorch's kernel checks each probability as it reaches it: the draws before count."""
    def draw(lib: Any) -> Any:
        with pytest.raises(RuntimeError):
            lib.bernoulli(lib.tensor([0.5, 0.1, 0.2, 2.0, 0.3]))
        return lib.rand(3)
    _both(torch, 0, draw)


def test_empty_draws_leave_the_stream_alone(torch: Any) -> None:
    _both(torch, 0, lambda lib: (lib.rand(0), lib.randn(0, 3), lib.empty(0).uniform_(), lib.randperm(1),
                                 lib.rand(2)))


def test_generator_keyword_is_type_checked() -> None:
    assert outcome(lambda: rg.empty(2).normal_(generator=5)) == \
        ("TypeError", "normal_(): argument 'generator' must be torch.Generator, not int")
    with pytest.raises(RuntimeError):
        rg.Generator("cuda")


CALL_FORMS = [
    "L.randint(high=5, size=(3,))", "L.randint(low=2, high=5, size=(3,))", "L.randint(5, size=(3,))",
    "L.randint(2, 5, size=[2, 2])", "L.randint(5, (3,), dtype=L.float64)", "L.randperm(5, dtype=L.int32)",
    "L.rand(2, 3, requires_grad=True)", "L.randn((2, 3))", "L.rand([])", "L.normal(mean=L.zeros(2), std=L.ones(2))",
    "L.normal(2.0, 3.0, size=(2,))", "L.bernoulli(L.full((3,), 0.5), p=0.2)", "L.randint_like(L.zeros(3), high=4)",
    "L.randint_like(L.zeros(3), low=1, high=4)", "L.zeros(4).random_(to=5)", "L.zeros(4).random_(**{'from': 2, 'to': 9})",
    "L.zeros(4).uniform_(**{'from': 2, 'to': 9})", "L.zeros(4).uniform_(to=3)", "L.zeros(4).normal_(std=2.0)",
    "L.zeros(3).exponential_(lambd=2.0)", "L.zeros(5, dtype=L.int64).random_(-2**63, None)",
    "L.zeros(5).random_(3, None)",
]


@pytest.mark.parametrize("call", CALL_FORMS)
def test_call_forms_match_pytorch(torch: Any, call: str) -> None:
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        r = eval(call, {"L": lib})
        return str(r.dtype), r.tolist(), r.requires_grad
    assert run(rg) == run(torch)


def test_sampler_nodes_and_zero_gradients_match_pytorch(torch: Any) -> None:
    """A sampler recorded by autograd is its own node (NormalBackward0...) with zero gradients."""
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        a = lib.ones(3, requires_grad=True)
        names = []
        for call in ["normal_()", "uniform_()", "random_()", "random_(0, 5)", "random_(5)", "exponential_()",
                     "geometric_(0.5)", "log_normal_()", "cauchy_()", "bernoulli_(0.5)",
                     "bernoulli_(L.full((3,), 0.5, requires_grad=True))"]:
            x = a * 1
            eval("x." + call, {"x": x, "L": lib})
            names.append(type(x.grad_fn).__name__)
            x.sum().backward()
        m = lib.zeros(3, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        outs = [lib.normal(m, 1.0), lib.normal(1.0, s), lib.normal(m, s), lib.bernoulli(m + 0.5), lib.poisson(s * 2)]
        for y in outs:
            names.append(type(y.grad_fn).__name__)
            y.sum().backward()
        return names, a.grad.tolist(), m.grad.tolist(), s.grad.tolist(), [y.tolist() for y in outs]
    assert run(rg) == run(torch)
