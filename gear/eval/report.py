"""Evaluation as the paper and HippoRAG define it: Recall@k per question (fraction of its gold passages in the top
k), averaged over questions, in percent; EM/F1 with SQuAD normalisation, best over aliases; latency per stage.

By default each question is one run at the largest cut-off and every figure reads it; the paper's Table 1 protocol
(a single-step method run once per cut-off with k passages, App. B) is `protocol="paper"` (gear.eval.protocol).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from gear import methods
from gear.config import Settings, public_settings
from gear.data.questions import Question
from gear.diagnosis import Diagnosis, Probe, diagnose, summarise
from gear.eval.protocol import ONE_RUN, check, diagnosis_k, runs_per_cutoff, traced_k
from gear.events import Answered, LLMCalled, PassagesAdded, PassagesFused, QueryRewritten, Reasoned
from gear.files import atomic_write_json
from gear.measures import recall_at
from gear.store.base import SearchBackend
from gear.trace import Trace
from gear.trace.cost import seconds_words


# -- what evaluate() needs of the engine it drives (gear.agent's Engine and Run; eval sits below the agent) -----------
class EvaluatedRun(Protocol):
    trace: Trace
    timings_ms: dict[str, float]

    @property
    def ids(self) -> list[int]: ...


class EvaluatedEngine(Protocol):
    backend: SearchBackend  # the gold passages' texts, for the diagnosis

    def gold_ids(self, gold: Sequence[tuple[str, str | None]]) -> list[int]: ...

    def retrieve(self, question: str, *, k: int = ..., settings: Settings | None = ..., gold: Collection[int] = ...,
                 question_id: str = ..., answers: Sequence[str] = ...) -> EvaluatedRun: ...


# -- reports ----------------------------------------------------------------------------------------------------------
@dataclass
class QuestionResult:
    id: str
    question: str
    hop: str
    n_gold: int
    recall: dict[str, float]
    answer: str | None = None
    em: float | None = None
    f1: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    iterations: int = 1
    recall_per_iteration: list[dict[str, float]] = field(default_factory=list)
    trace_file: str | None = None
    seconds: float = 0.0  # wall time of the question's run(s)
    llm_calls: int = 0
    memo_calls: int = 0  # calls answered by the memo of identical calls (no model work)
    # what the run's LLM answers cost the model when it wrote them (gear.trace.cost: the tokens above, these
    # seconds), and how many of its requests were answered by recordings or an earlier run's memo, not asked now
    model_seconds: float = 0.0
    recorded_calls: int = 0
    rejected_verdicts: int = 0  # "answerable" verdicts not grounded in the gist memory (small profile)
    repeated_queries: int = 0  # rewrites that repeat an earlier query
    diagnosis: dict[str, Any] | None = None  # gear.diagnosis: where each gold passage was lost, and why


@dataclass
class EvalReport:
    method: str
    retriever: str
    ks: list[int]
    settings: dict[str, Any]
    questions: list[QuestionResult]
    latency: dict[str, list[float]]
    skipped: list[str] = field(default_factory=list)
    # question id → the titles of its gold passages the index lacks (the question is kept; its recall counts only the
    # gold passages found, so a corpus that lost one inflates it — said, not silent)
    gold_missing: dict[str, list[str]] = field(default_factory=dict)
    protocol: str = ONE_RUN  # which run each figure comes from (gear.eval.protocol)
    # the index it ran on (index_info; the app adds "index", the index's name): what gear compare says of two runs
    index_info: dict[str, Any] = field(default_factory=dict)

    def recall(self, results: Sequence[QuestionResult] | None = None) -> dict[str, float]:
        rows = self.questions if results is None else results
        return {str(k): 100.0 * float(np.mean([q.recall[str(k)] for q in rows])) if rows else 0.0 for k in self.ks}

    def by_hop(self) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[QuestionResult]] = defaultdict(list)
        for q in self.questions:
            groups[q.hop].append(q)
        return {hop: {"n": len(rows), "recall": self.recall(rows)} for hop, rows in sorted(groups.items())}

    def latency_ms(self) -> dict[str, dict[str, float]]:
        return {stage: {"mean": float(np.mean(v)), "p50": float(np.percentile(v, 50)),
                        "p95": float(np.percentile(v, 95))} for stage, v in self.latency.items() if v}

    def recall_per_iteration(self) -> dict[str, dict[str, float]]:
        """R@k of the cumulative list after iteration n; questions that stopped earlier carry their last value."""
        depth = max((len(q.recall_per_iteration) for q in self.questions), default=0)
        out: dict[str, dict[str, float]] = {}
        for n in range(depth):
            vals = [q.recall_per_iteration[min(n, len(q.recall_per_iteration) - 1)]
                    for q in self.questions if q.recall_per_iteration]
            out[str(n + 1)] = {str(k): 100.0 * float(np.mean([v[str(k)] for v in vals])) for k in self.ks}
        return out

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "method": self.method, "retriever": self.retriever, "n_questions": len(self.questions),
            "recall": self.recall(), "by_hop": self.by_hop(), "latency_ms": self.latency_ms(),
            "settings": self.settings, "skipped": self.skipped, "gold_missing": self.gold_missing,
            "protocol": self.protocol,
        }
        if self.index_info:
            data["index_info"] = self.index_info
        answered = [q for q in self.questions if q.em is not None]
        if answered:
            data["em"] = 100.0 * float(np.mean([q.em for q in answered]))
            data["f1"] = 100.0 * float(np.mean([q.f1 for q in answered]))
        if any(q.prompt_tokens for q in self.questions):
            data["tokens_per_question"] = float(np.mean([q.prompt_tokens + q.completion_tokens
                                                          for q in self.questions]))
            data["tokens_per_question_detail"] = {
                "prompt": float(np.mean([q.prompt_tokens for q in self.questions])),
                "completion": float(np.mean([q.completion_tokens for q in self.questions])),
            }
        if any(q.llm_calls for q in self.questions):
            rows = self.questions
            data["iterations_mean"] = float(np.mean([q.iterations for q in rows]))
            data["seconds_per_question"] = {"mean": float(np.mean([q.seconds for q in rows])),
                                            "p50": float(np.percentile([q.seconds for q in rows], 50))}
            data["model_seconds_per_question"] = float(np.mean([q.model_seconds for q in rows]))
            data["recorded_questions"] = sum(1 for q in rows if q.recorded_calls)
            data["llm_calls_per_question"] = float(np.mean([q.llm_calls for q in rows]))
            data["memo_calls"] = int(sum(q.memo_calls for q in rows))
            data["verdicts_rejected"] = int(sum(q.rejected_verdicts for q in rows))
            data["queries_repeated"] = int(sum(q.repeated_queries for q in rows))
        per_iteration = self.recall_per_iteration()
        if per_iteration:
            data["recall_per_iteration"] = per_iteration
        # found within each cut-off, as R@k counts them: of one run; a per-cut-off report's diagnosis reads only the
        # largest cut-off's run, so only that one is the same run as its R@k
        same_run = [traced_k(self.ks)] if runs_per_cutoff(self.method, self.protocol) and self.ks else self.ks
        data["diagnosis"] = summarise((Diagnosis.from_dict(q.diagnosis) for q in self.questions if q.diagnosis),
                                      same_run).to_dict()
        data["per_question"] = [asdict(q) for q in self.questions]
        return data

    def save(self, path: str | Path) -> None:
        atomic_write_json(Path(path), self.to_dict(), indent=1)


def index_info(manifest: Any, directory: Path | str | None) -> dict[str, Any]:
    """What a report records of the index it ran on: enough to tell two indexes of the same
    passages apart — the passages' and the triples' checksums, from the manifest's file list — and where the triples
    came from."""
    if manifest is None:
        return {}
    files = getattr(manifest, "files", {}) or {}

    def digest(prefix: str, vectors: bool = True) -> str | None:
        sums = [f"{name}:{meta.get('sha256')}" for name, meta in sorted(files.items())
                if name.startswith(prefix) and (vectors or "vectors" not in name)]
        return hashlib.sha256("\n".join(sums).encode()).hexdigest()[:16] if sums else None

    info: dict[str, Any] = {"name": Path(directory).name if directory is not None else None}
    for key, attribute in (("backend", "backend"), ("embedder", "embedder"), ("passages", "n_passages"),
                           ("triples", "n_triples")):
        info[key] = getattr(manifest, attribute, None)
    info["source"] = dict(getattr(manifest, "source", {}) or {})
    info["passages_sha256"], info["triples_sha256"] = digest("passage_t"), digest("triple_")
    # the triples without their vectors: an index built again from the same file embeds them again, and the vectors
    # need not be bit for bit the same (triples_sha256, kept as older reports have it, covers them)
    info["triple_texts_sha256"] = digest("triple_", vectors=False)
    return info


def _per_iteration_recall(trace: Trace, gold: Sequence[int], ks: Sequence[int], rrf_k: int = 60
                          ) -> list[dict[str, float]]:
    """Cumulative list after each iteration: RRF of that iteration's and earlier fused lists, as the agent ranks;
    for IRCoT the collection after each retrieval, in the run's order."""
    from gear.store.fusion import rrf

    added = trace.of(PassagesAdded)
    if added:
        return [{str(k): recall_at(event.collected, gold, k) for k in ks} for event in added]
    lists: list[list[int]] = []
    out = []
    for n in trace.iterations():
        fused = trace.first(PassagesFused, n)
        if fused is None:
            continue
        lists.append([p.id for p in fused.passages])
        ranked = [s.id for s in rrf(lists, rrf_k)]  # the run's own k, as the agent fused them
        out.append({str(k): recall_at(ranked, gold, k) for k in ks})
    return out


