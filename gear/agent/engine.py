"""The facade scripts, the CLI and the app use: an opened index with its encoder and settings, able to run any
method of the paper on a question and record a Trace of it."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gear.agent.ircot import run_ircot
from gear.agent.loop import run_agent, run_sync
from gear.agent.ppr import run_ppr
from gear.agent.run import Run, Timer
from gear.config import Settings, public_settings
from gear.embed import Encoder
from gear.eval.measures import recall_at_cutoffs
from gear.index import Manifest, open_memory_backend
from gear.retrieve.beam import BeamParams
from gear.retrieve.expand import expand, naive_initial_nodes
from gear.retrieve.ppr import PPRIndex
from gear.retrieve.scoring import ExactScorer, FastScorer, SequenceScorer
from gear.store.base import SearchBackend
from gear.trace import (
    BaseRetrieved,
    FinalRanking,
    IterationStarted,
    RunFinished,
    RunStarted,
    Trace,
)
from gear.trace.views import expansion_events, passage_views
from gear.types import Scored

if TYPE_CHECKING:
    from gear.llm import LLM

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
    ) -> None:
        self.backend, self.encoder, self.settings = backend, encoder, settings
        self.manifest, self.directory = manifest, directory
        self._llms: OrderedDict[tuple[object, ...], object] = OrderedDict()  # most recently used last
        self._llm_lock = threading.Lock()
        self._ppr: dict[float, PPRIndex] = {}
        self._ppr_lock = threading.Lock()

    @classmethod
    def open(cls, directory: str | Path, settings: Settings | None = None, encoder: Encoder | None = None) -> Engine:
        directory = Path(directory)
        manifest = Manifest.read(directory)
        base = settings or Settings()
        encoder = encoder or Encoder(manifest.embedder, bf16=base.embed_bf16)
        backend: SearchBackend
        if base.backend == "elasticsearch":
            from gear.store.elastic import open_elastic_backend

            backend = open_elastic_backend(directory, manifest, base, encoder)
        else:
            backend = open_memory_backend(directory, manifest, encoder, base.rrf_k)
        return cls(backend, encoder, base, manifest, directory)

    def llm(self, settings: Settings | None = None) -> LLM:
        """The configured LLM, created once per configuration (the local model takes seconds to load)."""
        from gear.llm import llm_from_settings, llm_key

        s = settings or self.settings
        key = llm_key(s)
        with self._llm_lock:
            if key not in self._llms:
                self._llms[key] = llm_from_settings(s)
            self._llms.move_to_end(key)
            self._trim_llms()
            return self._llms[key]  # type: ignore[return-value]

    def set_llm(self, settings: Settings, llm: LLM) -> None:
        """Use exactly this LLM for this configuration (tests script one; wrap it in gear.llm.MemoLLM to memoise)."""
        from gear.llm import llm_key

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

    @staticmethod
    def beam_params(settings: Settings) -> BeamParams:
        return BeamParams(
            settings.beam_width,
            settings.beam_length,
            settings.max_neighbours,
            settings.effective_gamma,
            settings.diversity,
        )

    def base_retrieve(
        self, query: str, k: int, settings: Settings, query_vector: np.ndarray | None = None
    ) -> list[Scored]:
        qv = (
            None
            if settings.retriever == "bm25"
            else (query_vector if query_vector is not None else self.encode_query(query)[None, :])
        )
        if qv is not None and qv.ndim == 1:
            qv = qv[None, :]
        return self.backend.search_passages([query], k, settings.retriever, qv)[0]

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
        ids = [self.backend.find_passage(title, text) for title, text in gold]
        return list(dict.fromkeys(i for i in ids if i is not None))

    # -- methods ------------------------------------------------------------------------------------------------------
    def retrieve(
        self,
        question: str,
        *,
        k: int = 10,
        settings: Settings | None = None,
        gold: Collection[int] = (),
        question_id: str = "",
        answers: Sequence[str] = (),
        trace: Trace | None = None,
    ) -> Run:
        """Single-step retrieval (base, NaiveGE, SyncGE, PPR) or a multi-step method (GeAR, IRCoT), per `settings`."""
        s = settings or self.settings
        method = s.expand
        trace = trace or Trace()
        trace.emit(
            RunStarted(0, question, method, s.retriever, public_settings(s), question_id, list(gold), list(answers))
        )
        if method in ("sync", "gear"):
            runner = run_sync if method == "sync" else run_agent
            return runner(self, question, k=k, settings=s, gold=gold, trace=trace, answers=answers)
        if method == "ircot":
            return run_ircot(self, question, k=k, settings=s, gold=gold, trace=trace, answers=answers)
        if method == "ppr":
            return run_ppr(self, question, k=k, settings=s, gold=gold, trace=trace)
        return self._single_step(question, k, s, method, gold, trace)

    def _single_step(self, question: str, k: int, s: Settings, method: str, gold: Collection[int], trace: Trace) -> Run:
        timer = Timer(trace)
        t0 = start = time.perf_counter()
        trace.emit(IterationStarted(1, question))
        qv = self.encode_query(question)
        base = self.base_retrieve(question, k, s, qv)
        trace.emit(BaseRetrieved(1, question, k, passage_views(self.backend, base, gold)))
        start = timer.stage("base retrieval", 1, start)
        ranked = base
        if method == "naive":
            initial = naive_initial_nodes(self.backend, [p.id for p in base])
            params = self.beam_params(s)
            result = expand(qv, [p.id for p in base], initial, self.backend, self.scorer(s), params, s.rrf_k)
            for event in expansion_events(1, "naive", result, self.backend, params, s.score_mode, gold):
                trace.emit(event)
            start = timer.stage("graph expansion", 1, start)
            ranked = result.fused
        trace.emit(FinalRanking(1, passage_views(self.backend, ranked, gold)))
        total = (time.perf_counter() - t0) * 1000
        trace.emit(RunFinished(1, 1, total, recall_at_cutoffs([r.id for r in ranked], gold)))
        return Run(ranked, trace, {**timer.totals, "total": total})
