"""The beam search as a lesson: what the trace records of it, the lesson's steps, folded repeats, links to a
step, the handout, and graph layouts that keep every label apart. The recorded candidates are checked against the
plain transliteration of Algorithm 1 in tests/unit/test_beam_algorithm1.py; here, what the bundled traces hold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from gear import events as ev
from gear import trace as t
from gear import viz
from gear.viz import handout, layout
from gear.viz.lesson import ALGORITHM_1, LINK_PHASES, OLD_BEAMS, PHASE_LINES, PPR_PHASES, folding, lesson_steps
from tests.unit.test_app import APP, studio  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted((ROOT / "assets" / "traces").glob("*.json"))
# every bundled trace with a beam search is re-recorded with its candidates (scripts/rerecord_traces.py);
# walkthrough_ppr.json has none (PPR walks the graph instead)
RERECORDED = [p for p in BUNDLED if t.Trace.load(p).of(ev.BeamsSearched)]
PPR = ROOT / "assets" / "traces" / "walkthrough_ppr.json"
OLD = ROOT / "tests" / "fixtures" / "traces" / "walkthrough_before_llm_source.json"


# -- what the trace records -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", RERECORDED, ids=lambda p: p.stem)
def test_every_bundled_trace_records_the_candidates_behind_its_beams(path: Path) -> None:
    """Re-recorded with the candidates (scripts/rerecord_traces.py): at each hop the kept candidates are exactly the
    next step's beams, each a beam of the step before extended by its candidate, with s′ × factor as its score."""
    trace = t.Trace.load(path)
    searches = trace.of(ev.BeamsSearched)
    assert searches, path.name
    for e in searches:
        assert e.recorded > 0 and len(e.hops) == len(e.steps) - 1
        weighed = {x.id for x in [*e.triples, *e.candidate_triples]}
        assert {c.triple_id for hop in e.hops for v in hop for c in v.candidates if c.triple_id >= 0} <= weighed
        assert [c.triple_id for c in e.initial_candidates if c.kept] == [b.triple_ids[0] for b in e.steps[0]]
        for i, hop in enumerate(e.hops, 1):
            previous = e.steps[i - 1]
            kept = sorted(((tuple(previous[v.beam].triple_ids) + ((c.triple_id,) if c.triple_id >= 0 else ())),
                           round(c.score, 9)) for v in hop for c in v.candidates if c.kept)
            assert kept == sorted((tuple(b.triple_ids), round(b.score, 9)) for b in e.steps[i])
            for v in hop:
                ranks = [c.rank for c in v.candidates]
                assert ranks == sorted(ranks) and all(c.rank < e.recorded or c.kept for c in v.candidates)
                for c in v.candidates:
                    assert c.score == pytest.approx(c.accumulated * c.penalty)
                    factor = math.exp(-min(c.rank, e.gamma) / e.gamma) if e.diversity else 1.0
                    assert c.penalty == pytest.approx(factor if c.triple_id >= 0 else 1.0)


def test_an_older_trace_still_opens_and_says_what_it_lacks() -> None:
    trace = t.Trace.load(OLD)
    steps = lesson_steps(trace)
    beams = [s for s in steps if isinstance(s.event, ev.BeamsSearched)]
    assert beams and all(s.missing == OLD_BEAMS and not s.phase for s in beams)
    page = handout.lesson_html(trace)
    assert OLD_BEAMS.split(",")[0] in page and "<svg" in page


# -- the lesson's steps ------------------------------------------------------------------------------------------------
def test_algorithm_1_is_read_from_the_search_s_own_listing() -> None:
    numbers = [n for n, _ in ALGORITHM_1]
    assert numbers == [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 15, 16, 18, 19, 20, 21, 22, 25, 27]
    assert dict(ALGORITHM_1)[21].strip() == "s' ← s' × e^(−min(n, γ)/γ)"
    assert all(set(lines) <= set(numbers) for lines in PHASE_LINES.values())


