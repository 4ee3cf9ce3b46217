"""The warm-up, cyclic and composite LR schedulers against real PyTorch: the lr (and momentum)
sequence over 120 steps for each option grid, state_dict keys and values, round trips,
loading a torch scheduler's state dict, closed forms, warnings and errors."""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def optimizer(lib: Any, kind: str = "SGD") -> Any:
    a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    if kind == "Adam":
        return lib.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0)
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0, momentum=0.9)


S = "lib.optim.lr_scheduler."
SPECS = [
    "MultiplicativeLR(opt, lambda e: 0.97)",
    "MultiplicativeLR(opt, [lambda e: 0.9 if e % 3 else 1.1, lambda e: 1.0 - 0.001 * e])",
    "ConstantLR(opt)",
    "ConstantLR(opt, factor=0.5, total_iters=7)",
    "ConstantLR(opt, factor=0.25, total_iters=3)",
    "LinearLR(opt)",
    "LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=40)",
    "LinearLR(opt, start_factor=1.0, end_factor=0.05, total_iters=30)",
    "PolynomialLR(opt)",
    "PolynomialLR(opt, total_iters=60, power=2.5)",
    "PolynomialLR(opt, total_iters=150, power=0.5)",
    "CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=7)",
    "CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=5, step_size_down=9, mode='triangular2')",
    "CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=6, mode='exp_range', gamma=0.97, base_momentum=0.7, "
    "max_momentum=0.95)",
    "CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 1 / (1 + x), scale_mode='iterations',"
    " cycle_momentum=False)",
    "CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x)",
    "CosineAnnealingWarmRestarts(opt, T_0=10)",
    "CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)",
    "CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=3)",
    "OneCycleLR(opt, max_lr=0.1, total_steps=120)",
    "OneCycleLR(opt, max_lr=[0.1, 0.5], epochs=12, steps_per_epoch=10, pct_start=0.25, anneal_strategy='linear')",
    "OneCycleLR(opt, max_lr=0.2, total_steps=121, three_phase=True, div_factor=10.0, final_div_factor=100.0)",
    "OneCycleLR(opt, max_lr=0.2, total_steps=130, three_phase=True, anneal_strategy='linear', cycle_momentum=False)",
    "OneCycleLR(opt, max_lr=0.2, total_steps=125, base_momentum=[0.8, 0.7], max_momentum=[0.9, 0.99])",
    "SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=10), S.ExponentialLR(opt, gamma=0.97)],"
    " milestones=[10])",
    "SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=5), S.CosineAnnealingLR(opt, T_max=30),"
    " S.StepLR(opt, step_size=7, gamma=0.5)], milestones=[8, 40])",
    "SequentialLR(opt, [S.LinearLR(opt, start_factor=0.2, total_iters=5), S.PolynomialLR(opt, total_iters=50,"
    " power=2.0)], milestones=[5])",
    "ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=4), S.ExponentialLR(opt, gamma=0.98)])",
    "ChainedScheduler([S.LinearLR(opt, start_factor=0.5, total_iters=10), S.MultiStepLR(opt, [20, 50, 80]),"
    " S.MultiplicativeLR(opt, lambda e: 0.995)], optimizer=opt)",
    "ChainedScheduler([S.SequentialLR(opt, [S.LinearLR(opt, total_iters=4), S.StepLR(opt, 10)], milestones=[4]),"
    " S.ExponentialLR(opt, gamma=0.99)])",
]
ADAM_SPECS = [
    "CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=5, mode='triangular2')",
    "OneCycleLR(opt, max_lr=0.1, total_steps=120, three_phase=True)",
]


def make(lib: Any, spec: str, kind: str = "SGD") -> tuple[Any, Any]:
    opt = optimizer(lib, kind)
    scope = {"lib": lib, "opt": opt, "S": lib.optim.lr_scheduler}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SequentialLR's inner schedulers warn as in torch
        sched = eval(S + spec.replace("S.", S), scope)
    return opt, sched


def momenta(opt: Any) -> list[Any]:
    return [g.get("momentum", g.get("betas")) for g in opt.param_groups]


def run(opt: Any, sched: Any, steps: int) -> list[Any]:
    seq = [(list(sched.get_last_lr()), momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), momenta(opt)))
        assert [g["lr"] for g in opt.param_groups] == seq[-1][0]
    return seq


