"""AppTest for every page of GeAR Studio, on a tiny index (fake encoder) and an LLM replay cache recorded here from a
scripted model — no model, no network."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import Document
from gear.events import (
    Answered,
    BeamsSearched,
    FinalRanking,
    LLMCalled,
    PassagesAdded,
    PPRRanked,
    PPRSeeded,
    Reasoned,
    RunFinished,
    RunStarted,
    ThoughtWritten,
)
from gear.index import build_index
from gear.llm import CachedLLM
from gear.llm.embedded import EmbeddedLLM
from gear.trace import Trace
from studio.core.safe import WORD_JOINER
from tests.conftest import TINY_DOCS, TINY_TRIPLES, FakeEncoder
from tests.scripted_llm import SCRIPT, XSS, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")

QUESTION = "Which sea is the island with Mount Etna the largest island in?"

DOCS = [*TINY_DOCS, (f"Evil {XSS}", f"Mount Etna {SCRIPT} {XSS} rumbles over the island of Sicily.")]
TRIPLES = [*TINY_TRIPLES, [("Mount Etna", f"described as {XSS}", SCRIPT)]]




def no_local_model(*args, **kwargs) -> None:
    raise AssertionError("the app tests never start the embedded model (a prompt missed the recorded answers)")


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A data dir with a tiny index (+ its QA set) and a replay cache recorded for the default Ask settings.

    A demo build a test's page queued and that has not started when the test ends is dropped: it would start after
    the test's data folder and encoder are restored, so build a real demo into the checkout's data/ with the real
    embedder (minutes, holding the demo build lock while later tests wait on it — how test_app_waiting failed in a
    fresh clone, where no demo is built yet)."""
    from studio.core import resources

    data = tmp_path / "data"
    index = data / "indexes" / "tiny"
    build_index([Document(t, x) for t, x in DOCS], [list(t) for t in TRIPLES], index, FakeEncoder(),
                source={"corpus": "tiny"})
    qa = [{"id": "2hop__1", "question": QUESTION, "answer": "Mediterranean Sea",
           "paragraphs": [{"title": "Mount Etna", "paragraph_text": DOCS[2][1], "is_supporting": True},
                          {"title": "Sicily", "paragraph_text": DOCS[3][1], "is_supporting": True}]}]
    (index / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    cache = tmp_path / "llm_cache"
    engine = Engine.open(index, Settings(), encoder=FakeEncoder())
    settings = Settings().with_(retriever="hybrid", expand="gear", llm="replay", llm_cache_dir=cache)
    engine.set_llm(settings, CachedLLM(ScriptedLLM(), cache, "record"))
    from gear.data.questions import load_qa

    q = load_qa(index / "qa.json")[0][0]
    recorded = engine.retrieve(QUESTION, k=10, settings=settings, gold=engine.gold_ids(q.gold), answers=q.answers)
    # the peers: IRCoT's reasoning and QA prompts recorded too; PPR needs no LLM (its graph is cached in <index>/ppr/)
    ircot = engine.retrieve(QUESTION, k=10, settings=settings.with_(expand="ircot"), gold=engine.gold_ids(q.gold),
                            answers=q.answers)
    ppr = engine.retrieve(QUESTION, k=10, settings=settings.with_(retriever="dense", expand="ppr"),
                          gold=engine.gold_ids(q.gold), answers=q.answers)
    monkeypatch.setattr(EmbeddedLLM, "__init__", no_local_model)
    monkeypatch.setitem(resources.ENCODER_FACTORIES, "fake-hash-64", FakeEncoder)
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(data))
    monkeypatch.setenv("GEAR_STUDIO_BUILD_DEMOS", "0")
    monkeypatch.setenv("GEAR_LLM_CACHE_DIR", str(cache))
    monkeypatch.setenv("GEAR_LLM", "replay")
    yield {"data": data, "index": index, "cache": cache, "trace": recorded.trace, "ircot": ircot.trace,
           "ppr": ppr.trace}
    with resources._builds_lock:
        resources._queue.clear()


