"""The CLI over an index whose titles, passages, triples, QA set and model answers carry the payloads of
tests/payloads.py: `gear index`, `retrieve` (table and JSON), `ask` (NaiveGE, and GeAR with a scripted
model whose every answer ends in the payloads, streamed), `eval`, `diagnose` and `qa list` write no control character
but the newline — what `| cat -v` would show as ^[ — and print Rich markup as the brackets it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app
from tests.payloads import PAYLOAD_QUESTION, PayloadLLM, payload_files

QUESTION = PAYLOAD_QUESTION + " \x1b[31mred \x9b2J"

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
WIDE = {"COLUMNS": "400"}


@pytest.fixture
def index(tmp_path: Path, make_encoder, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GEAR_LLM", "GEAR_LLM_CACHE_DIR", "GEAR_PROMPTS", "GEAR_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("gear.embed.Encoder", lambda name, **_: make_encoder(name=name))
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name=name))
    monkeypatch.setattr("gear.agent.engine.llm_from_settings", lambda settings: PayloadLLM())
    corpus, openie, qa = payload_files()
    for name, data in (("corpus.json", corpus), ("openie.json", openie), ("qa.json", qa)):
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "payload-index"
    built = CliRunner().invoke(app, ["index", str(tmp_path / "corpus.json"), "--openie", str(tmp_path / "openie.json"),
                                     "--out", str(out)], env=WIDE)
    assert built.exit_code == 0, built.output
    assert not CONTROL.search(built.output)
    return out


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env=WIDE)
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output.replace("\n", "")), [m.group() for m in CONTROL.finditer(result.output)]
    return result.output


def test_every_command_prints_the_payloads_as_text(index: Path, tmp_path: Path) -> None:
    qa = str(tmp_path / "qa.json")
    shown = run("retrieve", str(index), QUESTION, "-r", "bm25", "-k", "30")
    assert "\\x1b[31mRED\\x1b[0m" in shown and "\\x1b]0;pwned\\x07" in shown  # visible, not obeyed
    assert "[bold]rich[/bold]" in shown and "[t](javascript:window.__xss=4)" in shown  # markup printed as written
    data = json.loads(run("retrieve", str(index), QUESTION, "-r", "bm25", "--json"))
    assert any("\x1b[31m" in p["title"] for p in data["passages"])  # the JSON keeps the text exactly
    trace = tmp_path / "naive.json"
    run("ask", str(index), QUESTION, "-e", "naive", "-r", "bm25", "--trace", str(trace))
    gear_run = run("ask", str(index), QUESTION, "-e", "gear", "-r", "bm25", "--max-iterations", "2",
                   "--gold", "0,1", "--answer", "Mediterranean Sea")
    assert "[bold]x[/bold]" in gear_run and "\\x1b]0;pwned\\x07" in gear_run  # the model's text, streamed and narrated
    run("eval", str(index), qa, "-r", "bm25", "--k", "2,5")
    run("diagnose", str(trace), "--gold", "0,1,5", "--index", str(index))
    run("diagnose", str(trace), "--gold", "0,1,5", "--index", str(index), "--json")
    run("diagnose", str(tmp_path))  # a folder of traces
    run("qa", "add", str(index), QUESTION, "--gold", "0,1,5", "--answer", "Mediterranean \x1b[31mSea")
    listed = run("qa", "list", str(index))
    assert "\\x1b[31m" in listed
    run("qa", "suggest", str(index), QUESTION, "--answer", "Mediterranean Sea")
    run("info", str(index))
