"""Graph expansion (NaiveGE, exact mode) against its physical limit: the encoder.

For each question: base retrieval, then NaiveGE expansion with an empty encoder cache (cold: every candidate text is
encoded, as on a first visit), then the same candidate texts encoded again in one raw `Encoder.encode` call with no
cache and no search around it, then the cold expansion once more (the time kept: both sides have then seen the same
batch shapes). Algorithm 1 is sequential, so the expansion needs one encoder call per step (l = 2: two calls), while
the raw reference encodes everything in one call; `ratio expansion/its-own-encode-calls` isolates the search itself.
The ratio expansion / raw encode is the issue's target (≤ 1.25).
A warm run (same query again, cache full) and the fast mode are printed next to it for reference.

With `--against REV`, instead: `beam_search` as it was at git revision REV runs beside the current one on the same
initial nodes, alternating which goes first: cold (empty encoder cache), warm (cache full: the search itself) and
fast, with the ratio current / REV of each, and a check that both return the same beams.

    python bench/expand.py [/tmp/idx/musique] [--qa dev50.json] [--retriever bm25] [--k 10] [--limit N] [--bf16]
                           [--profile] [--against REV]

Output: one measurement per line, `name value unit` pairs, script-readable.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import load_qa
from gear.embed import Encoder
from gear.retrieve import beam
from gear.retrieve.expand import expand, naive_initial_nodes
from gear.retrieve.scoring import ExactScorer, FastScorer
from gear.trace import Trace


class RecordingEncoder:
    """Passes encode_cached through to the real encoder and keeps the texts it was asked for."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.texts: list[str] = []

    def encode_cached(self, texts):
        self.texts.extend(texts)
        return self.encoder.encode_cached(texts)


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def beam_module_at(revision: str) -> types.ModuleType:
    """gear/retrieve/beam.py as it was at a git revision, loaded as a module of its own."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{revision}:gear/retrieve/beam.py"], cwd=root, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType(f"beam_at_{revision}")
    sys.modules[module.__name__] = module  # its dataclasses look their module up while they are made
    exec(compile(source, f"{revision}:gear/retrieve/beam.py", "exec"), module.__dict__)
    return module


def against(revision: str, engine: Engine, ctx, questions, k: int) -> None:
    """The current beam_search beside REV's on every question's NaiveGE initial nodes: seconds summed over the
    questions, each side the best of 3 when warm or fast; cold alternates which side goes first."""
    reference = beam_module_at(revision)
    sides = {"current": beam.beam_search, revision: reference.beam_search}
    totals = {mode: dict.fromkeys(sides, 0.0) for mode in ("cold", "warm", "fast")}
    differ = 0
    for i, q in enumerate(questions):
        qv = engine.encode_query(q.question)
        initial = naive_initial_nodes(engine.backend, [p.id for p in ctx.base_retrieve(q.question, k, qv)])
        results = {}
        for name in (list(sides) if i % 2 == 0 else list(reversed(sides))):
            engine.encoder._cache.clear()
            t = time.perf_counter()
            results[name] = sides[name](qv, initial, engine.backend, ExactScorer(engine.backend, engine.encoder),
                                        ctx.beam)
            totals["cold"][name] += time.perf_counter() - t
        first, second = results.values()
        differ += first.steps != second.steps or first.candidates_scored != second.candidates_scored
        warm, fast = ExactScorer(engine.backend, engine.encoder), FastScorer(engine.backend)
        for mode, scorer in (("warm", warm), ("fast", fast)):
            for name, search in sides.items():
                best = float("inf")
                for _ in range(3):
                    t = time.perf_counter()
                    search(qv, initial, engine.backend, scorer, ctx.beam)
                    best = min(best, time.perf_counter() - t)
                totals[mode][name] += best
    print(f"beam_search against {revision}: questions {len(questions)} different results {differ}")
    for mode, seconds in totals.items():
        now, then = seconds["current"], seconds[revision]
        print(f"beam_search {mode} current {now * 1000:.1f} ms {revision} {then * 1000:.1f} ms "
              f"ratio current/{revision} {now / max(then, 1e-12):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", nargs="?", default="/tmp/idx/musique")
    ap.add_argument("--qa", default="/work/shared/data/musique/musique_dev50.json")
    ap.add_argument("--retriever", default="bm25", choices=["bm25", "dense", "hybrid"])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--bf16", action="store_true", help="bf16 encoder (Settings.embed_bf16)")
    ap.add_argument("--profile", action="store_true", help="cProfile the expansions; print the top entries")
    ap.add_argument("--against", metavar="REV", help="also time beam_search as it was at this git revision")
    args = ap.parse_args()

    settings = Settings().with_(retriever=args.retriever, method="naive", embed_bf16=args.bf16)
    engine = Engine.open(Path(args.index), settings)
    encoder = engine.encoder
    questions, _ = load_qa(args.qa)
    questions = questions[: args.limit] if args.limit else questions
    ctx = engine.context(settings, Trace(), ())  # a run's view: base retrieval, Algorithm 1's parameters
    params = ctx.beam
    encoder.encode(["warm up the model"])  # model load is not part of any measurement
    if args.against:
        against(args.against, engine, ctx, questions, args.k)
        return

    cold, raw, warm, fast, n_texts, search_only = [], [], [], [], [], []
    profiler = cProfile.Profile() if args.profile else None
    for q in questions:
        qv = engine.encode_query(q.question)
        base = [p.id for p in ctx.base_retrieve(q.question, args.k, qv)]
        initial = naive_initial_nodes(engine.backend, base)
        # cold: nothing of this query's candidates cached
        encoder._cache.clear()
        recorder = RecordingEncoder(encoder)
        scorer = ExactScorer(engine.backend, recorder)  # type: ignore[arg-type]
        enc_before = encoder.encode_seconds
        if profiler:
            profiler.enable()
        t = time.perf_counter()
        expand(qv, base, initial, engine.backend, scorer, params, settings.rrf_k)
        cold.append(time.perf_counter() - t)
        if profiler:
            profiler.disable()
        search_only.append(cold[-1] - (encoder.encode_seconds - enc_before))
        texts = list(dict.fromkeys(recorder.texts))
        n_texts.append(len(texts))
        # the physical limit: the same texts, one raw encoder call, nothing else
        t = time.perf_counter()
        encoder.encode(texts)
        raw.append(time.perf_counter() - t)
        # cold again, now that the encoder has seen these batch shapes too (oneDNN/bf16 kernels are built per
        # shape on first use; without this the first measured of the two pays for it): this is the cold time kept
        encoder._cache.clear()
        enc_before = encoder.encode_seconds
        t = time.perf_counter()
        expand(qv, base, initial, engine.backend, ExactScorer(engine.backend, encoder), params, settings.rrf_k)
        cold[-1] = time.perf_counter() - t
        search_only[-1] = cold[-1] - (encoder.encode_seconds - enc_before)
        # warm: the same query again with every text cached
        t = time.perf_counter()
        expand(qv, base, initial, engine.backend, scorer, params, settings.rrf_k)
        warm.append(time.perf_counter() - t)
        t = time.perf_counter()
        expand(qv, base, initial, engine.backend, FastScorer(engine.backend), params, settings.rrf_k)
        fast.append(time.perf_counter() - t)

    ms = 1000.0
    print(f"questions {len(cold)} retriever {args.retriever} k {args.k} bf16 {int(args.bf16)}")
    print(f"candidate texts per query mean {np.mean(n_texts):.0f} p50 {pct(n_texts, 50):.0f} "
          f"p95 {pct(n_texts, 95):.0f}")
    print(f"exact expansion cold total {sum(cold):.2f} s p50 {pct(cold, 50) * ms:.1f} ms "
          f"p95 {pct(cold, 95) * ms:.1f} ms")
    print(f"raw encode of candidate texts total {sum(raw):.2f} s p50 {pct(raw, 50) * ms:.1f} ms "
          f"p95 {pct(raw, 95) * ms:.1f} ms")
    print(f"ratio expansion/raw-encode {sum(cold) / max(sum(raw), 1e-9):.3f} "
          f"per-query-p50 {float(np.median(np.array(cold) / np.maximum(raw, 1e-9))):.3f}")
    own = sum(cold) - sum(search_only)
    print(f"ratio expansion/its-own-encode-calls {sum(cold) / max(own, 1e-9):.4f} "
          f"(the search adds {100 * sum(search_only) / max(sum(cold), 1e-9):.2f} % to the encoder's time)")
    print(f"search-only (expansion minus its encode calls) total {sum(search_only) * ms:.1f} ms "
          f"p50 {pct(search_only, 50) * ms:.2f} ms p95 {pct(search_only, 95) * ms:.2f} ms")
    print(f"exact expansion warm p50 {pct(warm, 50) * ms:.2f} ms p95 {pct(warm, 95) * ms:.2f} ms")
    print(f"fast expansion p50 {pct(fast, 50) * ms:.2f} ms p95 {pct(fast, 95) * ms:.2f} ms")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main()
