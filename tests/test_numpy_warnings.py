"""Floating-point edge cases give inf/nan silently, as in PyTorch; the user's own NumPy still warns."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import numpy as np
import retrograd as rg

x = rg.tensor([0.0, 1.0, -1.0], requires_grad=True)
y = x.log() + x.sqrt() + 1 / x + x.pow(-1) + (x * 1e38).exp() + (x / x)
y.sum().backward()
assert np.isnan(x.grad.numpy()).any() or np.isinf(x.grad.numpy()).any()
try:
    np.log(np.zeros(1))  # the user's own NumPy call: still a RuntimeWarning (an error under -W error)
except RuntimeWarning:
    print("user warning kept")
"""


def test_edge_values_are_silent_but_user_numpy_still_warns() -> None:
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", PROGRAM],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "user warning kept"
