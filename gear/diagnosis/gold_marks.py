"""Gold passages a person marks on a run: a person doing error analysis on their own corpus knows the answer
when they see it and usually which document holds it. They find the passages by searching the index or among the
passages the run showed, mark them as gold (and may type the right answer), and the diagnosis of that run follows those
passages through it at once — a pure function of the trace and the marks, nothing re-run, no LLM asked.

Suggestions help find them: the passages that hold the typed answer or one of its aliases (whole words, in the title or
the text, matched as the diagnosis matches answers: gear.diagnosis.matching), the passages the QA step took the run's
answer from, and those the gist reader drew its triples from. They are suggestions only: nothing here makes a passage
gold without the person's say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gear.data.reading import InputError
from gear.diagnosis import DEFAULT_K, Diagnosis, Probe, diagnose
from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.matching import holds
from gear.events import Answered, FinalRanking, ProximalTriples, RunStarted
from gear.store.base import SearchBackend
from gear.trace import PassageView, Trace
from gear.types import Passage, Retriever

SCAN_LIMIT = 20_000  # an index this small is searched for the answer passage by passage; a larger one by BM25 first
CANDIDATES = 200     # passages a larger index's answer search looks through


class MarkError(InputError):
    """A mark that cannot be: an id the index does not have, a run that has no start. One line, shown as is."""


def parse_ids(text: str) -> list[int]:
    """Passage ids as a person types them: "3,7" (spaces allowed); one line when one is not a whole number."""
    ids = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            ids.append(int(part.strip()))
        except ValueError:
            raise MarkError(f"gold passages are ids separated by commas (e.g. 3,7): {part.strip()!r} is not an id") \
                from None
    if not ids:
        raise MarkError("no gold passage id given (e.g. --gold 3,7)")
    return list(dict.fromkeys(ids))


# -- the run with the person's gold ---------------------------------------------------------------------------------
def with_gold(trace: Trace, gold_ids: Sequence[int], answers: Sequence[str] | None = None) -> Trace:
    """The same run, its gold passages (and, when given, its right answers) those the person marked: the start event
    replaced, every other event as it was."""
    start = trace.first(RunStarted)
    if start is None:
        raise MarkError("this trace has no start event: it cannot take gold passages")
    marked = replace(start, gold_passage_ids=list(dict.fromkeys(int(i) for i in gold_ids)),
                     answers=list(start.answers if answers is None else answers))
    return Trace([marked if event is start else event for event in trace.events])


def passages_of(backend: SearchBackend, ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """(title, text) of passages by id, from the index; one line naming an id it does not have."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    bad = [i for i in wanted if not 0 <= i < backend.n_passages]
    if bad:
        raise MarkError(f"passage id {bad[0]} is not in this index (ids run from 0 to {backend.n_passages - 1})")
    return {p.id: (p.title, p.text) for p in backend.passages(wanted)}


def diagnose_marked(trace: Trace, gold_ids: Sequence[int], answers: Sequence[str] | None = None, *,
                    passages: Mapping[int, tuple[str, str]] | None = None, k: int = DEFAULT_K,
                    missing_gold: Sequence[str] = (), probe: Probe | None = None) -> Diagnosis:
    """The diagnosis of the run with these gold passages: `passages` gives the (title, text) of marked passages the
    run never showed (from the index: `passages_of`), so a passage no list of the run held is named and reported as
    lost at the first stage, not guessed at. `missing_gold`: titles of named gold passages the index lacks (no
    category without a gold passage known, unless one is named and missing: gear.diagnosis.categories). `probe`: the
    index the run was made on (gear.diagnosis.probe)."""
    d = diagnose(with_gold(trace, gold_ids, answers), k, passages, missing_gold, probe=probe)
    shown = {view.id for view in run_passages(trace)}
    for p in d.passages:
        if p.id not in shown:
            d.notes.append(f"'{p.title}' is in no list of this run: no stage reached it")
    return d


# -- the passages to mark: the run's own, and a search of the index -------------------------------------------------
def run_passages(trace: Trace) -> list[PassageView]:
    """Every passage the run showed, once: the final ranking first (in its order), then the other lists' passages
    in the order they first appeared."""
    facts = TraceFacts.of(trace)
    final = trace.first(FinalRanking)
    order = [p.id for p in final.passages] if final is not None else []
    order += [pid for pid in facts.texts if pid not in order]
    return [PassageView(pid, *facts.texts[pid]) for pid in order if facts.texts[pid][1]]


