"""Which hop of the question each gold passage serves, and for a later hop the name that leads to it.

A loss is judged by the step meant to carry the passage: a hop-1 passage — one the question names — is the base
retriever's to find; a passage a hop leads to is reached only through a name another gold passage supplies (the
"bridge"), so it is the readers', the graph's and the rewriter's to bring (bench/labelling/PROTOCOL.md, "hop").

The rule, from the texts alone (no dataset field):
- a passage is hop 1 when the question (or the run's first query) holds every content word of its title (a
  parenthesised qualifier such as "(film)" aside); when the question names no gold passage, those it describes: the
  passage's text holds half of the question's words (at least three, its question words aside; by IDF over the
  passages the trace shows), else the one whose text holds the most of them;
- a passage p is one hop after q when q's text holds the words of p's title that the question does not, at least
  half of them by IDF ("The Rank Organisation" in Novair's passage; "St. Peter" of "St. Peter's Basilica" in Bremen
  Cathedral's; "Wilmington" of "Wilmington International Airport" in WILM's) — the bridge: those of the words q holds;
- a passage neither names nor is led to is one hop after the last hop found (every compared entity of a comparison
  question is hop 1 by the first rule).
The bridge words of a later-hop passage are those title words the question lacks (that the passage before it holds):
a reader's triple, a query or a thought "names the bridge" when it holds them all. Accents are set aside ("Tekezé"
is "Tekeze").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from gear.diagnosis.facts import TraceFacts
from gear.diagnosis.grounding import entity_tokens, tokens
from gear.events import BaseRetrieved

_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")
#: words every question has (as tokens() writes them: "does" → "doe", "this" → "thi"), no description of a passage
QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did", "doe", "do",
                            "were", "are", "ha", "have", "had", "many", "much", "than", "same", "both", "also", "thi",
                            "that", "they", "he", "she", "his", "her", "their", "there", "name", "one", "not"})
DESCRIBED_WORDS = 3    # a description: at least this many of the question's words besides its question words …
DESCRIBED_SHARE = 0.5  # … of which a passage's text holds this share (by IDF) to be what the question describes


@dataclass(frozen=True)
class Hop:
    """One gold passage's hop, the gold passage that leads to it (None for hop 1) and the words that do."""

    passage: int
    hop: int
    source: int | None = None
    words: tuple[str, ...] = ()  # the bridge: title words the question lacks (hop ≥ 2)
    name: str = ""               # the title those words come from, as a person reads it
    named: bool = False          # hop 1 because the question (or the first query) names its title

    def named_by(self, text: str) -> bool:
        """The text (a triple's end, a query, a thought) holds every bridge word."""
        have = set(words_of(text))
        return bool(self.words) and all(w in have for w in self.words)


def core(title: str) -> str:
    """The title without a trailing qualifier: "Jump for Glory (film)" → "Jump for Glory"."""
    return _QUALIFIER.sub("", title).strip() or title


@lru_cache(maxsize=1 << 14)
def words_of(text: str) -> tuple[str, ...]:
    """Content tokens (gear.diagnosis.grounding.tokens) with accents set aside."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return tuple(entity_tokens(folded)) if len(folded) < 200 else tuple(tokens(folded))


def hops(facts: TraceFacts, gold: Sequence[int]) -> dict[int, Hop]:
    """The hop of every gold passage whose title is known (see the module's rule)."""
    question = set(words_of(facts.start.question if facts.start else ""))
    first = next((e for e in facts.trace.of(BaseRetrieved) if e.iteration == min(facts.iterations, default=1)), None)
    asked = question | set(words_of(first.query)) if first is not None else question
    titles = {pid: core(facts.title(pid)) for pid in gold if facts.texts.get(pid, ("", ""))[0]}
    words = {pid: words_of(t) for pid, t in titles.items()}
    texts = {pid: set(words_of(" ".join(facts.texts[pid]))) for pid in titles}
    found = {pid: Hop(pid, 1, named=True) for pid, w in words.items() if w and all(x in asked for x in w)}
    described = set(asked) - QUESTION_WORDS
    if not found and len(described) >= DESCRIBED_WORDS:  # a question that names no gold passage describes them
        found = {pid: Hop(pid, 1) for pid in titles if _share(facts, described, texts[pid]) >= DESCRIBED_SHARE}
    if not found and titles:
        best = max(titles, key=lambda pid: (_share(facts, question, texts[pid]), -gold.index(pid)))
        found[best] = Hop(best, 1)
    level = 1
    while len(found) < len(titles):
        frontier = [h for h in found.values() if h.hop == level]
        if not frontier:
            break
        level += 1
        for pid in titles:
            if pid in found:
                continue
            new = tuple(w for w in words[pid] if w not in question) or words[pid]
            for h in frontier:
                if facts.text_known(h.passage) and _share(facts, new, texts[h.passage]) >= 0.5:
                    found[pid] = Hop(pid, level, h.passage, tuple(w for w in new if w in texts[h.passage]),
                                     titles[pid])
                    break
    last = max((h.hop for h in found.values()), default=0)
    for pid in titles:
        if pid not in found:
            new = tuple(w for w in words[pid] if w not in question) or words[pid]
            found[pid] = Hop(pid, last + 1, None, new, titles[pid])
    return found


def _share(facts: TraceFacts, wanted: Sequence[str] | set[str], have: set[str]) -> float:
    """The share of the wanted words (by IDF over the passages the trace shows) that `have` holds."""
    total = sum(facts.tokens.idf(w) for w in wanted)
    return sum(facts.tokens.idf(w) for w in wanted if w in have) / total if total else 0.0
