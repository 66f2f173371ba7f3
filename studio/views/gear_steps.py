"""GeAR's steps in a run, drawn: the query of each iteration, base retrieval, the readers, tripleLink, the beams as a
graph, fusion, the gist memory, the reasoner and the rewriter, passageLink, the final ranking, the answer and the
run's cost. One function per event type (DRAW); TraceView (studio.views.trace) decides where each goes and hands it
here, and the peers' steps are studio.views.peer_steps's. Step titles and notation come from gear.viz.notation.
Untrusted text goes through st.dataframe or escaped markdown only; the graph comes from gear.viz, which escapes every
label."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from gear import events as ev
from gear import methods, viz
from gear import trace as t
from gear.trace.cost import seconds_words
from studio.core.run_gold import MARKED, RUN, drew, gold_now, recall_now
from studio.core.safe import esc_md
from studio.core.widgets import View, answer_origins, iframe, step_heading, table, triple_rows
from studio.views import peer_steps


def run_method(view: View) -> methods.Method | None:
    start = next((x for x in view.events if isinstance(x, ev.RunStarted)), None)
    return methods.find(start.method) if start else None


# -- one function per event --------------------------------------------------------------------------------------------
def iteration_started(e: ev.IterationStarted, view: View) -> None:
    st.markdown(f"<div style='font-size:1.05rem'>q<sup>({e.iteration:d})</sup> = <i>{esc_md(e.query)}</i></div>",
                unsafe_allow_html=True)
    if view.live and e.iteration == 1:
        peer_steps.first_use_note(view.events)


def base_retrieved(e: ev.BaseRetrieved, view: View) -> None:
    step_heading(e, f", k = {e.k:d}")
    method = run_method(view)
    if method is not None and method.base_note:
        st.caption(method.base_note)
    table(viz.passage_rows(e.passages), height=min(420, 38 + 35 * len(e.passages)))


def proximal_triples(e: ev.ProximalTriples, view: View) -> None:
    step_heading(e)
    st.caption(esc_md(e.source))
    table(triple_rows(e.triples))


def triples_linked(e: ev.TriplesLinked, view: View) -> None:
    step_heading(e)
    rows = [{"proximal triple": viz.spo_text(link.proximal),
             "linked index triple": viz.spo_text(link.linked.spo) if link.linked else "—",
             "similarity": round(link.similarity, 3),
             "source passage": link.linked.passage_title if link.linked else "",
             "gold": "★" if link.linked and link.linked.gold else ""} for link in e.links]
    table(rows)


def initial_nodes(e: ev.InitialNodes, view: View) -> None:
    if e.source == "naive":  # SyncGE's initial nodes were shown by tripleLink
        step_heading(e)
    st.caption(f"{len(e.triples)} initial triple(s) start the beam search")


def beams_searched(e: ev.BeamsSearched, view: View) -> None:
    n = e.iteration
    step_heading(e, f"b = {e.width:d}, l = {e.length:d}, γ = {e.gamma:g}, neighbours ≤ {e.max_neighbours:d}")
    st.caption(f"Beams keep the top b sequences; the n-th candidate of a beam is weighted by exp(−min(n, γ)/γ) "
               f"(diversity {'on' if e.diversity else 'off'}); {e.candidates_scored:,} candidate sequences scored.")
    initial = next((x for x in reversed(view.events) if isinstance(x, ev.InitialNodes) and x.iteration == n), None)
    if not e.steps or not e.steps[-1]:
        st.caption("No beams (no initial nodes).")
        return
    picture = viz.beams_picture(e, initial, viz.passage_lookup(view.events), gold_known=view.gold_known)
    height = picture.height(viz.PICTURE_WIDTH)  # as tall as it needs at the column's width: labels keep their size
    iframe(picture.html(height), height + 60)
    by_id = {x.id: x for x in e.triples}
    rows = [{"beam": i, "score": round(b.score, 3),
             "triples": " → ".join(viz.spo_text(by_id[x].spo) for x in b.triple_ids if x in by_id),
             "penalties": ", ".join(f"×{p:.3f}" for p in b.penalties),
             "gold": "★" if any(by_id[x].gold for x in b.triple_ids if x in by_id) else ""}
            for i, b in enumerate(e.steps[-1], 1)]
    with st.expander(f"Beams ({len(rows)})"):
        table(rows)


def passages_expanded(e: ev.PassagesExpanded, view: View) -> None:
    with st.expander(f"Expanded passages C̃q ({len(e.passages)}) — source passages of the flattened beams"):
        table(viz.passage_rows(e.passages))


def passages_fused(e: ev.PassagesFused, view: View) -> None:
    n = e.iteration
    step_heading(e, " — rank movement vs the base list")
    base = next((x for x in reversed(view.events) if isinstance(x, ev.BaseRetrieved) and x.iteration == n), None)
    table(viz.rank_movement(base.passages if base else [], e.passages), height=min(460, 38 + 35 * len(e.passages)))


def gist_updated(e: ev.GistUpdated, view: View) -> None:
    step_heading(e, f" — {len(e.memory):d} triple(s)")
    table(triple_rows(e.memory, {tuple(x) for x in e.added}))


def reasoned(e: ev.Reasoned, view: View) -> None:
    """The verdict, boxed by what it is (gear.viz.verdict): green only when its answer is the gold one — an
    answerable verdict is the model's claim, and one the gold answer contradicts is no success."""
    step_heading(e)
    start = next((x for x in view.events if isinstance(x, ev.RunStarted)), None)
    said = viz.verdict(e, start.answers if start else [], esc=esc_md)
    if said.tone == "agrees":
        st.success(said.text)
    elif said.tone == "caught":
        st.error(said.text)
    elif said.tone == "unchecked":
        st.info(said.text)
    else:  # not answerable yet, or an answer the gold one contradicts
        st.warning(said.text)


