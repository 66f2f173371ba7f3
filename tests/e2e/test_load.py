"""Many people on one app, bounded: four browser sessions press Ask at the same moment on the walk-through demo as
shipped (default LLM: the recordings answer), alternating the two recorded questions; each gets the very trace a
single session gets for its question (times and answer origins aside), no model call happens, nothing fails. The
eight-session run and three concurrent live questions are bench/load.py (numbers in docs/results.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.sessions import normalise, run, studio_server
from tests.e2e.test_browser import AS_SHIPPED, SHOTS, demo_data, require_browser

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [
    "When did the location of the basilica which is named for the same saint that the Bremen Cathedral is named "
    "for become a country?",
    "What date did the Governor of the city where the basilica that is named after the same person as the Bremen "
    "Cathedral and the head of the catholic religion is located end?",
]


def test_four_sessions_at_once_get_a_single_sessions_traces(tmp_path: Path) -> None:
    require_browser()
    if not (ROOT / "assets" / "traces" / "walkthrough_3hop_gear.json").is_file():
        pytest.skip("the walk-through questions are not recorded")
    data = demo_data(tmp_path / "load")
    with studio_server(data, AS_SHIPPED, tmp_path / "streamlit.log") as url:
        alone = run(url, QUESTIONS, tmp_path / "alone", together=False)
        assert [r.errors for r in alone] == [[], []]
        reference = {r.question: normalise(r.trace) for r in alone}
        assert all(reference.values()) and reference[QUESTIONS[0]] != reference[QUESTIONS[1]]
        together = run(url, [QUESTIONS[i % 2] for i in range(4)], tmp_path / "together")
    assert [r.errors for r in together] == [[]] * 4
    for r in together:
        assert r.trace["events"][0]["question"] == r.question  # its own question, not a neighbour's
        assert normalise(r.trace) == reference[r.question], f"session {r.session} differs from a single session"
        assert r.llm_sources().get("model", 0) == 0  # recorded questions never reach the model
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    (SHOTS.parent / "load_4_sessions.json").write_text(json.dumps(
        {"alone_s": [round(r.seconds, 2) for r in alone], "together_s": [round(r.seconds, 2) for r in together]}))
