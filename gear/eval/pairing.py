"""Two evaluations lined up question by question: what B finds that A missed and what it loses, where each
gold passage ended in A and in B (the diagnosis's stage names), the answers, EM/F1, tokens and seconds of both, the
flow of gold passages and of proposed categories from A to B, and the paired numbers (the difference in R@k, EM and
F1 with a sign test and a paired bootstrap interval over questions, from gear.eval.paired).

`pair_reports(a, b, k)` is a pure function of two evaluation reports (the dicts `EvalReport.to_dict` writes): the
app's Evaluate page and `gear compare` call it and show the same `Pairing`. Nothing is re-run.

Where each figure comes from. The question's R@k, EM/F1, tokens and seconds are the report's own per-question numbers.
Where a gold passage ended is read from the report's diagnosis (its stage marks), recomputed at k from the passage's
rank in the final ranking, so a diagnosis made at another cut-off still says "found" or the stage it was lost at for
this k. A report written under the paper's protocol (reports without a "protocol" field are) runs a single-step method
once per cut-off and keeps the trace and the diagnosis of its largest cut-off's run only: its R@5 comes from the run at
k = 5, its stages from the run at k = 15, whose top 5 can hold other passages. Each side says so (`Side.sources`), and
a question whose two sources disagree says that too. The proposed categories are the diagnosis's, made at the cut-off
it was made at (`Side.diagnosis_k`).

"The same QA set": every question both reports hold has the same text under the same id, and they share at least
one. Questions only one report holds (a run cut short, --limit, a question skipped because the index lacks its gold)
are left out of every number and listed (`only_a`, `only_b`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gear import methods
from gear.diagnosis import CATEGORY_LABELS, FOUND, RUN_LEVEL, Diagnosis, GoldPassage, describe, stage_label
from gear.eval.paired import PairedMeasure, paired_measure
from gear.eval.protocol import PAPER, protocol_of
from gear.eval.report_file import kept_diagnosis, trace_path
from gear.eval.run_differences import differences, recorded_index

FOUND_END, OPEN_END, UNKNOWN_END = "found", "open", "unknown"  # where a gold passage ended, besides a stage's name
NO_CATEGORY = "undetermined"
FIXES, BREAKS, BOTH_MISS = "B fixes", "B breaks", "both miss"
KINDS = (FIXES, BREAKS, BOTH_MISS)
PASSAGES, ANSWERS = "passages", "answers"  # what a kind judges by: gold passages within k, or the answer's EM


class PairingError(ValueError):
    """Two reports that cannot be lined up (other questions, no shared cut-off, not a report): the reason, in one
    line."""


# -- records ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """One of the two evaluations: what it ran, under which protocol, and where each of its figures comes from."""

    name: str
    label: str
    method: str
    retriever: str
    protocol: str
    ks: list[int]
    questions: int
    multi_step: bool
    diagnosed: int  # questions with a diagnosis (kept in the report, or made from a kept trace)
    traces: int     # questions whose trace the report names
    diagnosis_k: int | None  # the cut-off the diagnosis (its categories) was made at
    index: dict[str, Any]
    sources: list[str]  # where R@k, the stages, tokens and seconds come from, in words


@dataclass
class PassagePair:
    """One gold passage of a question, in A and in B: where it ended (FOUND_END, a stage's label such as "base" or
    "final@5", OPEN_END for a run cut short, UNKNOWN_END without a diagnosis) and its rank in the final ranking."""

    title: str
    id_a: int | None
    id_b: int | None
    end_a: str
    end_b: str
    rank_a: int | None = None
    rank_b: int | None = None

    @property
    def gained(self) -> bool:
        return self.end_b == FOUND_END and self.end_a not in (FOUND_END, UNKNOWN_END)

    @property
    def lost(self) -> bool:
        return self.end_a == FOUND_END and self.end_b not in (FOUND_END, UNKNOWN_END)

    @property
    def missed(self) -> bool:
        return FOUND_END not in (self.end_a, self.end_b) and UNKNOWN_END not in (self.end_a, self.end_b)


@dataclass
class QuestionPair:
    id: str
    question: str
    hop: str
    n_gold: int
    recall_a: float  # fraction of the gold within k, the report's own number
    recall_b: float
    answer_a: str | None = None
    answer_b: str | None = None
    em_a: float | None = None
    em_b: float | None = None
    f1_a: float | None = None
    f1_b: float | None = None
    tokens_a: int = 0
    tokens_b: int = 0
    seconds_a: float = 0.0
    seconds_b: float = 0.0
    # the model's seconds for the question's answers when it wrote them, and whether they were replayed from
    # recordings rather than asked in that run (gear.trace.cost); None in reports made before reports kept them
    model_seconds_a: float | None = None
    model_seconds_b: float | None = None
    recorded_a: bool = False
    recorded_b: bool = False
    iterations_a: int = 1
    iterations_b: int = 1
    category_a: str | None = None
    category_b: str | None = None
    passages: list[PassagePair] = field(default_factory=list)
    trace_a: str | None = None
    trace_b: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def found_a(self) -> int:
        return round(self.recall_a * self.n_gold)

    @property
    def found_b(self) -> int:
        return round(self.recall_b * self.n_gold)

    def time_words(self, side: str) -> str:
        """Side "a" or "b"'s seconds for this question: its own run's, and when its answers were replayed from
        recordings, what the model took for them when it wrote them: "0.1 (recorded 199)"."""
        own, model, recorded = ((self.seconds_a, self.model_seconds_a, self.recorded_a) if side == "a" else
                                (self.seconds_b, self.model_seconds_b, self.recorded_b))
        return f"{own:.1f}" + (f" (recorded {model:.0f})" if recorded and model is not None else "")

    @property
    def gained(self) -> list[str]:
        return [p.title for p in self.passages if p.gained]

    @property
    def lost(self) -> list[str]:
        return [p.title for p in self.passages if p.lost]

    def ends(self) -> set[str]:
        """Every stage a gold passage of this question was lost at, in A or in B."""
        return {e for p in self.passages for e in (p.end_a, p.end_b) if e not in (FOUND_END, UNKNOWN_END)}

    def kind(self, by: str = PASSAGES) -> set[str]:
        """Which of "B fixes", "B breaks", "both miss" this question is (any, all or none of them). By gold passages:
        B finds one A missed / A finds one B missed / one neither finds (from the two reports' R@k where a report
        has no diagnosis to name the passages, or its R@k and its kept run disagree: B's R@k higher / lower /
        neither finds every gold passage). By answers: A wrong and B right / the reverse / both wrong."""
        out: set[str] = set()
        if by == ANSWERS:
            if self.em_a is None or self.em_b is None:
                return out
            if self.em_b > self.em_a:
                out.add(FIXES)
            if self.em_b < self.em_a:
                out.add(BREAKS)
            if self.em_a < 1 and self.em_b < 1:
                out.add(BOTH_MISS)
            return out
        known = all(UNKNOWN_END not in (p.end_a, p.end_b) for p in self.passages) and self.passages
        if known and not self.notes:
            if self.gained:
                out.add(FIXES)
            if self.lost:
                out.add(BREAKS)
            if any(p.missed for p in self.passages):
                out.add(BOTH_MISS)
            return out
        if self.recall_b > self.recall_a:  # the reports' numbers: which passages, unknown
            out.add(FIXES)
        if self.recall_b < self.recall_a:
            out.add(BREAKS)
        if self.recall_a < 1 and self.recall_b < 1:
            out.add(BOTH_MISS)  # which passages, unknown: neither finds every gold passage
        return out


@dataclass
class Band:
    """One band of a flow: gold passages (or questions) that ended at `source` in A and at `target` in B."""

    source: str
    target: str
    count: int
    questions: list[str]  # the ids of the questions it holds, each once, in report order


@dataclass
class Pairing:
    a: Side
    b: Side
    k: int
    questions: list[QuestionPair]
    only_a: list[str]
    only_b: list[str]
    differences: list[str]  # what differs between the two runs' settings and indexes, in words
    measures: list[PairedMeasure]
    passage_flow: list[Band]
    category_flow: list[Band]
    notes: list[str]

    def question(self, qid: str) -> QuestionPair:
        return next(q for q in self.questions if q.id == qid)

    def select(self, kinds: Sequence[str] = (), by: str = PASSAGES, stages: Sequence[str] = (),
               hops: Sequence[str] = (), categories: Sequence[str] = ()) -> list[QuestionPair]:
        """The questions a filter keeps: any of the kinds (by gold passages or by answers), a gold passage lost at
        one of the stages (in A or B), one of the hop types, A's or B's proposed category among the categories."""
        out = []
        for q in self.questions:
            if kinds and not (q.kind(by) & set(kinds)):
                continue
            if stages and not (q.ends() & set(stages)):
                continue
            if hops and q.hop not in hops:
                continue
            if categories and not ({q.category_a or NO_CATEGORY, q.category_b or NO_CATEGORY} & set(categories)):
                continue
            out.append(q)
        return out

    def stages(self) -> list[str]:
        """Every stage a gold passage was lost at, in A or B, in pipeline order as the bands list them."""
        seen = [e for band in self.passage_flow for e in (band.source, band.target)]
        return [e for e in dict.fromkeys(seen) if e not in (FOUND_END, UNKNOWN_END)]

    def hops(self) -> list[str]:
        return sorted({q.hop for q in self.questions})

    def categories(self) -> list[str]:
        seen = {c or NO_CATEGORY for q in self.questions for c in (q.category_a, q.category_b)}
        return [c for c in (*CATEGORY_LABELS, NO_CATEGORY) if c in seen]

    def counts(self, by: str = PASSAGES) -> dict[str, int]:
        return {kind: sum(kind in q.kind(by) for q in self.questions) for kind in KINDS}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for q, row in zip(self.questions, data["questions"], strict=True):
            row["gained"], row["lost"] = q.gained, q.lost
            row["kind"] = sorted(q.kind(PASSAGES))
            row["kind_by_answer"] = sorted(q.kind(ANSWERS))
        for m, row in zip(self.measures, data["measures"], strict=True):
            row["difference"], row["sentence"] = m.difference, m.sentence()
        data["counts"] = {PASSAGES: self.counts(PASSAGES), ANSWERS: self.counts(ANSWERS)}
        return data


# -- lining up ---------------------------------------------------------------------------------------------------------
def pair_reports(a: Mapping[str, Any], b: Mapping[str, Any], k: int | None = None, names: tuple[str, str] = ("A", "B"),
                 diagnoses: tuple[Mapping[str, Diagnosis], Mapping[str, Diagnosis]] | None = None) -> Pairing:
    """Line up two evaluation reports question by question at cut-off k (default: 5 when both have it, else the
    smallest cut-off both have). `diagnoses` (question id → Diagnosis, per side) stand in for questions whose report
    entry carries none (made from their kept traces by `diagnoses_from_traces`). Raises PairingError with the reason
    when the two cannot be lined up."""
    rows_a, rows_b = _entries(a, names[0]), _entries(b, names[1])
    shared = _same_questions(rows_a, rows_b, names)
    ks_a, ks_b = _ks(a, names[0]), _ks(b, names[1])
    common = sorted(set(ks_a) & set(ks_b))
    if not common:
        raise PairingError(f"no recall cut-off in common: {names[0]} has k = {_list(ks_a)}, {names[1]} has k = "
                           f"{_list(ks_b)}")
    if k is None:
        k = 5 if 5 in common else common[0]
    if k not in common:
        raise PairingError(f"k = {k} is not a cut-off of both reports: both have k = {_list(common)}")
    extra = diagnoses or ({}, {})
    diag_a = {qid: _diagnosis(rows_a[qid], extra[0].get(qid)) for qid in shared}
    diag_b = {qid: _diagnosis(rows_b[qid], extra[1].get(qid)) for qid in shared}
    side_a = _side(a, names[0], diag_a, k)
    side_b = _side(b, names[1], diag_b, k)
    questions = [_question(rows_a[qid], rows_b[qid], diag_a[qid], diag_b[qid], k, (side_a, side_b))
                 for qid in shared]
    notes = []
    disagree = [q.id for q in questions if q.notes]
    if disagree:
        notes.append(f"{len(disagree)} question(s) where a report's R@{k} (its run at k = {k}) and the stages (the run "
                     f"it kept) disagree on how many gold passages were found within {k}: their gold passages are "
                     "drawn from the kept run, their R@k from the report (e.g. "
                     f"{disagree[0]})")
    return Pairing(side_a, side_b, k, questions, [q for q in rows_a if q not in rows_b],
                   [q for q in rows_b if q not in rows_a], differences(a, b, names), measures(questions, k),
                   passage_flow(questions), category_flow(questions), notes)


def _entries(report: Mapping[str, Any], name: str) -> dict[str, dict[str, Any]]:
    rows = report.get("per_question")
    if not isinstance(report, Mapping) or not isinstance(rows, list):
        raise PairingError(f"{name}: not an evaluation report (no per_question list)")
    out: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows):
        if not isinstance(row, Mapping) or not isinstance(row.get("id"), str) or not isinstance(row.get("recall"),
                                                                                                  Mapping):
            raise PairingError(f"{name}: per_question[{n}] has no id or no recall")
        out[row["id"]] = dict(row)
    return out


def _same_questions(rows_a: Mapping[str, Any], rows_b: Mapping[str, Any], names: tuple[str, str]) -> list[str]:
    shared = [qid for qid in rows_a if qid in rows_b]
    if not shared:
        raise PairingError(f"the reports are over different QA sets: the question ids differ ({names[0]}: "
                           f"{_sample(list(rows_a))}; {names[1]}: {_sample(list(rows_b))})")
    other = [qid for qid in shared if " ".join(str(rows_a[qid].get("question", "")).split())
             != " ".join(str(rows_b[qid].get("question", "")).split())]
    if other:
        qid = other[0]
        raise PairingError(f"the reports are over different QA sets: {len(other)} question id(s) ask other questions "
                           f"(e.g. {qid}: {rows_a[qid].get('question')!r} in {names[0]}, "
                           f"{rows_b[qid].get('question')!r} in {names[1]})")
    return shared


def _ks(report: Mapping[str, Any], name: str) -> list[int]:
    ks = report.get("recall") or {}
    try:
        return sorted(int(k) for k in ks)
    except (TypeError, ValueError):
        raise PairingError(f"{name}: its recall cut-offs are not numbers ({_list(list(ks))})") from None


def _diagnosis(row: Mapping[str, Any], made: Diagnosis | None) -> Diagnosis | None:
    return kept_diagnosis(row.get("diagnosis")) or made


def _side(report: Mapping[str, Any], name: str, diagnoses: Mapping[str, Diagnosis | None], k: int) -> Side:
    method = str(report.get("method", ""))
    known = methods.find(method)
    multi_step = bool(known and known.multi_step)
    protocol = protocol_of(report)
    ks = _ks(report, name)
    made = [d for d in diagnoses.values() if d is not None]
    diagnosis_k = Counter(d.k for d in made).most_common(1)[0][0] if made else None
    rows = report.get("per_question") or []
    traces = sum(1 for row in rows if row.get("trace_file"))
    per_cutoff = protocol == PAPER and not multi_step and len(ks) > 1
    kept = max(ks) if ks else k
    sources = []
    if per_cutoff and k == kept:
        sources.append(f"R@{k} and stages: its run at k = {k}, the one it kept (the paper's protocol: a single-step "
                       "method runs once per cut-off)" if made else f"R@{k}: its run at k = {k}; stages: none (no "
                       "diagnosis and no traces)")
        sources.append(f"tokens and seconds: its {len(ks)} runs of each question together")
    elif per_cutoff:
        sources.append(f"R@{k}: its run at k = {k} (the paper's protocol: a single-step method runs once per "
                       f"cut-off)")
        sources.append(f"stages: its run at k = {kept}, the one it kept (its top {k} can differ from the run at "
                       f"k = {k}'s)" if made else "stages: none (the report carries no diagnosis and no traces)")
        sources.append(f"tokens and seconds: its {len(ks)} runs of each question together")
    else:
        run = "its one run of each question" + (f" (k = {kept})" if not multi_step else "")
        sources.append(f"R@{k}, stages, tokens and seconds: {run}" if made else
                       f"R@{k}, tokens and seconds: {run}; stages: none (no diagnosis and no traces)")
    if made and diagnosis_k is not None and diagnosis_k != k:
        sources.append(f"proposed categories: the diagnosis at k = {diagnosis_k} (where each passage ended is "
                       f"recomputed at k = {k} from its final rank)")
    retriever = str(report.get("retriever", ""))
    retriever = retriever.upper() if retriever == "bm25" else retriever.capitalize()
    label = str(report.get("label") or (retriever + (known.report_name if known else f" {method}")).strip())
    return Side(name, label, method, str(report.get("retriever", "")), protocol, ks,
                int(report.get("n_questions") or len(rows)), multi_step, len(made), traces, diagnosis_k,
                recorded_index(report), sources)


def ending(p: GoldPassage, stages: Sequence[str], complete: bool, k: int) -> tuple[str, int | None]:
    """Where a gold passage ended at cut-off k, and its final rank: FOUND_END within the top k; else the first stage
    of its method (in pipeline order, among those that ran) it never reached — the diagnosis's "lost at", with
    final@k when it was only ranked past k; OPEN_END for a run cut short. A diagnosis made at another k gives the
    same answer as one made at k: only the final@k mark depends on k, and it is read from the final rank here."""
    mark = p.best(FOUND)
    rank = mark.rank if mark is not None else None
    if rank is not None and rank <= k:
        return FOUND_END, rank
    if not complete:
        return OPEN_END, rank
    for stage in stages:
        if stage == FOUND:
            return stage_label(FOUND, k), rank
        marks = [m for m in p.marks if m.stage == stage]
        if marks and not any(m.reached for m in marks):
            return stage, rank
    return stage_label(FOUND, k), rank


def _keyed(d: Diagnosis | None) -> dict[tuple[str, int], GoldPassage]:
    """A diagnosis's gold passages by (title, occurrence): two indexes of the same passages may number them apart."""
    if d is None:
        return {}
    seen: Counter[str] = Counter()
    out = {}
    for p in d.passages:
        out[(p.title, seen[p.title])] = p
        seen[p.title] += 1
    return out


