"""What hostile saved files do to the app and the CLI of a checkout, for a before/after table.

    .venv/bin/python scripts/probe_saved_files.py [--checkout DIR] [--out probe.json] [--no-app] [--shots DIR]

Writes the files of tests/hostile_files.py into a fresh data folder (traces in data/traces, with a link pointing out
and two good runs; reports in data/evals) and a trace outside it, then records, for each file:
- the CLI (`gear diagnose FILE`, `gear export-html FILE`, `gear compare REPORT GOOD`, `gear diagnose FOLDER`, each
  under a pty): the exit code, the number of lines, whether a traceback showed, whether a file outside was opened;
- the app (Chromium, 1280 px): the trace opened by its link (`?saved=FILE&step=5`), the Traces page, and Evaluate's
  two-runs tab with each report as A (its first question selected): dialogs, the page's title, planted elements in
  any frame, requests to the port nobody opened, Python exception boxes, the error lines shown, and whether the
  server opened a file outside the data folder (an audit hook in the server process records every open).

`--checkout` runs another copy of the project (a checkout of the commit before a change), with this script's
hostile files; the table is printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.sessions import studio_server  # noqa: E402
from tests.hostile_files import (  # noqa: E402
    BASE_REPORTS,
    BUNDLED,
    LEAK_URL,
    OUTSIDE_MARKER,
    PWNED,
    outside_trace,
    write_hostile_reports,
    write_hostile_traces,
)

CHROMIUM = "/usr/bin/chromium"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: run in the probed process first: every file it opens outside the data folder is appended to $PROBE_OPENED
AUDIT = """
import os, sys
_out, _far = os.environ['PROBE_OPENED'], os.environ['PROBE_OUTSIDE']
def _hook(event, args):
    if event == 'open' and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            path = os.path.realpath(os.fsdecode(args[0]))
        except Exception:
            return
        if path.startswith(_far) and not path.startswith(_out):
            with open(_out, 'a') as f:
                f.write(path + '\\n')
