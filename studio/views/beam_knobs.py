"""The lesson's beam search to play with: on a step of Algorithm 1, knobs for b, l, γ, the diversity penalty and the
neighbour cap search the run's beams again (Engine.replay_beams: from its own initial triples and query, over its
index; no model asked, the recorded run unchanged), and the new beams stand beside the recorded ones with what
changed (gear.viz.beam_knobs, which `gear replay-beams` prints too). The knobs chosen go into the step's address
(`?trace=walkthrough&step=8&diversity=off`), so a teacher can send "look what happens with diversity off".
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from gear import events as ev
from gear import trace as t
from gear import viz
from gear.viz import beam_knobs
from studio.core.links import KNOB_LINK
from studio.core.safe import esc_md, one_line
from studio.core.widgets import iframe
from studio.views.sub_step import MAIN_WIDTH, lesson_table

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.agent.engine import Engine

NOTE = "beam_knobs_note"  # session state: what was wrong with the knobs a link asked for


def _key(name: str, e: ev.BeamsSearched) -> str:
    return f"knob_{name}_{e.iteration}"


def gamma_default(e: ev.BeamsSearched) -> float:
    """The γ box's value when untouched: 0 ("2b": γ follows the width, as in the paper) when the run used 2b."""
    return 0.0 if e.gamma == 2.0 * e.width else float(e.gamma)


def _linked() -> dict[str, Any] | None:
    """The knobs the link just opened names (studio.core.links keeps them raw; a link is untrusted), once; None when no
    link was opened since."""
    raw = st.session_state.pop(KNOB_LINK, None)
    if raw is None:
        return None
    found, problems = beam_knobs.parse_knobs(raw)
    if problems:
        st.session_state[NOTE] = "This link's beam-search settings were not used: " + "; ".join(problems) + "."
    return found


def _start(e: ev.BeamsSearched) -> None:
    """The knob widgets' values: the recorded search's, or a link's when one was just opened."""
    linked = _linked()
    defaults = {"b": e.width, "l": e.length, "gamma": gamma_default(e), "neighbours": e.max_neighbours,
                "diversity": e.diversity}
    for name, value in defaults.items():
        if linked is not None:
            st.session_state[_key(name, e)] = linked.get(name, value)
        else:
            st.session_state.setdefault(_key(name, e), value)


def _reset(e: ev.BeamsSearched) -> None:
    for name in beam_knobs.KNOBS:
        st.session_state.pop(_key(name, e), None)


def chosen(e: ev.BeamsSearched) -> dict[str, Any]:
    """The knobs chosen for this search (γ only when moved off its default), by the names of gear.viz.beam_knobs."""
    knobs: dict[str, Any] = {name: st.session_state.get(_key(name, e)) for name in ("b", "l", "neighbours",
                                                                                      "diversity")}
    knobs = {k: v for k, v in knobs.items() if v is not None}
    gamma = st.session_state.get(_key("gamma", e))
    if gamma is not None and float(gamma) != gamma_default(e):
        knobs["gamma"] = float(gamma)
    return knobs


def address(trace: t.Trace, step_event: ev.Event) -> dict[str, str]:
    """The knobs of the step shown that differ from the run's, for its address ({} on other steps)."""
    if not isinstance(step_event, ev.BeamsSearched) or not step_event.recorded:
        return {}
    return beam_knobs.address_knobs(chosen(step_event), step_event)


_prepared: dict[tuple[str, str, int, tuple[int, ...]], threading.Thread] = {}
_prepared_lock = threading.Lock()


def prepare(engine: Engine, home: Path, trace: t.Trace, e: ev.BeamsSearched) -> None:
    """Search the step's beams once with the run's own knobs in the background, as soon as the step shows: the
    candidate sequences are embedded then (the encoder keeps them), so a student's first knob change answers at once.
    Once per server for a run's iteration on an index."""
    initial = trace.first(ev.InitialNodes, e.iteration)
    key = (str(home), trace.question, e.iteration, tuple(x.id for x in initial.triples) if initial else ())
    with _prepared_lock:
        if key in _prepared:
            return

        def search() -> None:
            with contextlib.suppress(Exception):  # an error is shown when the knobs are moved, if it recurs
                engine.replay_beams(trace, e.iteration)

        _prepared[key] = threading.Thread(target=search, name="gear-knobs-prepare", daemon=True)
        _prepared[key].start()


