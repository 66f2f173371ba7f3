"""The terminal is a sink that obeys what it is sent: an ESC from a passage title can recolour the screen, set the
window's title (OSC) or, on some terminals, worse; a `[bold]` or `[link=…]` is Rich markup. Titles, passage text,
questions, answers, file names and model output reach it through every command, so the rule lives here once:
`esc_term` makes such text print as exactly what it is (control characters shown as `\\x1b`, markup as brackets),
and the consoles every command prints through (`TerminalConsole`) show control characters visibly in whatever string
they render — table cells, titles and lines built elsewhere (the narration of gear/trace/narrate.py) included — so a
forgotten `esc_term` can at worst let markup through, never a control byte."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

# C0 (but newline and tab, which lay text out and command nothing), DEL and C1: the bytes a terminal acts on
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible_controls(text: str) -> str:
    """Every control character as its Python escape (`\\x1b`, `\\x07`, `\\x9b`): seen, never obeyed."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def esc_term(text: object) -> str:
    """Untrusted text made inert for a Rich console: control characters visible, markup brackets escaped."""
    return escape(visible_controls(str(text)))


class TerminalConsole(Console):
    """A Rich console that never writes a control character it was handed in a string: every string it renders
    (print's arguments, table cells, titles, captions) passes `visible_controls` first; the colours Rich itself
    writes for markup are untouched. Emoji codes (`:warning:`) stay text too: a title may hold one."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(emoji=False, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(visible_controls(text), **kwargs)


# the control characters json.dumps(ensure_ascii=False) leaves as they are: DEL and C1 (it escapes C0 itself)
_JSON_LEFT = re.compile(r"[\x7f-\x9f]")


def json_text(data: Any, indent: int | None = 1) -> str:
    """JSON for a terminal or a pipe: readable (non-ASCII letters stay letters) and without a control character,
    each written as its JSON escape (`\\u001b`, `\\u009b`), so the text still parses to the same data."""
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return _JSON_LEFT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
