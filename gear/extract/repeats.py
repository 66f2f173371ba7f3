"""Stop a small model's repetition loop while it writes, not after: the largest token sink of local extraction.

Measured on the 20-passage set (docs/results.md, issue 26): the embedded 1.5B model falls into a loop on 8 of 20
passages, writing the same few triples again until the schema's cap of 18 — a third of all the tokens it writes for
the triples-only answer (188 a passage, 128 without the repeats). The duplicates are dropped when the answer is read,
so the index never sees them; writing them is pure cost. The guard watches the answer as it streams and stops the
model once `limit` complete triples in a row repeat earlier ones (2 lost no triple on those passages; 1 lost one);
the answer is then read up to there, as any answer cut short is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# a complete [s, p, o] of JSON strings (the entity list of the paper's answer has other lengths and never matches)
_TRIPLE = re.compile(r'\[\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\]')


class Repeating(Exception):  # a signal that ends the stream, not an error
    """Raised from the text listener: the model is repeating itself; `text` is the answer up to the last new triple
    and the repeats that showed it (the model's own words, still parseable as a cut-off answer)."""

    def __init__(self, text: str, pieces: int) -> None:
        super().__init__("the model repeats triples it has written")
        self.text, self.pieces = text, pieces


def _key(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The same triple as the answer's reader dedupes it: case and spacing do not count."""
    return tuple(" ".join(part.split()).casefold() for part in parts)


class RepeatGuard:
    """A text listener that passes pieces on to `inner` and raises Repeating after `limit` repeated triples in a row."""

    def __init__(self, limit: int, inner: Callable[[str], None] | None = None) -> None:
        self.limit, self.inner = limit, inner
        self.text = ""
        self.pieces = 0
        self._scanned = 0  # where the next complete triple may start
        self._seen: set[tuple[str, ...]] = set()
        self._in_a_row = 0

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
