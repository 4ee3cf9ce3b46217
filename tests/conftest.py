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


@pytest.fixture
def torch() -> Any:
    return torch_or_skip()
