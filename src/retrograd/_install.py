"""``retrograd.install_as_torch()``: run PyTorch programs with their import lines unchanged.

After the call, ``import torch``, ``import torch.nn as nn``, ``from torch.utils.data import
DataLoader`` (any ``torch.X`` whose ``retrograd.X`` exists) give retrograd's modules.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

# Registered at once, so that sys.modules shows them; any other ``torch.X`` is found on import.
_EAGER = ("nn", "nn.functional", "nn.init", "optim", "optim.lr_scheduler", "utils", "utils.data", "autograd",
          "linalg", "testing", "backends", "accelerator", "cuda", "distributions")


class _Loader(importlib.abc.Loader):
    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the alias's spec on the module: it keeps its own (reload, pickling).
        module.__spec__ = self.spec


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch.X`` as ``retrograd.X``."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("torch.") or sys.modules.get("torch") is not sys.modules.get("retrograd"):
            return None
        try:
            module = importlib.import_module("retrograd" + fullname[len("torch"):])
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(module),
                                              is_package=hasattr(module, "__path__"))


_FINDER = _TorchFinder()


def install_as_torch() -> None:
    """Register retrograd as ``torch`` (and its modules as ``torch.nn``, ``torch.optim``...) in
    ``sys.modules``, so a PyTorch program runs unchanged after ``import retrograd;
    retrograd.install_as_torch()``. Calling it again does nothing; calling it after a real
    ``torch`` was imported raises RuntimeError (the two cannot share the name).

    >>> import sys, retrograd
    >>> had = sys.modules.get("torch")
    >>> if had is None or had is retrograd:
    ...     retrograd.install_as_torch()
    ...     import torch.nn as nn
    ...     assert nn is retrograd.nn
    ...     if had is None:
    ...         retrograd.uninstall_as_torch()
    """
    import retrograd
    present = sys.modules.get("torch")
    if present is not None and present is not retrograd:
        where = getattr(present, "__file__", None) or repr(present)
        raise RuntimeError(
            "retrograd.install_as_torch(): a different 'torch' module is already imported (from "
            f"{where}); call install_as_torch() before anything imports torch, or use "
            "'import retrograd as torch'")
    clash = sorted(n for n, m in sys.modules.items() if n.startswith("torch.") and m is not None
                   and not getattr(m, "__name__", "").startswith("retrograd"))
    if clash:
        raise RuntimeError(f"retrograd.install_as_torch(): modules of a real torch are already imported "
                           f"({', '.join(clash[:3])}{'...' if len(clash) > 3 else ''})")
    sys.modules["torch"] = retrograd
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for name in _EAGER:
        try:
            sys.modules["torch." + name] = importlib.import_module("retrograd." + name)
        except ModuleNotFoundError as exc:  # a module this version does not have (distributions)
            if exc.name != "retrograd." + name:
                raise


def uninstall_as_torch() -> None:
    """Undo ``install_as_torch``: remove the ``torch`` aliases from ``sys.modules``.

    >>> import retrograd
    >>> retrograd.uninstall_as_torch()
    """
    import retrograd
    if sys.modules.get("torch") is retrograd:
        del sys.modules["torch"]
        for name in [n for n, m in sys.modules.items() if n.startswith("torch.")
                     and getattr(m, "__name__", "").startswith("retrograd")]:
            del sys.modules[name]
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
