"""The CLI on hostile saved files (tests/hostile_files.py): `gear diagnose FILE`, `gear export-html FILE`
and `gear compare REPORT GOOD` refuse each bad file in one line naming it, with exit code 2 and no traceback;
`gear diagnose FOLDER` diagnoses every good trace of the folder and names each bad one with its reason, a link in the
folder that points out of it among them; a report's trace_file that leads out of its folder is not opened (one
note line) while the comparison goes on. Run in process (any exception that escaped would fail the test) and, once
for every command and file, under a pty as a person's terminal runs them (TESTING.md): no traceback there either."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app
from tests.hostile_files import (
    BASE_REPORTS,
    BUNDLED,
    OUTSIDE_MARKER,
    hostile_traces,
    outside_trace,
    write_hostile_reports,
    write_hostile_traces,
)

ROOT = Path(__file__).resolve().parents[2]
WIDE = {"COLUMNS": "200"}
BAD_TRACES = sorted([*hostile_traces(), "fifty_megabytes.json"])
BAD_REPORTS = ["report_numbers_as_html.json", "report_wrong_shapes.json", "report_per_question_is_a_number.json",
               "report_deep_nesting.json"]
LEADING_OUT = ["report_trace_absolute.json", "report_trace_dotdot.json"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<root>/data/traces (the hostile traces, a link out, two good traces), <root>/data/evals (the reports),
    <root>/outside/secret.json (a trace outside the data folder)."""
    root = tmp_path_factory.mktemp("hostile")
    secret = outside_trace(root / "outside")
    traces = root / "data" / "traces"
    write_hostile_traces(traces, outside=secret)
    for name in ("walkthrough.json", "walkthrough_ppr.json"):
        (traces / name).write_text((BUNDLED / name).read_text(encoding="utf-8"), encoding="utf-8")
    write_hostile_reports(root / "data" / "evals", secret)
    return root


def invoke(args: list[str], cwd: Path) -> tuple[int, list[str]]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, args, env=WIDE, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, [line for line in result.output.splitlines() if line.strip()]


@pytest.mark.parametrize("name", BAD_TRACES)
def test_diagnose_and_export_html_refuse_a_hostile_trace_in_one_line(hostile: Path, name: str) -> None:
    path = hostile / "data" / "traces" / name
    for args in (["diagnose", str(path)], ["export-html", str(path), "-o", str(hostile / "lesson.html")]):
        code, lines = invoke(args, hostile)
        assert code == 2 and len(lines) == 1, (args, lines)
        assert lines[0].startswith(f"error: {path}: "), lines
    assert not (hostile / "lesson.html").exists()


@pytest.mark.parametrize("name", BAD_REPORTS)
def test_compare_refuses_a_hostile_report_in_one_line(hostile: Path, name: str) -> None:
    evals = hostile / "data" / "evals"
    code, lines = invoke(["compare", str(evals / name), str(evals / f"{BASE_REPORTS[1]}.json")], hostile)
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {evals / name}: "), lines


@pytest.mark.parametrize("name", LEADING_OUT)
def test_compare_does_not_follow_a_trace_file_out_of_the_report_s_folder(hostile: Path, name: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(hostile / "data"))
    evals = hostile / "data" / "evals"
    code, lines = invoke(["compare", str(evals / name), str(evals / f"{BASE_REPORTS[1]}.json")], hostile / "data")
    assert code == 0
    notes = [line for line in lines if "trace_file" in line]
    assert len(notes) == 1 and notes[0].startswith("note: A: ") and "not opened" in notes[0], lines
    assert not any(OUTSIDE_MARKER in line for line in lines)
    assert any("3 questions in both" in line for line in lines)


def test_diagnose_a_folder_lists_every_good_trace_and_names_each_bad_one(hostile: Path) -> None:
    traces = hostile / "data" / "traces"
    code, lines = invoke(["diagnose", str(traces)], hostile)
    assert code == 0, lines
    skipped = [line for line in lines if line.startswith("skipped: ")]
    named = {line.removeprefix("skipped: ").split(": ", 1)[0] for line in skipped}
    assert named == {str(traces / n) for n in [*BAD_TRACES, "link_out.json"]}, skipped
    assert any("link_out.json: a link to a file outside" in line for line in skipped)
    assert any(f"{traces}: 2 traces" in line for line in lines), lines  # the good ones, diagnosed
    assert not any(OUTSIDE_MARKER in line for line in lines)


def test_under_a_terminal_no_command_shows_a_traceback(hostile: Path) -> None:
    """Every command on every bad file, as a person's terminal runs them: under a pty, in one shell session."""
    traces, evals = hostile / "data" / "traces", hostile / "data" / "evals"
    gear = f"{shlex.quote(sys.executable)} -m gear.cli"
    commands = [f"{gear} diagnose {shlex.quote(str(traces / n))}" for n in BAD_TRACES]
    commands += [f"{gear} export-html {shlex.quote(str(traces / n))} -o {shlex.quote(str(hostile / 'x.html'))}"
                 for n in BAD_TRACES]
    commands += [f"{gear} compare {shlex.quote(str(evals / n))} {shlex.quote(str(evals / (BASE_REPORTS[1] + '.json')))}"
                 for n in [*BAD_REPORTS, *LEADING_OUT]]
    commands.append(f"{gear} diagnose {shlex.quote(str(traces))}")
    script = "; ".join(f"{c}; echo \"rc=$?\"" for c in commands)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "COLUMNS": "120",
           "GEAR_STUDIO_DATA": str(hostile / "data")}
    done = subprocess.run(["script", "-q", "-e", "-c", script, "/dev/null"], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=900, errors="replace")
    shown = done.stdout.replace("\r", "")
    codes = [line.strip() for line in shown.splitlines() if line.strip().startswith("rc=")]
    assert "Traceback" not in shown
    n_bad = 2 * len(BAD_TRACES) + len(BAD_REPORTS)
    assert codes == ["rc=2"] * n_bad + ["rc=0"] * (len(LEADING_OUT) + 1), codes
    assert OUTSIDE_MARKER not in shown