def gold_note(report: dict[str, Any], name: Callable[[str], str] = str) -> str:
    """What a report's recall leaves out, in one sentence for `gear eval` and the Evaluate page alike: questions none
    of whose gold passages the index holds (skipped), and questions scored on part of their gold (gold_missing); ""
    if none. `name` writes a title or id where it is shown (escaped for Markdown on the page)."""
    skipped, lacking = report.get("skipped") or [], report.get("gold_missing") or {}
    parts = []
    if skipped:
        one = len(skipped) == 1
        parts.append(f"{len(skipped)} question{'' if one else 's'} skipped: none of {'its' if one else 'their'} "
                     "gold passages is in this index")
    if lacking:
        qid, titles = next(iter(lacking.items()))
        one, passages = len(lacking) == 1, sum(len(t) for t in lacking.values())
        parts.append(f"{len(lacking)} question{' was' if one else 's were'} scored on part of "
                     f"{'its' if one else 'their'} gold: the index lacks {passages} gold "
                     f"passage{'' if passages == 1 else 's'} (e.g. {name(titles[0])} of {name(qid)}), and "
                     "recall counts only those found")
    return "; ".join(parts) + "." if parts else ""


def cost_cells(report: dict[str, Any]) -> tuple[str, str] | None:
    """What a report's LLM runs cost a question, in the words `gear eval` and the Evaluate page both use: the tokens,
    and the model's seconds its answers took when they were written — marked "recorded" when they were replayed
    (gear.trace.cost), beside the run's own seconds: ("6,575", "199 s recorded · replay 0.05 s"). None for a report
    whose runs asked no LLM."""
    if "seconds_per_question" not in report:
        return None
    tokens = report.get("tokens_per_question") or 0
    tokens = tokens.get("total", 0) if isinstance(tokens, dict) else tokens  # a dict in reports before a5860c8
    wall = float(report["seconds_per_question"].get("mean", 0.0))
    model = report.get("model_seconds_per_question")
    if model is None:  # a report made before reports kept the model's seconds: its own time alone
        return f"{tokens:,.0f}", seconds_words(wall)
    recorded, n = int(report.get("recorded_questions") or 0), int(report.get("n_questions") or 0)
    paid = seconds_words(float(model))
    if recorded and recorded >= n:
        return f"{tokens:,.0f}", f"{paid} recorded · replay {seconds_words(wall)}"
    if recorded:
        return f"{tokens:,.0f}", f"{paid} ({recorded}/{n} recorded) · run {seconds_words(wall)}"
    return f"{tokens:,.0f}", paid


