"""Pure picture functions of gear.viz: self-contained vis-network HTML, the expected nodes, escaping, figures."""

from __future__ import annotations

import json
import re

import networkx as nx

from gear import viz
from gear.events import BeamsSearched, InitialNodes, LLMCalled, PPRRanked, PPRSeeded, StageTimed
from gear.store.graph import normalise_entity
from gear.trace import BeamView, EdgeView, EntityView, FactSeedView, PassageView, Trace, TripleView

XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"


def beams_event() -> tuple[BeamsSearched, InitialNodes, dict[int, PassageView]]:
    triples = [
        TripleView(0, "Bremen Cathedral", "dedicated to", "St. Peter", 10, "Bremen Cathedral", gold=True),
        TripleView(1, "St. Peter's Basilica", "named for", "St. Peter", 11, "St. Peter's Basilica", gold=True),
        TripleView(2, "St. Peter's Basilica", "located in", "Vatican City", 11, "St. Peter's Basilica", gold=True),
        TripleView(3, "Alatri Cathedral", f"dedicated to {XSS}", SCRIPT, 12, f"Evil {XSS}"),
    ]
    steps = [[BeamView([0], 0.8, [0.8], [1.0]), BeamView([3], 0.5, [0.5], [1.0])],
             [BeamView([0, 1], 1.6, [0.8, 0.8], [1.0, 1.0]), BeamView([3], 0.5, [0.5], [1.0]),
              BeamView([0, 2], 1.4, [0.8, 0.7], [1.0, 0.951])]]
    event = BeamsSearched(1, steps, triples, 10, 2, 100, 20.0, True, "exact", 7)
    initial = InitialNodes(1, "sync", [triples[0], triples[3]])
    passages = {12: PassageView(12, f"Evil {XSS}", f"text {SCRIPT} {XSS}")}
    return event, initial, passages


def test_beam_graph_has_entities_as_nodes_and_triples_as_edges() -> None:
    event, initial, passages = beams_event()
    g = viz.beam_graph(event, initial, passages)
    assert isinstance(g, nx.MultiDiGraph)
    assert set(g.nodes) == {"bremen cathedral", "st. peter", "st. peter's basilica", "vatican city",
                            "alatri cathedral", normalise_entity(SCRIPT)}
    assert g.number_of_edges() == 4
    hops = {d["triple"].id: d["hop"] for _, _, d in g.edges(data=True)}
    assert hops == {0: 0, 3: 0, 1: 1, 2: 1}
    colours = {d["triple"].id: d["color"] for _, _, d in g.edges(data=True)}
    assert colours[0] == viz.HOP_COLOURS[0] and colours[1] == viz.HOP_COLOURS[1]
    widths = {d["triple"].id: d["width"] for _, _, d in g.edges(data=True)}
    assert widths[0] > widths[3]  # triple 0 is in the best beam
    assert g.nodes["bremen cathedral"]["start"] and not g.nodes["vatican city"]["start"]
    assert g.nodes["vatican city"]["gold"]
    tip = next(d["title"] for _, _, d in g.edges(data=True) if d["triple"].id == 2)
    assert "beam 3" in tip and "diversity penalty ×0.951" in tip and "St. Peter&#x27;s Basilica" in tip


def nodes_and_edges(page: str) -> tuple[list[dict], list[dict]]:
    """The page's nodes (each edge label's box among them, marked edgeLabel) and edges (a labelled edge is drawn as
    two, through its label's box)."""
    nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S).group(1))
    edges = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", page, re.S).group(1))
    return nodes, edges


def entities_and_labels(nodes: list[dict]) -> tuple[list[dict], list[dict]]:
    return [n for n in nodes if not n.get("edgeLabel")], [n for n in nodes if n.get("edgeLabel")]


def one_line(label: str) -> str:
    return " ".join(label.split())


