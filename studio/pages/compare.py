"""Whether graph expansion helps shows best on one question, method against method: this runs one question with
several methods — the base retrievers, NaiveGE, SyncGE and GeAR, and the peers PPR and IRCoT — and lays the
rankings, recall, where each gold passage entered and what each run cost (LLM calls, tokens, time) side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd
import streamlit as st

from gear import methods, viz
from gear.config import Settings
from gear.events import Answered, FinalRanking, LLMCalled, RunFinished, RunStarted
from gear.trace import Trace
from studio.core.example_marks import NO_LLM, RECORDED, ExampleMarks, chosen_question, example_marks
from studio.core.safe import esc_md, md_cells, one_line
from studio.core.session import remember
from studio.core.sidebar import PRESETS, method_settings
from studio.views.trace import StatusLine

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.agent.engine import Engine
    from gear.data.questions import Question

DEFAULT_METHODS = ["Hybrid", "Hybrid + NaiveGE", "PPR (HippoRAG 2)", "IRCoT (hybrid)", "GeAR (hybrid)"]
QUESTION = "cmp_question"  # session state: the Question box
EXAMPLE = "cmp_example"  # session state: the question list
RESULTS = "cmp_results"  # session state: the last comparison (Comparison's fields, in order)
RUNNING = "cmp_running"  # session state: a comparison of this session is running
CANCELLED = "cmp_cancelled"  # session state: its Cancel button was pressed


def follow_pick(shown: str | None) -> None:
    """Fill an empty Question box with the question the list shows: an index chosen for the first time
    (studio.core.session.follow_index empties the box for it) offers its first question, ready to compare. A question
    typed into the box stays; a question picked from the list replaces it (pick_question). Call before the box is
    drawn."""
    if shown and not str(st.session_state.get(QUESTION) or "").strip():
        st.session_state[QUESTION] = shown


def pick_question(questions: Sequence[str]) -> None:
    """The list's on_change: the question picked goes into the box."""
    picked = chosen_question(str(st.session_state.get(EXAMPLE) or ""), questions)
    if picked:
        st.session_state[QUESTION] = picked


def depth(shown: int) -> int:
    """How deep the single-step methods retrieve here: as on every page (gear.methods.DEPTH), or deeper when more
    passages are shown than that."""
    return max(methods.DEPTH, shown)


def depth_note(shown: int) -> str:
    """What the page says of its depth, under the slider."""
    if depth(shown) == methods.DEPTH:
        return (f"The single-step methods retrieve {methods.DEPTH} passages, as on the Ask page and in evaluations at "
                f"the cut-offs 5, 10, 15, so a question's R@5 here is the same number there; GeAR and IRCoT take "
                "the sidebar's k at each step.")
    return (f"The single-step methods retrieve {shown} passages here, deeper than the {methods.DEPTH} of the Ask "
            "page and of evaluations at the default cut-offs: hybrid's and NaiveGE's top 5 can differ from theirs "
            "(a fused list depends on how deep each list is read).")


def run_methods(engine: Engine, question: str, qa: Question | None, chosen: list[str], base: Settings,
                k: int, results: dict[str, Trace | str] | None = None) -> dict[str, Trace | str]:
    """Each method's trace (or its error, as one line), with a progress bar and a status line naming the method and
    the step in progress (PPR's first-use graph build included); `results` fills as each method ends."""
    gold = engine.gold_ids(qa.gold) if qa is not None else []
    results = {} if results is None else results
    bar = st.progress(0, text=f"0 of {len(chosen)} methods done")
    box = st.empty()
    for n, label in enumerate(chosen, 1):
        settings = method_settings(base, label)
        method = methods.get(settings.method)
        first_build = method.uses_ppr(settings) and not engine.has_ppr_index(settings)
        line = StatusLine(box, prefix=f"{label} ({n} of {len(chosen)}) · ", speed=engine.speed,
                          builds_ppr_graph=first_build)
        trace = Trace()
        trace.subscribe(line)
        try:
            run = engine.retrieve(question, k=k, settings=settings, gold=gold, question_id=getattr(qa, "id", ""),
                                  answers=list(getattr(qa, "answers", ())), trace=trace)
            results[label] = run.trace
            remember(run.trace, f"Compare · {label}")
        except Exception as exc:  # Streamlit's stop on Cancel is a BaseException: it passes through
            results[label] = f"{type(exc).__name__}: {one_line(exc)}"
        box.empty()
        bar.progress(n / len(chosen), text=f"{n} of {len(chosen)} methods done (last: {label})")
    return results


