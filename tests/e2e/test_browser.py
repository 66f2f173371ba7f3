"""Real-browser tests of GeAR Studio: Playwright drives Debian's Chromium (never `playwright install`: offline).

The app runs as `make run` would (python -m streamlit run app.py on 127.0.0.1) over a data dir holding a tiny index
built with the real embedder, a QA set, and an LLM replay cache recorded here from a scripted model — so the test
needs no LLM and no network. A passage and a triple carry an XSS payload.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.sessions import studio_server
from tests.scripted_llm import SCRIPT, XSS, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "artifacts" / "screenshots"

QUESTION = "Which sea is the island with Mount Etna the largest island in?"
DOCS = [
    ("Magic Johnson", "Magic Johnson played basketball for Michigan State."),
    ("Mount Etna", "Mount Etna is an active volcano on the island of Sicily."),
    ("Sicily", "Sicily is the largest island in the Mediterranean Sea."),
    ("Paris", "Paris is the capital of France and sits on the Seine."),
    ("Seine", "The Seine flows through Paris into the English Channel."),
    (f"Evil {XSS}", f"Mount Etna {SCRIPT} {XSS} rumbles over the island of Sicily."),
]
TRIPLES = [
    [("Magic Johnson", "played for", "Michigan State")],
    [("Mount Etna", "is", "active volcano"), ("Mount Etna", "located on", "Sicily")],
    [("Sicily", "largest island in", "Mediterranean Sea")],
    [("Paris", "capital of", "France"), ("Paris", "on river", "Seine")],
    [("Seine", "flows into", "English Channel")],
    [("Mount Etna", f"described as {XSS}", SCRIPT)],
]

pytestmark = pytest.mark.e2e


def require_browser() -> None:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install -y chromium chromium-driver fonts-liberation)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install playwright)")
    if missing:
        message = "e2e needs " + " and ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)




@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_browser()
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import Document, load_qa
    from gear.embed import Encoder
    from gear.index import build_index
    from gear.llm import CachedLLM

    data = tmp_path_factory.mktemp("studio") / "data"
    index = data / "indexes" / "tiny"
    encoder = Encoder(Settings().embedder)
    build_index([Document(t, x) for t, x in DOCS], TRIPLES, index, encoder, source={"corpus": "e2e"})
    qa = [{"id": "2hop__e2e", "question": QUESTION, "answer": "Mediterranean Sea",
           "paragraphs": [{"title": "Mount Etna", "paragraph_text": DOCS[1][1], "is_supporting": True},
                          {"title": "Sicily", "paragraph_text": DOCS[2][1], "is_supporting": True}]}]
    (index / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    cache = data.parent / "llm_cache"
    settings = Settings().with_(retriever="hybrid", expand="gear", llm="replay", llm_cache_dir=cache)
    engine = Engine.open(index, Settings(), encoder=encoder)
    q = load_qa(index / "qa.json")[0][0]
    for method in ("gear", "ircot"):  # what the Compare page asks for, recorded
        run_settings = settings.with_(expand=method)
        engine.set_llm(run_settings, CachedLLM(ScriptedLLM(), cache, "record"))
        engine.retrieve(QUESTION, k=10, settings=run_settings, gold=engine.gold_ids(q.gold), answers=q.answers)
    return data


@pytest.fixture(scope="module")
def server(data_dir: Path):
    env = {"GEAR_STUDIO_DATA": str(data_dir), "GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "tiny",
           "GEAR_LLM": "replay", "GEAR_LLM_CACHE_DIR": str(data_dir.parent / "llm_cache")}
    yield from run_server(data_dir, env)


def demo_data(root: Path) -> Path:
    """A data directory holding the walk-through demo index (built the way the app builds it on a fresh clone)."""
    require_browser()
    from studio import demo

    if not demo.DEMOS["walkthrough"].available:
        pytest.skip("walkthrough demo assets are not available yet")
    data = root / "data"
    if demo.is_built("walkthrough"):  # reuse a built copy
        shutil.copytree(demo.index_dir("walkthrough"), data / "indexes" / "walkthrough")
    else:  # a fresh clone: build it the way the app does, before the server starts
        previous = os.environ.get("GEAR_STUDIO_DATA")
        os.environ["GEAR_STUDIO_DATA"] = str(data)
        try:
            demo.ensure_demo_index("walkthrough")
        finally:
            if previous is None:
                os.environ.pop("GEAR_STUDIO_DATA", None)
            else:
                os.environ["GEAR_STUDIO_DATA"] = previous
    return data


# the app as shipped: no LLM settings at all, so the default "recorded, else live" LLM is in force
AS_SHIPPED = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "walkthrough", "GEAR_LLM": "",
              "GEAR_LLM_CACHE_DIR": "", "GEAR_PROMPTS": "", "GEAR_LLM_BASE_URL": "", "OPENAI_API_KEY": ""}


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory):
    """The app on the bundled walk-through demo with its default LLM: the bundled recordings answer the demo."""
    data = demo_data(tmp_path_factory.mktemp("demo"))
    yield from run_server(data, {**AS_SHIPPED, "GEAR_STUDIO_DATA": str(data)})


def run_server(data_dir: Path, extra_env: dict[str, str]):
    """The app as `make run` starts it, over `data_dir` (tests.e2e.sessions.studio_server); a start that fails fails
    the test with the server's log."""
    try:
        with studio_server(data_dir, extra_env, data_dir.parent / "streamlit.log") as url:
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def browser_page(tmp_path: Path):
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
            viewport={"width": 1500, "height": 1000},
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        requests: list[str] = []
        dialogs: list[str] = []
        page.on("request", lambda r: requests.append(r.url))

        def on_dialog(d) -> None:
            dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)
        page.requests, page.dialogs = requests, dialogs  # type: ignore[attr-defined]
        yield page
        ctx.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def graph_frames(page) -> list:
    return [f for f in page.frames if f != page.main_frame and f.evaluate("typeof network !== 'undefined'")]


