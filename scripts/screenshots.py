"""The README's pictures, made from the app itself so that they show the app as it is.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/screenshots.py [--out docs/img] [--delay 6]

The app runs as `make run` starts it, on the bundled walk-through demo in a fresh data folder, with one change: its
live model is a stand-in on 127.0.0.1 that answers every request with the answer recorded for it in assets/llm_cache,
`--delay` seconds later and streamed, as the embedded model would (the bundled recordings are hidden from the app, so
it asks the stand-in, which it treats as any OpenAI-compatible endpoint). So a run is really in progress when the first
picture is taken, and every picture shows the run the recordings hold — its tokens the model's, its seconds the
stand-in's. Chromium (Playwright, /usr/bin/chromium; never
`playwright install`) then takes the five-minute tour at 1280 px: the Ask page mid-run and finished, teaching mode,
the gold panel, an evaluation and a comparison. Each picture is written as a 256-colour PNG (a tenth of the size).

A request the recordings do not hold is answered with an error, which stops the script: the pictures show only
recorded runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.llm.replay import cache_key  # noqa: E402
from studio.core import demos, paths  # noqa: E402
from tests.local_http import FakeEndpoint, serving  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1280
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"  # the embedded model, whose answers assets/llm_cache holds
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LAYOUT_SETTLE_S = 2.5  # vis.js lays a graph out after drawing it: a picture taken at once shows a heap of nodes


class Recorded(FakeEndpoint):
    """POST /v1/chat/completions: the recorded answer to the request, after `delay` seconds, streamed in pieces."""

    delay: ClassVar[float] = 6.0
    missed: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else fmt.get("schema")
        tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 512
        path = paths.LLM_CACHE / f"{cache_key(body['model'], body['messages'], schema, tokens)}.json"
        if not path.is_file():
            type(self).missed.append(body["messages"][-1]["content"][:80])
            self.send_json(404, {"error": {"message": "no recorded answer for this request"}})
            return
        entry = json.loads(path.read_text(encoding="utf-8"))
        time.sleep(type(self).delay)
        usage = {"prompt_tokens": entry["prompt_tokens"], "completion_tokens": entry["completion_tokens"],
                 "total_tokens": entry["prompt_tokens"] + entry["completion_tokens"]}
        if not body.get("stream"):
            self.send_json(200, {"id": "r", "object": "chat.completion", "created": 0, "model": body["model"],
                                 "usage": usage, "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                     "role": "assistant", "content": entry["text"]}}]})
            return
        self.start_events()
        text = entry["text"]
        step = max(1, len(text) // 4)
        for start in range(0, len(text), step):
            self.send_event({"choices": [{"index": 0, "delta": {"content": text[start:start + step]},
                                          "finish_reason": None}]})
            time.sleep(0.1)
        self.send_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage})
        self.end_events()

    def send_event(self, data: dict[str, Any]) -> None:
        super().send_event({"id": "r", "object": "chat.completion.chunk", "created": 0, "model": MODEL, **data})


TALL = 5000  # the viewport's height: Streamlit scrolls inside its own container, so a region is shot in view


def save(image: Any, out: Path, name: str) -> Path:
    """A picture, written as a 256-colour PNG."""
    from PIL import Image

    small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path = out / f"{name}.png"
    small.save(path, optimize=True)
    print(f"{path}: {small.width}×{small.height}, {path.stat().st_size // 1024} KB", flush=True)
    return path


def shot(page: Any, top: Any, bottom: Any, pad: float = 12, below_pad: float | None = None) -> Any:
    """The main column from one element's top to another's bottom, as a PIL image (the viewport is TALL)."""
    import io

    from PIL import Image

    top.evaluate("e => e.scrollIntoView({block: 'start'})")  # the region starts at the viewport's top
    page.wait_for_timeout(300)
    a, b = top.bounding_box(), bottom.bounding_box()
    main = page.locator("[data-testid='stMain']").bounding_box()
    clip = {"x": main["x"], "y": max(0.0, a["y"] - pad), "width": main["width"],
            "height": b["y"] + b["height"] - a["y"] + pad + (pad if below_pad is None else below_pad)}
    return Image.open(io.BytesIO(page.screenshot(clip=clip)))


def below(locator: Any, y: float) -> Any:
    """The first of the elements a locator finds whose top is below `y` (another element's), on the page now."""
    for n in range(locator.count()):
        box = locator.nth(n).bounding_box()
        if box is not None and box["y"] > y and box["height"] > 0:
            return locator.nth(n)
    raise SystemExit(f"nothing below y = {y:.0f}: {locator}")


def stacked(*images: Any, gap: int = 10) -> Any:
    """Pictures of one moment of one page, one above the other, a light rule between them."""
    from PIL import Image

    width = max(i.width for i in images)
    canvas = Image.new("RGB", (width, sum(i.height for i in images) + gap * (len(images) - 1)), "#dee2e6")
    y = 0
    for image in images:
        canvas.paste(image, (0, y))
        y += image.height + gap
    return canvas


def settled(page: Any, timeout_s: float = 600) -> None:
    """Streamlit's script has finished: its "running" widget is gone."""
    from playwright.sync_api import expect

    page.wait_for_timeout(1000)  # the widget appears a moment after the click that starts the run
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_s * 1000)


