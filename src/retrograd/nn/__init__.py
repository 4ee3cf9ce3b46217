"""``retrograd.nn``: ``Parameter``, ``Module`` and its containers, layers, losses, ``init`` and ``utils``."""

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403  (the layer list is kept once, in modules/__init__.py)
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "functional", "init", "parallel",
           "utils"]
__all__ += _modules_all
__all__.sort()
