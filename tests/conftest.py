"""Shared test setup: the op database is importable, and PyTorch is the reference when present.

With ``RETROGRAD_REQUIRE_TORCH=1`` (CI), tests that need PyTorch fail instead of skipping.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def torch_or_skip() -> Any:
    try:
        import torch
    except ImportError:
        if os.environ.get("RETROGRAD_REQUIRE_TORCH") == "1":
            pytest.fail("PyTorch is required (RETROGRAD_REQUIRE_TORCH=1) but is not installed")
        pytest.skip("PyTorch is not installed")
    torch.set_num_threads(1)
    return torch


def outcome(fn: Any) -> tuple[str, str]:
    """(exception type, message) or ('ok', ''): what a call does, to compare between libraries.
    What retrograd adds after PyTorch's message (" [retrograd] ...", e.g. where the backward that
    freed a graph ran) is left out: PyTorch's part must match exactly."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split(" [retrograd]")[0]
    return "ok", ""


@pytest.fixture
def torch() -> Any:
    return torch_or_skip()