def query_rewritten(e: ev.QueryRewritten, view: View) -> None:
    step_heading(e)
    st.info(f"Next query: {esc_md(e.query)}")
    if e.retried:
        st.caption("The first rewrite repeated an earlier query; the rewriter was asked again with the earlier queries "
                   "shown." + (" It still repeats one." if e.repeated else ""))
    elif e.repeated:
        st.caption(":material/warning: This query repeats an earlier one.")


def llm_called(e: ev.LLMCalled, view: View) -> None:
    origin = {"memo": "memo — identical call earlier, no model work now", "record": "recorded answer, as it cost "
              "when recorded"}.get(e.source or ("record" if e.cached else "model"), "answered by the model")
    st.caption(f"LLM · {esc_md(e.step)}: {e.prompt_tokens:,} + {e.completion_tokens:,} tokens, {e.seconds:.1f} s — "
               f"{origin}")


def warned(e: ev.Warned, view: View) -> None:
    st.caption(":material/warning: " + esc_md(e.message))


def passages_linked(e: ev.PassagesLinked, view: View) -> None:
    st.markdown("**passageLink** — passages for each gist triple, fused with every iteration's list")
    table(viz.linked_rows(e))


def final_ranking(e: ev.FinalRanking, view: View) -> None:
    peer_steps.chain(view.events)
    st.markdown("**Final ranking**")
    table(viz.passage_rows(e.passages, 15), height=min(560, 38 + 35 * min(15, len(e.passages))))


def run_start(view: View) -> ev.RunStarted | None:
    return next((x for x in view.events if isinstance(x, ev.RunStarted)), None)


def answered(e: ev.Answered, view: View) -> None:
    """The run's answer — the QA step's, which EM and F1 score — with the gold answers beside it when known."""
    start = run_start(view)
    parts = [f"**Final answer:** {esc_md(e.answer) or '(none)'}"]
    if start is not None and start.answers:
        parts.append("**gold:** " + esc_md(" / ".join(start.answers[:4])))
    if e.em is not None and e.f1 is not None:
        parts.append(f"EM {e.em:.0f}, F1 {e.f1:.2f}")
    st.markdown(" &nbsp;·&nbsp; ".join(parts))
    top = start.settings.get("qa_top_k", len(e.passage_ids)) if start is not None else len(e.passage_ids)
    st.caption(f"The QA step's answer over the top {top} passages of the final ranking: the run's answer, the one "
               "EM and F1 score.")