def no_error(page: Any) -> None:
    errors = page.locator("[data-testid='stException'], [data-testid='stAlertContentError']")
    if errors.count():
        raise SystemExit(f"the app shows an error: {errors.first.inner_text()[:300]} (missed: {Recorded.missed})")


GRAPH_DRAWN = """(count) => Array.from(document.querySelectorAll('iframe'))
  .map(frame => { try { return frame.contentWindow; } catch (e) { return null; } })
  .filter(w => w && typeof w.network !== 'undefined' && w.document.querySelector('#mynetwork canvas'))
  .length >= count"""


def ask(page: Any, url: str, out: Path) -> None:
    """The hero — the Ask page mid-run: the status line saying what the run waits for, and iteration 1's beams drawn
    while the model reads its next prompt — then the finished run's answer, recall and cost."""
    from playwright.sync_api import expect

    page.goto(url)
    page.get_by_text("index and embedder ready").wait_for(timeout=300_000)
    expect(page.get_by_role("button", name="Ask", exact=True)).to_be_enabled(timeout=60_000)
    page.get_by_role("button", name="Ask", exact=True).click()
    status = page.get_by_text("Iteration 1 of up to", exact=False).first
    status.wait_for(timeout=120_000)
    # past the beam search: the run's own graph is drawn (the first on the page: the example shown before it is
    # below until the run ends)
    page.get_by_text(re.compile(r"Iteration 1 of up to \d+ · (gist read|reason)")).first.wait_for(timeout=300_000)
    page.wait_for_function(GRAPH_DRAWN, arg=1, timeout=60_000)
    time.sleep(LAYOUT_SETTLE_S)
    row = shot(page, page.get_by_label("Question", exact=True), status, pad=40, below_pad=14)
    heading = page.get_by_text("Graph expansion — Diverse Triple Beam Search", exact=False).first
    graph = shot(page, heading, page.locator("iframe").first, pad=14)
    save(stacked(row, graph), out, "ask_mid_run")
    page.get_by_role("button", name="Cancel").wait_for(state="detached", timeout=600_000)
    settled(page)
    no_error(page)
    answer = page.get_by_text("Final answer:", exact=False).first
    charts = below(page.locator("[data-testid='stPlotlyChart']"), answer.bounding_box()["y"])  # tokens per step
    save(shot(page, answer, charts, pad=20), out, "tour_ask")


def teach(page: Any, url: str, out: Path) -> None:
    """Teaching mode on Algorithm 1's diversity penalty, its lines beside the graph (a link opens the step)."""
    page.goto(f"{url}/?trace=walkthrough&step=8")
    page.wait_for_function(GRAPH_DRAWN, arg=1, timeout=120_000)
    settled(page)
    time.sleep(LAYOUT_SETTLE_S)
    no_error(page)
    top = page.get_by_role("button", name="Back", exact=False).first
    bottom = page.locator("iframe").first
    save(shot(page, top, bottom, pad=16), out, "tour_teach")


def gold(page: Any, url: str, out: Path) -> None:
    """Under the recorded walk-through run: marking the passages that hold the answer, and where each was lost."""
    page.goto(url)
    page.get_by_text("Mark the right passages", exact=True).first.wait_for(timeout=120_000)
    settled(page)
    panel = page.get_by_text("Gold passages — where was the gold lost?", exact=True).first
    end = below(page.get_by_text("Proposed category:", exact=False), panel.bounding_box()["y"])
    save(shot(page, panel, end, pad=16), out, "tour_gold")


