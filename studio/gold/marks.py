"""Mark the right passages of a run: under an Ask result — a live run, a replay, a run opened from the Traces
page — the person searches the index or picks among the passages the run showed, marks the gold ones, may type the
right answer, and the diagnosis below follows those passages through the run at once (gear.diagnosis.gold_marks: a pure
function of the trace and the marks, no LLM asked). Passages that may hold the answer are suggested, never marked on
their own; "Save as a test question" keeps the question, its gold passages and the answer in the index's own QA set
(gear.data.qa_set), where Ask's examples, Evaluate and `gear eval INDEX` find it.

The marks live in the session, per run; everything a passage holds is escaped before it becomes markdown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from gear.data.qa_set import GoldRef, QASetError, load_own_qa, new_question, qa_path, question_key, save_question
from gear.diagnosis.gold_marks import MarkError, Suggestion, run_passages, search, suggest
from gear.events import FinalRanking, RunStarted
from gear.trace import PassageView, Trace
from studio.core.keys import MARKS
from studio.core.resources import engine_for, same_index
from studio.core.run_gold import ALIASES, Marks, run_key
from studio.core.safe import esc_md, one_line

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.store.base import SearchBackend

SEARCH_METHODS = {"BM25 + dense": "hybrid", "BM25": "bm25", "dense": "dense"}


@dataclass(frozen=True)
class MarkedRun:
    """What the diagnosis below the panel takes: the gold ids, the answers (None: the run's own), and the (title,
    text) of marked passages the run never showed."""

    ids: list[int]
    answers: list[str] | None
    passages: dict[int, tuple[str, str]]


def index_backend(trace: Trace, index: Path | None) -> tuple[SearchBackend | None, str]:
    """The backend of the selected index when the run was made on it, else None and why (one line)."""
    if index is None or not (index / "manifest.json").is_file():
        return None, "No index is selected (or it is not built yet): pick among the passages the run showed."
    try:
        backend = engine_for(index).backend
    except Exception as exc:
        return None, f"The index {index.name} cannot be opened now ({one_line(exc)})."
    if not same_index(trace, backend):
        return None, (f"This run was not made on {index.name} (its passages differ there): choose the index it ran on "
                      "in the sidebar to search it and save the question; meanwhile pick among the run's passages.")
    return backend, ""


def marks_for(trace: Trace, index: Path | None, backend: SearchBackend | None) -> Marks:
    """The session's marks on this run; at first the run's own gold passages, or — for a question asked freely —
    those of the same question in the index's own QA set."""
    store: dict[str, Marks] = st.session_state.setdefault(MARKS, {})
    key = run_key(trace)
    if key not in store:
        start = trace.first(RunStarted)
        ids = list(dict.fromkeys(start.gold_passage_ids)) if start else []
        answer = f" {ALIASES} ".join(start.answers) if start else ""
        if not ids and backend is not None and index is not None and start is not None:
            saved = own_question(index, start.question)
            if saved is not None:
                ids = [i for i in (backend.find_passage(g.title, g.text) for g in saved.gold) if i is not None]
                answer = f" {ALIASES} ".join(saved.answers)
        store[key] = Marks(ids, answer)
    return store[key]


def own_question(index: Path, question: str) -> Any | None:
    try:
        return next((q for q in load_own_qa(index) if question_key(q.question) == question_key(question)), None)
    except (QASetError, ValueError, OSError):
        return None


