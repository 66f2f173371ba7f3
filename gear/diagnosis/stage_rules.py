"""What a gold passage's loss at each stage points to: one rule per stage, looked up in one table (`STAGE_RULES`).

The rules in words, and why each is so, are docs/diagnosis.md's "The rules" (item 3); a test holds that page and this
table to the same stages. Each rule reads the passage's marks and the trace's facts and returns its causes, each named
at the passage and a stage (`gear.diagnosis.evidence.named`), as the invariant reads them; none when the trace does
not say (a read the run never reached, a final ranking no list explains).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gear.diagnosis.claims import ref, spo_value
from gear.diagnosis.evidence import at, describe, lost_cause, named
from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.grounding import GROUNDED, cover
from gear.diagnosis.invariant import LIST_STAGES, first_retrieval, loss_stages
from gear.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    BEAM,
    EXPANDED,
    EXTRACTION,
    FINAL,
    FOUND,
    FUSED,
    GIST,
    GRAPH,
    HIGH,
    INITIAL,
    LINK,
    LINKED,
    RANKED,
    RANKING,
    READ,
    READER,
    RETRIEVAL,
    RUN_LEVEL,
    SEED,
    STEP_BASE,
    STEP_BEAM,
    STEP_GIST,
    STEP_LINK,
    STEP_PASSAGELINK,
    STEP_RANKING,
    STEP_READ,
    STEP_RETRIEVAL,
    STEP_WALK,
    Cause,
    Diagnosis,
    GoldPassage,
    Ref,
    StageMark,
    stage_label,
)
from gear.events import ProximalTriples, TriplesLinked
from gear.store.graph import normalise_entity
from gear.trace import TripleView

GRAPH_STEPS = (BEAM, EXPANDED, LINKED, SEED, RANKED)  # stages a graph step (not the base list) can reach
#: the step (a ref's) whose list each list stage is
LIST_STEPS = {BASE: STEP_BASE, RETRIEVAL: STEP_RETRIEVAL, EXPANDED: "expanded", FUSED: "fused",
              LINKED: STEP_PASSAGELINK, RANKED: STEP_WALK}

#: a rule: (the lost passage, the stage it is judged at, the diagnosis so far, the trace's facts, how the passage's
#: run ended) → its causes
Rule = Callable[[GoldPassage, str, Diagnosis, TraceFacts, str], list[Cause]]


def ended_words(p: GoldPassage) -> str:
    """How the passage's run ended, for the end of an evidence line."""
    final = p.best(FINAL)
    if final is None:
        return "the run stopped before its final ranking"
    return f"it ended at final rank {final.rank}" if final.reached else "it was not in the final ranking"


def _cause(category: str, p: GoldPassage, stage: str, k: int, text: str, refs: Sequence[Ref] = ()) -> list[Cause]:
    return [lost_cause(category, p, stage, k, text, refs=refs)]


def _listed(p: GoldPassage, stage: str) -> Ref:
    """The list of `stage` that held the passage best, as a ref."""
    best = p.best(stage)
    step = LIST_STEPS.get(stage, stage)
    if best is None or not best.reached:
        return ref("unlisted", step, RUN_LEVEL, p.id)
    return ref("listed", step, best.iteration, p.id, best.rank if best.rank is not None else "")