def _question(ra: Mapping[str, Any], rb: Mapping[str, Any], da: Diagnosis | None, db: Diagnosis | None, k: int,
              sides: tuple[Side, Side]) -> QuestionPair:
    key = str(k)
    q = QuestionPair(str(ra["id"]), str(ra.get("question", "")), str(ra.get("hop") or rb.get("hop") or "all"),
                     int(ra.get("n_gold") or rb.get("n_gold") or 0), float(ra["recall"].get(key, 0.0)),
                     float(rb["recall"].get(key, 0.0)))
    q.answer_a, q.answer_b = ra.get("answer"), rb.get("answer")
    q.em_a, q.em_b, q.f1_a, q.f1_b = ra.get("em"), rb.get("em"), ra.get("f1"), rb.get("f1")
    q.tokens_a = int(ra.get("prompt_tokens", 0)) + int(ra.get("completion_tokens", 0))
    q.tokens_b = int(rb.get("prompt_tokens", 0)) + int(rb.get("completion_tokens", 0))
    q.seconds_a, q.seconds_b = float(ra.get("seconds") or 0.0), float(rb.get("seconds") or 0.0)
    q.model_seconds_a, q.model_seconds_b = (None if r.get("model_seconds") is None else float(r["model_seconds"])
                                            for r in (ra, rb))
    q.recorded_a, q.recorded_b = bool(ra.get("recorded_calls")), bool(rb.get("recorded_calls"))
    q.iterations_a, q.iterations_b = int(ra.get("iterations") or 1), int(rb.get("iterations") or 1)
    q.trace_a, q.trace_b = ra.get("trace_file"), rb.get("trace_file")
    q.category_a = da.category if da is not None else None
    q.category_b = db.category if db is not None else None
    pa, pb = _keyed(da), _keyed(db)
    for key_ in dict.fromkeys([*pa, *pb]):
        ga, gb = pa.get(key_), pb.get(key_)
        end_a, rank_a = ending(ga, da.stages, da.complete, k) if ga is not None and da is not None else (UNKNOWN_END,
                                                                                                          None)
        end_b, rank_b = ending(gb, db.stages, db.complete, k) if gb is not None and db is not None else (UNKNOWN_END,
                                                                                                          None)
        q.passages.append(PassagePair(key_[0], ga.id if ga else None, gb.id if gb else None, end_a, end_b, rank_a,
                                      rank_b))
    for side, d, recall, which in ((sides[0], da, q.recall_a, "a"), (sides[1], db, q.recall_b, "b")):
        if d is None or not q.passages:
            continue
        found = sum(getattr(p, f"end_{which}") == FOUND_END for p in q.passages)
        if found != round(recall * q.n_gold):
            q.notes.append(f"{side.name}: R@{k} {round(recall * q.n_gold)} of {q.n_gold} (its run at k = {k}); the "
                           f"kept run's top {k} held {found}")
    return q