def question_marks(index: Path, questions: tuple[str, ...], base: Settings, chosen: Sequence[str]) -> ExampleMarks:
    """Each question's mark for the comparison chosen, as the Ask page marks its examples: "recorded · instant" when
    every chosen method that asks the LLM replays its run from recordings, else which of them run live and for about
    how long; "no LLM · seconds" when none asks one."""
    asking = [label for label in chosen if methods.get(PRESETS[label][1]).uses_llm(method_settings(base, label))]
    if not asking:
        return ExampleMarks(dict.fromkeys(questions, NO_LLM))
    per = {methods.get(PRESETS[label][1]).label: example_marks(index, questions, method_settings(base, label))
           for label in asking}
    if any(not m.marks for m in per.values()):
        return ExampleMarks({}, problem=next((m.problem for m in per.values() if m.problem), ""))

    def mark(q: str) -> str:
        live = [name + m.marks[q].removeprefix("live") if m.marks[q].startswith("live") else f"{name} not recorded"
                for name, m in per.items() if m.marks[q] != RECORDED]
        return RECORDED if not live else "live: " + ", ".join(live)

    first = next(iter(per.values()))
    return ExampleMarks({q: mark(q) for q in questions}, first.model, speed=first.speed)


def _cancel() -> None:
    st.session_state[CANCELLED] = True


def gold_titles(engine: Engine, qa: Question | None) -> dict[int, str]:
    """Passage id → title of the question's gold passages found in the index (also those no method retrieves)."""
    ids = engine.gold_ids(qa.gold) if qa is not None else []
    return {p.id: p.title for p in engine.backend.passages(ids)}


class Comparison(NamedTuple):
    """One comparison as the session keeps it: the question, the passages shown of each ranking, each method's trace
    (or its error), the gold passages' titles, and the index it ran on."""

    question: str
    shown: int
    results: dict[str, Trace | str]
    titles: dict[int, str]
    made_on: str  # the index's folder


def compare_live(engine: Engine, index: Path, question: str, qa: Question | None, chosen: list[str],
                 base: Settings, shown: int) -> None:
    """Run the comparison with a Cancel button. The session keeps the results as each method ends, so a comparison
    stopped mid-way (settle_stopped) still shows the methods done."""
    results: dict[str, Trace | str] = {}
    st.session_state[RESULTS] = Comparison(question, shown, results, gold_titles(engine, qa), str(index))
    st.session_state[RUNNING] = True
    cancel = st.empty()
    cancel.button("Cancel", key="cmp_cancel", on_click=_cancel,
                  help="Stop the comparison (and leave the model's queue); the methods done stay.")
    run_methods(engine, question, qa, chosen, base, depth(shown), results)
    cancel.empty()
    st.session_state.pop(RUNNING, None)


def settle_stopped() -> str:
    """After a comparison stopped mid-way (Cancel, or another click): a copy of what it finished (its thread may
    still be ending) and what to say about it; "" when none was stopped."""
    cancelled = bool(st.session_state.pop(CANCELLED, False))
    if not st.session_state.pop(RUNNING, False) or RESULTS not in st.session_state:
        return ""
    saved: Comparison = st.session_state[RESULTS]
    st.session_state[RESULTS] = saved._replace(results=dict(saved.results))
    why = "Cancelled" if cancelled else "The comparison was interrupted by another click"
    return f"{why} — the methods finished so far are shown below."


def elsewhere_note(saved: Comparison, index: Path) -> str:
    """What to say in place of a comparison made on another index than the one chosen now ("" when it is this
    one's): its tables would read as this index's."""
    if saved.made_on == str(index):
        return ""
    return (f"Your last comparison ran on the **{esc_md(Path(saved.made_on).name)}** index (“{esc_md(saved.question)}”"
            f"): choose it again in the sidebar to see it, or press Compare to run a question on "
            f"**{esc_md(index.name)}**.")


GOLD_CELL = "background-color: #fff3bf; font-weight: 600"


def cell(value: float | None) -> str:
    """A number as a table cell, "—" where there is none (a table draws a missing number as "None")."""
    return "—" if value is None else f"{value:.0f}"


