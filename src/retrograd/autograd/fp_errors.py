"""NumPy's floating-point error reports (divide by zero, invalid value, overflow) switched off
where PyTorch computes the same inf or nan silently, at almost no cost per call.

``quiet_forward(fn)`` wraps an op's NumPy forward where the op is declared (the ops that meet
such values on ordinary inputs: ``log(0)``, ``1 / 0``, ``sqrt(-1)``, ``exp(1000)``...), and the
engine runs each whole backward pass between ``ignore_fp_errors()`` and ``restore_fp_errors``.
Both set NumPy's error state for the current thread (or task) only, so the user's own NumPy
calls keep their warnings.

NumPy keeps its error state in a context variable; setting it directly to a value made once
costs about 0.1 µs, where ``np.errstate`` costs 1-3 µs (it builds a new state object at each
entry). The variable is private (``numpy._core._ufunc_config._extobj_contextvar``, NumPy 2.x):
where it is missing, ``np.errstate`` does the same at its own cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:  # private NumPy API (see the module docstring): np.errstate is the fallback
    from numpy._core._ufunc_config import _extobj_contextvar  # type: ignore[attr-defined]
    from numpy._core.umath import _make_extobj

    _IGNORE: Any = _make_extobj(all="ignore")
    _set, _reset = _extobj_contextvar.set, _extobj_contextvar.reset
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other NumPy versions
    _set = None  # type: ignore[assignment]


def ignore_fp_errors() -> Any:
    """Switch NumPy's floating-point error reports off for this thread; returns the token that
    ``restore_fp_errors`` takes to restore the state exactly.

    >>> token = ignore_fp_errors()
    >>> float(np.log(np.zeros(1))[0])
    -inf
    >>> restore_fp_errors(token)
    """
    if _set is not None:
        return _set(_IGNORE)
    state = np.errstate(all="ignore")
    state.__enter__()
    return state


def restore_fp_errors(token: Any) -> None:
    """Restore the error state that ``ignore_fp_errors`` replaced (see there)."""
    if _set is not None:
        _reset(token)
    else:
        token.__exit__(None, None, None)


def quiet_forward(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run with NumPy's floating-point error reports off: for an op's forward, where it is
    declared (``Op("log", quiet_forward(np.log), ...)``), so that only such ops pay for it.

    A ufunc's or ``array_scalars`` forward keeps that mark (``ops/op.py``).

    >>> log = quiet_forward(np.log)
    >>> float(log(np.zeros(1))[0])
    -inf
    """
    if _set is not None:
        set_, reset, ignore = _set, _reset, _IGNORE

        def forward(*args: Any) -> Any:
            token = set_(ignore)
            try:
                return fn(*args)
            finally:
                reset(token)
    else:  # pragma: no cover - other NumPy versions
        def forward(*args: Any) -> Any:
            with np.errstate(all="ignore"):
                return fn(*args)

    forward.__name__ = getattr(fn, "__name__", "forward")
    forward.__wrapped__ = fn  # type: ignore[attr-defined]
    if isinstance(fn, np.ufunc) or getattr(fn, "array_scalars", False):
        forward.array_scalars = True  # type: ignore[attr-defined]
    return forward