def search(backend: SearchBackend, query: str, k: int = 10, method: Retriever = "hybrid") -> list[Passage]:
    """The index's passages for a query, by BM25 and dense over title and text (fused by RRF for "hybrid")."""
    if not query.strip():
        return []
    hits = backend.search_passages([query], k, method)[0]
    return backend.passages([h.id for h in hits])


# -- suggestions ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Suggestion:
    """A passage that may be gold, with why: for the person to confirm or not."""

    id: int
    title: str
    text: str
    reasons: tuple[str, ...]


def suggest(backend: SearchBackend, question: str, answers: Sequence[str], trace: Trace | None = None,
            limit: int = 10) -> list[Suggestion]:
    """Passages that may hold the answer: those whose title or text holds it or an alias (every passage of a small
    index; a larger one's BM25 and dense hits for the answer and for the question with it), and, from the run, the
    passages the QA step took its answer from and those the gist reader drew triples from. A passage with more
    reasons comes first; then the answer's passages before the run's."""
    answers = [a for a in dict.fromkeys(a.strip() for a in answers) if a]
    reasons: dict[int, dict[str, str]] = {}  # passage id -> reason -> its kind (answer, qa, gist)
    texts: dict[int, tuple[str, str]] = {}

    def add(pid: int, title: str, text: str, kind: str, reason: str) -> None:
        texts.setdefault(pid, (title, text))
        reasons.setdefault(pid, {}).setdefault(reason, kind)

    if answers:
        for p in _answer_candidates(backend, question, answers):
            for answer in answers:
                where = "title" if holds(p.title, answer) else "text" if holds(p.text, answer) else ""
                if where:
                    add(p.id, p.title, p.text, "answer", f"holds '{answer}' in its {where}")
                    break
    if trace is not None:
        facts = TraceFacts.of(trace)
        for pid, kind, reason in _run_sources(facts):
            add(pid, *facts.texts.get(pid, ("", "")), kind, reason)
    order = sorted(reasons, key=lambda pid: -len(set(reasons[pid].values())))  # stable: answer's first
    return [Suggestion(pid, *texts[pid], tuple(reasons[pid])) for pid in order[:limit]]


def _answer_candidates(backend: SearchBackend, question: str, answers: Sequence[str]) -> Iterable[Passage]:
    n = backend.n_passages
    if n <= SCAN_LIMIT:
        for start in range(0, n, 1000):
            yield from backend.passages(range(start, min(n, start + 1000)))
        return
    seen: set[int] = set()
    for query in [*answers, *(f"{question} {a}" for a in answers)]:
        for method in ("bm25", "dense"):
            for p in search(backend, query, CANDIDATES, method):  # type: ignore[arg-type]
                if p.id not in seen:
                    seen.add(p.id)
                    yield p


def _run_sources(facts: TraceFacts) -> list[tuple[int, str, str]]:
    """(passage id, kind, why) for the passages the QA step took the run's answer from (those it read that hold it) and
    those the gist reader drew a triple from (by the diagnosis's grounding rule)."""
    trace = facts.trace
    found: list[tuple[int, str, str]] = []
    answered = trace.first(Answered)
    if answered is not None and answered.answer:
        for pid in answered.passage_ids:
            title, text = facts.texts.get(pid, ("", ""))
            if holds(f"{title} {text}", answered.answer):
                found.append((pid, "qa", f"the QA step answered '{answered.answer}' from it"))
    drawn: dict[int, list[tuple[int, list[str]]]] = {}
    for e in trace.of(ProximalTriples):
        if e.role != "gist":
            continue
        for a in facts.attributions(e):
            for pid in a.passages:
                if a.triple not in [t for _, t in drawn.get(pid, [])]:
                    drawn.setdefault(pid, []).append((e.iteration, list(a.triple)))
    for pid, triples in drawn.items():
        iteration, first = triples[0]
        more = f"{len(triples)} triples from it, e.g. " if len(triples) > 1 else ""
        found.append((pid, "gist", f"the gist reader drew {more}{spo(first)} from it (iteration {iteration})"))
    return found
