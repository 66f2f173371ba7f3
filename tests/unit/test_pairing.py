"""Two evaluations lined up question by question (gear.eval.pairing): questions missing from one side, other
QA sets refused, another cut-off than the diagnosis's, a run cut short, the paired numbers, the filters, what differs
between two indexes; and the docs' hand counts reproduced from the bundled reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from gear.diagnosis import FOUND, RUN_LEVEL, Diagnosis, GoldPassage, StageMark, stage_label
from gear.eval.paired import paired_measure
from gear.eval.pairing import (
    ANSWERS,
    BOTH_MISS,
    BREAKS,
    FIXES,
    FOUND_END,
    OPEN_END,
    UNKNOWN_END,
    PairingError,
    ending,
    pair_reports,
    trace_path,
)
from gear.eval.report import index_info
from gear.viz.pairing import band_choices, end_words, flow_figure

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "docs" / "evals"
STAGES = ["base", "initial", "beam", "expanded", "fused", "final", FOUND]


def passage(pid: int, title: str, base: bool, beam: bool, rank: int | None, k: int = 2) -> GoldPassage:
    """A NaiveGE-like gold passage: in the base list or not, held by a kept beam or not, its final rank."""
    marks = [StageMark("base", 1, base, 3 if base else None), StageMark("initial", 1, base),
             StageMark("beam", 1, beam, hop=1 if beam else None), StageMark("expanded", 1, beam or base),
             StageMark("fused", 1, rank is not None, rank)]
    if rank is not None or base or beam:
        marks += [StageMark("final", RUN_LEVEL, rank is not None, rank),
                  StageMark(FOUND, RUN_LEVEL, rank is not None and rank <= k, rank)]
    return GoldPassage(pid, title, marks)


def diagnosis(qid: str, passages: list[GoldPassage], category: str | None, k: int = 2,
              complete: bool = True) -> dict[str, Any]:
    for p in passages:
        found = p.best(FOUND)
        if found is not None and found.reached:
            p.status = "found"
        else:
            p.status = "lost" if complete else "open"
            ran = [s for s in STAGES if any(m.stage == s for m in p.marks)]
            p.lost_at = next((s for s in ran if not p.reached(s)), None)
    return Diagnosis(qid, f"question {qid}?", "naive", "naive", "NaiveGE", "2hop", k, STAGES, [1], complete,
                     passages, None, category).to_dict()


def entry(qid: str, recall: dict[str, float], diag: dict[str, Any] | None = None, n_gold: int = 2,
          em: float | None = None, hop: str = "2hop", **extra: Any) -> dict[str, Any]:
    row = {"id": qid, "question": f"question {qid}?", "hop": hop, "n_gold": n_gold, "recall": recall,
           "answer": None if em is None else ("right" if em else "wrong"), "em": em, "f1": em,
           "prompt_tokens": 100, "completion_tokens": 10, "seconds": 1.5, "iterations": 1, "diagnosis": diag}
    row.update(extra)
    return row


def report(rows: list[dict[str, Any]], method: str = "naive", ks: tuple[int, ...] = (2, 5), **extra: Any) -> dict:
    data = {"method": method, "retriever": "hybrid", "n_questions": len(rows),
            "recall": {str(k): 0.0 for k in ks}, "settings": {"expand": method, "retriever": "hybrid"},
            "per_question": rows}
    data.update(extra)
    return data


def two() -> tuple[dict, dict]:
    """q1: A finds P only past 2 (rank 4), B at rank 1 and 2; q2: both lose Q2 at base; q3 only in A."""
    a = report([
        entry("q1", {"2": 0.5, "5": 1.0}, diagnosis("q1", [passage(1, "P", True, True, 1),
                                                           passage(2, "Q", False, True, 4)], "base_retriever")),
        entry("q2", {"2": 0.5, "5": 0.5}, diagnosis("q2", [passage(3, "R", True, False, 2),
                                                           passage(4, "S", False, False, None)], "base_retriever")),
        entry("q3", {"2": 1.0, "5": 1.0}),
    ], protocol="one-run")
    b = report([
        entry("q1", {"2": 1.0, "5": 1.0}, diagnosis("q1", [passage(11, "P", True, True, 1),
                                                           passage(12, "Q", True, True, 2)], "none")),
        entry("q2", {"2": 0.0, "5": 0.5}, diagnosis("q2", [passage(13, "R", True, False, 3),
                                                           passage(14, "S", False, False, None)], "graph")),
        entry("q4", {"2": 1.0, "5": 1.0}),
    ], method="sync", protocol="one-run")
    return a, b


def test_questions_only_one_report_holds_are_left_out_and_listed() -> None:
    a, b = two()
    p = pair_reports(a, b, 2)
    assert [q.id for q in p.questions] == ["q1", "q2"]
    assert p.only_a == ["q3"] and p.only_b == ["q4"]
    r = p.measures[0]
    assert (r.name, r.n, r.better, r.worse, r.tied) == ("R@2", 2, 1, 1, 0)
    assert r.mean_a == pytest.approx(50.0) and r.mean_b == pytest.approx(50.0)


def test_passages_are_matched_by_title_across_indexes_that_number_them_apart() -> None:
    p = pair_reports(*two(), k=2)
    q1 = p.question("q1")
    assert [(x.title, x.id_a, x.id_b) for x in q1.passages] == [("P", 1, 11), ("Q", 2, 12)]
    assert q1.gained == ["Q"] and q1.lost == []
    assert q1.kind() == {FIXES}
    q2 = p.question("q2")
    assert q2.lost == ["R"] and q2.kind() == {BREAKS, BOTH_MISS}
    assert [(x.end_a, x.end_b) for x in q2.passages] == [(FOUND_END, "beam"), ("base", "base")]


def test_other_qa_sets_are_refused_with_the_reason() -> None:
    a, b = two()
    other = report([entry("x1", {"2": 1.0, "5": 1.0})])
    with pytest.raises(PairingError, match="question ids differ"):
        pair_reports(a, other)
    b["per_question"][0]["question"] = "something else?"
    with pytest.raises(PairingError, match="ask other questions"):
        pair_reports(a, b)
    with pytest.raises(PairingError, match="not an evaluation report"):
        pair_reports(a, {"recall": {}})


def test_another_k_than_the_diagnosis_reads_the_final_rank() -> None:
    a, b = two()
    p2, p5 = pair_reports(a, b, 2), pair_reports(a, b, 5)
    q = p2.question("q1").passages[1]
    assert (q.end_a, q.rank_a) == ("base", 4)  # rank 4 (the beam brought it): past 2, lost at base ...
    assert p5.question("q1").passages[1].end_a == FOUND_END  # ... within 5
    assert p5.question("q2").passages[0].end_b == FOUND_END  # rank 3
    assert "proposed categories: the diagnosis at k = 2" in " ".join(p5.a.sources)
    with pytest.raises(PairingError, match="both have k = 2, 5"):
        pair_reports(a, b, 10)
    assert pair_reports(a, b).k == 5  # the default: 5 when both have it
    assert pair_reports(report(a["per_question"], ks=(2, 10)), report(b["per_question"], ks=(2, 10))).k == 2


def test_a_run_cut_short_leaves_its_passages_open() -> None:
    a, b = two()
    cut = diagnosis("q2", [passage(13, "R", True, False, None), passage(14, "S", False, False, None)], None,
                    complete=False)
    b["per_question"][1]["diagnosis"] = cut
    p = pair_reports(a, b, 2)
    q2 = p.question("q2")
    assert [x.end_b for x in q2.passages] == [OPEN_END, OPEN_END]
    assert q2.category_b is None
    bands = {(band.source, band.target): band.count for band in p.passage_flow}
    assert bands[(FOUND_END, OPEN_END)] == 1 and bands[("base", OPEN_END)] == 1
    assert end_words(OPEN_END) == "run cut short"


def test_reports_without_a_diagnosis_are_paired_on_their_recall() -> None:
    a, b = two()
    for row in (*a["per_question"], *b["per_question"]):
        row["diagnosis"] = None
    p = pair_reports(a, b, 2)
    assert all(x.end_a == UNKNOWN_END for q in p.questions for x in q.passages) or not p.questions[0].passages
    assert p.question("q1").kind() == {FIXES} and p.question("q2").kind() == {BREAKS, BOTH_MISS}
    assert p.passage_flow == [] and "stages: none" in " ".join(p.a.sources)


def test_a_per_cutoff_report_says_which_run_each_figure_comes_from() -> None:
    """Without "protocol" a report is the paper's: a single-step method's R@k is its run at k, its stages the run it
    kept; where they disagree the question says so and is judged on its R@k."""
    a, b = two()
    del a["protocol"]
    a["per_question"][0]["recall"]["2"] = 1.0  # its run at k = 2 found both; the kept run's top 2 held one
    p = pair_reports(a, b, 2)
    assert p.a.protocol == "paper" and "its run at k = 2" in p.a.sources[0]
    assert "the one it kept" in p.a.sources[1]
    q1 = p.question("q1")
    assert q1.notes and "the kept run's top 2 held 1" in q1.notes[0]
    assert q1.kind() == set()  # R@2 1.0 against 1.0: neither fixes nor breaks
    assert p.notes and "1 question(s)" in p.notes[0]


def test_paired_numbers_sign_test_and_a_bootstrap_that_repeats() -> None:
    a = [0.5, 0.5, 1.0, 0.0, 1.0, 0.5, 0.5, 0.0, 1.0, 0.5]
    b = [1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 0.5, 1.0, 1.0, 1.0]
    m = paired_measure("R@5", a, b)
    assert (m.better, m.worse, m.tied) == (6, 1, 3)
    assert m.p_sign == pytest.approx(stats.binomtest(6, 7, 0.5).pvalue)
    assert m.difference == pytest.approx(30.0)
    assert m.low is not None and m.high is not None and m.low < m.difference < m.high
    again = paired_measure("R@5", a, b)
    assert (again.low, again.high) == (m.low, m.high)
    assert m.sentence().startswith("+30.0 at R@5 (55.0 → 85.0): 6 questions better, 1 worse, 3 the same; sign test "
                                   "p = 0.12; 95 % interval")
    same = paired_measure("EM", [1, 0, 1], [1, 0, 1])
    assert (same.p_sign, same.low, same.high) == (None, None, None)
    assert "no question differs" in same.sentence()


def test_em_and_f1_over_the_questions_both_answered() -> None:
    a, b = two()
    a["per_question"][0]["em"], b["per_question"][0]["em"] = 0.0, 1.0
    a["per_question"][0]["f1"], b["per_question"][0]["f1"] = 0.0, 1.0
    p = pair_reports(a, b, 2)
    names = [m.name for m in p.measures]
    assert names == ["R@2", "EM", "F1"] and p.measures[1].n == 1 and p.measures[1].better == 1
    assert p.question("q1").kind(ANSWERS) == {FIXES}
    assert p.counts(ANSWERS)[FIXES] == 1


def test_filters_by_kind_stage_hop_and_category() -> None:
    a, b = two()
    b["per_question"][1]["hop"] = a["per_question"][1]["hop"] = "3hop1"
    p = pair_reports(a, b, 2)
    assert [q.id for q in p.select([FIXES])] == ["q1"]
    assert [q.id for q in p.select([BREAKS])] == ["q2"]
    assert [q.id for q in p.select(stages=["beam"])] == ["q2"]
    assert [q.id for q in p.select(stages=["base"])] == ["q1", "q2"]
    assert [q.id for q in p.select(hops=["3hop1"])] == ["q2"]
    assert [q.id for q in p.select(categories=["graph"])] == ["q2"]
    assert [q.id for q in p.select(categories=["none"])] == ["q1"]
    assert p.hops() == ["2hop", "3hop1"] and "base" in p.stages()


def test_flows_hold_their_questions_and_draw_as_a_sankey() -> None:
    p = pair_reports(*two(), k=2)
    bands = {(b.source, b.target): b for b in p.passage_flow}
    assert bands[("base", FOUND_END)].questions == ["q1"]
    assert sum(b.count for b in p.passage_flow) == 4
    cats = {(b.source, b.target): b.questions for b in p.category_flow}
    assert cats == {("base_retriever", "none"): ["q1"], ("base_retriever", "graph"): ["q2"]}
    fig = flow_figure(p.passage_flow, ("A <b>", "B"))
    sankey = fig.data[0]
    assert sankey.type == "sankey" and sum(sankey.link.value) == 4
    assert all("<b>" not in label for label in sankey.node.label)  # names are escaped
    choices = band_choices(p.passage_flow, "gold passage")
    first = next(iter(choices))
    assert first.split(":")[0] in ("found → lost at beam", "lost at base → found")  # changed bands first


def test_two_indexes_of_the_same_passages_are_said_apart() -> None:
    class Manifest:
        backend, embedder, n_passages, source = "memory", "all-MiniLM-L6-v2", 949, {}

        def __init__(self, triples: int, triple_sum: str, openie: str) -> None:
            self.n_triples = triples
            self.source = {"openie": openie}
            self.files = {"passage_texts.utf8.npy": {"sha256": "p"}, "passage_titles.utf8.npy": {"sha256": "t"},
                          "triple_subjects.utf8.npy": {"sha256": triple_sum}}

    a, b = two()
    a["index_info"] = index_info(Manifest(7191, "x", "local.json"), "musique949_local")
    b["index_info"] = index_info(Manifest(8483, "y", "gpt.json"), "musique949_gpt")
    said = " ".join(pair_reports(a, b, 2).differences)
    assert "musique949_local → musique949_gpt" in said and "the same 949 passages" in said
    assert "other triples (7191 → 8483, from local.json → gpt.json)" in said
    b["index_info"] = dict(a["index_info"])
    assert "index: the same (musique949_local" in " ".join(pair_reports(a, b, 2).differences)
    del b["index_info"]
    assert "B does not record its index" in " ".join(pair_reports(a, b, 2).differences)


def test_settings_that_neither_method_reads_are_not_said() -> None:
    """IRCoT against GeAR: IRCoT's report carries max_iterations 4 and GeAR's ircot_max_steps 4, neither read by
    the other method; the app listed them as differences beside the one that matters."""
    a, b = two()
    a["settings"] = {"method": "ircot", "max_iterations": 4, "ircot_max_steps": 2, "ircot_retriever": "ppr"}
    b["settings"] = {"method": "gear", "max_iterations": 2, "ircot_max_steps": 4, "ircot_retriever": "base"}
    said = " ".join(pair_reports(a, b, 2).differences)
    assert "method 'ircot' → 'gear'" in said and "max_iterations 2 (B's method alone reads it)" in said
    assert "ircot_max_steps 2 (A's method alone reads it)" in said and "4 →" not in said and "→ 4" not in said
    a["settings"] = {"method": "gear", "max_iterations": 2, "ircot_max_steps": 2, "ircot_retriever": "ppr"}
    said = " ".join(pair_reports(a, b, 2).differences)
    assert "ircot" not in said  # two GeAR runs: the IRCoT settings they carry changed nothing


def test_an_index_built_again_from_the_same_triples_is_not_said_to_have_other_triples() -> None:
    """The 2Wiki demo index, built again in another session from the same OpenIE file, embedded its triples to vectors
    that were not bit for bit the same; the app said "other triples (8917 → 8917)"."""
    class Manifest:
        backend, embedder, n_passages, n_triples = "memory", "all-MiniLM-L6-v2", 1294, 8917

        def __init__(self, subjects: str, vectors: str) -> None:
            self.source = {"openie": "openie_2wiki.json"}
            self.files = {"passage_texts.utf8.npy": {"sha256": "p"}, "passage_vectors.npy": {"sha256": vectors},
                          "triple_subjects.utf8.npy": {"sha256": subjects}, "triple_vectors.npy": {"sha256": vectors}}

    a, b = two()
    a["index_info"] = index_info(Manifest("s", "v1"), "2wiki")
    b["index_info"] = index_info(Manifest("s", "v2"), "2wiki")
    assert a["index_info"]["passages_sha256"] == b["index_info"]["passages_sha256"]  # passage vectors never counted
    said = " ".join(pair_reports(a, b, 2).differences)
    assert "the same 8917 triples, embedded again (their vectors differ)" in said and "other triples" not in said
    b["index_info"] = index_info(Manifest("other", "v2"), "2wiki")  # the same count, other text: other triples
    assert "other triples (8917 → 8917)" in " ".join(pair_reports(a, b, 2).differences)
    for info in (a["index_info"], b["index_info"]):  # reports saved before the triples' text had its own checksum
        del info["triple_texts_sha256"]
    said = " ".join(pair_reports(a, b, 2).differences)
    assert "8917 triples from the same file, in an index built again" in said and "other triples" not in said


# -- the bundled reports -----------------------------------------------------------------------------------------------
def bundled(name: str) -> dict[str, Any]:
    return json.loads((EVALS / f"{name}.json").read_text(encoding="utf-8"))


def counts(a: str, b: str, k: int = 5, measure: int = 0) -> tuple[int, int]:
    m = pair_reports(bundled(a), bundled(b), k).measures[measure]
    return m.better, m.worse


def test_the_docs_hand_counts_are_the_tools() -> None:
    """docs/results.md's counts question by question, as `gear compare` finds them."""
    # "more than NaiveGE on 12 / 14 / 12 and less on 7 / 5 / 5" (SyncGE, BM25 / dense / hybrid, R@5)
    assert counts("hotpotqa_bm25_naive", "hotpotqa_every1_n100_bm25_sync") == (12, 7)
    assert counts("hotpotqa_dense_naive", "hotpotqa_every1_n100_dense_sync") == (14, 5)
    assert counts("hotpotqa_hybrid_naive", "hotpotqa_every1_n100_sync") == (12, 5)
    # "more gold than its base on 22 / 18 / 16 questions and less on 2 / 1 / 2"
    assert counts("hotpotqa_bm25", "hotpotqa_every1_n100_bm25_sync") == (22, 2)
    assert counts("hotpotqa_dense", "hotpotqa_every1_n100_dense_sync") == (18, 1)
    assert counts("hotpotqa_hybrid", "hotpotqa_every1_n100_sync") == (16, 2)
    # "GeAR's EM is higher on 17 and lower on 5; its R@5 higher on 24 and lower on 9"
    assert counts("hotpotqa_every1_n100_ircot_ppr", "hotpotqa_every1_n100_gear_paper") == (24, 9)
    assert counts("hotpotqa_every1_n100_ircot_ppr", "hotpotqa_every1_n100_gear_paper", measure=1) == (17, 5)
    # "at R@5, 7 / 8 / 7 questions gain with the local triples and 6 / 2 / 8 lose"
    assert counts("musique949_gpt_bm25_naive", "musique949_local_bm25_naive") == (7, 6)
    assert counts("musique949_gpt_dense_naive", "musique949_local_dense_naive") == (8, 2)
    assert counts("musique949_gpt_hybrid_naive", "musique949_local_hybrid_naive") == (7, 8)
    # diversity in SyncGE: "at R@5 ... more gold on 2 questions and less on none; at R@10 and R@15 not one"
    assert counts("hotpotqa_every1_n100_sync_nodiv", "hotpotqa_every1_n100_sync") == (2, 0)
    assert counts("hotpotqa_every1_n100_sync_nodiv", "hotpotqa_every1_n100_sync", 10) == (0, 0)