def test_graph_expansion_opens_into_algorithm_1_s_sub_steps_hop_by_hop() -> None:
    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough_sync_l3.json")
    steps = lesson_steps(trace)
    beam = [(s.phase, s.hop) for s in steps if s.phase in PHASE_LINES]
    assert beam == [("initial", 0), ("candidates", 1), ("scores", 1), ("penalty", 1), ("kept", 1),
                    ("candidates", 2), ("scores", 2), ("penalty", 2), ("kept", 2)]
    assert [s.lines for s in steps if s.phase == "kept"][-1][-1] == 27  # the last hop returns B_i
    titles = [s.title for s in steps]
    assert (titles.index("tripleLink · the nearest index triple")
            < titles.index("tripleLink · the initial nodes") < titles.index("Graph expansion · the initial beams")
            < titles.index("Fusion"))


def test_the_lesson_graph_keeps_every_node_in_its_place_as_it_grows() -> None:
    from gear.viz import beam_lesson

    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough_sync_l3.json")
    e = trace.first(ev.BeamsSearched)
    assert e is not None
    beam = [s for s in lesson_steps(trace) if s.phase in PHASE_LINES]
    pictures = [beam_lesson.picture(e, s.phase, s.hop) for s in beam]
    places: dict[object, tuple[float, float]] = {}
    for n, picture in enumerate(pictures):
        assert picture.frame == pictures[0].frame  # one camera for the whole search
        for node, where in picture.positions.items():
            assert places.setdefault(node, where) == where, f"{node} moved at sub-step {n + 1}"
        if n:  # it only grows: what an earlier sub-step drew stays drawn
            assert set(pictures[n - 1].graph.nodes) <= set(picture.graph.nodes)
    assert len(pictures[-1].graph) > len(pictures[0].graph)
    # once the top b are kept, the candidates that did not make it are greyed out
    dropped = [d for s, p in zip(beam, pictures, strict=True) if s.phase == "kept"
               for _, _, d in p.graph.edges(data=True) if d.get("dashes")]
    assert dropped and all(d["color"] == beam_lesson.DROPPED_COLOUR for d in dropped)


# -- tripleLink and PPR as sub-steps ----------------------------------------------------------------------------------
def test_triplelink_opens_into_the_matching_and_the_initial_nodes_the_search_starts_from() -> None:
    from gear.viz import beam_lesson, link_lesson, sub_steps

    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough_sync_l3.json")
    steps = lesson_steps(trace)
    linked = trace.first(ev.TriplesLinked)
    beams = trace.first(ev.BeamsSearched)
    assert linked is not None and beams is not None and linked.links
    link = [s for s in steps if s.phase in LINK_PHASES]
    assert [s.phase for s in link] == list(LINK_PHASES) and all(s.event is linked for s in link)
    passages = viz.passage_lookup(trace)
    match, nodes = (sub_steps.view(trace.events, s, passages) for s in link)
    # the matching: one row and one arrow per proximal triple, each to the index triple tripleLink chose
    assert [r["t′ (proximal)"] for r in match.rows] == [viz.spo_text(x.proximal) for x in linked.links]
    assert [r["cosine"] for r in match.rows] == [x.similarity for x in linked.links]
    assert match.picture is not None
    arrows = sorted((u, v) for u, v, _ in match.picture.graph.edges(keys=True))
    assert arrows == sorted((f"p{n}", f"t{x.linked.id}") for n, x in enumerate(linked.links) if x.linked)
    xs = {k: x for k, (x, _) in match.picture.positions.items() if k in match.picture.graph}
    assert max(x for k, x in xs.items() if k.startswith("p")) < min(x for k, x in xs.items() if k.startswith("t"))
    assert layout.overlapping(match.picture.positions, viz.graph.node_boxes(match.picture.graph)) == []
    # the initial nodes: the distinct index triples found, which are the beam search's initial candidates, drawn
    # where the search's lesson draws them, with its camera: the next step opens on the same picture
    found = {x.linked.id for x in linked.links if x.linked}
    assert {r["initial node"] for r in nodes.rows} == {viz.spo_text(x.linked.spo) for x in linked.links if x.linked}
    assert found == {c.triple_id for c in beams.initial_candidates}
    assert nodes.picture is not None
    first = beam_lesson.picture(beams, "initial", 0, passages)
    assert nodes.picture.frame == first.frame
    assert all(first.positions.get(k, where) == where for k, where in nodes.picture.positions.items())
    assert {k for _, _, k in nodes.picture.graph.edges(keys=True)} == found
    assert link_lesson.rows(linked, "link-nodes")[0]["found by"] >= 1


