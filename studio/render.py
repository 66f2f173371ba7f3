"""Draw a Trace in Streamlit, event by event: the same code draws a run live (as a Trace listener) and replays a
saved one. Untrusted text goes through st.dataframe / escaped markdown only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from gear import trace as t
from gear import viz
from studio.common import esc_md

GRAPH_HEIGHT = 560


def iframe(page: str, height: int) -> None:
    if hasattr(st, "iframe"):
        st.iframe(page, height=height)
    else:  # pragma: no cover - older Streamlit
        import streamlit.components.v1 as components

        components.html(page, height=height)


FORMATS = {"score": "{:.4f}", "similarity": "{:.3f}"}


def gold_style(df: pd.DataFrame) -> Any:
    """Gold rows highlighted; scores with a readable number of decimals."""
    style = df.style.format({c: f for c, f in FORMATS.items() if c in df.columns}, na_rep="")
    if "gold" not in df.columns or df.empty:
        return style
    return style.apply(lambda row: ["background-color: #fff3bf; font-weight: 600" if row["gold"] else ""
                                    for _ in row], axis=1)


def column_config() -> dict[str, Any]:
    return {"rank": st.column_config.NumberColumn("#", width="small"),
            "gold": st.column_config.TextColumn("gold", width="small"),
            "title": st.column_config.TextColumn("title", width="medium"),
            "text": st.column_config.TextColumn("text", width="large")}


def table(rows: Sequence[dict[str, Any]], height: int | None = None, hide: Sequence[str] = ("id",)) -> None:
    if not rows:
        st.caption("(none)")
        return
    df = pd.DataFrame(rows)
    df = df.drop(columns=[c for c in hide if c in df.columns])
    kwargs: dict[str, Any] = {"hide_index": True, "width": "stretch", "column_config": column_config()}
    if height:
        kwargs["height"] = height
    st.dataframe(gold_style(df), **kwargs)


def triple_rows(triples: Sequence[Sequence[str]], new: set[tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    rows = []
    for tr in triples:
        row = {"subject": tr[0] if len(tr) > 0 else "", "predicate": tr[1] if len(tr) > 1 else "",
               "object": tr[2] if len(tr) > 2 else ""}
        if new is not None:
            row["new"] = "new" if tuple(tr) in new else ""
        rows.append(row)
    return rows


def heading(number: str, name: str, notation: str) -> None:
    st.markdown(f"**{number} · {name}** &nbsp; <span style='color:#1971c2'>{notation}</span>",
                unsafe_allow_html=True)


class TraceView:
    """Renders events into Streamlit containers: one st.status per iteration, then a results section."""

    def __init__(self, *, live: bool = False, graph_height: int = GRAPH_HEIGHT, key: str = "view") -> None:
        self.live, self.graph_height, self.key = live, graph_height, key
        self.events: list[t.Event] = []
        self.status: Any = None
        self.final: Any = None
        self.iteration = 0
        self.gold_known = False
        self.max_iterations = 0

    # -- driving ------------------------------------------------------------------------------------------------------
    def replay(self, trace: t.Trace) -> None:
        for event in trace:
            self(event)
        self.close()

    def __call__(self, event: t.Event) -> None:
        self.events.append(event)
        if isinstance(event, t.RunStarted):
            self.gold_known = bool(event.gold_passage_ids)
            self.max_iterations = int(event.settings.get("max_iterations", 0)) if event.method == "gear" else 1
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
        target = self.status if self.status is not None else st.container()
        with target:
            self.draw(event)

    def _finish_status(self) -> None:
        if self.status is not None:
            self.status.update(label=f"Iteration {self.iteration}", state="complete", expanded=True)
            self.status = None

    def close(self) -> None:
        self._finish_status()

    # -- one event ---------------------------------------------------------------------------------------------------
    def run_started(self, e: t.RunStarted) -> None:
        method = {"none": "base retriever only", "naive": "NaiveGE", "sync": "SyncGE", "gear": "GeAR"}.get(
            e.method, e.method)
        st.markdown(f"**Question:** {esc_md(e.question)}")
        facts = [f"method **{method}**", f"retriever **{e.retriever}**"]
        if e.answers:
            facts.append("gold answer **" + esc_md(" / ".join(e.answers[:3])) + "**")
        if e.gold_passage_ids:
            facts.append(f"{len(e.gold_passage_ids)} gold passages (★)")
        st.caption(" · ".join(facts))

    def draw(self, e: t.Event) -> None:
        n = e.iteration
        if isinstance(e, t.IterationStarted):
            st.markdown(f"<div style='font-size:1.05rem'>q<sup>({n})</sup> = <i>{esc_md(e.query)}</i></div>",
                        unsafe_allow_html=True)
        elif isinstance(e, t.BaseRetrieved):
            heading("1", "Base retrieval", f"C′<sub>q</sub> = h<sup>k</sup><sub>base</sub>(q<sup>({n})</sup>, C), "
                    f"k = {e.k}")
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
            if e.answerable:
                st.success(f"Answerable — answer: {esc_md(e.answer)}")
            else:
                st.warning(f"Not answerable yet — {esc_md(e.reason)}")
        elif isinstance(e, t.QueryRewritten):
            heading("7", "Rewriter", f"q<sup>({n + 1})</sup> = rewrite(G<sup>({n})</sup>, q, r<sup>({n})</sup>)")
            st.info(f"Next query: {esc_md(e.query)}")
        elif isinstance(e, t.Warned):
            st.caption("⚠️ " + esc_md(e.message))
        elif isinstance(e, t.PassagesLinked):
            st.markdown("**passageLink** — passages for each gist triple, fused with every iteration's list")
            rows = [{"gist triple": viz.spo_text(link.triple),
                     "linked passages": "; ".join(("★ " if p.gold else "") + p.title for p in link.passages)}
                    for link in e.links]
            table(rows)
        elif isinstance(e, t.FinalRanking):
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
        left, right = st.columns(2)
        if trace.of(t.LLMCalled):
            left.plotly_chart(viz.tokens_figure(trace), width="stretch", key=f"{self.key}-tokens")
        if trace.of(t.StageTimed):
            right.plotly_chart(viz.time_figure(trace), width="stretch", key=f"{self.key}-time")


# -- teaching mode -----------------------------------------------------------------------------------------------------
TEACH = {
    t.BaseRetrieved: ("Base retrieval", "C′<sub>q</sub> = h<sup>k</sup><sub>base</sub>(q<sup>(n)</sup>, C)",
                      "A normal retriever (BM25, dense SBERT or a hybrid of both) fetches the k passages most similar "
                      "to the current query. Multi-hop questions usually need a passage that shares few words with "
                      "the question — which is why GeAR does not stop here."),
    t.ProximalTriples: ("Reader", "T′<sub>q</sub> = read(C′<sub>q</sub>, q)",
                        "An LLM reads the base passages and writes down the facts that matter for the question as "
                        "(subject, predicate, object) triples — the proximal triples. They are short, so later steps "
                        "are cheap, and they point at entities we can follow in the graph."),
    t.TriplesLinked: ("tripleLink", "T<sub>q</sub><sup>init</sup> = { h¹<sub>base</sub>(t′, T) : t′ ∈ T′<sub>q</sub> }",
                      "Each proximal triple is matched to the single most similar triple in the index. These index "
                      "triples are the initial nodes: the places where the graph walk starts."),
    t.BeamsSearched: ("Graph expansion", "beams B = DTBS(T<sub>q</sub><sup>init</sup>, q<sup>(n)</sup>; b, l, γ)",
                      "From each initial triple we step to neighbouring triples (sharing a head or tail entity), "
                      "keeping the b best chains. Later candidates of the same beam are down-weighted by "
                      "exp(−min(n, γ)/γ) so the beams stay diverse instead of all following one path."),
    t.PassagesFused: ("Fusion", "C<sub>q<sup>(n)</sup></sub> = RRF(C̃<sub>q</sub>, C′<sub>q</sub>)",
                      "The passages the beams came from are merged with the base list by reciprocal rank fusion. "
                      "Passages that were far down — or absent — can now rise: that is the graph's contribution."),
    t.GistUpdated: ("Gist memory", "G<sup>(n)</sup> = G<sup>(n−1)</sup> ∪ T<sup>G</sup><sub>q<sup>(n)</sup></sub>",
                    "The reader reads the fused passages and the new proximal triples are appended to the gist "
                    "memory: a compact record of everything learnt so far, carried to the next iteration."),
    t.Reasoned: ("Reasoner", "answerable(G<sup>(n)</sup>, q) → r<sup>(n)</sup>",
                 "An LLM decides whether the memory already answers the original question. If yes, the loop stops; "
                 "if not, its reason says what is missing."),
    t.QueryRewritten: ("Rewriter", "q<sup>(n+1)</sup> = rewrite(G<sup>(n)</sup>, q, r<sup>(n)</sup>)",
                       "Using the memory and the reason, an LLM writes the next query, aimed at the missing hop. We "
                       "return to base retrieval with it."),
    t.PassagesLinked: ("passageLink and final ranking",
                       "RRF(C<sub>t</sub> …, C<sub>q<sup>(1)</sup></sub> … C<sub>q<sup>(n)</sup></sub>)",
                       "Each gist triple is linked back to passages; these lists and every iteration's fused list "
                       "are fused into the final ranking."),
    t.Answered: ("Answer", "QA over the top-5 passages",
                 "A reader answers the question from the top passages of the final ranking; when the gold answer is "
                 "known we score it with exact match and F1."),
}


def teaching_steps(trace: t.Trace) -> list[t.Event]:
    steps: list[t.Event] = []
    for e in trace:
        if type(e) in TEACH and not (isinstance(e, t.ProximalTriples) and e.role != "sync"):
            steps.append(e)
    return steps


TEACH_CSS = """
<style>
  .teach-title { font-size: 2.1rem; font-weight: 700; margin: 0.2rem 0; }
  .teach-notation { font-size: 1.6rem; color: #1971c2; font-family: 'Liberation Serif', serif; margin: 0.2rem 0; }
  .teach-text { font-size: 1.35rem; line-height: 1.5; color: #212529; }
  .teach-query { font-size: 1.3rem; background: #f1f3f5; padding: 0.5rem 0.8rem; border-radius: 6px; }
  [data-testid="stDataFrame"] { font-size: 18px; }
</style>
"""


def teach(trace: t.Trace, key: str = "teach_step") -> None:
    """Step through a run one module at a time (Next/Back), with a plain explanation and the paper's notation."""
    steps = teaching_steps(trace)
    if not steps:
        st.info("This trace has no module steps to teach.")
        return
    st.markdown(TEACH_CSS, unsafe_allow_html=True)
    i = max(0, min(int(st.session_state.get(key, 0)), len(steps) - 1))
    back, info, nxt = st.columns([1, 4, 1])
    if back.button("◀ Back", key=f"{key}_back", disabled=i == 0, width="stretch"):
        i -= 1
    if nxt.button("Next ▶", key=f"{key}_next", disabled=i >= len(steps) - 1, width="stretch", type="primary"):
        i += 1
    st.session_state[key] = i
    event = steps[i]
    name, notation, text = TEACH[type(event)]  # trusted constants; notation is HTML
    it = event.iteration
    notation = notation.replace("(n+1)", f"({it + 1})").replace("(n−1)", f"({it - 1})").replace("(n)", f"({it})")
    info.progress((i + 1) / len(steps), text=f"Step {i + 1} of {len(steps)} · iteration {event.iteration}")
    st.markdown(f"<div class='teach-title'>{esc_md(name)}</div><div class='teach-notation'>{notation}</div>"
                f"<div class='teach-text'>{esc_md(text)}</div>", unsafe_allow_html=True)
    query = next((e.query for e in trace.of(t.IterationStarted) if e.iteration == event.iteration), trace.question)
    st.markdown(f"<div class='teach-query'>q<sup>({event.iteration})</sup> = {esc_md(query)}</div>",
                unsafe_allow_html=True)
    view = TraceView(graph_height=620, key=f"{key}-view")
    position = next(j for j, e in enumerate(trace.events) if e is event)
    view.events = trace.events[: position + 1]
    start = trace.first(t.RunStarted)
    view.gold_known = bool(start and start.gold_passage_ids)
    view.draw(event)
    if isinstance(event, t.GistUpdated):
        gist_read = next((x for x in trace.of(t.ProximalTriples, event.iteration) if x.role == "gist"), None)
        if gist_read is not None:
            st.caption("read from: " + esc_md(gist_read.source))
