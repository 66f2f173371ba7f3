"""The proposed error category of a run, with its evidence and a confidence, in the vocabulary a careful analyst
labels runs with (bench/labelling/PROTOCOL.md: the paper's six categories and `answer`, `rewriter`, `ranking`,
`none`).

Causes are collected in the order docs/diagnosis.md's "The rules" gives (the prose of the rules lives there only):
a run right in substance; a broken question; each lost gold passage, the earliest hop first, laid at the step meant to
carry it (gear.diagnosis.attribution; the stage rules of gear.diagnosis.stage_rules and the bridge rule of
gear.diagnosis.bridge for the families without readers); the run's own (a reasoner that stopped while a passage was
missing, a rewriter that asked nothing new); a wrong answer's. The first two distinct categories the stage table
supports are proposed (primary, second); a cause it does not support is kept as a note (gear.diagnosis.invariant).
When two causes fit equally — a loss the trace cannot lay at the graph rather than the extraction, two passages of the
same hop lost for different reasons — the proposal says it is undetermined between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.diagnosis.answer import reader_fed, thought_fed, verdict_answer
from gear.diagnosis.attribution import passage_loss, steered
from gear.diagnosis.bridge import bridge
from gear.diagnosis.claims import ref
from gear.diagnosis.evidence import quoted
from gear.diagnosis.facts import TraceFacts
from gear.diagnosis.hops import Hop, hops
from gear.diagnosis.invariant import CATEGORY_STAGES, STEERED_BY, loss_stages, stages_of
from gear.diagnosis.matching import holds
from gear.diagnosis.model import (
    ANSWER,
    BASE,
    BASE_RETRIEVER,
    BEAM,
    DATASET,
    EXPANDED,
    FINAL,
    FOUND,
    FOUND_STATUS,
    FUSED,
    GIST,
    HIGH,
    INITIAL,
    LINKED,
    LOW,
    NONE,
    RANKED,
    RANKING,
    READ,
    READER,
    REASONER,
    RETRIEVAL,
    RUN_LEVEL,
    SEED,
    STEP_ANSWER,
    STEP_BASE,
    STEP_DATASET,
    STEP_EXTRACTION,
    STEP_PASSAGELINK,
    STEP_RANKING,
    STEP_REASONER,
    STEP_THOUGHT,
    STEP_WALK,
    AnswerCheck,
    Cause,
    Diagnosis,
    GoldPassage,
    Ref,
)
from gear.diagnosis.probe import Probe
from gear.diagnosis.stage_rules import GRAPH_STEPS, stage_causes
from gear.events import Answered, ThoughtWritten


class Proposal:
    """What `propose` decides: the category, a second, the evidence lines with what each rests on, a confidence and,
    when two causes fit equally, the two."""

    def __init__(self, category: str | None, second: str | None = None, evidence: Sequence[str] = (),
                 refs: Sequence[Sequence[Ref]] = (), confidence: str = "", undetermined: Sequence[str] = ()) -> None:
        self.category, self.second = category, second
        self.evidence = list(evidence)
        self.refs = [list(r) for r in refs] + [[] for _ in range(len(self.evidence) - len(refs))]
        self.confidence = confidence if category is not None else ""
        self.undetermined = list(undetermined)

    def apply(self, d: Diagnosis) -> None:
        d.category, d.second, d.evidence, d.refs = self.category, self.second, self.evidence, self.refs
        d.confidence, d.undetermined = self.confidence, self.undetermined


#: the step a loss at a stage is laid at when a stage rule (not the attribution) judged it
STAGE_STEPS = {INITIAL: STEP_EXTRACTION, EXPANDED: STEP_RANKING, FUSED: STEP_RANKING, LINKED: STEP_PASSAGELINK,
               RANKED: STEP_WALK, FINAL: STEP_RANKING, FOUND: STEP_RANKING}


def propose(d: Diagnosis, facts: TraceFacts, graph: bool, probe: Probe | None = None) -> Proposal:
    """The proposal for a diagnosis whose passages and answer are filled in; sets each gold passage's hop and, for a
    lost one, the step responsible. A cause its table does not support goes to `d.notes` instead."""
    if not d.passages:  # no verdict without evidence: a typed answer alone says nothing of the passages
        if d.missing_gold:
            return Proposal(DATASET, None, [f"no gold passage of the question is in the index: it names "
                                            f"{quoted(d.missing_gold)}, and the index holds none of them"],
                            confidence=HIGH)
        return Proposal(None, None, ["no gold passage known: mark the passages that hold the answer"])
    hop_of = hops(facts, [p.id for p in d.passages])
    for p in d.passages:
        h = hop_of.get(p.id)
        p.hop, p.bridge = (h.hop, h.name if h.hop > 1 else "") if h is not None else (None, "")
    order = {s: n for n, s in enumerate(d.stages)}
    lost = sorted((p for p in d.passages if _where(p) is not None and p.status != FOUND_STATUS),
                  key=lambda p: (p.hop or 99, order.get(_where(p) or "", len(order))))
    answer = d.answer
    wrong = answer is not None and answer.right is False
    everything = all(p.status == FOUND_STATUS for p in d.passages)
    if everything and (not wrong or (answer is not None and answer.form_only)):
        return _none(d, answer)
    causes: list[Cause] = []
    if answer is not None and answer.in_gold_passages is False:
        causes.append(Cause(DATASET, (f"no gold passage contains a gold answer ({quoted(answer.gold)}): no "
                                      "retrieval could succeed",), step=STEP_DATASET, confidence=HIGH,
                            refs=(ref("gold_lacks", STEP_DATASET, RUN_LEVEL, None, answer.gold[0]),)))
    followed = made_up_followed(d, facts, answer, lost) if answer is not None and wrong else None
    for p in lost:
        found = loss_causes(p, hop_of.get(p.id), d, facts, graph, hop_of, probe)
        if followed is not None and followed.passage == p.id:
            found.insert(0, followed)
        if found and p.status != "open":
            p.responsible = found[0].step or STAGE_STEPS.get(found[0].stage or "", found[0].stage)
        causes.extend(found)
    if answer is not None and answer.right is not True:
        causes.extend(run_causes(d, facts, lost, answer))
    if wrong and answer is not None:
        answered = wrong_answer_causes(d, facts, answer, lost)
        if answered and answered[0].category == ANSWER and lost and all(
                p.responsible == STEP_RANKING for p in lost if p.status != "open") and answer_in_found(d, facts):
            causes = [answered[0], *causes, *answered[1:]]  # the QA step had the gold answer's passage: its miss first
        else:
            causes.extend(answered)
    return choose(causes, d)


def answer_in_found(d: Diagnosis, facts: TraceFacts) -> bool:
    """A gold passage found (in the passages the QA step read) holds a gold answer the question does not name: what
    the question asks was in front of the QA step, whatever other gold passage the final ranking left out. (A
    comparison's answer is one of the entities it names: any passage about it holds it, and says nothing of the
    passage that decides the comparison.)"""
    answer = d.answer
    if answer is None:
        return False
    asked = [a for a in answer.gold if not holds(d.question, a)]
    return any(p.status == FOUND_STATUS and p.id in answer.qa_passage_ids and
               any(facts.tokens.contains(p.id, a) for a in asked) for p in d.passages)


def _none(d: Diagnosis, answer: AnswerCheck | None) -> Proposal:
    if answer is not None and answer.form_only:
        text = f"every gold passage within the top {d.k}, and the answer is right in substance: {answer.form_only}; " \
               "exact match fails it on form alone"
        return Proposal(NONE, None, [text], [[ref("answered", STEP_ANSWER, RUN_LEVEL, None, answer.answer or "")]],
                        HIGH)
    said = "" if answer is None or answer.right is None else f"; the answer {answer.answer!r} is right"
    return Proposal(NONE, None, [f"every gold passage within the top {d.k}{said}"],
                    [[ref("found", STEP_RANKING, RUN_LEVEL, p.id, d.k) for p in d.passages]], HIGH)


def loss_causes(p: GoldPassage, h: Hop | None, d: Diagnosis, facts: TraceFacts, graph: bool, hop_of: dict[int, Hop],
                probe: Probe | None) -> list[Cause]:
    """The causes of one lost passage: the step meant to carry it (gear.diagnosis.attribution), else the stage
    rules at the stage it dropped at and was lost at, the graph's missed bridge first where the trace confirms it."""
    laid = passage_loss(p, h, d, facts, hop_of, probe) if p.status != "open" else None
    if laid is not None and laid.category != RANKING:
        return [laid]
    found = [c for stage in dict.fromkeys([p.dropped_at, p.lost_at]) if stage
             for c in stage_rule_causes(p, stage, d, facts, graph)]
    # specific first; a list that ranked it out after the loss at a stage; suspicions last
    found = sorted(found, key=lambda c: (c.weak, c.ranking, c.category == BASE_RETRIEVER))
    # ranked out: what the stage rules say of the stages it missed on the way may be the second
    return [laid, *(c for c in found if c.category != RANKING)] if laid is not None else found


