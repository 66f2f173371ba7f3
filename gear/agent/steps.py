"""The steps of SyncGE and the GeAR agent over one engine: base retrieval, read, tripleLink, graph expansion,
reasoning, rewriting, passageLink and the answer. Each step records what it did as trace events; the loop that
orders them is gear.agent.loop. What each step asks the LLM comes from gear.agent.requests (per prompt profile)."""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gear.agent import requests
from gear.agent.checks import NOT_GROUNDED, grounding_problem, is_repeat
from gear.agent.requests import Request
from gear.agent.run import Timer
from gear.config import Settings
from gear.eval.measures import exact_match, f1_score
from gear.llm import LLM
from gear.llm.queue import current_listener, listening
from gear.parsing import Verdict, parse_answer, parse_next_question, parse_reasoning, parse_triples
from gear.prompts import format_docs
from gear.prompts.order import read_order
from gear.retrieve.expand import Expansion, expand
from gear.store.base import triple_text
from gear.store.fusion import rrf
from gear.trace import (
    Answered,
    BaseRetrieved,
    LLMCalled,
    LLMText,
    LLMWaiting,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    Trace,
    TripleLinkView,
    TriplesLinked,
    Warned,
)
from gear.trace.views import expansion_events, passage_views, triple_views
from gear.types import SPO, Scored

if TYPE_CHECKING:
    from gear.agent.engine import Engine


class Step:
    """Context shared by the steps of one run: engine, settings, LLM, trace and gold (for marking only)."""

    def __init__(self, engine: Engine, settings: Settings, trace: Trace, gold: Collection[int]) -> None:
        self.engine, self.s, self.trace, self.gold = engine, settings, trace, set(gold)
        self.backend = engine.backend
        self.llm: LLM = engine.llm(settings)
        self.profile = settings.prompt_profile
        self.timer = Timer(trace)
        self.last_read: list[int] = []  # the passages of the run's previous read, as shown (read_order "cache")

    def ask(self, request: Request, iteration: int) -> str:
        """One LLM call: a wait for the model's turn and the text as it is written go to the trace's listeners
        (nothing here catches what a listener raises: that is how the app cancels a run), its cost is recorded."""
        written: list[str] = []

        def stream(piece: str) -> None:
            written.append(piece)
            self.trace.emit_transient(LLMText(iteration, request.step, "".join(written)))

        outer = current_listener()  # e.g. the Evaluate page, which sees no trace of the runs it makes

        def wait(ahead: int) -> None:
            self.trace.emit_transient(LLMWaiting(iteration, request.step, ahead))
            if outer is not None:
                outer(ahead)

        with listening(wait):
            result = self.llm.complete([{"role": "user", "content": request.prompt}], json_schema=request.schema,
                                       max_tokens=request.max_tokens, on_text=stream)
        self.trace.emit(LLMCalled(iteration, request.step, result.model, result.prompt_tokens,
                                  result.completion_tokens, result.seconds, result.cached, result.source))
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
        passages = self.last_read = read_order(passages, self.last_read, self.s.read_order)
        docs = format_docs((p.title, p.text) for p in self.backend.passages(list(passages)))
        raw = self.ask(requests.read(self.profile, role, docs, question, list(memory) or None), iteration)
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
        raw = self.ask(requests.answer(passages, question), iteration)
        answer = parse_answer(raw)
        em = exact_match(answer, answers) if answers else None
        f1 = f1_score(answer, answers) if answers else None
        self.trace.emit(Answered(iteration, answer, raw, top, em, f1))
        return answer

    def reason(self, question: str, memory: Sequence[SPO], iteration: int) -> Verdict:
        """Reasoning for termination; in the small profile an "answerable" that the cited memory facts do not hold
        is rejected (the paper's reasoner hallucination, caught live) and the loop goes on."""
        raw = self.ask(requests.reason(self.profile, question, memory), iteration)
        verdict = parse_reasoning(raw)
        self.warn(iteration, verdict.warnings, "reasoner")
        problem = grounding_problem(verdict, memory) if self.profile == "small" else ""
        if problem:
            self.trace.emit(Reasoned(iteration, False, verdict.answer or "", verdict.reason, raw, verdict.cited,
                                     f"{NOT_GROUNDED}: {problem}"))
            # the rewriter is told what the paper's reasoner says when facts are missing, not the agent's bookkeeping
            return Verdict(False, None, "The known facts do not contain the answer to the question.",
                           verdict.warnings, verdict.cited)
        self.trace.emit(Reasoned(iteration, verdict.answerable, verdict.answer or "", verdict.reason, raw,
                                 verdict.cited))
        return verdict

    def rewrite(self, question: str, memory: Sequence[SPO], why: str, earlier: Sequence[str], iteration: int) -> str:
        """q(n+1); a query already asked is asked for once more with the earlier ones shown (small profile), and
        if it still repeats the trace says so."""
        raw = self.ask(requests.rewrite(self.profile, question, memory, why), iteration)
        query, warnings = parse_next_question(raw)
        retried = False
        if query and is_repeat(query, earlier) and self.profile == "small":
            retried = True
            raw = self.ask(requests.rewrite(self.profile, question, memory, why, earlier), iteration)
            query, warnings = parse_next_question(raw)
        self.warn(iteration, warnings, "rewriter")
        if not query:
            query = question
            self.trace.emit(Warned(iteration, "rewriter gave no question; the next iteration reuses the original "
                                              "question"))
        repeated = is_repeat(query, earlier)
        if repeated:
            self.trace.emit(Warned(iteration, f"rewriter repeated an earlier query{' after a retry' if retried else ''}"
                                              f": {query}"))
        self.trace.emit(QueryRewritten(iteration, query, raw, retried, repeated))
        return query
