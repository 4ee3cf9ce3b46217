"""``retrograd.debug``: tools that explain a graph and its gradients.

Each tool lives in its own submodule and loads on first use, so ``import retrograd.debug``
costs nothing, and no tool adds work to an op or to backward until it is switched on:

- ``print_graph(root)``: the graph as an indented text tree (``graph_text``);
- ``memory_report(root)``: the bytes a graph holds, per node and in total (``memory``);
- ``explain_grad(tensor, root)`` and ``record_sites()``: why a gradient is None or zero (``explain``);
- ``watch(model_or_tensors)``: gradient health during backward (``gradient_health``);
- ``check_op(fn, *inputs)``: property-based gradcheck of your own op (``op_check``).
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the submodule that defines it (no submodule is named like a function: importing
# it would bind the package attribute to the module)
_HOMES = {
    "print_graph": "graph_text",
    "memory_report": "memory",
    "MemoryReport": "memory",
    "explain_grad": "explain",
    "record_sites": "explain",
    "watch": "gradient_health",
    "check_op": "op_check",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'retrograd.debug' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
