"""Saved evaluations named as a person reads them: index · method · when, from the file name the
Evaluate page gives a report; EM and F1 missing for a reason that is said; counts with their plurals."""

from __future__ import annotations

from studio.core.report_names import answer_cells, counted, report_title, report_titles, slug
from studio.core.sidebar import PRESETS


def test_a_saved_report_reads_index_method_and_date() -> None:
    labels = list(PRESETS)
    assert slug("GeAR (hybrid)") == "gear-hybrid" and slug("Hybrid + NaiveGE") == "hybrid-naivege"
    assert report_title("20261128-073629-09974e_books_hybrid-naivege", labels) == \
        "books · Hybrid + NaiveGE · 2026-11-28 07:36"
    # an index name with underscores, a method the app does not offer, a file named by hand
    assert report_title("20261128-073629-09974e_my_books_custom", labels) == "my_books · custom · 2026-11-28 07:36"
    assert report_title("dev50_every2_n20_gear", labels) == "dev50_every2_n20_gear"


def test_two_reports_that_would_read_the_same_are_told_apart() -> None:
    stems = ["20261128-073629-09974e_books_bm25", "20261128-073655-a1b2c3_books_bm25",
             "20261128-080000-ffffff_books_bm25"]
    titles = report_titles(stems, list(PRESETS))
    assert list(titles.values()) == ["books · BM25 · 2026-11-28 07:36", "books · BM25 · 2026-11-28 07:36 (2)",
                                     "books · BM25 · 2026-11-28 08:00"]


def test_em_and_f1_are_missing_for_a_reason() -> None:
    assert answer_cells({"method": "gear", "em": 46.04, "f1": 51.56}) == ("46.0", "51.6", "")
    assert answer_cells({"method": "none", "retriever": "bm25"}) == ("—", "—", "retrieval only: no answer to score")
    assert answer_cells({"method": "sync"}) == ("—", "—", "answering was off")


def test_counts_have_their_plurals() -> None:
    assert [counted(n, "question") for n in (0, 1, 2, 1200)] == ["0 questions", "1 question", "2 questions",
                                                                 "1,200 questions"]
    assert counted(1, "passage", "passages") == "1 passage"
