"""The records of a diagnosis and the shared vocabulary (stage and category names) they are written in.

The names are the ones a person labelling runs by hand uses too, so a proposal and a label can be compared
word for word: change them only together with that vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

# -- stages a gold passage passes through (pipeline order within each method family) -------------------------------
BASE = "base"            # in the base list C′q(n)
READ = "read"            # the sync reader drew a proximal triple from it
LINK = "link"            # a tripleLink'ed initial triple belongs to it
INITIAL = "initial"      # NaiveGE: one of its triples is an initial node
BEAM = "beam"            # a kept beam holds one of its triples (hop 1..l)
EXPANDED = "expanded"    # in C̃q(n)
FUSED = "fused"          # in Cq(n)
GIST = "gist"            # the gist reader drew a triple from it
LINKED = "linked"        # a passageLink list of a gist triple holds it
SEED = "seed"            # PPR: a seed fact is one of its triples, or a seed entity is one of its entities
RANKED = "ranked"        # PPR: in PPR's ranking
RETRIEVAL = "retrieval"  # IRCoT: a retrieval (question or thought n−1) returned it
FINAL = "final"          # in the final ranking
FOUND = "final@k"        # in the final ranking within k: the passage is "found"

STAGES = (BASE, READ, LINK, INITIAL, BEAM, EXPANDED, FUSED, GIST, LINKED, SEED, RANKED, RETRIEVAL, FINAL, FOUND)
RUN_LEVEL = 0  # the `iteration` of a mark made once per run (passageLink, final ranking)

# -- error categories (the paper's Table "error_category_analysis", App. "Negative Instances in MuSiQue") ----------
BASE_RETRIEVER = "base_retriever"
EXTRACTION = "extraction"
GRAPH = "graph"
READER = "reader"
REASONER = "reasoner"
DATASET = "dataset"
# -- and three the paper's table has no row for (bench/labelling/PROTOCOL.md) --------------------------------------
ANSWER = "answer"        # the QA step answered wrong from passages that hold the answer
REWRITER = "rewriter"    # the rewriter asked nothing new although the gist held the entity to ask about
RANKING = "ranking"      # a gold passage some list of the run held, put past k by the final ranking
NONE = "none"
CATEGORIES = (BASE_RETRIEVER, EXTRACTION, GRAPH, READER, REASONER, DATASET, ANSWER, REWRITER, RANKING, NONE)

CATEGORY_LABELS = {  # as the paper (and the Traces page's tags) name them; the last three are the protocol's
    BASE_RETRIEVER: "base retriever limitation",
    EXTRACTION: "missing extraction detail",
    GRAPH: "graph quality",
    READER: "reader hallucination",
    REASONER: "reasoner hallucination",
    DATASET: "dataset issue",
    ANSWER: "answer step error",
    REWRITER: "rewriter repeat",
    RANKING: "final ranking",
    NONE: "no error",
}

# -- the steps a loss is laid at (bench/labelling/PROTOCOL.md "Steps"; a label's `responsible`) ---------------------
STEP_BASE, STEP_READ, STEP_LINK, STEP_BEAM, STEP_GIST = "base", "read", "link", "beam", "gist"
STEP_REWRITER, STEP_REASONER, STEP_PASSAGELINK, STEP_RANKING = "rewriter", "reasoner", "passagelink", "ranking"
STEP_RETRIEVAL, STEP_THOUGHT, STEP_SEED, STEP_WALK = "retrieval", "thought", "seed", "walk"
STEP_EXTRACTION, STEP_DATASET, STEP_ANSWER = "extraction", "dataset", "answer"
STEPS = (STEP_BASE, STEP_READ, STEP_LINK, STEP_BEAM, STEP_GIST, STEP_REWRITER, STEP_REASONER, STEP_PASSAGELINK,
         STEP_RANKING, STEP_RETRIEVAL, STEP_THOUGHT, STEP_SEED, STEP_WALK, STEP_EXTRACTION, STEP_DATASET)
HIGH, MEDIUM, LOW = "high", "medium", "low"  # a proposal's confidence, in the protocol's words

FOUND_STATUS, LOST_STATUS, OPEN_STATUS = "found", "lost", "open"  # open: the run was cut short before deciding


def stage_label(stage: str, k: int) -> str:
    return f"final@{k}" if stage == FOUND else stage


def hop_type(question_id: str) -> str:
    """MuSiQue's hop type from the id prefix (2hop, 3hop1, …), "all" for sets without one (as gear.data.corpus)."""
    prefix = question_id.split("__", 1)[0]
    return prefix if "hop" in prefix else "all"