def test_ppr_opens_into_facts_seeds_walk_and_passages_in_one_layout() -> None:
    from gear.viz import sub_steps
    from gear.viz.ppr import SEED_COLOUR

    trace = t.Trace.load(PPR)
    seeded, ranked = trace.first(ev.PPRSeeded), trace.first(ev.PPRRanked)
    assert seeded is not None and ranked is not None and seeded.entities and not seeded.fallback
    steps = [s for s in lesson_steps(trace) if s.phase]
    assert [s.phase for s in steps] == list(PPR_PHASES)
    shown = [sub_steps.view(trace.events, s, viz.passage_lookup(trace)) for s in steps]
    pictures = [v.picture for v in shown]
    assert all(p is not None for p in pictures)
    assert len({p.frame for p in pictures if p}) == 1 and len({tuple(sorted(p.positions.items())) for p in pictures
                                                                if p}) == 1  # no node moves
    facts, seeds, walk, ranking = shown
    assert [r["fact t"] for r in facts.rows] == [viz.spo_text(f.triple.spo) for f in seeded.facts]
    lit = {k for k, d in seeds.picture.graph.nodes(data=True) if d["color"] == SEED_COLOUR} if seeds.picture else set()
    assert lit == {f"e{e.id}" for e in seeded.entities if e.seed > 0 and f"e{e.id}" in seeds.picture.graph}
    assert [r["seed entity"] for r in seeds.rows] == [e.name for e in sorted(seeded.entities, key=lambda e: -e.seed)]
    scores = [r["PPR score"] for r in walk.rows]
    assert scores == sorted(scores, reverse=True) and len(walk.rows) == len(ranked.entities)
    assert [r["id"] for r in ranking.rows] == [p.id for p in ranked.passages]
    assert f"{ranked.iterations} iterations" in walk.caption
    page = handout.lesson_html(trace)
    assert all(s.title in page for s in steps) and page.count("<svg") >= 4


def test_a_run_whose_triplelink_found_nothing_keeps_one_step() -> None:
    events: list[ev.Event] = [ev.RunStarted(0, "q?", "sync", "hybrid", {}), ev.IterationStarted(1, "q?"),
                             ev.TriplesLinked(1, [])]
    steps = lesson_steps(events)
    assert [(s.title, s.phase) for s in steps] == [("tripleLink", "")]


# -- repeated iterations -----------------------------------------------------------------------------------------------
def _iteration(n: int, query: str, passages: list[int], memo: bool) -> list[ev.Event]:
    views = [t.PassageView(p, f"P{p}", "text") for p in passages]
    return [ev.IterationStarted(n, query), ev.BaseRetrieved(n, query, 2, views),
            ev.LLMCalled(n, "read (sync)", "m", 100, 10, 1.0, source="memo" if memo else "model"),
            ev.ProximalTriples(n, "sync", "read", passages, [["a", "b", "c"]]),
            ev.PassagesFused(n, views), ev.Reasoned(n, False, "", "missing"), ev.QueryRewritten(n, query)]


def _run(last: list[int]) -> t.Trace:
    """Four iterations: 3 asks iteration 2's query again (answered by the memo); 4 finds `last`."""
    events: list[ev.Event] = [ev.RunStarted(0, "q?", "gear", "hybrid", {})]
    events += _iteration(1, "q?", [1, 2], False) + _iteration(2, "r?", [3, 4], False)
    events += _iteration(3, "r?", [3, 4], True) + _iteration(4, "r?", last, True)
    events += [ev.FinalRanking(4, []), ev.Answered(4, "x", "x", []), ev.RunFinished(4, 4, 10.0)]
    return t.Trace(events)


