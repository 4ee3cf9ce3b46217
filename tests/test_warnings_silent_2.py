"""NumPy's floating-point warnings stay silent where retrograd's import-time filter is gone.

``import retrograd`` inside ``warnings.catch_warnings()`` (as pytest's collection does) drops the
filter that ``retrograd/__init__`` installs; with warnings shown (``-W default``, ``-W always``) the
ops that meet inf and nan on ordinary boundary inputs (log(0), 1/0, sqrt(-1), exp(1000)) used to
print "RuntimeWarning: divide by zero ...". They now run with NumPy's reports off for their own call
(``autograd/fp_errors.quiet_forward``), and every backward pass runs so as a whole. Values are
compared with real PyTorch; the user's own NumPy calls keep their warnings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import torch_or_skip

# Each case: (name, expression in ``lib``); run by the subprocess with lib = retrograd, and here
# with lib = torch for the expected values.
CASES = [
    ("log0", "lib.tensor([0.0, -1.0, 1.0]).log()"),
    ("log2_0", "lib.tensor([0.0, -1.0]).log2()"),
    ("log1p", "lib.tensor([-1.0, -2.0]).log1p()"),
    ("div0", "lib.tensor([1.0, 0.0, -1.0]) / 0"),
    ("rdiv0", "1 / lib.tensor([0.0, -0.0])"),
    ("div_t", "lib.tensor([1.0, 0.0]) / lib.tensor([0.0, 0.0])"),
    ("div_int", "lib.tensor([1, 0]) / lib.tensor([0, 0])"),
    ("floordiv0", "lib.tensor([1.0, 0.0, -1.0]) // 0"),
    ("div_floor", "lib.tensor([1.0, 0.0]).div(0.0, rounding_mode='floor')"),
    ("div_trunc", "lib.tensor([1.0, 0.0]).div(0.0, rounding_mode='trunc')"),
    ("remainder0", "lib.tensor([1.0, 0.0]) % 0.0"),
    ("fmod0", "lib.tensor([1.0, 0.0]).fmod(0.0)"),
    ("reciprocal0", "lib.tensor([0.0]).reciprocal()"),
    ("rsqrt0", "lib.tensor([0.0, -1.0]).rsqrt()"),
    ("sqrt_neg", "lib.tensor([-1.0, 4.0]).sqrt()"),
    ("pow_neg", "lib.tensor([0.0]) ** -1"),
    ("pow_half", "lib.tensor([-1.0]) ** 0.5"),
    ("pow_tensor", "lib.tensor([0.0, 10.0]) ** lib.tensor([-1.0, 1000.0])"),
    ("rpow", "2 ** lib.tensor([1000.0])"),
    ("float_power", "lib.float_power(lib.tensor([0.0]), -1)"),
    ("exp1000", "lib.tensor([1000.0]).exp()"),
    ("exp2", "lib.tensor([1000.0]).exp2()"),
    ("expm1", "lib.tensor([1000.0]).expm1()"),
    ("sinh", "lib.tensor([1000.0]).sinh()"),
    ("cosh", "lib.tensor([1000.0]).cosh()"),
    ("acos", "lib.tensor([2.0]).acos()"),
    ("asin", "lib.tensor([2.0]).asin()"),
    ("atanh", "lib.tensor([1.0, 2.0]).atanh()"),
    ("acosh", "lib.tensor([0.0]).acosh()"),
    ("mean_empty", "lib.ones(0).mean()"),
    ("mean_empty_dim", "lib.ones(0, 3).mean(0)"),
    ("logsumexp_empty", "lib.ones(0).logsumexp(0)"),
    ("norm_negative_ord", "lib.linalg.vector_norm(lib.tensor([0.0, 1.0]), -1)"),
    ("softmax_inf", "lib.softmax(lib.tensor([float('-inf'), float('-inf')]), 0)"),
    ("log_softmax_inf", "lib.log_softmax(lib.tensor([float('inf'), 1.0]), 0)"),
    ("tensor_overflow", "lib.tensor([1e300])"),
    ("log_", "lib.tensor([0.0, -1.0]).log_()"),
    ("div_", "lib.tensor([0.0]).div_(0)"),
]

PROGRAM = textwrap.dedent("""
    import json, math, warnings
    with warnings.catch_warnings():  # drops retrograd's import-time filter, as pytest's collection does
        import retrograd as lib
    import numpy as np

    CASES = json.loads({cases!r})

    def as_list(t):
        return [repr(float(v)) for v in np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)]

    out = {{}}
    for name, expr in CASES:
        out[name] = as_list(eval(expr))
    # Backward through log, sqrt, 1/x and x ** 0.5 at 0: inf gradients, silently.
    for name, f in [("log", lambda x: x.log()), ("sqrt", lambda x: x.sqrt()), ("rdiv", lambda x: 1 / x),
                    ("pow", lambda x: x.pow(0.5)), ("div", lambda x: x / x), ("acos", lambda x: (x + 1).acos())]:
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        f(x).sum().backward()
        out["backward_" + name] = as_list(x.grad)
    y = lib.tensor([0.0, 4.0], requires_grad=True)
    (g,) = lib.autograd.grad(y.log().sum(), y, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), y)
    out["double_backward"] = as_list(gg)
    try:  # the user's own NumPy keeps NumPy's state: an error under -W error, printed otherwise
        np.log(np.zeros(1))
        out["user"] = "ran"
    except RuntimeWarning:
        out["user"] = "raised"
    print(json.dumps(out))