# -- down to the stage
@dataclass(frozen=True)
class Parting:
    """Where one gold passage's two runs part: the first stage both ran (in A's pipeline order, the final@k cut
    last) that one run's passage reached and the other's did not, with the iteration that shows it on each side (the
    first that reached it; None for a once-per-run stage) and the mark in words ("rank 3 (it 2)", "✗ not in the base
    list")."""

    title: str
    stage: str
    iteration_a: int | None
    iteration_b: int | None
    a: str
    b: str


def partings(da: Diagnosis | None, db: Diagnosis | None, k: int) -> list[Parting]:
    """Every gold passage of a question whose runs part somewhere (none for a passage both runs treat alike, and none
    without both diagnoses)."""
    if da is None or db is None:
        return []
    pa, pb = _keyed(da), _keyed(db)
    out = []
    for key in pa:
        if key not in pb:
            continue
        shared = [s for s in da.stages if s in db.stages and s != FOUND] + [FOUND]
        for stage in shared:
            seen = [_reached(p, stage, k) for p in (pa[key], pb[key])]
            if None in seen or seen[0] == seen[1]:
                continue
            ia, wa = _shown(pa[key], stage, k)
            ib, wb = _shown(pb[key], stage, k)
            out.append(Parting(key[0], stage_label(stage, k), ia, ib, wa, wb))
            break
    return out