def test_beams_html_is_self_contained_with_expected_nodes() -> None:
    event, initial, passages = beams_event()
    page = viz.beams_html(event, initial, passages, gold_known=True)
    assert "new vis.Network" in page
    assert viz.outside_urls(page) == []
    assert "cdn.jsdelivr" not in page and "cdnjs" not in page
    nodes, edges = nodes_and_edges(page)
    entities, boxes = entities_and_labels(nodes)
    assert len(entities) == 6 and len(boxes) == 4 and len(edges) == 8  # each triple drawn through its label's box
    labels = {one_line(n["label"]) for n in entities}
    assert "Bremen Cathedral ★" in labels and "Vatican City ★" in labels
    assert {one_line(n["label"]).removesuffix(" ★") for n in boxes} >= {"dedicated to", "located in"}
    assert "initial node (tripleLink)" in page and "hop 1 expansion" in page  # the legend


def test_untrusted_text_is_escaped_in_labels_and_tooltips() -> None:
    event, initial, passages = beams_event()
    page = viz.beams_html(event, initial, passages)
    nodes, edges = nodes_and_edges(page)
    for item in nodes + edges:
        for field in ("label", "title"):
            value = str(item.get(field, ""))
            assert "<img" not in value and "<script" not in value, value
    assert any("&lt;img src=x onerror=alert(1)&gt;" in e["title"] for e in edges)
    assert any("&lt;script&gt;" in n["label"] for n in nodes)
    # nothing of the payload appears raw anywhere in the page
    assert XSS not in page and SCRIPT not in page


def test_esc_breaks_href_so_pyvis_keeps_its_text_tooltips() -> None:
    assert "href" not in viz.esc_html('<a href="http://x">')
    assert viz.esc_html("AT&T") == "AT&amp;T"


def ppr_events() -> tuple[PPRSeeded, PPRRanked]:
    entities = [EntityView(0, "mount etna", 0.6, 0.20), EntityView(1, "sicily", 0.0, 0.12),
                EntityView(2, XSS, 0.4, 0.05), EntityView(3, "mediterranean sea", 0.0, 0.01)]
    edges = [EdgeView("relation", 0, 1, "located on", 2.0), EdgeView("relation", 0, 2, f"described as {SCRIPT}", 2.0),
             EdgeView("synonym", 1, 3, "0.83", 1.66), EdgeView("context", 2, 12, "", 1.0),
             EdgeView("context", 1, 13, "", 1.0), EdgeView("context", 3, 99, "", 1.0)]  # passage 99 not shown
    passages = [PassageView(13, "Sicily", "Sicily is the largest island.", 0.3, gold=True),
                PassageView(12, f"Evil {XSS}", f"text {SCRIPT}", 0.2)]
    fact = FactSeedView(TripleView(5, "Mount Etna", "described as", XSS, 12, f"Evil {XSS}"), 1.0)
    seeded = PPRSeeded(1, "which sea?", [fact], [entities[0], entities[2]], 0.05)
    return seeded, PPRRanked(1, 0.5, 27, entities, edges, passages, {"entities": 4, "passages": 2})


def test_ppr_graph_sizes_entities_by_score_and_highlights_the_seeds() -> None:
    seeded, ranked = ppr_events()
    g = viz.ppr_graph(ranked, seeded)
    assert set(g.nodes) == {"e0", "e1", "e2", "e3", "p12", "p13"}
    sizes = [g.nodes[f"e{i}"]["size"] for i in range(4)]
    assert sizes == sorted(sizes, reverse=True)  # by PPR score
    assert [g.nodes[f"e{i}"]["seed"] for i in range(4)] == [True, False, True, False]
    assert g.nodes["e0"]["color"] == viz.SEED_COLOUR != g.nodes["e1"]["color"]
    assert g.nodes["p13"]["gold"] and g.nodes["p13"]["shape"] == "box"
    kinds = sorted(d["kind"] for _, _, d in g.edges(data=True))
    assert kinds == ["context", "context", "relation", "relation", "synonym"]  # the edge to passage 99 is dropped
    labels = {d["label"] for _, _, d in g.edges(data=True) if d["kind"] != "context"}
    assert labels == {"located on", f"described as {SCRIPT}", "≈ 0.83"}
    assert not viz.ppr_graph(ranked, seeded, passages=False).has_node("p13")
    # without the seeding event, seeds are the entities with a seed weight
    assert [viz.ppr_graph(ranked).nodes[f"e{i}"]["seed"] for i in range(4)] == [True, False, True, False]


