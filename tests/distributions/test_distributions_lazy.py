"""``retrograd.distributions`` is loaded on first access, not by ``import retrograd``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_loaded_on_first_access() -> None:
    code = ("import sys, retrograd\n"
            "assert 'retrograd.distributions' not in sys.modules\n"
            "n = retrograd.distributions.Normal(0.0, 1.0)\n"
            "assert 'retrograd.distributions' in sys.modules\n"
            "print(type(n).__module__)")
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "retrograd.distributions.normal"
