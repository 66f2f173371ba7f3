"""The bundled demos: corpora, triples and QA sets shipped in assets/, indexed into data/indexes/<name> on first use
(where each lives: studio.core.paths), the example runs the Ask page offers, and the indexes a person can choose.

Nothing here fakes data: a demo whose files are missing reports "not available yet" and is never built.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gear.index.home import question_ids
from gear.types import StageProgress
from studio.core.paths import ASSETS, BUNDLED_TRACES, LLM_CACHE, index_dir, indexes_dir, project_path

if TYPE_CHECKING:  # the encoder loads torch: imported where a build needs it
    from gear.embed import Encoder

#: the paper's walk-through question (App. C, Table 9; MuSiQue, answer 1929)
WALKTHROUGH_QUESTION = ("When did the location of the basilica which is named for the same saint that the Bremen "
                        "Cathedral is named for become a country?")


@dataclass(frozen=True)
class Example:
    """A bundled recorded run the Ask page offers (assets/traces/<stem>.json), with a caption saying what it shows:
    a replay alone does not tell a newcomer that a run failed, nor why that is worth seeing."""

    stem: str
    button: str  # the button that replays it
    caption: str  # markdown, our own text

    @property
    def path(self) -> Path:
        return BUNDLED_TRACES / f"{self.stem}.json"


EXAMPLES: dict[str, Example] = {e.stem: e for e in (
    Example("walkthrough", "Replay the paper's walk-through",
            "**The paper's walk-through** (App. C, Table 9): its gold answer is **1929** — St. Peter's Basilica stands "
            "in Vatican City, a country since 1929. In the paper's run the reasoner finds after the first iteration "
            "that the memory does not answer the question yet, and the rewriter asks for the basilica's location "
            "next. The embedded 1.5B model does otherwise, and that is the teaching point: after one iteration its "
            "reasoner calls the question answerable with “Germany”, which the gist memory does not support (it holds "
            "Bremen's country, not the basilica's) — a *reasoner hallucination*, one of the paper's error categories. "
            "The loop stops there and the QA step answers “Croatia” (EM 0)."),
    Example("musique_wilm_airport", "Replay a run the embedded model gets right",
            "**A run the embedded 1.5B model gets right** (MuSiQue dev `2hop__357901_62671`, one of the 4 of the "
            "recorded 20-question subset it answers exactly; nothing tuned). The rewriter narrows the question to "
            "“What city is WILM licensed to broadcast?”; in iteration 3 the reasoner stops with a wrong guess, "
            "“Sumter International Airport”. The answer that counts is not the reasoner's but the QA step's, over "
            "the top 5 passages of the final ranking — and it is right: **Wilmington International Airport** "
            "(EM 1, both gold passages in the top 5)."),
)}


@dataclass(frozen=True)
class Demo:
    name: str
    title: str
    corpus: Path
    openie: Path
    qa: Path
    build_time: str = ""  # its first build's cost, as measured (docs/setup.md, "First set-up"), for the progress box
    at_start: bool = True  # built when the app starts; else only when a page opens it (a large demo few will open)

    @property
    def files(self) -> list[Path]:
        return [self.corpus, self.openie, self.qa]

    def missing(self) -> list[Path]:
        return [p for p in self.files if not p.is_file()]

    @property
    def available(self) -> bool:
        return not self.missing()


DEMOS: dict[str, Demo] = {
    "walkthrough": Demo("walkthrough", "Paper walk-through (Bremen Cathedral)",
                        ASSETS / "walkthrough" / "walkthrough_corpus.json",
                        ASSETS / "walkthrough" / "openie_walkthrough_qwen2.5-coder-1.5b.json",
                        ASSETS / "walkthrough" / "walkthrough_qa.json", "20 passages, a few seconds"),
    "musique": Demo("musique", "MuSiQue sample (1,890 passages, 50 questions)",
                    ASSETS / "musique" / "musique_corpus1890.json",
                    ASSETS / "musique" / "openie_musique_gpt-3.5-turbo-1106_1890.json",
                    ASSETS / "musique" / "musique_dev50.json",
                    "1,890 passages and 17,204 triples: about 2 minutes on a 2-core CPU (5 on a busy one)"),
    "hotpotqa": Demo("hotpotqa", "HotpotQA sample (994 passages, 100 questions; triples by the embedded model)",
                     ASSETS / "hotpotqa" / "hotpotqa_train100_corpus.json",
                     ASSETS / "hotpotqa" / "openie_hotpotqa_qwen2.5-coder-1.5b_994.json",
                     ASSETS / "hotpotqa" / "hotpotqa_train100.json",
                     "994 passages and 8,683 triples: about 1.5 minutes on a 2-core CPU", at_start=False),
    "2wiki": Demo("2wiki", "2WikiMultiHopQA sample (1,294 passages, 82 questions; triples by the embedded model)",
                  ASSETS / "2wikimultihopqa" / "2wikimultihopqa_dev164_corpus.json",
                  ASSETS / "2wikimultihopqa" / "openie_2wikimultihopqa_qwen2.5-coder-1.5b_1294.json",
                  ASSETS / "2wikimultihopqa" / "2wikimultihopqa_dev82.json",
                  "1,294 passages and 8,917 triples: about 2 minutes on a 2-core CPU", at_start=False),
}

_build_lock = threading.Lock()


def is_built(name: str) -> bool:
    return (index_dir(name) / "manifest.json").is_file()


def status(name: str) -> str:
    demo = DEMOS[name]
    if not demo.available:
        return "not available yet (missing " + ", ".join(p.name for p in demo.missing()) + ")"
    return "built" if is_built(name) else "not built yet (built on first use)"


def ensure_demo_index(name: str, progress: StageProgress | None = None, encoder: Encoder | None = None) -> Path:
    """The demo's index directory, building it first if needed (atomic; concurrent callers wait for one build)."""
    if name not in DEMOS:
        raise KeyError(f"unknown demo {name!r}; choose one of {', '.join(DEMOS)}")
    demo = DEMOS[name]
    out = index_dir(name)
    if is_built(name):
        return out
    if not demo.available:
        raise FileNotFoundError(f"demo {name!r} is not available yet: missing "
                                + ", ".join(project_path(p) for p in demo.missing()))
    with _build_lock:
        if is_built(name):
            return out
        from gear.config import Settings
        from gear.data.corpus import load_corpus, unique_documents
        from gear.data.openie import align_openie, load_openie
        from gear.index import build_index

        if progress:
            progress("reading corpus and triples", 0, 1)
        docs, report = load_corpus(demo.corpus)
        docs = unique_documents(docs, report)
        oie, _ = load_openie(demo.openie)
        triples = align_openie(docs, oie, report)
        if encoder is None:
            from gear.embed import Encoder

            settings = Settings()
            encoder = Encoder(settings.embedder, bf16=settings.embed_bf16, device=settings.device)
        # without PPR's entity graph: on a first start every minute counts before a question can run (the graph took
        # 2.2 min more on top of the MuSiQue demo's 4.7 on a shared 2-core machine); the app makes it ready in the
        # background once the index is opened (studio.core.resources._warm_ppr), so a comparison does not wait for it
        build_index(docs, triples, out, encoder, progress=progress,
                    source={"demo": name, "corpus": project_path(demo.corpus),
                            "openie": project_path(demo.openie), "qa": project_path(demo.qa)},
                    extraction={"source": demo.openie.name})
    return out


def demo_of_index(directory: Path) -> Demo | None:
    """The demo an index directory was built from (by location), if any."""
    for name, demo in DEMOS.items():
        if directory.resolve() == index_dir(name).resolve():
            return demo
    return None


def demo_of_question(question_id: str) -> Demo | None:
    """The demo whose QA set holds this question (a bundled run names the index it was made on this way)."""
    for d in DEMOS.values():
        if question_id and question_id in question_ids(d.qa):
            return d
    return None


def replay_entries(cache_dir: Path | None = None) -> int:
    d = cache_dir or LLM_CACHE
    return sum(1 for _ in d.glob("*.json")) if d.is_dir() else 0


def list_indexes() -> dict[str, Path]:
    """label -> directory: the demos (built or buildable) and every index under data/indexes/."""
    found: dict[str, Path] = {}
    for name, d in DEMOS.items():
        if d.available or is_built(name):
            found[f"{name} (demo)"] = index_dir(name)
    root = indexes_dir()
    if root.is_dir():
        for sub in sorted(root.iterdir()):
            if sub.name in DEMOS or sub.name.startswith("."):
                continue
            if (sub / "manifest.json").is_file():
                found[sub.name] = sub
    return found