# -- records ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """What one evidence line rests on, as the trace can be asked it again: a `claim` about the event of `step` in
    `iteration` (RUN_LEVEL for once-per-run steps), about a passage and a value (an entity, a triple as "s | p | o",
    a query, an answer). The claims (gear.diagnosis.claims.CLAIMS) are few and each re-derivable from the events;
    `rerun` marks a counterfactual re-run over the index, not a fact of the trace. The app links a line to its step."""

    claim: str
    step: str
    iteration: int
    passage: int | None = None
    value: str = ""


@dataclass(frozen=True)
class Cause:
    """One explanation a rule found: a category and the evidence for it (the first line is the summary)."""

    category: str
    evidence: tuple[str, ...]
    weak: bool = False  # a suspicion the trace cannot confirm: ranked after the default explanation
    ranking: bool = False  # a list ranked the passage out: after the loss at a stage it explains (same passage)
    passage: int | None = None  # the gold passage and the stage it was lost at that the cause explains (a category
    stage: str | None = None    # named after a stage needs both: gear.diagnosis.invariant)
    refs: tuple[Ref, ...] = ()  # what the first evidence line rests on
    step: str = ""              # the step responsible (STEPS), for a lost passage
    confidence: str = MEDIUM
    tie: Cause | None = None    # a cause that fits as well: "undetermined between" the two


@dataclass(frozen=True)
class StageMark:
    """Whether one gold passage reached one stage in one iteration (RUN_LEVEL for once-per-run stages), with its rank
    in the list that stage ranks (1-based) or the beam hop, and a short note naming what showed it."""

    stage: str
    iteration: int
    reached: bool
    rank: int | None = None
    hop: int | None = None
    note: str = ""


@dataclass
class GoldPassage:
    """One gold passage followed through the run: every mark, the stage it was lost at and what showed it."""

    id: int
    title: str
    marks: list[StageMark] = field(default_factory=list)
    status: str = OPEN_STATUS  # found | lost | open
    lost_at: str | None = None     # the first stage it did not reach (the shared vocabulary's "lost at")
    dropped_at: str | None = None  # the stage after the last one it reached: where it left the run for good
    evidence: list[str] = field(default_factory=list)
    hop: int | None = None          # which hop of the question it serves (gear.diagnosis.hops), None: not told
    bridge: str = ""                # for a hop ≥ 2: the name that leads to it, as the passage before it gives it
    responsible: str | None = None  # for a lost passage: the step meant to bring it that did not (STEPS)

    def best(self, stage: str) -> StageMark | None:
        """The best any iteration achieved at `stage`: a reached mark (best rank, then lowest hop, then earliest) or,
        when none reached it, the first mark that says so; None when the stage never ran."""
        marks = [m for m in self.marks if m.stage == stage]
        reached = [m for m in marks if m.reached]
        if reached:
            return min(reached, key=lambda m: (m.rank if m.rank is not None else 0, m.hop or 0, m.iteration))
        return marks[0] if marks else None

    def reached(self, stage: str) -> bool:
        return any(m.reached for m in self.marks if m.stage == stage)

    @property
    def final_rank(self) -> int | None:
        """Its rank in the run's final ranking (1-based); None when the ranking does not hold it or the run has none."""
        return next((m.rank for m in self.marks if m.stage == FINAL and m.reached), None)


