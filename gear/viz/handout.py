"""A lesson as a handout: one self-contained HTML file a class can keep — every step of the lesson in order
(gear.viz.lesson) with its explanation, the paper's notation, its tables and its pictures — that opens in any browser
without a network and prints one step to a page.

Pictures are inline SVG drawn from the same layout as the app's graphs (gear.viz.layout), so nothing is fetched and
print is crisp; the styles are inline and a Content-Security-Policy forbids every request. Every string from the run
(passages, triples, queries, LLM output) is html-escaped here; only our own notation goes in as HTML. Imports no
Streamlit: the app's "Download the lesson" and `gear export-html` both call `lesson_html`.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from gear import events as ev
from gear import trace as t
from gear.files import slug
from gear.viz import beam_lesson, charts, layout, sub_steps
from gear.viz.graph import (
    beam_graph,
    edge_text,
    esc_html,
    node_boxes,
    node_text,
    passage_lookup,
    place,
    short,
    spo_text,
)
from gear.viz.lesson import LessonStep, lesson_steps, step_query
from gear.viz.ppr import ppr_graph
from gear.viz.tables import TABLE_CSS, table_html

_PICTURES = itertools.count(1)
LONG = 18  # rows: a sub-step's table longer than this prints smaller, with a smaller picture, to keep to one page
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { --ink: #212529; --muted: #495057; --line: #dee2e6; --accent: #1971c2; --gold: #fff3bf; }
* { box-sizing: border-box; }
body { font-family: 'Liberation Sans', Arial, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1100px;
       padding: 24px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 26px; margin: 0 0 6px 0; }
h2 { font-size: 21px; margin: 0 0 4px 0; break-after: avoid; }
.meta { color: var(--muted); margin: 0 0 10px 0; }
.step { border-top: 3px solid var(--line); padding-top: 14px; margin-top: 26px; }
.where { color: var(--muted); font-size: 13px; text-transform: uppercase; letter-spacing: .04em; }
.notation { font-family: 'Liberation Serif', serif; font-size: 20px; color: var(--accent); margin: 2px 0 6px 0; }
.query { background: #f1f3f5; border-radius: 6px; padding: 6px 10px; margin: 6px 0 10px 0; }
.note { background: #e7f5ff; border-left: 4px solid var(--accent); padding: 6px 10px; margin: 8px 0; }
.note.verdict-contradicts, .note.verdict-caught { background: #fff4e6; border-left-color: #e8590c; }
.note.verdict-agrees { background: #ebfbee; border-left-color: #2b8a3e; }
.missing { color: var(--muted); font-style: italic; }
thead { display: table-header-group; }
tr, svg, .alg1, .figure { break-inside: avoid; }
.figure { margin: 8px 0; }
.figure svg { width: 100%; height: auto; max-height: 560px; border: 1px solid var(--line); border-radius: 6px; }
.side { display: grid; grid-template-columns: minmax(300px, 2fr) 5fr; gap: 14px; align-items: start; }
.toc { columns: 2; font-size: 14px; list-style: none; padding-left: 0; }
.toc li { break-inside: avoid; margin: 1px 0; }
.toc .it { color: var(--muted); }
.point { border-top: 3px solid var(--line); padding-top: 14px; margin-top: 26px; }
.point .category { font-size: 19px; font-weight: 700; margin: 6px 0; }
.point li { margin: 3px 0; }
""" + TABLE_CSS + beam_lesson.ALGORITHM_CSS + """
/* One step a page on A4 and on Letter alike: no page size is set (the printer's paper is used), and a step is laid
   out to fit the smaller of the two (A4's 210 mm width, Letter's 279 mm height). */
@page { margin: 11mm 12mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 9.5pt; line-height: 1.3; }
  h1 { font-size: 17pt; } h2 { font-size: 14pt; }
  .notation { font-size: 12.5pt; margin: 0 0 3px 0; }
  .where { font-size: 8pt; }
  .query { padding: 3px 8px; margin: 3px 0 5px 0; }
  .note { padding: 3px 8px; margin: 4px 0; }
  .step, .point { break-before: page; border-top: none; margin-top: 0; padding-top: 0; }
  .side { grid-template-columns: 66mm 1fr; gap: 4mm; }
  .alg1 { font-size: 6.6pt; padding: 3px 4px; }
  .alg1-title { font-size: 8pt; }
  .figure { margin: 3px 0; }
  .figure svg { max-height: 88mm; }
  .side .figure svg { max-height: 80mm; }
  table.lesson-table { font-size: 7.4pt; line-height: 1.2; margin: 3px 0; }
  table.lesson-table th, table.lesson-table td { padding: 1px 3px; }
  table.lesson-table tr.out td:first-child, table.lesson-table tr.in td:first-child { box-shadow: none;
    border-left: 3px solid currentColor; }
  .lesson-wrap { overflow: visible; }
  .long .figure svg, .long .side .figure svg { max-height: 58mm; }
  .long table.lesson-table { font-size: 6.6pt; line-height: 1.15; }
  .toc { columns: 2; font-size: 9pt; }
  a { color: inherit; text-decoration: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def file_name(trace: t.Trace) -> str:
    return f"lesson_{slug(trace.question)}.html"


# -- pieces -----------------------------------------------------------------------------------------------------------
def _plain(tooltip: str) -> str:
    """A tooltip (escaped HTML fragments) as plain text for an SVG <title>, escaped again."""
    return esc_html(html.unescape(re.sub(r"<br\s*/?>", " · ", re.sub(r"<(?!br)[^>]+>", "", tooltip))))


def _lines(x: float, y: float, text: str, font: float) -> str:
    """Escaped multi-line text as <tspan>s, centred on (x, y)."""
    lines = text.split("\n")
    top = y - (len(lines) - 1) * font * layout.LINE / 2
    return "".join(f"<tspan x='{x:.1f}' y='{top + n * font * layout.LINE:.1f}'>{esc_html(line)}</tspan>"
                   for n, line in enumerate(lines))


def _rim(centre: layout.Point, box: layout.Box, shape: str, size: float, towards: layout.Point) -> layout.Point:
    """Where a line from a node's centre towards a point leaves the node (its box, or its dot)."""
    (x, y), (tx, ty) = centre, towards
    dx, dy = tx - x, ty - y
    length = math.hypot(dx, dy) or 1.0
    if shape != "box":
        return x + dx / length * size, y + dy / length * size
    t = min(box.right / abs(dx) if dx else math.inf, box.up / abs(dy) if dy else math.inf)
    return (x + dx * t, y + dy * t) if math.isfinite(t) else (x, y)


