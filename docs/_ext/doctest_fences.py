"""Griffe extension for the documentation build: fence docstrings' doctests.

The docstrings are plain prose with bare doctests (``>>> x = ...``); Markdown would read those
lines as nested block quotes. This extension wraps each run of doctest lines (a ``>>>`` line and
the lines up to the next blank line) in a ```` ```pycon ```` fence when the docstrings are loaded.
It changes only what the documentation shows, never the source.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """``text`` with every doctest block that is not already fenced wrapped in a pycon fence."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every loaded object's docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)


class FactoryDocstrings(griffe.Extension):
    """Give a public function made by a factory from a table (``zeros = _filled("zeros", np.zeros,
    \"\"\"A tensor of zeros...\"\"\")``, ``retrograd/factories.py``) the docstring it gets at run time:
    a static reading sees an attribute assigned a call, whose last argument is that docstring."""

    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        call = getattr(node, "value", None)
        if not isinstance(call, ast.Call) or not call.args or attr.docstring is not None:
            return
        first, last = call.args[0], call.args[-1]
        if (isinstance(first, ast.Constant) and first.value == attr.name and isinstance(last, ast.Constant)
                and isinstance(last.value, str)):
            text = fence_doctests(inspect.cleandoc(last.value))
            attr.docstring = griffe.Docstring(text, lineno=last.lineno, endlineno=last.end_lineno, parent=attr)
