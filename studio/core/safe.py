"""Every page shows text it does not control (passages, triples, LLM output, uploaded file names) and must never show
a traceback: one place makes such text inert for markdown and turns a page's errors into one line, so no page has
to remember how."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import pandas as pd
import streamlit as st

_CSS = """
<style>
  .block-container { padding-top: 2.2rem; max-width: 1400px; }
  [data-testid="stDataFrame"] { font-size: 15px; }
  .gear-note { color: #495057; font-size: 0.95rem; }
</style>
"""

_CONTROL = ("RerunException", "StopException", "RerunData")


# what Markdown or Streamlit reads as syntax: these characters anywhere; a line's leading spaces (an indented code
# block) and the dot after a line's leading number (an ordered list) where a line starts (CommonMark: after \n or \r)
_LINE = r"(?:\A|(?<=\n)|(?<=\r))"
_INERT = re.compile(rf"{_LINE}([ \t]+)|{_LINE}(\d{{1,9}})\.|([&<>\"'\\`*_{{}}\[\]()#+\-!|~:$@=])")
# Streamlit's Markdown (remark-gfm) links bare URLs and e-mail addresses in the text it has already decoded, so no
# entity stops them: an invisible WORD JOINER after "http"/"https"/"www" and before "@" breaks the patterns it looks
# for (`https?://`, `www.`, `name@host.tld`) and changes nothing a reader sees.
# (before "@" only where an address follows: "R@5" stays as it is, so a reader can search for it and copy it)
_LINKABLE = re.compile(r"(?<=https)(?=:)|(?<=http)(?=:)|(?<=www)(?=\.)|(?<=[\w.+-])(?=@[\w-]+(?:\.[\w-]+)+)",
                       re.IGNORECASE)
WORD_JOINER = "\u2060"


def _entities(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


def _inert(m: re.Match[str]) -> str:
    indent, number, char = m.groups()
    return _entities(indent) if indent else f"{number}&#46;" if number else _entities(char)


def esc_md(text: object) -> str:
    """Untrusted text made inert for every Streamlit element that renders Markdown (markdown, write, caption, table
    cells, error/warning/info/success, status labels, toasts, expander labels, progress text): HTML-escaped, markdown
    and Streamlit syntax turned into entities (so a passage cannot add links, images, lists, code, :material: icons,
    colours or maths), and bare URLs and e-mail addresses kept from being linked."""
    unlinked = _LINKABLE.sub(WORD_JOINER, str(text))
    # one pass, so the entities written for one character are never escaped again by the rule for another
    return _INERT.sub(_inert, unlinked)


def md_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A table for st.table, whose cells render Markdown: every text cell through esc_md (numbers stay numbers)."""
    return frame.map(lambda v: esc_md(v) if isinstance(v, str) else v)


def guarded(fn: Callable[[], None]) -> Callable[[], None]:
    """Run a page body; any error becomes one st.error line, never a traceback."""

    @functools.wraps(fn)
    def wrapper() -> None:
        try:
            fn()
        except Exception as exc:
            if type(exc).__name__ in _CONTROL:
                raise
            st.error(f"{type(exc).__name__}: {esc_md(one_line(exc))}")

    return wrapper


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:400]


def setup(title: str, icon: str) -> None:
    """Common page header; call once at the top of a page (st.set_page_config is done by app.py). `icon` is one of
    Streamlit's bundled Material icons (":material/chat:"), which draw without an emoji font and without a network."""
    st.markdown(_CSS, unsafe_allow_html=True)
    st.title(f"{icon} {title}")
