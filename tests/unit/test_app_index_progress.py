"""The Index page while the LLM extracts triples: the build's status box carries the progress line in its
label — passages done / total, passages per minute, time left, triples so far — stays open (a label update without
`expanded` collapsed it in the browser, hiding the bar and Cancel), and re-measures the pace while a passage stalls.

The labels are read as the page sent them, mid-run, from the test's script runner (the final page shows only the
last label), with the progress clock advanced by the scripted model: 12 s a passage."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import partial
from pathlib import Path

import pytest
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gear.config import Settings
from gear.extract.outputs import OUTPUTS
from gear.extract.progress import Pace
from gear.llm import LLMResult
from tests.conftest import FakeEncoder
from tests.scripted_llm import passage_title
from tests.unit.test_app import DOCS, start, studio  # noqa: F401 - studio is a fixture
from tests.unit.test_extract_progress import Clock

NO_BREAK = "\u00a0"


def status_boxes() -> list[tuple[str, bool]]:
    """(label, expanded) of every st.status block the running page has sent so far, in order."""
    runner = get_script_run_ctx()._enqueue.__self__  # type: ignore[union-attr]  # the test's LocalScriptRunner
    boxes = []
    for msg in runner.forward_msgs():
        block = msg.delta.add_block if msg.HasField("delta") and msg.delta.HasField("add_block") else None
        if block is not None and block.HasField("expandable"):
            boxes.append((block.expandable.label, block.expandable.expanded))
    return boxes


class TimedLLM:
    """Answers one triple per passage, 12 s each on `clock`; before answering, notes the status box as the page shows
    it. The third passage stalls 60 s and then writes a first piece (as a streamed answer does)."""

    model = "scripted-extraction"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.seen: list[tuple[str, bool]] = []  # the box at each call
        self.stalled: tuple[str, bool] | None = None  # the box once the third passage has stalled

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        self.seen.append(status_boxes()[-1])
        if len(self.seen) == 3:
            self.clock.now += 60
            assert on_text is not None, "the page does not hear the answer being written"
            on_text('{"named_entities"')
            self.stalled = status_boxes()[-1]
        self.clock.now += 12
        title = passage_title(messages)
        text = json.dumps({"named_entities": [title], "triples": [[title, "near", "Sicily"]]})
        return LLMResult(text, prompt_tokens=50, completion_tokens=10, seconds=12, model=self.model)


def test_the_status_box_shows_the_progress_line_while_extracting(studio: dict,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from gear.extract import bridge
    from studio.core import resources
    from studio.pages import index as indexes

    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    clock = Clock()
    llm = TimedLLM(clock)
    monkeypatch.setattr(indexes, "Pace", partial(Pace, clock))
    monkeypatch.setattr(bridge, "llm_from_settings", lambda settings: llm)
    one_at_a_time = bridge.config_for  # the page's LLM calls run in its own thread (as on a 1-slot server)
    monkeypatch.setattr(bridge, "config_for",
                        lambda settings, options: dataclasses.replace(one_at_a_time(settings, options), concurrency=1))
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("progress").run()
    corpus = json.dumps([{"title": t, "text": x} for t, x in DOCS[:4]]).encode()
    at.file_uploader(key="ix_corpus").set_value([("corpus.json", corpus, "application/json")]).run()
    at.button(key="ix_build").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("progress is ready" in str(s.value) for s in at.success)

    head = "Building progress: extracting triples — "
    shown = [(label.replace(NO_BREAK, " "), expanded) for label, expanded in llm.seen]
    assert shown == [
        (head + "0 / 4 passages · measuring the pace… · 0 triples so far", True),
        (head + "1 / 4 passages · measuring the pace… · 1 triple so far", True),  # one passage: no pace yet
        (head + "2 / 4 passages · 5.0 passages/min · ≈ 24 s left · 2 triples so far", True),  # the second in 12 s
        (head + "3 / 4 passages · 1.4 passages/min · ≈ 42 s left · 3 triples so far", True),  # the third took 72 s
    ]
    assert "5.0\u00a0passages/min" in llm.seen[2][0]  # each part's words stay together where the label wraps
    # the third passage stalled 60 s: the pace is measured again before it finishes (as if done now: 2 in 72 s)
    assert llm.stalled is not None
    assert llm.stalled[0].replace(NO_BREAK, " ") == head + "2 / 4 passages · 1.7 passages/min · ≈ 36 s left · " \
                                                           "2 triples so far"
    assert Path(studio["data"] / "indexes" / "progress" / "manifest.json").is_file()
    said = " ".join(str(m.value) for m in at.markdown)  # what is asked of the model, in words
    words = re.search(r"\((it writes [^;]+); 1 passage at once; resumable: a journal beside the index keeps", said)
    assert words is not None and words[1] in {f"it writes {o.label}" for o in OUTPUTS.values()}


def test_every_answer_shape_is_said_in_words() -> None:
    from typing import get_args

    from gear.extract.outputs import OutputName

    assert set(OUTPUTS) == set(get_args(OutputName)) and all(o.label for o in OUTPUTS.values())
