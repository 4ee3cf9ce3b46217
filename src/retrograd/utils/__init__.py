"""``retrograd.utils``: ``data`` (datasets, samplers, ``DataLoader``), ``checkpoint``
(activation checkpointing)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
