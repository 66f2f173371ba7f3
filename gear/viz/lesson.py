"""A run as a lesson: the steps teaching mode and the handout walk through, in order — one per module of the method,
with Graph expansion opened into Algorithm 1's own sub-steps (the initial beams, then hop by hop: candidates, their
scores, the diversity penalty, the top b kept) — and iterations that repeat an earlier one folded into one note.

Pure functions of a trace: the app (studio.views.teaching) and the handout (gear.viz.handout) show the same steps in the
same order, so "step 7" names the same thing in a link, on screen and on paper.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gear import events as ev
from gear import methods
from gear import trace as t
from gear.retrieve import beam
from gear.viz import beam_order
from gear.viz.notation import STEPS, TAUGHT, at_iteration


# -- Algorithm 1, as gear.retrieve.beam numbers it --------------------------------------------------------------------
def algorithm_lines(doc: str | None = beam.beam_search.__doc__) -> list[tuple[int, str]]:
    """The paper's lines of Algorithm 1 with their numbers, read from beam_search's docstring (the one listing the
    code follows), without the helper names beside them."""
    lines = []
    for raw in (doc or "").splitlines():
        m = re.match(r"^\s+(\d{1,2})  (.*)$", raw)
        if not m:
            continue
        rest = m.group(2).rstrip()
        body = rest.lstrip()
        indent = len(rest) - len(body)
        lines.append((int(m.group(1)), " " * indent + re.split(r"\s{3,}", body)[0]))
    return lines


ALGORITHM_1 = algorithm_lines()

#: the lines each sub-step of the beam search carries out
PHASE_LINES: dict[str, tuple[int, ...]] = {
    "initial": (1, 2, 3, 4, 6),
    "candidates": (7, 8, 9, 10, 11, 12),
    "scores": (15, 16),
    "penalty": (18, 19, 20, 21, 22),
    "kept": (25,),
}


BEAM_PHASES = tuple(PHASE_LINES)
#: tripleLink's sub-steps: each proximal triple matched to its index triple, then the initial nodes in the graph
LINK_PHASES = ("link-match", "link-nodes")
#: PPR's: the facts matched to the query, the seeds they give, the walk's scores, the passages it ranks
PPR_PHASES = ("ppr-facts", "ppr-seeds", "ppr-walk", "ppr-passages")


# -- repeated iterations -----------------------------------------------------------------------------------------------
FINAL_KINDS = (ev.PassagesLinked, ev.FinalRanking, ev.Answered, ev.RunFinished)
_NOT_CONTENT = (ev.IterationStarted, ev.QueryRewritten, ev.LLMCalled, ev.StageTimed, ev.Warned)


@dataclass(frozen=True)
class Fold:
    """Iterations first…last repeat iteration `of`: every step came out the same (passages, triples, beams, memory,
    verdict). `same_query`: the rewriter wrote the very same query; `memo`: their LLM calls answered by the memo."""

    first: int
    last: int
    of: int
    same_query: bool
    memo: int
    calls: int

    @property
    def text(self) -> str:
        which = f"Iteration {self.first} repeats" if self.first == self.last else \
            f"Iterations {self.first}–{self.last} repeat"
        why = ("the rewriter wrote the same query" if self.same_query else
               "the rewriter wrote the query again in other words, and every step came out the same")
        memo = (f" ({self.memo} of their {self.calls} LLM calls answered by the memo)" if self.memo else "")
        return (f"{which} iteration {self.of}: {why}{memo}. Shown once; the run's numbers still count "
                f"{'it' if self.first == self.last else 'them'}.")


@dataclass
class Folding:
    folds: list[Fold] = field(default_factory=list)
    skipped: set[int] = field(default_factory=set)  # positions of the events not shown
    notes: dict[int, Fold] = field(default_factory=dict)  # position of a fold's first event → the fold


def _content(e: ev.Event) -> tuple[str, Any]:
    data = {k: v for k, v in dataclasses.asdict(e).items() if k not in ("iteration", "query", "raw")}
    return (e.kind, repr(data))


def folding(trace: t.Trace | Sequence[ev.Event]) -> Folding:
    """Which iterations repeat an earlier one — the same steps with the same outcome, so nothing new to see — and
    where to say so. The run's final steps (passageLink, ranking, answer) are never folded."""
    events = list(trace)
    end = next((n for n, e in enumerate(events) if isinstance(e, FINAL_KINDS)), len(events))
    by_iteration: dict[int, list[int]] = {}
    for n, e in enumerate(events[:end]):
        if e.iteration > 0:
            by_iteration.setdefault(e.iteration, []).append(n)
    content = {i: [_content(events[n]) for n in ns if not isinstance(events[n], _NOT_CONTENT)]
               for i, ns in by_iteration.items()}
    query = {e.iteration: e.query for e in events if isinstance(e, ev.IterationStarted)}
    original: dict[int, int] = {}
    seen: list[int] = []
    for i in sorted(by_iteration):
        if i not in query:
            continue
        match = next((k for k in seen if content[k] == content[i] and content[i]), None)
        if match is None:
            seen.append(i)
        else:
            original[i] = match
    result = Folding()
    group: list[int] = []
    for i in [*sorted(original), -1]:
        if group and (i == -1 or i != group[-1] + 1 or original[i] != original[group[0]]):
            calls = [e for g in group for n in by_iteration[g] if isinstance(e := events[n], ev.LLMCalled)]
            fold = Fold(group[0], group[-1], original[group[0]],
                        all(query[g] == query[original[g]] for g in group),
                        sum(1 for c in calls if c.source == "memo"), len(calls))
            result.folds.append(fold)
            result.notes[by_iteration[group[0]][0]] = fold
            group = []
        if i != -1:
            group.append(i)
    result.skipped = {n for i in original for n in by_iteration[i]}
    return result


