"""llama.cpp's own `llama-server` as the embedded model, owned by gear.

Why a server and not the model in-process: llama.cpp's own server writes ≈1.6× faster than the Python binding on the
same cores (2.2× with a JSON schema), keeps a prompt cache per slot (and re-uses cached chunks that are not a prefix),
and lets every process on the machine share one loaded model. Why gear owns it: a person who types `make run` should
not have to start a server first.

- Started on first use, on 127.0.0.1 with a free port and the machine's physical cores as threads, and used once
  `/health` answers 200 (it says 503 while the model loads).
- Shared: a state file and a lock in the user's cache folder (`~/.cache/gear/llama-server/`, one per configuration)
  let a second process (another app, `gear ask`, an evaluation) find the running server instead of loading the model
  again. The server's log is written beside it.
- Stopped when the process that started it (its owner) exits: atexit for a normal exit; the server runs in its own
  process group, and on Linux the kernel kills it when its parent dies (PR_SET_PDEATHSIG), so a SIGKILLed owner
  leaves no orphan. Processes that merely found it never stop it.
- If it dies, the call that was running fails with one line saying so (gear.llm.embedded) and the next call starts it
  again.

`gear serve-llm` runs the same command in the foreground (`exec`), for other processes or machines.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gear.files import atomic_write_json
from gear.llm.base import LLMError

BUILD_HINT = "run `make llm` (scripts/install_local_llm.sh) to build it"
DEFAULT_CTX_PER_SLOT = 8192  # every read of the agent (≤ ≈2,100 prompt tokens + 384) and extraction fit, with room
DEFAULT_CACHE_REUSE = 256  # --cache-reuse: shortest cached chunk re-used by shifting it (tokens); 0 = prefix only
START_TIMEOUT = 300.0  # seconds for the model to load (a cold disk, a big GPU upload)
#: --ubatch-size: prompt tokens computed per step. On 2 CPU cores 256 reads faster than llama.cpp's 512 at the sizes the
#: agent reads: llama-bench pp1500 86.6 / 92.8 against 78.6 / 77.2 tok/s in two runs, pp512 102.1 against 89.8 (128:
#: 85.4 / 87.7); docs/bench/llama_bench_ubatch_2026-11-25.txt
DEFAULT_UBATCH = 256


def cache_root() -> Path:
    """gear's folder in the user's cache: $GEAR_CACHE_DIR, else $XDG_CACHE_HOME/gear, else ~/.cache/gear."""
    env = os.environ.get("GEAR_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "gear"


def find_binary() -> Path:
    """The llama-server to run: $GEAR_LLAMA_SERVER, else the one the set-up put next to this interpreter, else PATH."""
    override = os.environ.get("GEAR_LLAMA_SERVER")
    if override:
        path = Path(override).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise LLMError(f"GEAR_LLAMA_SERVER={override} is not an executable file: fix it, or unset it and {BUILD_HINT}")
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        candidate = folder / "llama-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise LLMError(f"llama.cpp's llama-server is not installed: {BUILD_HINT}")


def llama_server_available() -> bool:
    """Whether a llama-server binary can be found (the model file is checked separately: model_files.find_parts)."""
    try:
        find_binary()
    except LLMError:
        return False
    return True


def physical_cores() -> int:
    """Physical cores (hyper-threads share one core's arithmetic units, which llama.cpp already saturates)."""
    try:
        import psutil

        return max(1, psutil.cpu_count(logical=False) or os.cpu_count() or 1)
    except ImportError:  # pragma: no cover - psutil is a dependency
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """$GEAR_LLM_THREADS, else the physical cores."""
    try:
        return max(1, int(os.environ["GEAR_LLM_THREADS"]))
    except (KeyError, ValueError):
        return physical_cores()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything that makes two embedded servers the same: processes with equal configs share one server.

    `ctx_per_slot` is the context each of the `parallel` slots gets (llama-server's `-c` is their sum). The server
    answers what the in-process llama-cpp-python model answered (the recorded answers stay valid): the GGUF's own
    chat template (Jinja), repeat penalty 1.0 (llama.cpp applies it before the greedy pick even at temperature 0),
    seed 0, and on a CPU flash attention off, as llama-cpp-python ran it (llama-server's "auto" turns it on for the
    CPU, which changes the arithmetic: 3 of the 6 steps of bench/llm_server.py answered differently; with it off all
    6 are the same). Slots, micro-batch, batch and flash attention come from gear.llm.server_profile (the build and
    the cores) unless set. `gpu_layers` None leaves llama.cpp's default (offload what fits where a GPU build finds a
    GPU; ignored on a CPU build)."""

    binary: Path
    model_path: Path
    alias: str
    threads: int
    ctx_per_slot: int = DEFAULT_CTX_PER_SLOT
    parallel: int = 1
    cache_reuse: int = DEFAULT_CACHE_REUSE
    ubatch: int = DEFAULT_UBATCH
    gpu_layers: int | None = None
    extra_args: tuple[str, ...] = field(default=())
    batch: int = DEFAULT_UBATCH  # --batch-size: prompt tokens read between two looks at cancelled requests
    flash_attn: bool = False

    def args(self) -> list[str]:
        """The command line without host and port."""
        args = [str(self.binary), "--model", str(self.model_path), "--alias", self.alias,
                "--threads", str(self.threads), "--threads-batch", str(self.threads),
                "--ctx-size", str(self.ctx_per_slot * self.parallel), "--parallel", str(self.parallel),
                "--cache-reuse", str(self.cache_reuse), "--batch-size", str(self.batch),
                "--ubatch-size", str(self.ubatch), "--jinja", "--repeat-penalty", "1.0", "--seed", "0",
                "--flash-attn", "on" if self.flash_attn else "off", "--metrics", "--no-webui"]
        if self.gpu_layers is not None:
            args += ["--n-gpu-layers", str(self.gpu_layers)]
        return args + list(self.extra_args)

    def command(self, host: str, port: int) -> list[str]:
        return [*self.args(), "--host", host, "--port", str(port)]

    @property
    def fingerprint(self) -> str:
        """Short hash of the command and of the binary's identity (a rebuilt server is a different server)."""
        try:
            stat = self.binary.stat()
            build = f"{stat.st_size}:{stat.st_mtime_ns}"
        except OSError:
            build = "missing"
        return hashlib.sha256("\0".join([*self.args(), build]).encode()).hexdigest()[:16]


def server_env() -> dict[str, str]:
    """The server's environment: llama.cpp's OpenMP workers spin briefly (GOMP_SPINCOUNT=1000), then sleep.

    Measured on 2 quiet cores (docs/results.md): waiting passively (OMP_WAIT_POLICY=PASSIVE, the in-process
    model's setting) costs generation a third, 20 against 32 tokens/s, since the workers sleep and wake around every
    token; spinning without a bound (libgomp's default) gives 32 alone but falls to 0.4 tokens/s beside one busy
    process; a short spin keeps 32 alone and 13 beside a busy process (passive: 19). A user's own OMP_WAIT_POLICY or
    GOMP_SPINCOUNT is kept."""
    env = dict(os.environ)
    if "OMP_WAIT_POLICY" not in env:
        env.setdefault("GOMP_SPINCOUNT", "1000")
    return env


def health(url_root: str, timeout: float = 2.0) -> int | None:
    """HTTP status of GET /health (200 ready, 503 loading), None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url_root}/health", timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process holds that pid now
        return False
    return True


def log_tail(path: Path, lines: int = 3) -> str:
    """The last lines of a log, as one line (for an error message)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(tail)[-300:]


if sys.platform.startswith("linux"):
    import ctypes

    _LIBC = ctypes.CDLL(None, use_errno=True)
    _PR_SET_PDEATHSIG = 1

    def _child_setup(parent: int) -> None:  # runs in the child between fork and exec: no imports, no locks
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the owner died before the line above took effect
            os.kill(os.getpid(), signal.SIGKILL)
else:  # pragma: no cover - macOS and others: atexit and the process group only
    _child_setup = None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (held while a server is inspected or started)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True, slots=True)