def _reached(p: GoldPassage, stage: str, k: int) -> bool | None:
    if stage == FOUND:
        mark = p.best(FOUND)
        return mark is not None and mark.rank is not None and mark.rank <= k
    marks = [m for m in p.marks if m.stage == stage]
    return any(m.reached for m in marks) if marks else None


def _shown(p: GoldPassage, stage: str, k: int) -> tuple[int | None, str]:
    """The iteration to show at a stage (the first that reached it, else the first that ran it) and its words."""
    if stage == FOUND:
        mark = p.best(FOUND)
        rank = mark.rank if mark is not None else None
        return None, "not in the final ranking" if rank is None else f"rank {rank}" + ("" if rank <= k else f" > {k}")
    marks = sorted((m for m in p.marks if m.stage == stage), key=lambda m: m.iteration)
    mark = next((m for m in marks if m.reached), marks[0])
    return (None if mark.iteration == RUN_LEVEL else mark.iteration), describe(mark)


# -- the flows ---------------------------------------------------------------------------------------------------------
def _bands(pairs: Sequence[tuple[str, str, str]], order: Sequence[str]) -> list[Band]:
    """(source, target, question id) → bands, in `order` of sources then targets, each question once per band."""
    counts: Counter[tuple[str, str]] = Counter((s, t) for s, t, _ in pairs)
    held: dict[tuple[str, str], list[str]] = {}
    for s, t, qid in pairs:
        ids = held.setdefault((s, t), [])
        if qid not in ids:
            ids.append(qid)
    rank = {name: n for n, name in enumerate(order)}
    keys = sorted(counts, key=lambda st: (rank.get(st[0], len(rank)), st[0], rank.get(st[1], len(rank)), st[1]))
    return [Band(s, t, counts[(s, t)], held[(s, t)]) for s, t in keys]


