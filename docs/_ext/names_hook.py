"""MkDocs hook: complete name tables for the API pages, read from the imported package.

Much of ``retrograd``'s surface is bound at import time from the op table (most ``Tensor``
methods, the ``retrograd.<op>`` functions), which the static reading of the source behind the
mkdocstrings sections does not see. A marker ``<!-- retrograd:names DOTTED.NAME -->`` on a page
becomes a table of every public name of that module or class: its kind, call signature and the
first line of its docstring.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_MARKER = re.compile(r"<!-- retrograd:names ([\w.]+) -->")


def _resolve(dotted: str) -> Any:
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _signature(value: Any, bound: bool) -> str:
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):
        return ""
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    # A method's first parameter is the tensor itself, whatever the op table named it.
    if bound and params and params[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def _kind(owner: Any, name: str, value: Any) -> str:
    raw = inspect.getattr_static(owner, name, None)
    if isinstance(raw, property) or (not callable(value) and inspect.isclass(owner)):
        return "attribute"
    if inspect.isclass(value):
        return "class"
    return "method" if inspect.isclass(owner) else ("function" if callable(value) else "attribute")


def _summary(value: Any) -> str:
    doc = inspect.getdoc(value) if callable(value) or isinstance(value, property) else None
    if not doc:
        return ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ")
    return first


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def names_table(dotted: str) -> str:
    """A Markdown table of every public name of the module or class ``dotted``."""
    owner = _resolve(dotted)
    rows = ["| name | kind | signature | summary |", "|---|---|---|---|"]
    exported = set(getattr(owner, "__all__", ()))
    for name in sorted(n for n in dir(owner) if not n.startswith("_")):
        value = getattr(owner, name, None)
        if inspect.ismodule(value):
            continue
        # A module's own names: its __all__, and the functions and classes defined in it or in
        # its private submodules (retrograd's ops live in ``retrograd._functions``), not the
        # helpers it imports (typing.Any, another module's functions).
        home = str(getattr(value, "__module__", ""))
        if inspect.ismodule(owner) and name not in exported and not (
            callable(value) and (home == owner.__name__ or home.startswith(owner.__name__ + "._"))
        ):
            continue
        raw = inspect.getattr_static(owner, name, None)
        described = raw if isinstance(raw, property) else value
        kind = _kind(owner, name, value)
        bound = kind == "method" and inspect.isfunction(raw)
        sig = _signature(value, bound) if kind in ("function", "method", "class") else ""
        sig_cell = f"`{_cell(sig)}`" if sig else ""
        rows.append(f"| `{name}` | {kind} | {sig_cell} | {_cell(_summary(described))} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return _MARKER.sub(lambda m: names_table(m.group(1)), markdown)