def graph_svg(g: nx.MultiDiGraph, positions: Mapping[Any, layout.Point] | None = None,
              frame: tuple[float, float, float, float] | None = None, flow: bool = False) -> str:
    """A graph as inline SVG at the positions gear.viz.graph.graph_html uses: dots (or boxes) with their labels,
    directed edges drawn through the boxes of their labels (gear.viz.layout.EdgeLabel), grey dashes for the
    greyed-out."""
    boxes = node_boxes(g)
    where = layout.place_labels(g, dict(positions) if positions is not None else place(g, flow), boxes)
    x0, y0, x1, y1 = frame if frame is not None else layout.bounds(where, boxes)
    pad = 12.0
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='{x0 - pad:.1f} {y0 - pad:.1f} {x1 - x0 + 2 * pad:.1f} "
           f"{y1 - y0 + 2 * pad:.1f}' role='img' font-family='Liberation Sans, Arial, sans-serif'>"]
    colours = sorted({str(d.get("color", "#868e96")) for _, _, d in g.edges(data=True)})
    picture = next(_PICTURES)  # marker ids are the document's: each picture has its own
    markers = {c: f"arrow{picture}-{i}" for i, c in enumerate(colours)}
    out.append("<defs>" + "".join(
        f"<marker id='{m}' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' "
        f"orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' fill='{esc_html(c)}'/></marker>"
        for c, m in markers.items()) + "</defs>")
    labels = []

    def rim(node: Any, towards: layout.Point) -> layout.Point:
        data = g.nodes[node]
        return _rim(where[node], boxes[node], str(data.get("shape", "dot")), float(data.get("size", 16)), towards)

    for u, v, k, data in g.edges(keys=True, data=True):
        if u not in where or v not in where:
            continue
        colour = str(data.get("color", "#868e96"))
        dash = " stroke-dasharray='7 5'" if data.get("dashes") else ""
        arrow = f" marker-end='url(#{markers[colour]})'" if data.get("arrows", "to") else ""
        width = min(6.0, float(data.get("width", 2.0)))
        key = layout.EdgeLabel(u, v, k)
        text = edge_text(data)
        (ax, ay), (bx, by) = where[u], where[v]
        if text and key in where:
            lx, ly = where[key]
            if u == v:  # a loop out to the label and back
                sx, sy = rim(u, (lx, ly - 12))
                ex, ey = rim(v, (lx, ly + 12))
                d = (f"M{sx:.1f},{sy:.1f} Q{lx:.1f},{ly - 30:.1f} {lx:.1f},{ly:.1f} "
                     f"Q{lx:.1f},{ly + 30:.1f} {ex:.1f},{ey:.1f}")
            else:  # a curve through the label's place
                sx, sy = rim(u, (lx, ly))
                ex, ey = rim(v, (lx, ly))
                cx, cy = 2 * lx - (sx + ex) / 2, 2 * ly - (sy + ey) / 2
                d = f"M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}"
            b = boxes[key]
            fill = esc_html(str(data.get("font_color") or "#343a40"))
            dashed = " stroke-dasharray='5 4'" if data.get("dashes") else ""
            labels.append(f"<g><rect x='{lx - b.left + 2:.1f}' y='{ly - b.up + 2:.1f}' width='{b.width - 4:.1f}' "
                          f"height='{b.height - 4:.1f}' rx='3' fill='#ffffff' stroke='{esc_html(colour)}'{dashed}/>"
                          f"<text font-size='{layout.EDGE_FONT}' text-anchor='middle' dominant-baseline='middle' "
                          f"fill='{fill}'>{_lines(lx, ly, text, layout.EDGE_FONT)}</text></g>")
        else:
            sx, sy = rim(u, (bx, by))
            ex, ey = rim(v, (ax, ay))
            d = f"M{sx:.1f},{sy:.1f} L{ex:.1f},{ey:.1f}"
        out.append(f"<path d='{d}' fill='none' stroke='{esc_html(colour)}' stroke-width='{width:.1f}'{dash}{arrow}>"
                   f"<title>{_plain(str(data.get('title', '')))}</title></path>")
    out.extend(labels)
    for key, data in g.nodes(data=True):
        if key not in where:
            continue
        x, y = where[key]
        colour = esc_html(str(data.get("color", "#adb5bd")))
        border = "#f59f00" if data.get("gold") else esc_html(str(data.get("border", "#495057")))
        stroke = 4 if data.get("gold") else 1
        text = node_text(key, data)
        fill = esc_html(str(data.get("font_color") or "#212529"))
        title = f"<title>{_plain(str(data.get('title', '')))}</title>"
        if data.get("shape") == "box":
            b = boxes[key]
            out.append(f"<g>{title}<rect x='{x - b.left + 2:.1f}' y='{y - b.up + 2:.1f}' width='{b.width - 4:.1f}' "
                       f"height='{b.height - 4:.1f}' rx='5' fill='{colour}' stroke='{border}' "
                       f"stroke-width='{stroke:d}'/><text font-size='{layout.NODE_FONT}' text-anchor='middle' "
                       f"dominant-baseline='middle' fill='{fill}'>{_lines(x, y, text, layout.NODE_FONT)}</text></g>")
            continue
        r = float(data.get("size", 16))
        lines = text.count("\n") + 1
        below = y + r + 6 + lines * layout.NODE_FONT * layout.LINE / 2
        out.append(f"<g>{title}<circle cx='{x:.1f}' cy='{y:.1f}' r='{r:.1f}' fill='{colour}' stroke='{border}' "
                   f"stroke-width='{stroke:d}'/><text font-size='{layout.NODE_FONT}' text-anchor='middle' "
                   f"dominant-baseline='middle' fill='{fill}' stroke='#ffffff' stroke-width='3' "
                   f"paint-order='stroke'>{_lines(x, below, text, layout.NODE_FONT)}</text></g>")
    out.append("</svg>")
    return "<div class='figure'>" + "".join(out) + "</div>"