def wait_for_graph_with(page, node: str, timeout_s: float) -> float:
    """Poll until a vis network whose nodes include `node` has drawn its canvas; returns perf_counter() then."""
    deadline = time.perf_counter() + timeout_s
    js = f"""() => typeof network !== 'undefined' && !!document.querySelector('#mynetwork canvas')
                 && nodes.get().some(n => String(n.label).toLowerCase().startsWith({json.dumps(node)}))"""
    while time.perf_counter() < deadline:
        for f in page.frames:
            if f == page.main_frame:
                continue
            try:
                if f.evaluate(js):
                    return time.perf_counter()
            except Exception:  # a frame being replaced
                continue
        page.wait_for_timeout(50)
    raise AssertionError(f"no graph with node {node!r} within {timeout_s} s")


def assert_local(requests: list[str]) -> None:
    outside = [u for u in requests if not (u.startswith("http://127.0.0.1") or u.startswith("data:")
                                           or u.startswith("blob:") or u.startswith("about:"))]
    assert outside == []


def test_ask_walkthrough_graph_pages_and_xss(server: str, browser_page) -> None:
    page = browser_page
    page.goto(server)
    page.get_by_label("Question", exact=True).wait_for(timeout=30_000)
    bundled = sorted((ROOT / "assets" / "traces").glob("walkthrough*.json"))
    if bundled:  # the demo opens with the paper's walk-through question and its recorded run, replayed
        page.frame_locator("iframe").first.locator("#mynetwork canvas").wait_for(timeout=60_000)
        assert page.get_by_label("Question", exact=True).input_value().startswith("When did the location of the basil")
        page.wait_for_timeout(2500)
        page.locator("iframe").first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        page.screenshot(path=str(SHOTS / "00_walkthrough_example.png"))
        page.evaluate("window.scrollTo(0, 0)")
    # the page loads the index and embedder in the background and says when they are ready
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    page.get_by_label("Question", exact=True).fill(QUESTION)
    page.get_by_label("Question", exact=True).press("Enter")
    page.wait_for_timeout(800)
    started = time.perf_counter()
    page.get_by_role("button", name="Ask", exact=True).click()
    first_graph_s = wait_for_graph_with(page, "mount etna", 60) - started
    page.get_by_text("first graph drawn").first.wait_for(timeout=60_000)  # written when the run has finished
    total_s = time.perf_counter() - started
    (SHOTS.parent).mkdir(parents=True, exist_ok=True)
    server_side = page.get_by_text("first graph drawn").first.inner_text()
    timing = {"ask_to_first_graph_in_browser_s": round(first_graph_s, 2),
              "ask_to_run_finished_in_browser_s": round(total_s, 2), "server": server_side,
              "load_average": os.getloadavg()[0]}
    (SHOTS.parent / "ask_timing.json").write_text(json.dumps(timing))
    print("Ask timing:", timing)
    for n in (1, 2):
        assert page.get_by_text(f"Iteration {n}", exact=True).count() >= 1
    for module in ("Base retrieval", "tripleLink", "Graph expansion", "Fusion", "Gist memory", "Reasoner",
                   "Rewriter"):
        assert page.get_by_text(module).count() >= 1, module
    page.wait_for_timeout(2500)
    frames = graph_frames(page)
    assert len(frames) == 2
    for f in frames:
        assert f.evaluate("network.body.data.nodes.length") >= 3
        # tooltips are element fragments built from escaped text: the payload is text, never markup
        bad = f.evaluate("""() => edges.get().concat(nodes.get()).filter(x => x.title instanceof Element)
                 .map(x => x.title.querySelectorAll('img,script').length).reduce((a, b) => a + b, 0)""")
        assert bad == 0
    texts = frames[0].evaluate("() => edges.get().map(e => e.title instanceof Element ? e.title.textContent : '')")
    assert any(XSS in t for t in texts)  # shown as text in the tooltip
    assert page.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0
    shot(page, "01_ask_top")
    page.locator("iframe").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / "01b_ask_iteration_graph.png"))
    page.get_by_text("Final ranking").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / "01c_ask_result.png"))
    # the graph on its own, larger
    page.frame_locator("iframe").first.locator("#mynetwork").screenshot(path=str(SHOTS / "02_beam_graph.png"))
    # teaching mode
    page.get_by_text("Teaching mode").click()
    page.get_by_role("button", name="Next ▶").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    shot(page, "03a_teaching_first_step")
    for _ in range(3):
        page.get_by_role("button", name="Next ▶").click()
        page.wait_for_timeout(700)
    page.wait_for_timeout(2500)
    shot(page, "03_teaching_graph_step")
    for name, label in (("04_compare", "Compare"), ("05_evaluate", "Evaluate"), ("06_traces", "Traces"),
                        ("07_index", "Index")):
        page.get_by_role("link", name=label).click()
        page.wait_for_timeout(2500)
        page.get_by_role("heading", name=label, exact=False).first.wait_for(timeout=30_000)
        assert page.locator("[data-testid='stException']").count() == 0
        shot(page, name)
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]


