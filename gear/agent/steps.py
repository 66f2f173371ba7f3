"""The modules of SyncGE and the GeAR agent (paper §3-4, App. B), each a function over one run's context: base
retrieval, read, tripleLink, graph expansion, SyncGE's pass, passageLink, the answer, reasoning and rewriting. Each
records what it did as trace events; the runners under gear.agent.methods order them. What a step asks the LLM comes
from gear.agent.asks (per prompt profile)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from gear.agent import asks
from gear.agent.checks import NOT_GROUNDED, grounding_problem, is_repeat
from gear.agent.context import RunContext
from gear.agent.event_builders import CANDIDATES_RECORDED, expansion_events, passage_views, triple_views
from gear.events import Answered, BaseRetrieved, ProximalTriples, QueryRewritten, Reasoned, TriplesLinked, Warned
from gear.measures import exact_match, f1_score
from gear.parsing import Verdict, parse_answer, parse_next_question, parse_reasoning, parse_triples
from gear.prompts import format_docs
from gear.prompts.order import read_order
from gear.retrieve.expand import Expansion
from gear.retrieve.expand import expand as expand_from
from gear.store.base import triple_text
from gear.store.fusion import rrf
from gear.trace import TripleLinkView
from gear.types import SPO, Scored


def base(ctx: RunContext, query: str, k: int, iteration: int) -> list[Scored]:
    """C′q = h^k_base(q(n), C)."""
    found = ctx.base_retrieve(query, k)
    ctx.trace.emit(BaseRetrieved(iteration, query, k, passage_views(ctx.backend, found, ctx.gold)))
    return found


def read(ctx: RunContext, passages: Sequence[int], question: str, memory: Sequence[SPO], iteration: int, role: str,
         source: str) -> list[SPO]:
    """read(C, q, G): the proximal triples the LLM finds in `passages` for the question, given the memory (shown in
    the order settings.read_order says: gear.prompts.order)."""
    passages = ctx.last_read = read_order(passages, ctx.last_read, ctx.settings.read_order)
    docs = format_docs((p.title, p.text) for p in ctx.backend.passages(list(passages)))
    raw = ctx.ask(asks.read(ctx.settings.prompt_profile, role, docs, question, list(memory) or None), iteration)
    parsed = parse_triples(raw)
    ctx.warn(iteration, parsed.warnings, f"reader ({role})")
    if not parsed.triples:
        ctx.trace.emit(Warned(iteration, f"reader ({role}) produced no triples"))
    ctx.trace.emit(ProximalTriples(iteration, role, source, list(passages), [list(t) for t in parsed.triples], raw))
    return parsed.triples


def triple_link(ctx: RunContext, proximal: Sequence[SPO], iteration: int) -> list[int]:
    """tripleLink(t′) = h¹_base(t′, T): the single best index triple for each proximal triple."""
    if not proximal:
        ctx.trace.emit(TriplesLinked(iteration, []))
        return []
    texts = [triple_text(*t) for t in proximal]
    vectors = ctx.encode(texts)
    hits = ctx.backend.search_triples(texts, 1, ctx.settings.retriever, vectors)
    linked = [h[0].id if h else None for h in hits]
    found = [t for t in linked if t is not None]
    views = {v.id: v for v in triple_views(ctx.backend, found, ctx.gold)}
    stored = dict(zip(found, ctx.backend.triple_vectors(found), strict=True)) if found else {}
    ctx.trace.emit(TriplesLinked(iteration, [
        TripleLinkView(list(p), views[t], float(stored[t] @ v)) if t is not None else
        TripleLinkView(list(p), None, 0.0) for p, v, t in zip(proximal, vectors, linked, strict=True)]))
    return list(dict.fromkeys(found))


def expand(ctx: RunContext, query: str, base_list: Sequence[Scored], initial: Sequence[int], iteration: int,
           source: str = "sync") -> Expansion:
    """Graph expansion from the initial nodes (`source`: "naive" = every triple of the base passages, "sync" =
    tripleLink's): beam search scored against q(n) → flatten → C̃q → RRF with the base list."""
    s = ctx.settings
    result = expand_from(ctx.encode_query(query), [p.id for p in base_list], initial, ctx.backend, ctx.scorer,
                         ctx.beam, s.rrf_k, record=CANDIDATES_RECORDED)
    for event in expansion_events(iteration, source, result, ctx.backend, ctx.beam, s.score_mode, ctx.gold):
        ctx.trace.emit(event)
    return result


def sync(ctx: RunContext, query: str, question: str, k: int, memory: Sequence[SPO], iteration: int) -> Expansion:
    """One SyncGE pass: base → read → tripleLink → beam search → flatten → RRF with the base list."""
    timer = ctx.timer
    start = time.perf_counter()
    found = base(ctx, query, k, iteration)
    start = timer.stage("base retrieval", iteration, start)
    label = "read(C′q, q)" if not memory else "read(C′q, q, G(n−1))"
    proximal = read(ctx, [p.id for p in found], question, memory, iteration, "sync", label)
    start = timer.stage("read", iteration, start)
    initial = triple_link(ctx, proximal, iteration)
    start = timer.stage("tripleLink", iteration, start)
    result = expand(ctx, query, found, initial, iteration)
    timer.stage("graph expansion", iteration, start)
    return result


def passage_link(ctx: RunContext, triple: SPO) -> list[int]:
    """passageLink(t) = RRF(h^k(t, C), passages of h^k(t, T))  (paper App. B)."""
    s = ctx.settings
    text = triple_text(*triple)
    vec = ctx.encode([text])
    k = s.passage_link_k
    passages = [p.id for p in ctx.backend.search_passages([text], k, s.retriever, vec)[0]]
    triples = [t.id for t in ctx.backend.search_triples([text], k, s.retriever, vec)[0]]
    from_triples = list(dict.fromkeys(int(p) for p in ctx.backend.passages_of(triples))) if triples else []
    return [x.id for x in rrf([passages, from_triples], k=s.rrf_k)]


def answer(ctx: RunContext, question: str, ranked: Sequence[Scored], answers: Sequence[str], iteration: int) -> str:
    """The paper's QA prompt over the top qa_top_k passages; EM and F1 when the gold answers are known."""
    top = [p.id for p in ranked[: ctx.settings.qa_top_k]]
    passages = [(p.title, p.text) for p in ctx.backend.passages(top)]
    raw = ctx.ask(asks.answer(passages, question), iteration)
    text = parse_answer(raw)
    em = exact_match(text, answers) if answers else None
    f1 = f1_score(text, answers) if answers else None
    ctx.trace.emit(Answered(iteration, text, raw, top, em, f1))
    return text


def reason(ctx: RunContext, question: str, memory: Sequence[SPO], iteration: int) -> Verdict:
    """Reasoning for termination; in the small profile an "answerable" that the cited memory facts do not hold
    is rejected (the paper's reasoner hallucination, caught live) and the loop goes on."""
    profile = ctx.settings.prompt_profile
    raw = ctx.ask(asks.reason(profile, question, memory), iteration)
    verdict = parse_reasoning(raw)
    ctx.warn(iteration, verdict.warnings, "reasoner")
    problem = grounding_problem(verdict, memory) if profile == "small" else ""
    if problem:
        ctx.trace.emit(Reasoned(iteration, False, verdict.answer or "", verdict.reason, raw, verdict.cited,
                                f"{NOT_GROUNDED}: {problem}"))
        # the rewriter is told what the paper's reasoner says when facts are missing, not the agent's bookkeeping
        return Verdict(False, None, "The known facts do not contain the answer to the question.",
                       verdict.warnings, verdict.cited)
    ctx.trace.emit(Reasoned(iteration, verdict.answerable, verdict.answer or "", verdict.reason, raw, verdict.cited))
    return verdict


def rewrite(ctx: RunContext, question: str, memory: Sequence[SPO], why: str, earlier: Sequence[str],
            iteration: int) -> str:
    """q(n+1); a query already asked is asked for once more with the earlier ones shown (small profile), and
    if it still repeats the trace says so."""
    profile = ctx.settings.prompt_profile
    raw = ctx.ask(asks.rewrite(profile, question, memory, why), iteration)
    query, warnings = parse_next_question(raw)
    retried = False
    if query and is_repeat(query, earlier) and profile == "small":
        retried = True
        raw = ctx.ask(asks.rewrite(profile, question, memory, why, earlier), iteration)
        query, warnings = parse_next_question(raw)
    ctx.warn(iteration, warnings, "rewriter")
    if not query:
        query = question
        ctx.trace.emit(Warned(iteration, "rewriter gave no question; the next iteration reuses the original question"))
    repeated = is_repeat(query, earlier)
    if repeated:
        ctx.trace.emit(Warned(iteration, f"rewriter repeated an earlier query{' after a retry' if retried else ''}"
                                         f": {query}"))
    ctx.trace.emit(QueryRewritten(iteration, query, raw, retried, repeated))
    return query
