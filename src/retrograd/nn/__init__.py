"""``retrograd.nn``."""

from . import functional

__all__ = ["functional"]
