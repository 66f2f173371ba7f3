"""A lesson's tables as HTML: one table drawn the same in teaching mode (the app places it with st.html) and on the
handout's page, so that "the row the penalty dropped" is marked alike on screen and on paper.

A table is a list of rows (dicts); a row's MARK key, if any, names how it is highlighted ("out": the diversity
penalty dropped it, "in": the penalty kept it) and is not a column. Scores read with two decimals (small ones, such
as an RRF score, with two significant digits); text cells wrap, so no column leaves the screen at 1280 px. Every cell
is escaped here (gear.viz.graph.esc_html): titles and triples are untrusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from gear.viz.graph import esc_html

MARK = "_mark"  # a row's highlight: "out" (dropped by the penalty), "in" (kept thanks to it)
NUM = " class='num'"
SHORT = 12  # characters: a column whose every cell is this short never wraps (the long ones take the room)
MARK_NAMES = {"out": "dropped by the penalty", "in": "kept thanks to the penalty"}

TABLE_CSS = """
.lesson-wrap { overflow-x: auto; max-width: 100%; }
table.lesson-table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 16px; line-height: 1.3;
                     font-family: 'Liberation Sans', Arial, sans-serif; color: #212529; }
table.lesson-table th, table.lesson-table td { border: 1px solid #dee2e6; padding: 3px 7px; text-align: left;
                                               vertical-align: top; overflow-wrap: anywhere; }
table.lesson-table th { background: #f1f3f5; font-weight: 600; overflow-wrap: normal; }
table.lesson-table td.short { white-space: nowrap; overflow-wrap: normal; }
table.lesson-table td.num, table.lesson-table th.num { text-align: right; white-space: nowrap;
                                                       overflow-wrap: normal; font-variant-numeric: tabular-nums; }
table.lesson-table tr.gold td { background: #fff3bf; }
table.lesson-table tr.dropped td { color: #868e96; }
table.lesson-table tr.out td { background: #ffe3e3; color: #c92a2a; font-weight: 600; }
table.lesson-table tr.in td { background: #d3f9d8; color: #2b8a3e; font-weight: 600; }
table.lesson-table tr.out td:first-child, table.lesson-table tr.in td:first-child {
  box-shadow: inset 5px 0 0 currentColor; }
"""


def number_text(value: float) -> str:
    """A number as a person reads it in a lesson: two decimals; below 0.1, two significant digits (an RRF score of
    0.016 is not 0.02); large ones with thousands separators; whole numbers whole."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return "" if math.isnan(value) else str(value)
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    if value and abs(value) < 0.1:
        return f"{value:.2g}"
    return f"{value:.2f}"


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_text(value)
    return str(value)


def _numeric(rows: Sequence[Mapping[str, Any]], column: str) -> bool:
    values = [r.get(column) for r in rows if r.get(column) is not None]
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def table_html(rows: Sequence[Mapping[str, Any]], hide: Sequence[str] = ("id",)) -> str:
    """Rows as an HTML table, every cell escaped: a gold row ("★") marked, a "dropped" one greyed, a row whose MARK
    is set highlighted (and titled with what the mark means)."""
    if not rows:
        return "<p class='missing'>(none)</p>"
    columns = [c for c in rows[0] if c not in hide and c != MARK]
    numeric = {c for c in columns if _numeric(rows, c)}
    short = {c for c in columns if c not in numeric and all(len(cell_text(r.get(c))) <= SHORT for r in rows)}
    kind = {c: NUM if c in numeric else " class='short'" if c in short else "" for c in columns}
    head = "".join(f"<th{kind[c]}>{esc_html(c)}</th>" for c in columns)
    body = []
    for row in rows:
        mark = str(row.get(MARK) or "")
        cls = mark if mark in MARK_NAMES else ("gold" if row.get("gold") else
                                               ("dropped" if "dropped" in row.values() else ""))
        title = f" title='{esc_html(MARK_NAMES[mark])}'" if mark in MARK_NAMES else ""
        cells = "".join(f"<td{kind[c]}>{esc_html(cell_text(row.get(c)))}</td>" for c in columns)
        body.append(f"<tr class='{cls}'{title}>{cells}</tr>" if cls else f"<tr>{cells}</tr>")
    return (f"<div class='lesson-wrap'><table class='lesson-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")