def cost_words(report: dict[str, Any]) -> str:
    """cost_cells as one line: "6,575 tokens, 199 s recorded · replay 0.05 s" ("" without LLM runs)."""
    cells = cost_cells(report)
    return "" if cells is None else f"{cells[0]} tokens, {cells[1]}"


QuestionProgress = Callable[[int, int, str], None]  # (done, total, question id)


def evaluate(engine: EvaluatedEngine, questions: Sequence[Question], settings: Settings,
             ks: Sequence[int] = (5, 10, 15), progress: QuestionProgress | None = None,
             trace_dir: Path | None = None, protocol: str = ONE_RUN) -> EvalReport:
    """Run every question once at the largest cut-off, every R@k, the answer and the diagnosis from that one ranked
    list; with protocol "paper", a single-step method once per cut-off with base k = the cut-off (gear.eval.protocol:
    which run each figure then reads)."""
    ks = sorted(set(ks))
    report = EvalReport(settings.method, settings.retriever, list(ks),
                        public_settings(settings), [], defaultdict(list), protocol=check(protocol))
    report.index_info = index_info(getattr(engine, "manifest", None), getattr(engine, "directory", None))
    multi_step = methods.get(settings.method).multi_step
    separate = runs_per_cutoff(settings.method, protocol)  # one run per cut-off
    total = len(questions)
    for n, q in enumerate(questions):
        found = {g: engine.gold_ids([g]) for g in dict.fromkeys(q.gold)}  # each gold passage looked up once
        gold = list(dict.fromkeys(i for ids in found.values() for i in ids))
        if not gold:
            report.skipped.append(q.id)
            continue
        if lacking := [title for (title, _), ids in found.items() if not ids]:
            report.gold_missing[q.id] = lacking
        recall: dict[str, float] = {}
        runs: list[EvaluatedRun] = []
        question_started = time.perf_counter()
        for k in (ks if separate else [traced_k(ks)]):
            started = time.perf_counter()
            run = engine.retrieve(q.question, k=(settings.agent_k if multi_step else k), settings=settings,
                                  gold=gold, question_id=q.id, answers=q.answers)
            for stage, ms in run.timings_ms.items():
                report.latency[f"{stage} (k={k})" if separate else stage].append(ms)
            report.latency.setdefault("wall", []).append((time.perf_counter() - started) * 1000)
            runs.append(run)
            if separate:
                recall[str(k)] = recall_at(run.ids, gold, k)
            else:
                recall = {str(kk): recall_at(run.ids, gold, kk) for kk in ks}
        last = runs[-1]  # the largest cut-off's run: the answer, the diagnosis and the saved trace read it
        # the question's cost: each request once over all its runs (the paper's protocol runs a single-step method
        # once per cut-off, and the runs often share a QA prompt the model answered once)
        cost = Trace([c for r in runs for c in r.trace.of(LLMCalled)]).cost()
        answered = last.trace.first(Answered)
        result = QuestionResult(q.id, q.question, q.hop_type, len(gold), recall, prompt_tokens=cost.prompt_tokens,
                                completion_tokens=cost.completion_tokens,
                                iterations=max(1, len(last.trace.iterations())),
                                model_seconds=round(cost.model_seconds, 3), recorded_calls=cost.recorded)
        if answered is not None:
            result.answer, result.em, result.f1 = answered.answer, answered.em, answered.f1
        calls = [c for r in runs for c in r.trace.of(LLMCalled)]
        result.seconds = time.perf_counter() - question_started
        result.llm_calls, result.memo_calls = len(calls), sum(c.source == "memo" for c in calls)
        result.rejected_verdicts = sum(1 for r in runs for v in r.trace.of(Reasoned) if v.rejected)
        result.repeated_queries = sum(1 for r in runs for w in r.trace.of(QueryRewritten) if w.repeated)
        if multi_step:
            result.recall_per_iteration = _per_iteration_recall(last.trace, gold, ks, settings.rrf_k)
        result.diagnosis = diagnose(last.trace, diagnosis_k(ks, separate),
                                    {p.id: (p.title, p.text) for p in engine.backend.passages(gold)},
                                    missing_gold=lacking, hop=q.hop_type,
                                    probe=engine if isinstance(engine, Probe) else None).to_dict()
        if trace_dir is not None:
            path = trace_dir / f"{_safe(q.id)}.json"
            last.trace.save(path)
            result.trace_file = str(path)
        report.questions.append(result)
        if progress:
            progress(n + 1, total, q.id)
    return report


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120]