def start(studio: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["index_selected"] = "tiny"
    at.session_state["ask_ready"] = True
    return at.run()


def statuses(at: AppTest) -> list[str]:
    """Labels of the st.status blocks (one per iteration) anywhere in the page."""
    found: list[str] = []

    def walk(node) -> None:
        if type(node).__name__ == "Status":
            found.append(node.label)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return [label for label in found if label.startswith("Iteration")]


def iframes(at: AppTest) -> list[str]:
    return [el.proto.srcdoc for el in at.get("iframe")]


def test_every_page_renders_without_exception(studio: dict) -> None:
    at = start(studio)
    assert not at.exception
    assert not at.error
    for page in ("app_pages/compare.py", "app_pages/evaluate.py", "app_pages/traces.py", "app_pages/index.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        assert not at.error, (page, [e.value for e in at.error])


def test_ask_runs_gear_on_replay_llm_and_shows_every_step(studio: dict) -> None:
    at = start(studio)
    at.selectbox(key="example").set_value(QUESTION).run()
    assert at.text_input(key="question").value == QUESTION
    at.button(key="ask").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    recorded: Trace = studio["trace"]
    n_iter = len(recorded.iterations())
    assert n_iter == 2
    assert statuses(at) == [f"Iteration {i}" for i in range(1, n_iter + 1)]
    text = " ".join(str(m.value) for m in at.markdown)
    for module in ("Base retrieval", "Reader → proximal triples", "tripleLink", "Graph expansion", "Fusion",
                   "Gist memory", "Reasoner", "Rewriter", "Final ranking", "Final answer:"):
        assert module in text, module
    # one beam graph per iteration, each a self-contained vis network with the expected entities
    graphs = iframes(at)
    beams = recorded.of(BeamsSearched)
    assert len(graphs) == len(beams) == n_iter
    from gear import viz

    for page, event in zip(graphs, beams, strict=True):
        assert "new vis.Network" in page
        assert viz.outside_urls(page) == []
        expected = viz.beam_graph(event)
        nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S).group(1))
        entities = [n for n in nodes if not n.get("edgeLabel")]  # each edge's label is a box of its own
        assert len(entities) == expected.number_of_nodes() > 0
        assert len(nodes) - len(entities) == expected.number_of_edges()
    # untrusted text never reaches markdown unescaped
    for m in at.markdown:
        assert "<img" not in str(m.value) and "<script" not in str(m.value)
    # the run is kept for replay, with tokens/time charts at the end
    assert at.session_state["trace"].of(Reasoned)
    assert len(at.get("plotly_chart")) == 2
    assert at.metric


def test_replay_teaching_mode_steps_through_modules(studio: dict) -> None:
    path = studio["data"] / "traces" / "run.json"
    studio["trace"].save(path)
    at = start(studio)
    at.selectbox(key="trace_pick").set_value("saved: run").run()
    at.button(key="replay_pick").click().run()
    assert not at.exception
    assert len(statuses(at)) == 2
    at.toggle(key="teaching").set_value(True).run()
    assert not at.exception
    titles = []
    for _ in range(40):
        titles += [m.value for m in at.markdown if "teach-title" in str(m.value)]
        if at.button(key="teach_step_next").disabled:
            break
        at.button(key="teach_step_next").click().run()
        assert not at.exception
    joined = " ".join(titles)
    for name in ("Base retrieval", "Reader", "tripleLink", "Graph expansion", "Fusion", "Gist memory", "Reasoner",
                 "Rewriter", "Answer"):
        assert name in joined, name
    at.button(key="teach_step_back").click().run()
    assert not at.exception