def base_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Never retrieved (base list, IRCoT's retrieval): the base retriever's, whether or not the graph reached it."""
    reached = [f"{stage_label(s, d.k)} {_describe(p.best(s))}" for s in GRAPH_STEPS if p.reached(s)]
    where = "in no retrieval" if stage == RETRIEVAL else "in no base list"
    refs = [ref("unlisted", STEP_RETRIEVAL if stage == RETRIEVAL else STEP_BASE, RUN_LEVEL, p.id)]
    if reached:
        return _cause(BASE_RETRIEVER, p, stage, d.k,
                      f"{where}; the graph reached it ({', '.join(reached)}) but {ended}", refs)
    return _cause(BASE_RETRIEVER, p, stage, d.k, f"{where} ({_lists(p, stage)}) and no graph step reached it", refs)


def read_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """The sync reader read it and wrote a made-up fact around one of its names, or drew nothing from it: reader (not
    judged when the run was cut short before the reader had it in front of it)."""
    if not _read_in(p, READ):
        return []
    read = ref("read", STEP_READ, _read_in(p, READ)[0], p.id)
    unsupported, refs = _unsupported(facts, "sync", _read_in(p, READ), p.id)
    if unsupported:
        return _cause(READER, p, READ, d.k, f"the sync reader read it but wrote {unsupported}: one end from it, in a "
                                            "fact none of the passages it read holds", (read, *refs))
    return _cause(READER, p, READ, d.k, f"in the base list (at {at(p.best(BASE))}) and read by the sync reader, which "
                                        f"drew no triple from it; {ended}",
                  (read, *(ref("drew_none_from", STEP_READ, n, p.id) for n in _read_in(p, READ))))


def link_rule(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    return [link_cause(p, facts, d.k)]


def initial_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """NaiveGE's initial nodes are the base passages' own triples: a passage with none has no index triples."""
    return _cause(EXTRACTION, p, INITIAL, d.k, f"in the base list (at {at(p.best(BASE))}) but none of its triples was "
                                               "an initial node: it has no index triples", (_listed(p, BASE),))


def linked_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """A gist triple came from it but no passageLink list holds it: nothing of the index matched the fact."""
    gist = p.best(GIST)
    return _cause(EXTRACTION, p, LINKED, d.k, f"the gist triple {gist.note if gist else ''} came from it, but no "
                                              "passageLink list holds it: no index triple or passage text matched the "
                                              f"fact; {ended}", (ref("unlisted", STEP_PASSAGELINK, RUN_LEVEL, p.id),))


def beam_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Its triples were initial nodes, but the beams kept other passages' triples: graph."""
    base = p.best(BASE)
    within = f"within the top {d.k} of" if base and base.rank is not None and base.rank <= d.k else "in"
    missed = [ref("beam_missed", STEP_BEAM, m.iteration, p.id) for m in p.marks if m.stage == BEAM]
    return _cause(GRAPH, p, BEAM, d.k, f"{within} the base list (at {at(base)}) and its triples initial nodes, but no "
                                       "kept beam holds one (the beams took triples of other passages, which scored "
                                       f"higher against the query); {ended}", (_listed(p, BASE), *missed))


def seed_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """PPR: in the dense list, but none of its facts or entities seeded the walk: graph."""
    return _cause(GRAPH, p, SEED, d.k, f"in the dense list (at {at(p.best(BASE))}) but no seed fact or entity is its: "
                                       f"query-to-fact matching chose other facts; {ended}", (_listed(p, BASE),))


def graph_list_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Not in a list only the graph makes (PPR's ranking, the expanded or the fused list): graph."""
    return _cause(GRAPH, p, stage, d.k, f"reached {_reached_list(p, d)} but not {stage_label(stage, d.k)}; {ended}",
                  (ref("unlisted", LIST_STEPS.get(stage, stage), RUN_LEVEL, p.id),))


def gist_cause(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
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
                    f"outranked its base rank ({at(p.best(BASE))}); {ended}")
            return [Cause(GRAPH, (named(p, FUSED, d.k, text),), ranking=True, passage=p.id, stage=FUSED,
                          refs=(_listed(p, FUSED), _listed(p, BASE)))]
        text = f"in no base list; the graph brought it in {where}, below the gist reader's cut ({what})"
        return [Cause(BASE_RETRIEVER, (named(p, BASE, d.k, text),), ranking=True, passage=p.id, stage=BASE,
                      refs=(ref("unlisted", STEP_BASE, RUN_LEVEL, p.id), _listed(p, FUSED)))]
    read = ref("read", STEP_GIST, _read_in(p, GIST)[0], p.id)
    unsupported, refs = _unsupported(facts, "gist", _read_in(p, GIST), p.id)
    text = (f"the gist reader read it but wrote {unsupported}: one end from it, in a fact none of the passages it "
            "read holds" if unsupported else
            f"the gist reader read it (fused at {at(fused)}) but drew no triple from it; {ended}")
    if not unsupported:
        refs = [ref("drew_none_from", STEP_GIST, n, p.id) for n in _read_in(p, GIST)]
    return [Cause(READER, (named(p, GIST, d.k, text),), passage=p.id, stage=GIST, refs=(read, *refs))]


def ranking_causes(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts, ended: str) -> list[Cause]:
    """Lost at the final ranking (past k, or not in it): the lists that ranked it out, as the table shows them —
    a base list that held it only past k (base retriever), IRCoT's retrieval that brought it after others (retrieval
    order), PPR's walk or a graph list that ranked it past k (graph); the final ranking when every list held it within
    k and the final fusion alone put it past k."""
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
                         ranking=True, passage=p.id, stage=RETRIEVAL,
                         refs=(ref("listed", STEP_RETRIEVAL, n, p.id, retrieval.rank or ""), _ranked(p))))
    base_first = BASE in losses  # the base lists never had it, or only past k: that loss comes first
    for listed in (s for s in losses if s in LIST_STAGES and s != RETRIEVAL):
        best = p.best(listed)
        if best is None or not best.reached:
            continue
        if listed == BASE:
            out.append(Cause(BASE_RETRIEVER, (named(p, BASE, d.k, (
                f"the base retriever ranked it at best {at(best)}, past the top {d.k}, and no later stage lifted it: "
                f"{ended}")),), ranking=True, passage=p.id, stage=BASE, refs=(_listed(p, BASE), _ranked(p))))
        else:
            lists = {RANKED: "PPR's walk", EXPANDED: "the expanded list", FUSED: "the fused list",
                     LINKED: "passageLink"}
            how = "other passages scored higher on the graph" if listed == RANKED else \
                "passages the graph brought in outranked it"
            out.append(Cause(GRAPH, (named(p, listed, d.k, (
                f"{lists.get(listed, listed)} ranked it at best {at(best)}, past the top {d.k} ({how}); "
                f"{ended}")),), weak=base_first, ranking=True, passage=p.id, stage=listed,
                refs=(_listed(p, listed), _ranked(p))))
    if not out and p.best(FINAL) is not None:
        out.append(Cause(RANKING, (named(p, FOUND, d.k, f"every list that held it ranked it within the top {d.k}, but "
                                                        f"the final fusion put it past k: {ended}"),),
                         ranking=True, passage=p.id, stage=FOUND, step="ranking", confidence=HIGH,
                         refs=(_ranked(p),)))
    return out


