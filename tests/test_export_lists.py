"""Export lists kept once: a package re-exports a submodule's ``__all__`` instead of listing its
names again (grad modes, the c10d collectives, the distribution transforms)."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
import retrograd.autograd as autograd
import retrograd.autograd.grad_mode as grad_mode
import retrograd.distributed as distributed
import retrograd.distributed._c10d as c10d
import retrograd.distributions as distributions
import retrograd.distributions.transforms as transforms

# (package, submodule whose __all__ the package re-exports, the torch package it stands for)
_REEXPORTS = [
    (rg, grad_mode, "torch"),
    (autograd, grad_mode, "torch"),  # torch.autograd itself lacks is_grad_enabled; torch has all six
    (distributed, c10d, "torch.distributed"),
    (distributions, transforms, "torch.distributions"),
]


@pytest.mark.parametrize(("package", "sub", "torch_name"), _REEXPORTS, ids=lambda v: getattr(v, "__name__", v))
def test_package_reexports_the_submodules_own_list(package: Any, sub: Any, torch_name: str) -> None:
    names = sub.__all__
    assert len(set(names)) == len(names)
    public = {n for n in vars(sub) if not n.startswith("_") and getattr(vars(sub)[n], "__module__", None) == sub.__name__}
    assert set(names) <= public  # only what the submodule itself defines
    for name in names:
        assert getattr(package, name) is getattr(sub, name)
    if package is not rg:  # (torch.autograd leaves these two to torch's own list; so does ours)
        left_out = {"is_grad_enabled", "is_inference_mode_enabled"} if package is autograd else set()
        assert set(names) - left_out <= set(package.__all__)


@pytest.mark.parametrize(("package", "sub", "torch_name"), _REEXPORTS, ids=lambda v: getattr(v, "__name__", v))
def test_reexported_names_are_torchs(torch: Any, package: Any, sub: Any, torch_name: str) -> None:
    import importlib

    theirs = importlib.import_module(torch_name)
    missing = [n for n in sub.__all__ if not hasattr(theirs, n)]
    assert missing == []


@pytest.mark.parametrize("package", [autograd, distributed, distributions], ids=lambda m: m.__name__)
def test_every_listed_name_resolves_once(package: Any) -> None:
    assert len(set(package.__all__)) == len(package.__all__)
    for name in package.__all__:
        getattr(package, name)


def test_star_import_of_a_package_gives_its_list() -> None:
    for package in (autograd, distributed, distributions):
        scope: dict[str, Any] = {}
        exec(f"from {package.__name__} import *", scope)
        assert set(scope) - {"__builtins__"} == set(package.__all__)


def test_private_collective_name_still_reachable() -> None:
    # PyTorch code reaches for this private name; the star import must not be its only route
    assert distributed._make_nccl_premul_sum is c10d._make_nccl_premul_sum