def stage_rule_causes(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, graph: bool) -> list[Cause]:
    """The causes a loss at `stage` points to by the stage rules: the graph's missed bridge first when the trace
    confirms it, after the default explanation when it only suggests it."""
    step = next((s for s in (BEAM, SEED) if s in d.stages), None)  # the graph's step of this method, if any
    bridged = bridge(p, d, facts, step) if graph and step is not None and stage in (BASE, RETRIEVAL, BEAM, SEED) \
        and not any(p.reached(s) for s in GRAPH_STEPS) else None
    if bridged is not None and not bridged.weak:
        return [bridged]
    return [*stage_causes(p, stage, d, facts), *([bridged] if bridged is not None else [])]


def made_up_followed(d: Diagnosis, facts: TraceFacts, answer: AnswerCheck, lost: Sequence[GoldPassage]
                     ) -> Cause | None:
    """A fact a reader made up that holds a wrong answer the run gave, and that the run followed: a later query
    searched with its words (GeAR's rewritten query; IRCoT's next retrieval searches with the thought itself), or an
    'answerable' verdict stopped the run early on it. The reader 'completed' a hop, so the passage of that hop was
    never sought: named at a later hop's passage no list held (or one lost at a reader's stage); None when the table
    shows none (the fact cost no gold passage)."""
    fed = reader_fed(facts, answer)
    wrote = next((r for r in fed.refs if r.claim == "wrote"), None) if fed is not None else None
    line = ""
    refs: tuple[Ref, ...] = ()
    if fed is not None and wrote is not None:
        triple = wrote.value.split(" | ")
        steer = steered(facts, triple, wrote.iteration) if len(triple) >= 3 else None
        if steer is not None:
            n, query, words = steer
            line = f"; the search was {STEERED_BY} it (iteration {n} asked {query!r})"
            refs = (*fed.refs, ref("names", STEP_BASE, n, None, words))
        elif answer.stopped_early and (answer.stopped_at or 0) >= wrote.iteration:
            line = f"; the reasoner stopped on it ('answerable' at iteration {answer.stopped_at} of " \
                   f"{answer.max_iterations})"
            refs = (*fed.refs, ref("stopped", STEP_REASONER, answer.stopped_at or 0))
    if not line:
        fed = thought_fed(facts, answer)
        if fed is None:
            return None
        refs = fed.refs
    assert fed is not None
    placed = place_reader(Cause(READER, (fed.evidence[0] + line, *fed.evidence[1:]), refs=refs, step=fed.step,
                                confidence=HIGH), [p for p in lost if p.status != "open"], d)
    return placed


