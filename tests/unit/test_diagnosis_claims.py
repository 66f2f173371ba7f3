"""Every sentence of evidence is re-derived from the trace it came from: each ref an evidence line carries
(gear.diagnosis.claims) is asked of the events again, here, by code of its own — not the rules' — and a line that
says a claim word ("steered by", "drew no triple", "asked nothing new", "still missing") carries a ref of that
claim. Checked on hypothesis-generated GeAR and IRCoT runs, on real runs with any gold a person might mark, on the
bundled traces and on the recorded subset's 120."""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gear.diagnosis import Diagnosis, Ref, diagnose
from gear.diagnosis.claims import CLAIMS, PHRASES
from gear.diagnosis.gold_marks import run_passages, with_gold
from gear.diagnosis.grounding import PassageTokens
from gear.diagnosis.hops import words_of
from gear.diagnosis.matching import holds
from gear.events import (
    Answered,
    BaseRetrieved,
    BeamsSearched,
    Event,
    FinalRanking,
    GistUpdated,
    IterationStarted,
    PassagesAdded,
    PassagesExpanded,
    PassagesFused,
    PassagesLinked,
    PPRRanked,
    PPRSeeded,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    RunStarted,
    ThoughtWritten,
    TriplesLinked,
)
from gear.trace import PassageView, Trace
from tests.unit.test_diagnose import PASSAGES, QUESTION, start
from tests.unit.test_diagnosis_invariant import BUNDLED, gear_runs, marked_runs, subset_traces

LISTS: dict[str, tuple[type[Event], ...]] = {
    "base": (BaseRetrieved,), "retrieval": (BaseRetrieved, PassagesAdded), "expanded": (PassagesExpanded,),
    "fused": (PassagesFused,), "walk": (PPRRanked,), "ranking": (FinalRanking,)}
ROLES = {"read": "sync", "gist": "gist"}


def rank(views: list[PassageView], pid: int | None) -> int | None:
    return next((n for n, v in enumerate(views, 1) if v.id == pid), None)


def lists_of(trace: Trace, step: str, iteration: int | None = None) -> list[list[PassageView]]:
    if step == "passagelink":
        return [link.passages for e in trace.of(PassagesLinked) for link in e.links]
    return [e.passages for kind in LISTS[step] for e in trace.of(kind)  # type: ignore[attr-defined]
            if iteration is None or e.iteration == iteration]


def texts_of(trace: Trace, known: Mapping[int, tuple[str, str]]) -> dict[int, tuple[str, str]]:
    texts = {v.id: (v.title, v.text) for step in LISTS for views in lists_of(trace, step) for v in views}
    texts |= {v.id: (v.title, v.text) for views in lists_of(trace, "passagelink") for v in views}
    for pid, pair in known.items():
        if not texts.get(pid, ("", ""))[1]:
            texts[pid] = pair
    return texts


def names(text: str, value: str) -> bool:
    have = set(words_of(text))
    return all(w in have for w in value.split())


def triple_of(value: str) -> list[str]:
    return value.split(" | ")