def test_ppr_html_is_self_contained_and_escapes_every_name() -> None:
    seeded, ranked = ppr_events()
    page = viz.ppr_html(ranked, seeded, gold_known=True)
    assert "new vis.Network" in page
    assert viz.outside_urls(page) == []
    nodes, edges = nodes_and_edges(page)
    entities, boxes = entities_and_labels(nodes)
    assert len(entities) == 6 and len(boxes) == 3 and len(edges) == 2 + 3 * 2  # context edges carry no label
    for item in nodes + edges:
        for field in ("label", "title"):
            value = str(item.get(field, ""))
            assert "<img" not in value and "<script" not in value, value
    assert any("".join(n["label"].split()) == "&lt;imgsrc=xonerror=alert(1)&gt;" for n in entities)
    assert any("&lt;script&gt;" in n["label"] for n in boxes)
    assert XSS not in page and SCRIPT not in page
    assert "#1 Sicily ★" in {one_line(n["label"]) for n in entities}  # the gold passage, with its PPR rank
    synonym = next(n for n in boxes if n["label"] == "≈ 0.83")
    halves = [e for e in edges if synonym["id"] in (e["from"], e["to"])]
    assert len(halves) == 2 and all(e["dashes"] and e["arrows"] == "" for e in halves)
    assert "seed entity (from the matched facts)" in page and "★ gold passage" in page  # the legend


def test_rank_movement_and_gold_entry() -> None:
    base = [PassageView(1, "A", ""), PassageView(2, "B", ""), PassageView(3, "C", "", gold=True)]
    fused = [PassageView(3, "C", "", gold=True), PassageView(9, "N", ""), PassageView(1, "A", "")]
    rows = viz.rank_movement(base, fused)
    assert [r["move"] for r in rows] == ["▲ 2", "new (from graph)", "▼ 2"]
    assert rows[0]["gold"] == "★"
    table = viz.gold_entry({"BM25": base, "GeAR": fused}, {3: "C", 7: "Z"})
    assert table == [{"gold passage": "C", "BM25": 3, "GeAR": 1}, {"gold passage": "Z", "BM25": None, "GeAR": None}]
    assert viz.recall_at(fused, [3, 7], 1) == 0.5


def test_side_by_side_reads_each_rank_across_the_methods() -> None:
    a = [PassageView(1, "A", ""), PassageView(3, "C", "", gold=True)]
    b = [PassageView(3, "C", "", gold=True)]
    assert viz.side_by_side({"BM25": a, "PPR": b}, 3) == [
        {"rank": 1, "BM25": "A", "PPR": "★ C"},
        {"rank": 2, "BM25": "★ C", "PPR": ""},
        {"rank": 3, "BM25": "", "PPR": ""},
    ]


def test_neighbourhood_of_an_entity(tiny_index, make_encoder) -> None:
    from gear.agent.engine import Engine
    from gear.config import Settings

    engine = Engine.open(tiny_index, Settings(), encoder=make_encoder())
    g = viz.neighbourhood(engine.backend, "Mount Etna", hops=1, limit=50)
    assert set(g.nodes) == {"mount etna", "active volcano", "sicily"}
    assert g.nodes["sicily"]["label"] == "Sicily"  # names as written in the triples
    g2 = viz.neighbourhood(engine.backend, "mount etna", hops=2, limit=50)
    assert "mediterranean sea" in g2.nodes
    assert viz.neighbourhood(engine.backend, "paris", hops=2, limit=1).number_of_edges() == 1
    assert viz.find_entities(engine.backend, "etna") == ["mount etna"]
    assert viz.top_entities(engine.backend, 1)[0][1] >= 2
    page = viz.graph_html(g, legend=viz.neighbourhood_legend())
    assert "new vis.Network" in page and viz.outside_urls(page) == []


