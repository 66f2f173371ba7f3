"""Real-browser tests of GeAR Studio: Playwright drives Debian's Chromium (never `playwright install`: offline).

The app runs as `make run` would (python -m streamlit run app.py on 127.0.0.1) over a data dir holding a tiny index
built with the real embedder, a QA set, and an LLM replay cache recorded here from a scripted model — so the test
needs no LLM and no network. A passage and a triple carry an XSS payload.
"""

from __future__ import annotations

import json
import os
import re
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
    from gear.data.corpus import Document
    from gear.data.questions import load_qa
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
    from studio.core import demos, paths

    if not demos.DEMOS["walkthrough"].available:
        pytest.skip("walkthrough demo assets are not available yet")
    data = root / "data"
    if demos.is_built("walkthrough"):  # reuse a built copy
        shutil.copytree(paths.index_dir("walkthrough"), data / "indexes" / "walkthrough")
    else:  # a fresh clone: build it the way the app does, before the server starts
        previous = os.environ.get("GEAR_STUDIO_DATA")
        os.environ["GEAR_STUDIO_DATA"] = str(data)
        try:
            demos.ensure_demo_index("walkthrough")
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


# The pyvis graphs are srcdoc iframes that Streamlit sandboxes with allow-same-origin, so the page's own script can
# look into them: Playwright re-runs this on every animation frame until it holds (no fixed sleeps).
GRAPHS_DRAWN = """([node, count]) => {
  const graphs = Array.from(document.querySelectorAll('iframe'))
    .map(frame => { try { return frame.contentWindow; } catch (e) { return null; } })
    .filter(w => w && typeof w.network !== 'undefined' && w.document.querySelector('#mynetwork canvas'));
  return graphs.length >= count
    && (node === null || graphs.some(w => w.nodes.get().some(
      n => String(n.label).replace(/\\s+/g, ' ').toLowerCase().startsWith(node))));  // labels wrap: one space
}"""


def wait_for_graph_with(page, node: str, timeout_s: float) -> float:
    """Wait until a vis network whose nodes include `node` has drawn its canvas; returns perf_counter() then."""
    page.wait_for_function(GRAPHS_DRAWN, arg=[node, 1], timeout=timeout_s * 1000)
    return time.perf_counter()


def wait_for_graphs(page, count: int, timeout_s: float = 60) -> None:
    page.wait_for_function(GRAPHS_DRAWN, arg=[None, count], timeout=timeout_s * 1000)


