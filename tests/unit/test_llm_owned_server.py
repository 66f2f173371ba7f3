"""The llama-server gear owns (gear/llm/llama_server.py, gear/llm/embedded.py), against a stand-in binary
(tests/fake_llama_server.py): started on first use and used once /health says ready, found by a second process instead
of started again, stopped when its owner exits (normally, or SIGKILLed on Linux, also when a short-lived thread started
it), a death in the middle of a call is one line and the next call starts it again, and a server that cannot start
says why. The real server is tested in tests/integration/test_llm_server.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gear.llm.base import LLMError
from gear.llm.embedded import EmbeddedLLM, server_config
from gear.llm.llama_server import ServerConfig, find_binary, pid_alive

REPO = Path(__file__).resolve().parents[2]
FAKE = REPO / "tests" / "fake_llama_server.py"
HI = [{"role": "user", "content": "hi"}]


def _wait(condition, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A fake llama-server on GEAR_LLAMA_SERVER, a model file and a private cache folder."""
    binary = tmp_path / "bin" / "llama-server"
    binary.parent.mkdir()
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n', encoding="utf-8")
    binary.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(binary))
    monkeypatch.setenv("GEAR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_STARTS_FILE", str(starts))
    llms: list[EmbeddedLLM] = []
    yield {"binary": binary, "model": model, "starts": starts, "cache": tmp_path / "cache", "llms": llms}  # type: ignore[misc]
    for llm in llms:
        llm.server.stop()


def _llm(fake: dict, **options: object) -> EmbeddedLLM:
    llm = EmbeddedLLM(model_path=fake["model"], threads=2, **options)  # type: ignore[arg-type]
    fake["llms"].append(llm)
    return llm


def _starts(fake: dict) -> list[int]:
    path: Path = fake["starts"]
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_the_command_line_carries_every_setting(tmp_path: Path) -> None:
    config = ServerConfig(binary=tmp_path / "llama-server", model_path=tmp_path / "m.gguf", alias="qwen", threads=2,
                          ctx_per_slot=4096, parallel=3, cache_reuse=128)
    args = config.command("127.0.0.1", 9999)
    pairs = {flag: args[i + 1] for i, flag in enumerate(args[:-1]) if flag.startswith("--")}
    assert args[0] == str(tmp_path / "llama-server")
    assert {k: pairs[k] for k in ("--alias", "--threads", "--threads-batch", "--ctx-size", "--parallel",
                                  "--cache-reuse", "--port")} == {
        "--alias": "qwen", "--threads": "2", "--threads-batch": "2", "--ctx-size": "12288", "--parallel": "3",
        "--cache-reuse": "128", "--port": "9999"}
    assert "--jinja" in args and pairs["--repeat-penalty"] == "1.0" and pairs["--flash-attn"] == "off"
    assert "--n-gpu-layers" not in args  # llama.cpp's default unless set
    with_gpu = ServerConfig(binary=config.binary, model_path=config.model_path, alias="qwen", threads=2,
                            ctx_per_slot=4096, parallel=3, cache_reuse=128, gpu_layers=20)
    assert with_gpu.args()[with_gpu.args().index("--n-gpu-layers") + 1] == "20"
    assert with_gpu.fingerprint != config.fingerprint


def test_nothing_starts_until_the_first_call_then_it_is_used_when_ready(fake: dict) -> None:
    llm = _llm(fake)
    assert _starts(fake) == [] and not (fake["cache"] / "llama-server").exists()
    pieces: list[str] = []
    result = llm.complete(HI, on_text=pieces.append)
    assert result.text == "echo: hi" and "".join(pieces) == "echo: hi"
    assert (result.prompt_tokens, result.completion_tokens, result.cached_prompt_tokens) == (11, 3, 5)
    assert result.model == llm.model and llm.complete(HI).text == "echo: hi"
    assert len(_starts(fake)) == 1 and llm.server.starts == 1
    state = json.loads(llm.server.state_path.read_text())
    assert state["pid"] == _starts(fake)[0] and state["owner"] == os.getpid()
    assert llm.server.log_path.parent == fake["cache"] / "llama-server"
    assert "fake llama-server" in llm.server.log_path.read_text()


OWNER = """
import sys, threading, time
from pathlib import Path
from gear.llm.embedded import EmbeddedLLM
llm = EmbeddedLLM(model_path=Path(sys.argv[1]), threads=2)
if sys.argv[2] == "thread":  # started by a thread that ends at once, as a Streamlit script run does
    worker = threading.Thread(target=llm.ensure_loaded)
    worker.start()
    worker.join()
else:
    llm.ensure_loaded()
print(llm.server.ensure().pid, llm.complete([{"role": "user", "content": "from " + sys.argv[2]}]).text, flush=True)
if sys.argv[2] != "exit":
    time.sleep(120)
"""


