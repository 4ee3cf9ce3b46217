"""NumPy's floating-point RuntimeWarnings from retrograd's own calls stay silent (PyTorch returns inf
or nan quietly) even where a warnings filter turns warnings into errors after retrograd's import:
``simplefilter("error")``, ``python -W error`` and pytest's ``filterwarnings = error``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

EDGE_CASES = textwrap.dedent("""
    import numpy as np
    import retrograd as rg

    def run_edge_cases():
        x = rg.tensor([0.0, 1.0, -1.0], requires_grad=True)
        y = x.log() + x.sqrt() + 1 / x + x.pow(-1) + (x * 1e38).exp() + x / x + (x * 1e38) * 1e38
        y.sum().backward()
        assert np.isnan(x.grad.numpy()).any() and np.isinf(y.detach().numpy()).any()
        assert rg.tensor([0.0]).log().item() == -np.inf
        assert rg.tensor([1e30]).pow(2).item() == np.inf
        assert np.isnan(rg.ones(0).mean().item()) and np.isnan(rg.ones(0, 3).mean(0).numpy()).all()
        with rg.no_grad():
            p = rg.tensor([3e38, 1.0])
            p.add_(rg.tensor([3e38, 1.0]))   # optimizer-style update straight into memory
            p.mul_(1e38)
            p.add_(rg.tensor([1e38, 1e38]), alpha=1e30)
            assert p._version == 3 and np.isinf(p.numpy()).all()
        q = rg.zeros(2, dtype=rg.int64)
        q.copy_(rg.tensor([float("nan"), 1.0]))
        assert q[1].item() == 1

    def user_numpy_still_warns():
        try:
            np.log(np.zeros(1))
        except RuntimeWarning:
            return True
        return False
""")

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(Path(__file__).parents[1] / "src"),
                                                                os.environ.get("PYTHONPATH", "")] if p)}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=ENV)


def test_silent_when_error_filter_is_set_after_import(tmp_path: Path) -> None:
    program = EDGE_CASES + textwrap.dedent("""
        import warnings
        warnings.simplefilter("error")  # after import: retrograd's own filter no longer applies
        run_edge_cases()
        print("silent", user_numpy_still_warns())
    """)
    done = _run(["-c", program], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "silent True"


def test_silent_under_python_W_error_with_import_inside_catch_warnings(tmp_path: Path) -> None:
    program = "import warnings\nwith warnings.catch_warnings():\n    import retrograd\n" + EDGE_CASES + \
        "run_edge_cases()\nprint('silent', user_numpy_still_warns())\n"
    done = _run(["-W", "error", "-c", program], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "silent True"


def test_silent_under_pytest_filterwarnings_error(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(EDGE_CASES + textwrap.dedent("""
        def test_edge_cases():
            run_edge_cases()

        def test_user_numpy_warning_is_an_error_here():
            assert user_numpy_still_warns()
    """))
    for args in (["-o", "filterwarnings=error"], ["-W", "error"]):
        done = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), *args,
                     str(tmp_path / "test_user.py")], tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 passed" in done.stdout
