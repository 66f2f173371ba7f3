"""Several people on one GeAR Studio at once: each a separate Chromium context (its own cookies, so its own Streamlit
session) asking a question on the Ask page and downloading the trace it got, all driven concurrently by Playwright's
async API. Shared by the bounded load test (tests/e2e/test_load.py) and the load bench (bench/load.py).

Traces are compared after `normalise`: what legitimately differs between two runs of the same question is dropped —
times (seconds, ms), and which cache answered an LLM call (the first session's call may be served from the recording,
a later identical one from the process memo; the text and tokens are the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VOLATILE_KEYS = frozenset({"seconds", "ms", "total_ms", "source", "cached"})
VOLATILE_EVENTS = frozenset({"stage_timed"})
# Records every distinct "waiting for the model" line the page shows, as the DOM changes (a MutationObserver, so no
# place in the queue is missed between two looks and nothing sleeps); read back from window.__gearWaits.
WATCH_WAITS = """() => {
  const seen = window.__gearWaits = [];
  const record = () => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeValue.includes('waiting for the model')) {
        const text = (node.parentElement.innerText || node.nodeValue).split(/\\s+/).filter(Boolean).join(' ');
        if (text && seen[seen.length - 1] !== text) seen.push(text);
        return;
      }
    }
  };
  new MutationObserver(record).observe(document.body, {subtree: true, childList: true, characterData: true});
  record();
}"""


@dataclass
class SessionResult:
    """What one browser session saw: its question, the trace it downloaded, the wall time from Ask to the end of
    the run, and the queue places it was shown while it waited for the model."""

    session: int
    question: str
    trace: dict[str, Any]
    seconds: float
    waits_seen: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def llm_sources(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for event in self.trace.get("events", []):
            if event.get("kind") == "llm_called":
                counts[event.get("source") or "model"] = counts.get(event.get("source") or "model", 0) + 1
        return counts


def normalise(trace: dict[str, Any], *, ignore_settings: Sequence[str] = ()) -> list[Any]:
    """The trace's events without times and answer origins (see the module docstring), and without the named
    settings of its run (e.g. "llm_cache_dir" when two servers deliberately record into different caches)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    events = [strip(e) for e in trace.get("events", []) if e.get("kind") not in VOLATILE_EVENTS]
    for event in events:
        if event.get("kind") == "run_started" and isinstance(event.get("settings"), dict):
            event["settings"] = {k: v for k, v in event["settings"].items() if k not in ignore_settings}
    return events


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def studio_server(data_dir: Path | None, env: dict[str, str], log: Path, *, checkout: Path = ROOT,
                  launcher: Sequence[str] = ("-m", "streamlit"), prefix: Sequence[str] = ()) -> Iterator[str]:
    """`streamlit run app.py` on 127.0.0.1 over `data_dir` (as `make run` starts it); yields its URL. `data_dir` None:
    the app finds its data folder itself; `checkout`: the copy of the project it runs from; `launcher`: what runs
    `run app.py …` (a test's wrapper of Streamlit's command line); `prefix`: a command it runs under (another user)."""
    port = free_port()
    data = {"GEAR_STUDIO_DATA": str(data_dir)} if data_dir is not None else {}
    merged = {k: v for k, v in {**os.environ, **env, **data, "HF_HUB_OFFLINE": "1"}.items() if v != ""}
    if data_dir is None:
        merged.pop("GEAR_STUDIO_DATA", None)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [*prefix, sys.executable, *launcher, "run", "app.py", "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=checkout, env=merged, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 90
            while True:
                if proc.poll() is not None:
                    raise RuntimeError("streamlit exited: " + log.read_text()[-2000:])
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.read().decode().strip() == "ok":
                            break
                except OSError:
                    pass
                if time.time() > deadline:
                    raise RuntimeError("streamlit did not become healthy in 90 s")
                time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


class _Gate:
    """Every session presses Ask together: each arrives when its question is typed (or it failed), and all go when
    the last one has arrived."""

    def __init__(self, n: int) -> None:
        self.left = n
        self.go = asyncio.Event()

    def arrive(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.go.set()


async def _ask(playwright: Any, url: str, number: int, question: str, downloads: Path, timeout_s: float,
               gate: _Gate | None) -> SessionResult:
    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import expect

    # a browser of its own per person (separate processes and connection pools, as on separate machines)
    browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = await context.new_page()
    page.set_default_timeout(120_000)  # several sessions share two cores: the first page load can take a while
    result = SessionResult(number, question, {}, 0.0)
    arrived = False
    try:
        await page.goto(url)
        await page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
        box = page.get_by_label("Question", exact=True)
        await box.fill(question)
        await box.press("Enter")
        ask = page.get_by_role("button", name="Ask", exact=True)
        await expect(ask).to_be_enabled()  # drawn for this question by the rerun that the Enter started
        await _script_finished(page)
        if gate is not None:
            gate.arrive()
            arrived = True
            await gate.go.wait()
        await page.evaluate(WATCH_WAITS)
        started = time.perf_counter()
        await ask.click()
        try:
            await page.get_by_text("first graph drawn").first.wait_for(timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            raise TimeoutError(f"session {number}: the run did not finish in {timeout_s:.0f} s") from None
        finally:
            with contextlib.suppress(Exception):  # the page may be gone; the run's own error is the one to report
                result.waits_seen = list(await page.evaluate("window.__gearWaits || []"))
        result.seconds = time.perf_counter() - started
        await _script_finished(page)  # the download button of this run, not the previous page's, is then in place
        if await page.locator("[data-testid='stException']").count():
            result.errors.append("a Python exception is shown")
        if await page.get_by_text("The run stopped").count():
            result.errors.append(await page.get_by_text("The run stopped").first.inner_text())
        async with page.expect_download() as info:
            await page.get_by_test_id("stDownloadButton").locator("button").first.click()
        download = await info.value
        target = downloads / f"session{number}.json"
        await download.save_as(str(target))
        result.trace = json.loads(target.read_text(encoding="utf-8"))
    except Exception as exc:  # reported with the others, so one session's failure is visible, not fatal
        result.errors.append(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        with contextlib.suppress(Exception):  # the page may be gone
            await page.screenshot(path=str(downloads / f"session{number}_failed.png"), full_page=True)
    finally:
        if gate is not None and not arrived:
            gate.arrive()
        await context.close()
        await browser.close()
    return result


async def _script_finished(page: Any, timeout_s: float = 120.0) -> None:
    """Wait until Streamlit's "running" indicator has gone: the script has drawn everything."""
    from playwright.async_api import expect

    await expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_s * 1000)


async def ask_together(url: str, questions: Sequence[str], downloads: Path, *, timeout_s: float = 900.0,
                       together: bool = True) -> list[SessionResult]:
    """One browser session per question, all pressing Ask at the same moment (`together`), or one after another."""
    from playwright.async_api import async_playwright

    downloads.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as p:
        if not together:
            return [await _ask(p, url, n, q, downloads, timeout_s, None) for n, q in enumerate(questions)]
        gate = _Gate(len(questions))
        return list(await asyncio.gather(*(_ask(p, url, n, q, downloads, timeout_s, gate)
                                           for n, q in enumerate(questions))))


def run(url: str, questions: Sequence[str], downloads: Path, **kwargs: Any) -> list[SessionResult]:
    return asyncio.run(ask_together(url, questions, downloads, **kwargs))
