"""Which step lost a gold passage: the step meant to carry it that did not (a label's `responsible`,
bench/labelling/PROTOCOL.md), as a cause whose evidence names the steps it rests on.

A passage some list of the run held and the final ranking put past k was lost by the ranking. One no list held is
judged by its hop (gear.diagnosis.hops): a hop-1 passage — the question names it — by the base retriever; a passage
a hop leads to by the steps meant to bring it, in the order they run: the readers (did any draw the name that leads
there from the passage that gives it?), tripleLink (did it link that fact to a triple naming it?), the beams (did they
reach the passage's triples?), the rewriter (did it ask about the name the gist held?), the reasoner (did it stop
while the passage was missing?), passageLink, the base retriever with a query naming it. IRCoT's thoughts are its
readers and its retrievals its base lists (or PPR's seeds and walk). Where the index is open, its triples tell
extraction from graph and the beam search is searched again with other knobs (gear.diagnosis.probe); otherwise an
answer the trace cannot give is said as undetermined between the two. The rules in words: docs/diagnosis.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gear.diagnosis.claims import ref, spo_value
from gear.diagnosis.evidence import named
from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.hops import Hop, core, words_of
from gear.diagnosis.invariant import LIST_STAGES
from gear.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    BEAM,
    EXPANDED,
    EXTRACTION,
    FOUND,
    FUSED,
    GRAPH,
    HIGH,
    LINK,
    LINKED,
    LOW,
    MEDIUM,
    RANKED,
    RANKING,
    READER,
    REASONER,
    RETRIEVAL,
    REWRITER,
    RUN_LEVEL,
    STEP_BASE,
    STEP_BEAM,
    STEP_EXTRACTION,
    STEP_GIST,
    STEP_LINK,
    STEP_PASSAGELINK,
    STEP_RANKING,
    STEP_READ,
    STEP_REASONER,
    STEP_RETRIEVAL,
    STEP_REWRITER,
    STEP_SEED,
    STEP_THOUGHT,
    STEP_WALK,
    Cause,
    Diagnosis,
    GoldPassage,
    Ref,
)
from gear.diagnosis.ppr import seed_marks
from gear.diagnosis.probe import Probe, beam_reruns, index_names, other_retrievers
from gear.events import (
    BaseRetrieved,
    BeamsSearched,
    PassagesLinked,
    PPRSeeded,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    ThoughtWritten,
    TriplesLinked,
)

#: the list each stage is, in words and as a ref's step
LISTS = {BASE: ("the base list", STEP_BASE), RETRIEVAL: ("retrieval", STEP_RETRIEVAL),
         EXPANDED: ("the expanded list", "expanded"), FUSED: ("the fused list", "fused"),
         LINKED: ("passageLink", STEP_PASSAGELINK), RANKED: ("PPR's walk", STEP_WALK)}


@dataclass(frozen=True)
class Drawn:
    """A fact a reader wrote (or a thought) that names the bridge: the step, its iteration and the words."""

    step: str        # read | gist | thought
    iteration: int
    triple: tuple[str, ...] = ()
    thought: str = ""


def passage_loss(p: GoldPassage, h: Hop | None, d: Diagnosis, facts: TraceFacts, hops: dict[int, Hop],
                 probe: Probe | None) -> Cause | None:
    """The cause of a lost passage's loss for the families that iterate or read (GeAR, SyncGE, IRCoT) and the ranking
    of any family with a final fusion; None where the stage rules judge it (gear.diagnosis.stage_rules)."""
    if d.family == "IRCoT":
        # IRCoT's final ranking is retrieval order: the ranking's loss when a retrieval held it within k, the
        # retrieval's own when every one that held it ranked it past k
        best = p.best(RETRIEVAL)
        if best is not None and best.reached:
            return ranking_cause(p, d, RETRIEVAL, best.iteration, best.rank) if (best.rank or 0) <= d.k else \
                retrieval_rank_cause(p, d, facts, best.iteration, best.rank or 0)
    elif d.family in ("GeAR", "SyncGE", "NaiveGE"):
        listed = _listed(p, d)
        if listed is not None:
            return ranking_cause(p, d, *listed)
    if d.family in ("base", "NaiveGE") and (h is None or h.hop <= 1) and _listed(p, d) is None and probe is not None:
        return base_cause(p, h, d, facts, BASE, probe)  # single-step: the re-run of other base retrievers, deeper
    if d.family not in ("GeAR", "SyncGE", "IRCoT"):
        return None
    base_stage = RETRIEVAL if d.family == "IRCoT" else BASE
    if h is None or h.hop <= 1:
        if facts.trace.of(PPRSeeded) and d.family == "IRCoT":
            return ppr_cause(p, d, facts, "no retrieval of the run held it", None)
        return base_cause(p, h, d, facts, base_stage, probe)
    suppliers = [q for q in d.passages if q.id != p.id and (q.id == h.source if h.source is not None else
                                                              hops.get(q.id, Hop(q.id, 0)).hop == h.hop - 1)]
    unseen = [q for q in suppliers if _listed(q, d) is None]
    if suppliers and len(unseen) == len(suppliers):
        q = unseen[0]
        return _cause(BASE_RETRIEVER, p, base_stage, d,
                      f"{_via(h, q)}, and no list of the run held '{q.title}'",
                      (ref("unlisted", STEP_RETRIEVAL if d.family == "IRCoT" else STEP_BASE, RUN_LEVEL, q.id),),
                      STEP_RETRIEVAL if d.family == "IRCoT" else STEP_BASE, MEDIUM)
    if d.family == "IRCoT":
        return ircot_loss(p, h, d, facts, suppliers)
    return expansion_loss(p, h, d, facts, suppliers, probe)


# -- ranked out --------------------------------------------------------------------------------------------------------
def _listed(p: GoldPassage, d: Diagnosis) -> tuple[str, int, int | None] | None:
    """The first list of the run (pipeline order) that held the passage: (stage, iteration, rank)."""
    for stage in d.stages:
        if stage not in LIST_STAGES:
            continue
        best = p.best(stage)
        if best is not None and best.reached:
            return stage, best.iteration, best.rank
    return None


def ranking_cause(p: GoldPassage, d: Diagnosis, stage: str, iteration: int, rank: int | None) -> Cause:
    words, step = LISTS.get(stage, (stage, stage))
    final = p.final_rank
    where = f" (iteration {iteration})" if iteration != RUN_LEVEL else ""
    ended = f"the final ranking put it at rank {final}" if final is not None else "the final ranking left it out"
    why = "IRCoT ranks in retrieval order, after the passages earlier retrievals added" if stage == RETRIEVAL and \
        d.family == "IRCoT" else "the final fusion preferred other passages"
    text = f"{words} held it at rank {rank}{where}, but {ended}, past the top {d.k}: {why}"
    refs = (ref("listed", step, iteration, p.id, rank), ref("ranked", STEP_RANKING, RUN_LEVEL, p.id, final or ""))
    return Cause(RANKING, (named(p, FOUND, d.k, text),), passage=p.id, stage=FOUND, refs=refs, step=STEP_RANKING,
                 confidence=HIGH)


def retrieval_rank_cause(p: GoldPassage, d: Diagnosis, facts: TraceFacts, n: int, rank: int) -> Cause:
    """IRCoT: every retrieval that held the passage ranked it past k, and the final ranking kept retrieval order: the
    retrieval's own ranking (PPR's, under IRCoT over PPR)."""
    text = f"no retrieval held it within the top {d.k} (at best retrieval {n}, rank {rank} of its hits), and IRCoT's " \
           f"final ranking keeps retrieval order (final rank {p.final_rank})"
    if facts.trace.first(PPRSeeded, n) is not None:
        return ppr_cause(p, d, facts, text, n)
    refs = (ref("listed", STEP_RETRIEVAL, n, p.id, rank), ref("ranked", STEP_RANKING, RUN_LEVEL, p.id,
                                                              p.final_rank or ""))
    return _cause(BASE_RETRIEVER, p, RETRIEVAL, d, text, refs, STEP_RETRIEVAL, HIGH)


def ppr_cause(p: GoldPassage, d: Diagnosis, facts: TraceFacts, text: str, n: int | None) -> Cause:
    """IRCoT over PPR: each retrieval is PPR's walk from seeds; a passage none of whose facts or entities seeded the
    walk is the seeds' miss, one that was seeded and still ranked low the walk's (both the graph's)."""
    seeds = [m for m in seed_marks(facts, p.id) if n is None or m.iteration == n]
    seeded = [m for m in seeds if m.reached]
    held = next((m for m in p.marks if m.stage == RETRIEVAL and m.iteration == n and m.reached), None)
    listed = ref("listed", STEP_RETRIEVAL, held.iteration, p.id, held.rank or "") if held is not None else \
        ref("unlisted", STEP_RETRIEVAL, RUN_LEVEL, p.id)
    if seeded:
        m = seeded[0]
        return _cause(GRAPH, p, RETRIEVAL, d, f"{text}: PPR's seeds held it ({m.note}, retrieval {m.iteration}) and "
                                              "its walk ranked other passages higher", (listed,), STEP_WALK, MEDIUM)
    return _cause(GRAPH, p, RETRIEVAL, d, f"{text}: none of PPR's seed facts or entities is its "
                                          f"({len(seeds)} retrieval{'s' if len(seeds) != 1 else ''} seeded)", (listed,),
                  STEP_SEED, MEDIUM)


# -- hop 1: the base retriever's -------------------------------------------------------------------------------------
def base_cause(p: GoldPassage, h: Hop | None, d: Diagnosis, facts: TraceFacts, stage: str, probe: Probe | None
               ) -> Cause:
    """A hop-1 passage (or one whose hop the trace cannot tell: its title unknown) no list of the run held."""
    step = STEP_RETRIEVAL if stage == RETRIEVAL else STEP_BASE
    queries = list(dict.fromkeys(e.query for e in facts.trace.of(BaseRetrieved)))
    n = len(facts.trace.of(BaseRetrieved))
    lists = "no retrieval" if stage == RETRIEVAL else "no base list"
    named_by = "the question names it, yet " if h is not None and h.named else ""
    text = f"{named_by}{lists} of the run held it" + (
        f" ({n} list{'s' if n != 1 else ''}, {len(queries)} quer{'ies' if len(queries) != 1 else 'y'}, the first "
        f"{queries[0]!r})" if queries else "")
    refs: tuple[Ref, ...] = (ref("unlisted", step, RUN_LEVEL, p.id),)
    if named_by:
        refs += (ref("names", "question", RUN_LEVEL, p.id, " ".join(words_of(core(p.title)))),)
    if probe is not None and queries:
        found = other_retrievers(probe, facts, p.id, queries[0])
        if found:
            text += f"; re-run: {found}"
            refs += (ref("rerun", step, 1, p.id, found),)
    return _cause(BASE_RETRIEVER, p, stage, d, text, refs, step, HIGH if h is not None else MEDIUM)


# -- a later hop, GeAR and SyncGE ------------------------------------------------------------------------------------
def expansion_loss(p: GoldPassage, h: Hop, d: Diagnosis, facts: TraceFacts, suppliers: Sequence[GoldPassage],
                   probe: Probe | None) -> Cause | None:
    source = suppliers[0] if suppliers else None
    via = _via(h, source)
    drawn = [x for x in _drawn(facts, h) if x.step in (STEP_READ, STEP_GIST)]
    if not drawn:
        return reader_cause(p, h, d, facts, suppliers, via)
    sync = next((x for x in drawn if x.step == STEP_READ), None)
    if sync is not None:
        return graph_cause(p, h, d, facts, sync, via, probe)
    gist = drawn[0]
    return after_gist(p, h, d, facts, gist, via, probe)


def reader_cause(p: GoldPassage, h: Hop, d: Diagnosis, facts: TraceFacts, suppliers: Sequence[GoldPassage],
                 via: str) -> Cause | None:
    """No reader drew the name that leads to the passage: the first read of a passage that gives it, with a fact it
    made up instead when it wrote one."""
    ids = {q.id for q in suppliers}
    reads = [e for e in facts.trace.of(ProximalTriples) if e.role in ("sync", "gist") and ids & set(e.passage_ids)]
    if not reads:
        return None  # the passage that leads there was never read: the stage rules judge it
    read = min(reads, key=lambda e: (e.iteration, e.role != "sync"))
    step = STEP_READ if read.role == "sync" else STEP_GIST
    q = next(x for x in suppliers if x.id in read.passage_ids)
    made_up = [a.triple for a in facts.attributions(read) if not a.supported and len(a.triple) >= 3]
    refs: list[Ref] = [ref("read", step, read.iteration, q.id),
                       ref("drew_nothing", step, read.iteration, None, " ".join(h.words))]
    who = "the sync reader" if step == STEP_READ else "the gist reader"
    text = f"{via}; {who} read '{q.title}' (iteration {read.iteration}) and drew no triple " \
           f"naming '{h.name}'"
    confidence = MEDIUM
    if made_up:
        text += f"; it wrote {spo(made_up[0])} instead, a fact none of the passages it read holds"
        refs += [ref("wrote", step, read.iteration, None, spo_value(made_up[0])),
                 ref("unsupported", step, read.iteration, None, spo_value(made_up[0]))]
        confidence = HIGH
        steer = steered(facts, made_up[0], read.iteration)
        if steer is not None:
            n, query, words = steer
            text += f"; the search was steered by it (iteration {n} asked {query!r})"
            refs.append(ref("names", STEP_BASE, n, None, words))
    later = [e for e in facts.trace.of(ProximalTriples) if e.role in ("sync", "gist") and e is not read and
             ids & set(e.passage_ids)]
    if later:
        text += f"; no later read drew it either ({len(later)} more)"
    stage = BASE if BASE in d.stages else RETRIEVAL
    return _cause(READER, p, stage, d, text, tuple(refs), step, confidence)


def graph_cause(p: GoldPassage, h: Hop, d: Diagnosis, facts: TraceFacts, drawn: Drawn, via: str,
                probe: Probe | None) -> Cause:
    """The sync reader drew the name: tripleLink and the beams were to carry the run to the passage."""
    n = drawn.iteration
    wrote = ref("wrote", STEP_READ, n, None, spo_value(drawn.triple))
    link = facts.trace.first(TriplesLinked, n)
    linked = next((x for x in (link.links if link else []) if list(x.proximal) == list(drawn.triple)), None)
    said = f"{via}; the sync reader drew {spo(drawn.triple)} (iteration {n})"
    if linked is not None and linked.linked is not None and not h.named_by(linked.linked.subject) and \
            not h.named_by(linked.linked.object) and linked.linked.passage_id != p.id:
        target = linked.linked
        refs = (wrote, ref("linked", STEP_LINK, n, None, f"{spo_value(drawn.triple)} => {target.id}"))
        text = f"{said}, but tripleLink linked it to {spo(target)} of '{target.passage_title or target.passage_id}' " \
               f"({linked.similarity:.2f}), which does not name '{h.name}'"
        cause = _cause(GRAPH, p, LINK, d, text, refs, STEP_LINK, MEDIUM)
        if probe is not None:
            held = index_names(probe, facts, h, p.id)
            if not held:
                return replace(_cause(EXTRACTION, p, LINK, d, f"{text}; no index triple of '{p.title}' or of the "
                                                                  f"passage that gives it names '{h.name}' (index)",
                                      refs, STEP_EXTRACTION, HIGH))
            return replace(cause, evidence=(cause.evidence[0] + f"; the index has {held}",), confidence=HIGH)
        return cause
    refs = (wrote, ref("beam_missed", STEP_BEAM, n, p.id))
    text = f"{said} and tripleLink linked it" + (f" to {spo(linked.linked)}" if linked and linked.linked else "") + \
        f", but no kept beam reached a triple of '{p.title}'"
    weighed = _weighed(facts, p.id, n)
    if weighed:
        return _cause(GRAPH, p, BEAM, d, f"{text}: the beam weighed {weighed} and kept others", refs, STEP_BEAM, HIGH)
    if probe is None:
        cause = _cause(GRAPH, p, BEAM, d, f"{text}; the trace shows none of its triples", refs, STEP_BEAM, LOW)
        alt = _cause(EXTRACTION, p, BEAM, d, f"{text}; none of its triples the trace shows names '{h.name}' — its "
                                             "index triples may lack the fact", refs, STEP_EXTRACTION, LOW)
        return replace(cause, tie=alt)
    held = index_names(probe, facts, h, p.id, own=True)
    if not held:
        return _cause(EXTRACTION, p, BEAM, d, f"{text}; none of its index triples names '{h.name}' (index): the fact "
                                              "is in its text, in no triple, so no beam could reach it", refs,
                      STEP_EXTRACTION, HIGH)
    reached = beam_reruns(probe, facts.trace, n, p.id)
    rerun = (ref("rerun", STEP_BEAM, n, p.id, reached),) if reached else ()
    more = f"; re-run: {reached}" if reached else ""
    return _cause(GRAPH, p, BEAM, d, f"{text}; its index triple {held} names it{more}", refs + rerun, STEP_BEAM,
                  HIGH if reached else MEDIUM)


def after_gist(p: GoldPassage, h: Hop, d: Diagnosis, facts: TraceFacts, gist: Drawn, via: str,
               probe: Probe | None) -> Cause:
    """Only the gist reader drew the name (iteration n): the rewriter was to ask about it, or the reasoner to go on,
    or passageLink to find the passage from the fact."""
    n = gist.iteration
    holds = ref("gist_holds", STEP_GIST, n, None, " ".join(h.words))
    said = f"{via}; the gist reader drew {spo(gist.triple)} (iteration {n}), so the gist held " \
           f"'{h.name}'"
    rewrite = facts.trace.first(QueryRewritten, n)
    verdict = facts.trace.first(Reasoned, n)
    if verdict is not None and verdict.answerable and n == max(facts.iterations, default=n) and \
            d.answer is not None and d.answer.stopped_early:
        return _cause(REASONER, p, BASE, d, f"{said}, but the reasoner said 'answerable' at iteration {n} of "
                                            f"{d.answer.max_iterations} while '{p.title}' was still missing",
                      (holds, ref("stopped", STEP_REASONER, n)), STEP_REASONER, MEDIUM)
    if rewrite is not None:
        query = rewrite.query
        if not h.named_by(query):
            new = _asks_nothing_new(facts, n)
            how = f"asked nothing new ({query!r})" if new else f"asked {query!r}, not about '{h.name}'"
            refs: tuple[Ref, ...] = (holds, ref("not_named", STEP_REWRITER, n, None, " ".join(h.words)))
            if new:
                refs += (ref("repeats", STEP_REWRITER, n),)
            return _cause(REWRITER, p, BASE, d, f"{said}, but the rewriter {how}, so the next iteration did not seek "
                                                "it", refs, STEP_REWRITER, HIGH if new else MEDIUM)
        base = facts.trace.first(BaseRetrieved, n + 1)
        text = f"{said}; the rewriter asked {query!r}, naming it, but the base list of iteration {n + 1} missed it"
        refs = (holds, ref("names", STEP_REWRITER, n, None, " ".join(h.words)),
                ref("unlisted", STEP_BASE, RUN_LEVEL, p.id))
        if probe is not None and base is not None:
            found = other_retrievers(probe, facts, p.id, base.query)
            if found:
                text += f"; re-run: {found}"
                refs += (ref("rerun", STEP_BASE, n + 1, p.id, found),)
        return _cause(BASE_RETRIEVER, p, BASE, d, text, refs, STEP_BASE, MEDIUM)
    linked = facts.trace.first(PassagesLinked)
    text = f"{said}; passageLink's lists for the gist's triples did not hold it"
    refs = (holds, ref("unlisted", STEP_PASSAGELINK, RUN_LEVEL, p.id))
    if linked is None:
        text = f"{said}; the run ended before passageLink"
    return _cause(GRAPH, p, LINKED if LINKED in d.stages else BASE, d, text, refs, STEP_PASSAGELINK, MEDIUM)


# -- a later hop, IRCoT ------------------------------------------------------------------------------------------------
def ircot_loss(p: GoldPassage, h: Hop, d: Diagnosis, facts: TraceFacts, suppliers: Sequence[GoldPassage]) -> Cause:
    """IRCoT: a thought after the retrieval that brought the passage leading there was to name the bridge, and the
    retrieval with that thought to bring the passage (PPR's seeds and walk under IRCoT over PPR)."""
    ids = {q.id for q in suppliers}
    retrievals = {e.iteration: e for e in facts.trace.of(BaseRetrieved)}
    first = min((n for n, e in retrievals.items() if ids & {x.id for x in e.passages}), default=None)
    thoughts = sorted(facts.trace.of(ThoughtWritten), key=lambda t: t.iteration)
    after = [t for t in thoughts if first is not None and t.iteration >= first]
    q = next((x for x in suppliers if first is not None and x.id in {v.id for v in retrievals[first].passages}),
             suppliers[0] if suppliers else None)
    via = _via(h, q)
    naming = next((t for t in after if h.named_by(t.thought)), None)
    if naming is None:
        if not after:
            return _cause(REASONER, p, RETRIEVAL, d, f"{via}; no thought followed the retrieval "
                                                     "that brought it", (ref("unlisted", STEP_RETRIEVAL, RUN_LEVEL,
                                                                             p.id),), STEP_THOUGHT, LOW)
        t = after[0]
        unnamed = (ref("not_named", STEP_THOUGHT, t.iteration, None, " ".join(h.words)),)
        if t.final:
            return _cause(REASONER, p, RETRIEVAL, d, f"{via}; thought {t.iteration} gave the "
                                                     f"final answer {t.answer or t.thought!r} while '{p.title}' was "
                                                     "still missing",
                          (*unnamed, ref("stopped", STEP_THOUGHT, t.iteration)), STEP_THOUGHT, MEDIUM)
        return _cause(READER, p, RETRIEVAL, d, f"{via}; thought {t.iteration} ({t.thought!r}) "
                                               f"did not name '{h.name}', and no later thought asked for it", unnamed,
                      STEP_THOUGHT, MEDIUM)
    named = (ref("names", STEP_THOUGHT, naming.iteration, None, " ".join(h.words)),)
    if naming.final:
        return _cause(REASONER, p, RETRIEVAL, d, f"{via}; thought {naming.iteration} named it "
                                                 f"but gave the final answer {naming.answer or naming.thought!r} while "
                                                 f"'{p.title}' was still missing",
                      (*named, ref("stopped", STEP_THOUGHT, naming.iteration)), STEP_THOUGHT, MEDIUM)
    if naming.iteration + 1 not in retrievals:
        return _cause(BASE_RETRIEVER, p, RETRIEVAL, d, f"{via}; the retrievals brought "
                                                       f"'{q.title if q else h.name}' only at retrieval {first}, and "
                                                       f"no retrieval was left to search with thought "
                                                       f"{naming.iteration}, which named it", named, STEP_RETRIEVAL,
                      LOW)
    n = naming.iteration + 1
    refs: tuple[Ref, ...] = (ref("names", STEP_THOUGHT, naming.iteration, None, " ".join(h.words)),
                             ref("unlisted", STEP_RETRIEVAL, RUN_LEVEL, p.id))
    said = f"{via}; thought {naming.iteration} named it ({naming.thought!r}), but retrieval " \
           f"{n} with it missed the passage"
    seeded = facts.trace.first(PPRSeeded, n)
    if seeded is not None:
        seeds = [e.name for e in seeded.entities] + [f.triple.subject for f in seeded.facts if f.kept] + \
            [f.triple.object for f in seeded.facts if f.kept]
        if any(h.named_by(s) for s in seeds):
            return _cause(GRAPH, p, RETRIEVAL, d, f"{said}: PPR's seeds held '{h.name}' and its walk ranked other "
                                                  "passages higher", refs, STEP_WALK, MEDIUM)
        return _cause(GRAPH, p, RETRIEVAL, d, f"{said}: none of PPR's seeds names '{h.name}'", refs, STEP_SEED, MEDIUM)
    return _cause(BASE_RETRIEVER, p, RETRIEVAL, d, said, refs, STEP_RETRIEVAL, MEDIUM)


# -- what the trace shows ---------------------------------------------------------------------------------------------
def _drawn(facts: TraceFacts, h: Hop) -> list[Drawn]:
    """Every fact a reader wrote that names the bridge, in the order the run wrote them (sync before gist)."""
    found = []
    for e in sorted(facts.trace.of(ProximalTriples), key=lambda e: (e.iteration, e.role != "sync")):
        for triple in e.triples:
            if len(triple) >= 3 and (h.named_by(triple[0]) or h.named_by(triple[2])):
                found.append(Drawn(STEP_READ if e.role == "sync" else STEP_GIST, e.iteration, tuple(triple)))
                break
    return found


def _weighed(facts: TraceFacts, pid: int, iteration: int) -> str:
    """A triple of the passage the beam search weighed as a candidate in that iteration and did not keep."""
    e = facts.trace.first(BeamsSearched, iteration)
    if e is None:
        return ""
    views = {t.id: t for t in e.candidate_triples}
    for hop, beams in enumerate(e.hops, 1):
        for beam in beams:
            for c in beam.candidates:
                view = views.get(c.triple_id)
                if view is not None and view.passage_id == pid and not c.kept:
                    return f"{spo(view)} at hop {hop} (rank {c.rank})"
    return ""


def _asks_nothing_new(facts: TraceFacts, iteration: int) -> bool:
    """The rewritten query of that iteration holds no word the question and the earlier queries did not."""
    rewrite = facts.trace.first(QueryRewritten, iteration)
    if rewrite is None:
        return False
    asked = set(words_of(facts.start.question if facts.start else ""))
    for e in facts.trace.of(QueryRewritten):
        if e.iteration < iteration:
            asked |= set(words_of(e.query))
    return set(words_of(rewrite.query)) <= asked


def steered(facts: TraceFacts, triple: Sequence[str], iteration: int) -> tuple[int, str, str] | None:
    """A later query that asks a word of the made-up fact (its ends or its relation) that neither the question nor
    any query before it asked — the search followed the fact: (its iteration, the query, the words)."""
    asked = set(words_of(facts.start.question if facts.start else ""))
    for e in sorted(facts.trace.of(BaseRetrieved), key=lambda e: e.iteration):
        if e.iteration <= iteration:
            asked |= set(words_of(e.query))
            continue
        new = [w for w in new_words(facts, triple).split() if w not in asked and w in words_of(e.query)]
        if new:
            return e.iteration, e.query, " ".join(new)
        asked |= set(words_of(e.query))
    return None


def new_words(facts: TraceFacts, triple: Sequence[str]) -> str:
    """The words of a triple the question does not hold."""
    question = set(words_of(facts.start.question if facts.start else ""))
    words = [w for part in triple for w in words_of(part) if w not in question]
    return " ".join(dict.fromkeys(words))


def _via(h: Hop, source: GoldPassage | None) -> str:
    """How the passage's hop is reached, at the head of a line: "hop 2, named by 'Novair International Airways'"."""
    if source is not None and h.source == source.id:
        return f"hop {h.hop}, named by '{source.title}'"
    return f"hop {h.hop} (the question does not name it)" + (f", after '{source.title}'" if source else "")


def _cause(category: str, p: GoldPassage, stage: str, d: Diagnosis, text: str, refs: tuple[Ref, ...], step: str,
           confidence: str) -> Cause:
    stage = stage if stage in d.stages else next((s for s in d.stages), stage)
    return Cause(category, (named(p, stage, d.k, text),), passage=p.id, stage=stage, refs=refs, step=step,
                 confidence=confidence)

