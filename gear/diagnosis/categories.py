"""The proposed error category of a run (the paper's Table "error_category_analysis"), with the evidence used.

Causes are collected in the order docs/diagnosis.md's "The rules" gives (the prose of the rules lives there only):
the dataset; a made-up fact that steered the search, a reasoner that stopped early; each lost gold passage, the
earliest first, by its stage's rule (`gear.diagnosis.stage_rules.STAGE_RULES`, the bridge rule first where the trace
confirms it: `gear.diagnosis.bridge`); a wrong answer's causes. The first two distinct categories the stage table
supports are proposed (primary, second); a cause it does not support is kept as a note (`gear.diagnosis.invariant`).
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.diagnosis.answer import answer_causes, reader_fed, thought_fed, verdict_answer
from gear.diagnosis.bridge import bridge
from gear.diagnosis.evidence import at, named, quoted
from gear.diagnosis.facts import TraceFacts
from gear.diagnosis.invariant import CATEGORY_STAGES, STEERED_BY, loss_stages, stages_of
from gear.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    BEAM,
    DATASET,
    FOUND_STATUS,
    GIST,
    NONE,
    READ,
    READER,
    REASONER,
    RETRIEVAL,
    SEED,
    AnswerCheck,
    Cause,
    Diagnosis,
    GoldPassage,
)
from gear.diagnosis.stage_rules import GRAPH_STEPS, stage_causes
from gear.trace import BaseRetrieved, ThoughtWritten

Proposal = tuple[str | None, str | None, list[str]]  # (category, second category, evidence)


def propose(d: Diagnosis, facts: TraceFacts, graph: bool) -> Proposal:
    """(category, second category or None, evidence) for a diagnosis whose passages and answer are filled in; a
    cause its table does not support goes to `d.notes` instead (gear.diagnosis.invariant)."""
    if not d.passages:  # no verdict without evidence: a typed answer alone says nothing of the passages
        if d.missing_gold:
            return DATASET, None, [f"no gold passage of the question is in the index: it names "
                                   f"{quoted(d.missing_gold)}, and the index holds none of them"]
        return None, None, ["no gold passage known: mark the passages that hold the answer"]
    order = {s: n for n, s in enumerate(d.stages)}
    lost = sorted((p for p in d.passages if _where(p) is not None and p.status != FOUND_STATUS),
                  key=lambda p: order.get(_where(p) or "", len(order)))
    answer = d.answer
    wrong = answer is not None and answer.right is False
    if all(p.status == FOUND_STATUS for p in d.passages) and not wrong:
        said = "" if answer is None or answer.right is None else f"; the answer {answer.answer!r} is right"
        return NONE, None, [f"every gold passage within the top {d.k}{said}"]
    causes: list[Cause] = []
    if answer is not None and answer.in_gold_passages is False:
        causes.append(Cause(DATASET, (f"no gold passage contains a gold answer ({quoted(answer.gold)}): no "
                                      "retrieval could succeed",)))
    if answer is not None and answer.right is not True:
        causes.extend(run_causes(d, facts, lost, answer))
    for p in lost:
        found = [c for stage in dict.fromkeys([p.dropped_at, p.lost_at]) if stage
                 for c in passage_causes(p, stage, d, facts, graph)]
        # specific first; a list that ranked it out after the loss at a stage; suspicions last
        causes.extend(sorted(found, key=lambda c: (c.weak, c.ranking, c.category == BASE_RETRIEVER)))
    if wrong and answer is not None:
        causes.extend(place_reader(c, lost, d) or c if c.category == READER else c
                      for c in answer_causes(answer, facts))
    return choose(causes, d)


def run_causes(d: Diagnosis, facts: TraceFacts, lost: Sequence[GoldPassage], answer: AnswerCheck) -> list[Cause]:
    """What the run as a whole did to lose a gold passage (its answer not right): searched on from a made-up fact
    (reader, named at the loss it explains), stopped while a lost passage was still unseen (reasoner)."""
    causes: list[Cause] = []
    if lost:
        rewritten = last_rewritten(facts)
        fed = reader_fed(facts, answer, before=rewritten)
        if fed is not None:  # a made-up fact the later iterations searched with explains the loss first
            query = next(e.query for e in facts.trace.of(BaseRetrieved) if e.iteration == rewritten)
            fed = Cause(READER, (f"{fed.evidence[0]}; the later iterations searched with queries rewritten from a "
                                 f"memory that held it (iteration {rewritten}: {query!r})",))
        made_up = fed or thought_fed(facts, answer)
        if made_up is not None:  # named at the loss it explains; one the table does not show becomes a note later
            causes.append(place_reader(made_up, lost, d, steered=True) or made_up)
    missing = missing_when_stopped(lost, d) if answer.stopped_early else []
    if missing:
        fed = reader_fed(facts, answer)
        if fed is not None:
            causes.append(place_reader(fed, missing, d, steered=True) or fed)
        verdict = verdict_answer(facts, answer.stopped_at or 0)
        said = f"; the run answered {answer.answer!r}" if answer.answer is not None else ""
        what = "a final thought" if facts.trace.of(ThoughtWritten) else "'answerable'"
        causes.append(Cause(REASONER, (f"{what}{f' ({verdict!r})' if verdict else ''} at iteration "
                                       f"{answer.stopped_at} of {answer.max_iterations} while '{missing[0].title}' "
                                       f"was still missing{said}",)))
    return causes


def choose(causes: Sequence[Cause], d: Diagnosis) -> Proposal:
    """The first two distinct categories among the causes the stage table supports, the first one's evidence (and its
    other losses, a line each); a cause the table does not support becomes a note."""
    supported = [c for c in causes if agrees(c, d)]
    for c in causes:
        note = f"not proposed: {c.category} ({c.evidence[0]}) — no gold passage is lost at one of its stages in the " \
               "table"
        if c not in supported and c.evidence and note not in d.notes:
            d.notes.append(note)
    if not supported:
        return None, None, [_undetermined(d)]
    distinct: list[Cause] = []
    for cause in supported:
        if cause.category not in [c.category for c in distinct]:
            distinct.append(cause)
    evidence = list(distinct[0].evidence)
    for more in supported:  # the same category's other losses, a line each (the first names its passage and stage)
        if more.category == distinct[0].category and more is not distinct[0] and more.evidence[0] not in evidence \
                and more.passage not in (None, distinct[0].passage):
            evidence.append(more.evidence[0])
    second = distinct[1] if len(distinct) > 1 else None
    if second is not None:
        evidence.append(f"also ({second.category}): {second.evidence[0]}")
    return distinct[0].category, second.category if second else None, evidence


def agrees(cause: Cause, d: Diagnosis) -> bool:
    """The cause may be proposed: a category not named after a stage always; one named after a stage when it names a
    gold passage and one of the category's stages at which the table shows that passage lost."""
    if cause.category not in CATEGORY_STAGES:
        return True
    p = next((p for p in d.passages if p.id == cause.passage), None)
    steered = bool(cause.evidence) and STEERED_BY in cause.evidence[0]
    return p is not None and cause.stage in stages_of(cause.category, steered) and \
        cause.stage in loss_stages(p, d.stages, d.k)