# -- the lesson's steps ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LessonStep:
    """One step of a lesson: the event it shows, its title, the paper's notation (trusted HTML), a plain explanation
    (our own words and the run's numbers), and for the beam search's sub-steps the phase, the hop and the lines of
    Algorithm 1 it carries out. `missing`: what an older trace lacks to show this step fully."""

    event: ev.Event
    title: str
    notation: str
    explanation: str
    phase: str = ""  # "" a module's step; a sub-step's phase (BEAM_PHASES, LINK_PHASES, PPR_PHASES); "repeat"
    hop: int = 0
    lines: tuple[int, ...] = ()
    missing: str = ""
    fold: Fold | None = None

    @property
    def iteration(self) -> int:
        return self.event.iteration


OLD_BEAMS = ("This trace was recorded before the beam search kept its candidates, so only the beams that survived "
             "are shown (re-record the run to see each hop's candidates, scores and penalties).")


def lesson_steps(trace: t.Trace | Sequence[ev.Event]) -> list[LessonStep]:
    """The steps of a lesson on a run, in order: each module once per iteration (the gist read is explained with the
    memory it grows), Graph expansion as Algorithm 1's sub-steps when the trace holds the candidates, and one note in
    place of iterations that repeat an earlier one."""
    events = list(trace)
    fold = folding(events)
    start = next((e for e in events if isinstance(e, ev.RunStarted)), None)
    retriever = start.retriever if start else ""
    steps: list[LessonStep] = []
    for n, e in enumerate(events):
        if n in fold.notes:
            f = fold.notes[n]
            steps.append(LessonStep(e, "Repeated iterations", f"q<sup>({f.first:d})</sup> … = q<sup>({f.of:d})</sup>",
                                    f.text, phase="repeat", fold=f))
        if n in fold.skipped or type(e) not in TAUGHT:
            continue
        if isinstance(e, ev.ProximalTriples) and e.role != "sync":
            continue
        text = STEPS[type(e)]
        if isinstance(e, ev.TriplesLinked) and e.links:
            steps.extend(link_steps(e, retriever))
            continue
        if isinstance(e, ev.PPRSeeded):
            steps.extend(ppr_seed_steps(e))
            continue
        if isinstance(e, ev.PPRRanked):
            steps.extend(ppr_walk_steps(e))
            continue
        if isinstance(e, ev.BeamsSearched):
            if e.recorded and e.steps:
                steps.extend(beam_steps(e))
                continue
            steps.append(LessonStep(e, text.short, at_iteration(text.notation, e.iteration), text.explanation,
                                    missing=OLD_BEAMS if e.steps else ""))
            continue
        base = isinstance(e, ev.BaseRetrieved)
        words = text.explanation + (after_base(start.method if start else "") if base else "")
        steps.append(LessonStep(e, text.short, at_iteration(text.notation, e.iteration), words))
    return steps


def after_base(method: str) -> str:
    """What the run does after its base list, said of its own method (a PPR run does not go on as GeAR does)."""
    if method == "none":
        return " This run stops here: the base list is its ranking."
    try:
        label = methods.get(method).label
    except methods.UnknownMethod:
        return ""
    return f" That is why {label} goes on from here."


