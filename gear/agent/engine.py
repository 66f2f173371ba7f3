"""The facade scripts, the CLI and the app use: an opened index with its encoder and settings, able to run any
method of the paper (or a peer) on a question and record a Trace of it.

`Engine.retrieve` owns a run's life: it picks the method's runner from the registry (gear.methods), records the start,
hands the runner a narrow RunContext, then writes what every run ends with — the final ranking, the answer when the
method answers, the finish with its recall and time, and the Run record."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from gear import methods
from gear.agent import steps
from gear.agent.beam_replay import BeamReplay, BeamReplayError, recorded_params, replay_beams, with_knobs
from gear.agent.context import RunContext
from gear.agent.event_builders import passage_views
from gear.agent.methods import runner
from gear.agent.run import Run
from gear.config import Settings, public_settings
from gear.data.questions import same_text
from gear.embed import Encoder
from gear.events import BeamsSearched, FinalRanking, RunFinished, RunStarted
from gear.index import Manifest, open_memory_backend
from gear.llm import LLM, llm_from_settings, llm_key
from gear.llm.speed import MODEL_SPEED, ModelSpeed
from gear.measures import recall_at_cutoffs
from gear.retrieve.ppr import PPRIndex
from gear.retrieve.scoring import ExactScorer, FastScorer, SequenceScorer
from gear.store.base import SearchBackend
from gear.trace import Trace

MAX_LLMS = 8  # LLM configurations an engine keeps (least recently used dropped first)


class Engine:
    """Holds the heavy state (index, encoder) once; every call takes its own Settings, so runs never interfere."""

    def __init__(
        self,
        backend: SearchBackend,
        encoder: Encoder,
        settings: Settings,
        manifest: Manifest | None = None,
        directory: Path | None = None,
        speed: ModelSpeed | None = None,
    ) -> None:
        self.backend, self.encoder, self.settings = backend, encoder, settings
        self.manifest, self.directory = manifest, directory
        #: the model's speed as this engine's runs measure it (the status line's estimates); by default the one this
        #: process shares, as its engines share the one embedded model server
        self.speed = speed if speed is not None else MODEL_SPEED
        self._llms: OrderedDict[tuple[object, ...], LLM] = OrderedDict()  # most recently used last
        self._llm_lock = threading.Lock()
        self._ppr: dict[float, PPRIndex] = {}
        self._ppr_lock = threading.Lock()

    @classmethod
    def open(cls, directory: str | Path, settings: Settings | None = None, encoder: Encoder | None = None,
             speed: ModelSpeed | None = None) -> Engine:
        directory = Path(directory)
        manifest = Manifest.read(directory)
        base = settings or Settings()
        encoder = encoder or Encoder(manifest.embedder, bf16=base.embed_bf16, device=base.device)
        backend: SearchBackend
        if base.backend == "elasticsearch":
            from gear.store.elastic import open_elastic_backend

            backend = open_elastic_backend(directory, manifest, base, encoder)
        else:
            backend = open_memory_backend(directory, manifest, encoder, base.rrf_k)
        return cls(backend, encoder, base, manifest, directory, speed)

    def llm(self, settings: Settings | None = None) -> LLM:
        """The configured LLM, created once per configuration (the local model takes seconds to load)."""
        s = settings or self.settings
        key = llm_key(s)
        with self._llm_lock:
            if key not in self._llms:
                self._llms[key] = llm_from_settings(s)
            self._llms.move_to_end(key)
            self._trim_llms()
            return self._llms[key]

    def set_llm(self, settings: Settings, llm: LLM) -> None:
        """Use exactly this LLM for this configuration (tests script one; wrap it in gear.llm.MemoLLM to memoise)."""
        key = llm_key(settings)
        with self._llm_lock:
            self._llms[key] = llm
            self._llms.move_to_end(key)
            self._trim_llms()

    def _trim_llms(self) -> None:
        # every base URL or model typed into the app's sidebar makes a configuration: keep the recently used ones
        # (a run holds its own reference; the loaded local model is shared process-wide, not owned here)
        while len(self._llms) > MAX_LLMS:
            self._llms.popitem(last=False)

    # -- building blocks ----------------------------------------------------------------------------------------------
    def encode_query(self, text: str) -> np.ndarray:
        return self.encoder.encode_cached([text])[0]

    def scorer(self, settings: Settings) -> SequenceScorer:
        return FastScorer(self.backend) if settings.score_mode == "fast" else ExactScorer(self.backend, self.encoder)

    def ppr_index(self, settings: Settings) -> PPRIndex:
        """The index's PPR graph for this synonym threshold, built on first use (entity vectors and synonym edges
        cached in `<index>/ppr/` when the directory is writable)."""
        key = settings.ppr_synonym_threshold
        with self._ppr_lock:
            if key not in self._ppr:
                cache = self.directory / "ppr" if self.directory is not None else None
                self._ppr[key] = PPRIndex.open(self.backend, self.encoder.encode, key, cache)
            return self._ppr[key]

    def has_ppr_index(self, settings: Settings) -> bool:
        return settings.ppr_synonym_threshold in self._ppr

    def gold_ids(self, gold: Sequence[tuple[str, str | None]]) -> list[int]:
        """The index's ids of gold passages named by (title, text), or by title alone where no text is named: by the
        exact text, else — for a title one passage has — by the same text up to whitespace (gear.data.corpus.
        same_text: 2Wiki's pooled corpus joins a paragraph's sentences with a space, its questions with nothing)."""
        ids = [self._find_gold(title, text) for title, text in gold]
        return list(dict.fromkeys(i for i in ids if i is not None))

    def _find_gold(self, title: str, text: str | None) -> int | None:
        found = self.backend.find_passage(title, text)
        if found is not None or text is None:
            return found
        alone = self.backend.find_passage(title, None)
        if alone is not None and same_text(self.backend.passages([alone])[0].text, text):
            return alone
        return None

    def replay_beams(self, trace: Trace, iteration: int, **knobs: object) -> BeamReplay:
        """The beam search of `iteration` of a run made on this index, searched again with other knobs (width,
        length, max_neighbours, gamma, diversity; gear.agent.beam_replay): no model asked, the run unchanged."""
        recorded = trace.first(BeamsSearched, iteration)
        if recorded is None:
            raise BeamReplayError(f"iteration {iteration} of this run has no beam search")
        scorer = FastScorer(self.backend) if recorded.score_mode == "fast" else ExactScorer(self.backend, self.encoder)
        return replay_beams(trace, iteration, self.backend, self.encoder.encode_cached, scorer,
                            with_knobs(recorded_params(recorded), **knobs), self.settings.rrf_k)

    # -- runs -------------------------------------------------------------------------------------------------------
    def context(self, settings: Settings, trace: Trace, gold: Collection[int], llm: LLM | None = None) -> RunContext:
        """What one run may use of this engine (a runner sees nothing else of it)."""
        return RunContext(settings, trace, frozenset(gold), self.backend, self.encoder.encode_cached,
                          lambda: self.scorer(settings), lambda: self.ppr_index(settings),
                          lambda: self.has_ppr_index(settings), self.speed, llm)

    def retrieve(
        self,
        question: str,
        *,
        k: int = methods.DEPTH,
        settings: Settings | None = None,
        gold: Collection[int] = (),
        question_id: str = "",
        answers: Sequence[str] = (),
        trace: Trace | None = None,
        llm: LLM | None = None,
    ) -> Run:
        """Run the method `settings.method` names (gear.methods) on one question: single-step methods take `k`
        passages from the base retriever (by default gear.methods.DEPTH, as every page and command runs them),
        multi-step ones agent_k per retrieval. `llm` replaces the configured LLM
        for this run only (gear.llm.fresh_llm: the model asked afresh; gear.llm.recorded_llm: the recordings alone)."""
        s = settings or self.settings
        method = methods.get(s.method)
        trace = trace or Trace()
        trace.emit(
            RunStarted(0, question, method.name, s.retriever, public_settings(s), question_id, list(gold),
                       list(answers))
        )
        started = time.perf_counter()
        ctx = self.context(s, trace, gold, (llm or self.llm(s)) if method.uses_llm(s) else None)
        outcome = runner(method)(ctx, question, k)
        ranked, n = outcome.ranked, outcome.iterations
        trace.emit(FinalRanking(n, passage_views(self.backend, ranked, ctx.gold)))
        answer = None
        if method.answers and s.answer:
            start = time.perf_counter()
            answer = steps.answer(ctx, question, ranked, answers, n)
            ctx.timer.stage("qa", n, start)
        total = (time.perf_counter() - started) * 1000
        trace.emit(RunFinished(n, n, total, recall_at_cutoffs([r.id for r in ranked], ctx.gold)))
        return Run(ranked, trace, {**ctx.timer.totals, "total": total}, answer)