sys.addaudithook(_hook)
"""
SERVER = AUDIT + "sys.argv = ['streamlit'] + sys.argv[1:]\nfrom streamlit.web.cli import main\nmain()\n"
CLI = AUDIT + "import runpy\nsys.argv = ['gear'] + sys.argv[1:]\nrunpy.run_module('gear.cli', run_name='__main__')\n"


def opened(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def cli(checkout: Path, args: list[str], log: Path, cwd: Path, written: Path | None = None) -> dict[str, Any]:
    """One command under a pty (as a person's terminal runs it); `written`: the file it writes, searched for the
    elements a payload would make there."""
    before = len(opened(log))
    if written is not None and written.exists():
        written.unlink()
    code = Path(tempfile.mkstemp(suffix=".py")[1])
    code.write_text(CLI)
    command = " ".join(shlex.quote(a) for a in [sys.executable, str(code), *args])
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
    result = subprocess.run(["script", "-q", "-e", "-c", command, "/dev/null"], capture_output=True, text=True,
                            cwd=cwd, env=env, timeout=300, errors="replace")
    text = ANSI.sub("", result.stdout.replace("\r", ""))
    lines = [line for line in text.splitlines() if line.strip()]
    code.unlink()
    errors = [line for line in lines if line.lower().startswith(("error", "skipped"))]
    made = written.read_text(encoding="utf-8").count('<img id="planted') if written and written.exists() else 0
    return {"rc": result.returncode, "lines": len(lines), "traceback": "Traceback" in text,
            "outside": len(opened(log)) - before, "marker": OUTSIDE_MARKER in text, "planted": made,
            "first": (errors or lines or [""])[0][:160]}


PLANTED = """() => {
  let n = 0;
  const docs = [document];
  for (const f of document.querySelectorAll('iframe')) { try { docs.push(f.contentDocument); } catch (e) {} }
  for (const d of docs) { if (d) { n += d.querySelectorAll('[id^="planted"]').length; } }
  return n;
}"""


def page_state(page, log: Path, before: int) -> dict[str, Any]:
    errors = [e.inner_text()[:160] for e in page.locator("[data-testid='stAlertContentError']").all()]
    warnings = [e.inner_text()[:160] for e in page.locator("[data-testid='stAlertContentWarning']").all()]
    text = page.locator("body").inner_text()
    return {"dialogs": len(page.dialogs), "title": page.title(), "planted": page.evaluate(PLANTED),
            "leak_requests": sum(1 for u in page.requests if u.startswith(LEAK_URL)),
            "exceptions": page.locator("[data-testid='stException']").count(), "errors": errors,
            "warnings": warnings, "marker": OUTSIDE_MARKER in text, "outside": len(opened(log)) - before}


def settled(page, heading: str = "", timeout_s: float = 180) -> None:
    """The page drawn: its title (containing `heading`; or an error line in its place) is there and Streamlit's
    script has finished."""
    from playwright.sync_api import expect

    title = page.locator("[data-testid='stMain'] h1").filter(has_text=heading)
    title.or_(page.locator("[data-testid='stAlertContentError']")).first.wait_for(timeout=timeout_s * 1000)
    page.wait_for_timeout(600)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_s * 1000)


def every_frame_shown(page) -> None:
    """Scroll each graph's frame into view (a frame off screen may wait to load) and let its script run."""
    page.wait_for_timeout(6000)  # the script may draw the frames after the status widget first went away
    frames = page.locator("iframe")
    for n in range(frames.count()):
        try:
            frames.nth(n).scroll_into_view_if_needed(timeout=10_000)
            page.wait_for_timeout(1500)
        except Exception:
            continue
    page.wait_for_timeout(1500)


def pick(page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    settled(page)


def probe_app(checkout: Path, data: Path, log: Path, traces: list[Path], reports: list[Path],
              shots: Path | None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {"link": {}, "traces_page": {}, "two_runs": {}}
    env = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_LLM": "replay", "PROBE_OPENED": str(log), "PYTHONPATH": str(checkout),
           "PROBE_OUTSIDE": str(data.parent / "outside")}
    code = data.parent / "server.py"
    code.write_text(SERVER)
    with studio_server(data, env, data.parent / "streamlit.log", checkout=checkout, launcher=(str(code),)) as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])

        def fresh():
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.requests, page.dialogs = [], []
            page.on("request", lambda r: page.requests.append(r.url))
            page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
            return page

        for path in traces:
            page = fresh()
            before = len(opened(log))
            try:
                page.goto(f"{url}/?saved={path.name}&step=5", timeout=180_000)  # step 5: the beams' picture
                settled(page, "Ask")
                every_frame_shown(page)
            except Exception as exc:
                results["link"][path.name] = {"stuck": str(exc)[:120]}
                page.close()
                continue
            results["link"][path.name] = page_state(page, log, before)
            if shots is not None:
                page.screenshot(path=str(shots / f"link_{path.stem}.png"), full_page=True)
            page.close()
        page = fresh()
        page.goto(url, timeout=180_000)
        settled(page)
        before = len(opened(log))
        page.get_by_role("link", name="Traces").click()
        settled(page, "Traces")
        page.wait_for_timeout(2000)
        state = page_state(page, log, before)
        state["table"] = page.locator("[data-testid='stDataFrame']").count()
        state["captions"] = [c.inner_text()[:200] for c in page.locator("[data-testid='stCaptionContainer']").all()][:6]
        results["traces_page"] = state
        if shots is not None:
            page.screenshot(path=str(shots / "traces_page.png"), full_page=True)
        page.close()
        good = BASE_REPORTS[0]
        evals, aside = data / "evals", data / "evals_aside"
        aside.mkdir(exist_ok=True)
        hostile = [p for p in reports if p.stem not in BASE_REPORTS]
        for path in [None, *hostile]:  # every report at once, then each alone beside the two good ones
            for other in hostile:
                if path is not None and other != path and (evals / other.name).exists():
                    (evals / other.name).rename(aside / other.name)
            if path is not None and (aside / path.name).exists():
                (aside / path.name).rename(evals / path.name)
            name = path.name if path is not None else "every report at once"
            page = fresh()
            before = len(opened(log))
            try:
                page.goto(url, timeout=180_000)
                settled(page)
                page.get_by_role("link", name="Evaluate").click()
                settled(page, "Evaluate")
                page.get_by_role("tab", name="Two runs, question by question").click(timeout=60_000)
                settled(page)
                if path is None:
                    raise StopIteration
                pick(page, "A (before)", path.stem)
                pick(page, "B (after)", good)
                page.wait_for_timeout(1500)
                table = page.locator('[class*="st-key-pair_questions_"] [data-testid="stDataFrame"]')
                if table.count():
                    table.scroll_into_view_if_needed(timeout=30_000)
                    box = table.bounding_box()
                    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the first question's row
                    settled(page)
                    every_frame_shown(page)
                state = page_state(page, log, before)
                state["lined_up"] = page.get_by_text("questions in both").count() > 0
            except StopIteration:
                state = page_state(page, log, before)
                state["lined_up"] = page.get_by_text("questions in both").count() > 0
            except Exception as exc:
                state = {"stuck": str(exc).splitlines()[0][:160], **page_state(page, log, before)}
            results["two_runs"][name] = state
            if shots is not None:
                page.screenshot(path=str(shots / f"two_runs_{Path(name).stem.replace(' ', '_')}.png"),
                                full_page=True)
            page.close()
        browser.close()
    return results