def link_cause(p: GoldPassage, facts: TraceFacts, k: int) -> Cause:
    """Read from the passage, linked elsewhere: graph when the link took a same-named triple of another passage,
    extraction when no index triple of the passage is close to the fact (tripleLink's best lies elsewhere)."""
    read_in = {m.iteration for m in p.marks if m.stage == READ and m.reached}
    pairs: list[tuple[int, list[str], TripleView, float]] = []
    for e in facts.trace.of(ProximalTriples):
        if e.role != "sync" or e.iteration not in read_in:
            continue
        mine = [list(a.triple) for a in facts.attributions(e) if p.id in a.passages]
        links = facts.trace.first(TriplesLinked, e.iteration)
        for link in links.links if links else []:
            if list(link.proximal) in mine and link.linked is not None:
                pairs.append((e.iteration, list(link.proximal), link.linked, link.similarity))

    def cause(category: str, text: str, refs: Sequence[Ref] = ()) -> Cause:
        return lost_cause(category, p, LINK, k, text, refs=refs)

    def linked_ref(n: int, proximal: Sequence[str], linked: TripleView) -> Ref:
        return ref("linked", STEP_LINK, n, None, f"{spo_value(proximal)} => {linked.id}")

    for n, proximal, linked, sim in pairs:
        shared = _same_name(proximal, linked)
        if shared:
            return cause(GRAPH, f"tripleLink took {spo(linked)} of '{linked.passage_title or linked.passage_id}' "
                                f"({sim:.2f}) for {spo(proximal)}, read from it: the same name '{shared}', another "
                                "passage's entity", (linked_ref(n, proximal, linked),))
    if pairs:
        n, proximal, linked, sim = pairs[0]
        return cause(EXTRACTION, f"{spo(proximal)} was read from it, but its best index triple is {spo(linked)} of "
                                 f"'{linked.passage_title or linked.passage_id}' ({sim:.2f}): none of its own triples "
                                 "holds that fact", (linked_ref(n, proximal, linked),))
    return cause(EXTRACTION, "a triple was read from it but none of its index triples was linked",
                 [ref("read", STEP_READ, n, p.id) for n in sorted(read_in)[:1]])