def end_order(questions: Sequence[QuestionPair]) -> list[str]:
    """The endings in the order a flow lists them: found first, then the stages in pipeline order (as the questions'
    diagnoses met them), final@k, cut short, unknown."""
    seen: list[str] = []
    for q in questions:
        for p in q.passages:
            for e in (p.end_a, p.end_b):
                if e not in seen:
                    seen.append(e)
    last = [e for e in seen if e.startswith("final")]
    middle = [e for e in seen if e not in (FOUND_END, OPEN_END, UNKNOWN_END) and e not in last]
    return [e for e in (FOUND_END, *middle, *sorted(last), OPEN_END, UNKNOWN_END) if e in seen]


def passage_flow(questions: Sequence[QuestionPair]) -> list[Band]:
    """Gold passages by where they ended in A and where in B (a band per pair of endings)."""
    return _bands([(p.end_a, p.end_b, q.id) for q in questions for p in q.passages], end_order(questions))


def category_flow(questions: Sequence[QuestionPair]) -> list[Band]:
    """Questions by their proposed category in A and in B."""
    return _bands([(q.category_a or NO_CATEGORY, q.category_b or NO_CATEGORY, q.id) for q in questions],
                  [*CATEGORY_LABELS, NO_CATEGORY])


# -- the paired numbers ------------------------------------------------------------------------------------------------
def measures(questions: Sequence[QuestionPair], k: int) -> list[PairedMeasure]:
    """R@k over every question; EM and F1 over the questions both runs answered (none when one never answers)."""
    out = [paired_measure(f"R@{k}", [q.recall_a for q in questions], [q.recall_b for q in questions])]
    answered = [q for q in questions if q.em_a is not None and q.em_b is not None]
    if answered:
        out.append(paired_measure("EM", [float(q.em_a or 0) for q in answered], [float(q.em_b or 0) for q in answered]))
        out.append(paired_measure("F1", [float(q.f1_a or 0) for q in answered], [float(q.f1_b or 0) for q in answered]))
    return out