def beam_steps(e: ev.BeamsSearched) -> list[LessonStep]:
    """Graph expansion as Algorithm 1 does it: the initial beams B0, then for each hop i the candidates, their scores
    s′, the penalty's new order and the top b kept."""
    b, gamma = e.width, e.gamma
    n0 = len(e.initial_candidates)
    kept0 = sum(c.kept for c in e.initial_candidates)
    steps = [LessonStep(
        e, "Graph expansion · the initial beams", "B<sub>0</sub> = top({⟨score(q, [t]), [t]⟩ : t ∈ "
        "T<sub>q</sub><sup>init</sup>}, b)",
        f"Each initial node t (tripleLink's triples) starts a one-triple beam scored by score(q, [t]), the cosine "
        f"between the query and the triple. The best b = {b} are kept: {kept0} of the {n0} shown"
        + (" (every initial node fits)." if kept0 == n0 else "; the others are dropped.")
        + " Each kept beam is a chain the next hops may grow." + _then(beam_order.initial_sentence(e)),
        "initial", 0, PHASE_LINES["initial"])]
    for i, hop in enumerate(e.hops, 1):
        total = sum(v.total for v in hop)
        shown = sum(1 for v in hop for c in v.candidates if c.triple_id >= 0)
        carried = sum(1 for v in hop if v.total == 0)
        kept = sum(1 for v in hop for c in v.candidates if c.kept)
        last = i == len(e.hops)
        beams = len(e.steps[i - 1]) if i - 1 < len(e.steps) else 0
        steps += [
            LessonStep(e, f"Hop {i} · candidates", f"V = get_neighbours(T.last()) ∖ B<sub>{i - 1:d}</sub>",
                       f"For each of the {beams} beams ⟨s, T⟩ of B{i - 1}, the candidates are the triples that "
                       f"share an entity with its last triple, less those already in a beam (at most "
                       f"{e.max_neighbours}, the most query-similar). {total} candidates in all"
                       + (f"; the first {e.recorded} of each beam (and every kept one) are shown here: {shown}"
                          if shown < total else "")
                       + (f". {carried} beam(s) had no neighbour left and carry forward as they are" if carried
                          else "") + ".", "candidates", i, PHASE_LINES["candidates"]),
            LessonStep(e, f"Hop {i} · scores", "s′ = s + score(q, T∘t)",
                       "Each candidate t extends its beam's chain T to T∘t, and the chain is scored as a whole "
                       "against the query: s′ is the beam's score so far plus score(q, T∘t). A good chain collects "
                       "score hop by hop.", "scores", i, PHASE_LINES["scores"]),
            LessonStep(e, f"Hop {i} · diversity penalty", "s′ ← s′ · e<sup>−min(n, γ)/γ</sup>",
                       f"Within each beam the candidates are sorted by s′ and the n-th (from 0) is weighted by "
                       f"exp(−min(n, γ)/γ) with γ = {gamma:g}: a beam's best candidate keeps its score, its runners-up "
                       "lose a little more each. One beam cannot then fill every place with its own extensions."
                       + _then(beam_order.penalty_sentence(e, i)) if e.diversity else
                       "Diversity is off in this run: every factor is 1, the order stays that of s′.",
                       "penalty", i, PHASE_LINES["penalty"]),
            LessonStep(e, f"Hop {i} · the top b kept", f"B<sub>{i:d}</sub> = top(B, b)",
                       f"Of all beams' weighted candidates, the best b = {b} become B{i}: {kept} kept, the rest "
                       "(greyed out) dropped." + (" These are the beams whose triples' passages join the ranking."
                                                  if last else " The next hop grows these.")
                       + _then(beam_order.cut_sentence(e, i)),
                       "kept", i, PHASE_LINES["kept"] + ((27,) if last else ())),
        ]
    return steps


def _then(sentence: str) -> str:
    return f" {sentence}" if sentence else ""