def test_iterations_that_repeat_an_earlier_one_are_said_once_and_skipped() -> None:
    trace = _run([3, 4])
    fold = folding(trace)
    assert [(f.first, f.last, f.of, f.same_query, f.memo) for f in fold.folds] == [(3, 4, 2, True, 2)]
    assert fold.folds[0].text.startswith("Iterations 3–4 repeat iteration 2: the rewriter wrote the same query")
    steps = lesson_steps(trace)
    assert [s.iteration for s in steps if s.phase == "repeat"] == [3]
    assert not [s for s in steps if s.iteration in (3, 4) and s.phase != "repeat" and not s.title.startswith("Answer")]
    # an iteration that found other passages is no repeat, whatever its query
    assert [(f.first, f.last) for f in folding(_run([9])).folds] == [(3, 3)]


def test_a_bundled_run_that_repeats_itself_is_folded_in_the_replay(studio: dict) -> None:  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["index_selected"] = "tiny"
    at.session_state["ask_ready"] = True
    at.run()
    at.selectbox(key="trace_pick").set_value("example: walkthrough_gear_small").run()
    at.button(key="replay_pick").click().run()
    assert not at.exception
    notes = [str(i.value) for i in at.info]
    assert any("Iteration 4 repeats iteration 3" in n for n in notes), notes
    assert [m.value for m in at.metric if m.label == "Iterations"] == ["4"]  # the run's numbers unchanged


# -- links -------------------------------------------------------------------------------------------------------------
def _open(studio: dict, **params: str) -> AppTest:  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["index_selected"] = "tiny"
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _step_shown(at: AppTest) -> str:
    return at.get("progress")[0].proto.text


