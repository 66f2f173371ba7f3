"""Typed events of a run, and the Trace that records them: the contract between the engine and every UI.

Events carry the text of every passage and triple they mention, so a saved trace redraws the whole run without the
index or an LLM. A run can stream events to listeners (the app draws them as they arrive).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from gear.files import atomic_write_text
from gear.trace import schema
from gear.trace.cost import RunCost
from gear.trace.schema import FORMAT, FORMAT_VERSION, TraceError

__all__ = [
    "EVENT_TYPES",
    "FORMAT_VERSION",
    "Answered",
    "BaseRetrieved",
    "BeamCandidatesView",
    "BeamView",
    "BeamsSearched",
    "CandidateView",
    "EdgeView",
    "EntityView",
    "Event",
    "FactSeedView",
    "FinalRanking",
    "GistUpdated",
    "InitialNodes",
    "IterationStarted",
    "LLMAsking",
    "LLMCalled",
    "LLMText",
    "LLMWaiting",
    "Listener",
    "PPRRanked",
    "PPRSeeded",
    "PassageLinkView",
    "PassageView",
    "PassagesAdded",
    "PassagesExpanded",
    "PassagesFused",
    "PassagesLinked",
    "ProximalTriples",
    "QueryRewritten",
    "Reasoned",
    "RunCost",
    "RunFinished",
    "RunStarted",
    "StageTimed",
    "ThoughtWritten",
    "Trace",
    "TraceError",
    "TripleLinkView",
    "TripleView",
    "TriplesLinked",
    "Warned",
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


E = TypeVar("E", bound=Event)
Listener = Callable[[Event], None]


class Trace:
    """An ordered list of events; listeners see each event as it is recorded."""

    def __init__(self, events: list[Event] | None = None) -> None:
        self.events: list[Event] = list(events or [])
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: Event) -> None:
        self.events.append(event)
        for listener in self._listeners:
            listener(event)

    def emit_transient(self, event: Event) -> None:
        """Show an event to the listeners without recording it (streamed text: the final text is in the record; a
        wait for the model: the stage's time includes it)."""
        for listener in self._listeners:
            listener(event)

    # -- queries ------------------------------------------------------------------------------------------------------
    def of(self, cls: type[E], iteration: int | None = None) -> list[E]:
        return [e for e in self.events if isinstance(e, cls) and (iteration is None or e.iteration == iteration)]

    def first(self, cls: type[E], iteration: int | None = None) -> E | None:
        found = self.of(cls, iteration)
        return found[0] if found else None

    def iterations(self) -> list[int]:
        return sorted({e.iteration for e in self.events if isinstance(e, IterationStarted)})

    @property
    def question(self) -> str:
        start = self.first(RunStarted)
        return start.question if start else ""

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def llm_sources(self) -> dict[str, int]:
        """How many LLM calls each source answered: "model", "record" (recorded answers), "memo"."""
        counts = {"model": 0, "record": 0, "memo": 0}
        for call in self.of(LLMCalled):
            source = call.source or ("record" if call.cached else "model")  # traces from before `source`
            counts[source] = counts.get(source, 0) + 1
        return counts

    def paid_calls(self) -> list[LLMCalled]:
        """The run's LLM answers, each request once: a request repeated within the run (the memo answers it) was paid
        for the first time only, while an answer recorded, or given by the memo to an earlier run, stands for the
        model's work then."""
        paid: list[LLMCalled] = []
        seen: set[str] = set()
        for call in self.of(LLMCalled):
            if call.request:
                if call.request in seen:
                    continue
                seen.add(call.request)
            elif call.source == "memo":  # a trace from before calls named their request: the memo's were repeats
                continue
            paid.append(call)
        return paid

    def cost(self) -> RunCost:
        """What the run's LLM answers cost the model when it wrote them (gear.trace.cost), each request once; the
        run's own time beside it."""
        paid = self.paid_calls()
        recorded = sum(1 for c in paid if (c.source or ("record" if c.cached else "model")) != "model")
        finish = self.first(RunFinished)
        return RunCost(sum(c.prompt_tokens for c in paid), sum(c.completion_tokens for c in paid),
                       sum(c.seconds for c in paid), len(paid), recorded,
                       finish.total_ms / 1000 if finish is not None else None)

    def tokens(self, iteration: int | None = None, step: str | None = None) -> tuple[int, int]:
        """(prompt, completion) tokens the run's LLM answers cost when the model wrote them, each request once (as
        Trace.cost counts them), of one iteration or one step when given."""
        calls = [c for c in self.paid_calls() if iteration in (None, c.iteration) and step in (None, c.step)]
        return sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls)

    # -- JSON ---------------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION,
                "events": [{"kind": e.kind, **dataclasses.asdict(e)} for e in self.events]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: Any, source: str = "trace") -> Trace:
        """A trace file's data, every field checked by gear.trace.schema; TraceError names the field that fails."""
        return cls(schema.decode(data, source, EVENT_TYPES))

    @classmethod
    def from_json(cls, text: str, source: str = "trace") -> Trace:
        return cls(schema.decode_json(text, source, EVENT_TYPES))

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """A saved trace (untrusted: its size, nesting and every field checked before it is used)."""
        return cls(schema.load(Path(path), EVENT_TYPES))