def run_causes(d: Diagnosis, facts: TraceFacts, lost: Sequence[GoldPassage], answer: AnswerCheck) -> list[Cause]:
    """What the run as a whole did to lose a gold passage (its answer not right): stopped while a lost passage was
    still unseen (reasoner)."""
    missing = missing_when_stopped(lost, d) if answer.stopped_early else []
    if not missing:
        return []
    verdict = verdict_answer(facts, answer.stopped_at or 0)
    said = f"; the run answered {answer.answer!r}" if answer.answer is not None else ""
    thought = bool(facts.trace.of(ThoughtWritten))
    what = "a final thought" if thought else "'answerable'"
    return [Cause(REASONER, (f"{what}{f' ({verdict!r})' if verdict else ''} at iteration {answer.stopped_at} of "
                             f"{answer.max_iterations} while '{missing[0].title}' was still missing{said}",),
                  refs=(ref("stopped", STEP_THOUGHT if thought else STEP_REASONER, answer.stopped_at or 0),),
                  step=STEP_THOUGHT if thought else STEP_REASONER)]


def wrong_answer_causes(d: Diagnosis, facts: TraceFacts, answer: AnswerCheck, lost: Sequence[GoldPassage]
                        ) -> list[Cause]:
    """A wrong answer: the answer step's when the passages it read held what was needed — every gold passage found,
    or a gold answer in them — and the reader's made-up fact it came from, or the reasoner's wrong verdict."""
    causes = []
    answered = facts.trace.first(Answered)
    qa = ref("answered", STEP_ANSWER, answered.iteration if answered else RUN_LEVEL, None, answer.answer or "")
    if not lost:
        text = f"every gold passage within the top {d.k} (the passages the QA step read), but it answered " \
               f"{answer.answer!r} (gold {quoted(answer.gold)})"
        refs = (qa, *(ref("found", STEP_RANKING, RUN_LEVEL, p.id, d.k) for p in d.passages))
        causes.append(Cause(ANSWER, (text,), refs=refs, step=STEP_ANSWER, confidence=HIGH))
    elif answer.in_qa_passages:
        holding = [pid for pid in answer.qa_passage_ids if any(facts.tokens.contains(pid, a) for a in answer.gold)]
        titles = ", ".join(f"'{facts.title(pid)}'" for pid in holding)
        causes.append(Cause(ANSWER, (f"a gold answer ({quoted(answer.gold)}) is in the passages the QA step read "
                                     f"({titles}) but it answered {answer.answer!r}",),
                            refs=(qa, *(ref("qa_holds", STEP_ANSWER, RUN_LEVEL, pid, answer.gold[0]) for pid in
                                        holding[:1])), step=STEP_ANSWER))
    fed = reader_fed(facts, answer) or thought_fed(facts, answer)
    if fed is not None:
        causes.append(place_reader(fed, [p for p in lost if p.status != "open"], d) or fed)
    return causes


