"""The proposed error category of a run (the paper's Table "error_category_analysis"), with the evidence used.

Causes are collected in order and the first two distinct categories are proposed (primary, second):
1. dataset — no gold passage contains a gold answer: no retrieval could succeed.
2. When a gold passage was lost and the answer is not right:
   - reader, when the run searched on from a made-up fact that holds a (wrong) answer it gave: a triple the reader
     wrote from no passage it read, in an iteration before one that searched with a rewritten query (not the
     question again), or an IRCoT thought, not the last, that states such an answer, which no gold passage holds,
     in words of no passage it retrieved (answer.thought_fed) — the reader 'completed' a hop and the later
     retrievals followed it, so the missing passages were never sought;
   - reasoner, when a multi-step run stopped early (an "answerable" verdict, or IRCoT's final thought, before its
     last iteration) while a lost gold passage was still unseen (GeAR: no gist triple from it yet; IRCoT: no
     retrieval had returned it) — reader before it when a made-up triple holds the answer the run gave. A passage
     the reasoner had seen and that was ranked past k later was not lost by stopping.
3. Each lost gold passage, the earliest first (by the stage it dropped out of the run at: the stage after the last
   one it reached), judged at the stage it dropped out at and at the first stage it missed ("lost at"); specific
   evidence (extraction, graph, reader) before the default, base_retriever:
   base/retrieval   the bridge rule (bridge(): a graph step reached a triple of another gold passage whose end
                    this passage's text names, yet nothing reached this one) → graph, extraction or base_retriever by
                    what its own triples show; else base_retriever (never retrieved; or reached only by the graph
                    and ranked past k); an unconfirmed bridge adds graph after base_retriever
   read             reader when that read wrote a triple drawn from none of the passages read, else base_retriever
   link             graph when tripleLink took a same-named triple of another passage for a triple read from it;
                    else extraction (no index triple of it is close to the fact read from it)
   initial          extraction (NaiveGE: it has no index triples)
   linked           extraction (a gist triple came from it, but no passageLink list holds it)
   gist             reader when the gist read wrote an unsupported triple, else base_retriever
   beam/seed        the same bridge rule, else base_retriever
   later stages     base_retriever (other passages outranked it)
4. A wrong answer: reader (an unsupported triple or IRCoT thought holds the answer given), dataset (the answer and a
   gold answer contain one another: a missing alias), reasoner ("answerable" or a final thought with a wrong answer,
   or the gold answer in the QA passages and answered wrong).
Nothing lost and the answer right (or no answer asked): none.
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.eval.diagnosis.answer import answer_causes, reader_fed, thought_fed, verdict_answer
from gear.eval.diagnosis.evidence import describe, quoted
from gear.eval.diagnosis.facts import TraceFacts, spo
from gear.eval.diagnosis.grounding import GROUNDED, cover, entity_tokens, names_in
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
    """(category, second category or None, evidence) for a diagnosis whose passages and answer are filled in."""
    if not d.passages and (d.answer is None or not d.answer.gold):
        return None, None, ["no gold passages or answers in the trace: nothing to judge against"]
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
    if not d.passages:
        causes.append(Cause(DATASET, ("no gold passage of the question is in the index",)))
    if lost and answer is not None and answer.right is not True:
        rewritten = last_rewritten(facts)
        steered = reader_fed(facts, answer, before=rewritten)
        if steered is not None:  # a made-up fact the later iterations searched with explains the loss first
            query = next(e.query for e in facts.trace.of(BaseRetrieved) if e.iteration == rewritten)
            steered = Cause(READER, (f"{steered.evidence[0]}; the later iterations searched with queries rewritten "
                                     f"from a memory that held it (iteration {rewritten}: {query!r})",))
        steered = steered or thought_fed(facts, answer)
        if steered is not None:
            causes.append(steered)
    missing = missing_when_stopped(lost, d) if answer is not None and answer.stopped_early else []
    if missing and answer is not None and answer.right is not True:
        fed = reader_fed(facts, answer)
        if fed is not None:
            causes.append(fed)
        verdict = verdict_answer(facts, answer.stopped_at or 0)
        said = f"; the run answered {answer.answer!r}" if answer.answer is not None else ""
        what = "a final thought" if facts.trace.of(ThoughtWritten) else "'answerable'"
        causes.append(Cause(REASONER, (f"{what}{f' ({verdict!r})' if verdict else ''} at iteration "
                                       f"{answer.stopped_at} of {answer.max_iterations} while '{missing[0].title}' "
                                       f"was still missing{said}",)))
    for p in lost:
        found = [c for stage in dict.fromkeys([p.dropped_at, p.lost_at]) if stage
                 for c in passage_causes(p, stage, d, facts, graph)]
        causes.extend(sorted(found, key=lambda c: (c.weak, c.category == BASE_RETRIEVER)))  # specific first
    if wrong and answer is not None:
        causes.extend(answer_causes(answer, facts))
    if not causes:
        return None, None, ["the run was cut short before its final ranking: no loss so far"]
    distinct: list[Cause] = []
    for cause in causes:
        if cause.category not in [c.category for c in distinct]:
            distinct.append(cause)
    evidence = list(distinct[0].evidence)
    second = distinct[1] if len(distinct) > 1 else None
    if second is not None:
        evidence.append(f"also ({second.category}): {second.evidence[0]}")
    return distinct[0].category, second.category if second else None, evidence


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
    bridged = bridge(p, d, facts) if graph and stage in (BASE, RETRIEVAL, BEAM, SEED) and not p.reached(BEAM) \
        else None
    if bridged is not None and not bridged.weak:
        return [bridged]
    return [passage_cause(p, stage, d, facts), *([bridged] if bridged is not None else [])]


def passage_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts) -> Cause:
    """The cause a loss at `stage` points to (see the module's rules)."""
    name = f"'{p.title}'"
    final = p.best(FINAL)
    ended = (f"final rank {final.rank}" if final is not None and final.reached else "not in the final ranking") \
        if final is not None else "the run ended before its final ranking"
    if stage in (BASE, RETRIEVAL):
        reached = [f"{stage_label(s, d.k)} {_describe(p.best(s))}" for s in GRAPH_STEPS if p.reached(s)]
        where = "in no retrieval" if stage == RETRIEVAL else "in no base list"
        if reached:
            return Cause(BASE_RETRIEVER, (f"{name} was {where}; the graph reached it ({', '.join(reached)}) but it "
                                          f"ended at {ended}",))
        return Cause(BASE_RETRIEVER, (f"{name} was {where} ({_lists(p, stage)}) and no graph step reached it",))
    if stage == READ:
        unsupported = _unsupported(facts, "sync", _read_in(p, READ), p.id)
        if unsupported:
            return Cause(READER, (f"the sync reader read {name} but wrote {unsupported}: one end from it, in a fact "
                                  "none of the passages it read holds",))
        return Cause(BASE_RETRIEVER, (f"{name} was in the base list (at {_at(p.best(BASE))}) but the reader drew "
                                      f"no triple from it; it ended at {ended}",))
    if stage == LINK:
        return link_cause(p, facts)
    if stage == INITIAL:
        return Cause(EXTRACTION, (f"{name} was in the base list (at {_at(p.best(BASE))}) but none of its triples "
                                  "was an initial node: it has no index triples",))
    if stage == LINKED:
        gist = p.best(GIST)
        return Cause(EXTRACTION, (f"the gist triple {gist.note if gist else ''} came from {name}, but no passageLink "
                                  f"list holds it: no index triple or passage text matched the fact; it ended at "
                                  f"{ended}",))
    if stage == GIST:
        fused = p.best(FUSED)
        if not _read_in(p, GIST):
            where = f"fused at rank {fused.rank}" if fused is not None and fused.rank is not None else "fused"
            what = "the expanded passages" if facts.setting("gist_read", "fused") == "expanded" else \
                f"the top {facts.setting('gist_read_k', 10)} of the fused list"
            return Cause(BASE_RETRIEVER, (f"{name} was {where}, not among the passages the gist reader reads "
                                          f"({what}); it ended at {ended}",))
        unsupported = _unsupported(facts, "gist", _read_in(p, GIST), p.id)
        if unsupported:
            return Cause(READER, (f"the gist reader read {name} but wrote {unsupported}: one end from it, in a fact "
                                  "none of the passages it read holds",))
        return Cause(BASE_RETRIEVER, (f"the gist reader read {name} (fused at {_at(fused)}) but drew no triple from "
                                      f"it; it ended at {ended}",))
    if stage == BEAM:
        base = p.best(BASE)
        within = f"within the top {d.k} of " if base and base.rank is not None and base.rank <= d.k else ""
        return Cause(BASE_RETRIEVER, (f"{name} was {within}the base list (at {_at(base)}) and its triples were "
                                      f"initial nodes, but no kept beam holds one (triples of other passages scored "
                                      f"higher against the query); it ended at {ended}",))
    if stage == SEED:
        return Cause(BASE_RETRIEVER, (f"{name} was in the dense list (at {_at(p.best(BASE))}) but no seed fact or "
                                      f"entity is its: query-to-fact matching chose other facts; it ended at "
                                      f"{ended}",))
    retrieval = p.best(RETRIEVAL)
    if retrieval is not None and retrieval.reached and retrieval.iteration > 1 and \
            facts.setting("ircot_ranking", "retrieval") == "retrieval":
        return Cause(BASE_RETRIEVER, (f"{name} came with retrieval {retrieval.iteration} (rank {retrieval.rank} of "
                                      f"its hits), after the passages earlier retrievals added: IRCoT ranks in "
                                      f"retrieval order, so it ended at {ended}",))
    base = p.best(BASE)
    if base is not None and base.reached and base.rank is not None and base.rank <= d.k:
        how = "PPR's ranking: passages the walk scored higher" if RANKED in d.stages else \
            "fusion: passages the graph brought in"
        return Cause(BASE_RETRIEVER, (f"{name} was within the top {d.k} of the base list (at {_at(base)}) but "
                                      f"ended at {ended} after {how} outranked it",))
    return Cause(BASE_RETRIEVER, (f"{name} reached {_reached_list(p, d)} but ended at {ended}, past the top {d.k}: "
                                  "other passages outranked it",))


def link_cause(p: GoldPassage, facts: TraceFacts) -> Cause:
    """Read from the passage, linked elsewhere: graph when the link took a same-named triple of another passage,
    extraction when no index triple of the passage is close to the fact (tripleLink's best lies elsewhere)."""
    name = f"'{p.title}'"
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
    for proximal, linked, sim in pairs:
        shared = _same_name(proximal, linked)
        if shared:
            return Cause(GRAPH, (f"tripleLink took {spo(linked)} of '{linked.passage_title or linked.passage_id}' "
                                 f"({sim:.2f}) for {spo(proximal)}, read from {name}: the same name '{shared}', "
                                 "another passage's entity",))
    if pairs:
        proximal, linked, sim = pairs[0]
        return Cause(EXTRACTION, (f"{spo(proximal)} was read from {name}, but its best index triple is "
                                  f"{spo(linked)} of '{linked.passage_title or linked.passage_id}' ({sim:.2f}): no "
                                  f"triple of {name} holds that fact",))
    return Cause(EXTRACTION, (f"a triple was read from {name} but none of its index triples was linked",))


def bridge(p: GoldPassage, d: Diagnosis, facts: TraceFacts) -> Cause | None:
    """The path is in the text: a graph step reached a triple of another gold passage whose subject or object this
    passage's text names, yet nothing reached this passage. What the passage's own index triples (those the trace
    shows) say about that name decides the cause:
    - one of them has it under another entity string ("southern Africa" for "Africa") → graph: the graph does not
      join the two names;
    - the trace shows all of them (NaiveGE's initial nodes) and none names it → extraction: the fact is in the text,
      in no triple;
    - one of them has exactly that entity → base_retriever: the edge is there, the beam did not take it;
    - none shown → graph, weak: a missing edge cannot be told from a beam that did not take it."""
    if not facts.text_known(p.id):
        return None
    words = facts.tokens.of(p.id)
    others = {q.id: q.title for q in d.passages if q.id != p.id}
    own = [t for t in facts.triples.values() if t.passage_id == p.id]
    complete = p.reached(BASE) and any(e.source == "naive" for e in facts.trace.of(InitialNodes))
    name = f"'{p.title}'"
    for how, triple in _graph_triples(facts):
        if triple.passage_id not in others:
            continue
        for end in (triple.subject, triple.object):
            if not names_in(end, words):
                continue
            seen = f"{how} reached {spo(triple)} of gold '{others[triple.passage_id]}', whose '{end}' {name} names too"
            exact = [t for t in own if normalise_entity(end) in (normalise_entity(t.subject),
                                                                 normalise_entity(t.object))]
            if exact:
                return Cause(BASE_RETRIEVER, (f"{seen}, and its triple {spo(exact[0])} shares that entity: the graph "
                                              "joins them, but no kept beam took that edge",))
            other = _other_name(end, own, p.title)
            if other is not None:
                return Cause(GRAPH, (f"{seen}, but its triple {spo(other[0])} names it '{other[1]}': another entity "
                                     "string, so the graph does not join them",))
            if complete:
                return Cause(EXTRACTION, (f"{seen}, but none of its {len(own)} index triples names it: the fact "
                                          "is in its text, in no triple, so no beam can reach it",))
            return Cause(GRAPH, (f"{seen}, yet no graph step reached {name}: an edge missing or one the graph step "
                                 "did not follow (the trace shows none of its triples, so cannot tell which)",),
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