def place_reader(cause: Cause, lost: Sequence[GoldPassage], d: Diagnosis, steered: bool = False) -> Cause | None:
    """A reader's made-up fact (answer.reader_fed, answer.thought_fed) named at the loss it explains. With
    `steered` (the later retrievals searched from it, or it ended the search): first a passage no retrieval ever held
    (lost at the base list, IRCoT's retrieval) — "steered by" the fact; then a passage lost at a reader's own stage
    (read, gist); then, with `steered`, one the retrievals held only past k. None when the table shows none of these:
    the fact did not cost a gold passage."""
    places: list[tuple[GoldPassage, str, bool]] = []
    for p in lost if steered else ():
        if p.lost_at in (BASE, RETRIEVAL) and p.lost_at in loss_stages(p, d.stages, d.k):
            places.append((p, p.lost_at, True))
    for p in lost:
        stage = next((s for s in loss_stages(p, d.stages, d.k) if s in (READ, GIST)), None)
        if stage is not None:
            places.append((p, stage, False))
    for p in lost if steered else ():
        stage = next((s for s in loss_stages(p, d.stages, d.k) if s in (BASE, RETRIEVAL)), None)
        if stage is not None:
            places.append((p, stage, True))
    if not places:
        return None
    p, stage, by = places[0]
    if by:
        best = p.best(stage)
        where = (f"held by the {'base lists' if stage == BASE else 'retrievals'} only past the top {d.k} (at "
                 f"{at(best)})" if best is not None and best.reached else
                 "in no base list" if stage == BASE else "in no retrieval")
        line = f"{where}: the search was {STEERED_BY} a made-up fact — {cause.evidence[0]}"
    else:
        line = cause.evidence[0]
    return Cause(READER, (named(p, stage, d.k, line), *cause.evidence[1:]), cause.weak, passage=p.id, stage=stage)


def _undetermined(d: Diagnosis) -> str:
    if not d.complete:
        return "the run was cut short before its final ranking: no loss the table shows so far"
    return ("no error category of the paper names this loss: the table shows no gold passage lost at a stage of "
            "the retriever, a reader, the graph or the extraction")


def last_rewritten(facts: TraceFacts) -> int:
    """The last iteration that searched with a query other than the question (a rewrite, made from the memory): a
    triple written before it could steer retrieval; after it (or when every query repeated the question), none could
    (0)."""
    question = " ".join((facts.start.question if facts.start else "").split())
    return max((e.iteration for e in facts.trace.of(BaseRetrieved) if " ".join(e.query.split()) != question),
               default=0)


def missing_when_stopped(lost: Sequence[GoldPassage], d: Diagnosis) -> list[GoldPassage]:
    """The lost gold passages the reasoner had not seen when it stopped: none of their facts in the gist memory
    (GeAR: no gist triple from them by that iteration), not retrieved (IRCoT: no retrieval up to the final thought
    returned them). A passage it had seen and that was lost later (ranked past k) was not lost by stopping."""
    stopped = d.answer.stopped_at if d.answer is not None else None
    seen = RETRIEVAL if RETRIEVAL in d.stages else GIST if GIST in d.stages else None
    if seen is None or stopped is None:
        return list(lost)
    return [p for p in lost if not any(m.stage == seen and m.reached and m.iteration <= stopped for m in p.marks)]


# -- one lost gold passage ---------------------------------------------------------------------------------------
def _where(p: GoldPassage) -> str | None:
    return p.dropped_at or p.lost_at


def passage_causes(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, graph: bool) -> list[Cause]:
    """The causes a loss at `stage` points to: the graph's missed bridge first when the trace confirms it, after the
    default explanation when it only suggests it."""
    step = next((s for s in (BEAM, SEED) if s in d.stages), None)  # the graph's step of this method, if any
    bridged = bridge(p, d, facts, step) if graph and step is not None and stage in (BASE, RETRIEVAL, BEAM, SEED) \
        and not any(p.reached(s) for s in GRAPH_STEPS) else None
    if bridged is not None and not bridged.weak:
        return [bridged]
    return [*stage_causes(p, stage, d, facts), *([bridged] if bridged is not None else [])]