# -- one step ---------------------------------------------------------------------------------------------------------
def _triple_rows(triples: Sequence[Sequence[str]], new: set[tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    rows = []
    for tr in triples:
        row: dict[str, Any] = {"subject": tr[0] if tr else "", "predicate": tr[1] if len(tr) > 1 else "",
                               "object": tr[2] if len(tr) > 2 else ""}
        if new is not None:
            row["new"] = "new" if tuple(tr) in new else ""
        rows.append(row)
    return rows


def step_body(events: Sequence[ev.Event], step: LessonStep, passages: Mapping[int, t.PassageView]) -> str:
    """What a step shows besides its words: tables and pictures of its event."""
    e = step.event
    if step.phase == "repeat":
        return f"<div class='note'>{esc_html(step.explanation)}</div>"
    if step.phase:
        shown = sub_steps.view(events, step, passages)
        pic = shown.picture
        figure = graph_svg(pic.graph, pic.positions, pic.frame, flow=pic.flow) if pic is not None else ""
        caption = f"<p class='meta'>{esc_html(shown.caption)}</p>" if shown.caption else ""
        if shown.algorithm:
            figure = f"<div class='side'><div>{shown.algorithm}</div><div>{figure}</div></div>"
        body = figure + caption + table_html(shown.rows)
        return f"<div class='long'>{body}</div>" if len(shown.rows) > LONG else body
    if isinstance(e, ev.BaseRetrieved):
        return table_html(charts.passage_rows(e.passages))
    if isinstance(e, ev.ProximalTriples):
        return f"<p class='meta'>{esc_html(e.source)}</p>" + table_html(_triple_rows(e.triples))
    if isinstance(e, ev.TriplesLinked):
        return table_html([{"proximal triple": spo_text(link.proximal),
                            "linked index triple": spo_text(link.linked.spo) if link.linked else "—",
                            "similarity": round(link.similarity, 3),
                            "source passage": link.linked.passage_title if link.linked else "",
                            "gold": "★" if link.linked and link.linked.gold else ""} for link in e.links])
    if isinstance(e, ev.BeamsSearched):
        initial = next((x for x in events if isinstance(x, ev.InitialNodes) and x.iteration == e.iteration), None)
        by_id = {x.id: x for x in e.triples}
        rows = [{"beam": i, "score": round(b.score, 3),
                 "triples": " → ".join(spo_text(by_id[x].spo) for x in b.triple_ids if x in by_id),
                 "gold": "★" if any(by_id[x].gold for x in b.triple_ids if x in by_id) else ""}
                for i, b in enumerate(e.steps[-1] if e.steps else [], 1)]
        picture = graph_svg(beam_graph(e, initial, passages), flow=True) if rows else ""
        return picture + table_html(rows)
    if isinstance(e, ev.PassagesFused):
        base = next((x for x in events if isinstance(x, ev.BaseRetrieved) and x.iteration == e.iteration), None)
        return table_html(charts.rank_movement(base.passages if base else [], e.passages))
    if isinstance(e, ev.GistUpdated):
        return table_html(_triple_rows(e.memory, {tuple(x) for x in e.added}))
    if isinstance(e, ev.Reasoned):
        start = next((x for x in events if isinstance(x, ev.RunStarted)), None)
        said = charts.verdict(e, start.answers if start else [])
        return f"<div class='note verdict-{said.tone}'>{esc_html(said.text)}</div>"
    if isinstance(e, ev.QueryRewritten):
        return f"<div class='note'>Next query: {esc_html(e.query)}</div>"
    if isinstance(e, ev.PassagesLinked):
        final = next((x for x in events if isinstance(x, ev.FinalRanking)), None)
        return table_html(charts.linked_rows(e)) + ("<h3>Final ranking</h3>" + table_html(
                               charts.passage_rows(final.passages, 15)) if final else "")
    if isinstance(e, ev.Answered):
        start = next((x for x in events if isinstance(x, ev.RunStarted)), None)
        parts = [f"Final answer: {e.answer or '(none)'}"]
        if start is not None and start.answers:
            parts.append("gold: " + " / ".join(start.answers[:4]))
        if e.em is not None and e.f1 is not None:
            parts.append(f"EM {e.em:.0f}, F1 {e.f1:.2f}")
        return f"<div class='note'>{esc_html(' · '.join(parts))}</div>"
    if isinstance(e, ev.PPRSeeded):
        return (table_html([{"matched fact": spo_text(f.triple.spo), "score": round(f.score, 3),
                             "kept": "kept" if f.kept else "dropped"} for f in e.facts])
                + table_html([{"seed entity": s.name, "weight": round(s.seed, 4)} for s in e.entities]))
    if isinstance(e, ev.PPRRanked):
        seeded = next((x for x in events if isinstance(x, ev.PPRSeeded) and x.iteration == e.iteration), None)
        return graph_svg(ppr_graph(e, seeded)) + table_html(charts.passage_rows(e.passages))
    if isinstance(e, ev.PassagesAdded):
        return table_html(charts.passage_rows(e.passages))
    if isinstance(e, ev.ThoughtWritten):
        return f"<div class='note'>{esc_html(e.thought)}</div>"
    return ""


def step_html(events: Sequence[ev.Event], step: LessonStep, number: int, total: int,
              passages: Mapping[int, t.PassageView]) -> str:
    where = f"Step {number:d} of {total:d} · iteration {step.iteration:d}"
    missing = f"<p class='missing'>{esc_html(step.missing)}</p>" if step.missing else ""
    words = "" if step.phase == "repeat" else f"<p>{esc_html(step.explanation)}</p>"
    return (f"<section class='step' id='step-{number:d}'><div class='where'>{where}</div>"
            f"<h2>{esc_html(step.title)}</h2><div class='notation'>{step.notation}</div>{words}"
            f"<div class='query'>q<sup>({step.iteration:d})</sup> = {esc_html(step_query(events, step))}</div>"
            f"{missing}{step_body(events, step, passages)}</section>")


def teaching_point(events: Sequence[ev.Event], steps: Sequence[LessonStep]) -> str:
    """The run's teaching point, on the handout's last page: what went right or wrong and where, in the diagnosis's
    own words (gear.diagnosis: the proposed category, its evidence, where each gold passage went, the answer)."""
    from gear.diagnosis import CATEGORY_LABELS, diagnose

    trace = t.Trace(list(events))
    parts = ["<section class='point' id='point'><div class='where'>The run's teaching point</div>"
             "<h2>What went right or wrong, and where</h2>"]
    start = trace.first(ev.RunStarted)
    if start is None or not start.gold_passage_ids:
        parts.append("<p class='missing'>No gold passages are known for this run, so the diagnosis cannot say where "
                     "the right passages were lost. Mark them on the Ask page (or ask a question of a QA set) to see "
                     "it.</p>")
        answered = trace.first(ev.Answered)
        if answered is not None:
            parts.append(f"<div class='note'>Final answer: {esc_html(answered.answer or '(none)')}</div>")
        return "".join(parts) + "</section>"
    d = diagnose(trace)
    category = d.category or ""
    label = CATEGORY_LABELS.get(category, category) or "not decided (the run was cut short)"
    second = f" (also: {CATEGORY_LABELS.get(d.second, d.second)})" if d.second else ""
    parts.append(f"<p class='category'>{'The run went right' if category == 'none' else 'Error category'}: "
                 f"{esc_html(label)}{esc_html(second)}</p><p class='meta'>proposed by the diagnosis "
                 "(gear.diagnosis; docs/diagnosis.md), from this trace alone</p>")
    if d.evidence:
        parts.append("<ul>" + "".join(f"<li>{esc_html(line)}</li>" for line in d.evidence) + "</ul>")
    rows = [{"gold passage": g.title, "where it went": g.status + (f" at {g.lost_at}" if g.lost_at else ""),
             "final rank": g.final_rank} for g in d.passages]
    if rows:
        parts.append(table_html(rows))
    a = d.answer
    if a is not None:
        said = [f"the run's answer: {a.answer or '(none)'}", f"gold: {' / '.join(a.gold[:4])}"]
        if a.em is not None:
            said.append(f"EM {a.em:.0f}, F1 {a.f1:.2f}" if a.f1 is not None else f"EM {a.em:.0f}")
        parts.append(f"<div class='note'>{esc_html(' · '.join(said))}</div>")
        if a.notes:
            parts.append("<ul>" + "".join(f"<li>{esc_html(line)}</li>" for line in a.notes) + "</ul>")
    if d.notes:
        parts.append("<p class='meta'>Notes</p><ul>" + "".join(f"<li>{esc_html(line)}</li>" for line in d.notes)
                     + "</ul>")
    reasoner = [n for n, s in enumerate(steps, 1) if isinstance(s.event, ev.Reasoned)]
    if reasoner:
        parts.append(f"<p class='meta'>The reasoner's verdicts are on step{'s' if len(reasoner) > 1 else ''} "
                     f"{', '.join(f'{n:d}' for n in reasoner)}.</p>")
    return "".join(parts) + "</section>"


def step_range(text: str, total: int) -> tuple[int, int]:
    """"5-9", "5–9", "7" or "5-" as (first, last) steps within 1…total; ValueError naming what is wrong."""
    raw = text.strip().replace("–", "-")
    first, sep, last = raw.partition("-")
    try:
        a = int(first) if first.strip() else 1
        b = (int(last) if last.strip() else total) if sep else a
    except ValueError:
        raise ValueError(f"steps are a range like 5-9 (this lesson has 1 to {total}), not {text!r}") from None
    if not 1 <= a <= b <= total:
        raise ValueError(f"this lesson has steps 1 to {total}; {text!r} is not among them")
    return a, b


def lesson_html(trace: t.Trace | Sequence[ev.Event], title: str = "", steps: tuple[int, int] | None = None) -> str:
    """The whole lesson on a run as one self-contained HTML page (no request leaves it): a first page with the
    contents, one step a page, and the run's teaching point on the last. `steps`: only steps first…last (numbered as
    in the whole lesson) are printed."""
    events = list(trace)
    every = lesson_steps(events)
    first, last = steps or (1, len(every))
    chosen = [(n, s) for n, s in enumerate(every, 1) if first <= n <= last]
    passages = passage_lookup(events)
    start = next((e for e in events if isinstance(e, ev.RunStarted)), None)
    question = start.question if start else ""
    facts = []
    if start is not None:
        facts.append(f"method {start.method}, retriever {start.retriever}")
        s = start.settings
        if "beam_width" in s:
            facts.append(f"b = {s.get('beam_width')}, l = {s.get('beam_length')}, γ = {s.get('gamma')}")
        if s.get("prompts"):
            facts.append(f"prompts {s.get('prompts')}")
        if start.question_id:
            facts.append(f"question {start.question_id}")
    toc = "".join(f"<li><a href='#step-{n:d}'>{n:d}. {esc_html(s.title)}</a> <span class='it'>· iteration "
                  f"{s.iteration:d}</span></li>" for n, s in chosen)
    toc += "<li><a href='#point'>The run's teaching point</a></li>"
    body = "".join(step_html(events, s, n, len(every), passages) for n, s in chosen)
    heading = esc_html(title or "GeAR — a run, step by step")
    which = (f"Steps {first}–{last} of the lesson's {len(every)}" if (first, last) != (1, len(every))
             else f"{len(every)} steps")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{heading}: {esc_html(short(question, 80))}</title><style>{CSS}</style></head><body>"
            f"<h1>{heading}</h1><p><b>Question:</b> {esc_html(question)}</p>"
            f"<p class='meta'>{esc_html(' · '.join(facts))}</p>"
            f"<p class='meta'>{which}, one a page, and the run's teaching point last; Graph expansion is shown as the "
            "paper's Algorithm 1 does it. Made by GeAR Studio from a recorded run; this file needs no network.</p>"
            f"<h2>Contents</h2><ul class='toc'>{toc}</ul>{body}{teaching_point(events, every)}</body></html>")