def link_steps(e: ev.TriplesLinked, retriever: str = "") -> list[LessonStep]:
    """tripleLink as two sub-steps: each proximal triple t′ matched to its one nearest index triple, then the
    distinct index triples found — the initial nodes — where they sit in the index's graph."""
    found = [link for link in e.links if link.linked is not None]
    distinct = len({link.linked.id for link in found if link.linked is not None})
    shared = len(found) - distinct
    unmatched = len(e.links) - len(found)
    how = {"bm25": "BM25 over the triples' text", "dense": "the cosine of the triples' embeddings",
           "hybrid": "BM25 and the embeddings' cosine, fused"}.get(retriever, "the run's base retriever")
    match = (f"The reader wrote {len(e.links)} proximal triple{'s' if len(e.links) != 1 else ''}: facts in its own "
             f"words, which need not exist in the index. Each is looked up among the index's triples as a query of "
             f"its own, and the single best one is taken: h¹_base, here {how}. The similarity shown is the cosine "
             f"of the two triples' embeddings, whichever retriever chose.")
    if shared:
        match += (f" {shared} of them land{'s' if shared == 1 else ''} on an index triple another one found "
                  "already.")
    if unmatched:
        match += f" {unmatched} found no index triple at all."
    nodes = (f"The {distinct} index triple{'s' if distinct != 1 else ''} found {'are' if distinct != 1 else 'is'} "
             "the initial nodes: edges between two entities of the index's graph, and the places the "
             "graph walk starts from. Unlike the proximal triples, they come with their source passages — the "
             "passages the walk will bring back.")
    return [LessonStep(e, "tripleLink · the nearest index triple",
                       "h¹<sub>base</sub>(t′, T) for each t′ ∈ T′<sub>q</sub>", match, "link-match"),
            LessonStep(e, "tripleLink · the initial nodes", "T<sub>q</sub><sup>init</sup>", nodes, "link-nodes")]


def ppr_seed_steps(e: ev.PPRSeeded) -> list[LessonStep]:
    """PPR's seeds as two sub-steps: the facts matched to the query, then the entity (and passage) seeds."""
    kept = sum(f.kept for f in e.facts)
    facts = (f"PPR first matches the query to the index's facts — its triples — by the cosine of their embeddings, "
             f"min-max normalised over all triples; the {len(e.facts)} best are shown.")
    if e.filtered:
        facts += f" An LLM filter then read them and kept {kept} as relevant to the question; the rest are dropped."
    if e.fallback:
        facts += " No fact was left to seed the walk, so the dense ranking stands (HippoRAG 2 does the same)."
    seeds = (f"Each kept fact hands its score to its two entities, divided by the number of passages the entity "
             f"occurs in (a rare entity says more; averaged where an entity is in several facts); the best "
             f"{len(e.entities)} entities become seeds — the places the walk restarts from. Every passage is a seed "
             f"too, with its normalised dense score × {e.passage_weight:g}, so a passage the query matches directly "
             "keeps some weight.")
    return [LessonStep(e, "PPR · the facts matched to the query", "facts(q) = top cos(q, t)", facts, "ppr-facts"),
            LessonStep(e, "PPR · the seeds", "s = seeds(facts(q))", seeds, "ppr-seeds")]


def ppr_walk_steps(e: ev.PPRRanked) -> list[LessonStep]:
    """The walk as two sub-steps: the entities' scores after it, then the passages it ranks."""
    size = ", ".join(f"{n:,} {what.replace('_', ' ')}" for what, n in e.graph.items()) if e.graph else ""
    walk = (f"Personalized PageRank: a walker moves along the graph's edges (relations between entities, synonyms, "
            f"entity–passage links) and with probability 1 − d = {1 - e.damping:.2f} jumps back to a seed. Iterated "
            f"{e.iterations} times until the scores stop changing" + (f", over a graph of {size}" if size else "")
            + ". An entity many seeds reach gains score even if no fact named it: that is how evidence spreads "
              "to the next hop.")
    passages = ("The passages are ranked by their own PPR score: a passage gains from the entities it contains, "
                "so one that shares entities with several seeds rises above one that only matched the query's "
                "words.")
    return [LessonStep(e, "PPR · after the walk", "x = (1−d)·s + d·Pᵀx", walk, "ppr-walk"),
            LessonStep(e, "PPR · the passages ranked", "C<sub>q</sub> = sort(x<sub>passages</sub>)", passages,
                       "ppr-passages")]


def step_query(trace: t.Trace | Sequence[ev.Event], step: LessonStep) -> str:
    """q(n) of the step's iteration (the question when the step is outside one)."""
    events = list(trace)
    found = next((e.query for e in events if isinstance(e, ev.IterationStarted) and e.iteration == step.iteration),
                 None)
    if found is not None:
        return found
    return next((e.question for e in events if isinstance(e, ev.RunStarted)), "")


def position(trace: t.Trace | Sequence[ev.Event], step: LessonStep) -> int:
    """The step's event's place in the run (the steps drawn before it are the run up to there)."""
    return next(n for n, e in enumerate(trace) if e is step.event)
