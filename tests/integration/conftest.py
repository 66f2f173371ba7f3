"""Integration fixtures: servers started and stopped here, and the bundled indexes (MuSiQue, HotpotQA, 2Wiki).

Elasticsearch: the noida-db emulator and a real cluster when GEAR_ES_URL is set. The emulator is the `noida-db` PyPI
package (a single binary that speaks the Elasticsearch 8.15 REST API). In CI (CI=true) or with GEAR_REQUIRE_NOIDA=1 an
emulator that cannot start FAILS the tests instead of skipping them.

LLM: `gear serve-llm` (llama.cpp's llama-server with the embedded model) as a subprocess, one for the session and more
for fault cases; skipped when the model or the llama-server binary is missing, unless GEAR_REQUIRE_LOCAL_LLM=1
(`make test`, CI), which fails instead.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings, renamed
from gear.data.corpus import load_corpus, unique_documents
from gear.data.openie import align_openie, load_openie
from gear.data.questions import load_qa
from gear.index import build_index


def _must_run() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("GEAR_REQUIRE_NOIDA") == "1"


def _unavailable(reason: str) -> None:
    if _must_run():
        pytest.fail(f"noida-db emulator unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"noida-db emulator unavailable: {reason}")


def noida_binary() -> Path | None:
    """The server binary shipped inside the noida_db package (run directly, not through its Python wrapper), or
    $GEAR_NOIDA_BIN."""
    override = os.environ.get("GEAR_NOIDA_BIN")
    if override:
        return Path(override) if Path(override).is_file() else None
    try:
        from importlib.resources import files

        path = Path(str(files("noida_db").joinpath("noida-db")))
    except (ImportError, ModuleNotFoundError):
        found = shutil.which("noida-db")
        return Path(found) if found else None
    if path.is_file():
        if not os.access(path, os.X_OK):
            path.chmod(0o755)
        return path
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def noida_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start `noida-db start --only elasticsearch` on a free 127.0.0.1 port; stop it at the end of the session."""
    binary = noida_binary()
    if binary is None:
        _unavailable("package noida-db is not installed (pip install noida-db==0.2.3)")
    data = tmp_path_factory.mktemp("noida-data")
    port = free_port()
    log = (data / "noida.log").open("wb")
    cmd = [str(binary), "start", "--only", "elasticsearch", "--host", "127.0.0.1",
           "--elasticsearch-port", str(port), "--data-dir", str(data)]
    try:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as exc:
        log.close()
        _unavailable(f"cannot execute {binary}: {exc}")
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not _ready(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            log.close()
            tail = (data / "noida.log").read_text(errors="replace")[-500:]
            _unavailable(f"noida-db did not start (exit {proc.returncode}): {tail}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: only what this fixture started
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        log.close()


@pytest.fixture(scope="session")
def real_es_url() -> str:
    """A real cluster given by GEAR_ES_URL (credentials from GEAR_ES_API_KEY / GEAR_ES_USERNAME+PASSWORD)."""
    url = os.environ.get("GEAR_ES_URL")
    if not url:
        pytest.skip("GEAR_ES_URL is not set: no real Elasticsearch cluster to test against")
    return url


# -- the bundled indexes (MiniLM), each built once per test session from its corpus and OpenIE file ----------------
ASSETS = Path(__file__).resolve().parents[2] / "assets"
MUSIQUE = ASSETS / "musique"
HOTPOTQA = ASSETS / "hotpotqa"
TWOWIKI = ASSETS / "2wikimultihopqa"


def bundled_engine(tmp_path_factory: pytest.TempPathFactory, corpus: Path, openie: Path) -> Engine:
    """An index of `corpus` with the triples of `openie` (duplicate passages dropped, as `gear index` and the demos
    do), opened with default settings."""
    from gear.embed import Encoder

    docs, report = load_corpus(corpus)
    docs = unique_documents(docs, report)
    oie, _ = load_openie(openie)
    out = tmp_path_factory.mktemp(corpus.stem) / "index"
    encoder = Encoder("all-MiniLM-L6-v2")
    build_index(docs, align_openie(docs, oie, report), out, encoder)
    return Engine.open(out, Settings(), encoder=encoder)


@pytest.fixture(scope="session")
def musique(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """MuSiQue dev50: 1,890 passages with HippoRAG's GPT-3.5 OpenIE triples."""
    return bundled_engine(tmp_path_factory, MUSIQUE / "musique_corpus1890.json",
                          MUSIQUE / "openie_musique_gpt-3.5-turbo-1106_1890.json")


@pytest.fixture(scope="session")
def questions():
    return load_qa(MUSIQUE / "musique_dev50.json")[0]


@pytest.fixture(scope="session")
def musique949_local(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The 949 candidate paragraphs of the dev50 questions with the triples the embedded model extracted."""
    return bundled_engine(tmp_path_factory, MUSIQUE / "musique_dev50_candidates949.json",
                          MUSIQUE / "openie_musique_qwen2.5-coder-1.5b_949.json")


@pytest.fixture(scope="session")
def musique949_gpt(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The same 949 paragraphs with HippoRAG's GPT-3.5 OpenIE triples (read from the 1,890-passage file)."""
    return bundled_engine(tmp_path_factory, MUSIQUE / "musique_dev50_candidates949.json",
                          MUSIQUE / "openie_musique_gpt-3.5-turbo-1106_1890.json")


@pytest.fixture(scope="session")
def hotpotqa(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The index the HotpotQA demo builds: 994 passages with the triples the embedded model extracted (the bundled
    OpenIE file), as `studio.core.demos.ensure_demo_index("hotpotqa")` reads them."""
    return bundled_engine(tmp_path_factory, HOTPOTQA / "hotpotqa_train100_corpus.json",
                          HOTPOTQA / "openie_hotpotqa_qwen2.5-coder-1.5b_994.json")


@pytest.fixture(scope="session")
def hotpotqa_questions():
    return load_qa(HOTPOTQA / "hotpotqa_train100.json")[0]


@pytest.fixture(scope="session")
def twowiki(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The index the 2Wiki demo builds: the pooled 1,294 passages of 164 dev questions with the triples the embedded
    model extracted (the bundled OpenIE file), as `studio.core.demos.ensure_demo_index("2wiki")` reads them."""
    return bundled_engine(tmp_path_factory, TWOWIKI / "2wikimultihopqa_dev164_corpus.json",
                          TWOWIKI / "openie_2wikimultihopqa_qwen2.5-coder-1.5b_1294.json")


@pytest.fixture(scope="session")
def twowiki_questions():
    return load_qa(TWOWIKI / "2wikimultihopqa_dev82.json")[0]


# -- a recorded LLM report, run again over its recordings (test_agent_replay.py, test_hotpotqa_replay.py) ------------
REPLAYED_SETTINGS = ("retriever", "method", "prompts", "max_iterations", "diversity", "ppr_filter", "ircot_retriever",
                     "ircot_max_steps")


#: the probe of how this CPU orders tied BM25 scores: MuSiQue dev question 2hop__130085_65406, whose passages
#: "Powwow Pond" and "Contoocook Lake" get the same BM25 score; its recorded run (assets/llm_cache) reads Powwow Pond
#: first
TIE_PROBE = ("Where does the Merrimack River start in the state where the Kraus House is located?", "Powwow Pond",
             "Contoocook Lake")


@functools.cache
def ties_as_recorded() -> bool:
    """Whether this CPU's NumPy orders tied BM25 scores as the CPU the bundled runs were recorded on did. bm25s leaves
    equal scores in the order NumPy's sort gives them, and NumPy sorts with other SIMD code on other CPUs (AVX-512 or
    not): on an AVX2-only AMD EPYC, 5 of the 20 recorded GeAR runs of dev50's subset read their passages in another
    order, so their prompts are not the recorded ones and cannot replay there (docs/reproducibility.md, "CPU
    ties"). The tie stands for the CPU's arithmetic as a whole: the same CPU rounds dense scores otherwise too
    (HotpotQA 5ae81fdd5542997ec2727721 under dense + SyncGE at k = 10 sends a read prompt there that
    is not the recorded one, no BM25 involved)."""
    from gear.store.base import passage_text
    from gear.store.memory import bm25_search, build_bm25

    docs, report = load_corpus(MUSIQUE / "musique_corpus1890.json")
    docs = unique_documents(docs, report)
    question, first, second = TIE_PROBE
    top = [docs[s.id].title for s in bm25_search(build_bm25([passage_text(d.title, d.text) for d in docs]),
                                                   len(docs), [question], 10)[0]]
    return first in top and second in top and top.index(first) < top.index(second)


def replay_report(path: Path, engine: Engine, questions) -> tuple[dict, dict]:
    """The report at `path` as recorded, and the same evaluation run again on its questions with the answers it
    recorded (assets/llm_cache, replay only: a prompt that differs from the recorded one fails loudly). The engine
    gets a fresh memo, as the recording process had: a session's engine is shared by several reports' replays, and
    identical calls of another report must not be answered by its memo."""
    from gear.config import BUNDLED_LLM_CACHE
    from gear.eval.protocol import protocol_of
    from gear.eval.report import evaluate
    from gear.llm import LLMError, MemoLLM, make_llm

    recorded = json.loads(path.read_text(encoding="utf-8"))
    wanted = [q["id"] for q in recorded["per_question"]]
    subset = [q for q in questions if q.id in set(wanted)]
    assert [q.id for q in subset] == wanted, f"{path.name}: its questions are not in the bundled file, in order"
    as_saved = renamed(recorded["settings"])  # a report saved before `expand` was renamed `method` says "expand"
    settings = Settings(_env_file=None).with_(**{key: as_saved[key] for key in REPLAYED_SETTINGS},
                                               llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE)
    replay = settings.with_(llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE, llm_model=None)  # the recorded model
    engine.set_llm(settings, MemoLLM(make_llm(replay)))
    # under the protocol it was recorded with ("paper" for every report saved before reports said: gear.eval.protocol)
    try:
        replayed = evaluate(engine, subset, settings, [int(k) for k in recorded["recall"]],
                            protocol=protocol_of(recorded)).to_dict()
    except LLMError as exc:
        if not ties_as_recorded():  # the prompts cannot be the recorded ones here; on the recording's CPUs it fails
            pytest.skip(f"{path.name}: this CPU ranks otherwise than the CPU the run was recorded on (its NumPy "
                        f"orders tied BM25 scores otherwise, probe: {TIE_PROBE[2]!r} before {TIE_PROBE[1]!r}; its "
                        f"dense scores round otherwise), so a read prompt differs from the recorded one: "
                        f"{str(exc)[:120]}")
        raise
    return recorded, replayed


def assert_replays_as_recorded(path: Path, engine: Engine, questions) -> None:
    """A recorded LLM report (a Table 1 row) replayed over its recordings gives the same recall (overall, and by
    question type where the report has the split), answers, EM/F1, iterations and tokens."""
    recorded, report = replay_report(path, engine, questions)
    for key in ("recall", "em", "f1", "iterations_mean"):
        assert report[key] == pytest.approx(recorded[key]), key
    assert [q["answer"] for q in report["per_question"]] == [q["answer"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])
    if set(recorded["by_hop"]) != {"all"}:  # (a report saved before reports split by the QA record's type has one)
        assert set(report["by_hop"]) == set(recorded["by_hop"])
        for kind, group in recorded["by_hop"].items():
            assert report["by_hop"][kind]["recall"] == pytest.approx(group["recall"]), kind


def paper_report(engine: Engine, questions, **settings):
    """One Table 1 row: R@2/5/10/15 under the paper's per-cut-off protocol, every gold title a passage of the index."""
    from gear.eval.report import evaluate

    report = evaluate(engine, questions, Settings().with_(**settings), (2, 5, 10, 15), protocol="paper")
    assert report.skipped == []  # every question's gold titles are passages of the index
    return report


def rounded(recall: dict[str, float]) -> dict[str, float]:
    """Recall as docs/results.md prints it."""
    return {k: round(v, 1) for k, v in recall.items()}


def paper_recall(engine: Engine, questions, **settings) -> dict[str, float]:
    """A Table 1 row's recall as docs/results.md prints it."""
    return rounded(paper_report(engine, questions, **settings).recall())


def assert_naive_rows(engine: Engine, questions, pinned: dict[str, tuple[dict[str, float], dict[str, float]]]) -> None:
    """Each base retriever + NaiveGE with diversity (the paper's setting), then without (the ablation), as pinned."""
    for retriever, (diverse, plain) in pinned.items():
        assert paper_recall(engine, questions, retriever=retriever, expand="naive") == diverse, retriever
        assert paper_recall(engine, questions, retriever=retriever, expand="naive", diversity=False) == plain, \
            retriever


def llm_reports(dataset: str) -> list[Path]:
    """The reports of a Table 1 script's rows that used the embedded model (GeAR, IRCoT, + SyncGE), named
    docs/evals/<dataset>_every…_<row>.json."""
    evals = Path(__file__).resolve().parents[2] / "docs" / "evals"
    return sorted(p for row in ("gear_*", "ircot_*", "sync*") for p in evals.glob(f"{dataset}_*_{row}.json"))


def assert_rows_recorded(reports: list[Path], prefix: str, rows: tuple[str, ...], script: str,
                         ks: tuple[int, ...] = ()) -> None:
    """Every LLM row the results table shows has its report on all the questions (`prefix`, e.g.
    hotpotqa_every1_n100), with a recall at each cut-off in `ks` that the table gives for every row."""
    missing = sorted({f"{prefix}_{row}" for row in rows} - {p.stem for p in reports})
    assert not missing, f"missing: {missing}; run {script}"
    wanted = {f"{prefix}_{row}" for row in rows}
    short = {p.stem: sorted(set(ks) - {int(k) for k in json.loads(p.read_text())["recall"]})
             for p in reports if p.stem in wanted}
    short = {stem: lacking for stem, lacking in short.items() if lacking}
    assert not short, f"reports without these cut-offs: {short}; run {script}"


# -- the embedded model behind `gear serve-llm` (tests/integration/test_llm_server.py) -------------------------------
REPO = Path(__file__).resolve().parents[2]
SERVE = "import sys; from gear.cli import app; app(sys.argv[1:])"  # `gear serve-llm` without relying on the script


def require_local_llm() -> Path:
    """The embedded model's GGUF, with llama.cpp's llama-server built; else skip, or fail when
    GEAR_REQUIRE_LOCAL_LLM=1 (CI, `make test`), where a missing model must not silently pass."""
    from gear.llm.base import LLMError
    from gear.llm.llama_server import find_binary
    from gear.llm.model_files import ensure_model

    try:
        find_binary()
        return ensure_model()
    except LLMError as exc:
        if os.environ.get("GEAR_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail(f"GEAR_REQUIRE_LOCAL_LLM=1 but {exc}", pytrace=False)
        pytest.skip(str(exc))


class LLMServer:
    """One `gear serve-llm` subprocess (its own session, so a kill reaches only what it started)."""

    def __init__(self, log_dir: Path, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_dir / f"serve-llm-{self.port}.log"
        # its own cache folder: a server started here is registered there, never in the user's
        env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400", "GEAR_CACHE_DIR": str(log_dir / "cache")}
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVE, "serve-llm", "--port", str(self.port), *args],
                                         cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 120) -> LLMServer:
        """Until GET /v1/models answers (the model is loaded); a server that exits or hangs fails the test."""
        deadline = time.monotonic() + timeout
        while not _ready(f"{self.url}/models"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"gear serve-llm did not start (exit {self.proc.returncode}): {self.log()[-800:]}",
                            pytrace=False)
            time.sleep(0.25)
        return self

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LLMServer]:
    """`gear serve-llm` with the embedded model on a free 127.0.0.1 port, shared by the session's normal cases."""
    require_local_llm()
    server = LLMServer(tmp_path_factory.mktemp("serve-llm")).wait_ready()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def start_llm_server(tmp_path: Path) -> Iterator[Callable[..., LLMServer]]:
    """Start further servers (fault cases: killed, small context); each is stopped after the test."""
    require_local_llm()
    started: list[LLMServer] = []

    def start(*args: str) -> LLMServer:
        server = LLMServer(tmp_path, *args)
        started.append(server)
        return server.wait_ready()

    try:
        yield start
    finally:
        for server in started:
            server.stop()
