"""The peers' steps in a run, drawn beside GeAR's: PPR (HippoRAG 2 style) — its seeds, the walk's top entities as a
graph, the passages it ranked — and IRCoT — each thought and the passages each retrieval added. TraceView hands
these events here (DRAW, beside studio.views.gear_steps's); each function takes the event and the view it draws into
(for the events seen so far, the graph height and whether gold passages are known). Step titles and notation come from
gear.viz.notation. Untrusted text goes through st.dataframe, st.code or escaped markdown only; the graph comes from
gear.viz, which escapes every label and tooltip."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from gear import events as ev
from gear import methods, viz
from studio.core.safe import esc_md
from studio.core.widgets import View, iframe, step_heading, table


def first_use_note(events: Sequence[ev.Event]) -> None:
    """While a live run that uses PPR starts: its first run on an index builds the entity graph."""
    start = next((x for x in events if isinstance(x, ev.RunStarted)), None)
    method = methods.find(start.method) if start is not None else None
    if start is not None and method is not None and method.uses_ppr(start.settings):
        st.caption("PPR's first run on an index builds its entity graph (every entity name encoded once, then cached "
                   "in the index's ppr/ folder): minutes on a large index, instant afterwards.")


def ppr_seeded(e: ev.PPRSeeded, view: View) -> None:
    step_heading(e)
    st.caption(f"Query: {esc_md(e.query)}")
    if e.fallback:
        st.warning("No matched fact was left (the recognition filter kept none), so PPR does not run: the dense "
                   "ranking stands, as in HippoRAG 2.")
    facts = [{"fact": viz.spo_text(f.triple.spo), "score": round(f.score, 4),
              "kept": ("✓" if f.kept else "✗ filtered out") if e.filtered else "✓",
              "source passage": f.triple.passage_title, "gold": "★" if f.triple.gold else ""} for f in e.facts]
    st.markdown(f"Facts matched to the query by dense similarity ({len(facts)}, min-max-normalised score)"
                + (" — then the LLM's recognition filter" if e.filtered else ""))
    table(facts)
    if e.filtered and e.raw:
        with st.expander("The recognition filter's answer"):
            st.code(e.raw, language=None, wrap_lines=True)
    seeds = [{"seed entity": x.name, "seed weight": round(x.seed, 5), "PPR score": round(x.score, 5)}
             for x in sorted(e.entities, key=lambda x: -x.seed)]
    st.markdown(f"Seed entities ({len(seeds)}): each fact's score over the number of passages the entity occurs in, "
                "averaged over its facts")
    table(seeds)
    st.caption(f"Every passage node is also seeded with its dense score × {e.passage_weight:g}.")


def ppr_ranked(e: ev.PPRRanked, view: View) -> None:
    step_heading(e, f", d = {e.damping:g}")
    size = e.graph
    if size:
        st.caption(f"{e.iterations} power iterations over {size.get('entities', 0):,} entities and "
                   f"{size.get('passages', 0):,} passages ({size.get('relation_edges', 0):,} relation, "
                   f"{size.get('synonym_edges', 0):,} synonym, {size.get('context_edges', 0):,} context edges).")
    if e.entities:
        seeded = next((x for x in reversed(view.events) if isinstance(x, ev.PPRSeeded) and x.iteration == e.iteration),
                      None)
        st.markdown(f"The walk's top entities by PPR score ({len(e.entities)}), the seeds among them, and the "
                    f"{len(e.passages)} passages it ranked highest")
        iframe(viz.ppr_html(e, seeded, height=view.graph_height, gold_known=view.gold_known), view.graph_height + 60)
        rows = [{"entity": x.name, "PPR score": round(x.score, 5), "seed": "seed" if x.seed > 0 else ""}
                for x in sorted(e.entities, key=lambda x: -x.score)]
        with st.expander(f"Top entities ({len(rows)})"):
            table(rows)
    else:
        st.caption("No entity graph to draw (no seeds).")
    st.markdown("Passages ranked by PPR score")
    table(viz.passage_rows(e.passages), height=min(460, 38 + 35 * max(1, len(e.passages))))


def passages_added(e: ev.PassagesAdded, view: View) -> None:
    step_heading(e, f"{len(e.passages)} new passage(s); {len(e.collected)} collected")
    table(viz.passage_rows(e.passages), height=min(420, 38 + 35 * max(1, len(e.passages))))


def thought_written(e: ev.ThoughtWritten, view: View) -> None:
    step_heading(e)
    if e.final:
        st.success(f"Final thought: {esc_md(e.thought)}")
    elif e.thought:
        st.info(f"Thought: {esc_md(e.thought)} — the next retrieval's query")
    else:
        st.warning("The model wrote no new sentence.")
    if e.raw.strip() and e.raw.strip() != e.thought.strip():
        with st.expander("The model's raw answer"):
            st.code(e.raw, language=None, wrap_lines=True)


def chain(events: Sequence[ev.Event]) -> None:
    """IRCoT's whole chain of thought, one sentence per step (nothing for other methods)."""
    thoughts = [e for e in events if isinstance(e, ev.ThoughtWritten) and e.thought]
    if not thoughts:
        return
    st.markdown("**Chain of thought**")
    st.markdown("\n".join(f"{n}. {esc_md(e.thought)}" for n, e in enumerate(thoughts, 1)))


DRAW: dict[type[ev.Event], Callable[[Any, View], None]] = {
    ev.PPRSeeded: ppr_seeded, ev.PPRRanked: ppr_ranked, ev.PassagesAdded: passages_added,
    ev.ThoughtWritten: thought_written,
}

