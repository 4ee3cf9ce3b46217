"""The scenario runner of the autograd semantics tests (tests/autograd/test_*_semantics.py): each
scenario is a function of the library (retrograd or PyTorch) run the same way on both, and what it
returns or raises must agree."""

from __future__ import annotations

import warnings
from typing import Any

from conftest import outcome

__all__ = ["L", "outcome", "run"]


def L(t: Any) -> Any:  # noqa: N802
    """A tensor's values, flat and rounded, for comparing across libraries (None stays None)."""
    return None if t is None else [round(float(v), 5) for v in t.detach().reshape(-1).tolist()]


def run(scenario: Any, lib: Any) -> Any:
    """("ok", repr of the result, the UserWarnings' texts), or (exception type, message)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scenario(lib)
        # PyTorch's C++ warnings end with where in its sources they were raised
        messages = [str(w.message).split(" (Triggered internally at")[0] for w in caught if w.category is UserWarning]
        return "ok", repr(result), messages
    except Exception as e:  # noqa: BLE001
        # retrograd may add where a saved tensor was modified: an extension, not part of the contract
        return type(e).__name__, str(e).split(" [retrograd]")[0]
