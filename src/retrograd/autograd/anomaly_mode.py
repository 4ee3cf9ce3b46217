"""Anomaly detection: remember where each node was created, name it when its backward fails,
and optionally fail on NaN gradients. Costs nothing when off (one flag read per recorded node).

The flag the recording paths read means "remember where nodes (and, on a few paths, untracked
tensors) are created": it is on while anomaly mode is, or while ``retrograd.debug.record_sites()``
is open. Anomaly detection's own state (what the engine and ``is_anomaly_enabled()`` read) is
kept beside it.

>>> import retrograd as rg
>>> with rg.autograd.detect_anomaly():
...     rg.autograd.is_anomaly_enabled()
True
"""

from __future__ import annotations

import os
import sys
import warnings
import weakref
from _thread import _local
from collections import deque
from typing import Any

# [remember creation sites, check_nan, anomaly detection enabled]: process-wide, as in PyTorch.
# Index 0 is the one flag read per recorded node (``ops/op.py``) and on the few other paths that
# note where a tensor was made (detach, .data, factories, .item()...): anomaly mode or an open
# ``record_sites()`` (``SITE_RECORDERS`` counts those) turns it on.
ANOMALY = [False, True, False]
SITE_RECORDERS = [0]


def sync_site_flag() -> None:
    """Recompute the "remember creation sites" flag from its two sources."""
    ANOMALY[0] = ANOMALY[2] or SITE_RECORDERS[0] > 0


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return ANOMALY[2]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also fails on NaN gradients."""
    return ANOMALY[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``).

    >>> import retrograd as rg
    >>> rg.set_anomaly_enabled(True, check_nan=False)
    >>> rg.is_anomaly_enabled(), rg.is_anomaly_check_nan_enabled()
    (True, False)
    >>> rg.set_anomaly_enabled(False)
    """
    ANOMALY[2], ANOMALY[1] = bool(enabled), bool(check_nan)
    sync_site_flag()


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once as a call, until exit as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (ANOMALY[2], ANOMALY[1])
        ANOMALY[2], ANOMALY[1] = bool(mode), bool(check_nan)
        sync_site_flag()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        ANOMALY[2], ANOMALY[1] = self.prev
        sync_site_flag()


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection.

    Each node then keeps the stack of the forward call that created it; a backward error
    prints it, and (with ``check_nan``) a node that returns NaN gradients raises.
    """

    def __init__(self, check_nan: bool = True) -> None:
        # As in PyTorch: the warning and the state to restore belong to making the context.
        self.prev = (ANOMALY[2], ANOMALY[1])
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        ANOMALY[2], ANOMALY[1] = True, self.check_nan
        sync_site_flag()

    def __exit__(self, *exc: object) -> None:
        ANOMALY[2], ANOMALY[1] = self.prev
        sync_site_flag()

    def __call__(self, func: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)

        return wrapper


# Code that retrograd generates (ops/op.py) is compiled under file names that start with this,
# so that a creation traceback can leave its frames out with retrograd's own.
GENERATED_FILE_PREFIX = "<retrograd generated: "


def remember_creation(node: Any) -> None:
    """Store the user's forward stack on the node (anomaly mode only)."""
    import os
    import traceback

    stack = traceback.extract_stack()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while stack and (stack[-1].filename.startswith(package)  # retrograd's own frames, innermost,
                     or stack[-1].filename.startswith(GENERATED_FILE_PREFIX)):  # and generated code
        stack.pop()
    node.metadata["traceback_"] = traceback.format_list(stack)
    parent = _RUNNING.node
    if parent is not None:  # made by a backward (create_graph): PyTorch names that node too
        node.metadata["parent_"] = parent


class _Running(_local):
    node: Any = None  # the node whose backward runs in this thread (anomaly mode only)


_RUNNING = _Running()


def run_node(node: Any, grads: Any) -> Any:
    """The engine's ``node.apply(grads)`` in anomaly mode: nodes made meanwhile remember it as
    their parent, a NaN result raises (``check_nan``), and a failure warns where the node (and
    the nodes whose backward made it) came from."""
    running = _RUNNING
    previous, running.node = running.node, node
    try:
        outputs = node.apply(grads)
        if ANOMALY[1]:
            check_nan(node, outputs)
    except Exception:
        report_failure(node)
        raise
    finally:
        running.node = previous
    return outputs


NO_FORWARD_INFO = ("No forward pass information available. Enable detect anomaly during forward pass for more "
                   "information.")