def _narrow(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A beam table for half the page: the change beside the beam's number (the triples keep the width)."""
    return [{"beam": f"{r['beam']} {r['change']}".strip(),
             **{k: v for k, v in r.items() if k not in ("beam", "change")}} for r in rows]


def panel(trace: t.Trace, e: ev.BeamsSearched, home: Any, engine_of: Any) -> None:
    """The knobs, folded until they differ from the run's; then the search again beside the recorded one. `home`
    is the run's index (None: not known), `engine_of(home)` its engine, or None while the index is still being
    built (its progress is shown then)."""
    _start(e)
    note = st.session_state.pop(NOTE, None)
    if note:
        st.warning(esc_md(note), icon=":material/tune:")
    moved = bool(beam_knobs.address_knobs(chosen(e), e))
    with st.expander("Play with the beam search: b, l, γ, diversity, neighbours", expanded=moved,
                     icon=":material/tune:"):
        _knobs(trace, e, home, engine_of)


def _knobs(trace: t.Trace, e: ev.BeamsSearched, home: Any, engine_of: Any) -> None:
    st.caption("Algorithm 1 again, from this run's own initial triples and query over its index, with other knobs: "
               "no model is asked and the recorded run stays as it is. The address of this step carries the knobs.")
    b, length, gamma, neighbours, diversity = st.columns([1, 1, 1.2, 1.4, 1.2])
    b.number_input("beam width b", 1, beam_knobs.RANGES["b"][1], key=_key("b", e))
    length.number_input("length l", 1, beam_knobs.RANGES["l"][1], key=_key("l", e),
                        help="triples per beam: l − 1 hops")
    gamma.number_input("γ (0 = 2b)", 0.0, float(beam_knobs.RANGES["gamma"][1]), step=1.0, key=_key("gamma", e),
                       help="the diversity penalty's γ: the n-th candidate of a beam is weighted by exp(−min(n, γ)/γ)")
    neighbours.number_input("neighbours ≤", 1, beam_knobs.RANGES["neighbours"][1], key=_key("neighbours", e),
                            help="the most neighbours a beam weighs (the most query-similar)")
    diversity.toggle("diversity", key=_key("diversity", e), help="the diversity penalty on or off")
    knobs = chosen(e)
    if not beam_knobs.address_knobs(knobs, e):
        st.caption("These are the run's own knobs: change one to search again.")
        return
    st.button("Back to the run's knobs", key=f"knobs_reset_{e.iteration}", on_click=_reset, args=(e,),
              icon=":material/undo:")
    if home is None:
        st.info("This run's index is not known here (a run uploaded or saved elsewhere): searching its beams again "
                "needs the index it was made on (`gear replay-beams TRACE --index …` names one).")
        return
    engine = engine_of(home)
    if engine is None:  # a demo index still being built: its progress is on the page
        return
    from gear.agent.beam_replay import BeamReplayError

    started = time.perf_counter()
    try:
        with st.spinner("Searching again…"):
            replay = engine.replay_beams(trace, e.iteration, **beam_knobs.replay_args(knobs))
    except BeamReplayError as exc:
        st.error(esc_md(one_line(exc)))
        return
    seconds = time.perf_counter() - started
    titles = {p.id: p.title for x in [*trace.of(ev.PassagesExpanded),
                                      *(y for y in replay.events if isinstance(y, ev.PassagesExpanded))]
              for p in x.passages}
    lines = beam_knobs.change_lines(e, replay.beams, replay.entered, replay.left, replay.passages_gained,
                                    replay.passages_lost, replay.gold_reached, replay.gold_unreached, titles)
    st.info("  \n".join(esc_md(line) for line in lines), icon=":material/compare_arrows:")
    recorded_col, new_col = st.columns(2)
    with recorded_col:
        st.markdown(f"**Recorded** · {esc_md(beam_knobs.knob_line(e))}")
        lesson_table(_narrow(beam_knobs.beam_rows(e, replay.beams, "left")))
    with new_col:
        st.markdown(f"**Searched again** · {esc_md(beam_knobs.knob_line(replay.beams))}")
        lesson_table(_narrow(beam_knobs.beam_rows(replay.beams, e, "entered")))
    start = trace.first(ev.RunStarted)
    picture = viz.beams_picture(replay.beams, trace.first(ev.InitialNodes, e.iteration),
                                viz.passage_lookup([*trace.events, *replay.events]),
                                gold_known=bool(start and start.gold_passage_ids))
    height = picture.height(MAIN_WIDTH)
    st.caption("The beams searched again:")
    iframe(picture.html(height), height + 60)
    st.caption(f"searched again in {seconds * 1000:.0f} ms (no model asked)")