def settled(page, timeout_s: float = 120) -> None:
    """Wait until Streamlit's script has finished (its "running" widget is gone): everything it draws is drawn."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_s * 1000)


def ask_button(page):
    """The Ask button once it is enabled: the rerun that typing a question started has drawn it for that question."""
    from playwright.sync_api import expect

    button = page.get_by_role("button", name="Ask", exact=True)
    expect(button).to_be_enabled(timeout=60_000)
    return button


# The only fixed waits left: vis.js lays a graph out with a physics simulation after drawing it, so a screenshot
# taken at once shows the nodes in a heap. Nothing is asserted after them.
LAYOUT_SETTLE_MS = 2500


def assert_local(requests: list[str]) -> None:
    outside = [u for u in requests if not (u.startswith("http://127.0.0.1") or u.startswith("data:")
                                           or u.startswith("blob:") or u.startswith("about:"))]
    assert outside == []


def test_ask_walkthrough_graph_pages_and_xss(server: str, browser_page) -> None:
    page = browser_page
    page.goto(server)
    page.get_by_label("Question", exact=True).wait_for(timeout=30_000)
    # started on another index than the walk-through (GEAR_STUDIO_INDEX=tiny): no walk-through question or run
    assert page.get_by_label("Question", exact=True).input_value() == ""
    assert page.locator("iframe").count() == 0
    # the page loads the index and embedder in the background and says when they are ready
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    page.get_by_label("Question", exact=True).fill(QUESTION)
    page.get_by_label("Question", exact=True).press("Enter")
    ask = ask_button(page)
    settled(page)
    started = time.perf_counter()
    ask.click()
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
    wait_for_graphs(page, 2)
    settled(page)
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
    page.wait_for_timeout(LAYOUT_SETTLE_MS)  # screenshots only: the graphs' layouts settle
    shot(page, "01_ask_top")
    page.locator("iframe").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "01b_ask_iteration_graph.png"))
    page.get_by_text("Final ranking").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "01c_ask_result.png"))
    # the graph on its own, larger
    page.frame_locator("iframe").first.locator("#mynetwork").screenshot(path=str(SHOTS / "02_beam_graph.png"))
    # teaching mode
    page.get_by_text("Teaching mode").click()
    page.get_by_role("button", name="Next ▶").wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"^Step 1 of \d+")).wait_for(timeout=30_000)
    settled(page)
    shot(page, "03a_teaching_first_step")
    for step in (2, 3, 4):
        page.get_by_role("button", name="Next ▶").click()
        page.get_by_text(re.compile(rf"^Step {step} of \d+")).wait_for(timeout=30_000)  # one step per click
        settled(page)
    page.wait_for_timeout(LAYOUT_SETTLE_MS)  # screenshot only: the step's graph layout settles
    shot(page, "03_teaching_graph_step")
    for name, label in (("04_compare", "Compare"), ("05_evaluate", "Evaluate"), ("06_traces", "Traces"),
                        ("07_index", "Index")):
        page.get_by_role("link", name=label).click()
        page.get_by_role("heading", name=label, exact=False).first.wait_for(timeout=30_000)
        settled(page)
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
    settled(page)  # a click while the page's script still runs could be taken by that run, not a new one
    page.get_by_role("button", name="Compare").click()
    page.get_by_text("Recall and cost per method").wait_for(timeout=240_000)
    settled(page)
    shot(page, "08_compare_results")
    page.get_by_role("link", name="Index").click()
    page.get_by_label("Find an entity").wait_for(timeout=30_000)
    page.get_by_label("Find an entity").fill("mount etna")
    page.get_by_label("Find an entity").press("Enter")
    wait_for_graph_with(page, "mount etna", 60)
    settled(page)
    frames = graph_frames(page)
    assert frames and frames[-1].evaluate("network.body.data.nodes.length") >= 3
    shot(page, "09_index_stats")
    page.locator("iframe").last.scroll_into_view_if_needed()
    page.wait_for_timeout(LAYOUT_SETTLE_MS)  # screenshot only: the neighbourhood graph's layout settles
    page.screenshot(path=str(SHOTS / "10_index_neighbourhood.png"))
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]


def test_chromium_present_in_ci() -> None:
    if os.environ.get("CI", "").lower() == "true":
        assert shutil.which("chromium") or Path(CHROMIUM).exists(), "CI must install chromium for e2e tests"


def test_demo_walkthrough_question_on_replay_llm(demo_server: str, browser_page) -> None:
    """The demo as shipped: the paper's question is ready; Ask replays the recorded local-model answers."""
    from studio.core import demos

    if not (ROOT / "assets" / "traces" / "walkthrough.json").is_file():
        pytest.skip("no recorded walk-through run yet (assets/llm_cache lacks its answers)")
    page = browser_page
    page.goto(demo_server)
    question = page.get_by_label("Question", exact=True)
    question.wait_for(timeout=30_000)
    assert question.input_value() == demos.WALKTHROUGH_QUESTION
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
    assert any(" ".join(label.split()).startswith("Bremen Cathedral") for label in labels)  # labels wrap
    server_side = page.get_by_text("first graph drawn").first.inner_text()
    (SHOTS.parent / "ask_timing_demo.json").write_text(json.dumps(
        {"demo": "walkthrough", "ask_to_run_finished_in_browser_s": round(total_s, 2), "server": server_side,
         "load_average": os.getloadavg()[0]}))
    print("demo timing:", server_side, f"; run finished in the browser after {total_s:.2f} s")
    page.locator("iframe").first.scroll_into_view_if_needed()
    page.wait_for_timeout(LAYOUT_SETTLE_MS)  # screenshot only: the graph's layout settles
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


@pytest.fixture(scope="module")
def slow_server(data_dir: Path):
    """The app on the tiny index with a model that takes its time (tests.e2e.scripted_endpoint): each answer comes
    after 3 s, so a run is watched while it is in progress. One iteration: four calls a run."""
    from tests.e2e.scripted_endpoint import slow_endpoint

    with slow_endpoint(delay=3.0) as url:
        env = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "tiny", "GEAR_LLM": "openai",
               "GEAR_LLM_BASE_URL": url, "GEAR_LLM_MODEL": "scripted", "GEAR_MAX_ITERATIONS": "1",
               "GEAR_LLM_CACHE_DIR": "", "OPENAI_API_KEY": ""}
        yield from run_server(data_dir, env)


STATUS_READING = re.compile(r"^Iteration 1 of up to 1 · (sync|gist) read · the model is reading [\d,]+ tokens "
                            r"\(([\d,]+ already read; )?≈ \d+ s(, assumed speed)?\)$")


