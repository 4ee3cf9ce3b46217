"""Argument/sample validation, shapes, expand and constraints of retrograd.distributions vs PyTorch."""
from __future__ import annotations

import pytest

import retrograd as rg
from conftest import outcome, torch_or_skip

ERROR_CASES = [
    lambda L: L.distributions.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Normal(0.0, 1.0).log_prob(1.0),
    lambda L: L.distributions.Categorical(L.tensor([0.5, 0.5])).log_prob(L.tensor(2)),
    lambda L: L.distributions.Uniform(1.0, 0.0),
    lambda L: L.distributions.Uniform(0.0, 1.0).log_prob(L.tensor(1.5)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2)),
    lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(1)),
    lambda L: L.distributions.Independent(L.distributions.Normal(0.0, 1.0), 1),
    lambda L: L.distributions.Distribution.set_default_validate_args(3),
    lambda L: L.distributions.Bernoulli(L.tensor(0.5), L.tensor(0.0)),
    lambda L: L.distributions.Bernoulli(L.tensor([0.5, 1.5])),
    lambda L: L.distributions.Bernoulli(L.tensor(0.5)).log_prob(L.tensor(0.5)),
    lambda L: L.distributions.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    lambda L: L.distributions.Dirichlet(L.ones(2)).log_prob(L.ones(3)),
    lambda L: L.distributions.Dirichlet(L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Dirichlet(L.ones(2)).log_prob(L.tensor([0.5, 0.6])),
    lambda L: L.distributions.Gamma(L.tensor([1.0]), L.tensor([0.0])),
    lambda L: L.distributions.Beta(L.tensor([1.0]), L.tensor([-2.0])),
    lambda L: L.distributions.Poisson(L.tensor([-1.0])),
    lambda L: L.distributions.Poisson(L.tensor([1.0])).log_prob(L.tensor([0.5])),
    lambda L: L.distributions.Exponential(L.tensor([1.0])).log_prob(L.tensor([-0.5])),
    lambda L: L.distributions.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    lambda L: L.distributions.Binomial(3, L.tensor([0.5])).log_prob(L.tensor([4.0])),
    lambda L: L.distributions.Categorical(L.tensor(0.5)),
    lambda L: L.distributions.Multinomial(L.tensor(3), L.tensor([0.5, 0.5])),
    lambda L: L.distributions.Multinomial(3, L.tensor([0.5, 0.5])).log_prob(L.tensor([2.0, 2.0])),
    lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, 0.5])).log_prob(L.tensor([1.0, 1.0])),
    lambda L: L.distributions.Laplace(L.tensor([0.0]), L.tensor([float("nan")])),
    lambda L: L.distributions.Geometric(L.tensor([0.0, 0.5])),
    lambda L: L.distributions.StudentT(L.tensor([-1.0])),
    lambda L: L.distributions.HalfNormal(L.tensor([1.0])).log_prob(L.tensor([-1.0])),
    lambda L: L.distributions.Chi2(L.tensor([-1.0])),
    lambda L: L.distributions.Cauchy(0.0, 0.0),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(2, 1), L.ones(3)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3), L.ones(3)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.tensor([1.0, 1.0, -0.5])),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors_match_torch(i: int) -> None:
    torch = torch_or_skip()
    ours = outcome(lambda: ERROR_CASES[i](rg))
    theirs = outcome(lambda: ERROR_CASES[i](torch))
    assert ours == theirs
    assert ours[0] != "ok"


def test_validation_can_be_switched_off() -> None:
    n = rg.distributions.Normal(rg.tensor([0.0]), rg.tensor([-1.0]), validate_args=False)
    assert n.scale.item() == -1.0
    try:
        rg.distributions.Distribution.set_default_validate_args(False)
        rg.distributions.Normal(rg.tensor([0.0]), rg.tensor([-1.0]))
        assert rg.distributions.Uniform(0.0, 1.0).log_prob(rg.tensor(2.0)).item() == float("-inf")
    finally:
        rg.distributions.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        rg.distributions.Normal(rg.tensor([0.0]), rg.tensor([-1.0]))


SHAPE_CASES = [
    lambda L: L.distributions.Normal(L.zeros(3, 1), L.ones(4)),
    lambda L: L.distributions.Bernoulli(logits=L.zeros(2, 3)),
    lambda L: L.distributions.Categorical(logits=L.zeros(2, 4)),
    lambda L: L.distributions.OneHotCategorical(L.ones(2, 4)),
    lambda L: L.distributions.Dirichlet(L.ones(2, 3)),
    lambda L: L.distributions.Beta(L.ones(3), 2.0),
    lambda L: L.distributions.Gamma(L.ones(3), 2.0),
    lambda L: L.distributions.Multinomial(5, L.ones(2, 3)),
    lambda L: L.distributions.Binomial(5, L.full((2,), 0.3)),
    lambda L: L.distributions.Poisson(L.ones(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(4, 1, 2), L.eye(2).expand(3, 2, 2)),
    lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(2, 3, 4), 1.0), 2),
    lambda L: L.distributions.Exponential(L.ones(2)),
    lambda L: L.distributions.Laplace(L.zeros(2), 1.0),
    lambda L: L.distributions.Uniform(L.zeros(2), 1.0),
    lambda L: L.distributions.Cauchy(L.zeros(2), 1.0),
    lambda L: L.distributions.Chi2(L.ones(2)),
    lambda L: L.distributions.StudentT(L.full((2,), 3.0)),
    lambda L: L.distributions.Gumbel(L.zeros(2), 1.0),
    lambda L: L.distributions.Geometric(L.full((2,), 0.3)),
    lambda L: L.distributions.HalfNormal(L.ones(2)),
    lambda L: L.distributions.LogNormal(L.zeros(2), 1.0),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2, 3), L.ones(3, 2), L.ones(3)),
]


