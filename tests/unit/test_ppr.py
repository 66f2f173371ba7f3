"""PPR retrieval, HippoRAG 2 style: the graph's three edge kinds, the seeds, Personalized PageRank against scores
computed independently (a hand calculation, a linear solve, networkx), the engine method with its trace events, the
on-disk cache, the recognition filter with a scripted LLM, and `gear eval` / `gear retrieve` with --expand ppr."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from typer.testing import CliRunner

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import Question
from gear.eval.report import evaluate
from gear.events import (
    BaseRetrieved,
    FinalRanking,
    IterationStarted,
    LLMCalled,
    PPRRanked,
    PPRSeeded,
    RunFinished,
    RunStarted,
)
from gear.llm import LLMResult
from gear.retrieve.ppr import entity_weights, minmax, personalized_pagerank, seed_vector
from gear.retrieve.ppr_graph import (
    SYNONYM_EXACT_LIMIT,
    Edges,
    build_graph,
    context_edges,
    relation_edges,
    synonym_edges,
)
from gear.trace import Trace
from gear.trace.narrate import narrate
from gear.types import Scored


def edges(*pairs: tuple[int, int, float]) -> Edges:
    return Edges(np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64),
                 np.array([p[2] for p in pairs], float))


# -- the graph ---------------------------------------------------------------------------------------------------------
def test_relation_edges_count_each_triple_twice_and_drop_self_loops() -> None:
    head = np.array([0, 1, 0, 2, 3])
    tail = np.array([1, 0, 2, 2, 1])
    rel = relation_edges(head, tail)
    got = {(int(a), int(b)): float(w) for a, b, w in zip(rel.a, rel.b, rel.w, strict=True)}
    # (0,1) twice (either direction), (0,2) once, (1,3) once; the self-loop (2,2) is no edge
    assert got == {(0, 1): 4.0, (0, 2): 2.0, (1, 3): 2.0}


def test_context_edges_join_each_passage_to_the_entities_of_its_triples_once() -> None:
    head = np.array([0, 0, 2])
    tail = np.array([1, 1, 0])
    passage = np.array([0, 0, 1])
    ctx = context_edges(head, tail, passage)
    assert sorted(zip(ctx.a.tolist(), ctx.b.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 0), (2, 1)]
    assert set(ctx.w.tolist()) == {1.0}


def _unit(degrees: float) -> list[float]:
    return [np.cos(np.radians(degrees)), np.sin(np.radians(degrees))]


# every synonym rule holds for both passes: the exact all-pairs one and the faiss k-NN one used above `exact_limit`
# names (on a handful of vectors the IVF probes every cell, so the two must agree exactly)
PASSES = pytest.mark.parametrize("exact_limit", [SYNONYM_EXACT_LIMIT, 0], ids=["exact", "knn"])


@PASSES
def test_synonym_edges_keep_pairs_at_or_above_the_threshold(exact_limit: int) -> None:
    # cosines: (0,1) = cos 20° ≈ 0.940, (0,2) = cos 50° ≈ 0.643, (1,2) = cos 30° ≈ 0.866; entity 3 = entity 0's
    # direction but its name is too short to take synonyms
    vectors = np.array([_unit(0), _unit(20), _unit(50), _unit(0)], np.float32)
    names = ["mount etna", "mt etna", "etna volcano", "et"]
    syn = synonym_edges(vectors, names, 0.8, exact_limit=exact_limit)
    got = {(int(a), int(b)): float(w) for a, b, w in zip(syn.a, syn.b, syn.w, strict=True)}
    assert set(got) == {(0, 1), (1, 2)}
    assert got[(0, 1)] == pytest.approx(2 * np.cos(np.radians(20)), abs=1e-6)
    assert got[(1, 2)] == pytest.approx(2 * np.cos(np.radians(30)), abs=1e-6)
    assert len(synonym_edges(vectors, names, 0.95, exact_limit=exact_limit)) == 0  # the threshold is a setting


@PASSES
def test_the_synonym_threshold_is_inclusive(exact_limit: int) -> None:
    vectors = np.array([[1.0, 0.0], [0.75, np.sqrt(1 - 0.75**2)]], np.float32)  # cosine exactly 0.75
    assert len(synonym_edges(vectors, ["alpha", "alpine"], 0.75, exact_limit=exact_limit)) == 1


@PASSES
def test_synonym_edges_cap_the_neighbours_of_each_entity(exact_limit: int) -> None:
    vectors = np.array([_unit(0), _unit(1), _unit(3), _unit(6)], np.float32)
    names = ["alpha", "beta", "gamma", "delta"]
    assert len(synonym_edges(vectors, names, 0.9, exact_limit=exact_limit)) == 6  # every pair is close enough
    syn = synonym_edges(vectors, names, 0.9, max_per_entity=1, exact_limit=exact_limit)
    # each entity keeps its nearest: 0→1, 1→0, 2→1, 3→2; a pair is an edge when either end keeps it
    assert sorted(zip(syn.a.tolist(), syn.b.tolist(), strict=True)) == [(0, 1), (1, 2), (2, 3)]


def test_the_knn_pass_finds_almost_every_exact_synonym_pair_and_no_other() -> None:
    # 4,000 names in 400 clusters over 64 dimensions, cosines within a cluster around 0.83 (some pairs above the
    # threshold, some below): the IVF index has 63 cells and probes 8 of them per name
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((400, 64)).astype(np.float32)
    vectors = centres[rng.integers(0, 400, 4000)] + 0.45 * rng.standard_normal((4000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = [f"entity {i}" for i in range(4000)]
    exact = synonym_edges(vectors, names, 0.8)
    knn = synonym_edges(vectors, names, 0.8, exact_limit=0)
    want = dict(zip(zip(exact.a.tolist(), exact.b.tolist(), strict=True), exact.w.tolist(), strict=True))
    got = dict(zip(zip(knn.a.tolist(), knn.b.tolist(), strict=True), knn.w.tolist(), strict=True))
    assert len(want) > 2000
    assert set(got) <= set(want)  # nothing below the threshold, no self-pairs
    assert len(got) >= 0.95 * len(want)
    assert all(got[p] == pytest.approx(want[p], abs=1e-5) for p in got)  # flat IVF lists: exact cosines


def test_build_graph_puts_passages_after_entities_and_is_symmetric() -> None:
    graph = build_graph(3, 2, edges((0, 1, 2.0)), edges((0, 0, 1.0), (2, 1, 1.0)), edges((1, 2, 1.8)))
    w = graph.adjacency.toarray()
    assert np.allclose(w, w.T)
    assert w[0, 1] == 2.0 and w[1, 2] == 1.8 and w[0, 3] == 1.0 and w[2, 4] == 1.0
    assert graph.entity_passages.tolist() == [1, 0, 1]
    assert graph.counts() == {"entities": 3, "passages": 2, "relation_edges": 1, "context_edges": 2,
                              "synonym_edges": 1}


# -- Personalized PageRank against independent calculations -----------------------------------------------------------
def test_ppr_on_two_nodes_matches_the_hand_calculation() -> None:
    # x0 = (1−d)·1 + d·x1 and x1 = d·x0  ⇒  x0 = 1/(1+d), x1 = d/(1+d): 2/3 and 1/3 for d = 0.5
    graph = build_graph(2, 0, edges((0, 1, 1.0)), Edges.empty(), Edges.empty())
    x, iterations = personalized_pagerank(graph, np.array([1.0, 0.0]), 0.5)
    assert x == pytest.approx([2 / 3, 1 / 3], abs=1e-9)
    assert 10 < iterations < 100


HAND_ENTITIES = 4
HAND_PASSAGES = 3
HAND_EDGES = [(0, 1, 2.0), (1, 2, 4.0), (2, 3, 2.0), (0, 2, 1.6)]  # relation and synonym, entity ↔ entity
HAND_CONTEXT = [(0, 0, 1.0), (1, 0, 1.0), (2, 1, 1.0), (3, 1, 1.0)]  # entity ↔ passage; passage 2 is isolated


def hand_graph():
    return build_graph(HAND_ENTITIES, HAND_PASSAGES, edges(*HAND_EDGES[:3]), edges(*HAND_CONTEXT),
                       edges(HAND_EDGES[3]))


def hand_weights() -> np.ndarray:
    n = HAND_ENTITIES + HAND_PASSAGES
    w = np.zeros((n, n))
    for a, b, weight in HAND_EDGES:
        w[a, b] = w[b, a] = weight
    for e, p, weight in HAND_CONTEXT:
        w[e, HAND_ENTITIES + p] = w[HAND_ENTITIES + p, e] = weight
    return w


SEEDS = np.array([0.6, 0.0, 0.3, 0.0, 0.05, 0.02, 0.03])


def test_ppr_solves_the_linear_system_with_dangling_mass_returned_through_the_seeds() -> None:
    d = 0.5
    w = hand_weights()
    degree = w.sum(axis=1)
    p = np.divide(w, degree[:, None], out=np.zeros_like(w), where=degree[:, None] > 0)  # row-stochastic P
    s = SEEDS / SEEDS.sum()
    dangling = (degree == 0).astype(float)  # passage 2
    # x = (1−d)s + d(Pᵀx + (dangling·x)s)  ⇔  (I − d·Pᵀ − d·s·danglingᵀ) x = (1−d) s
    expected = np.linalg.solve(np.eye(len(s)) - d * p.T - d * np.outer(s, dangling), (1 - d) * s)
    x, _ = personalized_pagerank(hand_graph(), SEEDS, d)
    assert x == pytest.approx(expected, abs=1e-9)
    assert x.sum() == pytest.approx(1.0)


def test_ppr_agrees_with_networkx() -> None:
    g = nx.Graph()
    g.add_nodes_from(range(HAND_ENTITIES + HAND_PASSAGES))
    for a, b, weight in HAND_EDGES:
        g.add_edge(a, b, weight=weight)
    for e, p, weight in HAND_CONTEXT:
        g.add_edge(e, HAND_ENTITIES + p, weight=weight)
    personal = {i: float(v) for i, v in enumerate(SEEDS)}
    expected = nx.pagerank(g, alpha=0.5, personalization=personal, weight="weight", tol=1e-13, max_iter=500)
    x, _ = personalized_pagerank(hand_graph(), SEEDS, 0.5)
    assert x == pytest.approx([expected[i] for i in range(len(SEEDS))], abs=1e-8)


def test_ppr_rejects_an_empty_seed_vector() -> None:
    with pytest.raises(ValueError, match="positive mass"):
        personalized_pagerank(hand_graph(), np.zeros(len(SEEDS)), 0.5)


# -- seeds -------------------------------------------------------------------------------------------------------------
def test_entity_weights_divide_by_passage_count_average_and_keep_the_best() -> None:
    head = np.array([0, 0, 2])
    tail = np.array([1, 2, 3])
    passages_of = np.array([2, 1, 4, 1])  # entity 0 occurs in 2 passages, entity 2 in 4, …
    facts = [Scored(0, 1.0), Scored(1, 0.5), Scored(2, 0.8)]
    got = entity_weights(facts, head, tail, passages_of, max_entities=10)
    # entity 0: (1.0/2 + 0.5/2)/2; entity 1: 1.0/1; entity 2: (0.5/4 + 0.8/4)/2; entity 3: 0.8/1
    assert got == pytest.approx({0: 0.375, 1: 1.0, 2: 0.1625, 3: 0.8})
    assert list(entity_weights(facts, head, tail, passages_of, max_entities=2)) == [1, 3]


def test_seed_vector_adds_every_passage_at_its_normalised_dense_score_times_the_factor() -> None:
    graph = hand_graph()
    dense = np.array([0.2, 0.6, 0.4])
    seeds = seed_vector(graph, {1: 0.7}, minmax(dense), 0.05)
    assert seeds.vector[:HAND_ENTITIES] == pytest.approx([0, 0.7, 0, 0])
    assert seeds.vector[HAND_ENTITIES:] == pytest.approx([0.0, 0.05, 0.025])
    assert minmax(np.array([3.0, 3.0])).tolist() == [1.0, 1.0]


# -- the engine method -------------------------------------------------------------------------------------------------
@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(retriever="dense"), encoder=make_encoder())


PPR = Settings(retriever="dense", expand="ppr")


def test_ppr_run_emits_the_usual_events_and_ranks_passages_by_ppr_score(engine: Engine) -> None:
    trace = Trace()
    gold = [engine.gold_ids([("Sicily", None)])[0]]
    run = engine.retrieve("Which sea is the island of Mount Etna in?", k=4, settings=PPR, gold=gold, trace=trace)
    kinds = [type(e) for e in trace.events if type(e).__name__ != "StageTimed"]
    assert kinds[:2] == [RunStarted, IterationStarted]
    assert kinds[2:] == [BaseRetrieved, PPRSeeded, PPRRanked, FinalRanking, RunFinished]
    ranked = trace.first(PPRRanked)
    assert ranked is not None and ranked.iterations > 0
    scores = [p.score for p in ranked.passages]
    assert scores == sorted(scores, reverse=True) and len(run.ranked) == 4
    assert [p.id for p in ranked.passages] == run.ids
    seeded = trace.first(PPRSeeded)
    assert seeded is not None and len(seeded.facts) == PPR.ppr_seed_triples and not seeded.fallback
    assert "mount etna" in {e.name for e in seeded.entities}
    # the seeds are drawn with their neighbours: a relation edge labelled with its predicate joins two of them
    names = {e.id: e.name for e in ranked.entities}
    relations = {(names[x.source], x.label, names[x.target]) for x in ranked.edges if x.kind == "relation"}
    assert ("mount etna", "located on", "sicily") in relations
    assert ranked.graph["entities"] == engine.backend.adjacency.n_entities  # type: ignore[attr-defined]
    finished = trace.first(RunFinished)
    assert finished is not None and set(finished.recall) == {"5", "10", "15"}
    # the trace survives JSON, and every new event narrates
    again = Trace.from_json(trace.to_json())
    assert again.first(PPRRanked) == ranked and again.first(PPRSeeded) == seeded
    assert all(narrate(e) for e in (seeded, ranked))


def test_ppr_ranking_equals_an_independent_solve_on_the_index_graph(engine: Engine) -> None:
    index = engine.ppr_index(PPR)
    qv = engine.encode_query("Which sea is the island of Mount Etna in?")
    facts = index.match_facts(qv, 5)
    result = index.rank(qv, facts, passage_weight=0.05, max_entities=5, damping=0.5)
    w = index.graph.adjacency.toarray()
    degree = w.sum(axis=1)
    p = np.divide(w, degree[:, None], out=np.zeros_like(w), where=degree[:, None] > 0)
    s = result.seeds.vector / result.seeds.vector.sum()
    dangling = (degree == 0).astype(float)
    x = np.linalg.solve(np.eye(len(s)) - 0.5 * p.T - 0.5 * np.outer(s, dangling), 0.5 * s)
    passages = x[index.graph.n_entities:]
    assert [r.id for r in result.ranking] == sorted(range(len(passages)), key=lambda i: (-passages[i], i))
    assert [r.score for r in result.ranking] == pytest.approx(sorted(passages, reverse=True), abs=1e-9)


def test_graph_parts_are_cached_beside_the_index(tiny_index: Path, make_encoder) -> None:
    first = Engine.open(tiny_index, PPR, encoder=make_encoder())
    built = first.ppr_index(PPR)
    assert not built.cost.cached["entity vectors"] and not built.cost.cached["synonym edges"]
    assert sorted(p.name.split("-")[0] for p in (tiny_index / "ppr").iterdir()) == ["entity_vectors", "synonyms"]
    encoder = make_encoder()
    second = Engine.open(tiny_index, PPR, encoder=encoder)
    again = second.ppr_index(PPR)
    assert again.cost.cached == {"entity vectors": True, "synonym edges": True}
    assert encoder.encoded_texts == []  # no entity name encoded twice
    assert again.graph.counts() == built.graph.counts()
    assert (again.graph.adjacency != built.graph.adjacency).nnz == 0
    # another threshold is another graph (its own synonym file), same entity vectors
    other = second.ppr_index(PPR.with_(ppr_synonym_threshold=0.3))
    assert other is not again and other.cost.cached["entity vectors"] and not other.cost.cached["synonym edges"]


class FilterLLM:
    """Keeps the facts numbered in `keep`; records every prompt."""

    model = "scripted-filter"

    def __init__(self, keep: list[int]) -> None:
        self.keep, self.prompts = keep, []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        text = json.dumps({"keep": self.keep})
        if on_text is not None:
            on_text(text)
        return LLMResult(text, 100, 7, 0.01, self.model)


def test_the_recognition_filter_keeps_what_the_llm_names(engine: Engine) -> None:
    settings = PPR.with_(ppr_filter=True)
    llm = FilterLLM([2])
    engine.set_llm(settings, llm)
    trace = Trace()
    engine.retrieve("Which sea is the island of Mount Etna in?", k=3, settings=settings, trace=trace)
    seeded = trace.first(PPRSeeded)
    assert seeded is not None and seeded.filtered and seeded.raw == '{"keep": [2]}'
    assert [f.kept for f in seeded.facts] == [False, True, False, False, False]
    kept = seeded.facts[1].triple
    assert {e.name for e in seeded.entities} <= {kept.subject.casefold(), kept.object.casefold()}
    assert "[2] (" in llm.prompts[0] and "Which sea is the island of Mount Etna in?" in llm.prompts[0]
    call = trace.first(LLMCalled)
    assert call is not None and call.step == "filter" and trace.tokens() == (100, 7)


def test_nothing_kept_falls_back_to_the_dense_ranking(engine: Engine) -> None:
    settings = PPR.with_(ppr_filter=True)
    engine.set_llm(settings, FilterLLM([]))
    trace = Trace()
    run = engine.retrieve("Which sea is the island of Mount Etna in?", k=4, settings=settings, trace=trace)
    seeded, base = trace.first(PPRSeeded), trace.first(BaseRetrieved)
    assert seeded is not None and seeded.fallback and not any(f.kept for f in seeded.facts)
    assert base is not None and run.ids == [p.id for p in base.passages]


def test_no_llm_is_made_without_the_filter(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Engine, "llm", lambda self, settings=None: pytest.fail("PPR without filter made an LLM"))
    engine.retrieve("Where is Paris?", k=2, settings=PPR)


def test_eval_reports_ppr_like_the_other_single_step_methods(engine: Engine) -> None:
    questions = [Question("2hop__1", "Which sea is the island of Mount Etna in?", ("Mediterranean Sea",),
                          (("Mount Etna", None), ("Sicily", None))),
                 Question("2hop__2", "Which river flows through the capital of France?", ("Seine",),
                          (("Paris", None), ("Seine", None)))]
    report = evaluate(engine, questions, PPR, ks=(1, 2, 4))
    data = report.to_dict()
    assert data["method"] == "ppr" and data["n_questions"] == 2 and set(data["recall"]) == {"1", "2", "4"}
    assert data["settings"]["ppr_damping"] == 0.5 and data["settings"]["ppr_synonym_threshold"] == 0.8
    assert "tokens_per_question" not in data  # no LLM
    assert "PPR" in data["latency_ms"] and data["protocol"] == "one-run"  # one run per question, at k = 4
    paper = evaluate(engine, questions, PPR, ks=(1, 2, 4), protocol="paper").to_dict()
    assert {"PPR (k=1)", "PPR (k=4)"} <= set(paper["latency_ms"])  # the paper's: one run per cut-off


def test_cli_retrieve_with_expand_ppr(tiny_index: Path, make_encoder, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    from gear.cli import app

    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name))
    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["retrieve", str(tiny_index), "Where is Mount Etna?", "--expand", "ppr",
                                      "-r", "dense", "-k", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["method"] == "ppr" and len(data["passages"]) == 3 and "PPR" in data["timings_ms"]