def report_failure(node: Any) -> None:
    """Warn, as PyTorch does, where the node whose backward failed (or made NaN) was created."""
    stack = node.metadata.get("traceback_") if node._metadata else None
    if stack:
        detail = "Traceback of forward call that caused the error:\n" + "".join(stack)
    else:  # made while anomaly mode was off
        detail = NO_FORWARD_INFO
    warnings.warn(f"Error detected in {node.name()}. {detail}", UserWarning, stacklevel=4)
    parent = node._metadata.get("parent_") if node._metadata else None
    while parent is not None:
        metadata = parent._metadata or {}
        stack = metadata.get("traceback_")
        if stack:
            message = (f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
                       "induced the previous calculation:\n" + "".join(stack))
        else:
            message = f"Error detected in {parent.name()}. {NO_FORWARD_INFO}"
        warnings.warn(message, UserWarning, stacklevel=4)
        parent = metadata.get("parent_")


def check_nan(node: Any, outputs: tuple[Any, ...]) -> None:
    import numpy as np

    for i, g in enumerate(outputs):
        if g is not None and g._data.dtype.kind in "fcV" and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# -- Creation sites of untracked tensors ------------------------------------------------------
# While the site flag (ANOMALY[0]) is on, detach(), .data, the factories, torch.tensor(t),
# zero_grad() and .item()/.numpy()/.tolist() note where the user called them (one flag check on
# each of those paths; none of them is an op's call path). ``retrograd.debug.explain_grad``
# reads these notes; with the flag off the few paths that cut a graph leave a bare cause string.

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_site(depth: int = 1) -> tuple[str, int] | None:
    """``(file, line)`` of the innermost caller outside retrograd and its generated code, looking
    from ``depth`` frames up (1: this function's caller; a caller that knows how many frames
    above it are retrograd's skips them: each frame looked at is made into an object)."""
    frame: Any = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_PACKAGE_DIR) or name.startswith(GENERATED_FILE_PREFIX)):
            return name, frame.f_lineno
        frame = frame.f_back
    return None


def _api_name() -> str:
    """The name of the outermost retrograd function on the stack below the user's code (the call
    the user made: ``detach``, ``randn``, ``zero_grad``...)."""
    frame: Any = sys._getframe(2)
    name = ""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_PACKAGE_DIR):
            name = frame.f_code.co_name
        elif not filename.startswith(GENERATED_FILE_PREFIX):
            break
        frame = frame.f_back
    return name


class Origin:
    """How and where a tensor was made, noted while creation sites are recorded.

    ``kind``: "detach", "data", "tensor_copy" (``torch.tensor(t)``), "factory", "op" or
    "zero_grad"; ``site``: ``(file, line)`` of the user's call; ``detail``: the function called
    (the factory's or op's name); ``grad_mode``: "grad", "no_grad" or "inference" when it ran;
    ``inputs``: one ``(weak tensor, its origin, weak grad_fn, requires_grad)`` per tensor input.
    """

    __slots__ = ("kind", "site", "detail", "grad_mode", "inputs")

    def __init__(self, kind: str, site: tuple[str, int] | None, detail: str, grad_mode: str,
                 inputs: tuple[Any, ...] = ()) -> None:
        self.kind, self.site, self.detail, self.grad_mode, self.inputs = kind, site, detail, grad_mode, inputs

    def __repr__(self) -> str:
        where = f" at {self.site[0]}:{self.site[1]}" if self.site else ""
        return f"<Origin {self.kind} {self.detail}{where} ({self.grad_mode})>"


def grad_mode_name() -> str:
    from .grad_mode import STATE

    return "inference" if STATE.inference else "grad" if STATE.grad_enabled else "no_grad"


def input_ref(t: Any) -> tuple[Any, ...]:
    """What an origin keeps of an input tensor: weak references (a debugging aid must not keep
    a graph alive), the input's own origin, and whether it required grad."""
    fn = t._grad_fn
    return (weakref.ref(t), t._origin, None if fn is None else weakref.ref(fn), t._requires_grad)


def note_origin(kind: str, source: Any = None) -> Origin:
    """An ``Origin`` for a tensor made now by ``kind`` (from ``source``, a tensor, if any)."""
    return Origin(kind, user_site(), _api_name(), grad_mode_name(), () if source is None else (input_ref(source),))


# Recent .item()/.numpy()/.tolist() calls while sites are recorded: (what, site, weak source,
# value), so that a tensor built from such a value can be traced back to the graph it left.
ROUND_TRIPS: deque[tuple[str, tuple[str, int] | None, Any, Any]] = deque(maxlen=256)


def note_round_trip(what: str, source: Any, value: Any) -> None:
    """Remember that ``source.<what>`` handed ``value`` out of autograd (sites flag on only). An
    array (``numpy()``: the tensor's own memory) is held weakly, so the notes keep no storage alive."""
    held = weakref.ref(value) if type(value).__name__ == "ndarray" else value
    ROUND_TRIPS.append((what, user_site(), weakref.ref(source), held))