def test_compare_runs_several_methods(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    at.multiselect(key="cmp_methods").set_value(["BM25", "Hybrid", "Hybrid + NaiveGE"]).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    frames = [df.value for df in at.dataframe]
    # answers, recall and cost; gold entry; then the diagnosis (test_app_diagnosis): the methods side by side and each
    # method's stage table
    assert len(frames) == 2 + 1 + 3
    assert len(at.table) == 1  # the rankings side by side: a static table, titles wrap
    grid = at.table[0].value
    grid = grid.data if hasattr(grid, "data") else grid  # a Styler (gold cells highlighted)
    assert list(grid.columns) == ["#", "BM25", "Hybrid", "Hybrid + NaiveGE"]
    assert grid["#"].tolist() == list(range(1, at.slider(key="cmp_k").value + 1))
    results = at.session_state["cmp_results"][2]
    for label in ("BM25", "Hybrid", "Hybrid + NaiveGE"):  # each column is that run's final ranking, gold marked
        ranking = results[label].first(FinalRanking).passages
        # the cells are Markdown, the titles in them escaped (studio.core.safe.md_cells): read as a reader sees them
        shown = [html.unescape(c).replace(WORD_JOINER, "") for c in grid[label] if c]
        assert shown == [("★ " if p.gold else "") + p.title for p in ranking][:len(grid)]
        assert not any("<" in c for c in grid[label])  # the payload title is no tag in the table's Markdown
    gold = frames[1].set_index("gold passage")
    assert sorted(gold.index) == ["Mount Etna", "Sicily"]  # titles from the QA set, retrieved or not


def test_compare_names_gold_passages_no_method_retrieved(studio: dict) -> None:
    from gear.data.questions import load_qa
    from studio.pages.compare import gold_titles

    engine = Engine.open(studio["index"], Settings(), encoder=FakeEncoder())
    q = load_qa(studio["index"] / "qa.json")[0][0]
    assert sorted(gold_titles(engine, q).values()) == ["Mount Etna", "Sicily"]
    assert gold_titles(engine, None) == {}


def ask_with(at: AppTest, expand: str) -> AppTest:
    at.selectbox(key="method").set_value(expand).run()
    at.selectbox(key="example").set_value(QUESTION).run()
    at.button(key="ask").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def shown_text(at: AppTest) -> str:
    return " ".join(str(m.value) for group in (at.markdown, at.caption, at.info, at.success, at.warning)
                    for m in group)


def test_ask_shows_a_ppr_run_step_by_step(studio: dict) -> None:
    at = ask_with(start(studio), "ppr")
    trace: Trace = at.session_state["trace"]
    assert trace.first(RunStarted).method == "ppr"
    assert statuses(at) == ["Iteration 1"]
    text = shown_text(at)
    for section in ("Base retrieval", "PPR seeds", "Seed entities", "Personalized PageRank",
                    "Passages ranked by PPR score", "Final ranking"):
        assert section in text, section
    assert not trace.of(LLMCalled)  # no filter: PPR asks no LLM
    # the seed entities' table and the ranked passages, gold ★ among them
    seeded, ranked = trace.first(PPRSeeded), trace.first(PPRRanked)
    assert seeded is not None and ranked is not None and ranked.entities
    frames = [df.value for df in at.dataframe]
    seeds = next(f for f in frames if "seed entity" in f.columns)
    assert set(seeds["seed entity"]) == {x.name for x in seeded.entities}
    assert any("gold" in f.columns and "★" in set(f["gold"]) and "score" in f.columns for f in frames)
    # the graph: one self-contained vis network with the walk's entities (seeds highlighted) and the ranked passages
    graphs = [page for page in iframes(at) if "new vis.Network" in page]
    assert len(graphs) == 1
    page = graphs[0]
    from gear import viz

    assert viz.outside_urls(page) == []
    drawn = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S).group(1))
    nodes = [n for n in drawn if not n.get("edgeLabel")]  # each labelled edge's label is a box of its own
    assert len(nodes) == viz.ppr_graph(ranked, seeded).number_of_nodes() == len(ranked.entities) + len(ranked.passages)
    assert sum(1 for n in nodes if n["color"]["background"] == viz.SEED_COLOUR) == len(seeded.entities)
    for node in nodes:
        assert "<img" not in node["label"] and "<script" not in node["label"]
    assert "seed entity (from the matched facts)" in page  # the legend
    for m in at.markdown:
        assert "<img" not in str(m.value) and "<script" not in str(m.value)


def test_ask_shows_an_ircot_run_thought_by_thought(studio: dict) -> None:
    at = ask_with(start(studio), "ircot")
    trace: Trace = at.session_state["trace"]
    thoughts = trace.of(ThoughtWritten)
    assert [t.final for t in thoughts] == [False, True]
    assert statuses(at) == ["Iteration 1", "Iteration 2"]
    text = shown_text(at)
    for section in ("Base retrieval", "IRCoT retrieval → collection", "IRCoT reasoning step", "Thought:",
                    "Final thought:", "Chain of thought", "Final ranking", "Final answer:"):
        assert section in text, section
    assert "Mediterranean Sea" in " ".join(str(m.value) for m in at.success)
    # the thought carries HTML: it shows as text
    for group in (at.markdown, at.info, at.success):
        for m in group:
            assert "<img" not in str(m.value) and "<script" not in str(m.value)
    added = trace.of(PassagesAdded)
    assert len(added) == 2 and added[0].passages
    assert len(at.get("plotly_chart")) == 2  # tokens and time


