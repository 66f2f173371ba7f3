"""The README's "Use it from Python" block, run as written: on the tiny corpus indexed with the real embedder, its
LLM answers replayed from a cache recorded here from the scripted model (GEAR_LLM=replay), so no model is needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.data.corpus import Document
from gear.embed import Encoder
from gear.events import Answered, Reasoned, RunStarted
from gear.index import build_index
from gear.llm import CachedLLM
from gear.trace import Trace
from tests.conftest import TINY_DOCS, TINY_TRIPLES
from tests.scripted_llm import ScriptedLLM

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    """The one ```python block of the README's "Use it from Python" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section holds exactly one Python block"
    return blocks[0]


def test_the_readme_names_an_index_and_a_question() -> None:
    code = readme_example()
    assert 'Engine.open("INDEX_DIR")' in code
    assert re.findall(r"^(?:from|import) (\S+)", code, re.M) == ["gear", "gear.events"]  # only the front doors
    assert re.search(r'^question = "[^"]+"$', code, re.M)
    assert len(code.strip().splitlines()) <= 14  # "about ten lines"


@pytest.mark.slow
def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = readme_example()
    question = re.search(r'^question = "([^"]+)"$', code, re.M)[1]  # type: ignore[index]
    index, cache = tmp_path / "index", tmp_path / "llm_cache"
    encoder = Encoder("all-MiniLM-L6-v2")
    build_index([Document(t, x) for t, x in TINY_DOCS], [list(t) for t in TINY_TRIPLES], index, encoder)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout; trace.json lands here
    monkeypatch.setenv("GEAR_LLM", "replay")
    monkeypatch.setenv("GEAR_LLM_CACHE_DIR", str(cache))
    # record the scripted model's answers for the agent run the README asks for
    recorder = Engine.open(index, encoder=encoder)
    settings = recorder.settings.with_(expand="gear")
    recorder.set_llm(settings, CachedLLM(ScriptedLLM(), cache, "record"))
    assert recorder.retrieve(question, settings=settings).answer == "Mediterranean Sea"

    exec(compile(code.replace("INDEX_DIR", str(index)), str(README), "exec"), {"__name__": "readme"})

    lines = capsys.readouterr().out.splitlines()
    ranking = [line.split(" ", 1) for line in lines[:5]]
    assert all(re.fullmatch(r"0\.\d{4}", score) for score, _ in ranking)
    assert {"Mount Etna", "Sicily"} <= {title for _, title in ranking}
    assert lines[5] == "answer: Mediterranean Sea"
    trace = Trace.load(tmp_path / "trace.json")
    verdicts = trace.of(Reasoned)
    assert lines[6:] == [f"{v.iteration} {v.answerable} {v.answer}" for v in verdicts]
    assert verdicts[-1].answerable and verdicts[-1].answer == "Mediterranean Sea"
    assert trace.first(RunStarted).method == "gear"  # type: ignore[union-attr]
    assert trace.first(Answered).answer == "Mediterranean Sea"  # type: ignore[union-attr]
