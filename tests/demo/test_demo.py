"""``python -m retrograd.demo``: fast runs write the pictures, weights round-trip, ``--backend torch``
runs the same code under PyTorch, and a missing optional package gives one line saying what to install."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import retrograd
from retrograd.demo import cli
from retrograd.demo.train import build_model, evaluate, load_digits_split, train

FAST = ["--model", "mlp", "--epochs", "3", "--limit", "300", "--no-progress"]


def _accuracy(out: str) -> float:
    """The summary line's accuracy (the last line is ``test accuracy 97.8%``)."""
    last = out.strip().splitlines()[-1]
    match = re.fullmatch(r"test accuracy (\d+\.\d)%", last)
    assert match, last
    return float(match.group(1)) / 100


@pytest.fixture
def sklearn():
    return pytest.importorskip("sklearn")


def test_fast_cnn_run_writes_every_picture(sklearn, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("graphviz")
    out = tmp_path / "pictures"
    assert cli.main(["--model", "cnn", "--epochs", "2", "--limit", "300", "--no-progress", "--out", str(out)]) == 0
    acc = _accuracy(capsys.readouterr().out)
    assert 0.3 < acc <= 1.0  # 10 classes: chance is 0.1; two short epochs already learn something
    names = ["curves.png", "grad_norms.png", "confusion.png", "misclassified.png"]
    if shutil.which("dot"):
        names.append("graph.png")
    for name in names:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name


def test_training_is_seeded_and_reproducible(sklearn):
    data = load_digits_split(seed=3, limit=200)
    (m1, h1), (m2, h2) = (train(retrograd, "cnn", data, epochs=1, seed=3) for _ in range(2))
    assert h1.loss == h2.loss and h1.test_acc == h2.test_acc
    for (k1, v1), (k2, v2) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert k1 == k2 and np.array_equal(v1.numpy(), v2.numpy())
    # the gradient norms come from retrograd.debug.watch only when one is passed
    assert h1.grad_norms == {}


def test_gradient_norms_are_sampled_with_debug_watch(sklearn):
    from retrograd.debug import watch

    data = load_digits_split(seed=0, limit=200)
    model, history = train(retrograd, "mlp", data, epochs=1, seed=0, watch=watch, watch_every=2)
    assert history.grad_steps == [0, 2, 4]  # 160 training images in batches of 32: 5 steps
    assert sorted(history.grad_norms) == ["1: Linear", "4: Linear"]
    # the watched norm is the norm of the layer's parameter gradients after that backward
    assert all(len(v) == 3 and all(n > 0 for n in v) for v in history.grad_norms.values())


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_save_then_load_gives_the_same_accuracy(sklearn, tmp_path, capsys, suffix):
    path = tmp_path / f"weights{suffix}"
    assert cli.main(FAST + ["--save", str(path)]) == 0
    trained = _accuracy(capsys.readouterr().out)
    assert cli.main(["--model", "mlp", "--limit", "300", "--load", str(path)]) == 0
    assert _accuracy(capsys.readouterr().out) == trained
    # a model of the other kind does not silently accept the weights
    with pytest.raises(RuntimeError):
        cli.main(["--model", "cnn", "--limit", "300", "--load", str(path)])


def test_saved_weights_load_into_pytorch(sklearn, tmp_path, torch):
    path = tmp_path / "weights.pt"
    data = load_digits_split(seed=0, limit=300)
    model, _ = train(retrograd, "mlp", data, epochs=2)
    cli.save_weights(model, path)
    acc, pred = evaluate(retrograd, model, data.x_test, data.y_test)
    twin = build_model(torch, "mlp")
    twin.load_state_dict(torch.load(path, weights_only=True))
    torch_acc, torch_pred = evaluate(torch, twin, data.x_test, data.y_test)
    assert torch_acc == acc and np.array_equal(torch_pred, pred)


def test_backend_torch_runs_the_same_code_side_by_side(sklearn, torch, capsys):
    assert cli.main(FAST + ["--backend", "torch"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^backend +test accuracy +CPU time +wall time$", out, re.M)
    rows = re.findall(r"^(retrograd|torch \S+) +(\d+\.\d)% +\d+\.\d s +\d+\.\d s$", out, re.M)
    assert [r[0] for r in rows] == ["retrograd", f"torch {torch.__version__.split('+')[0]}"]
    assert all(float(r[1]) > 30 for r in rows)


@pytest.mark.parametrize(("module", "args", "package"), [
    ("sklearn", [], "scikit-learn"),
    ("tqdm", [], "tqdm"),
    ("matplotlib", ["--no-progress", "--out", "pictures"], "matplotlib"),
    ("graphviz", ["--no-progress", "--out", "pictures"], "graphviz"),
])
def test_a_missing_package_gives_one_line_saying_what_to_install(monkeypatch, module, args, package):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(SystemExit) as info:
        cli.main(args)
    message = str(info.value.code)
    assert "\n" not in message
    assert message.startswith(f"retrograd.demo needs {package} for ")
    assert message.endswith(f": pip install retrograd[demo] (or pip install {package})")


def test_missing_package_from_the_command_line_is_one_line_on_stderr(tmp_path):
    code = ("import sys, runpy; sys.modules['sklearn'] = None; "
            "runpy.run_module('retrograd.demo', run_name='__main__', alter_sys=True)")
    src = Path(retrograd.__file__).parents[1]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(src), "PATH": ""}, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == cli.missing_package_message("scikit-learn", "the digits data set") + "\n"