def test_a_second_question_starts_on_a_clean_page_with_a_status_line(slow_server: str, browser_page) -> None:
    """Ask, then Ask another question: while the second run waits for the model, nothing of the first run's trace
    is on the page (Streamlit used to keep it, faded, below the new run), the running iteration shows a spinner, and
    a status line at the top names the iteration, the step and what the run waits for."""
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(slow_server)
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    page.reload()  # a new session: the index is loaded, so the example list is marked
    settled(page)
    # no recording here (the endpoint answers every call): the example runs live, at the assumed speed
    assert any(re.match(r"live · ≈ \d+ (s|min) · Which sea", t) for t in open_examples(page))
    question = page.get_by_label("Question", exact=True)
    question.fill(QUESTION)
    question.press("Enter")
    ask = ask_button(page)
    settled(page)
    ask.click()
    status = page.get_by_text(STATUS_READING).first
    expect(status).to_be_visible(timeout=60_000)  # the first run's first read, announced before the model answers
    page.get_by_text("first graph drawn").first.wait_for(timeout=120_000)  # the first run has finished
    settled(page)
    expect(page.get_by_text("Final answer")).to_have_count(1)
    expect(page.locator("iframe")).to_have_count(1)  # its beam graph
    question.fill("Where is Mount Etna?")
    question.press("Enter")
    ask = ask_button(page)
    settled(page)
    ask.click()
    # the second run waits for the model's first read: the line says so, and how much of it the server has read
    # already (the reader's instructions and the passages the first run's read began with) …
    expect(page.get_by_text(re.compile(r"· sync read · the model is reading [\d,]+ tokens \([\d,]+ already read; ≈ "
                                       ))).to_be_visible(timeout=60_000)
    shot(page, "20_ask_second_question_mid_run")
    # … and no element of the first run's trace is in the page
    for leftover in ("Final answer", "first graph drawn", "Gist memory", "Reasoner", "Recall", "Final ranking"):
        assert page.get_by_text(re.compile(leftover)).count() == 0, leftover  # case-sensitive: the intro says
        # "the gist memory, the reasoner's verdict"
    assert page.locator("iframe").count() == 0
    assert page.locator("[data-testid='stExpanderIconSpinner']").count() == 1  # the running iteration
    assert page.locator("[data-testid='stExpanderIconCheck']").count() == 0
    # the line follows the run to its next step, then the run ends and the line goes
    expect(page.get_by_text(re.compile(r"· (gist read|reasoner|QA step)"))).to_be_visible(timeout=60_000)
    page.get_by_text("first graph drawn").first.wait_for(timeout=120_000)
    settled(page)
    expect(page.get_by_text(re.compile(r"the model is reading"))).to_have_count(0)
    expect(page.get_by_text("Final answer")).to_have_count(1)
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]


def open_examples(page) -> list[str]:
    """The example list's entries as shown (its dropdown opened, read, and closed)."""
    page.get_by_label(re.compile(r"^Example questions from the QA set")).click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=30_000)
    texts = [t.strip() for t in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return texts


def test_the_demo_explains_itself_and_marks_what_replays_at_once(demo_server: str, browser_page) -> None:
    """A newcomer's first page: the walk-through's caption says what the paper's run found (1929) and that the 1.5B
    model's reasoner hallucinates (the teaching point); the final answer stands beside the gold one; a replay says
    it is a recorded run; a run the model gets right is one click away; the example list says which questions
    replay at once."""
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(demo_server)
    expect(page.get_by_text(re.compile(r"gold answer is 1929")).first).to_be_visible(timeout=60_000)
    expect(page.get_by_text(re.compile(r"reasoner hallucination")).first).to_be_visible()
    final = page.get_by_text(re.compile(r"^Final answer: Croatia\s*·\s*gold: 1929\s*·\s*EM 0"))
    expect(final).to_have_count(1)
    # the run's header is drawn after its answer; on a busy 2-core machine that took more than the default 5 s
    expect(page.get_by_text("Recorded run", exact=True)).to_have_count(1, timeout=60_000)
    expect(page.get_by_text("Time", exact=True)).to_have_count(0)
    shot(page, "21_demo_caption")
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    page.reload()  # a new session: the index is loaded now, so the example list is marked at once
    page.get_by_label("Question", exact=True).wait_for(timeout=60_000)
    settled(page)
    examples = open_examples(page)
    assert any(t.startswith("recorded · instant · When did the location of the basilica") for t in examples), examples
    page.get_by_role("button", name="Replay a run the embedded model gets right").click()
    right = page.get_by_text(re.compile(r"^Final answer: Wilmington International Airport\s*·\s*gold: Wilmington "
                                        r"International Airport / KILM / ILM\s*·\s*EM 1"))
    expect(right).to_have_count(1, timeout=60_000)
    expect(page.get_by_text(re.compile(r"in iteration 3 the reasoner stops with a wrong guess"))).to_have_count(1)
    expect(page.get_by_text(re.compile(r"^Recorded run: .*replayed from a recording"))).to_have_count(1)
    settled(page)
    shot(page, "22_demo_right_example")
    assert page.locator("[data-testid='stException']").count() == 0
    # the icons' font is Streamlit's own, served by the app (nothing is fetched from a font service)
    assert any("MaterialSymbols" in u and u.startswith("http://127.0.0.1") for u in page.requests)  # type: ignore
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert_local(page.requests)  # type: ignore[attr-defined]
