"""A verdict that agrees with its table: a category named after a part of the pipeline — base retriever, reader,
graph, extraction, rewriter, ranking — is proposed only when the stage table shows a gold passage lost at one of that
part's stages, and the evidence line for it names that passage and that stage ("'Title' (stage): …").

Where the table shows a gold passage lost (`loss_stages`; none for a passage found):
- its *lost at* stage, the first it never reached;
- every stage it missed after the last one it reached — it left the run there for good (a passage no stage reached
  is lost at every stage: the base list and the graph's steps alike, the two ways into a run);
- the ranked lists that ranked it out: when the final ranking put it past k, each list that held it only past k
  ("dropped after" that list), and IRCoT's retrieval when the first retrieval that held it came after the first or
  ranked it past k (IRCoT ranks in retrieval order); when the gist reader never read it, the fused list it was
  ranked too low in.

- a passage some list held and the final ranking put past k: final@k.

Which stages each category is about (`CATEGORY_STAGES`): the base retriever's lists (base, IRCoT's retrievals; with
the graph, the fused list both feed); the readers (read, gist); the graph's steps (tripleLink, beams, expansion,
fusion, PPR's seeds and walk, passageLink); what the index's triples hold (initial nodes, tripleLink, beams,
passageLink); the final ranking (final@k). A passage a hop leads to (hop ≥ 2) that no list held was the readers',
the graph's and the rewriter's to bring: those categories may be named at its base list or retrieval too
(`BRIDGE`), as may a reader whose made-up fact steered the later retrievals. Reasoner, dataset and the answer step
are about the run's verdicts, the question and the answer, not a stage: the rule does not bind them (the answer step
is proposed only when the passages the QA step read held what was needed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gear.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    BEAM,
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
    OPEN_STATUS,
    RANKED,
    RANKING,
    READ,
    READER,
    RETRIEVAL,
    REWRITER,
    SEED,
    Diagnosis,
    GoldPassage,
    StageMark,
    stage_label,
)

CATEGORY_STAGES: dict[str, tuple[str, ...]] = {
    BASE_RETRIEVER: (BASE, RETRIEVAL, FUSED),
    READER: (READ, GIST),
    GRAPH: (LINK, BEAM, EXPANDED, FUSED, SEED, RANKED, LINKED, RETRIEVAL),  # IRCoT's retrievals over PPR: its walk
    EXTRACTION: (INITIAL, LINK, BEAM, LINKED),
    REWRITER: (),
    RANKING: (FOUND,),
}
BRIDGE = (BASE, RETRIEVAL)  # where a later hop's passage no list held shows: the retrievals that never had it
BRIDGED = (READER, GRAPH, EXTRACTION, REWRITER)  # the steps meant to bring such a passage
STEERED_BY = "steered by"  # the words of a reader's made-up fact that the later retrievals followed
LIST_STAGES = (BASE, EXPANDED, FUSED, RANKED, RETRIEVAL, LINKED)  # the stages that rank a list of passages


def stages_of(category: str, bridge: bool = False) -> tuple[str, ...]:
    """The stages a category may be drawn from (`bridge`: the passage is a later hop's, or a reader's fact steered
    the retrievals that missed it)."""
    return CATEGORY_STAGES.get(category, ()) + (BRIDGE if bridge and category in BRIDGED else ())


def last_reached(p: GoldPassage, stages: Sequence[str]) -> str | None:
    """The last stage before the final ranking that the passage reached (None: none)."""
    return next((s for s in reversed(stages) if s not in (FINAL, FOUND) and p.reached(s)), None)


def first_retrieval(p: GoldPassage) -> StageMark | None:
    """IRCoT's retrieval that first held the passage: in retrieval order (IRCoT's ranking) its place there decides the
    passage's final rank, not the best rank a later retrieval gave it."""
    return min((m for m in p.marks if m.stage == RETRIEVAL and m.reached), key=lambda m: m.iteration, default=None)


def loss_stages(p: GoldPassage, stages: Sequence[str], k: int) -> list[str]:
    """The stages where the table shows the passage lost, in pipeline order (see the module's words)."""
    if p.status == FOUND_STATUS:
        return []
    before = [s for s in stages if s not in (FINAL, FOUND)]
    lost = {p.lost_at} if p.lost_at else set()
    last = last_reached(p, stages)
    after = before[before.index(last) + 1:] if last is not None else before
    lost |= {s for s in after if any(m.stage == s for m in p.marks) and not p.reached(s)}
    final = p.best(FINAL)
    if final is not None and final.reached and not p.reached(FOUND):
        for s in before:
            best = p.best(s)
            if s in LIST_STAGES and best is not None and best.reached and best.rank is not None and best.rank > k:
                lost.add(s)
        first = first_retrieval(p)
        if first is not None and (first.iteration > 1 or (first.rank or 0) > k):
            lost.add(RETRIEVAL)
    if GIST in before and not any(m.stage == GIST and m.rank is not None for m in p.marks) and p.reached(FUSED):
        lost.add(FUSED)  # fused, never read by the gist reader: fused below its cut
    if p.dropped_at:
        lost.add(p.dropped_at)
    if p.status != OPEN_STATUS and any(p.reached(s) for s in LIST_STAGES):
        lost.add(FOUND)  # a list held it and the final ranking did not keep it within k
    return [s for s in stages if s in lost]


# -- the check, on a diagnosis as it is written (used by the tests over every bundled and recorded trace) -----------
NAMED = re.compile(r"^'(?P<title>.*)' \((?P<stage>[a-z]+(?:@\d+)?)\): ")


def violations(d: Diagnosis) -> list[str]:
    """Where a diagnosis's category contradicts its table: for the primary and the second category, when named after
    a stage, its evidence line must start "'Title' (stage): " naming a gold passage not found and a stage of that
    category where the table shows it lost (a bridge stage only for a passage of a later hop, or when the line says
    the search was `STEERED_BY` a reader's fact). Empty when the verdict agrees with its table."""
    problems = []
    evidence = [e for e in d.evidence if not e.startswith("undetermined between ")]
    lines = {d.category: evidence[0] if evidence else ""}
    if d.second:
        lines[d.second] = next((e.split(": ", 1)[1] for e in evidence
                                if e.startswith((f"also ({d.second}): ", f"or ({d.second}): "))), "")
    for category, line in lines.items():
        if category not in CATEGORY_STAGES:
            continue
        match = NAMED.match(line)
        if match is None:
            problems.append(f"{category}: its evidence names no passage and stage: {line[:120]!r}")
            continue
        title, stage = match["title"], match["stage"]
        passages = [p for p in d.passages if p.title == title]
        later = STEERED_BY in line or any((p.hop or 0) > 1 for p in passages)
        allowed = {stage_label(s, d.k) for s in stages_of(category, bridge=later)}
        if stage not in allowed:
            problems.append(f"{category}: the stage it names, {stage}, is not one of its stages")
        elif not passages:
            problems.append(f"{category}: its evidence names {title!r}, no gold passage of the run")
        elif not any(stage in {stage_label(s, d.k) for s in loss_stages(p, d.stages, d.k)} for p in passages):
            problems.append(f"{category}: the table does not show {title!r} lost at {stage}")
    return problems