def test_compare_and_index_neighbourhood(server: str, browser_page) -> None:
    page = browser_page
    page.goto(server)
    page.get_by_role("button", name="Ask", exact=True).wait_for(timeout=30_000)
    page.get_by_role("link", name="Compare").click()
    page.get_by_role("button", name="Compare").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Compare").click()
    page.get_by_text("Recall and cost per method").wait_for(timeout=240_000)
    page.wait_for_timeout(1500)
    shot(page, "08_compare_results")
    page.get_by_role("link", name="Index").click()
    page.get_by_label("Find an entity").wait_for(timeout=30_000)
    page.get_by_label("Find an entity").fill("mount etna")
    page.get_by_label("Find an entity").press("Enter")
    page.wait_for_timeout(3500)
    frames = graph_frames(page)
    assert frames and frames[-1].evaluate("network.body.data.nodes.length") >= 3
    shot(page, "09_index_stats")
    page.locator("iframe").last.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / "10_index_neighbourhood.png"))
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]


def test_chromium_present_in_ci() -> None:
    if os.environ.get("CI", "").lower() == "true":
        assert shutil.which("chromium") or Path(CHROMIUM).exists(), "CI must install chromium for e2e tests"


def test_demo_walkthrough_question_on_replay_llm(demo_server: str, browser_page) -> None:
    """The demo as shipped: the paper's question is ready; Ask replays the recorded local-model answers."""
    from studio import demo

    if not (ROOT / "assets" / "traces" / "walkthrough.json").is_file():
        pytest.skip("no recorded walk-through run yet (assets/llm_cache lacks its answers)")
    page = browser_page
    page.goto(demo_server)
    question = page.get_by_label("Question", exact=True)
    question.wait_for(timeout=30_000)
    assert question.input_value() == demo.WALKTHROUGH_QUESTION
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    started = time.perf_counter()
    page.get_by_role("button", name="Ask", exact=True).click()
    page.get_by_text("first graph drawn").first.wait_for(timeout=180_000)
    total_s = time.perf_counter() - started
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("The run stopped").count() == 0
    frames = graph_frames(page)
    assert frames and all(f.evaluate("network.body.data.nodes.length") > 3 for f in frames)
    labels = frames[0].evaluate("() => nodes.get().map(n => String(n.label))")
    assert any(label.startswith("Bremen Cathedral") for label in labels)
    server_side = page.get_by_text("first graph drawn").first.inner_text()
    (SHOTS.parent / "ask_timing_demo.json").write_text(json.dumps(
        {"demo": "walkthrough", "ask_to_run_finished_in_browser_s": round(total_s, 2), "server": server_side,
         "load_average": os.getloadavg()[0]}))
    print("demo timing:", server_side, f"; run finished in the browser after {total_s:.2f} s")
    page.locator("iframe").first.scroll_into_view_if_needed()
    page.wait_for_timeout(2500)
    page.screenshot(path=str(SHOTS / "11_demo_walkthrough_live.png"))
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]