def test_the_20_question_reports_say_where_each_gold_passage_went() -> None:
    """docs/diagnosis.md's MuSiQue 20 rows: the bundled reports carry their diagnoses and traces now
    (scripts/keep_subset_traces.py), so the flow of gold passages is known, not "unknown"."""
    def flow(a: str, b: str) -> dict[tuple[str, str], int]:
        p = pair_reports(bundled(f"dev50_every2_n20_{a}"), bundled(f"dev50_every2_n20_{b}"), 5)
        return {(band.source, band.target): band.count for band in p.passage_flow}

    assert flow("naive", "gear_paper") == {("found", "found"): 29, ("found", "read"): 2, ("base", "found"): 1,
                                           ("base", "base"): 6, ("beam", "found"): 2, ("beam", "read"): 3}
    assert flow("ppr", "ircot_ppr") == {("found", "found"): 32, ("base", "retrieval"): 4, ("base", "final@5"): 1,
                                        ("seed", "final@5"): 6}
    assert flow("ircot_ppr", "gear_paper") == {
        ("found", "found"): 28, ("found", "read"): 2, ("found", "base"): 2, ("retrieval", "found"): 1,
        ("retrieval", "base"): 3, ("final@5", "found"): 3, ("final@5", "read"): 3, ("final@5", "base"): 1}
    for name in ("naive", "ppr", "gear_paper", "gear_small", "ircot_ppr", "ircot_base"):  # each question's run kept
        report = EVALS / f"dev50_every2_n20_{name}.json"
        assert all(trace_path(report, row) is not None for row in bundled(report.stem)["per_question"]), name


def test_the_ending_at_the_diagnosis_k_is_its_lost_at() -> None:
    """Recomputed from the marks, where a passage ended at the diagnosis's own k is the diagnosis's verdict."""
    checked = 0
    for path in sorted(EVALS.glob("*.json")):
        for row in json.loads(path.read_text(encoding="utf-8"))["per_question"]:
            if not row.get("diagnosis"):
                continue
            d = Diagnosis.from_dict(row["diagnosis"])
            for p in d.passages:
                end, _ = ending(p, d.stages, d.complete, d.k)
                expected = FOUND_END if p.status == "found" else OPEN_END if p.status == "open" else \
                    stage_label(p.lost_at or FOUND, d.k)
                assert end == expected, (path.name, row["id"], p.title)
                checked += 1
    assert checked > 1000
