"""A run must look the same whether it is watched live or replayed from a saved trace, so one view draws a Trace
event by event, either as the run's listener or over a saved file. Untrusted text goes through st.dataframe /
escaped markdown only."""

from __future__ import annotations

from typing import Any

import streamlit as st

from gear import methods, viz
from gear import trace as t
from studio import peers_view
from studio.safe import esc_md
from studio.widgets import GRAPH_HEIGHT, heading, iframe, table, triple_rows

__all__ = ["GRAPH_HEIGHT", "TraceView", "answer_origins", "heading", "iframe", "show_wait", "table", "triple_rows"]


def show_wait(box: Any, e: t.LLMWaiting) -> None:
    """A run's place in the model's queue, in `box` (a placeholder), cleared when its turn comes. Called on every
    poll of the queue, changed or not: each draw is a point where Streamlit can stop the script, so Cancel (or
    leaving the page) takes the run out of the queue at once."""
    if e.ahead > 0:
        box.caption(f"⏳ {esc_md(e.step)} — waiting for the model: {e.ahead} ahead")
    else:
        box.empty()


def answer_origins(trace: t.Trace | None) -> str:
    """Who answered a run's LLM calls: "9 recorded, 4 from the model, 2 from the memo" ("" without calls)."""
    if trace is None:
        return ""
    names = {"record": "recorded", "model": "from the model", "memo": "from the memo (identical call)"}
    counts = trace.llm_sources()
    return ", ".join(f"{counts[key]} {name}" for key, name in names.items() if counts.get(key))