def _owner(fake: dict, mode: str) -> tuple[subprocess.Popen[str], int, str]:
    proc = subprocess.Popen([sys.executable, "-c", OWNER, str(fake["model"]), mode], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    pid, text = proc.stdout.readline().split(" ", 1)
    return proc, int(pid), text.strip()


def test_a_second_process_uses_the_running_server_and_leaves_it_running(fake: dict) -> None:
    llm = _llm(fake)
    llm.ensure_loaded()
    mine = llm.server.ensure().pid
    proc, theirs, text = _owner(fake, "exit")
    assert proc.wait(30) == 0
    assert theirs == mine and text == "echo: from exit" and _starts(fake) == [mine]
    assert pid_alive(mine) and llm.complete(HI).text == "echo: hi"  # not stopped by a process that only found it


def test_the_owner_stops_its_server_when_it_exits(fake: dict) -> None:
    proc, pid, _ = _owner(fake, "exit")
    assert proc.wait(30) == 0
    assert _wait(lambda: not pid_alive(pid)), "the server outlived its owner"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("mode", ["main", "thread"])
def test_a_sigkilled_owner_takes_its_server_along(fake: dict, mode: str) -> None:
    proc, pid, _ = _owner(fake, mode)
    time.sleep(0.5)
    assert pid_alive(pid), "the server died with the thread that started it"
    proc.kill()
    proc.wait(10)
    assert _wait(lambda: not pid_alive(pid)), "the server outlived its SIGKILLed owner (an orphan)"
    # and the next process starts a new one (the dead one's state file is stale)
    llm = _llm(fake)
    assert llm.complete(HI).text == "echo: hi" and len(_starts(fake)) == 2


def test_a_server_that_dies_mid_call_is_one_line_and_the_next_call_starts_it_again(fake: dict) -> None:
    llm = _llm(fake)
    assert llm.complete(HI).text == "echo: hi"
    for streaming in (True, False):
        with pytest.raises(LLMError) as info:
            llm.complete([{"role": "user", "content": "DIE now"}], on_text=(lambda p: None) if streaming else None)
        line = str(info.value)
        assert "\n" not in line and line.startswith("the embedded model's server (llama-server, pid ")
        assert "stopped during this call (exit code 3): ask again to restart it (log: " in line
        assert llm.complete(HI).text == "echo: hi"
    assert len(_starts(fake)) == 3 and llm.server.starts == 3


def test_a_server_that_cannot_start_says_why_in_one_line(fake: dict) -> None:
    fake["binary"].write_text("#!/bin/sh\necho 'error: failed to load model m.gguf'\nexit 1\n", encoding="utf-8")
    llm = _llm(fake)
    with pytest.raises(LLMError) as info:
        llm.complete(HI)
    line = str(info.value)
    assert line.startswith("llama-server exited while loading the model (exit code 1): error: failed to load model")
    assert "\n" not in line and str(fake["cache"]) in line


def test_a_missing_binary_names_the_set_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(tmp_path / "nothing"))
    with pytest.raises(LLMError, match=r"GEAR_LLAMA_SERVER=.* is not an executable file: .*make llm"):
        find_binary()
    with pytest.raises(LLMError, match="make llm"):
        server_config(model_path=tmp_path / "m.gguf")


