"""IRCoT (Trivedi et al. 2023), the multi-step peer of the GeAR agent: retrieve with the question, let the LLM write
the next sentence of a chain of thought over the passages collected so far, retrieve with that sentence, and repeat
until the model writes "So the answer is: …" or the step limit is reached; then the paper's QA prompt answers.

Choices, recorded in each run's settings:
- each retrieval takes agent_k passages (the GeAR paper's k "matching IRCoT") from the base retriever or from PPR
  (`ircot_retriever`); at most `ircot_max_steps` retrievals, a thought after each but the last (as HippoRAG's
  IRCoT does: a thought after the last retrieval could drive nothing);
- the reasoner reads at most `ircot_max_passages` collected passages (IRCoT caps its reader at 15): when more were
  collected, it reads them round-robin over the retrievals, every retrieval's best new passage first, so later
  retrievals stay in view;
- the final ranking is the collection in retrieval order (IRCoT's), or, with ircot_ranking="score", each passage at
  its best score over the retrievals (HippoRAG's IRCoT);
- every LLM call goes through RunContext.ask, so tokens, steps and streaming are counted exactly as GeAR's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import zip_longest

from gear.agent import steps
from gear.agent.asks import Ask
from gear.agent.context import Outcome, RunContext
from gear.agent.event_builders import passage_views
from gear.agent.methods.ppr import ppr_search
from gear.events import BaseRetrieved, IterationStarted, PassagesAdded, ThoughtWritten, Warned
from gear.parsing import Thought, parse_thought
from gear.prompts import peers
from gear.types import Scored

THOUGHT_TOKENS = 96  # one sentence (≈20-40 tokens), with room for a model that starts restating the chain


def reading_order(retrievals: Sequence[Sequence[int]], cap: int) -> list[int]:
    """The passages the reasoner reads: all of them while they fit under `cap`, else round-robin over the
    retrievals' new passages (each retrieval's best first)."""
    everything = [p for ids in retrievals for p in ids]
    if len(everything) <= cap:
        return everything
    merged = [p for row in zip_longest(*retrievals) for p in row if p is not None]
    return merged[:cap]


def final_ranking(order: Sequence[int], best: dict[int, float], by: str) -> list[Scored]:
    """The collection in retrieval order (scores: each passage's best), or by best score (ties: retrieval order)."""
    scored = [Scored(p, best[p]) for p in order]
    if by == "score":
        position = {p: i for i, p in enumerate(order)}
        scored.sort(key=lambda s: (-s.score, position[s.id]))
    return scored


def retrieve(ctx: RunContext, query: str, k: int, iteration: int) -> list[Scored]:
    """One retrieval of the loop with the configured retriever; emits its BaseRetrieved (and PPR's events)."""
    if ctx.settings.ircot_retriever == "ppr":
        hits = ppr_search(ctx, query, k, iteration).ranking[:k]
        ctx.trace.emit(BaseRetrieved(iteration, query, k, passage_views(ctx.backend, hits, ctx.gold)))
        return hits
    return steps.base(ctx, query, k, iteration)


def think(ctx: RunContext, question: str, read: Sequence[int], thoughts: list[str], iteration: int) -> Thought:
    """The next sentence of the chain of thought (empty text when the model wrote nothing new)."""
    passages = [(p.title, p.text) for p in ctx.backend.passages(list(read))]
    raw = ctx.ask(Ask("think", peers.ircot_prompt(question, passages, thoughts), None, THOUGHT_TOKENS), iteration)
    thought = parse_thought(raw, tuple(thoughts))
    ctx.warn(iteration, thought.warnings, "reasoner")
    ctx.trace.emit(ThoughtWritten(iteration, thought.text, raw, thought.final, thought.answer))
    return thought


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    """IRCoT for at most `ircot_max_steps` retrievals; `k` is ignored in favour of agent_k, as in the GeAR loop."""
    s, trace = ctx.settings, ctx.trace
    best: dict[int, float] = {}
    order: list[int] = []
    retrievals: list[list[int]] = []
    thoughts: list[str] = []
    query = question
    n = 0
    for n in range(1, s.ircot_max_steps + 1):
        trace.emit(IterationStarted(n, query))
        start = time.perf_counter()
        hits = retrieve(ctx, query, s.agent_k, n)
        new = [h for h in hits if h.id not in best]
        for h in hits:
            best[h.id] = max(best.get(h.id, h.score), h.score)
        order.extend(h.id for h in new)
        retrievals.append([h.id for h in new])
        collected = [r.id for r in final_ranking(order, best, s.ircot_ranking)]
        trace.emit(PassagesAdded(n, query, passage_views(ctx.backend, new, ctx.gold), collected))
        start = ctx.timer.stage("retrieval", n, start)
        if n == s.ircot_max_steps:
            break
        thought = think(ctx, question, reading_order(retrievals, s.ircot_max_passages), thoughts, n)
        ctx.timer.stage("reason", n, start)
        if thought.final:
            break
        if not thought.text:
            trace.emit(Warned(n, "the reasoner wrote no new sentence; IRCoT stops here"))
            break
        thoughts.append(thought.text)
        query = thought.text
    return Outcome(final_ranking(order, best, s.ircot_ranking), n)
