"""Whether each example question replays at once or runs live, told before it is asked (the Ask and Compare pages'
example lists): "recorded · instant" when the run's first LLM request is in the recordings (gear.agent.recorded),
"live · ≈ 2 min" at this process's measured model speed (gear.llm.speed), "no LLM · seconds" for a method that asks
none; and the note under the list that says what the marks rest on."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import streamlit as st

from gear import methods
from gear.agent.progress import seconds_text
from gear.config import Settings, public_settings
from gear.llm.speed import MODEL_SPEED, ModelSpeed
from studio.core.resources import engine_for, engine_ready
from studio.core.safe import one_line

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.agent.engine import Engine

RECORDED, NO_LLM = "recorded · instant", "no LLM · seconds"


class ExampleMarks(NamedTuple):
    """The example list's marks (question → mark), the model they assume, and why there are none when they cannot
    be told ("" while the index loads)."""

    marks: dict[str, str]
    model: str = ""
    problem: str = ""
    speed: ModelSpeed = MODEL_SPEED  # the engine's measured model speeds, which the "live" times come from


def example_marks(index: Path, questions: tuple[str, ...], settings: Settings) -> ExampleMarks:
    """Each example question's mark: "recorded · instant" when the run's answers are recorded (gear.agent.recorded:
    its first LLM request is in the cache), "live · ≈ 2 min" when the model must compute them (at this process's
    measured speed), "no LLM · seconds" for a method that asks none. Empty until the index and embedder are loaded
    (computing the marks needs the index's retrieval; the page must not wait for it)."""
    if not engine_ready(index):
        return ExampleMarks({})
    engine = engine_for(index)
    method = methods.get(settings.method)
    if not method.uses_llm(settings):
        return ExampleMarks(dict.fromkeys(questions, NO_LLM))
    # the settings go unhashed (they hold the API key); their public form is the cache key
    key = json.dumps(public_settings(settings), sort_keys=True, default=str)
    try:
        model = engine.llm(settings).model
        recorded = _recorded(engine, settings, str(index), questions, key, _cache_stamp(settings))
    except Exception as exc:  # e.g. a replay cache that is empty: Ask would say so too; the page still draws
        return ExampleMarks({}, problem=one_line(exc))
    expected = engine.speed.run_seconds(model, method, settings)
    live = "live" + (f" · {seconds_text(expected)}" if expected else "")
    replay_only = settings.llm == "replay"
    return ExampleMarks({q: RECORDED if recorded.get(q) else ("not recorded (replay only)" if replay_only else live)
                  for q in questions}, model, speed=engine.speed)


def marks_note(marks: dict[str, str], model: str, speeds: ModelSpeed = MODEL_SPEED) -> str:
    n = sum(1 for mark in marks.values() if mark == RECORDED)
    if all(mark == NO_LLM for mark in marks.values()):
        return "This method asks no LLM: every question runs in seconds."
    speed = speeds.speed(model)
    how = (f"{speed.read_rate:.0f} prompt tokens/s read and {speed.write_rate:.0f} written, measured on "
           f"{speed.calls} live call{'s' if speed.calls != 1 else ''} here" if speed.calls else
           f"assumed {speed.read_rate:.0f} prompt tokens/s read and {speed.write_rate:.0f} written until the first "
           "live call")
    return (f"{n} of {len(marks)} recorded: their answers replay at once. The others run live on the model; the time "
            f"shown is its typical cost per question at {how}.")


def _cache_stamp(settings: Settings) -> tuple[float, ...]:
    """The LLM caches' modification times: a new recorded answer (a file added) changes them."""
    from gear.llm import answer_stores

    return tuple(d.stat().st_mtime if d.is_dir() else 0.0 for d in answer_stores(settings))


@st.cache_data(show_spinner=False, max_entries=64)
def _recorded(_engine: Engine, _settings: Settings, index: str, questions: tuple[str, ...], settings_key: str,
              stamp: tuple[float, ...]) -> dict[str, bool]:
    from gear.agent.recorded import replays_at_once_all

    return {q: bool(found) for q, found in replays_at_once_all(_engine, questions, _settings).items()}


def chosen_question(value: str, questions: Iterable[str]) -> str:
    """The question an example list's choice stands for. Streamlit hands back the label shown when the list's labels
    changed between the click and this run (the marks arrive, or a time estimate moves): "live · ≈ 2 min · Q" then
    stands for Q — the question it ends with."""
    known = list(questions)
    if value in known:
        return value
    return next((q for q in sorted(known, key=len, reverse=True) if value.endswith(" · " + q)), value)
