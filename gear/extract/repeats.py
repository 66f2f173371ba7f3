"""Stop a small model's repetition loop while it writes, not after: the largest token sink of local extraction.

Measured on the 20-passage set (docs/results.md): the embedded 1.5B model falls into a loop on 8 of 20
passages, writing the same few triples again until the schema's cap of 18 — a third of all the tokens it writes for
the triples-only answer (188 a passage, 128 without the repeats). The duplicates are dropped when the answer is read,
so the index never sees them; writing them is pure cost. The guard watches the answer as it streams and stops the
model once `limit` complete triples in a row repeat earlier ones (2 lost no triple on those passages; 1 lost one);
the answer is then read up to there, as any answer cut short is.

The other loop writes one string without end ("The Demon Child Trilogy and The Wolfblade Trilogy and The Demon Child
Trilogy and …", "Steve Trevor Steve Trevor …", a row of dots) until the answer's cap of 1,024 tokens: 2 of 200
MuSiQue passages and 1 of the first 15 HotpotQA ones, ≈ 37–43 s each against ≈ 5 s for a passage. A part longer than
the reader's limit (runner.MAX_PART_CHARS, 200 characters) is dropped anyway, and in 817 journaled answers no string
of a triple list ever closed past 200 characters; so once an open string of the triple list passes RUN_ON_CHARS
(twice that limit) the model is stopped, and the answer so far is read as the one the cap would have cut.

A third way to reach the cap writes nothing at all: the model slips into single quotes inside a string
(`"Ron Thompson'],['The No Mercy Man','starring','Mike Lane']]}`) and closes its answer there. The schema's grammar
still holds that string open, so the server goes on generating until the cap — tokens that stream no text (measured
on one HotpotQA passage: 1,024 tokens, 249 pieces of text, 64 s). When the answer so far ends in `']]}` while a string
is open by the JSON's own quotes, the model has finished in its own eyes: it is stopped there, and the text read is the
same the cap would have left (a part that itself ends in `']]}` would be cut there; none in 622 journaled answers).
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: an open string of the triple list longer than this is a run-on loop (twice runner.MAX_PART_CHARS: a part past 200
#: characters is dropped when the answer is read)
RUN_ON_CHARS = 400
TRIPLES_KEY = '"triples"'  # where the triple list begins (the paper's joint answer writes its entity list first)
_ENDED = re.compile(r"'\s*(?:\]\s*){2,}\}\s*$")  # a single-quoted part, the end of the triple list and of the answer

# a complete [s, p, o] of JSON strings (the entity list of the paper's answer has other lengths and never matches)
_TRIPLE = re.compile(r'\[\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\]')


class Repeating(Exception):  # a signal that ends the stream, not an error
    """Raised from the text listener: the model is repeating itself; `text` is the answer up to the last new triple
    and the repeats that showed it (the model's own words, still parseable as a cut-off answer)."""

    def __init__(self, text: str, pieces: int) -> None:
        super().__init__(self.why)
        self.text, self.pieces = text, pieces

    why = "the model repeats triples it has written"


class ClosedInQuotes(Repeating):
    """Raised from the text listener: the answer has ended (`]]}`) inside a string the JSON never closed (the model
    wrote single quotes); the server would go on to the cap without writing a character more."""

    why = "the model ended its answer inside an open string"


class RunningOn(Repeating):
    """Raised from the text listener: one string of the triple list has run past RUN_ON_CHARS without closing; `text`
    is the answer so far, which is read as the answer cut by the token cap would have been (its open string dropped:
    too long, or not a triple)."""

    why = "the model writes one string without end"


def _key(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The same triple as the answer's reader dedupes it: case and spacing do not count."""
    return tuple(" ".join(part.split()).casefold() for part in parts)


class RepeatGuard:
    """A text listener that passes pieces on to `inner`, raises Repeating after `limit` repeated triples in a row,
    RunningOn once a string of the triple list runs on past RUN_ON_CHARS, and ClosedInQuotes once the answer ends
    inside a string its JSON left open."""

    def __init__(self, limit: int, inner: Callable[[str], None] | None = None) -> None:
        self.limit, self.inner = limit, inner
        self.text = ""
        self.pieces = 0
        self._scanned = 0  # where the next complete triple may start
        self._seen: set[tuple[str, ...]] = set()
        self._in_a_row = 0
        # the triple list's strings, lexed as they arrive: where the list begins, how far lexed, the open string
        self._triples_at = -1
        self._lexed = 0
        self._in_string = self._escaped = False
        self._string_from = 0

    def __call__(self, piece: str) -> None:
        self.text += piece
        self.pieces += 1
        if self.inner is not None:
            self.inner(piece)
        for match in _TRIPLE.finditer(self.text, self._scanned):
            self._scanned = match.end()
            key = _key(match.groups())
            if key in self._seen:
                self._in_a_row += 1
                if self._in_a_row >= self.limit:
                    raise Repeating(self.text[: match.end()], self.pieces)
            else:
                self._in_a_row = 0
                self._seen.add(key)
        if self._lex_triple_list() and self._in_string:
            if len(self.text) - self._string_from > RUN_ON_CHARS:
                raise RunningOn(self.text, self.pieces)
            if _ENDED.search(self.text, max(self._string_from, len(self.text) - 32)):  # only the answer's tail
                raise ClosedInQuotes(self.text, self.pieces)

    def _lex_triple_list(self) -> bool:
        """Follow the JSON strings of the triple list through the text not lexed yet (is a string open, since where);
        False while the triple list has not begun."""
        if self._triples_at < 0:
            at = self.text.find(TRIPLES_KEY)
            if at < 0:
                return False
            self._triples_at = self._lexed = at + len(TRIPLES_KEY)
        text = self.text
        for i in range(self._lexed, len(text)):
            c = text[i]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif c == "\\":
                    self._escaped = True
                elif c == '"':
                    self._in_string = False
            elif c == '"':
                self._in_string, self._string_from = True, i + 1
        self._lexed = len(text)
        return True
