"""PyTorch's once-per-process warnings (``TORCH_WARN_ONCE``) and ``set_warn_always``.

Some warnings appear once per process, whatever the warning filters say, unless
``set_warn_always(True)`` asks for every occurrence (PyTorch's debugging switch).

>>> import retrograd as rg
>>> rg.is_warn_always_enabled()
False
"""

from __future__ import annotations

import warnings

_STATE = {"always": False}
_WARNED: set[str] = set()


def set_warn_always(b: bool) -> None:
    """Emit once-per-process warnings every time (True) or once (False, the default).

    >>> import retrograd as rg
    >>> rg.set_warn_always(True); rg.is_warn_always_enabled()
    True
    >>> rg.set_warn_always(False)
    """
    _STATE["always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in force.

    >>> import retrograd as rg
    >>> rg.is_warn_always_enabled()
    False
    """
    return _STATE["always"]


def warn_once(message: str, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    """``warnings.warn`` the first time ``message`` comes in this process, every time under
    ``set_warn_always(True)``."""
    if message in _WARNED and not _STATE["always"]:
        return
    _WARNED.add(message)
    warnings.warn(message, category, stacklevel=stacklevel + 1)