def test_replayed_peer_runs_teach_their_steps(studio: dict) -> None:
    for name in ("ppr", "ircot"):
        studio[name].save(studio["data"] / "traces" / f"{name}.json")
    at = start(studio)
    at.toggle(key="teaching").set_value(True).run()
    taught = {"ppr": ("PPR · the facts matched to the query", "PPR · the seeds", "PPR · after the walk",
                      "PPR · the passages ranked"),
              "ircot": ("IRCoT retrieval", "IRCoT thought", "Answer")}
    for name, expected in taught.items():
        at.toggle(key="teaching").set_value(False).run()
        at.selectbox(key="trace_pick").set_value(f"saved: {name}").run()
        at.button(key="replay_pick").click().run()
        at.toggle(key="teaching").set_value(True).run()
        assert not at.exception
        titles = []
        for _ in range(20):
            titles += [m.value for m in at.markdown if "teach-title" in str(m.value)]
            if at.button(key="teach_step_next").disabled:
                break
            at.button(key="teach_step_next").click().run()
            assert not at.exception
        for title in expected:
            assert title in " ".join(titles), (name, title)


def test_compare_runs_gear_naivege_ppr_and_ircot(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    methods = ["GeAR (hybrid)", "Hybrid + NaiveGE", "PPR (HippoRAG 2)", "IRCoT (hybrid)"]
    at.multiselect(key="cmp_methods").set_value(methods).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    results = at.session_state["cmp_results"][2]
    assert list(results) == methods and all(isinstance(r, Trace) for r in results.values())
    frames = [df.value for df in at.dataframe]
    # answers, recall and cost; gold entry; the diagnosis (as above); the rankings
    assert len(frames) == 2 + 1 + len(methods) and len(at.table) == 1
    cost = next(f for f in frames if "LLM calls" in f.columns).set_index("method")
    for label in methods:  # each method's answer and EM, first
        answered = results[label].first(Answered)
        assert cost.loc[label, "answer"] == (answered.answer if answered else "—")
    assert list(cost.columns[:5]) == ["answer", "EM", "R@5", "R@10", "R@15"]
    assert cost.loc["GeAR (hybrid)", "EM"] == "1" and cost.loc["Hybrid + NaiveGE", "answer"] == "—"
    assert cost.loc["Hybrid + NaiveGE", "EM"] == "—"  # never "None"
    assert list(cost.index) == methods
    for label in methods:
        trace = results[label]
        assert cost.loc[label, "LLM calls"] == len(trace.of(LLMCalled))
        assert cost.loc[label, "LLM tokens"] == sum(trace.tokens())
        assert cost.loc[label, "LLM s"] == round(trace.cost().model_seconds, 1)
        assert cost.loc[label, "LLM answers"] == (trace.cost().origin() or "—")
        assert cost.loc[label, "time (s)"] == round(trace.first(RunFinished).total_ms / 1000, 2)
    assert cost.loc["PPR (HippoRAG 2)", "LLM calls"] == 0 == cost.loc["Hybrid + NaiveGE", "LLM calls"]
    assert cost.loc["IRCoT (hybrid)", "LLM calls"] > 0 and cost.loc["GeAR (hybrid)", "LLM tokens"] > 0
    gold = next(f for f in frames if "gold passage" in f.columns)
    assert set(methods) <= set(gold.columns) and len(gold) == 2
    assert (gold["PPR (HippoRAG 2)"] != "—").all()  # both gold passages are in PPR's top k on the tiny index


def test_evaluate_saves_and_charts_a_report(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["BM25"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    saved = list((studio["data"] / "evals").glob("*.json"))
    assert len(saved) == 1
    from studio.core.paths import shown

    where = shown(studio["data"] / "evals")  # the data folder in use, wherever it is (not always ./data)
    assert f"Saved 1 report to {where}/" in " ".join(s.value for s in at.success), [s.value for s in at.success]
    report = json.loads(saved[0].read_text())
    assert set(report["recall"]) == {"5", "10", "15"}
    assert at.get("plotly_chart")
    # the report is named as a person reads it (its file name kept in the last column), and a
    # method that does not answer shows "—" and why, not "None"
    picker = at.multiselect(key="eval_show")
    assert picker.value == [saved[0].stem]
    title = picker.format_func(saved[0].stem)
    assert re.fullmatch(r"tiny · BM25 · \d{4}-\d{2}-\d{2} \d{2}:\d{2}", title), title
    table = next(t for t in at.dataframe if "R@5" in t.value.columns)
    assert table.value.loc[0, "report"] == title and table.value.loc[0, "file"] == saved[0].name
    assert (table.value.loc[0, "EM"], table.value.loc[0, "F1"]) == ("—", "—")  # a None cell would read "None"
    assert any("EM / F1 “—”: BM25 — retrieval only: no answer to score" in str(c.value) for c in at.caption)


def test_the_results_tab_shows_the_evaluation_just_run_not_the_ones_it_showed_before(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["BM25"]).run()
    at.button(key="eval_run").click().run()
    (first,) = (studio["data"] / "evals").glob("*.json")
    assert at.multiselect(key="eval_show").value == [first.stem]
    at.multiselect(key="eval_methods").set_value(["Hybrid"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    (second,) = set((studio["data"] / "evals").glob("*.json")) - {first}
    assert at.multiselect(key="eval_show").value == [second.stem]


def test_evaluate_offers_the_peers_and_reports_ppr(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    assert {"PPR (HippoRAG 2)", "IRCoT (hybrid)"} <= set(at.multiselect(key="eval_methods").options)
    at.multiselect(key="eval_methods").set_value(["PPR (HippoRAG 2)"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    (saved,) = (studio["data"] / "evals").glob("*.json")
    report = json.loads(saved.read_text())
    assert report["method"] == "ppr" and report["label"] == "PPR (HippoRAG 2)"
    from gear import viz

    assert viz.report_label(report) == "Dense + PPR"
    assert at.get("plotly_chart")


def test_traces_page_filters_tags_and_opens(studio: dict) -> None:
    path = studio["data"] / "traces" / "run.json"
    studio["trace"].save(path)
    at = start(studio)
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception
    form_multiselects = [m for m in at.multiselect if m.label == "Categories"]
    form_multiselects[0].set_value(["graph quality"])
    next(t for t in at.text_area if t.label == "Note").input("beam missed Sicily")
    at.button[[b.label for b in at.button].index("Save tags")].click().run()
    assert not at.exception
    tags = json.loads((path.parent / "run.tags.json").read_text())
    assert tags["categories"] == ["graph quality"] and tags["note"] == "beam missed Sicily"
    assert at.get("plotly_chart")
    at.button(key="tr_open").click().run()
    assert not at.exception
    assert statuses(at) == ["Iteration 1", "Iteration 2"]


def test_index_page_shows_statistics_and_neighbourhood(studio: dict) -> None:
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert [m.value for m in at.metric][:2] == ["9", "11"]
    at.text_input(key="ix_entity_q").input("etna").run()
    assert at.selectbox(key="ix_entity").value == "mount etna"
    page = iframes(at)[-1]
    assert "new vis.Network" in page and "mount etna" in page
    assert "&lt;img" in page or "\\u0026lt;img" in page  # the XSS triple is escaped in the tooltip


def test_first_visit_opens_the_walkthrough_question_with_its_bundled_run(studio: dict,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.core import demos, paths

    monkeypatch.delenv("GEAR_STUDIO_INDEX", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["index_selected"] = "tiny"
    at.run()
    assert not at.exception
    assert at.text_input(key="question").value == demos.WALKTHROUGH_QUESTION
    bundled = sorted(paths.BUNDLED_TRACES.glob("walkthrough*.json"))
    assert bundled, "no bundled walk-through trace in assets/traces: the demo's first page would open empty"
    assert statuses(at)  # the recorded run replays at once, without an LLM
    assert any("new vis.Network" in page for page in iframes(at))
    assert "Bremen Cathedral" in " ".join(iframes(at))


def test_an_app_started_on_another_index_opens_on_its_own_examples(studio: dict,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """GEAR_STUDIO_INDEX names the index to open: the walk-through question and its run belong to another one."""
    monkeypatch.setenv("GEAR_STUDIO_INDEX", "tiny")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.text_input(key="question").value in ("", None)
    assert not statuses(at) and not iframes(at)
    assert at.selectbox(key="example").value  # the tiny index's own example questions are offered


def test_index_page_builds_an_index_from_uploaded_corpus_and_openie(studio: dict,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.core import resources

    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    corpus = json.dumps([{"title": t, "text": x} for t, x in DOCS[:3]]).encode()
    openie = json.dumps({"docs": [{"title": t, "text": x, "extracted_triples": [list(tr) for tr in trs]}
                                  for (t, x), trs in zip(DOCS[:3], TRIPLES[:3], strict=True)]}).encode()
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("uploaded").run()
    at.file_uploader(key="ix_corpus").set_value([("corpus.json", corpus, "application/json")]).run()
    at.file_uploader(key="ix_openie").set_value(("openie.json", openie, "application/json")).run()
    at.button(key="ix_build").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    from gear.index import Manifest

    m = Manifest.read(studio["data"] / "indexes" / "uploaded")
    assert (m.n_passages, m.n_triples) == (3, 5)
    assert at.get("progress")[-1].value == 100


def test_index_page_reports_a_failed_extraction_and_writes_nothing(studio: dict) -> None:
    """Without an OpenIE file the sidebar's LLM extracts the triples: here it may only replay, and nothing was
    recorded for extraction, so the build stops with its status and the model's one-line error."""
    corpus = json.dumps([{"title": t, "text": x} for t, x in DOCS[:2]]).encode()
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("unrecorded").run()
    at.file_uploader(key="ix_corpus").set_value([("corpus.json", corpus, "application/json")]).run()
    at.button(key="ix_build").click().run()
    assert not at.exception
    assert [(box.label, box.state) for box in at.get("status")] == [("Extraction failed", "error")]
    assert len(at.error) == 1 and "no recorded answer" in at.error[0].value and "\n" not in at.error[0].value
    assert not (studio["data"] / "indexes" / "unrecorded" / "manifest.json").exists()
    assert [b.key for b in at.button if b.key == "ix_cancel"] == []  # the extraction's Cancel is gone with it


def test_index_page_offers_raw_text_extraction() -> None:
    """The Index page asks the engine's extraction bridge whether it takes a progress callback (a stale module name
    made it report "not available in this build")."""
    from studio.pages.index import extraction_available, raw_text_note

    assert extraction_available()
    assert raw_text_note().startswith("Without an OpenIE file")


def result_box_text(at: AppTest) -> list[str]:
    """The values of every element inside the bordered box headed "Result" (the run's final ranking and answer)."""
    def values(node) -> list[str]:
        out = [str(node.value)] if hasattr(node, "value") and not hasattr(node, "children") else []
        for child in getattr(node, "children", {}).values():
            out.extend(values(child))
        return out

    def find(node):
        children = list(getattr(node, "children", {}).values())
        if any(type(c).__name__ in ("Subheader", "Heading") and str(getattr(c, "value", "")) == "Result"
               for c in children):
            return node
        for child in children:
            found = find(child)
            if found is not None:
                return found
        return None

    box = find(at.main)
    assert box is not None, "no Result box"
    return values(box)


@pytest.mark.parametrize("expand", ["gear", "ircot"])
def test_the_answer_calls_llm_line_is_shown_in_the_result_box(studio: dict, expand: str) -> None:
    # the QA call comes after the final ranking: its "LLM · qa" line belongs with the answer, not below the page
    at = ask_with(start(studio), expand)
    inside = result_box_text(at)
    assert any(v.startswith("LLM · qa") for v in inside), inside
    assert any(v.startswith("**Final answer:**") for v in inside)


def origins_line(at: AppTest) -> list[str]:
    return [str(c.value) for c in at.sidebar.caption if "LLM answers" in str(c.value)]


def test_the_sidebar_says_who_answered_the_run_just_made(studio: dict) -> None:
    # the sidebar is drawn before a run starts: its line must still describe the run just made
    at = start(studio)
    at.session_state["trace"] = None  # no bundled run in this data dir; start from none
    at = ask_with(at, "gear")
    calls = len(at.session_state["trace"].of(LLMCalled))
    assert calls and origins_line(at) == [f"This session's last run — LLM answers: {calls} recorded"]
    at = ask_with(at, "ppr")  # PPR asks no LLM: the line goes instead of describing the GeAR run
    assert origins_line(at) == []


def test_the_read_order_is_a_sidebar_choice_that_reaches_the_run(studio: dict) -> None:
    """The paper leaves the order of passages in a read open: rank (default, as recorded) or cache (docs/results.md)."""
    at = start(studio)
    assert at.selectbox(key="read_order").value == "rank"
    at.selectbox(key="read_order").set_value("cache").run()
    at.selectbox(key="example").set_value(QUESTION).run()
    at.button(key="ask").click().run()
    assert not at.exception
    trace = at.session_state["trace"]
    assert trace.events[0].settings["read_order"] == "cache"


def test_the_peers_knobs_unfold_when_a_peer_is_the_expansion(studio: dict) -> None:
    def peers_box_open(at: AppTest) -> bool:
        box = next(e for e in at.sidebar.expander if e.label == "PPR and IRCoT knobs")
        return bool(box.proto.expanded)

    at = start(studio)
    at.selectbox(key="method").set_value("gear").run()
    assert not peers_box_open(at)
    for peer in ("ppr", "ircot"):
        at.selectbox(key="method").set_value(peer).run()
        assert peers_box_open(at), peer