# -- kept traces -------------------------------------------------------------------------------------------------------
def diagnoses_from_traces(report: Mapping[str, Any], report_path: Path | None
                          ) -> tuple[dict[str, Diagnosis], list[str]]:
    """Diagnoses for the questions whose report entry carries none but whose trace was kept (a report saved before
    reports carried the diagnosis), at the cut-off `gear eval` diagnoses at (gear.eval.protocol.diagnosis_k: the
    smallest, or the largest — the traced run's — in a per-cut-off report); and a line for each trace not used: one
    its report points at outside the report's folder and the data folder (not opened, gear.eval.report_file), or one
    that cannot be read."""
    from gear.diagnosis import DEFAULT_K, diagnose
    from gear.eval.protocol import diagnosis_k, per_cutoff, report_ks
    from gear.saved import SavedFileError
    from gear.trace import Trace

    ks = report_ks(report)
    k = diagnosis_k(ks, per_cutoff(report)) if ks else DEFAULT_K
    out, unused = {}, []
    for entry in report.get("per_question") or []:
        if entry.get("diagnosis"):
            continue
        try:
            path = trace_path(report_path, entry)
            if path is None:
                continue
            out[str(entry["id"])] = diagnose(Trace.load(path), k)
        except SavedFileError as exc:
            unused.append(str(exc))
    return out, unused


def _list(items: Sequence[Any]) -> str:
    return ", ".join(map(str, items)) or "none"


def _sample(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:2])
    return f"{shown}{', …' if len(ids) > 2 else ''} ({len(ids)})" if ids else "none"

