"""The steps of a run as the app names them, in one place: each step's number and title in the trace view, its title
in teaching mode, the paper's notation for it and a plain explanation. The trace view (studio.views.gear_steps,
studio.views.peer_steps) heads each step with these, teaching mode (studio.views.teaching) shows them large, and a
lesson's handout (gear.viz.handout) prints them — which is why they live on the engine's side, free of Streamlit.

Notation is trusted HTML; "(n)", "(n−1)" and "(n+1)" stand for the iteration (`at_iteration`). Where the trace view's
heading states the step differently (more briefly, or with the run's own numbers after it) `heading` holds its
formula; None means it shows `notation`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gear import events as ev


@dataclass(frozen=True)
class StepText:
    number: str  # the step's place in an iteration, as the trace view numbers it
    title: str  # the trace view's heading
    short: str  # teaching mode's title
    notation: str  # the paper's notation
    explanation: str  # what the step does, in plain words (teaching mode)
    heading: str | None = None  # the trace view's formula when it is not `notation`


def at_iteration(notation: str, n: int) -> str:
    """Notation with the iteration filled in: q<sup>(n)</sup> → q<sup>(2)</sup>."""
    return notation.replace("(n+1)", f"({n + 1:d})").replace("(n−1)", f"({n - 1:d})").replace("(n)", f"({n:d})")


STEPS: dict[type[ev.Event], StepText] = {
    ev.BaseRetrieved: StepText(
        "1", "Base retrieval", "Base retrieval", "C′<sub>q</sub> = h<sup>k</sup><sub>base</sub>(q<sup>(n)</sup>, C)",
        "A normal retriever (BM25, dense SBERT or a hybrid of both) fetches the k passages most similar to the current "
        "query. Multi-hop questions usually need a passage that shares few words with the question, which a list like "
        "this one often misses."),
    ev.ProximalTriples: StepText(
        "2", "Reader → proximal triples", "Reader", "T′<sub>q</sub> = read(C′<sub>q</sub>, q)",
        "An LLM reads the base passages and writes down the facts that matter for the question as (subject, "
        "predicate, object) triples — the proximal triples. They are short, so later steps are cheap, and they point "
        "at entities we can follow in the graph."),
    ev.TriplesLinked: StepText(
        "3", "tripleLink → initial nodes", "tripleLink",
        "T<sub>q</sub><sup>init</sup> = { h¹<sub>base</sub>(t′, T) : t′ ∈ T′<sub>q</sub> }",
        "Each proximal triple is matched to the single most similar triple in the index. These index triples are the "
        "initial nodes: the places where the graph walk starts.",
        heading="T<sub>q</sub><sup>init</sup> = { h¹<sub>base</sub>(t′, T) }"),
    ev.InitialNodes: StepText("2", "Initial nodes (NaiveGE)", "Initial nodes", "every triple of C′<sub>q</sub>", ""),
    ev.BeamsSearched: StepText(
        "4", "Graph expansion — Diverse Triple Beam Search", "Graph expansion",
        "beams B = DTBS(T<sub>q</sub><sup>init</sup>, q<sup>(n)</sup>; b, l, γ)",
        "From each initial triple we step to neighbouring triples (sharing a head or tail entity), keeping the b best "
        "chains. Later candidates of the same beam are down-weighted by exp(−min(n, γ)/γ) so the beams stay diverse "
        "instead of all following one path.",
        heading=""),
    ev.PassagesFused: StepText(
        "4b", "Fusion", "Fusion", "C<sub>q<sup>(n)</sup></sub> = RRF(C̃<sub>q</sub>, C′<sub>q</sub>)",
        "The passages the beams came from are merged with the base list by reciprocal rank fusion. Passages that were "
        "far down — or absent — can now rise: that is the graph's contribution.",
        heading="C<sub>q(n)</sub> = RRF(C̃<sub>q</sub>, C′<sub>q</sub>)"),
    ev.GistUpdated: StepText(
        "5", "Gist memory", "Gist memory",
        "G<sup>(n)</sup> = G<sup>(n−1)</sup> ∪ T<sup>G</sup><sub>q<sup>(n)</sup></sub>",
        "The reader reads the fused passages and the new proximal triples are appended to the gist memory: a compact "
        "record of everything learnt so far, carried to the next iteration.",
        heading="G<sup>(n)</sup>"),
    ev.Reasoned: StepText(
        "6", "Reasoner", "Reasoner", "answerable(G<sup>(n)</sup>, q) → r<sup>(n)</sup>",
        "An LLM decides whether the memory already answers the original question. If yes, the loop stops; if not, its "
        "reason says what is missing.",
        heading="answerable(G<sup>(n)</sup>, q)?"),
    ev.QueryRewritten: StepText(
        "7", "Rewriter", "Rewriter", "q<sup>(n+1)</sup> = rewrite(G<sup>(n)</sup>, q, r<sup>(n)</sup>)",
        "Using the memory and the reason, an LLM writes the next query, aimed at the missing hop. We return to base "
        "retrieval with it."),
    ev.PassagesLinked: StepText(
        "", "passageLink", "passageLink and final ranking",
        "RRF(C<sub>t</sub> …, C<sub>q<sup>(1)</sup></sub> … C<sub>q<sup>(n)</sup></sub>)",
        "Each gist triple is linked back to passages; these lists and every iteration's fused list are fused into the "
        "final ranking."),
    # the peers (docs/peers.md)
    ev.PPRSeeded: StepText(
        "2", "PPR seeds", "PPR seeds", "s = seeds(q)",
        "PPR (HippoRAG 2 style) matches the query to the index's facts; their entities seed the walk.",
        heading="s = facts(q) → entity seeds + passage seeds"),
    ev.PPRRanked: StepText(
        "3", "Personalized PageRank", "Personalized PageRank", "x = (1−d)·s + d·Pᵀx",
        "A walk over the entity–passage graph that restarts at the seeds ranks the passages."),
    ev.PassagesAdded: StepText(
        "2", "IRCoT retrieval → collection", "IRCoT retrieval", "C ← C ∪ h<sup>k</sup><sub>base</sub>(q<sup>(n)</sup>)",
        "IRCoT adds the passages its latest query retrieved to the collection the reasoner reads.",
        heading=""),
    ev.ThoughtWritten: StepText(
        "3", "IRCoT reasoning step", "IRCoT thought", "next sentence of the chain of thought",
        "The LLM writes one more sentence of reasoning: the next query, until it gives the answer.",
        heading="the next sentence of the chain of thought"),
    ev.Answered: StepText(
        "", "Answer", "Answer", "QA over the top-5 passages",
        "A reader answers the question from the top passages of the final ranking; when the gold answer is known we "
        "score it with exact match and F1."),
}

#: the gist read (ProximalTriples with role "gist"): a heading of its own in the trace view; teaching mode explains it
#: with the gist memory it grows
GIST_READ = StepText("5", "Gist reader", "Gist reader",
                     "T<sup>G</sup><sub>q(n)</sub> = read(C<sub>q(n)</sub>, q, G<sup>(n−1)</sup>)", "")

#: the steps teaching mode walks through (NaiveGE's initial nodes are shown with the graph expansion)
TAUGHT = frozenset(kind for kind in STEPS if kind is not ev.InitialNodes)


def step_text(e: ev.Event) -> StepText | None:
    """The names and notation of the step an event records (None for events that are not a step of their own)."""
    if isinstance(e, ev.ProximalTriples) and e.role != "sync":
        return GIST_READ
    return STEPS.get(type(e))


def view_formula(text: StepText, n: int, detail: str = "") -> str:
    """The formula after a step's heading in the trace view, at iteration n, with the run's own `detail` after it."""
    return at_iteration(text.notation if text.heading is None else text.heading, n) + detail
