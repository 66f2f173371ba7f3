"""Typed events of a run: the contract between the engine and every UI, imported as `gear.events`. Each event carries
the text of every passage and triple it mentions (gear.trace.views), so a saved trace redraws the whole run without
the index or an LLM; each class registers itself by kind as it is defined, so the decoder knows every event there is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from gear.trace.views import (
    BeamCandidatesView,
    BeamView,
    CandidateView,
    EdgeView,
    EntityView,
    FactSeedView,
    PassageLinkView,
    PassageView,
    TripleLinkView,
    TripleView,
)

__all__ = [
    "EVENT_TYPES",
    "Answered",
    "BaseRetrieved",
    "BeamsSearched",
    "Event",
    "FinalRanking",
    "GistUpdated",
    "InitialNodes",
    "IterationStarted",
    "LLMAsking",
    "LLMCalled",
    "LLMText",
    "LLMWaiting",
    "PPRRanked",
    "PPRSeeded",
    "PassagesAdded",
    "PassagesExpanded",
    "PassagesFused",
    "PassagesLinked",
    "ProximalTriples",
    "QueryRewritten",
    "Reasoned",
    "RunFinished",
    "RunStarted",
    "StageTimed",
    "ThoughtWritten",
    "TriplesLinked",
    "Warned",
]


# -- events ----------------------------------------------------------------------------------------------------------
#: kind → event class, for every event a trace stores: each class registers itself as it is defined, so the decoder
#: (Trace.from_dict) knows every event there is and an old trace file loads as long as its kinds still exist
EVENT_TYPES: dict[str, type[Event]] = {}


@dataclass(frozen=True)
class Event:
    """One thing that happened in a run. A subclass names its `kind` (its name in a trace file); a `transient` one
    goes to the listeners only (Trace.emit_transient) and is never stored, so it is not registered for decoding."""

    kind: ClassVar[str] = "event"
    transient: ClassVar[bool] = False
    iteration: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            raise TypeError(f"event {cls.__name__} needs its own `kind` (its name in a trace file)")
        known = EVENT_TYPES.get(cls.kind)
        if known is not None:
            raise TypeError(f"event kind {cls.kind!r} of {cls.__name__} is taken by {known.__name__}")
        if not cls.transient:
            EVENT_TYPES[cls.kind] = cls


@dataclass(frozen=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    question: str
    method: str
    retriever: str
    settings: dict[str, Any]
    question_id: str = ""
    gold_passage_ids: list[int] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class IterationStarted(Event):
    kind: ClassVar[str] = "iteration_started"
    query: str


@dataclass(frozen=True)
class BaseRetrieved(Event):
    kind: ClassVar[str] = "base_retrieved"
    query: str
    k: int
    passages: list[PassageView]


@dataclass(frozen=True)
class ProximalTriples(Event):
    """Output of `read`. role "sync" = T′q (reads the base passages), "gist" = T^G_q(n) (goes into the memory)."""

    kind: ClassVar[str] = "proximal_triples"
    role: str
    source: str
    passage_ids: list[int]
    triples: list[list[str]]
    raw: str = ""


@dataclass(frozen=True)
class TriplesLinked(Event):
    kind: ClassVar[str] = "triples_linked"
    links: list[TripleLinkView]


@dataclass(frozen=True)
class InitialNodes(Event):
    kind: ClassVar[str] = "initial_nodes"
    source: str  # "naive" (all triples of the base passages) or "sync" (tripleLink of proximal triples)
    triples: list[TripleView]


@dataclass(frozen=True)
class BeamsSearched(Event):
    kind: ClassVar[str] = "beams_searched"
    steps: list[list[BeamView]]
    triples: list[TripleView]  # every triple any beam mentions
    width: int
    length: int
    max_neighbours: int
    gamma: float
    diversity: bool
    score_mode: str
    candidates_scored: int
    # what the search weighed, for teaching it (traces from before these fields have none: recorded 0): at most
    # `recorded` candidates per beam and hop besides the kept ones, B0 before top(B0, b), and the candidates' triples
    # that no final beam holds
    recorded: int = 0
    initial_candidates: list[CandidateView] = field(default_factory=list)
    hops: list[list[BeamCandidatesView]] = field(default_factory=list)
    candidate_triples: list[TripleView] = field(default_factory=list)


@dataclass(frozen=True)
class PassagesExpanded(Event):
    kind: ClassVar[str] = "passages_expanded"
    passages: list[PassageView]  # C̃q: source passages of the flattened beams, in order


@dataclass(frozen=True)
class PassagesFused(Event):
    kind: ClassVar[str] = "passages_fused"
    passages: list[PassageView]  # Cq(n) = RRF(C̃q, C′q)


@dataclass(frozen=True)
class GistUpdated(Event):
    kind: ClassVar[str] = "gist_updated"
    added: list[list[str]]
    memory: list[list[str]]


@dataclass(frozen=True)
class Reasoned(Event):
    """The termination verdict. `rejected` is non-empty when the model said "answerable" but the agent did not accept
    it (small profile: the answer is not in the memory facts it cited); `answerable` is then False."""

    kind: ClassVar[str] = "reasoned"
    answerable: bool
    answer: str
    reason: str
    raw: str = ""
    cited: list[int] = field(default_factory=list)
    rejected: str = ""


@dataclass(frozen=True)
class QueryRewritten(Event):
    """q(n+1). `retried`: the first rewrite repeated an earlier query and the rewriter was asked once more;
    `repeated`: the query kept is still one asked before."""

    kind: ClassVar[str] = "query_rewritten"
    query: str
    raw: str = ""
    retried: bool = False
    repeated: bool = False


@dataclass(frozen=True)
class PassagesLinked(Event):
    kind: ClassVar[str] = "passages_linked"
    links: list[PassageLinkView]


@dataclass(frozen=True)
class PPRSeeded(Event):
    """PPR's seeds (HippoRAG 2): the triples matched to `query` (and what the recognition filter kept), the entity
    seeds with their weights, and the factor on every passage's dense score. `fallback`: no fact was left, so the
    dense ranking stands (HippoRAG 2 does the same)."""

    kind: ClassVar[str] = "ppr_seeded"
    query: str
    facts: list[FactSeedView]
    entities: list[EntityView]
    passage_weight: float
    filtered: bool = False
    raw: str = ""  # the filter's answer
    fallback: bool = False


@dataclass(frozen=True)
class PPRRanked(Event):
    """Personalized PageRank's outcome: the top entities by score with the edges among them (and to the top
    passages) to draw, the passages ranked by score, and the size of the graph it ran on."""

    kind: ClassVar[str] = "ppr_ranked"
    damping: float
    iterations: int
    entities: list[EntityView]
    edges: list[EdgeView]
    passages: list[PassageView]
    graph: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PassagesAdded(Event):
    """IRCoT: the passages a retrieval with `query` added to the collection (new ones, in rank order), and the ids of
    the whole collection after it, in the run's final order."""

    kind: ClassVar[str] = "passages_added"
    query: str
    passages: list[PassageView]
    collected: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class ThoughtWritten(Event):
    """IRCoT: the next sentence of the chain of thought (the query of the next retrieval); `final` when it gives the
    answer ("So the answer is: …")."""

    kind: ClassVar[str] = "thought_written"
    thought: str
    raw: str = ""
    final: bool = False
    answer: str = ""


