"""Untrusted text (passage titles and text, triples, file names, questions, answers, LLM output, error messages that
quote any of them) reaches a person only through the escaper of the sink it lands in — checked on the code itself, as
tests/unit/test_architecture.py checks the imports.

A sink is a call that renders its text: in the app every Streamlit element whose text is Markdown (write, markdown,
table, caption, error/warning/info/success, toast, status and its update(label=…), expander, tabs, metric, progress
text, button and checkbox labels); in the CLI Rich's print, add_row, add_column, Table/Panel titles and typer.echo.
Each text argument must be provably inert, part by part: a literal; a number formatted with a format spec (`{n:,}`);
a call of the sink's escaper (`studio.core.safe.esc_md` / `md_cells`, `gear.cli.terminal.esc_term` / `json_text`); a
constant (UPPER_CASE); or an expression named below as trusted, with the reason it holds only the app's own words or
numbers. Joins, concatenations, conditionals and f-strings are looked into; anything else is a leak. A trusted entry
no sink uses any more fails too, so the list cannot rot into a blanket pass."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# names that hold a count, a rank, an id or a score wherever they appear in the app and the CLI (a title never goes
# by one of these names; the planted leaks below show that every other name is caught)
NUMBERS = frozenset({"n", "k", "i", "id", "pid", "passage_id", "found", "gold", "missing", "skipped", "broken", "added",
                     "shifted", "ahead", "total", "top", "questions", "iteration", "iterations", "cut_short", "dims",
                     "n_passages", "n_triples", "n_entities", "n_questions", "number_of_nodes", "number_of_edges",
                     "mb", "memo_calls", "verdicts_rejected", "queries_repeated"})


@dataclass(frozen=True)
class Rules:
    """What one kind of sink is, and what makes text inert there."""

    sinks: dict[str, tuple[int, ...] | None]  # method/function name → positional args holding text (None: all)
    keywords: frozenset[str]  # keyword arguments holding text
    escapers: frozenset[str]
    trusted_calls: frozenset[str]  # functions whose result is the code's own words or a number
    trusted: dict[str, dict[str, str]] = field(default_factory=dict)  # file → expression → why it is trusted
    functions_too: frozenset[str] = frozenset()  # sinks that are plain functions (Table(...)), not methods
    ignore_receivers: frozenset[str] = frozenset({"log", "logger", "logging", "self.log"})


# -- the app: Streamlit renders all of these as Markdown -------------------------------------------------------------
_BUILDERS = "returns Markdown built from literals, numbers and esc_md'd parts"
_OWN = "the app's own words (literals chosen in code)"
_COUNT = "a number"
_LABEL = "a method's label or key from the registry (gear.methods / studio presets)"
_INDEX = "an index name: the Index page keeps only [A-Za-z0-9_-] of a typed name"
_PATH = "a path under the data folder the operator configured (paths.shown)"

APP_TRUSTED: dict[str, dict[str, str]] = {
    "app_pages/compare.py": {"marks_note(found.marks, found.model)": _BUILDERS, "waiting": _OWN, "stopped": _OWN,
                             "depth_note(shown_k)": "studio.pages.compare.depth_note: counts and the app's words",
                             "elsewhere": "studio.pages.compare.elsewhere_note: " + _BUILDERS},
    "app_pages/traces.py": {"where": _PATH},
    "studio/pages/ask.py": {"example.caption": "the bundled examples' captions (studio.core.demos)",
                      "other.button": "the bundled examples' button labels (studio.core.demos)",
                      "_lesson_label(example.stem, example.path)": "a bundled example's name in the app's words, "
                                                                   "with its counts of iterations and steps",
                      "marks_note(marks, found.model, found.speed)": _BUILDERS},
    "studio/pages/compare.py": {"label": _LABEL},
    "studio/gold/marks.py": {"_where": "a passage's ranks in this run (numbers)"},
    "studio/gold/runs.py": {"verdict": "a category label of gear.diagnosis or '—'",
                                 "map(str, cutoffs)": "the diagnoses' cut-offs (numbers)"},
    "studio/views/sub_step.py": {"beam_lesson.ALGORITHM_CSS.split()": "a stylesheet constant of gear.viz.beam_lesson",
                           "beam_lesson.algorithm_html(step.lines)": "Algorithm 1's lines from gear/retrieve/beam.py's "
                                                                     "docstring, html-escaped there"},
    "studio/pages/evaluate_pairs.py": {"line": "built above from esc_md'd parts, counts and the app's words",
                            "kind": "a question kind of gear.eval.pairing (B fixes, B breaks, both miss)",
                            "name": "'A' or 'B'"},
    "studio/gold/panel.py": {"category_line(d)": _BUILDERS, "line": "answer_line(d): " + _BUILDERS,
                                 "list(diagnoses)": _LABEL,
                                 "nothing_to_diagnose(trace)": _OWN},
    "studio/pages/evaluate.py": {"paths.shown": _PATH, "label": _LABEL, "ks": "the recall cut-offs chosen (numbers)",
                           "dict.fromkeys(names)": "methods' labels (viz.report_label: gear.methods)",
                           "why": "answer_cells: why a method has no EM/F1, in the app's words",
                           "note": "depth_note: cut-offs and the app's words"},
    "studio/views/gear_steps.py": {"said": "recall_shown: whose gold the recall is counted against, in the app's words",
                            "said.text": "gear.viz.verdict's words, every part from the run passed through esc_md",
                            "parts": _BUILDERS,
                            "label": _OWN, "method.base_note": _LABEL, "origin": _OWN,
                            "note": "gear.eval.report's recall note: counts and the app's words",
                            "origins": "answer_origins: counts and the app's words", "when": _OWN,
                            "cost.words()": "gear.trace.cost.RunCost.words: tokens, seconds and counts"},
    "studio/pages/index.py": {"m.embedder": "the index's manifest, written by gear (model name, backend, date)",
                          "m.backend": "the index's manifest, written by gear", "m.created": "a timestamp gear wrote",
                          "paths.shown": _PATH, "limit.what": "studio.pages.index_uploads.LIMITS", "name": _INDEX,
                          "safe": _INDEX,
                          "self.name": _INDEX, "duration": "a duration in words", "title": _OWN, "what": _OWN,
                          "warned": _OWN, "llm_words(settings)": "the model chosen in the sidebar, in words",
                          "outputs.get(config.output).label": "an answer shape's label (gear.extract.outputs)",
                          "at_once": _OWN, "raw_text_note()": _OWN, "local_profile(settings).describe()": _OWN,
                          "progress.line(NO_BREAK)": "counts, rates and durations (gear.extract.progress)",
                          "stage": "an encoding stage's name (gear.index.build)",
                          "note": "cut_files_note: file names esc_md'd there, counts and the app's words",
                          "title_rule()": _OWN},
    "studio/core/resources.py": {"name": "a demo's name (studio.core.demos.DEMOS)", "cost": _OWN,
                            "build.line()": "the demo build's progress: counts and the app's words"},
    "studio/core/safe.py": {"icon": _OWN, "title": _OWN},
    "studio/core/sidebar.py": {"llm_status(kind, cache if kind == 'replay' else None)": _OWN,
                          "line": "unavailable_demos(): a demo's name and status (studio.core.demos)",
                          "origins": "answer_origins: counts and the app's words", "name": _OWN},
    "studio/views/teaching.py": {"step.notation": "the paper's notation (gear.viz.notation)"},
    "studio/views/trace.py": {"self.text": "RunProgress.line: step names from the runners, counts, durations",
                             "label": _OWN, "facts": "built above from esc_md'd parts and the method's label"},
    "studio/pages/traces.py": {"paths.shown": _PATH},
    "studio/pages/index_uploads.py": {"f.name": "a format's name (gear.data.reading)"},
    "studio/core/widgets.py": {"number": "gear.viz.notation", "name": "gear.viz.notation",
                               "formula": "gear.viz.notation"},
}

APP = Rules(
    sinks={"write": None, "markdown": (0,), "table": (0,), "caption": (0,), "error": (0,), "warning": (0,),
           "info": (0,), "success": (0,), "exception": (0,), "toast": (0,), "status": (0,), "update": (),
           "expander": (0,), "tabs": (0,), "metric": (0,), "progress": (), "spinner": (0,), "popover": (0,),
           "button": (0,), "checkbox": (0,), "toggle": (0,), "title": (0,), "header": (0,), "subheader": (0,)},
    keywords=frozenset({"label", "text", "body"}),
    escapers=frozenset({"esc_md", "md_cells"}),
    # counted(n, word): "n words", a number and the app's own word (studio.core.report_names)
    trusted_calls=frozenset({"len", "round", "int", "float", "min", "max", "sum", "type", "duration", "counted"}),
    trusted=APP_TRUSTED,
)

# -- the CLI: Rich parses markup in every string; the consoles (gear.cli.terminal) show control characters ----------
_TABLE = "a Rich Table whose cells are checked where they are added"
_CODE = "a code word of gear.diagnosis (a stage, a category, an answer check) or counts of them"
_ARG = "a path the operator typed on the command line"
_MANIFEST = "the index's manifest, written by gear"
CLI_TRUSTED: dict[str, dict[str, str]] = {
    "gear/cli/app.py": {"where": "esc_term'd on the line above"},
    "gear/cli/diagnose.py": {"table": _TABLE, "stages": _TABLE, "lost": _CODE,
                             "c": _CODE, "run.funnel.get(stage, 0)": _CODE, "run.lost_at.get(stage, 0)": _CODE,
                             "run.dropped_at.get(stage, 0)": _CODE, "name.replace('_', ' ')": _CODE,
                             "name": "a column heading written in code", "stage_label": "a stage's name in words",
                             "cell": "a stage's outcome in words", "_stage": "a stage's name in words",
                             "category": "built on the line above from esc_term'd parts",
                             "category_words": "the proposal's line, built from esc_term'd parts"},
    "gear/cli/compare.py": {"table": _TABLE, "name": "a column heading written in code",
                            "x": "the 'only in A / B' phrases built above from counts", "counts": _COUNT,
                            "only": "a question kind of gear.eval.pairing (ONLY's values)",
                            "by": "PASSAGES or ANSWERS of gear.eval.pairing", "q.found_a": _COUNT,
                            "q.found_b": _COUNT, "q.n_gold": _COUNT, "q.tokens_a": _COUNT, "q.tokens_b": _COUNT,
                            "q.time_words('a')": "seconds (QuestionPair.time_words)",
                            "q.time_words('b')": "seconds (QuestionPair.time_words)"},
    "gear/cli/export.py": {"why": "esc_term'd on the line above"},
    "gear/cli/sweep.py": {"table": _TABLE},
    "gear/cli/evaluate.py": {"note": "gear.eval.protocol.source_note: which run a figure comes from, in its words",
                             "table": _TABLE, "run": "a method's label (gear.methods)", "lost": _CODE, "c": _CODE,
                             "name": "the retriever and method's names (validated settings)",
                             "cost": "gear.eval.report.cost_words: tokens, seconds and the CLI's words"},
    "gear/cli/index.py": {"index_dir": _ARG, "out_dir": _ARG, "out_file": _ARG, "what": _ARG + " (an update's source)",
                          "manifest.embedder": _MANIFEST, "m.embedder": _MANIFEST, "m.backend": _MANIFEST,
                          "m.created": _MANIFEST, "ex.get('llm')": _MANIFEST, "ex.get('model')": _MANIFEST,
                          "ex.get('prompt')": _MANIFEST, "ex.get('style')": _MANIFEST, "ex": _MANIFEST,
                          "change.get('at')": _MANIFEST, "change.get('op')": _MANIFEST,
                          "change.get('passages')": _MANIFEST, "change.get('triples')": _MANIFEST,
                          "v": "a count of dropped triples", "problems": "verify_index: the index's own file names"},
    "gear/cli/replay.py": {"table": _TABLE, "col": "a column heading written in code",
                           "title": "a table's title written in code, with the iteration's number"},
    "gear/cli/qa.py": {"table": _TABLE,
                       "name": "a column heading written in code"},
    "gear/cli/query.py": {"table": _TABLE,
                          "col": "a column heading written in code", "retriever": "validated by Settings",
                          "method": "validated by Settings (a method of gear.methods)",
                          "cost.words()": "gear.trace.cost.RunCost.words: tokens, seconds and counts",
                          "line": "gear.trace.narrate's markup: every untrusted part rich-escaped there, and the "
                                  "console shows its control characters"},
}

CLI = Rules(
    sinks={"print": None, "add_row": None, "add_column": (0,), "echo": (0,), "Table": (), "Panel": (0,)},
    keywords=frozenset({"title", "caption", "header", "subtitle"}),
    escapers=frozenset({"esc_term", "json_text"}),
    # _count(n, word) and found_line(…): counts and the CLI's own words; _em: an EM as a number or "—"; traced_k: a k
    trusted_calls=frozenset({"len", "round", "int", "float", "min", "max", "sum", "str_count", "type", "_count", "_em",
                             "traced_k", "found_line"}),
    trusted=CLI_TRUSTED,
    functions_too=frozenset({"Table", "Panel"}),
)


def app_files() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "studio").rglob("*.py"))]


# print only the operator's own settings, addresses and counts, never an index's data (their consoles still show
# control characters visibly): `gear migrate`, `gear serve-llm`, `gear app`
CLI_WITHOUT_DATA = ("elastic.py", "serve_llm.py", "studio.py")


def cli_files() -> list[Path]:
    return [p for p in sorted((ROOT / "gear" / "cli").glob("*.py")) if p.name not in CLI_WITHOUT_DATA]


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _dotted(expr: ast.expr) -> bool:
    """A name or a dotted name (p, p.title, self.box): an object from elsewhere, not a value the sink's line made."""
    return isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and _dotted(expr.value))