def choose(causes: Sequence[Cause], d: Diagnosis) -> Proposal:
    """The first two distinct categories among the causes the stage table supports, the first one's evidence (and its
    other losses, a line each); two causes that fit equally said as undetermined; a cause the table does not support
    becomes a note."""
    supported = [c for c in causes if agrees(c, d)]
    chosen = {c.category for c in supported[:1]}
    for c in causes:
        note = f"not proposed: {c.category} ({c.evidence[0]}) — no gold passage is lost at one of its stages in the " \
               "table"
        if c not in supported and c.evidence and c.category not in chosen and note not in d.notes:
            d.notes.append(note)
    if not supported:
        return Proposal(None, None, [_undetermined(d)])
    first = supported[0]
    tie = first.tie if first.tie is not None and agrees(first.tie, d) else None
    if tie is None:  # another passage of the same hop, lost for another reason (its own first cause)
        primaries: dict[int, Cause] = {}
        for c in supported:
            if c.passage is not None:
                primaries.setdefault(c.passage, c)
        tie = next((c for c in primaries.values() if c.category != first.category and _same_hop(first, c, d)), None)
    distinct: list[Cause] = [first]
    for cause in supported:
        if cause.category not in [c.category for c in distinct]:
            distinct.append(cause)
    second = tie if tie is not None else distinct[1] if len(distinct) > 1 else None
    lines = [(first.evidence[0], list(first.refs)), *((line, []) for line in first.evidence[1:])]
    for more in supported:  # the same category's other losses, a line each (the first names its passage and stage)
        if more.category == first.category and more is not first and more.evidence[0] not in [x for x, _ in lines] \
                and more.passage not in (None, first.passage):
            lines.append((more.evidence[0], list(more.refs)))
    if second is not None:
        word = "or" if tie is not None else "also"
        lines.append((f"{word} ({second.category}): {second.evidence[0]}", list(second.refs)))
    undetermined = [first.category, tie.category] if tie is not None else []
    if undetermined:
        lines.insert(0, (f"undetermined between {first.category} and {tie.category if tie else ''}: both fit "
                         "the trace equally (the evidence for each below)", []))
    confidence = LOW if undetermined else first.confidence
    return Proposal(first.category, second.category if second else None, [x for x, _ in lines],
                    [r for _, r in lines], confidence, undetermined)


