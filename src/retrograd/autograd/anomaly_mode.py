"""Anomaly detection: remember where each node was created, name it when its backward fails,
and optionally fail on NaN gradients. Costs nothing when off (one flag read per recorded node).

>>> import retrograd as rg
>>> with rg.autograd.detect_anomaly():
...     rg.autograd.is_anomaly_enabled()
True
"""

from __future__ import annotations

import warnings
from _thread import _local
from typing import Any

# [enabled, check_nan]: process-wide, as in PyTorch.
ANOMALY = [False, True]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return ANOMALY[0]


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
    ANOMALY[0], ANOMALY[1] = bool(enabled), bool(check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once as a call, until exit as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = tuple(ANOMALY)
        ANOMALY[0], ANOMALY[1] = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        ANOMALY[0], ANOMALY[1] = self.prev


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection.

    Each node then keeps the stack of the forward call that created it; a backward error
    prints it, and (with ``check_nan``) a node that returns NaN gradients raises.
    """

    def __init__(self, check_nan: bool = True) -> None:
        # As in PyTorch: the warning and the state to restore belong to making the context.
        self.prev = tuple(ANOMALY)
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        ANOMALY[0], ANOMALY[1] = True, self.check_nan

    def __exit__(self, *exc: object) -> None:
        ANOMALY[0], ANOMALY[1] = self.prev

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
        if g is not None and g._data.dtype.kind in "fc" and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
