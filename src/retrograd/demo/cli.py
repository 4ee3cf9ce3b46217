"""``python -m retrograd.demo``: the command line (arguments, optional packages, output)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DEFAULT_EPOCHS", "main", "missing_package_message", "require"]

INSTALL = "pip install retrograd[demo]"
DEFAULT_EPOCHS = {"mlp": 30, "cnn": 25}


def missing_package_message(package: str, purpose: str) -> str:
    """The one line printed when an optional package is missing.

    >>> missing_package_message("tqdm", "the progress bars")
    'retrograd.demo needs tqdm for the progress bars: pip install retrograd[demo] (or pip install tqdm)'
    """
    return f"retrograd.demo needs {package} for {purpose}: {INSTALL} (or pip install {package})"


def require(module: str, package: str, purpose: str) -> Any:
    """Import ``module`` or exit with ``missing_package_message`` (one line on stderr, status 1)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SystemExit(missing_package_message(package, purpose)) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m retrograd.demo",
                                description="Train a digit classifier on scikit-learn's bundled 8x8 digits.")
    p.add_argument("--model", choices=("mlp", "cnn"), default="cnn", help="the model (default: cnn)")
    p.add_argument("--epochs", type=int, help="epochs (default: 25 for cnn, 30 for mlp)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate, cosine-annealed to 0")
    p.add_argument("--seed", type=int, default=0, help="seeds the split, the initialisation and the shuffling")
    p.add_argument("--limit", type=int, help="use only this many images (fast runs)")
    p.add_argument("--out", type=Path, help="write pictures (PNG) into this folder")
    p.add_argument("--backend", choices=("retrograd", "torch"), default="retrograd",
                   help="torch: also run the very same code under PyTorch and compare")
    p.add_argument("--save", type=Path, help="write the trained weights (.safetensors, else PyTorch's format)")
    p.add_argument("--load", type=Path, help="evaluate weights written by --save instead of training")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _percent(x: float) -> str:
    return f"{x * 100:.1f}%"


def _state_dict(model: Any) -> dict[str, Any]:
    return {k: v.detach() for k, v in model.state_dict().items()}


def save_weights(model: Any, path: Path) -> None:
    """``.safetensors`` → ``retrograd.utils.safetensors``; anything else → ``retrograd.save``
    (PyTorch's zip format: ``torch.load`` reads it)."""
    import retrograd
    from retrograd.utils import safetensors

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".safetensors":
        safetensors.save_file(_state_dict(model), path)
    else:
        retrograd.save(_state_dict(model), path)


def load_weights(model: Any, path: Path) -> None:
    import retrograd
    from retrograd.utils import safetensors

    state = safetensors.load_file(path) if path.suffix == ".safetensors" else retrograd.load(path, weights_only=True)
    model.load_state_dict(state)


def _draw(out: Path, kind: str, model: Any, history: Any, data: Any, pred: np.ndarray) -> list[Path]:
    import retrograd
    from retrograd.viz import make_dot

    from . import pictures

    require("matplotlib", "matplotlib", "the pictures (--out)")
    graphviz = require("graphviz", "graphviz", "the model's graph picture (--out)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    name = f"{kind.upper()} on digits"
    if history is not None:
        pictures.draw_curves(history, out / "curves.png", f"{name}: training curves")
        written.append(out / "curves.png")
        if history.grad_norms:
            pictures.draw_grad_norms(history, out / "grad_norms.png",
                                     f"{name}: per-layer gradient norms (retrograd.debug.watch)")
            written.append(out / "grad_norms.png")
    acc = float((pred == data.y_test).mean())
    pictures.draw_confusion(pictures.confusion_matrix(data.y_test, pred), out / "confusion.png",
                            f"{name}: test confusion matrix ({_percent(acc)})")
    written.append(out / "confusion.png")
    pictures.draw_misclassified(data.x_test, data.y_test, pred, out / "misclassified.png",
                                f"{name}: misclassified test digits")
    written.append(out / "misclassified.png")
    model.eval()
    logits = model(retrograd.from_numpy(data.x_test[:1]))
    dot = make_dot(logits, params=dict(model.named_parameters()))
    dot.graph_attr.update(size="", dpi="80")
    try:
        dot.render(out / "graph", format="png", cleanup=True)
        written.append(out / "graph.png")
    except graphviz.ExecutableNotFound:
        print("retrograd.demo: skipped graph.png: make_dot needs Graphviz's `dot` program "
              "(apt install graphviz, brew install graphviz or conda install graphviz)", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the exit status. See ``python -m retrograd.demo --help``."""
    args = _parser().parse_args(argv)
    import retrograd

    from . import train as training

    require("sklearn", "scikit-learn", "the digits data set")
    tqdm = None if args.no_progress else require("tqdm", "tqdm", "the progress bars").tqdm
    if args.out is not None:
        require("matplotlib", "matplotlib", "the pictures (--out)")
        require("graphviz", "graphviz", "the model's graph picture (--out)")
    torch = require("torch", "torch", "--backend torch") if args.backend == "torch" else None

    data = training.load_digits_split(args.seed, args.limit)
    epochs = args.epochs if args.epochs is not None else DEFAULT_EPOCHS[args.model]
    if args.load is not None:
        model = training.build_model(retrograd, args.model)
        load_weights(model, args.load)
        acc, pred = training.evaluate(retrograd, model, data.x_test, data.y_test)
        print(f"{args.model} with the weights in {args.load}, on {len(data.y_test)} test images (seed {args.seed})")
        print(f"test accuracy {_percent(acc)}")
        if args.out is not None:
            _draw(args.out, args.model, model, None, data, pred)
        return 0

    def progress(iterable: Any, desc: str) -> Any:
        assert tqdm is not None
        return tqdm(iterable, desc=f"{args.model} {desc}", leave=True, dynamic_ncols=True)

    from retrograd.debug import watch

    print(f"{args.model} on digits: {len(data.y_train)} train / {len(data.y_test)} test images, {epochs} epochs, "
          f"batch {args.batch_size}, seed {args.seed}")
    runs = [("retrograd", retrograd)] + ([("torch " + torch.__version__.split("+")[0], torch)] if torch else [])
    results = []
    for label, backend in runs:
        model, history = training.train(
            backend, args.model, data, epochs=epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
            progress=progress if tqdm else None, watch=watch if backend is retrograd else None)
        acc, pred = training.evaluate(backend, model, data.x_test, data.y_test)
        results.append((label, acc, history))
        print(f"[{label}] test accuracy {_percent(acc)} (train {history.cpu_seconds:.1f} s CPU, "
              f"{history.wall_seconds:.1f} s wall)")
        if backend is retrograd:
            rg_model, rg_history, rg_pred = model, history, pred
    if len(results) > 1:
        print(f"{'backend':<14}{'test accuracy':>14}{'CPU time':>11}{'wall time':>11}")
        for label, acc, history in results:
            print(f"{label:<14}{_percent(acc):>14}{history.cpu_seconds:>9.1f} s{history.wall_seconds:>9.1f} s")
    if args.save is not None:
        save_weights(rg_model, args.save)
        print(f"saved the weights to {args.save}")
    if args.out is not None:
        written = _draw(args.out, args.model, rg_model, rg_history, data, rg_pred)
        print(f"wrote {', '.join(p.name for p in written)} to {args.out}")
    print(f"test accuracy {_percent(results[0][1])}")
    return 0
