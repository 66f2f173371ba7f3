"""Untrusted text stays text in a real browser: the payloads of tests/payloads.py in an uploaded corpus's
file names, titles, passages, triples and QA set, and in every answer of the model (recorded from
tests.payloads.PayloadLLM, so no model runs), through Index (upload and build), Ask (GeAR, every expander opened),
Compare, Traces and Evaluate. Nowhere a dialog, `window.__xss` (in the page or a graph's frame), an element made
from a payload (img, script, iframe, a link or image to a payload address, bold, colour or maths from a title),
or a request leaving 127.0.0.1; the payload names are shown as plain text (screenshots at 1280 px)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from studio.core.safe import WORD_JOINER
from tests.e2e.test_browser import CHROMIUM, SHOTS, assert_local, require_browser, run_server, settled
from tests.payloads import PAYLOAD_QUESTION, PAYLOAD_URLS, PayloadLLM, payload_files

pytestmark = pytest.mark.e2e

# "**Bq**", not "**B**": the Evaluate page's own "**B**" (the second of two runs) is bold on purpose
CORPUS_NAME = "corp<img src=x onerror=alert(7)>[l](javascript:alert(8)) **Bq** https://evil.example/c.json"
OPENIE_NAME = "oie<script>window.__xss=6</script>[o](javascript:x) :red[R].json"
QA_NAME = "qa $m$ ![i](http://127.0.0.1:9/q.png) www.evil.example.json"

# everything in the page (and each graph's frame) a payload could have made; every count must be 0
MADE_FROM_PAYLOADS = r"""() => {
  const docs = [document];
  for (const f of document.querySelectorAll('iframe')) { try { docs.push(f.contentDocument); } catch (e) {} }
  const urls = PAYLOAD_URLS;
  const count = (doc, css) => doc ? doc.querySelectorAll(css).length : 0;
  const out = {xss: [window.__xss].concat(Array.from(document.querySelectorAll('iframe'))
                 .map(f => { try { return f.contentWindow.__xss; } catch (e) { return undefined; } }))
                 .filter(x => x !== undefined).length};
  for (const [n, doc] of docs.entries()) {
    out['img x ' + n] = count(doc, 'img[src="x"], img[src*="127.0.0.1:9"], img[onerror]');
    // a payload's own elements (the graphs' scripts hold the payloads as escaped data, which is fine)
    out['script ' + n] = Array.from(doc ? doc.querySelectorAll('script') : [])
      .filter(s => /^(window|parent)\.__xss=\d+$/.test(s.textContent.trim())).length;
    out['iframe srcdoc ' + n] = Array.from(doc ? doc.querySelectorAll('iframe[srcdoc]') : [])
      .filter(f => f.srcdoc.trim().startsWith('<script>parent.__xss')).length;
    out['links ' + n] = Array.from(doc ? doc.querySelectorAll('a[href]') : [])
      .filter(a => urls.some(u => a.getAttribute('href').includes(u))).map(a => a.getAttribute('href')).length;
    out['bold ' + n] = Array.from(doc ? doc.querySelectorAll('strong, b, em') : [])
      .filter(b => ['bold', 'Bq', 'x', 'em', 'rich'].includes(b.textContent.trim())).length;
    out['colour ' + n] = Array.from(doc ? doc.querySelectorAll('.stMarkdownColoredText, [class*="Colored"]') : [])
      .filter(c => ['x', 'R'].includes(c.textContent.trim())).length;
    out['maths ' + n] = count(doc, '.katex');
  }
  return out;
}""".replace("PAYLOAD_URLS", json.dumps(list(PAYLOAD_URLS)))


def assert_inert(page, where: str) -> None:
    made = page.evaluate(MADE_FROM_PAYLOADS)
    assert {k: v for k, v in made.items() if v} == {}, where
    assert page.dialogs == [], where  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def payload_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with the payload corpus built (real embedder) and GeAR's and IRCoT's answers recorded from
    PayloadLLM for the QA set's question; the upload files beside it."""
    require_browser()
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import Document
    from gear.data.questions import load_qa
    from gear.embed import Encoder
    from gear.index import build_index
    from gear.llm import CachedLLM

    root = tmp_path_factory.mktemp("untrusted")
    data = root / "data"
    corpus, openie, qa = payload_files()
    for name, content in (("corpus.json", corpus), ("openie.json", openie), ("qa.json", qa)):
        (root / name).write_text(json.dumps(content), encoding="utf-8")
    index = data / "indexes" / "payload"
    encoder = Encoder(Settings().embedder)
    triples = [[tuple(t) for t in doc["extracted_triples"]] for doc in openie["docs"]]
    build_index([Document(d["title"], d["text"]) for d in corpus], triples, index, encoder, source={"corpus": "e2e"})
    (index / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    cache = root / "llm_cache"
    settings = Settings().with_(retriever="hybrid", expand="gear", llm="replay", llm_cache_dir=cache)
    engine = Engine.open(index, Settings(), encoder=encoder)
    q = load_qa(index / "qa.json")[0][0]
    for method in ("gear", "ircot"):
        run_settings = settings.with_(expand=method)
        engine.set_llm(run_settings, CachedLLM(PayloadLLM(), cache, "record"))
        engine.retrieve(q.question, k=10, settings=run_settings, gold=engine.gold_ids(q.gold), answers=q.answers,
                        question_id=q.id)
    return data


@pytest.fixture(scope="module")
def payload_server(payload_data: Path):
    env = {"GEAR_STUDIO_DATA": str(payload_data), "GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "payload",
           "GEAR_LLM": "replay", "GEAR_LLM_CACHE_DIR": str(payload_data.parent / "llm_cache")}
    yield from run_server(payload_data, env)


@pytest.fixture
def page_1280(tmp_path: Path):
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, viewport={"width": 1280, "height": 900},
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.requests, page.dialogs = [], []  # type: ignore[attr-defined]
        page.on("request", lambda r: page.requests.append(r.url))  # type: ignore[attr-defined]
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
        yield page
        ctx.close()


def upload(page, label: str, name: str, data: bytes) -> None:
    """Upload one file into the uploader whose label starts with `label` and wait until it lists the file. Found by
    its label, not its place among the page's uploaders (a page changing over may still show another's), and sent
    again when it is not listed in 20 s (an upload that lands in a rerun under way can be lost: two CI runs waited
    for a build that never began)."""
    from playwright.sync_api import expect

    uploader = page.locator("[data-testid='stFileUploader']").filter(
        has=page.locator("[data-testid='stWidgetLabel']", has_text=label))
    for attempt in range(3):
        settled(page)
        if name[-6:] in uploader.inner_text():
            return
        uploader.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
            {"name": name, "mimeType": "application/json", "buffer": data})
        try:
            expect(uploader).to_contain_text(name[-6:], timeout=20_000)
            return
        except AssertionError:
            if attempt == 2:
                raise