class Running:
    """A server that answers: its pid, where, and whether this process started it."""

    pid: int
    port: int
    owned: bool

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"


class EmbeddedServer:
    """One configuration's llama-server: found or started on `ensure()`, stopped at exit when this process started it.

    Thread-safe; one instance per configuration per process (`shared_server`)."""

    def __init__(self, config: ServerConfig, state_dir: Path | None = None, start_timeout: float = START_TIMEOUT
                 ) -> None:
        self.config = config
        self.state_dir = state_dir or cache_root() / "llama-server"
        name = f"{config.alias}-{config.fingerprint}"
        self.state_path = self.state_dir / f"{name}.json"
        self.lock_path = self.state_dir / f"{name}.lock"
        self.log_path = self.state_dir / f"{name}.log"
        self.start_timeout = start_timeout
        self.starts = 0  # servers this process started (a restart after a crash counts again)
        self._running: Running | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._exit_hook = False

    # -- where it runs ---------------------------------------------------------------------------------------------
    def ensure(self) -> Running:
        """The running server, found (this process's, or one another process started and registered) or started."""
        with self._lock:
            if self._running is not None and self._alive(self._running):
                return self._running
            self._running = None
            with file_lock(self.lock_path):
                found = self._registered()
                if found is None:
                    found = self._start()
                self._running = found
            return found

    def alive(self) -> bool:
        """Whether the server this process last used is still running (cheap: no request)."""
        running = self._running
        return running is not None and self._alive(running)

    def exit_status(self, wait: float = 0.0) -> str:
        """How the server this process started ended, for an error line ("" when unknown or not ours); waits up to
        `wait` seconds for a dying server's exit to be collected."""
        proc = self._proc
        if proc is None:
            return ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)
        if proc.returncode is None:
            return ""
        code = proc.returncode
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def _alive(self, running: Running) -> bool:
        if running.owned and self._proc is not None:
            return self._proc.poll() is None
        return pid_alive(running.pid)

    def _registered(self) -> Running | None:
        """The server another process registered for this configuration, if it still answers."""
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            pid, port = int(state["pid"]), int(state["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not pid_alive(pid):
            return None
        deadline = time.monotonic() + self.start_timeout
        while True:  # a server registered by `gear serve-llm` may still be loading
            status = health(f"http://127.0.0.1:{port}")
            if status == 200:
                return Running(pid, port, owned=False)
            if status != 503 or not pid_alive(pid) or time.monotonic() > deadline:
                return None
            time.sleep(0.2)

    def _start(self) -> Running:
        """Start the server on a free port and wait until /health says it is ready (lock held)."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.log_path.exists():
            with contextlib.suppress(OSError):
                self.log_path.replace(self.log_path.with_suffix(".log.1"))
        port = free_port()
        proc = self._spawn(self.config.command("127.0.0.1", port))
        self._proc = proc
        self.starts += 1
        if not self._exit_hook:
            atexit.register(self.stop)
            self._exit_hook = True
        deadline = time.monotonic() + self.start_timeout
        root = f"http://127.0.0.1:{port}"
        while True:
            if proc.poll() is not None:
                raise LLMError(f"llama-server exited while loading the model ({self.exit_status()}): "
                               f"{log_tail(self.log_path) or 'no output'} (log: {self.log_path})")
            if health(root, timeout=1.0) == 200:
                break
            if time.monotonic() > deadline:
                self.stop()
                raise LLMError(f"llama-server did not become ready within {self.start_timeout:.0f} s "
                               f"(log: {self.log_path})")
            time.sleep(0.1)
        running = Running(proc.pid, port, owned=True)
        atomic_write_json(self.state_path, {"pid": proc.pid, "port": port, "owner": os.getpid(),
                                            "started": time.time(), "command": self.config.command("127.0.0.1", port),
                                            "log": str(self.log_path)}, indent=1)
        return running

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        """Popen from a thread that lives as long as the server: PR_SET_PDEATHSIG fires when the *thread* that
        forked the child ends, and the caller's thread may be a short-lived one (a Streamlit script run)."""
        box: dict[str, object] = {}
        started = threading.Event()
        parent = os.getpid()

        def run() -> None:
            try:
                with self.log_path.open("wb") as log:
                    box["proc"] = subprocess.Popen(
                        command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=server_env(),
                        start_new_session=True,
                        preexec_fn=(lambda: _child_setup(parent)) if _child_setup is not None else None)
            except OSError as exc:
                box["error"] = exc
            finally:
                started.set()
            proc = box.get("proc")
            if isinstance(proc, subprocess.Popen):
                proc.wait()

        threading.Thread(target=run, name="gear-llama-server", daemon=True).start()
        started.wait()
        if "error" in box:
            raise LLMError(f"cannot start llama-server {command[0]}: {box['error']}")
        proc = box["proc"]
        assert isinstance(proc, subprocess.Popen)
        return proc

    # -- stopping --------------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the server this process started (its whole process group); forget one it only found."""
        with self._lock:
            self._running = None
            proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        with contextlib.suppress(OSError), file_lock(self.lock_path):
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("pid") == proc.pid:
                self.state_path.unlink()


def register_foreground(config: ServerConfig, port: int, state_dir: Path | None = None) -> Path:
    """Register this process (about to exec llama-server on `port`) as the server for `config`, so gear processes
    on this machine use it (`gear serve-llm`). The pid stays the same across exec; a stale entry is ignored."""
    server = EmbeddedServer(config, state_dir)
    server.state_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(server.lock_path):
        atomic_write_json(server.state_path, {"pid": os.getpid(), "port": port, "owner": os.getpid(),
                                              "started": time.time(), "command": config.command("127.0.0.1", port),
                                              "log": "stdout of gear serve-llm"}, indent=1)
    return server.state_path


_shared: dict[tuple[ServerConfig, Path], EmbeddedServer] = {}
_shared_lock = threading.Lock()


def shared_server(config: ServerConfig) -> EmbeddedServer:
    """The process's one EmbeddedServer for this configuration (and cache folder)."""
    key = (config, cache_root())
    with _shared_lock:
        if key not in _shared:
            _shared[key] = EmbeddedServer(config, key[1] / "llama-server")
        return _shared[key]