# -- the panel -----------------------------------------------------------------------------------------------------
def mark_panel(trace: Trace, index: Path | None, key: str) -> MarkedRun | None:
    """The "Mark the right passages" panel; returns the marks for the diagnosis (None: nothing marked, no gold)."""
    start = trace.first(RunStarted)
    if start is None:
        st.caption("This trace has no start event: its passages cannot be marked.")
        return None
    backend, why = index_backend(trace, index)
    marks = marks_for(trace, index, backend)
    key = f"{key}_{run_key(trace)}"  # a widget's state belongs to one run: another run starts afresh
    shown = {v.id: v for v in run_passages(trace)}
    final = trace.first(FinalRanking)
    ranks = {p.id: n for n, p in enumerate(final.passages, 1)} if final else {}
    st.markdown("**Mark the right passages**")
    st.caption("Which passages hold the answer? Mark them as gold — the diagnosis below follows them through this run "
               "at once, without asking the LLM again. Search the index or pick among the passages the run showed; "
               "type the right answer for suggestions.")
    texts = _texts(marks.ids, shown, backend)
    _marked_row(marks, texts, ranks, key)
    left, right = st.columns([3, 2])
    with left:
        search_tab, run_tab = st.tabs(["Search the index", f"This run's passages ({len(shown)})"])
        with search_tab:
            if backend is None:
                st.caption(esc_md(why))
            else:
                _search(backend, trace.question, marks, ranks, key)
        with run_tab, st.container(height=380):
            for view in shown.values():
                _checkbox(marks, view.id, view.title, view.text, ranks, f"{key}_run")
    with right:
        st.text_input(f"Right answer (optional; aliases after {ALIASES})", key=f"{key}_answer",
                      value=marks.answer, on_change=_set_answer, args=(marks, f"{key}_answer"),
                      placeholder="e.g. chlorambucil | Leukeran")
        _suggestions(trace, backend, marks, ranks, key)
        _save(trace, index, backend, marks, texts, key, why)
    if not marks.ids and not marks.answers:
        return None
    answers = marks.answers if marks.touched or marks.answers else None
    return MarkedRun(list(marks.ids), answers, {i: t for i, t in texts.items() if i not in shown})


def _texts(ids: list[int], shown: dict[int, PassageView], backend: SearchBackend | None) -> dict[int, tuple[str, str]]:
    texts = {i: (shown[i].title, shown[i].text) for i in ids if i in shown}
    missing = [i for i in ids if i not in texts]
    if missing and backend is not None:
        texts.update({p.id: (p.title, p.text) for p in backend.passages(missing)})
    return texts


def _where(pid: int, ranks: dict[int, int], shown: bool = True) -> str:
    if pid in ranks:
        return f"final rank {ranks[pid]}"
    return "in the run's lists, not the final ranking" if shown else "in no list of this run"


def _marked_row(marks: Marks, texts: dict[int, tuple[str, str]], ranks: dict[int, int], key: str) -> None:
    if not marks.ids:
        st.caption("Gold: none marked yet.")
        return
    st.caption(f"Gold ({len(marks.ids)} marked) — click one to unmark it:")
    columns = st.columns(min(4, len(marks.ids)))
    for n, pid in enumerate(marks.ids):
        title = texts.get(pid, (f"passage #{pid}", ""))[0]
        columns[n % len(columns)].button(f"{esc_md(title[:40])} · #{pid}", key=f"{key}_unmark_{pid}",
                                         icon=":material/close:", on_click=_unmark, args=(marks, pid),
                                         help=f"#{pid}: {_where(pid, ranks)} — unmark")


def _checkbox(marks: Marks, pid: int, title: str, text: str, ranks: dict[int, int], key: str,
              shown: bool = True) -> None:
    box = f"{key}_{pid}"
    st.session_state[box] = pid in marks.ids  # the marks are the truth: another list may have changed them
    # a plain label (its words are the checkbox's accessible name too), escaped: a title is passage text
    st.checkbox(f"{esc_md(title)} · #{pid} · {_where(pid, ranks, shown)}", key=box, on_change=_toggle,
                args=(marks, pid, box))
    flat = " ".join(text.split())
    st.caption(esc_md(flat[:160] + ("…" if len(flat) > 160 else "")))


def _search(backend: SearchBackend, question: str, marks: Marks, ranks: dict[int, int], key: str) -> None:
    query = st.text_input("Search the index (title and text)", value=question, key=f"{key}_query")
    how = st.radio("by", list(SEARCH_METHODS), key=f"{key}_how", horizontal=True, label_visibility="collapsed")
    try:
        hits = search(backend, query, 10, SEARCH_METHODS[how])  # type: ignore[arg-type]
    except Exception as exc:  # e.g. the embedder failed to load: BM25 may still work
        st.caption(f"Search failed: {esc_md(one_line(exc))}")
        return
    if not hits:
        st.caption("No passage found.")
    with st.container(height=380):
        for p in hits:
            _checkbox(marks, p.id, p.title, p.text, ranks, f"{key}_hit", shown=p.id in ranks)