""")

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(Path(__file__).parents[1] / "src"),
                                                                os.environ.get("PYTHONPATH", "")] if p)}


def _run(flag: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    program = PROGRAM.format(cases=json.dumps(CASES))
    return subprocess.run([sys.executable, "-W", flag, "-c", program], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=ENV)


def _expected(torch: Any) -> dict[str, list[str]]:
    expected = {}
    for name, expr in CASES:
        value = eval(expr, {"lib": torch})
        expected[name] = [repr(float(v)) for v in np.asarray(value.numpy(), dtype=np.float64).reshape(-1)]
    for name, f in [("log", lambda x: x.log()), ("sqrt", lambda x: x.sqrt()), ("rdiv", lambda x: 1 / x),
                    ("pow", lambda x: x.pow(0.5)), ("div", lambda x: x / x), ("acos", lambda x: (x + 1).acos())]:
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        f(x).sum().backward()
        expected["backward_" + name] = [repr(float(v)) for v in x.grad.numpy()]
    y = torch.tensor([0.0, 4.0], requires_grad=True)
    (g,) = torch.autograd.grad(y.log().sum(), y, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), y)
    expected["double_backward"] = [repr(float(v)) for v in gg.numpy()]
    return expected


@pytest.mark.parametrize("flag", ["default", "always"])
def test_nothing_printed_when_warnings_are_shown_and_the_import_filter_is_gone(flag: str, tmp_path: Path) -> None:
    torch = torch_or_skip()
    done = _run(flag, tmp_path)
    assert done.returncode == 0, done.stderr
    # Only the user's own np.log(0) warns (its line is in the program, not in retrograd).
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("<string>:") and "divide by zero encountered in log" in lines[0], \
        done.stderr
    out = json.loads(done.stdout)
    assert out.pop("user") == "ran"
    assert out == _expected(torch)


def test_silent_under_W_error_and_user_numpy_still_raises(tmp_path: Path) -> None:
    torch = torch_or_skip()
    done = _run("error", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = json.loads(done.stdout)
    assert out.pop("user") == "raised"
    assert out == _expected(torch)


def test_numpy_error_state_is_restored_after_ops_and_backward() -> None:
    import retrograd as rg

    before = np.geterr()
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    y = x.log() / x
    assert np.geterr() == before
    y.sum().backward()
    assert np.geterr() == before
    # A backward that fails half-way restores it too.
    z = rg.tensor([1.0], requires_grad=True)
    w = z.exp()
    w.sum().backward()
    with pytest.raises(RuntimeError):
        w.sum().backward()  # the graph was freed
    assert np.geterr() == before
    with np.errstate(divide="raise"):  # a user's own setting is what they get back
        rg.tensor([0.0]).log()
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