def test_a_link_opens_the_lesson_at_its_step_and_follows_it(studio: dict) -> None:  # noqa: F811
    at = _open(studio, trace="walkthrough", step="7")
    assert not at.exception
    steps = lesson_steps(t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json"))
    assert _step_shown(at).startswith(f"Step 7 of {len(steps)}")
    assert at.session_state["teaching"] is True and not at.warning
    assert any("?trace=walkthrough&step=7" in str(c.value) for c in at.code)  # the "Copy link" box
    at.button(key="teach_step_next").click().run()
    assert _step_shown(at).startswith("Step 8 of") and at.query_params["step"] == "8"  # the address follows


@pytest.mark.parametrize(("params", "said"), [({"trace": "nosuch", "step": "3"}, "no bundled trace named"),
                                              ({"trace": "walkthrough", "step": "99"}, "there is no step"),
                                              ({"trace": "../../etc/passwd"}, "no bundled trace named"),
                                              ({"saved": "missing.json", "step": "2"}, "no saved trace")])
def test_a_link_to_nothing_says_so_and_opens_the_lesson_s_start(studio: dict, params: dict, said: str) -> None:  # noqa: F811
    at = _open(studio, **params)
    assert not at.exception
    warnings = " ".join(str(w.value) for w in at.warning)
    assert said in warnings.replace("&#", "").lower() or said in warnings.lower(), warnings
    assert "opens at its start" in warnings
    assert _step_shown(at).startswith("Step 1 of")


def test_a_link_names_a_saved_run_by_its_file(studio: dict) -> None:  # noqa: F811
    saved = studio["data"] / "traces" / "20260101-000000_a-run_abcdef.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    studio["trace"].save(saved)
    at = _open(studio, saved=saved.name, step="2")
    assert not at.exception and not at.warning
    assert _step_shown(at).startswith("Step 2 of")
    assert any(f"saved={saved.name}" in str(c.value) for c in at.code)


# -- the handout -------------------------------------------------------------------------------------------------------
def test_the_handout_is_one_self_contained_file_with_every_step(studio: dict) -> None:  # noqa: F811
    from tests.unit.test_app import XSS

    trace = studio["trace"]  # a run over passages and triples that carry markup
    page = handout.lesson_html(trace)
    steps = lesson_steps(trace)
    assert page.count("<section class='step'") == len(steps)
    assert viz.outside_urls(page) == [] and "<script" not in page.lower() and "<link" not in page.lower()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert XSS not in page  # every untrusted string escaped
    assert "@media print" in page and "break-before: page" in page


def test_gear_export_html_writes_the_handout(tmp_path: Path) -> None:
    from gear.cli import app

    out = tmp_path / "lesson.html"
    result = CliRunner().invoke(app, ["export-html", str(ROOT / "assets" / "traces" / "walkthrough.json"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.count("<section class='step'") == len(lesson_steps(t.Trace.load(ROOT / "assets" / "traces" /
                                                                                  "walkthrough.json")))
    bad = CliRunner().invoke(app, ["export-html", str(tmp_path / "nosuch.json")])
    assert bad.exit_code == 2 and "file not found" in bad.output


# -- layouts -----------------------------------------------------------------------------------------------------------
def worst_cases() -> dict[str, nx.MultiDiGraph]:
    """Graphs a force layout or a path layout draws badly: components apart, a hub with many leaves, one edge, and
    a cycle of long labels (vis-network's hierarchical layout scattered one across ±5,900 px)."""
    cases: dict[str, nx.MultiDiGraph] = {}
    g = nx.MultiDiGraph()
    for c in range(4):
        for n in range(c + 2):
            g.add_edge(f"c{c}n{n}", f"c{c}n{n + 1}", label=f"part of component {c}")
    g.add_node("alone", label="an entity with no triple at all")
    cases["components"] = g
    g = nx.MultiDiGraph()
    for n in range(40):
        g.add_edge("hub", f"leaf{n}", label="has member")
        g.nodes[f"leaf{n}"]["label"] = f"a leaf entity with a long name number {n}"
    cases["hub"] = g
    g = nx.MultiDiGraph()
    g.add_edge("Bremen Cathedral", "St. Peter", label="award")
    cases["one edge"] = g
    g = nx.MultiDiGraph()
    for n in range(12):
        g.add_edge(n, (n + 1) % 12, label="next")
        g.nodes[n].update(label=f"entity number {n} of a ring of long names", start=n == 0)
    cases["cycle"] = g
    return cases


@pytest.mark.parametrize("name", list(worst_cases()))
@pytest.mark.parametrize("flow", [False, True])
def test_layouts_keep_every_label_apart(name: str, flow: bool) -> None:
    g = worst_cases()[name]
    where = viz.graph.place(g, flow)
    # every node and every edge's label has a place, and no two of their boxes overlap
    assert set(where) == set(g.nodes) | {layout.EdgeLabel(u, v, k) for u, v, k in g.edges(keys=True)}
    assert layout.overlapping(where, viz.graph.node_boxes(g)) == []
    page = viz.graph_html(g, flow=flow)
    options = json.loads(page.split("var options = ", 1)[1].split(";\n", 1)[0])
    assert options["physics"]["enabled"] is False and "hierarchical" not in options.get("layout", {})


@pytest.mark.parametrize("flow", [False, True])
def test_self_loops_and_parallel_edges_each_get_a_label_place_of_their_own(flow: bool) -> None:
    """vis-network draws the labels of two self-loops (or two parallel edges) at one spot: "name of successor ·
    ×0.86 = 0.826" was two labels merged. Each label here is a box of the layout's own."""
    g = nx.MultiDiGraph()
    g.add_node("basilica", label="Old St. Peter's Basilica", start=True)
    g.add_edge("basilica", "basilica", key=1, label="name of successor\n×0.86 = 0.82")
    g.add_edge("basilica", "basilica", key=2, label="name of predecessor\n×0.90 = 0.86")
    g.add_edge("basilica", "rome", key=3, label="located in")
    g.add_edge("basilica", "rome", key=4, label="built in")
    where = viz.graph.place(g, flow)
    boxes = viz.graph.node_boxes(g)
    assert len({where[layout.EdgeLabel(u, v, k)] for u, v, k in g.edges(keys=True)}) == 4
    assert layout.overlapping(where, boxes) == []
    page = viz.graph_html(g, flow=flow, positions=where)
    labels = [n["label"] for n in json.loads(page.split("nodes = new vis.DataSet(", 1)[1].split(");", 1)[0])
              if n.get("edgeLabel")]
    assert sorted(" ".join(x.split()) for x in labels) == ["built in", "located in", "name of predecessor ×0.90 = 0.86",
                                                          "name of successor ×0.86 = 0.82"]


def test_labels_wrap_between_words_and_say_when_they_are_cut() -> None:
    assert layout.wrap("Bremen", layout.NODE_FONT) == ["Bremen"]
    lines = layout.wrap("Roman Catholic Archdiocese of Đakovo-Osijek and Syrmia in Croatia", layout.NODE_FONT)
    assert len(lines) == layout.LINES and lines[-1].endswith("…")
    assert all(layout.text_width(line, layout.NODE_FONT) <= layout.WRAP * layout.NODE_FONT for line in lines)
    assert " ".join(layout.wrap("name of predecessor", layout.EDGE_FONT, layout.EDGE_WRAP)) == "name of predecessor"


# -- what each step changed, said out loud ---------------------------------------------------------------------------
def test_the_penalty_step_names_the_swap_it_made_and_marks_those_rows() -> None:
    """In the walk-through the penalty changed the kept set: (St. Peter, brought artifact, Rome) fell from 9th to
    11th by s′ and was dropped, (Bremen Cathedral, protected by, monument protection act) rose from 11th to 10th
    and was kept. The lesson says so in a sentence, and the same rows are marked in the table."""
    from gear.viz import beam_lesson, beam_order
    from gear.viz.tables import MARK

    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json")
    e = trace.first(ev.BeamsSearched)
    assert e is not None
    order = beam_order.hop_order(e, 1)
    # the swap follows from the recorded numbers: places by s′ and by s′ × factor against b
    by_s = sorted(range(len(order.rows)), key=lambda i: -order.rows[i].candidate.accumulated)
    top_before = {i for i in by_s[: e.width]}
    kept = {i for i, r in enumerate(order.rows) if r.candidate.kept}
    assert kept != top_before  # the penalty changed the kept set here
    assert {order.rows.index(r) for r in order.dropped} == top_before - kept
    assert {order.rows.index(r) for r in order.lifted} == kept - top_before
    penalty = next(s for s in lesson_steps(trace) if s.phase == "penalty")
    for r in [*order.dropped, *order.lifted]:
        triple = next(x for x in [*e.triples, *e.candidate_triples] if x.id == r.candidate.triple_id)
        said = f"{viz.spo_text(triple.spo)} on beam {r.beam + 1} ({beam_order.ordinal(r.before)} → " \
               f"{beam_order.ordinal(r.after)})"
        assert said in penalty.explanation
    assert "dropped (St. Peter, brought artifact, Rome) on beam" in penalty.explanation
    assert "(9th → 11th)" in penalty.explanation and "(11th → 10th)" in penalty.explanation
    rows = beam_lesson.rows(e, "penalty", 1)
    assert sorted(r[MARK] for r in rows if r[MARK]) == ["in", "out"]
    assert {r["candidate t"] for r in rows if r[MARK] == "out"} == {"(St. Peter, brought artifact, Rome)"}
    page = handout.lesson_html(trace)
    assert "<tr class='out'" in page and "<tr class='in'" in page


def test_the_kept_step_says_which_beams_went_on_and_why_the_others_did_not() -> None:
    from gear.viz import beam_order

    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json")
    e = trace.first(ev.BeamsSearched)
    assert e is not None
    kept_step = next(s for s in lesson_steps(trace) if s.phase == "kept")
    order = beam_order.hop_order(e, 1)
    last_kept = max((r for r in order.rows if r.candidate.kept), key=lambda r: r.after)
    first_dropped = min((r for r in order.rows if not r.candidate.kept), key=lambda r: r.after)
    assert last_kept.after == e.width and first_dropped.after == e.width + 1
    assert f"down to {e.width}th place at {last_kept.candidate.score:.2f}" in kept_step.explanation
    assert f"below place b = {e.width}" in kept_step.explanation
    assert f"({beam_order.ordinal(first_dropped.after)}, {first_dropped.candidate.score:.2f})" in \
        kept_step.explanation
    # a hop where the penalty moves nobody across the top b says that too
    calm = t.Trace.load(ROOT / "assets" / "traces" / "musique_wilm_airport.json").of(ev.BeamsSearched)[1]
    assert "changes no beam's fate" in beam_order.penalty_sentence(calm, 1)
    assert [beam_order.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


def test_lesson_tables_read_two_decimals_and_tell_same_titled_passages_apart() -> None:
    from gear.viz.tables import number_text, table_html

    assert [number_text(x) for x in (0.77, 0.770000001, 1.1049, 0.0164, 12, 0.0)] == \
        ["0.77", "0.77", "1.10", "0.016", "12", "0.00"]
    page = table_html([{"candidate": "<b>x</b>", "s′": 0.8213}, {"candidate": "y", "s′": 0.863}])
    assert "0.82" in page and "0.8213" not in page and "&lt;b&gt;" in page and "<b>x" not in page
    same = [t.PassageView(3, "St. Peter's Basilica", "a"), t.PassageView(12, "St. Peter's Basilica", "b"),
            t.PassageView(5, "Bremen", "c")]
    assert [r["title"] for r in viz.passage_rows(same)] == ["St. Peter's Basilica (#3)", "St. Peter's Basilica (#12)",
                                                            "Bremen"]


def test_a_link_with_knobs_searches_the_beams_again_beside_the_recorded_ones(studio: dict) -> None:  # noqa: F811
    """`?saved=…&step=N&diversity=off&b=1` opens the beam step with the knobs set, searches the run's beams again over
    its index (found by its question in the index's QA set), shows both, and keeps the knobs in the address."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from tests.conftest import FakeEncoder

    index = studio["index"]
    q = load_qa(index / "qa.json")[0][0]
    engine = Engine.open(index, Settings(), encoder=FakeEncoder())
    run = engine.retrieve(q.question, k=10, settings=Settings().with_(method="naive", retriever="hybrid"),
                          gold=engine.gold_ids(q.gold), question_id=q.id)
    saved = studio["data"] / "traces" / "20260101-000000_knobs_abcdef.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    run.trace.save(saved)
    steps = lesson_steps(run.trace)
    kept = next(n for n, s in enumerate(steps, 1) if s.phase == "kept")
    at = _open(studio, saved=saved.name, step=str(kept), b="1", diversity="off")
    assert not at.exception, at.exception
    assert _step_shown(at).startswith(f"Step {kept} of")
    assert at.number_input(key="knob_b_1").value == 1 and at.toggle(key="knob_diversity_1").value is False
    assert any("searched again in" in str(c.value) for c in at.caption)
    expected = engine.replay_beams(run.trace, 1, width=1, diversity=False)
    shown = " ".join(str(i.value) for i in at.info)
    assert f"{len(expected.left)} left it" in shown and "diversity off" in shown
    assert at.query_params["b"] == "1" and at.query_params["diversity"] == "off"  # the address carries the knobs
    assert run.trace.first(ev.BeamsSearched).width == 10  # the recorded run is unchanged
    # a link's knobs are untrusted: nonsense is said and not used
    bad = _open(studio, saved=saved.name, step=str(kept), b="999", diversity="maybe")
    assert not bad.exception
    assert any("were not used" in str(w.value) for w in bad.warning)
    assert bad.number_input(key="knob_b_1").value == 10


def test_the_three_iteration_lesson_is_one_click_away_and_the_address_follows(studio: dict) -> None:  # noqa: F811
    """From the Ask page, one click opens MuSiQue's recorded 3-iteration run as a lesson — its stepper at step 1,
    even while its demo index is not built yet (the build's state shown) — and the address names it."""
    at = _open(studio, trace="walkthrough", step="14")  # the walk-through's lesson at its last step
    assert _step_shown(at).startswith("Step 14 of")
    at.button(key="lessons_teaching_musique_wilm_airport").click().run()
    assert not at.exception
    steps = lesson_steps(t.Trace.load(ROOT / "assets" / "traces" / "musique_wilm_airport.json"))
    assert _step_shown(at).startswith(f"Step 1 of {len(steps)}") and len(steps) > 30
    assert at.session_state["teaching"] is True
    assert at.query_params["trace"] == "musique_wilm_airport" and at.query_params["step"] == "1"
    assert at.session_state["index_selected"] == "musique (demo)"  # its index, built when asked (not here)
    assert any("musique demo index is not built yet" in str(i.value) for i in at.info)
    at.button(key="teach_step_next").click().run()
    assert _step_shown(at).startswith("Step 2 of") and at.query_params["step"] == "2"
    # out of teaching mode the address names no lesson step; from the plain page the lesson is one click away too
    at.toggle(key="teaching").set_value(False).run()
    assert not at.exception and "step" not in at.query_params and "trace" not in at.query_params
    at.button(key="lessons_walkthrough").click().run()
    assert _step_shown(at).startswith("Step 1 of 14") and at.query_params["trace"] == "walkthrough"


def test_the_handout_ends_on_the_run_s_teaching_point_and_prints_a_chosen_range(tmp_path: Path) -> None:
    from gear.cli import app
    from gear.diagnosis import CATEGORY_LABELS, diagnose

    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json")
    steps = lesson_steps(trace)
    page = handout.lesson_html(trace)
    point = page.split("<section class='point'", 1)[1]
    d = diagnose(trace)
    assert CATEGORY_LABELS[d.category] in point  # "reasoner hallucination": the diagnosis's own words
    assert all(viz.esc_html(line) in point for line in d.evidence)
    assert "Croatia" in point and "1929" in point
    assert page.index("<section class='point'") > page.rindex("<section class='step'")  # on the last page
    assert "Contents" in page and page.count("class='toc'") == 1
    part = handout.lesson_html(trace, steps=(5, 9))
    assert part.count("<section class='step'") == 5 and f"Step 5 of {len(steps)}" in part
    assert f"Step 4 of {len(steps)}" not in part and "Steps 5–9 of the lesson's 14" in part
    assert "<section class='point'" in part
    assert handout.step_range("5–9", 14) == (5, 9) and handout.step_range("12-", 14) == (12, 14)
    for bad in ("0-3", "9-5", "x", "3-40"):
        with pytest.raises(ValueError, match=r"1 to 14|steps are a range"):
            handout.step_range(bad, 14)
    out = tmp_path / "part.html"
    result = CliRunner().invoke(app, ["export-html", str(ROOT / "assets" / "traces" / "walkthrough.json"), "--out",
                                      str(out), "--steps", "5-9"])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").count("<section class='step'") == 5
    bad = CliRunner().invoke(app, ["export-html", str(ROOT / "assets" / "traces" / "walkthrough.json"), "--steps",
                                   "20-30"])
    assert bad.exit_code == 2 and "steps 1 to 14" in bad.output


def test_a_verdict_is_green_only_when_its_answer_is_the_gold_one() -> None:
    walk = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json")
    reasoned = walk.first(ev.Reasoned)
    start = walk.first(ev.RunStarted)
    assert reasoned is not None and start is not None and reasoned.answerable and reasoned.answer == "Germany"
    said = viz.verdict(reasoned, start.answers)
    assert said.tone == "contradicts" and "not the gold one (1929)" in said.text
    assert viz.verdict(reasoned, []).tone == "unchecked"
    assert viz.verdict(reasoned, ["germany"]).tone == "agrees"
    assert "goes on from here" in lesson_steps(walk)[0].explanation
    ppr = lesson_steps(t.Trace.load(PPR))[0]
    assert "PPR" in ppr.explanation and "GeAR" not in ppr.explanation


def test_the_walkthrough_s_unsupported_verdict_is_no_green_box(studio: dict) -> None:  # noqa: F811
    steps = lesson_steps(t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json"))
    n = next(i for i, s in enumerate(steps, 1) if isinstance(s.event, ev.Reasoned))
    at = _open(studio, trace="walkthrough", step=str(n))
    assert not at.exception
    assert not [s for s in at.success if "Germany" in str(s.value)]
    assert any("Germany" in str(w.value) and "1929" in str(w.value) for w in at.warning)


def test_ask_the_model_again_is_not_offered_on_a_run_that_asks_no_model(studio: dict) -> None:  # noqa: F811
    from studio.pages.ask import run_asks_a_model

    assert run_asks_a_model(studio["trace"]) and not run_asks_a_model(studio["ppr"])
    assert not run_asks_a_model(t.Trace.load(PPR))
