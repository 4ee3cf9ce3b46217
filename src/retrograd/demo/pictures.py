"""The demo's pictures (matplotlib, drawn off-screen): curves, gradient norms, confusion matrix,
misclassified digits. The model's graph is drawn by ``retrograd.viz.make_dot`` in ``cli``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .train import History

__all__ = ["confusion_matrix", "draw_confusion", "draw_curves", "draw_grad_norms", "draw_misclassified"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    return plt


def _plain_log_ticks(ax: Any) -> None:
    """Log-scale y ticks written as plain numbers (0.5, not 5×10⁻¹)."""
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, classes: int = 10) -> np.ndarray:
    """Counts ``m[true, predicted]``.

    >>> confusion_matrix(np.array([0, 1, 1]), np.array([0, 1, 0]), classes=2).tolist()
    [[1, 0], [1, 1]]
    """
    m = np.zeros((classes, classes), np.int64)
    np.add.at(m, (y_true, y_pred), 1)
    return m


def draw_curves(history: History, path: Path, title: str) -> None:
    """Training loss (left) and train/test accuracy (right) per epoch."""
    plt = _pyplot()
    epochs = np.arange(1, len(history.loss) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax_loss.plot(epochs, history.loss, marker="o", ms=3, color="tab:red")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy (train, mean over epoch)", title="loss", yscale="log")
    ax_acc.plot(epochs, np.array(history.train_acc) * 100, marker="o", ms=3, label="train (during epoch)")
    ax_acc.plot(epochs, np.array(history.test_acc) * 100, marker="s", ms=3, label="test (end of epoch)")
    low = min(history.train_acc[:1] + history.test_acc[:1] + [0.9]) * 100
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy", ylim=(max(low - 2, 0), 100.5))
    ax_acc.legend(loc="lower right")
    from matplotlib.ticker import MaxNLocator

    _plain_log_ticks(ax_loss)
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_grad_norms(history: History, path: Path, title: str) -> None:
    """Per-layer gradient norms (all of a layer's parameters together) at the sampled steps."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for (name, norms), color in zip(history.grad_norms.items(), plt.rcParams["axes.prop_cycle"].by_key()["color"] * 9):
        steps = np.array(history.grad_steps[:len(norms)])
        values = np.array(norms)
        # One batch's gradient is noisy: each sampled step thin and faint, a moving average on top.
        ax.plot(steps, values, lw=0.8, alpha=0.3, color=color)
        width = min(9, len(values))
        if width > 1:
            smooth = np.exp(np.convolve(np.log(values), np.ones(width) / width, mode="valid"))
            ax.plot(steps[width // 2:width // 2 + len(smooth)], smooth, lw=2, color=color, label=name)
        else:
            ax.plot(steps, values, lw=2, color=color, label=name)
    ax.set(xlabel="training step (thin: each sampled step; thick: moving average)",
           ylabel="‖gradient‖ of the layer's parameters", yscale="log", title=title)
    _plain_log_ticks(ax)
    ax.grid(alpha=0.3, which="both")
    ax.legend(title="layer (Sequential index)", fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_confusion(matrix: np.ndarray, path: Path, title: str) -> None:
    """The confusion matrix, counts written in each non-empty cell."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 5))
    shown = np.log1p(matrix)  # log: the few mistakes stay visible beside the big diagonal
    ax.imshow(shown, cmap="Blues")
    top = shown.max() or 1.0
    for (i, j), count in np.ndenumerate(matrix):
        if count:
            ax.text(j, i, str(count), ha="center", va="center", fontsize=9,
                    color="white" if shown[i, j] > 0.6 * top else ("crimson" if i != j else "black"))
    ticks = range(matrix.shape[0])
    ax.set(xticks=ticks, yticks=ticks, xlabel="predicted", ylabel="true", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_misclassified(images: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, path: Path, title: str,
                       limit: int = 24) -> int:
    """A grid of the misclassified test digits, each titled ``true → predicted``; returns how many."""
    plt = _pyplot()
    wrong = np.flatnonzero(y_true != y_pred)[:limit]
    cols = min(8, max(len(wrong), 4))
    rows = max(1, math.ceil(len(wrong) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.2, rows * 1.4 + 0.5), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, i in zip(axes.flat, wrong):
        ax.imshow(images[i].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(f"{y_true[i]} → {y_pred[i]}", fontsize=10, color="crimson")
    if not len(wrong):
        axes[0, 0].text(0, 0.5, "no mistakes", fontsize=12)
    fig.suptitle(f"{title}\n({int((y_true != y_pred).sum())} of {len(y_true)}; true → predicted)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return int((y_true != y_pred).sum())