def _suggestions(trace: Trace, backend: SearchBackend | None, marks: Marks, ranks: dict[int, int], key: str) -> None:
    if not marks.answers:
        st.caption("Type the right answer: the passages that hold it, and those the run drew on, are suggested "
                   "here.")
        return
    if backend is None:
        st.caption("Suggestions search the index this run was made on: select it in the sidebar.")
        return
    try:
        found: list[Suggestion] = suggest(backend, trace.question, marks.answers, trace)
    except Exception as exc:
        st.caption(f"No suggestions: {esc_md(one_line(exc))}")
        return
    open_ones = [s for s in found if s.id not in marks.ids]
    st.caption("Suggestions — passages that may hold the answer (mark them yourself if they do):" if open_ones else
               "No other passage holds that answer.")
    for s in open_ones[:6]:
        left, right = st.columns([4, 1], vertical_alignment="center")
        left.markdown(f"**{esc_md(s.title)}** · #{s.id:d} · {_where(s.id, ranks)}  \n"
                      f"<small>{esc_md('; '.join(s.reasons))}</small>", unsafe_allow_html=True)
        right.button("Mark", key=f"{key}_suggest_{s.id}", on_click=_mark, args=(marks, s.id))


def _save(trace: Trace, index: Path | None, backend: SearchBackend | None, marks: Marks,
          texts: dict[int, tuple[str, str]], key: str, why: str) -> None:
    can = backend is not None and index is not None and bool(marks.ids)
    if st.button("Save as a test question", key=f"{key}_save", icon=":material/bookmark_add:", disabled=not can,
                 on_click=_save_question, args=(trace, index, marks, texts, key),
                 help="Keep the question, its gold passages and the answer in this index's own QA set: Ask lists "
                      "it among the examples, Evaluate and `gear eval INDEX` use it." if can else
                      (why or "Mark at least one gold passage first.")):
        # saved by the callback; the panel is a fragment, which redraws only itself: the whole page is drawn again,
        # so that what counts the index's questions above it (Ask's example list) counts this one
        st.rerun(scope="app")
    said = st.session_state.get(f"{key}_saved")
    if said and said.startswith(NOT_SAVED):
        st.error(esc_md(said))
    elif said:
        st.success(esc_md(said), icon=":material/check:")


NOT_SAVED = "Not saved: "


# -- callbacks (they run before the panel redraws) -----------------------------------------------------------------
def _save_question(trace: Trace, index: Path | None, marks: Marks, texts: dict[int, tuple[str, str]],
                   key: str) -> None:
    """Save before the page draws, so everything above the panel that counts the index's own questions (Ask's
    example list) counts this one at once."""
    if index is None:
        return
    try:
        q = new_question(trace.question, [GoldRef(*texts[i], i) for i in marks.ids if i in texts], marks.answers,
                         source="ask")
        _, created = save_question(index, q)
        n = len(load_own_qa(index))
    except (QASetError, MarkError, OSError) as exc:
        st.session_state[f"{key}_saved"] = NOT_SAVED + one_line(exc)
        return
    st.session_state[f"{key}_saved"] = (f"{'Saved' if created else 'Updated'} as a test question in {index.name}'s "
                                         f"own QA set ({n} question{'s' if n != 1 else ''}, {qa_path(index).name}).")


def _toggle(marks: Marks, pid: int, box: str) -> None:
    (_mark if st.session_state.get(box) else _unmark)(marks, pid)


def _mark(marks: Marks, pid: int) -> None:
    if pid not in marks.ids:
        marks.ids.append(pid)
    marks.touched = True


def _unmark(marks: Marks, pid: int) -> None:
    marks.ids = [i for i in marks.ids if i != pid]
    marks.touched = True


def _set_answer(marks: Marks, box: str) -> None:
    marks.answer = str(st.session_state.get(box, ""))
    marks.touched = True
