"""Which passage a triple the reader wrote came from — the trace does not say, so the diagnosis decides it here.

The rule (lexical grounding): a triple is drawn from the passage(s), among those the reader read, that contain the most
of its subject and of its object. For an entity e and a passage p, cover(e, p) is the share of e's content tokens
(SQuAD-normalised, a few function words dropped, a plural/possessive "s" stripped) found among p's title and text
tokens, each token weighted by its IDF over the passages the trace shows (so "Lund" counts for more than "Cathedral"
in a run about cathedrals; a token no passage has weighs the most). grounding(t, p) = min(cover(subject),
cover(object)): both ends must be there. The triple is attributed to every read passage with the highest grounding,
when that is at least GROUNDED (0.5: at least half of each end, by weight). A triple that reaches GROUNDED in none of
the passages read is "unsupported": the reader wrote it from no passage in front of it — the signal of a reader
hallucination.

Why not the tripleLink'ed index triple's passage: that is the `link` stage itself (tripleLink may land in any passage
of the index, read or not), so read and link would always agree and a reader that wrote a fact the index lacks could
never be told from one that never read it. The predicate is left out: readers paraphrase relations freely, entities
far less. Known limits: a triple whose ends are both named in a passage that does not state the relation counts as
drawn from it, and a reader that translates a name ("Saint" for "St.") loses that token.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from gear.diagnosis.matching import holds

GROUNDED = 0.5
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_FUNCTION_WORDS = frozenset({"of", "in", "on", "at", "to", "for", "by", "and", "or", "from", "with", "as", "is",
                             "was", "be", "its", "it"})


def normalise(text: str) -> str:
    """gear.measures.normalize_answer (SQuAD's), with one translate for the punctuation: a diagnosis normalises
    every passage a trace shows, and the per-character test there costs ~20× more on passage-length text."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def tokens(text: str) -> list[str]:
    """Content tokens of a text: SQuAD-normalised, function words dropped, a trailing plural/possessive s stripped."""
    out = []
    for word in normalise(text).split():
        if word in _FUNCTION_WORDS:
            continue
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


Weight = Callable[[str], float]


def _uniform(word: str) -> float:
    return 1.0


@lru_cache(maxsize=1 << 16)
def entity_tokens(entity: str) -> tuple[str, ...]:
    """tokens() of a short string (an entity name), remembered: the same names are grounded against every passage."""
    return tuple(tokens(entity))


def cover(entity: str, passage_tokens: frozenset[str], weight: Weight = _uniform) -> float:
    """Share (by weight) of the entity's content tokens found in the passage (1.0 for an entity with none)."""
    words = entity_tokens(entity)
    total = sum(weight(w) for w in words)
    if not words or total <= 0:
        return 1.0
    return sum(weight(w) for w in words if w in passage_tokens) / total


def grounding(triple: Sequence[str], passage_tokens: frozenset[str], weight: Weight = _uniform) -> float:
    if len(triple) < 3:
        return 0.0
    return min(cover(triple[0], passage_tokens, weight), cover(triple[2], passage_tokens, weight))


def names_in(entity: str, passage_tokens: frozenset[str]) -> bool:
    """The whole entity name (every content token, at least one, not only digits) is in the passage."""
    words = entity_tokens(entity)
    return bool(words) and not all(w.isdigit() for w in words) and all(w in passage_tokens for w in words)


@dataclass(frozen=True)
class Attribution:
    """Where one triple came from: the read passages it is drawn from (empty when unsupported) and its best score."""

    triple: tuple[str, ...]
    passages: tuple[int, ...]
    score: float

    @property
    def supported(self) -> bool:
        return bool(self.passages)


class PassageTokens:
    """Token sets of the passages a trace shows, made once per passage (a diagnosis asks for them many times)."""

    def __init__(self, texts: Mapping[int, tuple[str, str]]) -> None:
        self._texts = texts
        self._tokens: dict[int, frozenset[str]] = {}
        self._df: Counter[str] | None = None
        self._idf: dict[str, float] = {}
        self._n = 0

    def idf(self, word: str) -> float:
        """log(1 + N / (1 + df)) over the passages whose text the trace shows (made on first use)."""
        if self._df is None:
            with_text = [pid for pid, (_, text) in self._texts.items() if text]
            self._df = Counter(w for pid in with_text for w in self.of(pid))
            self._n = len(with_text)
        if word not in self._idf:
            self._idf[word] = math.log(1.0 + self._n / (1.0 + self._df.get(word, 0)))
        return self._idf[word]

    def known(self, pid: int) -> bool:
        return pid in self._texts

    def of(self, pid: int) -> frozenset[str]:
        if pid not in self._tokens:
            title, text = self._texts.get(pid, ("", ""))
            self._tokens[pid] = frozenset(tokens(f"{title} {text}"))
        return self._tokens[pid]

    def attribute(self, triple: Sequence[str], read: Iterable[int]) -> Attribution:
        """The read passages `triple` is drawn from (every one with the best grounding ≥ GROUNDED)."""
        scores = [(pid, grounding(triple, self.of(pid), self.idf)) for pid in dict.fromkeys(read) if self.known(pid)]
        best = max((s for _, s in scores), default=0.0)
        chosen = tuple(pid for pid, s in scores if s == best) if best >= GROUNDED else ()
        return Attribution(tuple(triple), chosen, best)

    def contains(self, pid: int, answer: str) -> bool:
        """The passage's title or text holds the answer, as answers are matched (gear.diagnosis.matching.holds)."""
        if not self.known(pid):
            return False
        title, text = self._texts[pid]
        return holds(f"{title}. {text}", answer)
