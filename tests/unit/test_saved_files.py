"""A saved file is untrusted input: each kind has one decoder that checks every field's type and range
(gear.trace.schema, gear.eval.report_file, gear.data.qa_set, gear.index.manifest over gear.saved), refuses a file by
size and nesting before parsing it, says what is wrong in one line naming the file and the field, and opens a file
only inside the folders it may come from. Property tests put wrong types and hostile strings in every field of real
traces and reports: decoding either gives values of the declared types or raises the one error type."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import re
import time
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gear.eval.report_file import ReportError, decode_report, kept_diagnosis, read_report, trace_path
from gear.saved import MAX_DEPTH, SAFE_INT, SavedFileError, inside, parse, too_deep, where
from gear.trace import Trace, TraceError
from tests.hostile_files import (
    BASE_REPORTS,
    EVALS,
    hostile_reports,
    hostile_traces,
    outside_trace,
    write_big,
    write_hostile_reports,
    write_hostile_traces,
)

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "assets" / "traces"


# -- what "typed" means: every field of every decoded object has its declared type ------------------------------------
def assert_typed(value: Any, tp: Any = None, where_: str = "") -> None:
    """`value` holds what `tp` (default: its own dataclass) declares: an int is an int (never a bool), a float a
    finite float, a string a string, lists and dicts of typed items, nested dataclasses typed in turn."""
    if tp is None or (isinstance(tp, type) and dataclasses.is_dataclass(tp)):
        cls = type(value) if tp is None else tp
        assert isinstance(value, cls), where_
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            assert_typed(getattr(value, f.name), hints[f.name], f"{where_}.{f.name}")
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arg in args:
            try:
                assert_typed(value, arg, where_)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{where_}: {value!r:.60} is none of {args}")
    if tp is type(None):
        assert value is None, where_
    elif origin is list:
        assert isinstance(value, list), where_
        for n, item in enumerate(value):
            assert_typed(item, args[0], f"{where_}[{n}]")
    elif origin is dict:
        assert isinstance(value, dict), where_
        for key, item in value.items():
            assert isinstance(key, str), where_
            assert_typed(item, args[1], f"{where_}[{key!r}]")
    elif tp is bool:
        assert type(value) is bool, where_
    elif tp is int:
        assert type(value) is int and abs(value) <= SAFE_INT, f"{where_}: {value!r:.60}"
    elif tp is float:
        assert type(value) is float and math.isfinite(value), f"{where_}: {value!r:.60}"
    elif tp is str:
        assert type(value) is str, f"{where_}: {value!r:.60}"
    else:
        raise AssertionError(f"{where_}: no check for {tp}")


# -- hostile values in every field -------------------------------------------------------------------------------------
HOSTILE_TEXT = ["<img src=x onerror=alert(1)>", "<svg onload=alert(2)>", "../../../etc/hostname", "5", "1e3", "NaN",
                "\x1b]0;pwned\x07", "", "x" * 300_000]
hostile = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
              st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(HOSTILE_TEXT), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the root's children down to its leaves)."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found += _places(item, (*path, n))
    return found


def _put(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(data)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


SMALL_TRACE = json.loads((BUNDLED / "walkthrough_ppr.json").read_text(encoding="utf-8"))
TRACE_PLACES = _places(SMALL_TRACE)
GEAR_TRACE = json.loads((BUNDLED / "walkthrough.json").read_text(encoding="utf-8"))
GEAR_PLACES = _places(GEAR_TRACE)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), value=hostile)
def test_a_hostile_value_anywhere_in_a_trace_decodes_typed_or_raises_trace_error(data: st.DataObject,
                                                                                 value: Any) -> None:
    original, places = data.draw(st.sampled_from([(SMALL_TRACE, TRACE_PLACES), (GEAR_TRACE, GEAR_PLACES)]))
    changed = _put(original, data.draw(st.sampled_from(places)), value)
    for decode in (lambda: Trace.from_dict(changed, "x.json"),
                   lambda: Trace.from_json(json.dumps(changed), "x.json")):
        try:
            trace = decode()
        except TraceError as exc:
            message = str(exc)
            assert message.startswith("x.json: ") and "\n" not in message and len(message) < 600
            continue
        for n, event in enumerate(trace.events):
            assert_typed(event, where_=f"events[{n}]")


SMALL_REPORT = json.loads((EVALS / f"{BASE_REPORTS[0]}.json").read_text(encoding="utf-8"))
SMALL_REPORT["per_question"] = SMALL_REPORT["per_question"][:2]
REPORT_PLACES = _places(SMALL_REPORT)
ENTRY_TYPES = typing.get_type_hints(__import__("gear.eval.report", fromlist=["QuestionResult"]).QuestionResult)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), value=hostile)
def test_a_hostile_value_anywhere_in_a_report_decodes_typed_or_raises_report_error(data: st.DataObject,
                                                                                   value: Any) -> None:
    changed = _put(SMALL_REPORT, data.draw(st.sampled_from(REPORT_PLACES)), value)
    try:
        report = decode_report(changed, "r.json")
    except ReportError as exc:
        assert str(exc).startswith("r.json") and "\n" not in str(exc)
        return
    for k, v in report["recall"].items():
        assert k.isdigit() and type(v) in (int, float) and 0 <= v <= 100
    assert type(report["method"]) is str
    for n, entry in enumerate(report["per_question"]):
        for name, value_ in entry.items():
            assert_typed(value_, ENTRY_TYPES[name], f"per_question[{n}].{name}")
        kept = kept_diagnosis(entry.get("diagnosis"))
        if kept is not None:
            assert_typed(kept)


def test_the_bundled_traces_and_reports_decode() -> None:
    traces = [*BUNDLED.glob("*.json"), *EVALS.glob("*/traces/*.json")]
    for path in traces:
        for n, event in enumerate(Trace.load(path).events):
            assert_typed(event, where_=f"{path.name} events[{n}]")
    reports = [p for p in EVALS.rglob("*.json")
               if "traces" not in p.parts and "per_question" in json.loads(p.read_text(encoding="utf-8"))]
    assert len(traces) > 100 and len(reports) > 60
    for path in reports:
        for entry in read_report(path)["per_question"]:
            if entry.get("diagnosis"):
                assert kept_diagnosis(entry["diagnosis"]) is not None, path


# -- the hostile files -------------------------------------------------------------------------------------------------
#: each hostile trace and the field its one line names
TRACE_REFUSALS = {
    "numbers_as_html.json": "events[2].k: input should be a valid integer, not a string",
    "passage_id_as_html.json": "events[10].triples[0].passage_id: input should be a valid integer, not a string",
    "ppr_edges_as_html.json": "events[6].edges[0].weight: input should be a valid number, not a string",
    "iteration_as_html.json": "events[1].iteration: input should be a valid integer, not a string",
    "nan_recall.json": "events[27].total_ms: input should be a finite number",
    "wrong_types.json": "events[2].passages: input should be a valid list, not a string",
    "keys_and_settings_as_html.json": "events[0].settings: setting 'qa_top_k' should be a whole number, not a string",
    "events_is_a_number.json": "events: should be a list of events, not a number",
    "deep_nesting.json": f"nested more than {MAX_DEPTH} levels deep",
    "huge_number.json": "invalid JSON: Exceeds the limit (4300 digits)",
    "not_json.json": "invalid JSON at line 1, column 1: Expecting value",
}


def test_every_hostile_trace_is_refused_in_one_line_naming_the_file_and_the_field(tmp_path: Path) -> None:
    paths = {p.name: p for p in write_hostile_traces(tmp_path / "traces", big=False)}
    assert set(paths) == set(TRACE_REFUSALS) == set(hostile_traces())
    for name, said in TRACE_REFUSALS.items():
        with pytest.raises(TraceError) as caught:
            Trace.load(paths[name])
        message = str(caught.value)
        assert message.startswith(f"{paths[name]}: ") and said in message, message
        assert "\n" not in message and len(message) < 600


def test_a_50_mb_trace_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = write_big(tmp_path / "big.json")
    monkeypatch.setattr(json, "loads", lambda *a, **k: pytest.fail("parsed a file it should have refused"))
    started = time.perf_counter()
    with pytest.raises(TraceError, match=r"big\.json: 50\.0 MB, more than the 16 MB a saved file may have"):
        Trace.load(big)
    assert time.perf_counter() - started < 1.0  # refused by its size, not read


@pytest.mark.parametrize("text", ["[" * 50_000 + "]" * 50_000, '{"a": ' * 65 + "1" + "}" * 65,
                                  '["' + "]" * 100 + '", ' + "[" * 70 + "]" * 70 + "]"])
def test_nesting_past_the_limit_is_found_before_parsing(text: str) -> None:
    assert too_deep(text)
    with pytest.raises(SavedFileError, match="nested more than 64 levels deep"):
        parse(text, "x.json", max_bytes=10**8)


@pytest.mark.parametrize("text", ['{"a": ' * 64 + "1" + "}" * 64, '["[[[[[[", "\\\\", "\\"[[["]',
                                  (BUNDLED / "walkthrough_gear_small.json").read_text(encoding="utf-8")])
def test_nesting_within_the_limit_passes(text: str) -> None:
    assert not too_deep(text)
    parse(text, "x.json", max_bytes=10**8)


def test_the_settings_a_trace_holds_as_numbers_are_those_gear_config_declares_so() -> None:
    from gear.config import Settings
    from gear.trace.schema import SETTING_KINDS

    declared = {}
    for name, info in Settings.model_fields.items():
        kinds = [a for a in typing.get_args(info.annotation) if a is not type(None)] or [info.annotation]
        if len(kinds) == 1 and kinds[0] in (int, float, bool):
            declared[name] = kinds[0]
    assert declared == SETTING_KINDS


def test_a_field_is_named_as_a_person_writes_it() -> None:
    assert where(("events", 12, "k")) == "events[12].k"
    assert where(("events", 3, "recall", "<img src=x onerror=alert(1)>", "[key]")) == \
        "events[3].recall['<img src=x onerror=alert…'] (its key)"


# -- reports -----------------------------------------------------------------------------------------------------------
REPORT_REFUSALS = {
    "report_numbers_as_html.json": "recall['5']: input should be a finite number",
    "report_wrong_shapes.json": "per_question[0]: input should be a valid dictionary, not a string",
    "report_per_question_is_a_number.json": "per_question: input should be a valid list, not a number",
    "report_deep_nesting.json": f"nested more than {MAX_DEPTH} levels deep",
}


def test_hostile_reports_are_refused_or_decoded_typed(tmp_path: Path) -> None:
    outside = outside_trace(tmp_path / "outside")
    paths = {p.name: p for p in write_hostile_reports(tmp_path / "evals", outside)}
    assert set(paths) == set(hostile_reports(tmp_path / "again", outside_trace(tmp_path / "again_out")))
    for name, said in REPORT_REFUSALS.items():
        with pytest.raises(ReportError) as caught:
            read_report(paths[name])
        assert str(caught.value).startswith(f"{paths[name]}: ") and said in str(caught.value), str(caught.value)
    words = read_report(paths["report_words_as_html.json"])  # text is text: escaped where it is shown
    assert words["label"].startswith("<img") and words["per_question"][0]["answer"].startswith("<img")


def test_a_report_s_trace_is_followed_only_inside_its_folder_or_the_data_folder(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(tmp_path / "data"))
    outside = outside_trace(tmp_path / "outside")
    evals = tmp_path / "data" / "evals"
    paths = {p.name: p for p in write_hostile_reports(evals, outside)}
    for name in ("report_trace_absolute.json", "report_trace_dotdot.json"):
        report = read_report(paths[name])
        entry = report["per_question"][0]
        monkeypatch.chdir(tmp_path / "data")
        with pytest.raises(ReportError, match=r"^2hop__\S+: its trace_file '.*' is a file outside the report's folder "
                                              r"and the data folder: not opened$"):
            trace_path(paths[name], entry)
        good = report["per_question"][1]
        assert trace_path(paths[name], good) == Path(good["trace_file"])  # inside: followed
    link = evals / "linked.json"
    os.symlink(outside, link)
    with pytest.raises(ReportError, match="a link to a file outside"):
        trace_path(paths["report_trace_absolute.json"], {"id": "q", "trace_file": str(link)})
    moved = {"id": "q", "trace_file": "/somewhere/gone/traces/2hop__1.json"}  # a data folder that moved
    beside = evals / "moved" / "traces" / "2hop__1.json"
    beside.parent.mkdir(parents=True)
    beside.write_text("{}")
    assert trace_path(evals / "moved.json", moved) == beside


def test_inside_resolves_links_and_dots(tmp_path: Path) -> None:
    home, away = tmp_path / "home", tmp_path / "away"
    home.mkdir()
    away.mkdir()
    (away / "secret.json").write_text("{}")
    (home / "ok.json").write_text("{}")
    os.symlink(away / "secret.json", home / "link.json")
    assert inside(home / "ok.json", [home], "home") == home / "ok.json"
    for path in (home / "link.json", home / ".." / "away" / "secret.json", away / "secret.json"):
        with pytest.raises(SavedFileError, match="outside home: not opened"):
            inside(path, [home], "home")


# -- an index's manifest and its own QA set ----------------------------------------------------------------------------
MANIFEST = {"format_version": 2, "backend": "memory", "embedder": "all-MiniLM-L6-v2", "dims": 384, "n_passages": 2,
            "n_triples": 3, "n_entities": 4, "created": "2026-12-06T08:00:00", "source": {"qa": "qa.json"},
            "files": {"passages.json": {"bytes": 10, "sha256": "ab"}}}


@pytest.mark.parametrize(("change", "said"), [
    ({"dims": "<img src=x onerror=alert(1)>"}, "manifest.json: dims: input should be a valid integer, not a string"),
    ({"n_passages": float("nan")}, "manifest.json: n_passages: input should be a valid integer, not a number"),
    ({"files": {"../../etc/passwd": {"bytes": 1, "sha256": "x"}}}, "manifest.json: files['../../etc/passwd'] (its "
                                                                   "key): string should match pattern"),
    ({"files": {"passages.json": {"bytes": "10"}}}, "manifest.json: files['passages.json'].bytes: input should be a "
                                                    "valid integer, not a string"),
])
def test_a_hostile_manifest_is_refused_in_one_line_naming_the_field(tmp_path: Path, change: dict, said: str) -> None:
    from gear.index.manifest import Manifest
    from gear.store.base import StoreError

    (tmp_path / "manifest.json").write_text(json.dumps({**MANIFEST, **change}), encoding="utf-8")
    with pytest.raises(StoreError) as caught:
        Manifest.read(tmp_path)
    assert said in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
    (tmp_path / "manifest.json").write_text("[" * 50_000 + "]" * 50_000, encoding="utf-8")
    with pytest.raises(StoreError, match="nested more than 64 levels deep"):
        Manifest.read(tmp_path)


def test_a_good_manifest_reads_typed(tmp_path: Path) -> None:
    from gear.index.manifest import Manifest

    (tmp_path / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    assert_typed(Manifest.read(tmp_path))


@pytest.mark.parametrize(("record", "said"), [
    ({"question": "q?" * 600_000, "paragraphs": [{"title": "T", "paragraph_text": "x"}]},
     "field 'question' has 1,200,000 characters, more than the 1,000,000 it may have"),
    ({"question": "q?", "answer": ["a" * 20_000], "paragraphs": [{"title": "T", "paragraph_text": "x"}]},
     "field 'answer' has 20,000 characters"),
    ({"question": "q?", "paragraphs": [{"title": "T", "paragraph_text": "x", "passage_id": 2**60}]},
     "'passage_id' must be a whole number from 0"),
    ({"question": "q?", "id": "i" * 5_000, "paragraphs": [{"title": "T", "paragraph_text": "x"}]},
     "field 'id' has 5,000 characters"),
])
def test_an_own_qa_set_bounds_its_fields(tmp_path: Path, record: dict, said: str) -> None:
    from gear.data.qa_set import QASetError, load_own_qa, qa_path

    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    qa_path(tmp_path).write_text(json.dumps([record]), encoding="utf-8")
    with pytest.raises(QASetError, match=re.escape(said)):
        load_own_qa(tmp_path)


def test_a_brought_json_file_nested_too_deep_is_refused_before_parsing(tmp_path: Path) -> None:
    from gear.data.reading import InputError, read_json

    path = tmp_path / "qa.json"
    path.write_text("[" * 50_000 + "]" * 50_000, encoding="utf-8")
    with pytest.raises(InputError, match=r"qa\.json: nested more than 64 levels deep"):
        read_json(path)
