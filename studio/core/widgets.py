"""The small drawing helpers every view shares: ranked tables with gold rows highlighted, step headings, and pyvis
pages placed in an iframe. Untrusted text reaches Streamlit only through st.dataframe here (headings take our own
constants and notation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pandas as pd
import streamlit as st

from gear import events as ev
from gear import trace as t
from gear.viz import notation
from studio.core.safe import esc_md

GRAPH_HEIGHT = 560


class View(Protocol):
    """What drawing a step needs of the view it draws into (studio.views.trace.TraceView has all of it)."""

    events: list[ev.Event]  # the run's events so far, this one included
    graph_height: int
    gold_known: bool
    live: bool
    ran_here: bool  # the run was made in this session (its time is "Time"); else a recorded run, loaded
    key: str  # makes the view's chart keys unique on a page


class FreshSlots:
    """Two placeholders at one place in a page, so that a new run starts in an empty container.

    When a container is drawn where a container stood in the previous script run, Streamlit's frontend reuses the old
    one with its children, which stay on the page (faded) below the new ones until the script ends: a live run of a
    second question showed the first run's triples and graph as if they were its own. An element in between resets
    it, so each script run fills one placeholder and empties the other; a new run takes the one emptied last time
    (`fresh`), while a redraw of the same run keeps its place (`same`)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.slots = (st.empty(), st.empty())
        self.current = int(st.session_state.get(key, 0)) % 2

    def fresh(self) -> Any:
        """An empty container for a new run (the previous run's is emptied at once)."""
        self.slots[self.current].empty()
        self.current = 1 - self.current
        st.session_state[self.key] = self.current
        return self.slots[self.current].container()

    def same(self) -> Any:
        """The container of the run shown last time, drawn again in place."""
        self.slots[1 - self.current].empty()
        return self.slots[self.current].container()


#: scrolls the container of a key into view (the page's own document: st.html runs it there, not in an iframe); tried
#: for a second while the frontend draws the container
_INTO_VIEW = """<script>
(() => {{
  let tries = 0;
  const look = () => {{
    const box = document.querySelector('.st-key-{key}');
    if (box) {{ box.scrollIntoView({{behavior: 'instant', block: 'start'}}); return; }}
    if (++tries < 20) setTimeout(look, 50);
  }};
  look();
}})();
</script>"""


def bring_into_view(key: str) -> None:
    """Scroll the page to the container made with `st.container(key=key)` (call inside it): a long job's progress
    that starts below the fold (the Index page's build, under its uploaders) is in view the moment it starts."""
    st.html(_INTO_VIEW.format(key=key), unsafe_allow_javascript=True, width="content")


def iframe(page: str, height: int) -> None:
    if hasattr(st, "iframe"):
        st.iframe(page, height=height)
    else:  # pragma: no cover - older Streamlit
        import streamlit.components.v1 as components

        components.html(page, height=height)


# (a rank column that holds None for "not there" comes to pandas as floats, shown as 1.000000 unless formatted)
FORMATS = {"score": "{:.4f}", "similarity": "{:.3f}", "base rank": "{:.0f}"}


def gold_style(df: pd.DataFrame) -> Any:
    """Gold rows highlighted; scores with a readable number of decimals."""
    style = df.style.format({c: f for c, f in FORMATS.items() if c in df.columns}, na_rep="")
    if "gold" not in df.columns or df.empty:
        return style
    return style.apply(lambda row: ["background-color: #fff3bf; font-weight: 600" if row["gold"] else ""
                                    for _ in row], axis=1)


def column_config() -> dict[str, Any]:
    return {"rank": st.column_config.NumberColumn("#", width="small"),
            "gold": st.column_config.TextColumn("gold", width="small"),
            "title": st.column_config.TextColumn("title", width="medium"),
            "text": st.column_config.TextColumn("text", width="large")}


def table(rows: Sequence[dict[str, Any]], height: int | None = None, hide: Sequence[str] = ("id",)) -> None:
    if not rows:
        st.caption("(none)")
        return
    df = pd.DataFrame(rows)
    df = df.drop(columns=[c for c in hide if c in df.columns])
    if "text" in df.columns:  # the long passage text last: the short columns stay on screen at 1280 px
        df = df[[c for c in df.columns if c != "text"] + ["text"]]
    kwargs: dict[str, Any] = {"hide_index": True, "width": "stretch", "column_config": column_config()}
    if height:
        kwargs["height"] = height
    st.dataframe(gold_style(df), **kwargs)


def triple_rows(triples: Sequence[Sequence[str]], new: set[tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    rows = []
    for tr in triples:
        row = {"subject": tr[0] if len(tr) > 0 else "", "predicate": tr[1] if len(tr) > 1 else "",
               "object": tr[2] if len(tr) > 2 else ""}
        if new is not None:
            row["new"] = "new" if tuple(tr) in new else ""
        rows.append(row)
    return rows


def heading(number: str, name: str, formula: str) -> None:
    st.markdown(f"**{number} · {name}** &nbsp; <span style='color:#1971c2'>{formula}</span>",
                unsafe_allow_html=True)


def step_heading(e: ev.Event, detail: str = "") -> None:
    """The step's number, title and formula (gear.viz.notation) at its iteration, with the run's `detail` after it."""
    text = notation.step_text(e)
    if text is None:
        raise KeyError(f"{type(e).__name__} is not a step with a heading (gear.viz.notation.STEPS)")
    heading(text.number, text.title, notation.view_formula(text, e.iteration, esc_md(detail)))


def answer_origins(trace: t.Trace | None) -> str:
    """Who answered a run's LLM calls: "9 recorded, 4 from the model, 2 from the memo" ("" without calls)."""
    if trace is None:
        return ""
    names = {"record": "recorded", "model": "from the model", "memo": "from the memo (identical call)"}
    counts = trace.llm_sources()
    return ", ".join(f"{counts[key]} {name}" for key, name in names.items() if counts.get(key))