@pytest.mark.parametrize("i", range(len(SHAPE_CASES)))
def test_shapes_expand_and_support_match_torch(i: int) -> None:
    torch = torch_or_skip()
    ours, theirs = SHAPE_CASES[i](rg), SHAPE_CASES[i](torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert repr(ours.support) == repr(theirs.support)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    rg.manual_seed(0)
    s = ours.sample((5,))
    assert tuple(s.shape) == (5,) + tuple(theirs.batch_shape) + tuple(theirs.event_shape)
    assert str(s.dtype) == str(theirs.sample((5,)).dtype)
    assert bool(ours.support.check(s).all())
    big = (6,) + tuple(theirs.batch_shape)
    e_ours, e_theirs = ours.expand(big), theirs.expand(big)
    assert type(e_ours).__name__ == type(e_theirs).__name__
    assert tuple(e_ours.batch_shape) == tuple(e_theirs.batch_shape)
    lp_o = e_ours.log_prob(e_ours.sample())
    assert tuple(lp_o.shape) == tuple(e_theirs.log_prob(e_theirs.sample()).shape)
    if theirs.has_enumerate_support:
        assert tuple(ours.enumerate_support().shape) == tuple(theirs.enumerate_support().shape)
        assert tuple(ours.enumerate_support(False).shape) == tuple(theirs.enumerate_support(False).shape)


CONSTRAINT_VALUES = [
    [0.5, -1.0, 0.0, float("nan")], [[0.2, 0.8], [0.5, 0.6]], [[1.0, 0.0], [0.0, 1.0]],
    [[[2.0, 0.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]], [[1.0, 0.0], [1.0, 1.0]], [0.0, 1.0, 2.0, 2.5],
]
CONSTRAINTS = [
    lambda C: C.real, lambda C: C.positive, lambda C: C.nonnegative, lambda C: C.unit_interval,
    lambda C: C.boolean, lambda C: C.nonnegative_integer, lambda C: C.positive_integer,
    lambda C: C.greater_than(0.3), lambda C: C.greater_than_eq(0.5), lambda C: C.less_than(0.3),
    lambda C: C.interval(-0.5, 0.5), lambda C: C.half_open_interval(0.0, 1.0),
    lambda C: C.integer_interval(0, 2), lambda C: C.simplex, lambda C: C.real_vector,
    lambda C: C.one_hot, lambda C: C.lower_triangular, lambda C: C.lower_cholesky,
    lambda C: C.positive_definite, lambda C: C.positive_semidefinite, lambda C: C.symmetric,
    lambda C: C.square, lambda C: C.multinomial(1), lambda C: C.independent(C.positive, 1),
]


@pytest.mark.parametrize("c", range(len(CONSTRAINTS)))
def test_constraints_match_torch(c: int) -> None:
    torch = torch_or_skip()
    ours, theirs = CONSTRAINTS[c](rg.distributions.constraints), CONSTRAINTS[c](torch.distributions.constraints)
    assert repr(ours) == repr(theirs)
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete
    for v in CONSTRAINT_VALUES:
        a, b = outcome(lambda: ours.check(rg.tensor(v))), outcome(lambda: theirs.check(torch.tensor(v)))
        assert a[0] == b[0]
        if a[0] == "ok":
            assert ours.check(rg.tensor(v)).tolist() == theirs.check(torch.tensor(v)).tolist()


def test_dependent_constraints() -> None:
    C = rg.distributions.constraints
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(rg.zeros(1))
    assert C.is_dependent(rg.distributions.Binomial.support)
    assert rg.distributions.Binomial.support.is_discrete


def test_lazy_probs_logits_cached_and_gradients_flow() -> None:
    torch = torch_or_skip()
    for lib in (rg, torch):
        p = lib.tensor([0.2, 0.8], dtype=lib.float64, requires_grad=True)
        c = lib.distributions.Categorical(probs=p)
        assert c.logits is c.logits
        c.logits.sum().backward()
        if lib is rg:
            ours = p.grad.tolist()
        else:
            assert ours == pytest.approx(p.grad.tolist(), rel=1e-12)