def _same_hop(a: Cause, b: Cause, d: Diagnosis) -> bool:
    """Two passage losses of one hop, of different passages: neither comes first by the protocol's order."""
    if a.passage is None or b.passage is None or a.passage == b.passage:
        return False
    hop = {p.id: p.hop for p in d.passages}
    return hop.get(a.passage) is not None and hop.get(a.passage) == hop.get(b.passage)


def agrees(cause: Cause, d: Diagnosis) -> bool:
    """The cause may be proposed: a category not named after a stage always (the answer step only when the QA step's
    passages held what was needed); one named after a stage when it names a gold passage and one of the category's
    stages at which the table shows that passage lost."""
    if cause.category == ANSWER:
        return all(p.status == FOUND_STATUS for p in d.passages) or bool(d.answer and d.answer.in_qa_passages)
    if cause.category not in CATEGORY_STAGES:
        return True
    p = next((p for p in d.passages if p.id == cause.passage), None)
    return p is not None and cause.stage in stages_of(cause.category, bridge=(p.hop or 0) > 1 or _steered(cause)) \
        and cause.stage in loss_stages(p, d.stages, d.k)


def _steered(cause: Cause) -> bool:
    return any(r.claim == "names" and r.step in ("base", "retrieval") for r in cause.refs)


def place_reader(cause: Cause, lost: Sequence[GoldPassage], d: Diagnosis) -> Cause | None:
    """A reader's made-up fact that the run answered with (answer.reader_fed, answer.thought_fed), named at a passage
    that reader read and lost (read, gist), or at a later hop's passage no list held (the reader was to bring it);
    None when the table shows neither: the fact did not cost a gold passage."""
    places: list[tuple[GoldPassage, str]] = []
    for p in lost:  # a reader that had it in front of it (its mark holds the position read)
        stage = next((s for s in loss_stages(p, d.stages, d.k) if s in (READ, GIST) and
                      any(m.stage == s and m.rank is not None for m in p.marks)), None)
        if stage is not None:
            places.append((p, stage))
    for p in lost:
        if (p.hop or 0) > 1 and p.lost_at in (BASE, RETRIEVAL) and p.lost_at in loss_stages(p, d.stages, d.k):
            places.append((p, p.lost_at))
    if not places:
        return None
    p, stage = places[0]
    from gear.diagnosis.evidence import named

    return Cause(READER, (named(p, stage, d.k, cause.evidence[0]), *cause.evidence[1:]), cause.weak, passage=p.id,
                 stage=stage, refs=cause.refs, step=cause.step, confidence=cause.confidence)


def _undetermined(d: Diagnosis) -> str:
    if not d.complete:
        return "the run was cut short before its final ranking: no loss the table shows so far"
    return ("no error category names this loss: the table shows no gold passage lost at a stage of the retriever, a "
            "reader, the graph, the extraction or the ranking")


def missing_when_stopped(lost: Sequence[GoldPassage], d: Diagnosis) -> list[GoldPassage]:
    """The lost gold passages the reasoner had not seen when it stopped: none of their facts in the gist memory
    (GeAR: no gist triple from them by that iteration), not retrieved (IRCoT: no retrieval up to the final thought
    returned them). A passage it had seen and that was lost later (ranked past k) was not lost by stopping."""
    stopped = d.answer.stopped_at if d.answer is not None else None
    seen = RETRIEVAL if RETRIEVAL in d.stages else GIST if GIST in d.stages else None
    if seen is None or stopped is None:
        return list(lost)
    return [p for p in lost if not any(m.stage == seen and m.reached and m.iteration <= stopped for m in p.marks)]


def _where(p: GoldPassage) -> str | None:
    return p.dropped_at or p.lost_at

