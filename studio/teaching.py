"""A lecture needs a run shown one module at a time, large, with a plain explanation and the paper's notation beside
it; the live view shows everything at once. Teaching mode steps through a recorded trace (Next/Back), reusing the
trace view to draw each step."""

from __future__ import annotations

import streamlit as st

from gear import trace as t
from studio.safe import esc_md
from studio.trace_view import TraceView

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
    # the peers (docs/peers.md): one line each
    t.PPRSeeded: ("PPR seeds", "s = seeds(q)",
                  "PPR (HippoRAG 2 style) matches the query to the index's facts; their entities seed the walk."),
    t.PPRRanked: ("Personalized PageRank", "x = (1−d)·s + d·Pᵀx",
                  "A walk over the entity–passage graph that restarts at the seeds ranks the passages."),
    t.PassagesAdded: ("IRCoT retrieval", "C ← C ∪ h<sup>k</sup><sub>base</sub>(q<sup>(n)</sup>)",
                      "IRCoT adds the passages its latest query retrieved to the collection the reasoner reads."),
    t.ThoughtWritten: ("IRCoT thought", "next sentence of the chain of thought",
                       "The LLM writes one more sentence of reasoning: the next query, until it gives the answer."),
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
