"""Learning-rate schedulers against real PyTorch: the lr sequence, get_last_lr, state_dict,
closed forms (step(epoch)) and errors."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome


def two_group_optimizer(lib: Any) -> Any:
    a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0, momentum=0.9)


SCHEDULERS = [
    "StepLR(opt, step_size=3)",
    "StepLR(opt, step_size=2, gamma=0.5)",
    "MultiStepLR(opt, milestones=[2, 5, 5, 8], gamma=0.3)",
    "ExponentialLR(opt, gamma=0.9)",
    "CosineAnnealingLR(opt, T_max=4)",
    "CosineAnnealingLR(opt, T_max=5, eta_min=0.1)",
    "LambdaLR(opt, lambda e: 1.0 / (e + 1))",
    "LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: e + 1])",
]


def run(lib: Any, spec: str, epochs: int = 14) -> tuple[list[list[float]], dict[str, Any]]:
    opt = two_group_optimizer(lib)
    sched = eval(f"lib.optim.lr_scheduler.{spec}", {"lib": lib, "opt": opt})
    lrs = [list(sched.get_last_lr())]
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()))
        assert [g["lr"] for g in opt.param_groups] == lrs[-1]
    return lrs, sched.state_dict()


@pytest.mark.parametrize("spec", SCHEDULERS)
def test_lr_sequence_matches_torch(torch: Any, spec: str) -> None:
    ours, sd_r = run(rg, spec)
    theirs, sd_t = run(torch, spec)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    assert list(sd_r) == list(sd_t)
    for key in sd_t:
        if key != "lr_lambdas":
            assert sd_r[key] == pytest.approx(sd_t[key]) if isinstance(sd_t[key], list) else sd_r[key] == sd_t[key]
    assert sd_r.get("lr_lambdas") == sd_t.get("lr_lambdas")


@pytest.mark.parametrize("spec", ["StepLR(opt, step_size=3, gamma=0.5)", "MultiStepLR(opt, [2, 4])",
                                  "ExponentialLR(opt, 0.8)", "CosineAnnealingLR(opt, 6, 0.01)"])
def test_closed_form_epoch_matches_torch(torch: Any, spec: str) -> None:
    results = []
    for lib in (rg, torch):
        opt = two_group_optimizer(lib)
        sched = eval(f"lib.optim.lr_scheduler.{spec}", {"lib": lib, "opt": opt})
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 5, 1, 7):
                opt.step()
                sched.step(epoch)
                seq.append(sched.get_last_lr())
        results.append(seq)
    for a, b in zip(*results, strict=True):
        assert a == pytest.approx(b)


def test_state_dict_resume(torch: Any) -> None:
    opt = two_group_optimizer(rg)
    sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    saved = sched.state_dict()
    opt2 = two_group_optimizer(rg)
    opt2.load_state_dict(opt.state_dict())
    sched2 = rg.optim.lr_scheduler.StepLR(opt2, step_size=7, gamma=0.1, last_epoch=saved["last_epoch"])
    sched2.load_state_dict(saved)
    for _ in range(4):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched.get_last_lr() == sched2.get_last_lr()


def test_reduce_lr_on_plateau_matches_torch(torch: Any) -> None:
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    results = []
    for lib in (rg, torch):
        opt = two_group_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=[0.2, 0.0])
        seq = []
        for m in metrics:
            opt.step()
            sched.step(lib.tensor(m))
            seq.append(sched.get_last_lr())
        results.append((seq, sorted(sched.state_dict())))
    assert results[0] == results[1]
    for lib in (rg, torch):
        opt = two_group_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", threshold_mode="abs", threshold=0.1,
                                                         patience=0)
        seq = []
        for m in (1.0, 1.05, 1.2, 1.25):
            sched.step(m)
            seq.append(sched.get_last_lr())
        results.append(seq)
    assert results[2] == results[3]


def test_errors_and_warnings_match_torch(torch: Any) -> None:
    def cases(lib: Any) -> list[Any]:
        s = lib.optim.lr_scheduler
        return [
            lambda: s.StepLR(object(), 2),
            lambda: s.StepLR(two_group_optimizer(lib), 2, last_epoch=3),
            lambda: s.LambdaLR(two_group_optimizer(lib), [lambda e: 1.0]),
            lambda: s.ReduceLROnPlateau(two_group_optimizer(lib), factor=1.0),
            lambda: s.ReduceLROnPlateau(two_group_optimizer(lib), mode="avg"),
            lambda: s.ReduceLROnPlateau(two_group_optimizer(lib), threshold_mode="x"),
            lambda: s.ReduceLROnPlateau(two_group_optimizer(lib), min_lr=[0.1]),
        ]

    for ours, theirs in zip(cases(rg), cases(torch), strict=True):
        assert outcome(ours) == outcome(theirs)
    opt = two_group_optimizer(rg)
    sched = rg.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
