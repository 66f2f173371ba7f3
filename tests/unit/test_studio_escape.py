"""Untrusted text shown through st.markdown: inert (no HTML, no markdown syntax) and shown exactly as written."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from studio.safe import esc_md

SPECIAL = set("&<>\"'\\`*_{}[]()#+-!|~:$")


@given(st.text())
def test_escaped_text_reads_back_exactly_and_has_no_active_characters(text: str) -> None:
    out = esc_md(text)
    assert html.unescape(out) == text  # entities are never escaped twice ("paper&#x27;s" was shown literally)
    bare = out
    for entity in {f"&#{ord(c)};" for c in SPECIAL}:
        bare = bare.replace(entity, "")
    assert not (set(bare) & SPECIAL)


def test_xss_payload_and_apostrophe() -> None:
    payload = "the paper's <img src=x onerror=alert(1)>"
    assert html.unescape(esc_md(payload)) == payload
    assert "<" not in esc_md("<script>alert(2)</script>")