def built_or_stopped(page, name: str, timeout_ms: int = 240_000) -> None:
    """Wait for the build of `name` to end; one that stopped (or never began) fails with what the page says, not a
    bare time-out."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    ended = page.get_by_text(f"Built {name}").or_(page.locator("[data-testid='stAlertContentError']"))
    try:
        ended.first.wait_for(timeout=timeout_ms)
    except PlaywrightTimeout:
        pytest.fail(f"the build of {name} did not end in {timeout_ms // 1000} s; the page said:\n"
                    + page.locator("[data-testid='stMain']").inner_text()[-3000:])
    if page.get_by_text(f"Built {name}").count() == 0:
        pytest.fail(f"the build of {name} stopped: " + ended.first.inner_text())


def open_page(page, label: str) -> None:
    page.get_by_role("link", name=label).click()
    page.get_by_role("heading", name=label, exact=False).first.wait_for(timeout=30_000)
    settled(page)


def open_every_expander(page) -> None:
    """Open them one at a time (an opened one may hold more) until none is closed once the page has settled.

    A page still drawing (its rerun had not begun when open_page's wait returned) may draw an expander after the
    last one was opened, or draw again one that was opened: so open, settle, and look again, a few rounds.
    """
    # an expander inside a tab not shown cannot be clicked: the caller opens each tab in turn
    closed = page.locator("[data-testid='stExpander'] details:not([open]) > summary").filter(visible=True)
    for _ in range(5):
        page.wait_for_timeout(500)  # a rerun a click or a page switch starts may not have begun: settled() would pass
        settled(page)
        if closed.count() == 0:
            return
        for _ in range(100):
            if closed.count() == 0:
                break
            closed.first.click()
            page.wait_for_timeout(50)
    still = closed.all_inner_texts() if closed.count() else []
    assert not still, f"expanders that stay closed: {still}"


def test_payloads_show_as_text_on_every_page(payload_server: str, payload_data: Path, page_1280) -> None:

    page = page_1280
    page.goto(payload_server)
    page.get_by_label("Question", exact=True).wait_for(timeout=60_000)
    page.get_by_text("index and embedder ready").wait_for(timeout=400_000)  # the embedder loads (slow on a busy CPU)

    # Ask: the QA set's payload question on the payload index, GeAR replayed; every expander opened
    question = page.get_by_label("Question", exact=True)
    question.fill(PAYLOAD_QUESTION)
    question.press("Enter")
    settled(page)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.get_by_text("first graph drawn").first.wait_for(timeout=180_000)
    settled(page)
    open_every_expander(page)
    assert page.get_by_text("[t](javascript:window.__xss=4)").count() > 0  # a title, shown as written
    assert_inert(page, "Ask")
    page.screenshot(path=str(SHOTS / "untrusted_ask.png"), full_page=True)

    # Compare: the methods side by side, titles in the table as plain text
    open_page(page, "Compare")
    page.get_by_role("button", name="Compare").click()
    page.get_by_text("passages side by side").wait_for(timeout=240_000)
    settled(page)
    table = page.locator("[data-testid='stTable']").first
    assert "[t](javascript:window.__xss=4)" in table.inner_text() and ":red[x]" in table.inner_text()
    assert_inert(page, "Compare")
    table.scroll_into_view_if_needed()
    table.screenshot(path=str(SHOTS / "untrusted_compare_table.png"))
    page.screenshot(path=str(SHOTS / "untrusted_compare.png"), full_page=True)

    # Traces and Evaluate: this session's runs, the QA set's payload question
    for label in ("Traces", "Evaluate"):
        open_page(page, label)
        open_every_expander(page)
        tabs = page.get_by_role("tab")
        for index in range(1, tabs.count()):  # the first tab is open already
            tabs.nth(index).click()
            open_every_expander(page)
        assert page.locator("[data-testid='stException']").count() == 0
        assert_inert(page, label)
        page.screenshot(path=str(SHOTS / f"untrusted_{label.lower()}.png"), full_page=True)
    # Index: upload the payload corpus under payload file names and build it
    open_page(page, "Index")
    page.get_by_role("tab", name="Build a new index").click()
    page.get_by_label("Index name").fill("uploaded")
    page.get_by_label("Index name").press("Enter")
    page.wait_for_timeout(500)  # the rerun Enter starts may not have begun: settled() would return before it
    settled(page)
    root = payload_data.parent
    files = (("Corpus (at most", CORPUS_NAME, "corpus.json"), ("OpenIE triples", OPENIE_NAME, "openie.json"),
             ("QA set (optional", QA_NAME, "qa.json"))
    for label, name, file in files:
        upload(page, label, name, (root / file).read_bytes())
    page.get_by_role("button", name="Build index").click()
    built_or_stopped(page, "uploaded")
    settled(page)
    status = page.locator("[data-testid='stExpander']").filter(has_text="Built uploaded").first
    if "passages read from" not in status.inner_text():  # the finished build's status folds away: open it to read it
        status.locator("summary").first.click()
        settled(page)
    shown = status.inner_text().replace(WORD_JOINER, "")  # as a reader sees it (the joiner keeps a URL unlinked)
    assert CORPUS_NAME in shown and OPENIE_NAME in shown  # the names, as written
    assert_inert(page, "Index: the build status")
    status.screenshot(path=str(SHOTS / "untrusted_build_status.png"))
    page.screenshot(path=str(SHOTS / "untrusted_index_page.png"), full_page=True)

    assert_local(page.requests)  # type: ignore[attr-defined]


# -- saved files an attacker wrote by hand (tests/hostile_files.py) ------------------------------------------
GOOD_TRACES = ("walkthrough.json", "walkthrough_ppr.json")

#: after a page has drawn: what a hostile file could have made happen, in the page and in every frame
SCRIPT_RAN = """() => {
  const docs = [document];
  for (const f of document.querySelectorAll('iframe')) { try { docs.push(f.contentDocument); } catch (e) {} }
  return docs.filter(d => d).map(d => d.querySelectorAll('[id^="planted"]').length).reduce((a, b) => a + b, 0);
}"""


@pytest.fixture(scope="module")
def hostile_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder whose traces/ holds every hostile trace, a link to a trace outside it, and two good runs."""
    require_browser()
    from tests.hostile_files import BUNDLED, outside_trace, write_hostile_traces

    root = tmp_path_factory.mktemp("hostile_app")
    traces = root / "data" / "traces"
    write_hostile_traces(traces, outside=outside_trace(root / "outside"))
    for name in GOOD_TRACES:
        (traces / name).write_text((BUNDLED / name).read_text(encoding="utf-8"), encoding="utf-8")
    return root / "data"


@pytest.fixture(scope="module")
def hostile_server(hostile_data: Path):
    yield from run_server(hostile_data, {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_LLM": "replay"})


def shown_frames(page) -> None:
    """Every graph frame scrolled into view (one off screen may wait to load), its script given time to run."""
    page.wait_for_timeout(3000)
    frames = page.locator("iframe")
    for n in range(frames.count()):
        frames.nth(n).scroll_into_view_if_needed(timeout=30_000)
        page.wait_for_timeout(1500)


def assert_nothing_ran(page, where: str) -> None:
    from tests.hostile_files import LEAK_URL, PWNED

    assert page.dialogs == [], where  # type: ignore[attr-defined]
    assert page.title() != PWNED, where
    assert page.evaluate(SCRIPT_RAN) == 0, where
    assert not [u for u in page.requests if u.startswith(LEAK_URL)], where  # type: ignore[attr-defined]
    assert page.locator("[data-testid='stException']").count() == 0, where


def test_hostile_traces_run_nothing_by_link_nor_on_the_traces_page(hostile_server: str, hostile_data: Path,
                                                                   page_1280) -> None:
    from tests.hostile_files import OUTSIDE_MARKER

    page = page_1280
    names = sorted(p.name for p in (hostile_data / "traces").glob("*.json"))
    bad = [n for n in names if n not in GOOD_TRACES]
    assert len(bad) == 13 and "link_out.json" in bad
    for name in names:
        page.goto(f"{hostile_server}/?saved={name}&step=5", timeout=120_000)  # step 5: a graph of the beams or PPR
        page.get_by_role("heading", name="Ask").first.wait_for(timeout=120_000)
        settled(page)
        shown_frames(page)
        assert_nothing_ran(page, name)
        text = page.locator("[data-testid='stMain']").inner_text()
        assert OUTSIDE_MARKER not in text, name
        if name in bad:  # said in one line, and the page is there
            note = page.locator("[data-testid='stAlertContentWarning']").filter(has_text=f"Cannot open {name}")
            assert note.count() == 1, (name, text[-800:])
        else:
            assert page.locator("iframe").count() >= 1, name  # the good run's graph is drawn
        if name in ("numbers_as_html.json", "passage_id_as_html.json", "walkthrough.json"):
            page.screenshot(path=str(SHOTS / f"hostile_link_{Path(name).stem}.png"))

    page.goto(f"{hostile_server}/?saved=walkthrough.json&step=%C2%B2", timeout=120_000)  # "²": a digit to isdigit
    page.get_by_role("heading", name="Ask").first.wait_for(timeout=120_000)
    settled(page)
    assert page.locator("[data-testid='stAlertContentWarning']").filter(has_text="there is no step").count() == 1
    assert page.locator("[data-testid='stAlertContentError']").count() == 0

    page.get_by_role("link", name="Traces").click()
    page.get_by_role("heading", name="Traces").first.wait_for(timeout=120_000)
    settled(page)
    page.wait_for_timeout(2000)
    assert_nothing_ran(page, "Traces")
    from tests.hostile_files import BUNDLED

    good = len(GOOD_TRACES) + len(list(BUNDLED.glob("*.json")))  # the good runs and the bundled ones, listed
    assert page.get_by_text(re.compile(rf"^{good} of {good} traces")).count() == 1
    listed = page.locator("[data-testid='stExpander']").filter(has_text="trace file(s) not listed")
    assert listed.count() == 1 and f"{len(bad)} trace file(s) not listed" in listed.inner_text()
    listed.locator("summary").first.click()
    settled(page)
    said = listed.inner_text()
    for name in bad:  # each bad one named, with its reason
        assert f"{name}: " in said, name
    assert "a link to a file outside the data folder" in said and OUTSIDE_MARKER not in said
    page.screenshot(path=str(SHOTS / "hostile_traces_page.png"), full_page=True)
    listed.screenshot(path=str(SHOTS / "hostile_traces_not_listed.png"))
    assert page.dialogs == []  # type: ignore[attr-defined]
