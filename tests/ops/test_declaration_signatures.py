"""The op table's signature texts are read by a small pattern instead of ``ast.parse`` at import
(``ops/declaration.py``): it must give the parser's names, or step aside (None) for the parser."""

from __future__ import annotations

import ast

import pytest

import retrograd  # noqa: F401 - fills the table
from retrograd.ops import declaration
from retrograd.ops.declaration import Declaration, _plain_signature_names, signature_names


def _parser_names(signature: str) -> tuple[str, ...]:
    args = ast.parse(f"def f(self, {signature}): pass").body[0].args  # type: ignore[attr-defined]
    return tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))[1:]


def test_every_signature_in_the_table_reads_as_the_parser_reads_it() -> None:
    signatures = list(declaration._SIGNATURE_NAMES)
    assert len(signatures) > 20
    for signature in signatures:
        assert _plain_signature_names(signature) == _parser_names(signature), signature


@pytest.mark.parametrize("signature", [
    "other", "dim, keepdim=False", "other, *, alpha=1", "dims=(0, 1), k=-1", "rtol=1e-05, atol=1e-08",
    "dim=()", "a=1, *, b", "a, b=None, *, c=True, d", "x=(3,)",
])
def test_plain_signatures_give_the_parsers_names(signature: str) -> None:
    assert _plain_signature_names(signature) == _parser_names(signature)


@pytest.mark.parametrize("signature", [
    "a, b=1, c",      # a SyntaxError for the parser
    "a, *",           # bare * at the end
    "*, *", "a=", "*args", "**kw", "x=foo", "a, a", "", "x: int", "s='a,b'",
])
def test_anything_else_is_left_to_the_parser(signature: str) -> None:
    assert _plain_signature_names(signature) is None


def test_bad_signatures_still_fail_when_the_entry_is_made() -> None:
    with pytest.raises(ValueError, match="is not a Python parameter list"):
        signature_names("a, b=1, c")
    with pytest.raises(ValueError, match=r"may not take \*args"):
        signature_names("*args")
    with pytest.raises(ValueError, match="must name the arguments after the first input exactly once"):
        Declaration("f", abs, params=("dim",), variants=("function",), signature="dim, keepdim=False")