@dataclass(frozen=True)
class FinalRanking(Event):
    kind: ClassVar[str] = "final_ranking"
    passages: list[PassageView]


@dataclass(frozen=True)
class Answered(Event):
    kind: ClassVar[str] = "answered"
    answer: str
    raw: str
    passage_ids: list[int]
    em: float | None = None
    f1: float | None = None


@dataclass(frozen=True)
class LLMCalled(Event):
    """One LLM call of a run. Its tokens and seconds are what the answer cost when the model wrote it, whoever gives
    it now (`source`): the model, a recording, or the memo (in traces made before the memo kept them, its seconds
    are 0)."""

    """One LLM call of a run. Its tokens and seconds are what the answer cost when the model wrote it, whoever gives
    it now (`source`): the model, a recording, or the memo (in traces made before the memo kept them, its seconds
    are 0)."""

    kind: ClassVar[str] = "llm_called"
    step: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool = False
    source: str = ""  # "model", "record" (a recorded answer) or "memo" (an identical call earlier in this process)
    # the request as the answer store names it (sha256 of model, messages, schema and the token cap) and what the
    # model wrote: two runs of one question are compared call by call (gear.trace.difference); "" in older traces
    request: str = ""
    text: str = ""


@dataclass(frozen=True)
class LLMAsking(Event):
    """An LLM step is about to ask the model: its prompt's size (estimated before the call, ≈4 characters a token),
    how much of it the server has already read (gear.llm.speed.ModelSpeed.cached_head) and the most it may write, so
    a listener can say what the run waits for and for how long (gear.agent.progress). Listeners see it; a trace never
    stores it (the LLMCalled after it records the real counts)."""

    kind: ClassVar[str] = "llm_asking"
    transient: ClassVar[bool] = True
    step: str
    model: str
    prompt_tokens: int
    max_tokens: int
    cached_tokens: int = 0  # of prompt_tokens, the head a server with a prompt cache has already read (an estimate)
    answered_by: str = ""  # "memo" or "record" when the answer is there already and the model will not be asked


@dataclass(frozen=True)
class LLMText(Event):
    """The text of an LLM step so far, while the model writes it. Listeners see it; a trace never stores it."""

    kind: ClassVar[str] = "llm_text"
    transient: ClassVar[bool] = True
    step: str
    text: str


@dataclass(frozen=True)
class LLMWaiting(Event):
    """An LLM step waits for its turn at a model that serves one call at a time (gear.llm.queue): `ahead` calls are
    before it, 0 once its turn came. Emitted on every poll of the queue, changed or not, so a listener that draws it
    is a heartbeat (Streamlit can stop a cancelled script only while it draws). Listeners see it; a trace never
    stores it."""

    kind: ClassVar[str] = "llm_waiting"
    transient: ClassVar[bool] = True
    step: str
    ahead: int


@dataclass(frozen=True)
class StageTimed(Event):
    kind: ClassVar[str] = "stage_timed"
    stage: str
    ms: float


@dataclass(frozen=True)
class Warned(Event):
    kind: ClassVar[str] = "warned"
    message: str


@dataclass(frozen=True)
class RunFinished(Event):
    kind: ClassVar[str] = "run_finished"
    iterations: int
    total_ms: float
    recall: dict[str, float] = field(default_factory=dict)
