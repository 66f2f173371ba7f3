"""The `gear` command: user errors are one line with exit code 2, never a traceback; index/info on a tiny index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app

FIX = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    return CliRunner()


WIDE = {"COLUMNS": "400"}  # informational output may wrap at 80 columns when piped; errors must not


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_missing_corpus_file_is_a_one_line_error(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    result = runner.invoke(app, ["index", str(missing), "--out", str(tmp_path / "idx")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert _error_lines(result.output) == [f"error: {missing}: file not found"]
    assert not (tmp_path / "idx").exists()


def test_invalid_corpus_json_names_file_and_position(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[{]", encoding="utf-8")
    result = runner.invoke(app, ["index", str(bad), "--out", str(tmp_path / "idx")])
    assert result.exit_code == 2
    lines = _error_lines(result.output)
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: invalid JSON at line 1, column 3")


@pytest.mark.parametrize(("value", "needle"), [("5,x", "comma-separated integers"), ("0", "positive cut-offs")])
def test_bad_k_value(runner: CliRunner, tmp_path: Path, value: str, needle: str) -> None:
    result = runner.invoke(app, ["eval", str(tmp_path / "idx"), str(tmp_path / "qa.json"), "--k", value])
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output


def test_info_on_a_missing_index(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["info", str(tmp_path / "nothing")])
    assert result.exit_code == 2
    lines = _error_lines(result.output)
    assert lines == [f"error: {tmp_path / 'nothing'}: no such index directory; build one with `gear index`"]


def test_info_shows_counts_embedder_and_density(runner: CliRunner, tiny_index: Path) -> None:
    result = runner.invoke(app, ["info", str(tiny_index)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert f"{tiny_index}: 8 passages, 10 triples, 14 entities" in result.output
    assert "embedder fake-hash-64 (64 dims), backend memory" in result.output
    assert "triple density ρ_t: mean 1.25, median 1, max 2, passages without triples 1" in result.output
    assert "checksums" not in result.output


def test_info_verify(runner: CliRunner, tiny_index: Path) -> None:
    ok = runner.invoke(app, ["info", str(tiny_index), "--verify"])
    assert ok.exit_code == 0 and "checksums: all files intact" in ok.output
    (tiny_index / "triple_passage.npy").write_bytes(b"xy")
    bad = runner.invoke(app, ["info", str(tiny_index), "--verify"], env=WIDE)
    assert bad.exit_code == 1
    assert "triple_passage.npy: size 2 !=" in bad.output


def test_index_command_with_the_fake_encoder(runner: CliRunner, tmp_path: Path, make_encoder,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []

    def fake_encoder(name: str, **_kwargs: object) -> object:
        enc = make_encoder(name=name)
        made.append(enc)
        return enc

    monkeypatch.setattr("gear.embed.Encoder", fake_encoder)
    out_dir = tmp_path / "idx"
    result = runner.invoke(app, ["index", str(FIX / "corpus_hipporag.json"), "--out", str(out_dir),
                                 "--openie", str(FIX / "openie.json")], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "indexed 4 passages, 3 triples" in result.output
    assert "warning:" in result.output  # skipped records and unmatched passages are reported
    assert len(made) == 1
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["embedder"] == "all-MiniLM-L6-v2" and manifest["n_triples"] == 3
    assert manifest["source"]["openie"] == str(FIX / "openie.json")


def test_unknown_embedder_is_a_setting_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["index", str(FIX / "corpus_hipporag.json"), "--out", str(tmp_path / "i"),
                                 "--openie", str(FIX / "openie.json"), "--embedder", "nope"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = _error_lines(result.output)
    assert len(lines) == 1 and lines[0].startswith("error: setting embedder:") and "unknown embedder" in lines[0]


def test_error_text_is_not_read_as_markup(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "[v2]" / "[/red]"
    folder.mkdir(parents=True)
    missing = folder / "corpus.json"
    result = runner.invoke(app, ["index", str(missing), "--out", str(tmp_path / "idx")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert _error_lines(result.output) == [f"error: {missing}: file not found"]


def test_gear_app_without_a_checkout_says_so(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    """`pip install .` installs the engine and the CLI, not the app: `gear app` says so instead of failing in
    Streamlit."""
    import gear.cli.studio as studio_command

    site = tmp_path / "site-packages"
    monkeypatch.setattr(studio_command, "__file__", str(site / "gear" / "cli" / "studio.py"))
    result = runner.invoke(app, ["app"], env=WIDE)
    assert result.exit_code == 2
    assert _error_lines(result.output) == [
        f"error: the app runs from a checkout of GeAR Studio (`make run` there); this `gear` was installed without "
        f"it ({site})"]


# -- gear index: build (the default), add and remove as commands; the old --add/--remove form still works ------------
@pytest.fixture
def fake_encoders(monkeypatch: pytest.MonkeyPatch, make_encoder) -> list[str]:
    """gear.embed.Encoder replaced by the fake one (the tiny index was built with it); the names asked for."""
    names: list[str] = []

    def fake_encoder(name: str, **_kwargs: object) -> object:
        names.append(name)
        return make_encoder(name=name)

    monkeypatch.setattr("gear.embed.Encoder", fake_encoder)
    return names


MORE = [{"title": "Vesuvius", "text": "Vesuvius is a volcano near Naples."},
        {"title": "Naples", "text": "Naples lies on the Gulf of Naples in Italy."},
        {"title": "Sicily", "text": "Sicily is the largest island in the Mediterranean Sea."}]  # already indexed
MORE_OPENIE = {"docs": [{"title": "Vesuvius", "text": MORE[0]["text"],
                         "extracted_triples": [["Vesuvius", "near", "Naples"]]},
                        {"title": "Naples", "text": MORE[1]["text"],
                         "extracted_triples": [["Naples", "in", "Italy"], ["Naples", "on", "Gulf of Naples"]]}]}


def _counts(index: Path) -> tuple[int, int]:
    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    return manifest["n_passages"], manifest["n_triples"]


def _more(tmp_path: Path) -> tuple[Path, Path]:
    more, oie = tmp_path / "more.json", tmp_path / "more_openie.json"
    more.write_text(json.dumps(MORE), encoding="utf-8")
    oie.write_text(json.dumps(MORE_OPENIE), encoding="utf-8")
    return more, oie


def test_index_add_and_remove_are_commands(runner: CliRunner, tiny_index: Path, tmp_path: Path,
                                           fake_encoders: list[str]) -> None:
    more, oie = _more(tmp_path)
    assert _counts(tiny_index) == (8, 10)
    added = runner.invoke(app, ["index", "add", str(tiny_index), str(more), "--openie", str(oie)], env=WIDE)
    assert added.exit_code == 0, added.output
    assert "1 passages are already in the index: skipped" in added.output
    assert "added 2 passages (3 triples)" in added.output and "new ones are 8..9" in added.output
    assert _counts(tiny_index) == (10, 13)
    removed = runner.invoke(app, ["index", "remove", str(tiny_index), "0,8-9"], env=WIDE)
    assert removed.exit_code == 0, removed.output
    assert "removed 3 passages (4 triples)" in removed.output
    assert _counts(tiny_index) == (7, 9)
    assert set(fake_encoders) == {"fake-hash-64"}  # the index's own embedder, never the settings'


def test_the_old_add_and_remove_options_still_work_and_do_the_same(runner: CliRunner, tiny_index: Path,
                                                                  tmp_path: Path, fake_encoders: list[str]) -> None:
    import shutil

    more, oie = _more(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(tiny_index, other)
    new, old = str(tiny_index), str(other)
    for add, remove in (
        (["index", "add", new, str(more), "--openie", str(oie)], ["index", "remove", new, "2"]),
        (["index", "--add", str(more), old, "--openie", str(oie)], ["index", "--remove", "2", old]),
    ):
        assert runner.invoke(app, add, env=WIDE).exit_code == 0
        assert runner.invoke(app, remove, env=WIDE).exit_code == 0
    from gear.index.update import saved_passages

    assert _counts(other) == _counts(tiny_index) == (9, 11)
    new_form, old_form = saved_passages(tiny_index), saved_passages(other)  # titles, texts, triples, their passages
    assert [list(part) for part in old_form] == [list(part) for part in new_form]
    assert "Vesuvius" in list(new_form[0]) and "Mount Etna" not in list(new_form[0])


def test_index_build_is_the_default_command(runner: CliRunner, tmp_path: Path, fake_encoders: list[str]) -> None:
    args = [str(FIX / "corpus_hipporag.json"), "--openie", str(FIX / "openie.json"), "--out"]
    named = runner.invoke(app, ["index", "build", *args, str(tmp_path / "a")], env=WIDE)
    default = runner.invoke(app, ["index", *args, str(tmp_path / "b")], env=WIDE)
    options_first = runner.invoke(app, ["index", "--out", str(tmp_path / "c"), *args[:-1]], env=WIDE)
    for result in (named, default, options_first):
        assert result.exit_code == 0, result.output
        assert "indexed 4 passages, 3 triples" in result.output
    assert _counts(tmp_path / "a") == _counts(tmp_path / "b") == _counts(tmp_path / "c") == (4, 3)


def test_index_help_names_the_commands(runner: CliRunner) -> None:
    result = runner.invoke(app, ["index", "--help"], env=WIDE)
    assert result.exit_code == 0
    assert all(f" {name} " in result.output for name in ("build", "add", "remove"))
    assert "--add" not in runner.invoke(app, ["index", "build", "--help"], env=WIDE).output  # the old form is hidden


@pytest.mark.parametrize(("args", "message"), [
    (["index", "remove", "{index}", "3,x"], "error: passage ids look like 3,5,10-12"),
    (["index", "remove", "{index}", "9-2"], "error: passage ids look like 3,5,10-12 (empty range '9-2')"),
    (["index", "add", "{missing}", "{index}"], "error: {missing}: no such index directory"),
    (["index", "--add", "x.json", "--remove", "1", "{index}"], "error: use either --add or --remove, not both"),
    (["index", "add", "{index}", "more.json", "--prompt-style", "long"],
     "error: --prompt-style must be one-shot or paper, not 'long'"),
])
def test_index_command_errors_are_one_line(runner: CliRunner, tiny_index: Path, tmp_path: Path,
                                           fake_encoders: list[str], args: list[str], message: str) -> None:
    fill = {"index": str(tiny_index), "missing": str(tmp_path / "nothing")}
    result = runner.invoke(app, [a.format(**fill) for a in args], env=WIDE)
    assert result.exit_code == 2
    lines = _error_lines(result.output)
    assert len(lines) == 1 and lines[0].startswith(message.format(**fill)), lines
    assert _counts(tiny_index) == (8, 10)