def show_comparison(question: str, k: int, results: dict[str, Trace | str], titles: dict[int, str]) -> None:
    """Each method's answer, EM and recall first, then the rankings side by side (one row per rank, one column per
    method, gold passages marked and highlighted; a static table, so titles wrap and every method fits a 1280 px
    window), then the rank at which each gold passage entered each method's list."""
    st.markdown(f"**Question:** {esc_md(question)}")
    rankings: dict[str, list] = {}
    rows = []
    gold_answers: list[str] = []
    for label, result in results.items():
        if isinstance(result, str):
            st.error(f"{label}: {esc_md(result)}")
            continue
        final = result.first(FinalRanking)
        start = result.first(RunStarted)
        answered = result.first(Answered)
        rankings[label] = final.passages if final else []
        gold_ids = start.gold_passage_ids if start else []
        gold_answers = gold_answers or (list(start.answers) if start else [])
        row: dict[str, Any] = {"method": label, "answer": answered.answer if answered else "—",
                               "EM": cell(None if answered is None or answered.em is None else answered.em)}
        for kk in methods.CUTOFFS:
            r = viz.recall_at(rankings[label], gold_ids, kk)
            row[f"R@{kk}"] = cell(None if r is None else 100 * r)
        row.update(cost_row(result))
        rows.append(row)
    if gold_answers:
        st.markdown("**Gold answer:** " + esc_md(" / ".join(gold_answers[:4])))
    st.subheader("Answer, recall and cost per method")
    if rows:
        st.caption("The answer is the QA step's over each method's top passages (methods without an LLM give none); "
                   "EM against the gold answers; — where there is none (recall needs the question's gold passages). "
                   "Tokens and LLM s: what each run's answers cost the model when it wrote them, each request once "
                   "(“recorded”: replayed from recordings, as they cost when recorded); time s: the run itself, "
                   "LLM included.")
        table = pd.DataFrame(rows).drop(columns=["prompt tokens", "completion tokens"])
        # pixel widths that fit the columns into a 1280 px window beside the sidebar
        st.dataframe(table, hide_index=True, width="stretch",
                     column_config={"method": st.column_config.TextColumn("method", width=130),
                                    "answer": st.column_config.TextColumn("answer", width=150),
                                    "EM": st.column_config.TextColumn("EM", width=36),
                                    **{f"R@{kk}": st.column_config.TextColumn(f"R@{kk} %", width=54)
                                       for kk in methods.CUTOFFS},
                                    "iterations": st.column_config.NumberColumn("iter.", width=40),
                                    "LLM calls": st.column_config.NumberColumn("calls", width=46),
                                    "LLM tokens": st.column_config.NumberColumn("tokens", width=60),
                                    "LLM s": st.column_config.NumberColumn("LLM s", width=54),
                                    "LLM answers": st.column_config.TextColumn("answers", width=76),
                                    "time (s)": st.column_config.NumberColumn("time s", width=56)})
    if rankings:
        st.subheader(f"Top {k} passages side by side (★ gold)")
        grid = pd.DataFrame(viz.side_by_side(rankings, k)).rename(columns={"rank": "#"})
        st.table(md_cells(grid).style.hide(axis="index").map(
            lambda v: GOLD_CELL if isinstance(v, str) and v.startswith(viz.GOLD_MARK) else ""))
    if titles:
        st.subheader("Where each gold passage entered (rank per method; — = not retrieved)")
        entered = [{key: "—" if value is None else value for key, value in row.items()}
                   for row in viz.gold_entry(rankings, titles)]
        st.dataframe(pd.DataFrame(entered).astype(str), hide_index=True, width="stretch")
    else:
        st.caption("Gold passages unknown for this question (free text), so recall is not shown.")


def cost_row(trace: Trace) -> dict[str, Any]:
    """Iterations, LLM calls, what its answers cost the model when it wrote them (tokens and seconds, Trace.cost:
    "recorded" for answers replayed from recordings), and the run's own time (RunFinished) of one run."""
    cost = trace.cost()
    finish = trace.first(RunFinished)
    return {"iterations": len(trace.iterations()), "LLM calls": len(trace.of(LLMCalled)),
            "prompt tokens": cost.prompt_tokens, "completion tokens": cost.completion_tokens,
            "LLM tokens": cost.tokens, "LLM s": round(cost.model_seconds, 1), "LLM answers": cost.origin() or "—",
            "time (s)": round(finish.total_ms / 1000, 2) if finish else None}