class TraceView:
    """Renders events into Streamlit containers: one st.status per iteration, then a results section."""

    def __init__(self, *, live: bool = False, graph_height: int = GRAPH_HEIGHT, key: str = "view") -> None:
        self.live, self.graph_height, self.key = live, graph_height, key
        self.events: list[t.Event] = []
        self.status: Any = None
        self.final: Any = None
        self.iteration = 0
        self.gold_known = False
        self.writing: Any = None  # the box showing the model's wait or its text while it writes (live runs)
        self.written_at = 0.0

    # -- driving ------------------------------------------------------------------------------------------------------
    def replay(self, trace: t.Trace) -> None:
        for event in trace:
            self(event)
        self.close()

    def __call__(self, event: t.Event) -> None:
        if isinstance(event, t.LLMText):
            self.stream(event)
            return
        if isinstance(event, t.LLMWaiting):
            self.wait(event)
            return
        if self.writing is not None:
            self.writing.empty()
            self.writing = None
        self.events.append(event)
        if isinstance(event, t.RunStarted):
            self.gold_known = bool(event.gold_passage_ids)
            self.run_started(event)
            return
        if isinstance(event, t.IterationStarted):
            self._finish_status()
            self.iteration = event.iteration
            label = f"Iteration {event.iteration}" + (" — running…" if self.live else "")
            self.status = st.status(label, expanded=True, state="running" if self.live else "complete")
        if isinstance(event, (t.PassagesLinked, t.FinalRanking, t.Answered, t.RunFinished)):
            self._finish_status()
            if self.final is None:
                self.final = st.container(border=True)
                self.final.subheader("Result")
            with self.final:
                self.draw(event)
            return
        with self._current():
            self.draw(event)

    def _current(self) -> Any:
        """Where a step's output goes: the running iteration, or once the result has begun, the result box (the
        QA call's LLM line and warnings come after the final ranking and belong with it)."""
        if self.final is not None:
            return self.final
        return self.status if self.status is not None else st.container()

    def _box(self) -> Any:
        """The placeholder for what the model is doing now (waiting, writing), in the current iteration."""
        if self.writing is None:
            with self._current():
                self.writing = st.empty()
        return self.writing

    def wait(self, e: t.LLMWaiting) -> None:
        """The session's place in the model's queue, where the model's text will show (see show_wait)."""
        if e.ahead > 0 or self.writing is not None:
            show_wait(self._box(), e)

    def stream(self, e: t.LLMText) -> None:
        """The model's text as it is written (the reader's triples appear while the model writes them); updated at
        most a few times a second, and cleared when the step's result arrives."""
        import time

        now = time.perf_counter()
        if self.writing is not None and now - self.written_at < 0.25:
            return
        self.written_at = now
        with self._box().container():
            st.caption(f"✍️ {esc_md(e.step)} — the model is writing…")
            st.code(e.text[-1500:], language=None, wrap_lines=True)

    def _finish_status(self) -> None:
        if self.status is not None:
            self.status.update(label=f"Iteration {self.iteration}", state="complete", expanded=True)
            self.status = None

    def close(self) -> None:
        self._finish_status()

    @property
    def method(self) -> str:
        start = next((x for x in self.events if isinstance(x, t.RunStarted)), None)
        return start.method if start else ""

    # -- one event ---------------------------------------------------------------------------------------------------
    def run_started(self, e: t.RunStarted) -> None:
        known = methods.find(e.method)
        method = known.label if known else esc_md(e.method)  # a trace from elsewhere may name any method
        retriever = known.retriever_shown(e.retriever, e.settings) if known else e.retriever
        st.markdown(f"**Question:** {esc_md(e.question)}")
        facts = [f"method **{method}**", f"retriever **{esc_md(retriever)}**"]
        if e.answers:
            facts.append("gold answer **" + esc_md(" / ".join(e.answers[:3])) + "**")
        if e.gold_passage_ids:
            facts.append(f"{len(e.gold_passage_ids)} gold passages (★)")
        st.caption(" · ".join(facts))

    def draw(self, e: t.Event) -> None:
        n = e.iteration
        if peers_view.draw(e, self):  # PPR's and IRCoT's own steps
            return
        if isinstance(e, t.IterationStarted):
            st.markdown(f"<div style='font-size:1.05rem'>q<sup>({n})</sup> = <i>{esc_md(e.query)}</i></div>",
                        unsafe_allow_html=True)
            if self.live and n == 1:
                peers_view.first_use_note(self.events)
        elif isinstance(e, t.BaseRetrieved):
            heading("1", "Base retrieval", f"C′<sub>q</sub> = h<sup>k</sup><sub>base</sub>(q<sup>({n})</sup>, C), "
                    f"k = {e.k}")
            if self.method == "ppr":
                st.caption("The dense top k: every passage's dense score seeds its node in the PPR graph.")
            table(viz.passage_rows(e.passages), height=min(420, 38 + 35 * len(e.passages)))
        elif isinstance(e, t.ProximalTriples):
            if e.role == "sync":
                heading("2", "Reader → proximal triples", "T′<sub>q</sub> = read(C′<sub>q</sub>, q)")
            else:
                heading("5", "Gist reader", f"T<sup>G</sup><sub>q({n})</sub> = read(C<sub>q({n})</sub>, q, "
                        f"G<sup>({n - 1})</sup>)")
            st.caption(esc_md(e.source))
            table(triple_rows(e.triples))
        elif isinstance(e, t.TriplesLinked):
            heading("3", "tripleLink → initial nodes", "T<sub>q</sub><sup>init</sup> = { h¹<sub>base</sub>(t′, T) }")
            rows = [{"proximal triple": viz.spo_text(link.proximal),
                     "linked index triple": viz.spo_text(link.linked.spo) if link.linked else "—",
                     "similarity": round(link.similarity, 3),
                     "source passage": link.linked.passage_title if link.linked else "",
                     "gold": "★" if link.linked and link.linked.gold else ""} for link in e.links]
            table(rows)
        elif isinstance(e, t.InitialNodes):
            if e.source == "naive":
                heading("2", "Initial nodes (NaiveGE)", "every triple of C′<sub>q</sub>")
            st.caption(f"{len(e.triples)} initial triple(s) start the beam search")
        elif isinstance(e, t.BeamsSearched):
            self.draw_beams(e)
        elif isinstance(e, t.PassagesExpanded):
            with st.expander(f"Expanded passages C̃q ({len(e.passages)}) — source passages of the flattened beams"):
                table(viz.passage_rows(e.passages))
        elif isinstance(e, t.PassagesFused):
            heading("4b", "Fusion", f"C<sub>q({n})</sub> = RRF(C̃<sub>q</sub>, C′<sub>q</sub>) — rank movement vs "
                    "the base list")
            base = next((x for x in reversed(self.events) if isinstance(x, t.BaseRetrieved) and x.iteration == n),
                        None)
            table(viz.rank_movement(base.passages if base else [], e.passages),
                  height=min(460, 38 + 35 * len(e.passages)))
        elif isinstance(e, t.GistUpdated):
            heading("5", "Gist memory", f"G<sup>({n})</sup> — {len(e.memory)} triple(s)")
            table(triple_rows(e.memory, {tuple(x) for x in e.added}))
        elif isinstance(e, t.Reasoned):
            heading("6", "Reasoner", f"answerable(G<sup>({n})</sup>, q)?")
            cites = f" (cites memory facts {', '.join(map(str, e.cited))})" if e.cited else ""
            if e.rejected:
                st.error(f"Reasoner hallucination caught — the model said answerable: {esc_md(e.answer)}{cites}, "
                         f"but {esc_md(e.rejected)}. The loop goes on.")
            elif e.answerable:
                st.success(f"Answerable — answer: {esc_md(e.answer)}{cites}")
            else:
                st.warning(f"Not answerable yet — {esc_md(e.reason)}")
        elif isinstance(e, t.QueryRewritten):
            heading("7", "Rewriter", f"q<sup>({n + 1})</sup> = rewrite(G<sup>({n})</sup>, q, r<sup>({n})</sup>)")
            st.info(f"Next query: {esc_md(e.query)}")
            if e.retried:
                st.caption("The first rewrite repeated an earlier query; the rewriter was asked again with the "
                           "earlier queries shown." + (" It still repeats one." if e.repeated else ""))
            elif e.repeated:
                st.caption("⚠️ This query repeats an earlier one.")
        elif isinstance(e, t.LLMCalled):
            origin = {"memo": "memo — identical call earlier, no model work", "record": "recorded answer"}.get(
                e.source or ("record" if e.cached else "model"), "answered by the model")
            st.caption(f"LLM · {esc_md(e.step)}: {e.prompt_tokens:,} + {e.completion_tokens:,} tokens, "
                       f"{e.seconds:.1f} s — {origin}")
        elif isinstance(e, t.Warned):
            st.caption("⚠️ " + esc_md(e.message))
        elif isinstance(e, t.PassagesLinked):
            st.markdown("**passageLink** — passages for each gist triple, fused with every iteration's list")
            rows = [{"gist triple": viz.spo_text(link.triple),
                     "linked passages": "; ".join(("★ " if p.gold else "") + p.title for p in link.passages)}
                    for link in e.links]
            table(rows)
        elif isinstance(e, t.FinalRanking):
            peers_view.chain(self.events)
            st.markdown("**Final ranking**")
            table(viz.passage_rows(e.passages, 15), height=min(560, 38 + 35 * min(15, len(e.passages))))
        elif isinstance(e, t.Answered):
            score = f" — EM {e.em:.0f}, F1 {e.f1:.2f}" if e.em is not None and e.f1 is not None else ""
            st.markdown(f"**Answer:** {esc_md(e.answer)}{score}")
        elif isinstance(e, t.RunFinished):
            self.draw_finish(e)

    def draw_beams(self, e: t.BeamsSearched) -> None:
        n = e.iteration
        heading("4", "Graph expansion — Diverse Triple Beam Search",
                f"b = {e.width}, l = {e.length}, γ = {e.gamma:g}, neighbours ≤ {e.max_neighbours}")
        st.caption(f"Beams keep the top b sequences; the n-th candidate of a beam is weighted by exp(−min(n, γ)/γ) "
                   f"(diversity {'on' if e.diversity else 'off'}); {e.candidates_scored:,} candidate sequences scored.")
        initial = next((x for x in reversed(self.events) if isinstance(x, t.InitialNodes) and x.iteration == n), None)
        if not e.steps or not e.steps[-1]:
            st.caption("No beams (no initial nodes).")
            return
        page = viz.beams_html(e, initial, viz.passage_lookup(self.events), height=self.graph_height,
                              gold_known=self.gold_known)
        iframe(page, self.graph_height + 60)
        by_id = {x.id: x for x in e.triples}
        rows = [{"beam": i, "score": round(b.score, 3),
                 "triples": " → ".join(viz.spo_text(by_id[x].spo) for x in b.triple_ids if x in by_id),
                 "penalties": ", ".join(f"×{p:.3f}" for p in b.penalties),
                 "gold": "★" if any(by_id[x].gold for x in b.triple_ids if x in by_id) else ""}
                for i, b in enumerate(e.steps[-1], 1)]
        with st.expander(f"Beams ({len(rows)})"):
            table(rows)

    def draw_finish(self, e: t.RunFinished) -> None:
        cols = st.columns(4)
        cols[0].metric("Iterations", e.iterations)
        cols[1].metric("Time", f"{e.total_ms / 1000:.1f} s")
        for col, k in zip(cols[2:], ("5", "10"), strict=False):
            if k in e.recall:
                col.metric(f"R@{k}", f"{100 * e.recall[k]:.0f}%")
        if e.recall:
            st.caption("Recall: " + " · ".join(f"R@{k} {100 * v:.0f}%" for k, v in e.recall.items()))
        trace = t.Trace(self.events)
        origins = answer_origins(trace)
        if origins:
            prompt, completion = trace.tokens()
            profile = next((x.settings.get("prompts") for x in self.events if isinstance(x, t.RunStarted)), None)
            st.caption(f"LLM answers: {origins}; {prompt:,} + {completion:,} tokens paid"
                       + (f"; prompt profile {esc_md(profile)}" if profile else ""))
        left, right = st.columns(2)
        if trace.of(t.LLMCalled):
            left.plotly_chart(viz.tokens_figure(trace), width="stretch", key=f"{self.key}-tokens")
        if trace.of(t.StageTimed):
            right.plotly_chart(viz.time_figure(trace), width="stretch", key=f"{self.key}-time")