def plain(value: Any) -> Any:
    """A state dict with functions replaced by a marker (they cannot compare across libraries)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if callable(value):
        return "<callable>"
    return value


def assert_same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same(a, b)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    else:
        assert ours == theirs


def steps_for(spec: str) -> int:
    return 119 if spec.startswith("OneCycleLR(opt, max_lr=0.1, total_steps=120") else 120


@pytest.mark.parametrize("spec", SPECS, ids=[s[:40] for s in SPECS])
def test_sequence_and_state_dict_match_torch(torch: Any, spec: str) -> None:
    seqs, sds = [], []
    for lib in (rg, torch):
        opt, sched = make(lib, spec)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            seqs.append(run(opt, sched, steps_for(spec)))
        sds.append(plain(sched.state_dict()))
    assert_same(seqs[0], seqs[1])
    assert_same(sds[0], sds[1])


@pytest.mark.parametrize("spec", ADAM_SPECS)
def test_beta1_cycling_matches_torch(torch: Any, spec: str) -> None:
    seqs = [run(*make(lib, spec, "Adam"), steps_for(spec)) for lib in (rg, torch)]
    assert_same(seqs[0], seqs[1])


@pytest.mark.parametrize("spec", SPECS[::2], ids=[s[:40] for s in SPECS[::2]])
def test_load_torch_state_dict_and_round_trip(torch: Any, spec: str) -> None:
    """Stopping torch's scheduler after 37 steps and loading its state dict (and the optimizer's
    lrs and momenta) into ours gives torch's next 60 values; so does our own state dict saved and
    loaded into a fresh scheduler."""
    opt_t, sched_t = make(torch, spec)
    run(opt_t, sched_t, 37)
    saved = sched_t.state_dict()
    mine = []
    for source in ("torch", "ours"):
        opt_r, sched_r = make(rg, spec)
        if source == "ours":
            run(opt_r, sched_r, 37)
            saved_r = copy.deepcopy(sched_r.state_dict())
            opt_r, sched_r = make(rg, spec)
            sched_r.load_state_dict(saved_r)
        else:
            sched_r.load_state_dict(copy.deepcopy(saved))
        for g, h in zip(opt_r.param_groups, opt_t.param_groups, strict=True):
            g.update({k: v for k, v in h.items() if k != "params"})
        mine.append(run(opt_r, sched_r, 60))
    theirs = run(opt_t, sched_t, 60)
    assert_same(mine[0], theirs)
    assert_same(mine[1], theirs)


CLOSED = [
    "ConstantLR(opt, factor=0.5, total_iters=4)",
    "LinearLR(opt, start_factor=0.2, end_factor=0.8, total_iters=6)",
    "PolynomialLR(opt, total_iters=8, power=1.5)",
]


@pytest.mark.parametrize("spec", CLOSED)
def test_closed_form_epoch_matches_torch(torch: Any, spec: str) -> None:
    out = []
    for lib in (rg, torch):
        opt, sched = make(lib, spec)
        seq = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in (3, 1, 7, 12, 5, 0):
                opt.step()
                sched.step(epoch)
                seq.append(list(sched.get_last_lr()))
        out.append((seq, sorted({str(w.message) for w in caught})))
    assert_same(out[0], out[1])


def test_warm_restarts_fractional_epochs_match_torch(torch: Any) -> None:
    out = []
    for lib in (rg, torch):
        for t_mult in (1, 2, 3):
            opt = optimizer(lib)
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=t_mult, eta_min=0.05)
            seq = []
            for epoch in (0.5, 1.25, 3.9, 4.0, 7.3, 13.0, 29.99, 2.0, 100.5):
                opt.step()
                sched.step(epoch)
                seq.append((list(sched.get_last_lr()), sched.T_cur, sched.T_i, sched.last_epoch))
            seq.append(outcome(lambda sched=sched: sched.step(-1)))
            out.append(seq)
    assert_same(out[:3], out[3:])


def test_step_before_optimizer_step_warns_as_torch(torch: Any) -> None:
    out = []
    for lib in (rg, torch):
        for spec in ("LinearLR(opt)", "OneCycleLR(opt, max_lr=0.1, total_steps=10)", "PolynomialLR(opt)"):
            opt, sched = make(lib, spec)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sched.step()
                sched.get_lr()
            out.append([(w.category.__name__, str(w.message)) for w in caught])
    assert out[:3] == out[3:]
    assert all(any("before `optimizer.step()`" in m for _, m in o) for o in out)
    assert all(any("get_last_lr()" in m for _, m in o) for o in out)


def test_one_cycle_past_total_steps_raises_as_torch(torch: Any) -> None:
    out = []
    for lib in (rg, torch):
        opt, sched = make(lib, "OneCycleLR(opt, max_lr=0.1, total_steps=5)")
        run(opt, sched, 5)
        out.append(outcome(sched.step))
    assert out[0] == out[1]
    assert out[0][0] == "ValueError"


def error_cases(lib: Any) -> list[Any]:
    S_ = lib.optim.lr_scheduler
    opt = optimizer(lib)
    other = optimizer(lib)
    plain_opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))])
    step = S_.StepLR(opt, 3)
    return [
        lambda: S_.ConstantLR(opt, factor=1.5), lambda: S_.ConstantLR(opt, factor=-0.1),
        lambda: S_.LinearLR(opt, start_factor=0.0), lambda: S_.LinearLR(opt, start_factor=1.1),
        lambda: S_.LinearLR(opt, end_factor=1.5), lambda: S_.MultiplicativeLR(opt, [lambda e: 1.0]),
        lambda: S_.MultiplicativeLR(opt, 0.5), lambda: S_.MultiplicativeLR(object(), lambda e: 1.0),
        lambda: S_.SequentialLR(opt, [], milestones=[]), lambda: S_.SequentialLR(opt, [step], milestones=[3]),
        lambda: S_.SequentialLR(opt, [step, S_.ReduceLROnPlateau(opt)], milestones=[3]),
        lambda: S_.SequentialLR(other, [step], milestones=[]), lambda: S_.SequentialLR(opt, [object()], milestones=[]),
        lambda: S_.ChainedScheduler([]), lambda: S_.ChainedScheduler([step, S_.StepLR(other, 2)]),
        lambda: S_.ChainedScheduler([S_.ReduceLROnPlateau(opt)]),
        lambda: S_.CyclicLR(opt, 0.1, 1.0, mode="other"), lambda: S_.CyclicLR(opt, [0.1], 1.0),
        lambda: S_.CyclicLR(opt, 0.1, [1.0, 2.0, 3.0]), lambda: S_.CyclicLR(plain_opt, 0.1, 1.0),
        lambda: S_.CyclicLR(object(), 0.1, 1.0),
        lambda: S_.CosineAnnealingWarmRestarts(opt, T_0=0), lambda: S_.CosineAnnealingWarmRestarts(opt, T_0=2.0),
        lambda: S_.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0),
        lambda: S_.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5),
        lambda: S_.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0"),
        lambda: S_.OneCycleLR(opt, 0.1), lambda: S_.OneCycleLR(opt, 0.1, total_steps=0),
        lambda: S_.OneCycleLR(opt, 0.1, total_steps=5.0), lambda: S_.OneCycleLR(opt, 0.1, epochs=0, steps_per_epoch=2),
        lambda: S_.OneCycleLR(opt, 0.1, epochs=2, steps_per_epoch=-1),
        lambda: S_.OneCycleLR(opt, 0.1, total_steps=5, pct_start=1.5),
        lambda: S_.OneCycleLR(opt, 0.1, total_steps=5, pct_start=1),
        lambda: S_.OneCycleLR(opt, 0.1, total_steps=5, anneal_strategy="exp"),
        lambda: S_.OneCycleLR(opt, [0.1], total_steps=5), lambda: S_.OneCycleLR(plain_opt, 0.1, total_steps=5),
        lambda: S_.OneCycleLR(object(), 0.1, total_steps=5),
        lambda: S_.LinearLR(optimizer(lib), last_epoch=3),
    ]


def test_errors_match_torch(torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = list(zip(error_cases(rg), error_cases(torch), strict=True))
        for i, (ours, theirs) in enumerate(pairs):
            a, b = outcome(ours), outcome(theirs)
            if a[0] == b[0] == "ValueError" and "which is different from" in str(b[1]):
                # The message names the optimizer's repr (its memory address differs).
                a, b = (a[0], str(a[1]).split(" has ")[0]), (b[0], str(b[1]).split(" has ")[0])
            assert a == b, i


def test_one_cycle_and_cyclic_set_group_keys_as_torch(torch: Any) -> None:
    out = []
    for lib in (rg, torch):
        for spec in ("OneCycleLR(opt, max_lr=[0.1, 0.3], total_steps=10)", "CyclicLR(opt, 0.01, 0.1)"):
            opt, _ = make(lib, spec)
            out.append([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
    assert_same(out[:2], out[2:])
    assert math.isclose(out[0][0]["min_lr"], 0.1 / 25 / 1e4)


@pytest.mark.parametrize("name", ["LinearLR", "ConstantLR", "SequentialLR", "ChainedScheduler", "OneCycleLR",
                                  "CosineAnnealingWarmRestarts", "CyclicLR", "PolynomialLR", "MultiplicativeLR"])
def test_signature_matches_torch(torch: Any, name: str) -> None:
    import inspect

    def params(cls: Any) -> list[Any]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]

    assert params(getattr(rg.optim.lr_scheduler, name)) == params(getattr(torch.optim.lr_scheduler, name))
