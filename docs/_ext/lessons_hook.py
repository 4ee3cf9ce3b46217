"""MkDocs hook: the Lessons page is built from ``examples/``.

``docs/lessons.md`` holds a marker; this hook replaces it with ``examples/autograd/README.md``
(the lessons' index) followed by the source of each lesson script, and then the other example
scripts. Links in the README to a script become links to its listing on the page; links to
``docs/`` pages become page links; other relative links (files the site does not hold) become
plain code text, so a strict build never fails on them. Without ``examples/autograd/`` the page
says so and still lists the other examples.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MARKER = "<!-- retrograd:lessons -->"
ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "examples" / "autograd"
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _anchor(path: Path) -> str:
    return "example-" + re.sub(r"[^a-z0-9]+", "-", str(path.relative_to(ROOT / "examples")).lower()).strip("-")


def _rewrite_links(text: str, base: Path) -> str:
    def repl(m: re.Match[str]) -> str:
        bang, label, target = m.groups()
        if re.match(r"^[a-z]+:|^#", target):
            return m.group(0)
        path_part, _, frag = target.partition("#")
        resolved = (base / path_part).resolve()
        if resolved.suffix == ".py" and resolved.is_file() and resolved.is_relative_to(ROOT / "examples"):
            return f"[{label}](#{_anchor(resolved)})"
        docs = ROOT / "docs"
        if resolved.is_file() and resolved.is_relative_to(docs) and not bang:
            rel = resolved.relative_to(docs).as_posix()
            return f"[{label}]({rel}{'#' + frag if frag else ''})"
        return f"{label or path_part} (`{Path(path_part).as_posix()}`)" if not bang else f"`{path_part}`"

    return _LINK.sub(repl, text)


def _link_script_names(text: str, base: Path) -> str:
    """`` `name.py` `` naming a script of ``base`` (outside code blocks) links to its listing."""
    out, in_fence = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            line = re.sub(r"(?<![\[\w])`([\w./-]+\.py)`(?!\])",
                          lambda m: f"[`{m.group(1)}`](#{_anchor((base / m.group(1)).resolve())})"
                          if (base / m.group(1)).is_file() else m.group(0), line)
        out.append(line)
    return "\n".join(out)


def _listing(path: Path) -> str:
    rel = path.relative_to(ROOT / "examples").as_posix()
    source = path.read_text(encoding="utf-8").rstrip("\n")
    return f"### `{rel}` {{#{_anchor(path)}}}\n\n```python\n{source}\n```\n"


def lessons_markdown() -> str:
    """The Lessons page's text for the examples present now."""
    parts: list[str] = []
    readme = LESSONS / "README.md"
    if readme.is_file():
        parts.append(_link_script_names(_rewrite_links(readme.read_text(encoding="utf-8"), LESSONS), LESSONS))
        scripts = sorted(LESSONS.glob("*.py"))
        if scripts:
            parts.append("## The lesson scripts\n")
            parts.extend(_listing(p) for p in scripts)
    else:
        parts.append(
            "# Lessons\n\nThe runnable lessons live in `examples/autograd/` (one commented script per "
            "topic, with a `README.md` index); this checkout does not have them yet.\n"
        )
    others = sorted((ROOT / "examples").glob("*.py"))
    if others:
        parts.append(
            "## Other examples\n\nRun them from the repository root, e.g. `python examples/tour.py`.\n"
        )
        parts.extend(_listing(p) for p in others)
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, lessons_markdown())