def test_run_figures() -> None:
    trace = Trace([LLMCalled(1, "read (sync)", "m", 100, 20, 0.5), LLMCalled(1, "reason", "m", 50, 5, 0.1),
                   StageTimed(1, "base retrieval", 3.0), StageTimed(2, "base retrieval", 4.0)])
    fig = viz.tokens_figure(trace)
    assert [list(d.y) for d in fig.data] == [[100, 50], [20, 5]]
    assert list(viz.time_figure(trace).data[0].y) == [3.0, 4.0]
    repeated = Trace([LLMCalled(1, "read (sync)", "m", 100, 20, 0.5, source="record", request="r1"),
                      LLMCalled(2, "read (sync)", "m", 100, 20, 0.0, source="memo", request="r1"),
                      LLMCalled(2, "reason", "m", 50, 5, 0.1, source="record", request="r2")])
    bars = viz.tokens_figure(repeated)
    assert [list(d.y) for d in bars.data] == [[100, 0, 50], [20, 0, 5]]  # the repeat was paid for once
    assert sum(sum(d.y) for d in bars.data) == repeated.cost().tokens == 175
    assert "175 in all" in bars.layout.title.text
    report = {"method": "gear", "retriever": "hybrid", "recall": {"5": 50.0, "10": 60.0},
              "by_hop": {"2hop": {"n": 2, "recall": {"5": 50.0, "10": 60.0}}},
              "recall_per_iteration": {"1": {"5": 40.0}, "2": {"5": 50.0}},
              "per_question": [{"prompt_tokens": 10, "completion_tokens": 2}]}
    assert viz.report_label(report) == "Hybrid GeAR"
    assert list(viz.recall_by_method_figure([report]).data[0].y) == [50.0, 60.0]
    assert list(viz.recall_per_iteration_figure([report]).data[0].y) == [40.0, 50.0]
    assert viz.recall_by_hop_figure([report]).data
    assert list(viz.tokens_per_question_figure([report]).data[0].y) == [12]
    assert viz.density_figure([0, 1, 1, 3]).data


def test_reports_sharing_a_label_are_told_apart_in_a_legend() -> None:
    """The Evaluate page showed "Hybrid + NaiveGE" twice in a legend: the same method under the two protocols."""
    paper = {"method": "naive", "retriever": "hybrid", "protocol": "paper", "recall": {"5": 50.0}}
    one = {**paper, "protocol": "one-run"}
    gear_paper = {"method": "gear", "retriever": "hybrid", "protocol": "paper", "recall": {"5": 60.0}}
    assert viz.report_labels([paper, one]) == ["Hybrid + NaiveGE (one run per cut-off)", "Hybrid + NaiveGE (one run)"]
    assert viz.report_labels([paper, dict(paper)]) == ["Hybrid + NaiveGE #1", "Hybrid + NaiveGE #2"]
    assert viz.report_labels([paper, gear_paper]) == ["Hybrid + NaiveGE", "Hybrid GeAR"]  # nothing to tell apart
    names = [bar.name for bar in viz.recall_by_method_figure([paper, one]).data]
    assert len(set(names)) == 2


def test_a_base_rank_reads_as_a_whole_number_and_a_new_passage_has_none() -> None:
    """The fusion table's base rank holds None for a passage the graph brought in, so pandas stores the column as
    floats: its ranks are shown as 1 and 2, not 1.000000 (the browser marks the missing one as Streamlit marks any
    empty cell)."""
    import pandas as pd

    from studio.core.widgets import gold_style

    base = [PassageView(1, "A", ""), PassageView(2, "B", "")]
    fused = [PassageView(1, "A", "", gold=True), PassageView(9, "N", ""), PassageView(2, "B", "")]
    html = gold_style(pd.DataFrame(viz.rank_movement(base, fused))).to_html()
    cells = [c.split(">", 1)[1].split("<", 1)[0] for c in html.split('<td id="T_')[1:]]
    assert [cells[i] for i in range(3, len(cells), 7)] == ["1", "", "2"]  # the base rank column, row by row
    assert "1.000000" not in html and "None" not in html