LIVE_QUESTION = "Which saint is the Bremen Cathedral dedicated to?"


@pytest.mark.llm
def test_a_question_nobody_recorded_runs_live_and_draws_its_graph(tmp_path: Path, browser_page) -> None:
    """On a fresh clone the default LLM answers what is recorded at once and asks the embedded model for the rest:
    a new question runs live, its text streams into the page while the model writes, and its graph is drawn."""
    from gear.llm.llama_server import llama_server_available

    if not llama_server_available():
        if os.environ.get("GEAR_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail("llama.cpp's llama-server is not built but GEAR_REQUIRE_LOCAL_LLM=1 (run make llm)")
        pytest.skip("the embedded local LLM is not installed (make llm)")
    data = demo_data(tmp_path / "live")
    # one iteration keeps the live run to four model calls (≈ 1–2 min on 2 cores)
    for url in run_server(data, {**AS_SHIPPED, "GEAR_STUDIO_DATA": str(data), "GEAR_MAX_ITERATIONS": "1",
                                 "GEAR_CACHE_DIR": str(tmp_path / "gear-cache")}):  # its own llama-server
        page = browser_page
        page.goto(url)
        page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
        question = page.get_by_label("Question", exact=True)
        question.fill(LIVE_QUESTION)
        question.press("Enter")
        page.get_by_role("button", name="Ask", exact=True).click()
        # streamed text exists only while a model writes (a trace never stores it): this run is live
        page.get_by_text("the model is writing").first.wait_for(timeout=300_000)
        # shown by the live run only, when it ends: the time its first beam graph was drawn
        page.get_by_text("first graph drawn").first.wait_for(timeout=900_000)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.get_by_text("The run stopped").count() == 0
        assert page.get_by_text("answered by the model").count() > 0  # each LLM answer's origin is shown
        frames = graph_frames(page)
        assert frames and any(f.evaluate("network.body.data.nodes.length") > 0 for f in frames)
        shot(page, "12_live_question")
        assert page.dialogs == []  # type: ignore[attr-defined]
        assert_local(page.requests)  # type: ignore[attr-defined]
        recorded = list((data / "llm_cache").glob("*.json"))
        assert recorded, "the live answers are recorded into the user's cache"
