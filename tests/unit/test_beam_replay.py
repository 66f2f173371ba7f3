"""A run's beam search searched again with other knobs (gear.agent.beam_replay): the recorded knobs give the
recorded beams, other knobs say what changed, and a trace of another index is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.beam_replay import BeamReplayError
from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import BeamsSearched
from gear.trace import Trace


@pytest.fixture
def engine(tiny_index: Path, fake_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(retriever="bm25"), encoder=fake_encoder)


@pytest.fixture
def run(engine: Engine) -> Trace:
    return engine.retrieve("Which sea is the island of Mount Etna, Sicily, in?", k=3,
                           settings=engine.settings.with_(method="naive", beam_width=3)).trace


def kept(event: BeamsSearched) -> list[tuple[int, ...]]:
    return [tuple(b.triple_ids) for b in event.steps[-1]]


def test_the_recorded_knobs_give_the_recorded_beams(engine: Engine, run: Trace) -> None:
    replay = engine.replay_beams(run, 1)
    assert replay.same and not replay.passages_gained and not replay.passages_lost
    assert kept(replay.beams) == kept(run.first(BeamsSearched, 1))
    assert replay.params == replay.recorded_params


def test_other_knobs_say_which_beams_entered_and_left(engine: Engine, run: Trace) -> None:
    recorded = kept(run.first(BeamsSearched, 1))
    narrow = engine.replay_beams(run, 1, width=1)
    assert narrow.params.width == 1 and narrow.params.gamma == 2.0  # γ follows the new width (2b)
    assert len(kept(narrow.beams)) == 1
    assert set(narrow.left) == set(recorded) - set(kept(narrow.beams))
    assert set(narrow.entered) == set(kept(narrow.beams)) - set(recorded)
    longer = engine.replay_beams(run, 1, length=3)
    assert all(len(b) <= 3 for b in kept(longer.beams))
    assert set(longer.entered) == set(kept(longer.beams)) - set(recorded)
    assert run.first(BeamsSearched, 1).width == 3  # the recorded run is unchanged


def test_unknown_knobs_missing_searches_and_other_indexes_are_refused(engine: Engine, run: Trace) -> None:
    with pytest.raises(BeamReplayError, match="unknown beam setting"):
        engine.replay_beams(run, 1, colour="red")
    with pytest.raises(BeamReplayError, match="no beam search"):
        engine.replay_beams(run, 7)
    data = run.to_dict()
    for event in data["events"]:
        for view in event.get("triples", []) if isinstance(event.get("triples"), list) else []:
            if isinstance(view, dict) and "passage_id" in view:
                view["passage_id"] += 1
    with pytest.raises(BeamReplayError, match="not this index's"):
        engine.replay_beams(Trace.from_dict(data), 1)


# -- the same from the command line and in a lesson's address ---------------------------------------------------------
def test_gear_replay_beams_says_what_the_knobs_changed(engine: Engine, run: Trace, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, make_encoder) -> None:
    import json

    from typer.testing import CliRunner

    from gear.cli import app

    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name=name))  # the tiny index's
    saved = tmp_path / "run.json"
    run.save(saved)
    folder = tmp_path / "index"  # the tiny index (tests/conftest.py builds it here)
    result = CliRunner().invoke(app, ["replay-beams", str(saved), "--iteration", "1", "--width", "1", "--index",
                                      str(folder), "--json"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    expected = engine.replay_beams(run, 1, width=1)
    assert data["left"] == [list(b) for b in expected.left] and data["entered"] == [list(b) for b in expected.entered]
    assert data["now"].startswith("b = 1,") and data["recorded"].startswith("b = 3,")
    assert len(data["beams"]) == 1 and any(r["change"] == "left" for r in data["recorded_beams"])
    plain = CliRunner().invoke(app, ["replay-beams", str(saved), "--no-diversity", "--index", str(folder)],
                               env={"COLUMNS": "200"})
    assert plain.exit_code == 0 and "diversity off" in plain.output and "no model asked" in plain.output
    # without --index, the run's index is looked up in the data folder: a question no QA set holds has none
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(tmp_path / "empty"))
    lost = CliRunner().invoke(app, ["replay-beams", str(saved)], env={"COLUMNS": "200"})
    assert lost.exit_code == 2 and "--index" in lost.output


def test_the_index_a_run_was_made_on_is_found_by_its_question(tmp_path: Path) -> None:
    import json

    from gear.index.home import home_index

    root = tmp_path / "indexes"
    for name, ids in (("a", ["q1", "q2"]), ("b", ["q3"])):
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(json.dumps({"source": {"qa": str(tmp_path / f"{name}.json")}}))
        (tmp_path / f"{name}.json").write_text(json.dumps([{"id": i, "question": "?"} for i in ids]))
    (root / "c").mkdir()
    (root / "c" / "manifest.json").write_text("{}")
    (root / "c" / "qa.json").write_text(json.dumps([{"_id": "q9"}]))
    assert home_index("q3", root) == root / "b" and home_index("q9", root) == root / "c"
    assert home_index("nope", root) is None and home_index("", root) is None


def test_a_lesson_address_carries_the_knobs_and_refuses_bad_ones() -> None:
    from gear.viz.beam_knobs import address_knobs, parse_knobs

    assert parse_knobs({"b": "3", "diversity": "off", "gamma": "5", "l": "3", "neighbours": "20", "step": "8"}) == (
        {"b": 3, "diversity": False, "gamma": 5.0, "l": 3, "neighbours": 20}, [])
    found, problems = parse_knobs({"b": "<script>", "l": "9", "diversity": "maybe"})
    assert found == {} and len(problems) == 3 and "b is a number from 1 to 50" in problems[0]
    recorded = BeamsSearched(1, [], [], 10, 2, 100, 20.0, True, "exact", 0)
    assert address_knobs({"b": 10, "l": 2, "neighbours": 100, "diversity": False}, recorded) == {"diversity": "off"}
    assert address_knobs({"b": 3, "gamma": 5.0}, recorded) == {"b": "3", "gamma": "5"}
    assert parse_knobs(address_knobs({"b": 3, "gamma": 5.0, "diversity": False}, recorded))[0] == \
        {"b": 3, "gamma": 5.0, "diversity": False}