@dataclass
class AnswerCheck:
    """The answer side: EM/F1 against the gold answers, whether a gold answer string is in the passages the QA step
    read (and in the gold passages at all), and the reasoner's verdicts."""

    answer: str | None
    gold: list[str]
    em: float | None = None
    f1: float | None = None
    qa_passage_ids: list[int] = field(default_factory=list)
    in_qa_passages: bool | None = None        # a gold answer occurs in the passages the QA step read
    in_gold_passages: bool | None = None      # a gold answer occurs in some gold passage (None: texts unknown)
    answerable_wrong: list[int] = field(default_factory=list)  # iterations whose "answerable" verdict was wrong
    rejected: list[int] = field(default_factory=list)          # iterations whose verdict was rejected as ungrounded
    stopped_at: int | None = None  # the iteration an "answerable" verdict (IRCoT: a final thought) ended the run
    max_iterations: int | None = None
    form_only: str = ""  # why a wrong answer is right in substance, EM failing it on form alone (diagnosis.matching)
    notes: list[str] = field(default_factory=list)

    @property
    def right(self) -> bool | None:
        return None if self.em is None else self.em >= 1.0

    @property
    def stopped_early(self) -> bool:
        return self.stopped_at is not None and self.max_iterations is not None and self.stopped_at < \
            self.max_iterations


@dataclass
class Diagnosis:
    """Where each gold passage of one run was lost, the answer checks, and the proposed error category (one, plus
    optionally a second) with the evidence used. `complete` is False for a run cut short (no final ranking or no
    RunFinished): it is diagnosed as far as it went."""

    question_id: str
    question: str
    method: str
    run: str                     # method plus the variant that matters (prompts, IRCoT's retriever): a report key
    family: str                  # the family whose stages apply (GeAR, SyncGE, NaiveGE, PPR, IRCoT, base)
    hop: str
    k: int
    stages: list[str]
    iterations: list[int]
    complete: bool
    passages: list[GoldPassage]
    answer: AnswerCheck | None
    category: str | None
    second: str | None = None
    evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # titles of gold passages the question names that the index lacks (the caller knows them: `gear eval`, Ask)
    missing_gold: list[str] = field(default_factory=list)
    confidence: str = ""  # high | medium | low: how plainly the trace shows the proposed category ("" none proposed)
    undetermined: list[str] = field(default_factory=list)  # the two categories that fit equally, when they do
    refs: list[list[Ref]] = field(default_factory=list)  # refs[n]: what evidence[n] rests on

    @property
    def answer_form_only(self) -> bool:
        """The answer is right in substance and exact match fails it on form alone: said so, not an error."""
        return self.answer is not None and bool(self.answer.form_only)

    def lines(self) -> list[tuple[str, list[Ref]]]:
        """Each evidence line with what it rests on (none for a diagnosis saved before lines carried refs)."""
        return [(line, self.refs[n] if n < len(self.refs) else []) for n, line in enumerate(self.evidence)]

    @property
    def found(self) -> int:
        return sum(p.status == FOUND_STATUS for p in self.passages)

    def found_within(self, k: int) -> int:
        """Gold passages the final ranking holds within the top k: what R@k of the same run counts (for any k, not
        only the cut-off `self.k` the statuses were set at)."""
        return sum(1 for p in self.passages if (rank := p.final_rank) is not None and rank <= k)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.answer is not None:
            data["answer"]["right"] = self.answer.right
            data["answer"]["stopped_early"] = self.answer.stopped_early
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnosis:
        """The inverse of to_dict (a diagnosis kept in an evaluation report, read back by the app)."""
        passages = [GoldPassage(p["id"], p["title"], [StageMark(**m) for m in p["marks"]], p["status"], p["lost_at"],
                                p.get("dropped_at"), list(p["evidence"]), p.get("hop"), p.get("bridge", ""),
                                p.get("responsible")) for p in data["passages"]]
        raw = data.get("answer")
        answer = None
        if raw is not None:
            answer = AnswerCheck(**{k: v for k, v in raw.items() if k not in ("right", "stopped_early")})
        refs = [[Ref(**r) for r in line] for line in data.get("refs", [])]
        fields = {k: v for k, v in data.items() if k not in ("passages", "answer", "refs")}
        return cls(**fields, passages=passages, answer=answer, refs=refs)


@dataclass(frozen=True)
class Family:
    """How a method's runs are diagnosed: its stages before the final ranking (pipeline order) and the function that
    marks a gold passage at each. A method's record (gear.methods.Method.diagnosis) names its family by `name`."""

    name: str
    stages: tuple[str, ...]  # before the final ranking, in pipeline order
    marks: Callable[[Any, int], list[StageMark]]  # (TraceFacts, passage id) -> its marks
    graph: bool              # a graph step can reach passages the base list missed
    variant: tuple[str, ...] = ()  # settings that tell runs of the method apart in a summary