def holds_ref(r: Ref, trace: Trace, d: Diagnosis, known: Mapping[int, tuple[str, str]]) -> bool:
    """The claim asked of the events again."""
    start_ = trace.first(RunStarted)
    question = start_.question if start_ else ""
    n = r.iteration
    if r.claim == "listed":
        found = [rank(views, r.passage) for views in lists_of(trace, r.step, None if n == 0 else n)]
        return any(x is not None and str(x) == r.value for x in found)
    if r.claim == "unlisted":
        return all(rank(views, r.passage) is None for views in lists_of(trace, r.step))
    if r.claim == "ranked":
        final = trace.first(FinalRanking)
        return final is not None and str(rank(final.passages, r.passage) or "") == r.value
    if r.claim == "found":
        final = trace.first(FinalRanking)
        x = rank(final.passages, r.passage) if final is not None else None
        return x is not None and x <= int(r.value)
    if r.claim in ("read", "wrote", "unsupported", "drew_nothing", "drew_none_from") and r.step in ROLES:
        read = next((e for e in trace.of(ProximalTriples) if e.role == ROLES[r.step] and e.iteration == n), None)
        if read is None:
            return False
        if r.claim == "read":
            return r.passage in read.passage_ids
        if r.claim == "wrote":
            return triple_of(r.value) in [list(t) for t in read.triples]
        if r.claim == "drew_nothing":
            return not any(names(t[0], r.value) or names(t[2], r.value) for t in read.triples if len(t) >= 3)
        tokens = PassageTokens(texts_of(trace, known))
        if r.claim == "unsupported":
            return not tokens.attribute(triple_of(r.value), read.passage_ids).supported
        return r.passage in read.passage_ids and not any(
            r.passage in tokens.attribute(t, read.passage_ids).passages for t in read.triples)
    if r.claim == "wrote" and r.step == "thought":
        return any(t.iteration == n and holds(t.thought, r.value) for t in trace.of(ThoughtWritten))
    if r.claim in ("names", "not_named"):
        if r.step == "question":
            said = [question]
        elif r.step == "base":
            said = [e.query for e in trace.of(BaseRetrieved) if e.iteration == n]
        elif r.step == "rewriter":
            said = [e.query for e in trace.of(QueryRewritten) if e.iteration == n]
        else:
            said = [t.thought for t in trace.of(ThoughtWritten) if t.iteration == n]
        return bool(said) and all(names(x, r.value) == (r.claim == "names") for x in said)
    if r.claim == "repeats":
        rewrite = next((e for e in trace.of(QueryRewritten) if e.iteration == n), None)
        asked = set(words_of(question)) | {w for e in trace.of(QueryRewritten) if e.iteration < n
                                           for w in words_of(e.query)}
        return rewrite is not None and set(words_of(rewrite.query)) <= asked
    if r.claim == "linked":
        triple, tid = r.value.rsplit(" => ", 1)
        e = trace.first(TriplesLinked, n)
        return e is not None and any(list(x.proximal) == triple_of(triple) and x.linked is not None and
                                     str(x.linked.id) == tid for x in e.links)
    if r.claim == "beam_missed":
        e = trace.first(BeamsSearched, n)
        owner = {t.id: t.passage_id for t in e.triples} if e is not None else {}
        return e is not None and not any(owner.get(t) == r.passage for beam in (e.steps[-1] if e.steps else [])
                                         for t in beam.triple_ids)
    if r.claim == "reached":
        if r.step == "beam":
            e = trace.first(BeamsSearched, n)
            return e is not None and any(str(t) == r.value for b in (e.steps[-1] if e.steps else [])
                                         for t in b.triple_ids)
        if r.step == "link":
            e = trace.first(TriplesLinked, n)
            return e is not None and any(x.linked is not None and str(x.linked.id) == r.value for x in e.links)
        seeded = trace.first(PPRSeeded, n)
        return seeded is not None and any(f.kept and str(f.triple.id) == r.value for f in seeded.facts)
    if r.claim == "gist_holds":
        e = trace.first(GistUpdated, n)
        return e is not None and any(names(t[0], r.value) or names(t[2], r.value) for t in e.memory if len(t) >= 3)
    if r.claim == "stopped":
        if r.step == "thought":
            return any(t.iteration == n and t.final for t in trace.of(ThoughtWritten))
        verdict = trace.first(Reasoned, n)
        later = [e for e in trace.of(IterationStarted) if e.iteration > n]
        return verdict is not None and verdict.answerable and not later
    if r.claim == "answered":
        answered = trace.first(Answered)
        return answered is not None and answered.answer == r.value
    if r.claim == "qa_holds":
        answered = trace.first(Answered)
        title, text = texts_of(trace, known).get(r.passage or -1, ("", ""))
        return answered is not None and r.passage in answered.passage_ids and holds(f"{title}. {text}", r.value)
    if r.claim == "gold_lacks":
        texts = texts_of(trace, known)
        return start_ is not None and not any(holds(". ".join(texts.get(pid, ("", ""))), a)
                                              for pid in start_.gold_passage_ids for a in start_.answers)
    return r.claim == "rerun"


