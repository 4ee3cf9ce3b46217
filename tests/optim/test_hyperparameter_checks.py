"""The constructors' hyperparameter checks (one table in ``optim/_common.py``) give PyTorch's
exception and message, the first failing check first, as PyTorch orders them."""

from __future__ import annotations

from typing import Any

import pytest

import retrograd as rg
from conftest import outcome

CASES = [
    ("NAdam", {"lr": -1}), ("NAdam", {"betas": (1.0, 0.9)}), ("NAdam", {"betas": (0.9, 1.5)}),
    ("NAdam", {"momentum_decay": -1}), ("NAdam", {"eps": -1, "weight_decay": -1}),
    ("RAdam", {"weight_decay": -1, "betas": (2.0, 0.9)}), ("Adamax", {"weight_decay": -1}),
    ("Adamax", {"lr": -0.5, "eps": -1}), ("Adadelta", {"rho": 2}), ("Adadelta", {"rho": -0.1, "eps": -1}),
    ("ASGD", {"weight_decay": -1}), ("Rprop", {"etas": (1.5, 2)}), ("Rprop", {"lr": -1, "etas": (1.5, 2)}),
    ("RAdam", {"lr": [1.0, 2.0]}), ("NAdam", {"lr": 0.1}),
]


@pytest.mark.parametrize(("name", "kwargs"), CASES)
def test_constructor_checks_match_pytorch(torch: Any, name: str, kwargs: dict[str, Any]) -> None:
    def make(lib: Any) -> Any:
        given = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        return lambda: getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **given) and None

    assert outcome(make(rg)) == outcome(make(torch))