def test_waiting_for_health_while_the_model_loads(fake: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = tmp_path / "requests.txt"
    monkeypatch.setenv("FAKE_LOAD_SECONDS", "1.0")
    monkeypatch.setenv("FAKE_REQUESTS_FILE", str(requests))
    llm = _llm(fake)
    assert llm.complete(HI).text == "echo: hi"
    seen = requests.read_text(encoding="utf-8").splitlines()  # what the server was asked, in order
    ready = seen.index("GET /health 200")
    assert "GET /health 503" in seen[:ready]  # it waited while the model loaded ...
    assert seen[ready + 1:] == ["POST /v1/chat/completions 200"]  # ... and was asked only once /health said ready


def test_a_killed_server_is_replaced_by_the_next_process(fake: dict) -> None:
    llm = _llm(fake)
    llm.ensure_loaded()
    first = llm.server.ensure().pid
    os.kill(first, signal.SIGKILL)
    assert _wait(lambda: not llm.server.alive())
    assert llm.complete(HI).text == "echo: hi" and llm.server.ensure().pid != first


# -- gear serve-llm ---------------------------------------------------------------------------------------------------

def test_serve_llm_runs_the_same_server_in_the_foreground_and_registers_it(fake: dict,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from gear.llm.llama_server import free_port, health

    monkeypatch.setenv("GEAR_LLM_THREADS", "2")
    monkeypatch.setattr("gear.llm.embedded.ensure_model", lambda: fake["model"])
    port = free_port()
    serve = ("import sys; from pathlib import Path; import gear.llm.embedded as e; "
             f"e.ensure_model = lambda: Path({str(fake['model'])!r}); from gear.cli import app; app(sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", serve, "serve-llm", "--port", str(port)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400"},
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"at http://127.0.0.1:{port}/v1; point GEAR at it: GEAR_LLM=openai" in line
        assert _wait(lambda: health(f"http://127.0.0.1:{port}") == 200)
        assert _starts(fake) == [proc.pid]  # exec: the foreground process is the server
        llm = _llm(fake)  # the same configuration in another process: it finds the registered server
        assert llm.complete(HI).text == "echo: hi" and _starts(fake) == [proc.pid] and llm.server.starts == 0
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def test_serve_llm_busy_port_and_missing_binary_are_one_line(tmp_path: Path, fake: dict,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from typer.testing import CliRunner

    from gear.cli import app

    monkeypatch.setattr("gear.llm.embedded.ensure_model", lambda: fake["model"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(app, ["serve-llm", "--port", str(port)], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and _starts(fake) == []
    assert [line for line in result.output.splitlines() if line.strip()] == [
        f"error: cannot serve on 127.0.0.1:{port} (Address already in use): choose another --port or --host (is a "
        "server already running there?)"]
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(tmp_path / "nothing"))
    result = CliRunner().invoke(app, ["serve-llm"], env={"COLUMNS": "400"})
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "make llm" in lines[0]


# -- turns -------------------------------------------------------------------------------------------------------------

class Cancelled(Exception):
    """What Streamlit raises in a script whose user pressed Cancel."""


@pytest.mark.parametrize("slots", [1, 2])
def test_calls_take_turns_per_slot_and_waiters_hear_their_place(fake: dict, monkeypatch: pytest.MonkeyPatch,
                                                                 slots: int) -> None:
    import threading

    from gear.llm.openai_client import OpenAILLM
    from gear.llm.queue import listening

    llm = _llm(fake, parallel=slots)
    llm.ensure_loaded()
    llm.queue.poll_seconds = 0.01
    running = {"now": 0, "most": 0}
    lock = threading.Lock()
    real = OpenAILLM.complete

    def counting(self: OpenAILLM, *args: object, **kwargs: object) -> object:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        try:
            time.sleep(0.1)
            return real(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            with lock:
                running["now"] -= 1

    monkeypatch.setattr(OpenAILLM, "complete", counting)
    texts: list[str] = []
    heard: list[list[int]] = [[] for _ in range(4)]

    def call(n: int) -> None:
        with listening(heard[n].append):
            texts.append(llm.complete(HI).text)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert texts == ["echo: hi"] * 4 and running["most"] == slots  # as many at once as the server has slots
    assert any(h for h in heard) and all(h[-1] == 0 for h in heard if h)  # the waiters were told, then served
    assert llm.queue.snapshot() == (0, 0)


def test_a_stream_stopped_by_its_listener_gives_the_turn_back(fake: dict) -> None:
    llm = _llm(fake)
    pieces: list[str] = []

    def cancel(piece: str) -> None:
        pieces.append(piece)
        raise Cancelled

    with pytest.raises(Cancelled):
        llm.complete(HI, on_text=cancel)
    assert pieces == ["echo: "] and llm.queue.snapshot() == (0, 0)
    assert llm.complete(HI).text == "echo: hi"  # the next caller is served, by the same server
    assert llm.server.starts == 1


def test_the_server_spins_briefly_unless_the_user_chose_a_wait_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passive waiting costs a third of generation, unbounded spinning collapses beside a busy process (server_env)."""
    from gear.llm.llama_server import server_env

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    env = server_env()
    assert env["GOMP_SPINCOUNT"] == "1000" and "OMP_WAIT_POLICY" not in env
    monkeypatch.setenv("GOMP_SPINCOUNT", "50")
    assert server_env()["GOMP_SPINCOUNT"] == "50"
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    env = server_env()
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and "GOMP_SPINCOUNT" not in env
