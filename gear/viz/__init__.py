"""Pictures of a run and of an index, as pure functions: trace events in, networkx graphs / pyvis HTML / plotly
figures out. Imports no Streamlit — the app only places what these return.

Safety: passage text, triples and LLM output are untrusted. Every string that reaches a pyvis label or tooltip is
html-escaped here; tooltips are small HTML fragments built only from escaped strings and our own tags. The HTML is
self-contained (vis-network in line, no CDN tags), so a graph draws offline and makes no outside request.

This module is the public face of the package's own names (the events it draws are gear.trace's, named there); the
bodies live in gear.viz.graph (networkx/pyvis graphs — GeAR's beams, an entity's neighbourhood — the pyvis drawing and
HTML escaping), gear.viz.ppr (PPR's entity graph), gear.viz.charts (plotly figures, ranked-list rows) and
gear.viz.diagnosis (the diagnosis figures, imported from there).

Its modules: graph (pyvis HTML), charts, diagnosis, pairing and analyses (plotly figures), layout and picture
(where nodes go), notation (each step's title and notation), lesson (a run as a lesson) with sub_steps, beam_lesson,
link_lesson, ppr_lesson, beam_order and tables (what each sub-step shows), beam_knobs (a beam search beside the same
with other knobs), ppr (PPR's pictures) and handout (a lesson as one HTML file)."""

from __future__ import annotations

from gear.viz.charts import (
    GOLD_MARK,
    category_figure,
    degree_figure,
    density_figure,
    finite,
    gold_entry,
    linked_rows,
    passage_rows,
    rank_movement,
    recall_at,
    recall_by_hop_figure,
    recall_by_method_figure,
    recall_per_iteration_figure,
    report_label,
    report_labels,
    shown_titles,
    side_by_side,
    time_figure,
    tokens_figure,
    tokens_per_question_figure,
    verdict,
)
from gear.viz.graph import (
    CENTRE_COLOUR,
    ENTITY_COLOUR,
    FONT,
    GOLD_COLOUR,
    HOP_COLOURS,
    HOP_NAMES,
    PICTURE_WIDTH,
    START_ENTITY_COLOUR,
    TripleUse,
    beam_graph,
    beams_legend,
    esc_html,
    find_entities,
    graph_html,
    name_rank,
    neighbourhood,
    neighbourhood_legend,
    outside_urls,
    passage_lookup,
    short,
    spo_text,
    top_entities,
)
from gear.viz.picture import Picture, beams_html, beams_picture
from gear.viz.ppr import (
    PASSAGE_COLOUR,
    PPR_EDGE_COLOURS,
    PPR_ENTITY_COLOUR,
    SEED_COLOUR,
    ppr_graph,
    ppr_html,
    ppr_legend,
)

__all__ = [
    "CENTRE_COLOUR",
    "ENTITY_COLOUR",
    "FONT",
    "GOLD_COLOUR",
    "GOLD_MARK",
    "HOP_COLOURS",
    "HOP_NAMES",
    "PASSAGE_COLOUR",
    "PICTURE_WIDTH",
    "PPR_EDGE_COLOURS",
    "PPR_ENTITY_COLOUR",
    "SEED_COLOUR",
    "START_ENTITY_COLOUR",
    "Picture",
    "TripleUse",
    "beam_graph",
    "beams_html",
    "beams_legend",
    "beams_picture",
    "category_figure",
    "degree_figure",
    "density_figure",
    "esc_html",
    "find_entities",
    "finite",
    "gold_entry",
    "graph_html",
    "linked_rows",
    "name_rank",
    "neighbourhood",
    "neighbourhood_legend",
    "outside_urls",
    "passage_lookup",
    "passage_rows",
    "ppr_graph",
    "ppr_html",
    "ppr_legend",
    "rank_movement",
    "recall_at",
    "recall_by_hop_figure",
    "recall_by_method_figure",
    "recall_per_iteration_figure",
    "report_label",
    "report_labels",
    "short",
    "shown_titles",
    "side_by_side",
    "spo_text",
    "time_figure",
    "tokens_figure",
    "tokens_per_question_figure",
    "top_entities",
    "verdict",
]