def check_claims(d: Diagnosis, trace: Trace, known: Mapping[int, tuple[str, str]] | None = None) -> None:
    assert len(d.refs) == len(d.evidence)
    for line, refs in d.lines():
        for r in refs:
            assert r.claim in CLAIMS
            assert holds_ref(r, trace, d, known or {}), (line, r)
        for phrase, claims in PHRASES.items():
            if phrase in line:
                assert any(r.claim in claims for r in refs), (phrase, line, refs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=gear_runs(), k=st.integers(1, 8), known=st.booleans())
def test_every_claim_of_a_generated_gear_run_is_in_its_events(trace: Trace, k: int, known: bool) -> None:
    passages = PASSAGES if known else None
    check_claims(diagnose(trace, k, passages), trace, passages)


@st.composite
def ircot_runs(draw: st.DrawFn) -> Trace:
    """IRCoT: retrievals with the question, then with each thought; a final thought somewhere, or none."""
    steps = draw(st.integers(1, 3))
    events: list[Event] = [start("ircot", gold=draw(st.lists(st.sampled_from(list(PASSAGES)), min_size=1,
                                                             max_size=3, unique=True)),
                                 ircot_retriever="base", ircot_max_steps=steps + 1)]
    collected: list[int] = []
    query = QUESTION
    for n in range(1, steps + 1):
        hits = draw(st.lists(st.sampled_from(list(PASSAGES)), min_size=1, max_size=5, unique=True))
        new = [p for p in hits if p not in collected]
        collected += new
        views = [PassageView(p, *PASSAGES[p]) for p in hits]
        events += [IterationStarted(n, query), BaseRetrieved(n, query, 10, views),
                   PassagesAdded(n, query, [PassageView(p, *PASSAGES[p]) for p in new], list(collected))]
        final = n == steps and draw(st.booleans())
        thought = draw(st.sampled_from(["Bremen Cathedral is dedicated to St. Peter.",
                                        "St. Peter's Basilica is in Vatican City, a country since 1871.",
                                        "Vatican City became a country in 1929.", "I do not know."]))
        events.append(ThoughtWritten(n, thought, "", final, draw(st.sampled_from(["1929", "1871"])) if final else ""))
        query = thought
    answer = draw(st.sampled_from(["1929", "1871", "Italy"]))
    events += [FinalRanking(steps, [PassageView(p, *PASSAGES[p]) for p in collected]),
               Answered(steps, answer, answer, collected[:5])]
    from gear.events import RunFinished

    events.append(RunFinished(steps, steps, 5.0, {}))
    return Trace(events)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=ircot_runs(), k=st.integers(1, 6), known=st.booleans())
def test_every_claim_of_a_generated_ircot_run_is_in_its_events(trace: Trace, k: int, known: bool) -> None:
    passages = PASSAGES if known else None
    check_claims(diagnose(trace, k, passages), trace, passages)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), k=st.integers(1, 10))
def test_every_claim_with_any_marked_gold_is_in_the_events(data: st.DataObject, k: int) -> None:
    trace = data.draw(st.sampled_from(marked_runs()))
    shown = [p.id for p in run_passages(trace)]
    gold = data.draw(st.lists(st.sampled_from(shown), min_size=1, max_size=4, unique=True))
    answers = data.draw(st.sampled_from([None, ["1929"], ["Mediterranean Sea"], ["Vatican City"]]))
    marked = with_gold(trace, gold, answers)
    check_claims(diagnose(marked, k), marked)


def test_every_claim_of_the_bundled_and_recorded_traces_is_in_their_events() -> None:
    for path in BUNDLED:
        trace = Trace.load(path)
        check_claims(diagnose(trace), trace)
    for trace in subset_traces().values():
        check_claims(diagnose(trace), trace)