def leaks(expr: ast.expr, rules: Rules, trusted: dict[str, str], used: set[str]) -> Iterator[ast.expr]:
    """The parts of `expr` not provably inert (see the module's docstring); `used` collects the trusted entries hit."""
    text = ast.unparse(expr)
    if text in trusted:
        used.add(text)
        return
    match expr:
        case ast.Constant() | ast.Compare() | ast.UnaryOp() | ast.Lambda():
            return
        case ast.JoinedStr():
            for part in expr.values:
                if isinstance(part, ast.FormattedValue) and part.format_spec is None:
                    yield from leaks(part.value, rules, trusted, used)
        case ast.Call():
            name, func = _name(expr.func), ast.unparse(expr.func)
            if func in trusted:
                used.add(func)
                return
            if name in rules.escapers or name in rules.trusted_calls or name in NUMBERS:
                return
            if func == "str" and len(expr.args) == 1:  # str(n): as inert as n
                yield from leaks(expr.args[0], rules, trusted, used)
                return
            if isinstance(expr.func, ast.Attribute) and not _dotted(expr.func.value):
                # a method of a value made here ("; ".join(…), md_cells(grid).style…): its receiver and arguments
                yield from leaks(expr.func.value, rules, trusted, used)
                for arg in expr.args:
                    yield from leaks(arg, rules, trusted, used)
            else:  # a function, or a method of some object: what it returns is unknown
                yield expr
        case ast.BinOp():
            yield from leaks(expr.left, rules, trusted, used)
            yield from leaks(expr.right, rules, trusted, used)
        case ast.IfExp():
            yield from leaks(expr.body, rules, trusted, used)
            yield from leaks(expr.orelse, rules, trusted, used)
        case ast.BoolOp():
            for value in expr.values:
                yield from leaks(value, rules, trusted, used)
        case ast.List() | ast.Tuple() | ast.Set():
            for elt in expr.elts:
                yield from leaks(elt, rules, trusted, used)
        case ast.GeneratorExp() | ast.ListComp():
            yield from leaks(expr.elt, rules, trusted, used)
        case ast.Subscript() if isinstance(expr.slice, ast.Constant) and expr.slice.value in NUMBERS:
            return
        case ast.Starred() | ast.Subscript():
            yield from leaks(expr.value, rules, trusted, used)
        case ast.Name() if expr.id.isupper() or expr.id in NUMBERS:
            return
        case ast.Attribute() if expr.attr in NUMBERS:
            return
        case ast.Attribute() if expr.attr.isupper():
            return
        case ast.Attribute() if not _dotted(expr):  # an attribute of a value made here (md_cells(grid).style)
            yield from leaks(expr.value, rules, trusted, used)
        case _:
            yield expr


