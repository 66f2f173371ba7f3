"""Small frozen records shared by every module; they carry data, never behaviour."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

SPO = tuple[str, str, str]  # a triple's (subject, predicate, object) as text: what LLMs read and write
Retriever = Literal["bm25", "dense", "hybrid"]  # how a passage or triple list is searched (Settings.retriever)
StageProgress = Callable[[str, int, int], None]  # (stage, done, total): how long jobs report progress


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage of the corpus C; `id` is its row in the index."""

    id: int
    title: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        """Identity used to match gold passages: MuSiQue reuses titles, so title alone is not enough."""
        return (self.title, self.text)


@dataclass(frozen=True, slots=True)
class Triple:
    """A knowledge triple of T; it belongs to exactly one passage."""

    id: int
    subject: str
    predicate: str
    object: str
    passage_id: int

    @property
    def spo(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True, slots=True)
class Scored:
    """An item id (passage or triple) with its retrieval score, best first in a ranked list."""

    id: int
    score: float


@dataclass(frozen=True, slots=True)
class Beam:
    """One sequence of triples kept by Diverse Triple Beam Search.

    `score` is the accumulated (and diversity-weighted) score used for ranking; `hop_scores[i]` is the raw
    cosine score(q, T[:i+1]) and `penalties[i]` the factor exp(-min(n, γ)/γ) applied at hop i (1.0 at hop 0).
    """

    triple_ids: tuple[int, ...]
    score: float
    hop_scores: tuple[float, ...]
    penalties: tuple[float, ...]