def choose(page: Any, methods: tuple[str, ...]) -> None:
    """The Methods list holding exactly these."""
    box = page.get_by_label("Methods", exact=True)
    box.wait_for(timeout=60_000)
    remove = page.locator("[data-testid='stMultiSelect']").filter(has=page.get_by_text("Methods", exact=True)).locator(
        "button[aria-label^='Remove ']")
    while remove.count():
        remove.first.click()
        page.wait_for_timeout(300)
    for label in methods:
        box.click()
        page.get_by_role("option", name=label, exact=True).click()
        page.wait_for_timeout(300)
    page.keyboard.press("Escape")


def evaluate(page: Any, url: str, out: Path) -> None:
    """Hybrid + NaiveGE and GeAR over the demo's two questions: the saved reports' table and recall chart."""
    page.goto(f"{url}/Evaluate")
    page.get_by_role("tab", name="Run an evaluation").wait_for(timeout=60_000)
    settled(page)
    choose(page, ("Hybrid + NaiveGE", "GeAR (hybrid)"))
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text("see the Results tab", exact=False).wait_for(timeout=600_000)
    settled(page)
    no_error(page)
    page.get_by_role("tab", name="Results").click()
    page.wait_for_timeout(2000)
    top = page.get_by_label("Saved evaluations", exact=True)
    chart = page.locator("[data-testid='stPlotlyChart']").first
    save(shot(page, top, chart, pad=40, below_pad=8), out, "tour_evaluate")


def compare(page: Any, url: str, out: Path) -> None:
    """The walk-through question with Hybrid, NaiveGE, PPR and GeAR side by side: answer, recall and cost, and the
    rankings."""
    page.goto(f"{url}/Compare")
    page.get_by_label("Methods", exact=True).wait_for(timeout=60_000)
    settled(page)
    choose(page, ("Hybrid", "Hybrid + NaiveGE", "PPR (HippoRAG 2)", "GeAR (hybrid)"))
    page.get_by_role("button", name="Compare", exact=True).click()
    page.get_by_text("Answer, recall and cost per method").wait_for(timeout=600_000)
    settled(page)
    no_error(page)
    top = page.get_by_text("Answer, recall and cost per method").first
    end = page.locator("[data-testid='stTable']").first
    save(shot(page, top, end), out, "tour_compare")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--delay", type=float, default=6.0, help="seconds before each recorded answer (the Ask run)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.e2e.sessions import studio_server

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gear-shots-") as tmp, serving(Recorded) as endpoint:
        data, hidden = Path(tmp) / "data", Path(tmp) / "no_recordings"
        hidden.mkdir()
        print("building the walk-through demo index…", flush=True)
        os.environ["GEAR_STUDIO_DATA"] = str(data)  # this process's only use of the data folder
        demos.ensure_demo_index("walkthrough")
        env = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "walkthrough", "GEAR_LLM": "auto",
               "GEAR_LLM_BASE_URL": endpoint, "GEAR_LLM_MODEL": MODEL, "OPENAI_API_KEY": "stand-in",
               "GEAR_LLM_BUNDLED_CACHE": str(hidden), "GEAR_LLM_CACHE_DIR": "", "GEAR_PROMPTS": ""}
        with studio_server(data, env, Path(tmp) / "streamlit.log") as url, sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                str(Path(tmp) / "profile"), executable_path=CHROMIUM, headless=True,
                viewport={"width": WIDTH, "height": TALL}, args=BROWSER_ARGS)
            page = browser.pages[0] if browser.pages else browser.new_page()
            outside: list[str] = []
            page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
                ("http://127.0.0.1", "data:", "blob:", "about:")) else None)
            Recorded.delay = args.delay
            ask(page, url, args.out)
            Recorded.delay = 0.2  # the runs below are the pictures' content, not their progress
            teach(page, url, args.out)
            gold(page, url, args.out)
            evaluate(page, url, args.out)
            compare(page, url, args.out)
            browser.close()
            if outside:
                raise SystemExit(f"requests left 127.0.0.1: {outside[:3]}")


if __name__ == "__main__":
    main()