def sink_arguments(tree: ast.AST, rules: Rules) -> Iterator[tuple[ast.Call, ast.expr]]:
    """Each (call, text argument) of a sink in a module."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name not in rules.sinks:
            continue
        if isinstance(node.func, ast.Name) and name not in rules.functions_too:
            continue  # a function of ours named like a sink (studio.core.widgets.table draws a dataframe)
        if isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) in rules.ignore_receivers:
            continue
        positions = rules.sinks[name]
        for n, arg in enumerate(node.args):
            if positions is None or n in positions:
                yield node, arg
        for keyword in node.keywords:
            if keyword.arg in rules.keywords:
                yield node, keyword.value


def unsafe_sinks(source: str, rules: Rules, trusted: dict[str, str], used: set[str] | None = None) -> list[str]:
    """'line: sink(...): the leaking part' for every sink argument of `source` that is not provably inert."""
    used = set() if used is None else used
    found = []
    for call, arg in sink_arguments(ast.parse(source), rules):
        for leak in leaks(arg, rules, trusted, used):
            found.append(f"{call.lineno}: {_name(call.func)}(…): {ast.unparse(leak)}")
    return found


def _check(files: list[Path], rules: Rules) -> None:
    problems, stale = [], []
    for path in files:
        rel = str(path.relative_to(ROOT))
        trusted = rules.trusted.get(rel, {})
        used: set[str] = set()
        problems += [f"{rel}:{line}" for line in unsafe_sinks(path.read_text(encoding="utf-8"), rules, trusted, used)]
        stale += [f"{rel}: {name}" for name in trusted if name not in used]
    unknown = sorted(set(rules.trusted) - {str(p.relative_to(ROOT)) for p in files})
    assert problems == [], "untrusted text reaches a sink without its escaper:\n" + "\n".join(problems)
    assert stale == [] and unknown == [], f"trusted entries no sink uses: {stale + unknown}"


def test_the_app_renders_untrusted_text_only_through_its_escapers() -> None:
    _check(app_files(), APP)


def test_the_cli_prints_untrusted_text_only_through_its_escapers() -> None:
    _check(cli_files(), CLI)


def test_the_check_sees_every_sink_in_the_code() -> None:
    """The walk finds the sinks the issue named (an empty walk would pass anything)."""
    found = {ast.unparse(arg) for path in app_files()
             for _, arg in sink_arguments(ast.parse(path.read_text(encoding="utf-8")), APP)}
    assert "esc_md(stop.message)" in found and "esc_md(stop.label)" in found
    assert any(text.startswith("md_cells(grid)") for text in found)
    cli = {ast.unparse(arg) for path in cli_files()
           for _, arg in sink_arguments(ast.parse(path.read_text(encoding="utf-8")), CLI)}
    assert "esc_term(p.title)" in cli


@pytest.mark.parametrize(("source", "leak"), [
    ("st.error(stop.message)", "stop.message"),
    ("st.write(upload.summary(corpus, openie, qa))", "upload.summary(corpus, openie, qa)"),
    ("box.update(label=stop.label, state='error')", "stop.label"),
    ("st.table(grid.style.hide(axis='index'))", "grid.style.hide(axis='index')"),
    ("st.caption(f'Gold: {p.title} · #{p.id:d}')", "p.title"),
    ("st.markdown('**' + esc_md(a) + '** ' + b)", "b"),
    ("left.markdown(' · '.join(p.title for p in passages))", "p.title"),
    ("st.error(f'Not saved: {one_line(exc)}')", "one_line(exc)"),
    ("st.toast(f'saved {path.name}')", "path.name"),
    ("st.expander(f'{title} ({n:,})')", "title"),
    ("bar.progress(50, text=f'{qid}')", "qid"),
])
def test_a_planted_leak_in_the_app_is_found(source: str, leak: str) -> None:
    assert [line.split(": ", 2)[-1] for line in unsafe_sinks(source, APP, {})] == [leak]


@pytest.mark.parametrize(("source", "leak"), [
    ("table.add_row(str(n), p.title, f'{s.score:.4f}')", "p.title"),
    ("Table(title=f'search: {question}')", "question"),
    ("out.print(f'[yellow]warning:[/yellow] {line}')", "line"),
    ("console.print(escape(event.text))", "escape(event.text)"),  # rich's own escape lets ESC through
    ("typer.echo(json.dumps(data, ensure_ascii=False))", "json.dumps(data, ensure_ascii=False)"),
])
def test_a_planted_leak_in_the_cli_is_found(source: str, leak: str) -> None:
    assert [line.split(": ", 2)[-1] for line in unsafe_sinks(source, CLI, {})] == [leak]


@pytest.mark.parametrize("source", [
    "st.error(esc_md(stop.message))",
    "st.caption(f'{len(rows):,} rows · {esc_md(p.title)} · {SOME_CONSTANT}')",
    "st.table(md_cells(grid).style.hide(axis='index').map(lambda v: ''))",
    "st.markdown('**Gold:** ' + esc_md(' / '.join(answers)) if answers else 'none')",
    "st.dataframe(pd.DataFrame(rows))",  # not a Markdown sink: cells are plain text
])
def test_inert_text_passes(source: str) -> None:
    assert unsafe_sinks(source, APP, {}) == []


# -- HTML: what the viz builds (pyvis tooltips, the lesson, the handout) and Markdown shown with unsafe_allow_html -----
# Here a name says nothing: a trace's `passage_id` once held `<img onerror=…>` and reached a tooltip as "a number".
# Every part interpolated into HTML is a literal, a constant, a call of an escaper, or a number formatted from the
# decoded number — a format spec of a number (`{n:d}`, `{s:.3f}`) or int()/float()/len()/round(), which fail on
# anything but a number — or an expression named below with the reason it holds only the code's own HTML.
HTML_ESCAPERS = frozenset({"esc_html", "esc_md", "_plain"})
HTML_NUMBERS = frozenset({"int", "float", "len", "round", "min", "max", "sum"})
NUMBER_SPEC = "dfeEgGn%xXbco"
_BUILT = "built above in this function from esc_html'd parts, formatted numbers and the code's own tags"
_TOOLTIP = "a tooltip built by gear.viz from escaped parts (its f-strings are checked here)"
_COLOUR = "a colour constant of gear.viz (the legends' and the nodes' palettes)"
_LINES = "handout._lines: each line esc_html'd in a <tspan> at numeric coordinates"
_NOTATION = "the paper's notation (gear.viz.notation: our HTML, the iteration formatted with :d)"
HTML_TRUSTED: dict[str, dict[str, str]] = {
    "gear/viz/beam_lesson.py": {"body": _BUILT},
    "gear/viz/graph.py": {"_triple_tooltip(t, tuses, passages.get(t.passage_id))": _TOOLTIP, "colour": _COLOUR,
                          "sw": "a swatch: a span styled with a colour constant",
                          "str(data.get('title', esc_html(key)))": _TOOLTIP,
                          "title": "an edge's title, shown on its label's box: " + _TOOLTIP},
    "gear/viz/handout.py": {"body": _BUILT,
                            "dashed": "a constant attribute or ''", "d": "SVG path data of numbers formatted above",
                            "_lines(lx, ly, text, layout.EDGE_FONT)": _LINES, "_lines(x, y, text, layout.NODE_FONT)":
                            _LINES, "_lines(x, below, text, layout.NODE_FONT)": _LINES,
                            "said.tone": "a tone word of gear.viz.charts.verdict (caught, open, unchecked, agrees, "
                                         "contradicts)",
                            "teaching_point(events, every)": "teaching_point: escaped parts (its f-strings are checked "
                                                             "here)",
                            "which": "the steps' numbers and the code's own words",
                            "m": "a marker id: 'arrow', a counter and an index", "arrow": _BUILT, "dash": _BUILT,
                            "fill": "a colour, esc_html'd above",
                            "border": "a colour, esc_html'd above",
                            "title": "an SVG <title> of _plain text", "colour": "a colour, esc_html'd above",
                            "figure": _BUILT, "missing": _BUILT,
                            "shown.algorithm": "Algorithm 1's listing (gear.viz.beam_lesson.algorithm_html)",
                            "step_body(events, step, passages)": "step_body: tables and pictures built from escaped "
                                                                 "parts (its f-strings are checked here)",
                            "where": _BUILT, "step.notation": _NOTATION, "words": _BUILT, "heading": _BUILT,
                            "toc": _BUILT},
    "gear/viz/tables.py": {"kind[c]": "a constant class attribute (numeric, short or none)",
                           "cls": "a mark name of MARK_NAMES, 'gold', 'dropped' or ''", "title": _BUILT,
                           "cells": _BUILT, "head": _BUILT, "body": _BUILT},
    "gear/viz/link_lesson.py": {"source_line(tv, passages)": "gear.viz.beam_lesson.source_line: escaped parts"},
    "gear/viz/pairing.py": {"ids": "question ids, each esc_html'd above"},
    "gear/viz/ppr.py": {"title": _BUILT},
    "studio/gold/marks.py": {"_where(s.id, ranks)": "a passage's ranks in this run (numbers)"},
    "studio/views/sub_step.py": {"beam_lesson.ALGORITHM_CSS.split()": "a stylesheet constant of gear.viz.beam_lesson",
                           "beam_lesson.algorithm_html(step.lines)": "Algorithm 1's listing, escaped in "
                                                                     "gear.viz.beam_lesson.algorithm_html",
                           "table_html(rows)": "gear.viz.tables.table_html: every cell esc_html'd"},
    "studio/views/teaching.py": {"step.notation": _NOTATION},
    "studio/core/widgets.py": {"_INTO_VIEW.format(key=key)": "a script constant with a container key of the code's own",
                          "number": "gear.viz.notation", "name": "gear.viz.notation",
                          "formula": "gear.viz.notation, the run's detail esc_md'd by step_heading"},
}


def html_files() -> list[Path]:
    return [*sorted((ROOT / "gear" / "viz").glob("*.py")), *app_files()]


def _numeric_spec(spec: ast.expr | None) -> bool:
    if not isinstance(spec, ast.JoinedStr) or not spec.values:
        return False
    last = spec.values[-1]
    return isinstance(last, ast.Constant) and isinstance(last.value, str) and last.value[-1:] in NUMBER_SPEC


def html_leaks(expr: ast.expr, trusted: dict[str, str], used: set[str]) -> Iterator[ast.expr]:
    """The parts of an HTML string not provably inert (see above)."""
    text = ast.unparse(expr)
    if text in trusted:
        used.add(text)
        return
    match expr:
        case ast.Constant():
            return
        case ast.JoinedStr():
            for part in expr.values:
                if isinstance(part, ast.FormattedValue) and not _numeric_spec(part.format_spec):
                    yield from html_leaks(part.value, trusted, used)
        case ast.Call() if _name(expr.func) in HTML_ESCAPERS | HTML_NUMBERS:
            return
        case ast.Call() if isinstance(expr.func, ast.Attribute) and expr.func.attr == "join":
            yield from html_leaks(expr.func.value, trusted, used)
            for arg in expr.args:
                yield from html_leaks(arg, trusted, used)
        case ast.BinOp():
            yield from html_leaks(expr.left, trusted, used)
            yield from html_leaks(expr.right, trusted, used)
        case ast.IfExp():
            yield from html_leaks(expr.body, trusted, used)
            yield from html_leaks(expr.orelse, trusted, used)
        case ast.GeneratorExp() | ast.ListComp():
            yield from html_leaks(expr.elt, trusted, used)
        case ast.Name() if expr.id.isupper():
            return
        case ast.Attribute() if expr.attr.isupper():
            return
        case _:
            yield expr


_TAG = re.compile(r"</?(?:a|b|i|p|br|em|strong|small|sup|sub|span|div|section|h[1-6]|table|thead|tbody|tr|td|th|ul|"
                  r"li|svg|g|path|text|rect|circle|marker|defs|title|style|script|meta|html|head|body|img)[\s>/]")


def html_sinks(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.expr]]:
    """(node, HTML expression): f-strings that write a tag, Markdown shown with unsafe_allow_html, st.html, a graph's
    `title` (pyvis renders it as HTML), and `data["title"] = …`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if _TAG.search(literal):
                yield node, node
        elif isinstance(node, ast.Call):
            name = _name(node.func)
            unsafe = any(k.arg == "unsafe_allow_html" and isinstance(k.value, ast.Constant) and k.value.value
                         for k in node.keywords)
            st_html = name == "html" and isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == "st"
            if (unsafe or st_html) and node.args:
                yield node, node.args[0]
            if name in ("add_node", "add_edge"):
                yield from ((node, k.value) for k in node.keywords if k.arg == "title")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
                    and target.slice.value == "title":
                yield node, node.value


