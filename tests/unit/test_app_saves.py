"""Everything a person saves goes to their data folder, never into the project's assets/: the
app's save paths, run here against the real checkout with the data folder elsewhere; the browser test
(tests/e2e/test_front_door.py) runs them from a read-only checkout as another user."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core import paths
from tests.unit.test_app import start, studio  # noqa: F401


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_tagging_a_bundled_trace_writes_into_the_data_folder(studio: dict) -> None:  # noqa: F811
    bundled = snapshot(paths.BUNDLED_TRACES)
    at = start(studio)
    at.switch_page("app_pages/traces.py").run()
    label = next(o for o in at.selectbox(key="tr_choice").options if o.endswith("walkthrough_3hop_gear.json"))
    at.selectbox(key="tr_choice").set_value(label).run()
    at.multiselect[0].set_value(["reasoner hallucination"])
    next(b for b in at.get("form_submit_button") if b.label == "Save tags").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    saved = studio["data"] / "tags" / "assets__traces__walkthrough_3hop_gear.tags.json"
    assert saved.is_file() and "reasoner hallucination" in saved.read_text(encoding="utf-8")
    assert snapshot(paths.BUNDLED_TRACES) == bundled  # nothing new or changed beside the bundled traces
    at.run()  # and the table reads it back
    table = at.dataframe[0].value
    assert table[table["file"] == "walkthrough_3hop_gear.json"]["tags"].tolist() == ["reasoner hallucination"]


def test_a_trace_in_the_data_folder_keeps_its_tags_beside_it(studio: dict) -> None:  # noqa: F811
    trace = studio["data"] / "traces" / "run.json"
    assert paths.tags_path(trace) == studio["data"] / "traces" / "run.tags.json"
    evals = studio["data"] / "evals" / "r1" / "traces" / "q.json"
    assert paths.tags_path(evals) == evals.with_name("q.tags.json")
    outside = paths.tags_path(paths.BUNDLED_TRACES / "walkthrough.json")
    assert outside.parent == studio["data"] / "tags" and not outside.is_relative_to(paths.ASSETS)


def test_the_diagnosis_verdict_of_a_bundled_trace_goes_to_the_data_folder(studio: dict) -> None:  # noqa: F811
    from gear.diagnosis import diagnose
    from gear.trace import Trace
    from studio.gold.review import save_review

    path = paths.BUNDLED_TRACES / "walkthrough.json"
    bundled = snapshot(paths.BUNDLED_TRACES)
    d = diagnose(Trace.load(path))
    written = save_review(path, d, d.category or "none")
    assert written.is_relative_to(studio["data"]) and snapshot(paths.BUNDLED_TRACES) == bundled


def test_a_read_only_project_saves_in_the_users_own_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GEAR_STUDIO_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    writable = {True}
    monkeypatch.setattr(paths.os, "access", lambda path, mode: next(iter(writable)))
    assert paths.data_dir() == paths.ROOT / "data"  # a clone one may write to: ./data, as always
    writable.clear()
    writable.add(False)
    assert paths.data_dir() == tmp_path / "xdg" / "gear-studio"  # a read-only checkout: the user's folder
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(tmp_path / "mine"))
    assert paths.data_dir() == tmp_path / "mine"  # named: always that
