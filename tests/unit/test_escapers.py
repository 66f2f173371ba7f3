"""Each sink's escaper, fed the attack payloads of tests/payloads.py and hypothesis text, then rendered the way the
sink renders it: the rendered result holds no markup the input brought in.

- Markdown (studio.core.safe.esc_md, md_cells): rendered by markdown-it-py with raw HTML on, `$…$` maths
  (mdit_py_plugins) and linkify (linkify-it-py), plus the two patterns Streamlit's remark-gfm links in text it has
  already decoded (bare `http(s)://`/`www.` and e-mail addresses, copied from its bundle): no link, image, emphasis,
  maths, code, heading, HTML element or attribute; no `:` left for a Streamlit directive (`:red[…]`, `:material/…:`)
  to start; and the text a reader sees is the input exactly (less the invisible word joiners).
- HTML (gear.viz.graph.esc_html, the graphs' labels and tooltips): parsed by html.parser as element content and as an
  attribute value: no element, attribute, comment or declaration, and the text is the input.
- Terminal (gear.cli.terminal.esc_term through TerminalConsole): no control character other than the newline reaches
  the output, Rich markup is printed as the brackets it was, and control characters show as `\\x1b`."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from rich.table import Table

from gear.cli.terminal import TerminalConsole, esc_term, json_text, visible_controls
from gear.viz.graph import esc_html
from studio.core.safe import WORD_JOINER, esc_md
from tests.payloads import ONE_LINE, PAYLOADS

ANY_TEXT = st.one_of(st.sampled_from(PAYLOADS), st.text(), st.lists(st.sampled_from((*PAYLOADS, " ", "\n", "a")))
                     .map("".join))

# -- Markdown ----------------------------------------------------------------------------------------------------------
MD = MarkdownIt("gfm-like", {"html": True, "linkify": True}).use(dollarmath_plugin)
MD.validateLink = lambda url: True  # stricter than markdown-it: a javascript: link counts (Streamlit drew it, as #)
MD.linkify.set({"fuzzy_link": False})  # like GFM: "example.com" alone is not a link; www. and e-mails are, below
# Streamlit's remark-gfm (mdast-util-gfm-autolink-literal) links these in decoded text nodes
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"(?<![^\s\W])([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
MARKUP = ("link_open", "image", "em_open", "strong_open", "s_open", "math_inline", "math_block", "code_inline",
          "code_block", "fence", "heading_open", "html_inline", "html_block", "blockquote_open", "table_open", "hr")


def flat(tokens: list[Token]) -> list[Token]:
    return [t for token in tokens for t in [token, *flat(token.children or [])]]


def rendered_markup(markdown: str) -> list[str]:
    """The markup a renderer makes of `markdown`: its element tokens, and the links Streamlit would add to its text."""
    tokens = flat(MD.parse(markdown))
    found = [t.type for t in tokens if t.type in MARKUP]
    texts = [t.content for t in tokens if t.type == "text"]
    found += [f"bare link {m.group()}" for text in texts for m in GFM_URL.finditer(text)]
    found += [f"e-mail link {m.group()}" for text in texts for m in GFM_EMAIL.finditer(text)]
    return found


def shown_text(markdown: str) -> str:
    tokens = flat(MD.parse(markdown))
    return "".join(t.content if t.type == "text" else "\n" for t in tokens if t.type in ("text", "softbreak",
                                                                                           "hardbreak"))


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.isprintable() and "&lt;" not in p])
def test_the_proxy_renderer_sees_the_payloads_as_markup(payload: str) -> None:
    """Without the escaper every Markdown payload does make markup (else the checks below would prove nothing)."""
    assert rendered_markup(payload) or payload.startswith(":material")


@settings(deadline=None)
@given(ANY_TEXT)
def test_escaped_markdown_renders_as_plain_text(text: str) -> None:
    out = esc_md(text)
    assert rendered_markup(out) == []
    assert ":" not in out and "$" not in out and "<" not in out  # no directive, emoji code, maths or tag can start
    seen = "".join(text.replace(WORD_JOINER, "").replace("\x00", "\ufffd").split())  # CommonMark: NUL shows as U+FFFD
    assert "".join(shown_text(out).replace(WORD_JOINER, "").split()) == seen


def test_escaped_markdown_in_a_caption_line_of_the_app() -> None:
    """As the pages write it: our own bold around escaped text keeps its bold and gains nothing else."""
    tokens = flat(MD.parse(f"**Question:** {esc_md(ONE_LINE)}"))
    assert [t.type for t in tokens if t.type in MARKUP] == ["strong_open"]


# -- HTML --------------------------------------------------------------------------------------------------------------
class Events(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.data: list[str] = []
        self.other: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag, []))

    def handle_data(self, data: str) -> None:
        self.data.append(data)

    def handle_comment(self, data: str) -> None:
        self.other.append(data)

    handle_decl = handle_pi = unknown_decl = handle_comment


def parse(html: str) -> Events:
    events = Events()
    events.feed(html)
    events.close()
    return events


@settings(deadline=None)
@given(ANY_TEXT)
def test_escaped_html_is_text_in_an_element_and_in_an_attribute(text: str) -> None:
    out = esc_html(text)
    body = parse(f"<div>{out}</div>")
    assert body.tags == [("div", []), ("/div", [])] and body.other == []
    assert "".join(body.data) == text.replace("\r\n", "\n") or "\r" in text
    attribute = parse(f'<span title="{out}">x</span>')
    assert attribute.tags == [("span", [("title", text)]), ("/span", [])] or "\r" in text


# -- the terminal ------------------------------------------------------------------------------------------------------
def printed(*renderables: Any, **options: Any) -> str:
    """What TerminalConsole writes, colours off: any control character in it came from the input."""
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, color_system=None, width=400, force_terminal=True)
    console.print(*renderables, highlight=False, soft_wrap=True, **options)
    return buffer.getvalue()


CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@settings(deadline=None)
@given(ANY_TEXT)
def test_escaped_terminal_text_prints_as_itself_without_control_characters(text: str) -> None:
    out = printed(f"[bold]{esc_term(text)}[/bold]", end="")
    assert not CONTROL.search(out)
    assert out == visible_controls(text).replace("\t", "    ") or "\t" in text  # markup shown as written


@settings(deadline=None)
@given(ANY_TEXT)
def test_the_console_shows_control_characters_even_where_a_string_was_not_escaped(text: str) -> None:
    table = Table(title=text)
    table.add_column(text)
    table.add_row(text)
    assert not CONTROL.search(printed(table) + printed(text, markup=False))


def test_a_title_with_escape_sequences_shows_them_visibly() -> None:
    out = printed(esc_term("\x1b[31mRED\x1b[0m title \x1b]0;pwned\x07 [t](x) :red[x]"), end="")
    assert out == "\\x1b[31mRED\\x1b[0m title \\x1b]0;pwned\\x07 [t](x) :red[x]"


@settings(deadline=None)
@given(ANY_TEXT)
def test_json_for_the_terminal_has_no_control_character_and_reads_back(text: str) -> None:
    import json

    out = json_text({"title": text})
    assert not CONTROL.search(out.replace("\n", "")) and json.loads(out) == {"title": text}