def unsafe_html(source: str, trusted: dict[str, str], used: set[str] | None = None) -> list[str]:
    used = set() if used is None else used
    found = []
    for node, expr in html_sinks(ast.parse(source)):
        found += [f"{node.lineno}: {ast.unparse(leak)}" for leak in html_leaks(expr, trusted, used)]
    return sorted(set(found), key=lambda line: int(line.split(":")[0]))


def test_html_from_a_file_is_built_only_from_escaped_parts_and_numbers() -> None:
    problems, stale = [], []
    for path in html_files():
        rel = str(path.relative_to(ROOT))
        trusted = HTML_TRUSTED.get(rel, {})
        used: set[str] = set()
        problems += [f"{rel}:{line}" for line in unsafe_html(path.read_text(encoding="utf-8"), trusted, used)]
        stale += [f"{rel}: {name}" for name in trusted if name not in used]
    assert problems == [], "a value reaches HTML unescaped (escape it, or format it as a number):\n" + "\n".join(
        problems)
    assert stale == [], f"trusted entries no HTML sink uses: {stale}"


@pytest.mark.parametrize(("source", "leak"), [
    ("line = f'source passage #{t.passage_id}: <i>{esc_html(title)}</i>'", "t.passage_id"),
    ("st.markdown(f'<b>{e.k}</b> = {n:d}', unsafe_allow_html=True)", "e.k"),
    ("g.add_edge(u, v, title=f'{esc_html(a)} occurs in passage #{edge.target}')", "edge.target"),
    ("data['title'] = '<b>' + name + '</b>'", "name"),
    ("st.html(f'<div>{question}</div>')", "question"),
    ("page = f\"<div class='where'>Step {number} · {esc_html(title)}</div>\"", "number"),
])
def test_a_planted_html_leak_is_found(source: str, leak: str) -> None:
    assert [line.split(": ", 1)[1] for line in unsafe_html(source, {})] == [leak]


@pytest.mark.parametrize("source", [
    "line = f'source passage #{t.passage_id:d}: <i>{esc_html(title)}</i> {score:.3f}'",
    "st.markdown(f'<b>{esc_md(e.query)}</b> q<sup>({int(e.iteration)})</sup>', unsafe_allow_html=True)",
    "data['title'] = '<br>'.join(esc_html(x) for x in names)",
    "st.markdown(f'**{esc_md(title)}** · {k}')",  # no tag and no unsafe_allow_html: the Markdown sink's test's
])
def test_inert_html_passes(source: str) -> None:
    assert unsafe_html(source, {}) == []