def run_time(e: ev.RunFinished, trace: t.Trace, ran_here: bool) -> tuple[str, str]:
    """The run's time as a metric label and a note: "Time" for a run made in this session; "Recorded run" for one
    loaded from a file, whose time is not this machine's now."""
    seconds = f"{e.total_ms / 1000:.1f} s"
    if ran_here:
        return "Time", ""
    cost = trace.cost()
    if not cost.recorded:
        return "Recorded run", f"recorded run: {seconds}"
    return "Recorded run", (f"recorded run: {seconds}, its {cost.recorded} LLM answers replayed from a recording "
                            f"({cost.tokens:,} tokens and {seconds_words(cost.model_seconds)} of model time when they "
                            "were recorded)")


def recall_shown(trace: t.Trace, e: ev.RunFinished) -> tuple[dict[str, float], str]:
    """R@k against the run's gold now (studio.core.run_gold: the marks made on it, the gold it ran with, or its question
    saved with gold), and a few words saying whose gold it is when it is not the gold the run was asked with. The
    drawn gold is remembered so that the gold panel can redraw the page when the marks change."""
    gold = gold_now(trace)
    drew(trace, gold)
    if gold.source == RUN:
        return dict(e.recall), ""
    recall = recall_now(trace, gold, e.recall or ("5", "10", "15"))
    return recall, (" (against the gold passages marked below)" if gold.source == MARKED else
                    " (against the gold passages saved with this question)")


def run_finished(e: ev.RunFinished, view: View) -> None:
    trace = t.Trace(view.events)
    label, note = run_time(e, trace, view.ran_here)
    cols = st.columns(4)
    cols[0].metric("Iterations", e.iterations)
    cols[1].metric(label, f"{e.total_ms / 1000:.1f} s")
    recall, said = recall_shown(trace, e)
    for col, k in zip(cols[2:], ("5", "10"), strict=False):
        if k in recall:
            col.metric(f"R@{k}", f"{100 * recall[k]:.0f}%")
    if recall:
        st.caption("Recall: " + " · ".join(f"R@{k} {100 * v:.0f}%" for k, v in recall.items()) + said)
    elif trace.first(ev.RunStarted) is not None:
        st.caption("Recall: no gold passage known yet — mark the passages that hold the answer below.")
    if note:
        st.caption(note[0].upper() + note[1:])
    origins = answer_origins(trace)
    if origins:
        cost = trace.cost()
        profile = next((x.settings.get("prompts") for x in view.events if isinstance(x, ev.RunStarted)), None)
        when = "" if view.ran_here else " (when it was recorded)"
        st.caption(f"LLM answers{when}: {origins}. Cost: {cost.words()} ({cost.prompt_tokens:,} prompt + "
                   f"{cost.completion_tokens:,} completion tokens, each request once)"
                   + (f"; prompt profile {esc_md(profile)}" if profile else ""))
    left, right = st.columns(2)
    if trace.of(ev.LLMCalled):
        left.plotly_chart(viz.tokens_figure(trace), width="stretch", key=f"{view.key}-tokens")
    if trace.of(ev.StageTimed):
        right.plotly_chart(viz.time_figure(trace), width="stretch", key=f"{view.key}-time")


DRAW: dict[type[ev.Event], Callable[[Any, View], None]] = {
    ev.IterationStarted: iteration_started, ev.BaseRetrieved: base_retrieved, ev.ProximalTriples: proximal_triples,
    ev.TriplesLinked: triples_linked, ev.InitialNodes: initial_nodes, ev.BeamsSearched: beams_searched,
    ev.PassagesExpanded: passages_expanded, ev.PassagesFused: passages_fused, ev.GistUpdated: gist_updated,
    ev.Reasoned: reasoned, ev.QueryRewritten: query_rewritten, ev.LLMCalled: llm_called, ev.Warned: warned,
    ev.PassagesLinked: passages_linked, ev.FinalRanking: final_ranking, ev.Answered: answered,
    ev.RunFinished: run_finished,
}
