"""The documentation site (MkDocs + mkdocstrings): every page is in the nav, and the strict build
passes (a broken reference, a page missing from the nav or a docstring cross-reference that does
not resolve fails it).

The build test needs the ``docs`` extra (``pip install -e ".[docs]"``); it skips without it
unless ``RETROGRAD_REQUIRE_DOCS=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))


def _nav_pages() -> set[str]:
    # The nav's entries are the ``.md`` paths in mkdocs.yml's ``nav:`` block (read without yaml,
    # so this test runs without the docs extra).
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return set(re.findall(r"^\s*-\s*(?:[^\n]*?:\s*)?([\w./-]+\.md)\s*$", nav, flags=re.M))


def test_every_docs_page_is_in_the_nav() -> None:
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")
             if "_ext" not in p.parts}
    missing = sorted(pages - _nav_pages())
    assert not missing, f"docs pages missing from mkdocs.yml's nav: {missing}"
    dangling = sorted(_nav_pages() - pages)
    assert not dangling, f"mkdocs.yml's nav names pages that do not exist: {dangling}"


def test_every_public_module_has_an_api_page() -> None:
    expected = {
        "retrograd", "retrograd.autograd", "retrograd.autograd.functional", "retrograd.autograd.graph",
        "retrograd.autograd.gradcheck", "retrograd.nn", "retrograd.nn.functional", "retrograd.nn.init",
        "retrograd.nn.utils", "retrograd.optim", "retrograd.optim.lr_scheduler", "retrograd.utils.data",
        "retrograd.utils.checkpoint", "retrograd.utils.safetensors", "retrograd.linalg",
        "retrograd.serialization", "retrograd.viz", "retrograd.debug",
    }
    documented = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        documented |= set(re.findall(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), flags=re.M))
    assert expected <= documented, sorted(expected - documented)


def test_doctests_are_fenced_for_markdown() -> None:
    from doctest_fences import fence_doctests

    text = "Sum.\n\n>>> x = 1\n>>> x + 1\n2\n\nAfter.\n\n```python\n>>> kept\n```"
    assert fence_doctests(text) == (
        "Sum.\n\n```pycon\n>>> x = 1\n>>> x + 1\n2\n```\n\nAfter.\n\n```python\n>>> kept\n```"
    )


def test_lessons_links_become_page_links_or_text(tmp_path: Path) -> None:
    import lessons_hook

    readme = (
        "[grad_fn](../tour.py) [guide](../../docs/architecture.md#layers) [gone](missing.png) "
        "[web](https://pytorch.org)"
    )
    out = lessons_hook._rewrite_links(readme, ROOT / "examples" / "autograd")
    assert out == (
        "[grad_fn](#example-tour-py) [guide](architecture.md#layers) gone (`missing.png`) [web](https://pytorch.org)"
    )


def test_lessons_script_names_link_to_their_listings() -> None:
    import lessons_hook

    text = "| `tour.py` | `missing.py` |\n```\n`tour.py`\n```"
    out = lessons_hook._link_script_names(text, ROOT / "examples")
    assert out == "| [`tour.py`](#example-tour-py) | `missing.py` |\n```\n`tour.py`\n```"


def test_strict_build(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None:
        if os.environ.get("RETROGRAD_REQUIRE_DOCS") == "1":
            pytest.fail("mkdocs and mkdocstrings-python are required (RETROGRAD_REQUIRE_DOCS=1): "
                        'pip install -e ".[docs]"')
        pytest.skip('the docs extra is not installed (pip install -e ".[docs]")')
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    elapsed = time.perf_counter() - start
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    site = tmp_path / "site"
    # mkdocstrings rendered the docstrings (a config without the plugin would leave "::: name" as text).
    nn_page = (site / "api" / "nn" / "index.html").read_text(encoding="utf-8")
    assert 'id="retrograd.nn.Linear"' in nn_page and "::: retrograd" not in nn_page
    # The name tables list the methods bound from the op table.
    tensor_page = (site / "api" / "tensor" / "index.html").read_text(encoding="utf-8")
    assert "<code>addcmul_</code>" in tensor_page
    assert (site / "differences" / "index.html").is_file()
    assert (site / "lessons" / "index.html").is_file()
    assert elapsed < 120, f"the docs build took {elapsed:.0f} s"
