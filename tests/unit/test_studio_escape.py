"""Untrusted text shown through st.markdown: inert (no HTML, no markdown syntax) and shown exactly as written."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from studio.core.safe import WORD_JOINER, esc_md

SPECIAL = set("&<>\"'\\`*_{}[]()#+-!|~:$@=")


@given(st.text())
def test_escaped_text_reads_back_exactly_and_has_no_active_characters(text: str) -> None:
    out = esc_md(text)
    # entities are never escaped twice ("paper&#x27;s" was shown literally); the only addition is the invisible word
    # joiner that keeps a bare URL or e-mail address from being linked
    assert html.unescape(out).replace(WORD_JOINER, "") == text.replace(WORD_JOINER, "")
    bare = out
    for entity in {f"&#{ord(c)};" for c in SPECIAL | {".", " ", "\t"}}:  # a line start's indent and list number too
        bare = bare.replace(entity, "")
    assert not (set(bare) & SPECIAL)


def test_xss_payload_and_apostrophe() -> None:
    payload = "the paper's <img src=x onerror=alert(1)>"
    assert html.unescape(esc_md(payload)) == payload
    assert "<" not in esc_md("<script>alert(2)</script>")
