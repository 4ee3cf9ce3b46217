"""``retrograd.cuda``: retrograd runs on the CPU, so no CUDA device is ever available.

Code written as ``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU.

>>> import retrograd as rg
>>> rg.cuda.is_available(), rg.cuda.device_count()
(False, 0)
"""

from __future__ import annotations


def is_available() -> bool:
    """Always False: retrograd computes with NumPy on the CPU."""
    return False


def device_count() -> int:
    """Always 0."""
    return 0


def manual_seed(seed: int) -> None:
    """Accepted and ignored (there is no CUDA generator), as PyTorch does without a GPU."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored."""
