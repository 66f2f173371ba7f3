"""The proposed error category of a run (the paper's Table "error_category_analysis"), with the evidence used.

Causes are collected in order and the first two distinct categories are proposed (primary, second). A category named
after a part of the pipeline (base retriever, reader, graph, extraction) is proposed only when the stage table shows a
gold passage lost at one of that part's stages, and its evidence starts by naming that passage and stage ("'Title'
(stage): …"; gear.eval.diagnosis.invariant); a cause the table does not support is not proposed, its evidence kept
as a note.
0. No gold passage known: no category (mark the passages first); dataset only when the question names gold passages
   the index lacks (`missing_gold`, which the caller knows: the trace holds ids only).
1. dataset — no gold passage contains a gold answer: no retrieval could succeed.
2. When a gold passage was lost and the answer is not right:
   - reader, when the run searched on from a made-up fact that holds a (wrong) answer it gave: a triple the reader
     wrote from no passage it read, in an iteration before one that searched with a rewritten query (not the
     question again), or an IRCoT thought, not the last, that states such an answer, which no gold passage holds,
     in words of no passage it retrieved (answer.thought_fed) — the reader 'completed' a hop and the later
     retrievals followed it, so the missing passage was never sought: named at the retrieval it was lost at
     ("steered by");
   - reasoner, when a multi-step run stopped early (an "answerable" verdict, or IRCoT's final thought, before its
     last iteration) while a lost gold passage was still unseen (GeAR: no gist triple from it yet; IRCoT: no
     retrieval had returned it) — reader before it when a made-up triple holds the answer the run gave. A passage
     the reasoner had seen and that was ranked past k later was not lost by stopping.
3. Each lost gold passage, the earliest first (by the stage it dropped out of the run at: the stage after the last
   one it reached), judged at the stage it dropped out at and at the first stage it missed ("lost at"); specific
   evidence (extraction, graph, reader) before the default:
   base/retrieval   the bridge rule (bridge(): a graph step reached a triple of another gold passage whose end
                    this passage's text names, yet nothing reached this one) → graph or extraction at the graph's
                    step (beam, seed), base_retriever when its own triple shares the name (the edge is there);
                    else base_retriever (never retrieved; or reached only by the graph and ranked past k); an
                    unconfirmed bridge adds graph after base_retriever
   read             reader: it wrote a triple drawn from none of the passages read, or drew none from this one
   link             graph when tripleLink took a same-named triple of another passage for a triple read from it;
                    else extraction (no index triple of it is close to the fact read from it)
   initial          extraction (NaiveGE: it has no index triples)
   beam/seed        the same bridge rule, else graph (no kept beam holds one of its triples; no seed is its)
   gist             reader when the gist reader read it (a made-up triple, or none drawn from it); when it never
                    read it, the fused list ranked it below the gist reader's cut: graph when it was in a base list
                    (the graph's passages outranked it), else base_retriever
   linked           extraction (a gist triple came from it, but no passageLink list holds it)
   ranked           graph (PPR's walk did not rank it)
   final@k, final   the lists that ranked it out: a base list that held it only past k → base_retriever, IRCoT's
                    retrieval that brought it late → base_retriever, PPR's ranking or a graph list past k → graph;
                    when every list held it within k and the final fusion alone put it past k, no category of the
                    paper names that: a note says so
4. A wrong answer: reader (an unsupported triple or IRCoT thought holds the answer given; only where a gold passage
   was lost at a reader's stage), dataset (the answer and a gold answer contain one another: a missing alias),
   reasoner ("answerable" or a final thought with a wrong answer, or the gold answer in the QA passages and answered
   wrong).
Nothing lost and the answer right (or no answer asked): none.
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.eval.diagnosis.answer import answer_causes, reader_fed, thought_fed, verdict_answer
from gear.eval.diagnosis.evidence import describe, quoted
from gear.eval.diagnosis.facts import TraceFacts, spo
from gear.eval.diagnosis.grounding import GROUNDED, cover, entity_tokens, names_in
from gear.eval.diagnosis.invariant import (
    CATEGORY_STAGES,
    LIST_STAGES,
    STEERED_BY,
    first_retrieval,
    loss_stages,
    stages_of,
)
from gear.eval.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    BEAM,
    DATASET,
    EXPANDED,
    EXTRACTION,
    FINAL,
    FOUND,
    FOUND_STATUS,
    FUSED,
    GIST,
    GRAPH,
    INITIAL,
    LINK,
    LINKED,
    NONE,
    RANKED,
    READ,
    READER,
    REASONER,
    RETRIEVAL,
    RUN_LEVEL,
    SEED,
    Cause,
    Diagnosis,
    GoldPassage,
    StageMark,
    stage_label,
)
from gear.store.graph import normalise_entity
from gear.trace import (
    BaseRetrieved,
    BeamsSearched,
    InitialNodes,
    PPRSeeded,
    ProximalTriples,
    ThoughtWritten,
    TriplesLinked,
    TripleView,
)

GRAPH_STEPS = (BEAM, EXPANDED, LINKED, SEED, RANKED)  # stages a graph step (not the base list) can reach


def propose(d: Diagnosis, facts: TraceFacts, graph: bool) -> tuple[str | None, str | None, list[str]]:
    """(category, second category or None, evidence) for a diagnosis whose passages and answer are filled in; a
    cause its table does not support goes to `d.notes` instead (gear.eval.diagnosis.invariant)."""
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
    all_found = bool(d.passages) and all(p.status == FOUND_STATUS for p in d.passages)
    if all_found and not wrong:
        said = "" if answer is None or answer.right is None else f"; the answer {answer.answer!r} is right"
        return NONE, None, [f"every gold passage within the top {d.k}{said}"]

    causes: list[Cause] = []
    if answer is not None and answer.in_gold_passages is False:
        causes.append(Cause(DATASET, (f"no gold passage contains a gold answer ({quoted(answer.gold)}): no "
                                      "retrieval could succeed",)))
    if lost and answer is not None and answer.right is not True:
        rewritten = last_rewritten(facts)
        fed = reader_fed(facts, answer, before=rewritten)
        if fed is not None:  # a made-up fact the later iterations searched with explains the loss first
            query = next(e.query for e in facts.trace.of(BaseRetrieved) if e.iteration == rewritten)
            fed = Cause(READER, (f"{fed.evidence[0]}; the later iterations searched with queries rewritten from a "
                                 f"memory that held it (iteration {rewritten}: {query!r})",))
        made_up = fed or thought_fed(facts, answer)
        if made_up is not None:  # named at the loss it explains; one the table does not show becomes a note below
            causes.append(place_reader(made_up, lost, d, steered=True) or made_up)
    missing = missing_when_stopped(lost, d) if answer is not None and answer.stopped_early else []
    if missing and answer is not None and answer.right is not True:
        fed = reader_fed(facts, answer)
        if fed is not None:
            causes.append(place_reader(fed, missing, d, steered=True) or fed)
        verdict = verdict_answer(facts, answer.stopped_at or 0)
        said = f"; the run answered {answer.answer!r}" if answer.answer is not None else ""
        what = "a final thought" if facts.trace.of(ThoughtWritten) else "'answerable'"
        causes.append(Cause(REASONER, (f"{what}{f' ({verdict!r})' if verdict else ''} at iteration "
                                       f"{answer.stopped_at} of {answer.max_iterations} while '{missing[0].title}' "
                                       f"was still missing{said}",)))
    for p in lost:
        found = [c for stage in dict.fromkeys([p.dropped_at, p.lost_at]) if stage
                 for c in passage_causes(p, stage, d, facts, graph)]
        # specific first; a list that ranked it out after the loss at a stage; suspicions last
        causes.extend(sorted(found, key=lambda c: (c.weak, c.ranking, c.category == BASE_RETRIEVER)))
    if wrong and answer is not None:
        causes.extend(place_reader(c, lost, d) or c if c.category == READER else c
                      for c in answer_causes(answer, facts))
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
                 f"{_at(best)})" if best is not None and best.reached else
                 "in no base list" if stage == BASE else "in no retrieval")
        line = f"{where}: the search was {STEERED_BY} a made-up fact — {cause.evidence[0]}"
    else:
        line = cause.evidence[0]
    return Cause(READER, (named(p, stage, d.k, line), *cause.evidence[1:]), cause.weak, passage=p.id, stage=stage)


def named(p: GoldPassage, stage: str, k: int, text: str) -> str:
    """An evidence line about one gold passage at one stage, as the invariant reads it: "'Title' (stage): …"."""
    return f"'{p.title}' ({stage_label(stage, k)}): {text}"


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
    return [*passage_cause(p, stage, d, facts), *([bridged] if bridged is not None else [])]


def passage_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts) -> list[Cause]:
    """The cause(s) a loss at `stage` points to (see the module's rules); none for a final-ranking loss no list
    explains."""
    final = p.best(FINAL)
    ended = (f"it ended at final rank {final.rank}" if final is not None and final.reached else
             "it was not in the final ranking") if final is not None else "the run stopped before its final ranking"

    def cause(category: str, at: str, text: str) -> list[Cause]:
        return [Cause(category, (named(p, at, d.k, text),), passage=p.id, stage=at)]

    if stage in (BASE, RETRIEVAL):
        reached = [f"{stage_label(s, d.k)} {_describe(p.best(s))}" for s in GRAPH_STEPS if p.reached(s)]
        where = "in no retrieval" if stage == RETRIEVAL else "in no base list"
        if reached:
            return cause(BASE_RETRIEVER, stage, f"{where}; the graph reached it ({', '.join(reached)}) but {ended}")
        return cause(BASE_RETRIEVER, stage, f"{where} ({_lists(p, stage)}) and no graph step reached it")
    if stage == READ:
        if not _read_in(p, READ):  # never in front of the sync reader (a run cut short before it read it)
            return []
        unsupported = _unsupported(facts, "sync", _read_in(p, READ), p.id)
        if unsupported:
            return cause(READER, READ, f"the sync reader read it but wrote {unsupported}: one end from it, in a fact "
                                       "none of the passages it read holds")
        return cause(READER, READ, f"in the base list (at {_at(p.best(BASE))}) and read by the sync reader, which "
                                   f"drew no triple from it; {ended}")
    if stage == LINK:
        return [link_cause(p, facts, d.k)]
    if stage == INITIAL:
        return cause(EXTRACTION, INITIAL, f"in the base list (at {_at(p.best(BASE))}) but none of its triples was an "
                                          "initial node: it has no index triples")
    if stage == LINKED:
        gist = p.best(GIST)
        return cause(EXTRACTION, LINKED, f"the gist triple {gist.note if gist else ''} came from it, but no "
                                         "passageLink list holds it: no index triple or passage text matched the "
                                         f"fact; {ended}")
    if stage == GIST:
        return gist_cause(p, d, facts, ended)
    if stage == BEAM:
        base = p.best(BASE)
        within = f"within the top {d.k} of" if base and base.rank is not None and base.rank <= d.k else "in"
        return cause(GRAPH, BEAM, f"{within} the base list (at {_at(base)}) and its triples initial nodes, but no "
                                  "kept beam holds one (the beams took triples of other passages, which scored higher "
                                  f"against the query); {ended}")
    if stage == SEED:
        return cause(GRAPH, SEED, f"in the dense list (at {_at(p.best(BASE))}) but no seed fact or entity is its: "
                                  f"query-to-fact matching chose other facts; {ended}")
    if stage in (RANKED, EXPANDED, FUSED):
        return cause(GRAPH, stage, f"reached {_reached_list(p, d)} but not {stage_label(stage, d.k)}; "
                                   f"{ended}")
    return ranking_causes(p, d, facts, ended)


def gist_cause(p: GoldPassage, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Lost at the gist read: the gist reader read it and drew nothing true from it (reader), or never read it —
    the fused list ranked it below the reader's cut (the graph's passages outranked a base passage; a passage no base
    list held is the base retriever's)."""
    fused = p.best(FUSED)
    if not _read_in(p, GIST):
        where = f"fused at rank {fused.rank}" if fused is not None and fused.rank is not None else "fused"
        what = "the expanded passages" if facts.setting("gist_read", "fused") == "expanded" else \
            f"the top {facts.setting('gist_read_k', 10)} of the fused list"
        if p.reached(BASE):
            text = (f"{where}, not among the passages the gist reader reads ({what}): passages the graph brought in "
                    f"outranked its base rank ({_at(p.best(BASE))}); {ended}")
            return [Cause(GRAPH, (named(p, FUSED, d.k, text),), ranking=True, passage=p.id, stage=FUSED)]
        text = f"in no base list; the graph brought it in {where}, below the gist reader's cut ({what})"
        return [Cause(BASE_RETRIEVER, (named(p, BASE, d.k, text),), ranking=True, passage=p.id, stage=BASE)]
    unsupported = _unsupported(facts, "gist", _read_in(p, GIST), p.id)
    text = (f"the gist reader read it but wrote {unsupported}: one end from it, in a fact none of the passages it "
            "read holds" if unsupported else
            f"the gist reader read it (fused at {_at(fused)}) but drew no triple from it; {ended}")
    return [Cause(READER, (named(p, GIST, d.k, text),), passage=p.id, stage=GIST)]


def ranking_causes(p: GoldPassage, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Lost at the final ranking (past k, or not in it): the lists that ranked it out, as the table shows them —
    a base list that held it only past k (base retriever), IRCoT's retrieval that brought it after others (retrieval
    order), PPR's walk or a graph list that ranked it past k (graph). None when every list held it within k: the
    final fusion alone put it past k, which no category of the paper names (a note says so)."""
    out = []
    losses = loss_stages(p, d.stages, d.k)
    retrieval = first_retrieval(p)
    if RETRIEVAL in losses and retrieval is not None:
        order = "IRCoT ranks in retrieval order" if facts.setting("ircot_ranking", "retrieval") == "retrieval" else \
            "other passages scored higher"
        n = retrieval.iteration
        how = (f"the retrievals before retrieval {n} missed it; that one brought it (rank {retrieval.rank} of its "
               "hits), after the passages the earlier ones added" if n > 1 else
               f"retrieval 1 (with the question) ranked it {retrieval.rank}th of its hits")
        out.append(Cause(BASE_RETRIEVER, (named(p, RETRIEVAL, d.k, f"{how}: {order}, so {ended}"),),
                         ranking=True, passage=p.id, stage=RETRIEVAL))
    base_first = BASE in losses  # the base lists never had it, or only past k: that loss comes first
    for stage in (s for s in losses if s in LIST_STAGES and s != RETRIEVAL):
        best = p.best(stage)
        if best is None or not best.reached:
            continue
        if stage == BASE:
            out.append(Cause(BASE_RETRIEVER, (named(p, BASE, d.k, (
                f"the base retriever ranked it at best {_at(best)}, past the top {d.k}, and no later stage lifted it: "
                f"{ended}")),), ranking=True, passage=p.id, stage=BASE))
        else:
            lists = {RANKED: "PPR's walk", EXPANDED: "the expanded list", FUSED: "the fused list",
                     LINKED: "passageLink"}
            how = "other passages scored higher on the graph" if stage == RANKED else \
                "passages the graph brought in outranked it"
            out.append(Cause(GRAPH, (named(p, stage, d.k, (
                f"{lists.get(stage, stage)} ranked it at best {_at(best)}, past the top {d.k} ({how}); "
                f"{ended}")),), weak=base_first, ranking=True, passage=p.id, stage=stage))
    if not out:
        d.notes.append(f"'{p.title}': every list that held it ranked it within the top {d.k}, but the final ranking "
                       f"put it past k ({ended}): no error category of the paper names the final fusion")
    return out


def link_cause(p: GoldPassage, facts: TraceFacts, k: int) -> Cause:
    """Read from the passage, linked elsewhere: graph when the link took a same-named triple of another passage,
    extraction when no index triple of the passage is close to the fact (tripleLink's best lies elsewhere)."""
    read_in = {m.iteration for m in p.marks if m.stage == READ and m.reached}
    pairs: list[tuple[list[str], TripleView, float]] = []
    for e in facts.trace.of(ProximalTriples):
        if e.role != "sync" or e.iteration not in read_in:
            continue
        mine = [list(a.triple) for a in facts.attributions(e) if p.id in a.passages]
        links = facts.trace.first(TriplesLinked, e.iteration)
        for link in links.links if links else []:
            if list(link.proximal) in mine and link.linked is not None:
                pairs.append((list(link.proximal), link.linked, link.similarity))

    def cause(category: str, text: str) -> Cause:
        return Cause(category, (named(p, LINK, k, text),), passage=p.id, stage=LINK)

    for proximal, linked, sim in pairs:
        shared = _same_name(proximal, linked)
        if shared:
            return cause(GRAPH, f"tripleLink took {spo(linked)} of '{linked.passage_title or linked.passage_id}' "
                                f"({sim:.2f}) for {spo(proximal)}, read from it: the same name '{shared}', another "
                                "passage's entity")
    if pairs:
        proximal, linked, sim = pairs[0]
        return cause(EXTRACTION, f"{spo(proximal)} was read from it, but its best index triple is {spo(linked)} of "
                                 f"'{linked.passage_title or linked.passage_id}' ({sim:.2f}): none of its own triples "
                                 "holds that fact")
    return cause(EXTRACTION, "a triple was read from it but none of its index triples was linked")


def bridge(p: GoldPassage, d: Diagnosis, facts: TraceFacts, step: str) -> Cause | None:
    """The path is in the text: a graph step reached a triple of another gold passage whose subject or object this
    passage's text names, yet nothing reached this passage. What the passage's own index triples (those the trace
    shows) say about that name decides the cause, named at the graph's `step` (beam, PPR's seed) it missed:
    - one of them has it under another entity string ("southern Africa" for "Africa") → graph: the graph does not
      join the two names;
    - the trace shows all of them (NaiveGE's initial nodes) and none names it → extraction: the fact is in the text,
      in no triple;
    - one of them has exactly that entity → base_retriever, named at the base list it was missing from: the edge is
      there, the graph step did not take it;
    - none shown → graph, weak: a missing edge cannot be told from a beam that did not take it."""
    if not facts.text_known(p.id):
        return None
    words = facts.tokens.of(p.id)
    others = {q.id: q.title for q in d.passages if q.id != p.id}
    own = [t for t in facts.triples.values() if t.passage_id == p.id]
    complete = p.reached(BASE) and any(e.source == "naive" for e in facts.trace.of(InitialNodes))

    def cause(category: str, at: str, text: str, weak: bool = False) -> Cause:
        return Cause(category, (named(p, at, d.k, text),), weak, passage=p.id, stage=at)

    for how, triple in _graph_triples(facts):
        if triple.passage_id not in others:
            continue
        for end in (triple.subject, triple.object):
            if not names_in(end, words):
                continue
            seen = f"{how} reached {spo(triple)} of gold '{others[triple.passage_id]}', whose '{end}' it names too"
            exact = [t for t in own if normalise_entity(end) in (normalise_entity(t.subject),
                                                                 normalise_entity(t.object))]
            if exact:
                at = BASE if BASE in d.stages and not p.reached(BASE) else step
                return cause(BASE_RETRIEVER if at == BASE else GRAPH, at,
                             f"{seen}, and its triple {spo(exact[0])} shares that entity: the graph joins them, but "
                             f"no {stage_label(step, d.k)} took that edge")
            other = _other_name(end, own, p.title)
            if other is not None:
                return cause(GRAPH, step, f"{seen}, but its triple {spo(other[0])} names it '{other[1]}': another "
                                          "entity string, so the graph does not join them")
            if complete:
                return cause(EXTRACTION, step, f"{seen}, but none of its {len(own)} index triples names it: the fact "
                                               "is in its text, in no triple, so no beam can reach it")
            return cause(GRAPH, step, f"{seen}, yet no graph step reached it: an edge missing or one the graph step "
                                      "did not follow (the trace shows none of its triples, so cannot tell which)",
                         weak=True)
    return None


def _other_name(end: str, triples: Sequence[TripleView], title: str) -> tuple[TripleView, str] | None:
    """A triple naming the same thing under another entity string: one's content tokens inside the other's (the
    passage's own subject, its title, is another thing even when it holds the name: "St. Peter's Basilica")."""
    words = set(entity_tokens(end))
    for t in triples:
        for x in (t.subject, t.object):
            if normalise_entity(x) == normalise_entity(title):
                continue
            theirs = set(entity_tokens(x))
            if words and theirs and (words <= theirs or theirs <= words) and normalise_entity(x) != \
                    normalise_entity(end):
                return t, x
    return None


def _graph_triples(facts: TraceFacts) -> list[tuple[str, TripleView]]:
    """The triples a graph step reached, with how: kept beams, tripleLink, PPR's kept seed facts."""
    found: list[tuple[str, TripleView]] = []
    for e in facts.trace.of(BeamsSearched):
        kept = {t for beam in (e.steps[-1] if e.steps else []) for t in beam.triple_ids}
        found.extend((f"a beam (iteration {e.iteration})", facts.triples[t]) for t in kept if t in facts.triples)
    for linked in facts.trace.of(TriplesLinked):
        found.extend((f"tripleLink (iteration {linked.iteration})", link.linked) for link in linked.links
                     if link.linked is not None)
    for seeded in facts.trace.of(PPRSeeded):
        found.extend((f"a PPR seed fact (iteration {seeded.iteration})", f.triple) for f in seeded.facts if f.kept)
    return found


# -- small helpers -------------------------------------------------------------------------------------------------
def _unsupported(facts: TraceFacts, role: str, iterations: Sequence[int], pid: int) -> str:
    """An unsupported triple of that read with one end from this passage: the reader took a name from it and wrote
    around it a fact none of the passages it read holds ("" when there is none)."""
    words = facts.tokens.of(pid)
    for e in facts.trace.of(ProximalTriples):
        if e.role != role or e.iteration not in iterations:
            continue
        bad = [a.triple for a in facts.attributions(e) if not a.supported and len(a.triple) >= 3 and
               max(cover(a.triple[0], words, facts.tokens.idf), cover(a.triple[2], words, facts.tokens.idf))
               >= GROUNDED]
        if bad:
            more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
            return f"{spo(bad[0])}{more} in iteration {e.iteration}"
    return ""


def _same_name(proximal: Sequence[str], linked: TripleView) -> str:
    ends = {normalise_entity(x) for x in (linked.subject, linked.object)}
    for x in (proximal[0], proximal[2]) if len(proximal) >= 3 else ():
        if normalise_entity(x) in ends:
            return x
    return ""


def _describe(mark: StageMark | None) -> str:
    return describe(mark) if mark is not None else "—"


def _at(mark: StageMark | None) -> str:
    """"rank 3 in iteration 2" (or "rank 3" for a once-per-run stage)."""
    if mark is None or mark.rank is None:
        return "—"
    return f"rank {mark.rank}" + (f" in iteration {mark.iteration}" if mark.iteration != RUN_LEVEL else "")


def _lists(p: GoldPassage, stage: str) -> str:
    iterations = sorted({m.iteration for m in p.marks if m.stage == stage})
    return f"iteration{'s' if len(iterations) > 1 else ''} {', '.join(map(str, iterations))}" if iterations else \
        "no list"


def _reached_list(p: GoldPassage, d: Diagnosis) -> str:
    reached = [stage_label(s, d.k) for s in d.stages if p.reached(s) and s not in (FINAL, FOUND)]
    return ", ".join(reached) if reached else "no stage"




def _read_in(p: GoldPassage, stage: str) -> list[int]:
    """The iterations whose read (sync or gist) had the passage in front of it (its mark holds its position)."""
    return [m.iteration for m in p.marks if m.stage == stage and m.rank is not None]