def probe_cli(checkout: Path, data: Path, log: Path, traces: list[Path], reports: list[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {"diagnose": {}, "export-html": {}, "compare": {}}
    work = data.parent / "cli"
    work.mkdir(exist_ok=True)
    for path in traces:
        out["diagnose"][path.name] = cli(checkout, ["diagnose", str(path)], log, work)
        out["export-html"][path.name] = cli(checkout, ["export-html", str(path), "-o", str(work / "lesson.html")],
                                            log, work, written=work / "lesson.html")
    good = data / "evals" / f"{BASE_REPORTS[0]}.json"
    for path in reports:
        if path.stem not in BASE_REPORTS:
            out["compare"][path.name] = cli(checkout, ["compare", str(path), str(good)], log, work)
    out["diagnose_folder"] = cli(checkout, ["diagnose", str(data / "traces")], log, work)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-app", action="store_true")
    parser.add_argument("--shots", type=Path, default=None)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="probe54_"))
    data, outside = workdir / "data", workdir / "outside"
    secret = outside_trace(outside)
    traces = write_hostile_traces(data / "traces", outside=secret)
    for name in ("walkthrough.json", "walkthrough_ppr.json"):  # two good runs beside them, to be listed
        (data / "traces" / name).write_text((BUNDLED / name).read_text(encoding="utf-8"), encoding="utf-8")
    reports = write_hostile_reports(data / "evals", secret)
    log = workdir / "opened.txt"
    os.environ["PROBE_OPENED"], os.environ["PROBE_OUTSIDE"] = str(log), str(outside)
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"checkout": str(args.checkout)}
    results["cli"] = probe_cli(args.checkout.resolve(), data, log, traces, reports)
    if not args.no_app:
        results["app"] = probe_app(args.checkout.resolve(), data, log, traces, reports, args.shots)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    print(table(results))


def _cli_cell(r: dict[str, Any]) -> str:
    what = "traceback" if r["traceback"] else f"rc {r['rc']}, {r['lines']} line(s)"
    if r["outside"] or r["marker"]:
        what += ", READ OUTSIDE"
    if r.get("planted"):
        what += f", {r['planted']} script element(s) in the file written"
    return what + (f": {r['first']}" if r["first"] else "")


def _app_cell(r: dict[str, Any]) -> str:
    bad = [f"stuck ({r['stuck']})"] if "stuck" in r else []
    if r.get("dialogs"):
        bad.append(f"{r['dialogs']} dialog(s)")
    if r.get("title") == PWNED:
        bad.append("title changed")
    if r.get("planted"):
        bad.append(f"{r['planted']} planted element(s)")
    if r.get("leak_requests"):
        bad.append(f"{r['leak_requests']} request(s) to :9")
    if r.get("outside") or r.get("marker"):
        bad.append("READ OUTSIDE")
    if r.get("exceptions"):
        bad.append("traceback box")
    said = (r.get("errors") or r.get("warnings") or [""])[0].replace("\n", " ")
    lined = "; lined up" if r.get("lined_up") else ""
    return ("; ".join(bad) or "nothing ran") + lined + (f" — says: {said}" if said else "")


def table(results: dict[str, Any]) -> str:
    rows = ["| file | app by link | gear diagnose | gear export-html |", "| --- | --- | --- | --- |"]
    app = results.get("app", {})
    for name, r in results["cli"]["diagnose"].items():
        link = app.get("link", {}).get(name)
        rows.append(f"| {name} | {_app_cell(link) if link else '—'} | {_cli_cell(r)} | "
                    f"{_cli_cell(results['cli']['export-html'][name])} |")
    rows += ["", "| report | Evaluate two-runs tab (as A) | gear compare REPORT GOOD |", "| --- | --- | --- |"]
    for name, r in results["cli"]["compare"].items():
        two = app.get("two_runs", {}).get(name)
        rows.append(f"| {name} | {_app_cell(two) if two else '—'} | {_cli_cell(r)} |")
    every = app.get("two_runs", {}).get("every report at once")
    if every:
        rows.append(f"| every report at once | {_app_cell(every)} | — |")
    rows.append("")
    rows.append(f"gear diagnose data/traces: {_cli_cell(results['cli']['diagnose_folder'])}")
    if app:
        page = app["traces_page"]
        rows.append(f"Traces page: {_app_cell(page)}; tables shown: {page.get('table')}; captions: "
                    f"{' | '.join(page.get('captions', []))}")
    return "\n".join(rows).replace("\\", "\\\\")


if __name__ == "__main__":
    main()
