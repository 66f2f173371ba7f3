"""A run's beam search searched again with other knobs (gear.agent.beam_replay): the recorded knobs give the
recorded beams, other knobs say what changed, and a trace of another index is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.beam_replay import BeamReplayError
from gear.agent.engine import Engine
from gear.config import Settings
from gear.trace import BeamsSearched, Trace


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
