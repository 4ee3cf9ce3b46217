"""Convolutions, pooling, unfold/fold and interpolation for ``retrograd.nn.functional``."""

from __future__ import annotations

__all__: list[str] = []
