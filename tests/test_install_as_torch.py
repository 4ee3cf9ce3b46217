"""retrograd.install_as_torch(): PyTorch programs run with their import lines unchanged.

Each check runs in a fresh interpreter: the test process itself has the real torch imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from tests.conftest import torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "porting" / "torch_training_script.py"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


def test_unchanged_training_script_matches_pytorch() -> None:
    torch_or_skip()
    real = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert real.returncode == 0, real.stderr
    ours = _run(f"""
        import runpy, retrograd
        retrograd.install_as_torch()
        runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
        import sys
        assert "torch.nn" in sys.modules and sys.modules["torch"] is retrograd
        """)
    assert ours.returncode == 0, ours.stderr
    want, got = json.loads(real.stdout), json.loads(ours.stdout)
    assert (want["torch"], got["torch"]) == ("torch", "retrograd")
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["test_loss"], want["test_loss"], rtol=1e-5)
    assert got["correct"] == want["correct"]
    np.testing.assert_allclose(got["lr"], want["lr"], rtol=1e-12)


def test_import_lines_resolve_to_retrograd_modules() -> None:
    result = _run("""
        import sys, retrograd
        assert "torch" not in sys.modules
        retrograd.install_as_torch()
        retrograd.install_as_torch()  # idempotent
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        import torch.backends.cudnn as cudnn
        from torch.utils.data import DataLoader, Dataset
        from torch.optim.lr_scheduler import StepLR
        from torch import linalg, autograd, testing, accelerator
        import torch.utils.checkpoint
        assert torch is retrograd and nn is retrograd.nn and F is retrograd.nn.functional
        assert optim is retrograd.optim and DataLoader is retrograd.utils.data.DataLoader
        assert StepLR is retrograd.optim.lr_scheduler.StepLR and cudnn is retrograd.backends.cudnn
        assert linalg is retrograd.linalg and testing is retrograd.testing
        assert sys.modules["torch.utils.data"] is retrograd.utils.data
        assert retrograd.nn.__spec__.name == "retrograd.nn"  # the modules keep their own identity
        try:
            import torch.no_such_module
        except ModuleNotFoundError as exc:
            print("missing:", exc.name)
        retrograd.uninstall_as_torch()
        assert "torch" not in sys.modules and "torch.nn" not in sys.modules
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "missing: torch.no_such_module"


def test_refused_when_real_torch_is_imported() -> None:
    torch_or_skip()
    result = _run("""
        import sys, torch, retrograd
        try:
            retrograd.install_as_torch()
        except RuntimeError as exc:
            print(type(exc).__name__, "|", exc)
        assert sys.modules["torch"] is torch and torch is not retrograd
        """)
    assert result.returncode == 0, result.stderr
    kind, message = result.stdout.strip().split(" | ")
    assert kind == "RuntimeError"
    assert message.startswith("retrograd.install_as_torch(): a different 'torch' module is already imported")
    assert "before anything imports torch" in message


def test_install_does_not_load_at_import() -> None:
    result = _run("""
        import sys, retrograd
        assert not any(m in sys.modules for m in ("retrograd._install", "retrograd.testing",
                                                   "retrograd.backends", "retrograd.accelerator",
                                                   "retrograd._porting")), sorted(sys.modules)
        """)
    assert result.returncode == 0, result.stderr