#: the stage a gold passage is judged at → its rule (docs/diagnosis.md, "The rules", item 3); the final ranking and
#: final@k are judged by the lists that ranked the passage out, as is a stage a new method family adds before it has a
#: rule of its own (`stage_causes`)
STAGE_RULES: dict[str, Rule] = {
    BASE: base_cause,
    RETRIEVAL: base_cause,
    READ: read_cause,
    LINK: link_rule,
    INITIAL: initial_cause,
    BEAM: beam_cause,
    SEED: seed_cause,
    GIST: gist_cause,
    LINKED: linked_cause,
    RANKED: graph_list_cause,
    EXPANDED: graph_list_cause,
    FUSED: graph_list_cause,
    FINAL: ranking_causes,
    FOUND: ranking_causes,
}


def stage_causes(p: GoldPassage, stage: str, d: Diagnosis, facts: TraceFacts) -> list[Cause]:
    """The causes the rule of `stage` finds for the passage's loss there."""
    return STAGE_RULES.get(stage, ranking_causes)(p, stage, d, facts, ended_words(p))


# -- small helpers -------------------------------------------------------------------------------------------------
def _unsupported(facts: TraceFacts, role: str, iterations: Sequence[int], pid: int) -> tuple[str, list[Ref]]:
    """An unsupported triple of that read with one end from this passage: the reader took a name from it and wrote
    around it a fact none of the passages it read holds ("" when there is none), with its refs."""
    words = facts.tokens.of(pid)
    for e in facts.trace.of(ProximalTriples):
        if e.role != role or e.iteration not in iterations:
            continue
        bad = [a.triple for a in facts.attributions(e) if not a.supported and len(a.triple) >= 3 and
               max(cover(a.triple[0], words, facts.tokens.idf), cover(a.triple[2], words, facts.tokens.idf))
               >= GROUNDED]
        if bad:
            more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
            step = STEP_READ if role == "sync" else STEP_GIST
            return f"{spo(bad[0])}{more} in iteration {e.iteration}", [
                ref("wrote", step, e.iteration, None, spo_value(bad[0])),
                ref("unsupported", step, e.iteration, None, spo_value(bad[0]))]
    return "", []


def _same_name(proximal: Sequence[str], linked: TripleView) -> str:
    ends = {normalise_entity(x) for x in (linked.subject, linked.object)}
    for x in (proximal[0], proximal[2]) if len(proximal) >= 3 else ():
        if normalise_entity(x) in ends:
            return x
    return ""


def _ranked(p: GoldPassage) -> Ref:
    return ref("ranked", STEP_RANKING, RUN_LEVEL, p.id, p.final_rank or "")


def _describe(mark: StageMark | None) -> str:
    return describe(mark) if mark is not None else "—"


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
