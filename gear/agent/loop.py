"""SyncGE (paper §3.1) and the multi-step GeAR agent (§4): read, tripleLink, graph expansion, gist memory,
reasoning for termination, query re-writing, passageLink and the final RRF — every step recorded in the Trace.

Choices the paper leaves open, made explicit here (and recorded in each run's settings):
- the sync reader of iteration n reads the base passages C′q(n) with the original question q and the memory G(n-1)
  (docs/architecture.md, "one question"); beam search and base retrieval use the rewritten query q(n);
- the gist reader reads the top `gist_read_k` passages of the fused list Cq(n) (§4.1) or, with
  gist_read="expanded", only the expanded passages C̃q (the authors' published pseudocode);
- the gist memory is the concatenation of every iteration's proximal triples, exact repeats dropped;
- passageLink(t) = RRF(h^k(t, C), passages of h^k(t, T)) with k = passage_link_k (unstated in the paper; 5).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gear.agent.run import Run, Timer
from gear.config import Settings
from gear.eval.measures import exact_match, f1_score, recall_at_cutoffs
from gear.llm import LLM
from gear.parsing import parse_answer, parse_next_question, parse_reasoning, parse_triples
from gear.prompts import format_docs, qa_prompt, reader_prompt, reasoning_prompt, rewriting_prompt
from gear.retrieve.expand import Expansion, expand
from gear.store.base import triple_text
from gear.store.fusion import rrf
from gear.trace import (
    Answered,
    BaseRetrieved,
    FinalRanking,
    GistUpdated,
    IterationStarted,
    LLMCalled,
    PassageLinkView,
    PassagesLinked,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    RunFinished,
    Trace,
    TripleLinkView,
    TriplesLinked,
    Warned,
)
from gear.trace.views import expansion_events, passage_views, triple_views
from gear.types import SPO, Scored

if TYPE_CHECKING:
    from gear.agent.engine import Engine

READ_TOKENS, REASON_TOKENS, REWRITE_TOKENS, QA_TOKENS = 384, 160, 96, 48


class Step:
    """Context shared by the steps of one run: engine, settings, LLM, trace and gold (for marking only)."""

    def __init__(self, engine: Engine, settings: Settings, trace: Trace, gold: Collection[int]) -> None:
        self.engine, self.s, self.trace, self.gold = engine, settings, trace, set(gold)
        self.backend = engine.backend
        self.llm: LLM = engine.llm(settings)
        self.timer = Timer(trace)

    def ask(self, step: str, iteration: int, prompt: str, max_tokens: int) -> str:
        result = self.llm.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens)
        self.trace.emit(LLMCalled(iteration, step, result.model, result.prompt_tokens, result.completion_tokens,
                                  result.seconds, result.cached))
        return result.text

    def warn(self, iteration: int, messages: Sequence[str], where: str) -> None:
        for message in messages:
            self.trace.emit(Warned(iteration, f"{where}: {message}"))

    # -- modules ------------------------------------------------------------------------------------------------------
    def base(self, query: str, k: int, iteration: int) -> list[Scored]:
        base = self.engine.base_retrieve(query, k, self.s)
        self.trace.emit(BaseRetrieved(iteration, query, k, passage_views(self.backend, base, self.gold)))
        return base

    def read(self, passages: Sequence[int], question: str, memory: Sequence[SPO], iteration: int, role: str,
             source: str) -> list[SPO]:
        docs = format_docs((p.title, p.text) for p in self.backend.passages(list(passages)))
        raw = self.ask(f"read ({role})", iteration, reader_prompt(docs, question, list(memory) or None), READ_TOKENS)
        parsed = parse_triples(raw)
        self.warn(iteration, parsed.warnings, f"reader ({role})")
        if not parsed.triples:
            self.trace.emit(Warned(iteration, f"reader ({role}) produced no triples"))
        self.trace.emit(ProximalTriples(iteration, role, source, list(passages), [list(t) for t in parsed.triples],
                                        raw))
        return parsed.triples

    def triple_link(self, proximal: Sequence[SPO], iteration: int) -> list[int]:
        """tripleLink(t′) = h¹_base(t′, T): the single best index triple for each proximal triple."""
        if not proximal:
            self.trace.emit(TriplesLinked(iteration, []))
            return []
        texts = [triple_text(*t) for t in proximal]
        vectors = self.engine.encoder.encode_cached(texts)
        hits = self.backend.search_triples(texts, 1, self.s.retriever, vectors)
        linked = [h[0].id if h else None for h in hits]
        found = [t for t in linked if t is not None]
        views = {v.id: v for v in triple_views(self.backend, found, self.gold)}
        stored = dict(zip(found, self.backend.triple_vectors(found), strict=True)) if found else {}
        self.trace.emit(TriplesLinked(iteration, [
            TripleLinkView(list(p), views[t], float(stored[t] @ v)) if t is not None else
            TripleLinkView(list(p), None, 0.0) for p, v, t in zip(proximal, vectors, linked, strict=True)]))
        return list(dict.fromkeys(found))

    def expand(self, query: str, base: Sequence[Scored], initial: Sequence[int], iteration: int) -> Expansion:
        params = self.engine.beam_params(self.s)
        result = expand(self.engine.encode_query(query), [p.id for p in base], initial, self.backend,
                        self.engine.scorer(self.s), params, self.s.rrf_k)
        for event in expansion_events(iteration, "sync", result, self.backend, params, self.s.score_mode, self.gold):
            self.trace.emit(event)
        return result

    def sync(self, query: str, question: str, k: int, memory: Sequence[SPO], iteration: int) -> Expansion:
        """One SyncGE pass: base → read → tripleLink → beam search → flatten → RRF with the base list."""
        start = time.perf_counter()
        base = self.base(query, k, iteration)
        start = self.timer.stage("base retrieval", iteration, start)
        label = "read(C′q, q)" if not memory else "read(C′q, q, G(n−1))"
        proximal = self.read([p.id for p in base], question, memory, iteration, "sync", label)
        start = self.timer.stage("read", iteration, start)
        initial = self.triple_link(proximal, iteration)
        start = self.timer.stage("tripleLink", iteration, start)
        result = self.expand(query, base, initial, iteration)
        self.timer.stage("graph expansion", iteration, start)
        return result

    def passage_link(self, triple: SPO) -> list[int]:
        """passageLink(t) = RRF(h^k(t, C), passages of h^k(t, T))  (paper App. B)."""
        text = triple_text(*triple)
        vec = self.engine.encoder.encode_cached([text])
        k = self.s.passage_link_k
        passages = [p.id for p in self.backend.search_passages([text], k, self.s.retriever, vec)[0]]
        triples = [t.id for t in self.backend.search_triples([text], k, self.s.retriever, vec)[0]]
        from_triples = list(dict.fromkeys(int(p) for p in self.backend.passages_of(triples))) if triples else []
        return [s.id for s in rrf([passages, from_triples], k=self.s.rrf_k)]

    def answer(self, question: str, ranked: Sequence[Scored], answers: Sequence[str], iteration: int) -> str:
        top = [p.id for p in ranked[: self.s.qa_top_k]]
        passages = [(p.title, p.text) for p in self.backend.passages(top)]
        raw = self.ask("qa", iteration, qa_prompt(passages, question), QA_TOKENS)
        answer = parse_answer(raw)
        em = exact_match(answer, answers) if answers else None
        f1 = f1_score(answer, answers) if answers else None
        self.trace.emit(Answered(iteration, answer, raw, top, em, f1))
        return answer


def _finish(step: Step, ranked: list[Scored], iterations: int, started: float, question: str,
            answers: Sequence[str]) -> Run:
    step.trace.emit(FinalRanking(iterations, passage_views(step.backend, ranked, step.gold)))
    answer = None
    if step.s.answer:
        start = time.perf_counter()
        answer = step.answer(question, ranked, answers, iterations)
        step.timer.stage("qa", iterations, start)
    total = (time.perf_counter() - started) * 1000
    step.trace.emit(RunFinished(iterations, iterations, total, recall_at_cutoffs([r.id for r in ranked], step.gold)))
    return Run(ranked, step.trace, {**step.timer.totals, "total": total}, answer)


def run_sync(engine: Engine, question: str, *, k: int, settings: Settings, gold: Collection[int], trace: Trace,
             answers: Sequence[str] = ()) -> Run:
    """SyncGE: single-step retrieval with synchronised graph expansion."""
    started = time.perf_counter()
    step = Step(engine, settings, trace, gold)
    trace.emit(IterationStarted(1, question))
    fused = step.sync(question, question, k, [], 1).fused
    return _finish(step, fused, 1, started, question, answers)


def run_agent(engine: Engine, question: str, *, k: int, settings: Settings, gold: Collection[int], trace: Trace,
              answers: Sequence[str] = ()) -> Run:
    """The GeAR loop (paper §4) for at most `max_iterations` iterations; `k` is ignored in favour of agent_k."""
    started = time.perf_counter()
    s = settings
    step = Step(engine, s, trace, gold)
    memory: list[SPO] = []
    iteration_lists: list[list[int]] = []
    query = question
    n = 0
    for n in range(1, s.max_iterations + 1):
        trace.emit(IterationStarted(n, query))
        result = step.sync(query, question, s.agent_k, memory, n)
        fused = result.fused
        iteration_lists.append([p.id for p in fused])
        start = time.perf_counter()
        if s.gist_read == "expanded":
            to_read, label = result.expanded[: s.gist_read_k], "read(C̃q, q, G(n−1)) — expanded passages"
        else:
            to_read, label = [p.id for p in fused[: s.gist_read_k]], f"read(Cq(n)[:{s.gist_read_k}], q, G(n−1))"
        added = step.read(to_read, question, memory, n, "gist", label)
        memory.extend(t for t in dict.fromkeys(added) if t not in memory)
        trace.emit(GistUpdated(n, [list(t) for t in added], [list(t) for t in memory]))
        start = step.timer.stage("gist read", n, start)
        raw = step.ask("reason", n, reasoning_prompt(question, memory), REASON_TOKENS)
        verdict = parse_reasoning(raw)
        step.warn(n, verdict.warnings, "reasoner")
        trace.emit(Reasoned(n, verdict.answerable, verdict.answer or "", verdict.reason, raw))
        start = step.timer.stage("reason", n, start)
        if verdict.answerable or n == s.max_iterations:
            break
        raw = step.ask("rewrite", n, rewriting_prompt(question, memory, verdict.reason), REWRITE_TOKENS)
        next_query, warnings = parse_next_question(raw)
        step.warn(n, warnings, "rewriter")
        if not next_query:
            next_query = question
            trace.emit(Warned(n, "rewriter gave no question; the next iteration reuses the original question"))
        trace.emit(QueryRewritten(n, next_query, raw))
        query = next_query
        step.timer.stage("rewrite", n, start)

    start = time.perf_counter()
    links = [(t, step.passage_link(t)) for t in memory]
    trace.emit(PassagesLinked(n, [PassageLinkView(list(t), passage_views(step.backend, ids, step.gold))
                                  for t, ids in links]))
    ranked = rrf([ids for _, ids in links] + iteration_lists, k=s.rrf_k)
    step.timer.stage("passageLink + final RRF", n, start)
    return _finish(step, ranked, n, started, question, answers)
