"""What a trace keeps of passages, triples, beams, entities and facts: small frozen records with the text a UI shows,
so a saved trace redraws the whole run without the index."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BeamCandidatesView",
    "BeamView",
    "CandidateView",
    "EdgeView",
    "EntityView",
    "FactSeedView",
    "PassageLinkView",
    "PassageView",
    "TripleLinkView",
    "TripleView",
]


# -- views: what a trace keeps of passages, triples and beams ---------------------------------------------------------
@dataclass(frozen=True)
class PassageView:
    id: int
    title: str
    text: str
    score: float = 0.0
    gold: bool = False


@dataclass(frozen=True)
class TripleView:
    id: int
    subject: str
    predicate: str
    object: str
    passage_id: int
    passage_title: str = ""
    gold: bool = False

    @property
    def spo(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True)
class BeamView:
    triple_ids: list[int]
    score: float
    hop_scores: list[float]
    penalties: list[float]


@dataclass(frozen=True)
class CandidateView:
    """One candidate Algorithm 1 weighed (gear.retrieve.beam.Candidate): the triple t it adds (−1: a beam with no
    neighbour left, carried forward as itself), score(q, T∘t), s' = s + score(q, T∘t), its rank n within the beam's V
    (0-based, by s'), the factor e^(−min(n, γ)/γ), s' × factor, and whether top(B, b) kept it."""

    triple_id: int
    hop_score: float
    accumulated: float
    rank: int
    penalty: float
    score: float
    kept: bool


@dataclass(frozen=True)
class BeamCandidatesView:
    """A beam's candidates at one hop: the beam (its index in the previous step's beams), |V|, and the candidates
    recorded (the first few by rank and every kept one)."""

    beam: int
    total: int
    candidates: list[CandidateView]


@dataclass(frozen=True)
class TripleLinkView:
    proximal: list[str]
    linked: TripleView | None
    similarity: float


@dataclass(frozen=True)
class PassageLinkView:
    triple: list[str]
    passages: list[PassageView]


@dataclass(frozen=True)
class EntityView:
    """An entity node of the PPR graph: its normalised name, its seed (reset) weight and its PPR score."""

    id: int
    name: str
    seed: float = 0.0
    score: float = 0.0


@dataclass(frozen=True)
class EdgeView:
    """An edge of the PPR graph between nodes a trace shows. kind "relation" (entity ids; label = the predicate),
    "synonym" (entity ids; label = the cosine) or "context" (source = entity id, target = passage id)."""

    kind: str
    source: int
    target: int
    label: str = ""
    weight: float = 1.0


@dataclass(frozen=True)
class FactSeedView:
    """A triple matched to the query for PPR: its min-max-normalised cosine and whether the filter kept it."""

    triple: TripleView
    score: float
    kept: bool = True
