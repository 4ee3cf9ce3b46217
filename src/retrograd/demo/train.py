"""The demo's model and training loop, written once against a ``torch_like`` module.

``torch_like`` is ``retrograd`` or ``torch``: the same code runs under both, which is the point
of ``--backend torch``. Only the public API is used (``nn``, ``optim``, ``utils.data``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Digits", "History", "build_model", "evaluate", "load_digits_split", "train"]


@dataclass
class Digits:
    """scikit-learn's 8×8 digits as float32 images in [0, 1] (N, 1, 8, 8) and int64 labels."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits_split(seed: int = 0, limit: int | None = None, test_fraction: float = 0.2) -> Digits:
    """The bundled digits (1,797 images, no download), split into train and test, stratified.

    ``limit`` keeps only the first ``limit`` images of the shuffled set (for fast runs).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x = (data.images / 16.0).astype(np.float32)[:, None, :, :]
    y = data.target.astype(np.int64)
    if limit is not None and limit < len(y):
        order = np.random.default_rng(seed).permutation(len(y))[:limit]
        x, y = x[order], y[order]
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=test_fraction, random_state=seed,
                                                        stratify=y if limit is None else None)
    return Digits(x_train, y_train, x_test, y_test)


def build_model(torch_like: Any, kind: str) -> Any:
    """``mlp``: 64 → 256 → 10 with dropout. ``cnn``: two 3×3 convolutions (16, 32 channels) with
    ReLU, 2×2 max-pooling, dropout, then a linear layer to the 10 classes."""
    nn = torch_like.nn
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),                       # 16 × 8 × 8
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 32 × 4 × 4
            nn.Dropout(0.25), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
    raise ValueError(f"unknown model {kind!r}: expected 'mlp' or 'cnn'")


@dataclass
class History:
    """Per-epoch figures, the sampled per-layer gradient norms and the training time."""

    loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    test_acc: list[float] = field(default_factory=list)
    grad_steps: list[int] = field(default_factory=list)
    grad_norms: dict[str, list[float]] = field(default_factory=dict)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0


def evaluate(torch_like: Any, model: Any, x: np.ndarray, y: np.ndarray, batch_size: int = 512) -> tuple[float, np.ndarray]:
    """Accuracy of ``model`` on ``(x, y)`` and its predictions (a NumPy array)."""
    model.eval()
    preds = []
    with torch_like.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(torch_like.from_numpy(x[start:start + batch_size]))
            preds.append(logits.argmax(1).numpy())
    pred = np.concatenate(preds) if preds else np.zeros(0, np.int64)
    return float((pred == y).mean()) if len(y) else 0.0, pred


def train(torch_like: Any, kind: str, data: Digits, *, epochs: int, batch_size: int = 32, lr: float = 3e-3,
          seed: int = 0, progress: Callable[..., Any] | None = None,
          watch: Callable[[Any], Any] | None = None, watch_every: int = 10) -> tuple[Any, History]:
    """Train a fresh ``kind`` model with Adam and cross-entropy; return it and its history.

    ``progress(iterable, desc=...)`` wraps each epoch's batches (tqdm); ``watch(model)`` is a
    context manager (``retrograd.debug.watch``) opened around ``backward`` every ``watch_every``
    steps to sample the per-layer gradient norms.
    """
    torch_like.manual_seed(seed)
    model = build_model(torch_like, kind)
    data_mod = torch_like.utils.data
    dataset = data_mod.TensorDataset(torch_like.from_numpy(data.x_train), torch_like.from_numpy(data.y_train))
    loader = data_mod.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                 generator=torch_like.Generator().manual_seed(seed))
    optimizer = torch_like.optim.Adam(model.parameters(), lr=lr)
    # The learning rate falls to zero along a cosine over the run: a stable, seed-robust finish.
    scheduler = torch_like.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(epochs, 1))
    loss_fn = torch_like.nn.CrossEntropyLoss()
    history = History()
    step = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for epoch in range(epochs):
        model.train()
        total_loss = 0.0
        correct = seen = 0
        batches = progress(loader, desc=f"epoch {epoch + 1}/{epochs}") if progress else loader
        for xb, yb in batches:
            optimizer.zero_grad()
            logits = model(xb)
            loss = loss_fn(logits, yb)
            if watch is not None and step % watch_every == 0:
                with watch(model) as w:
                    loss.backward()
                history.grad_steps.append(step)
                for layer in w.layers():
                    label = f"{layer['name']}: {layer.get('module_type', '')}".rstrip(": ")
                    history.grad_norms.setdefault(label, []).append(layer["norm"])
            else:
                loss.backward()
            optimizer.step()
            step += 1
            n = len(yb)
            total_loss += float(loss.item()) * n
            correct += int((logits.argmax(1) == yb).sum().item())
            seen += n
            if progress:
                batches.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.1%}")
        scheduler.step()
        history.loss.append(total_loss / max(seen, 1))
        history.train_acc.append(correct / max(seen, 1))
        history.test_acc.append(evaluate(torch_like, model, data.x_test, data.y_test)[0])
        if progress:
            batches.set_postfix(loss=f"{history.loss[-1]:.4f}", acc=f"{history.train_acc[-1]:.1%}",
                                test=f"{history.test_acc[-1]:.1%}")
            batches.close()
    history.cpu_seconds = time.process_time() - cpu0
    history.wall_seconds = time.perf_counter() - wall0
    return model, history
