"""`gear diagnose`: where each gold passage of saved runs was lost, and the proposed error category with its evidence
and confidence, from the traces alone — or, with `--index`, consulting the index the runs were made on and re-running
the steps that ask no model (gear.diagnosis.probe). The LLM is never asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from gear.cli.app import app, console, friendly_errors, out
from gear.cli.run_folders import is_report, short_names
from gear.cli.terminal import esc_term, json_text

if TYPE_CHECKING:
    from gear.agent.engine import Engine
    from gear.data.questions import Question
    from gear.diagnosis import Diagnosis, Ref, Summary
    from gear.store.base import SearchBackend
    from gear.trace import Trace

SIDECARS = (".tags.json", ".report.json")  # the Traces page's tags, evaluation reports: not traces


def trace_files(folder: Path) -> list[Path]:
    """Every JSON file under the folder (sub-folders too, e.g. one per method), sidecar files left out."""
    return sorted(p for p in folder.rglob("*.json") if p.is_file() and not p.name.endswith(SIDECARS))


@app.command(name="diagnose")
def diagnose_(
    path: Annotated[Path, typer.Argument(help="a saved trace (JSON), or a folder of them (searched recursively)")],
    json_out: Annotated[bool, typer.Option("--json", help="print the diagnosis as JSON instead of tables")] = False,
    k: Annotated[int, typer.Option("--k", min=1, help="a gold passage is found when within the top k")] = 5,
    qa: Annotated[Path | None, typer.Option("--qa", help="the QA set the runs were asked from — a QA file, or an index "
                                                         "folder for its own (gear qa): the gold passages of runs "
                                                         "that do not know theirs, and the text of gold passages no "
                                                         "stage reached")] = None,
    gold: Annotated[str | None, typer.Option("--gold", "-g", help="mark the passages that answer the question of "
                                                                  "one trace, ID[,ID]: diagnosed against them")]
    = None,
    answer: Annotated[list[str] | None, typer.Option("--answer", "-a", help="with --gold: the right answer (repeat "
                                                                            "for aliases)")] = None,
    index: Annotated[Path | None, typer.Option("--index", help="the index the runs were made on: names gold passages "
                                                               "no list of a run held (ids of --gold, QA records), "
                                                               "tells extraction from graph by its triples and "
                                                               "re-runs the beams and base retrievers (no model)")]
    = None,
) -> None:
    """Where each gold passage was lost (stage by stage), the answer checks and the proposed error category."""
    with friendly_errors():
        from gear.diagnosis import diagnose, summarise
        from gear.diagnosis.gold_marks import diagnose_marked, with_gold
        from gear.diagnosis.gold_texts import QATexts
        from gear.events import RunStarted
        from gear.saved import SavedFileError, inside
        from gear.trace import Trace, TraceError

        texts = QATexts(qa_questions(qa) if qa is not None else [])
        engine = open_index(index) if index is not None else None
        backend = engine.backend if engine is not None else None
        if not path.exists():
            raise TraceError(f"{path}: file not found")
        if gold is not None and not path.is_file():
            raise TraceError(f"{path}: --gold marks the passages of one run: give a trace file, not a folder")

        def run(file: Path) -> Diagnosis:
            trace = Trace.load(file)
            if gold is not None:
                ids, passages = marked(trace, gold, backend)
                return diagnose_marked(trace, ids, answer or None, passages=passages, k=k, probe=engine)
            start = trace.first(RunStarted)
            from_record = texts.gold_for(trace, backend.find_passage if backend is not None else None) \
                if start is not None and not start.gold_passage_ids else None
            if from_record is not None:
                ids, passages, answers = from_record
                return labelled(diagnose(with_gold(trace, ids, answers or None), k, passages,
                                         hop=texts.hop_for(trace), probe=engine), trace)
            return labelled(diagnose(trace, k, texts.for_trace(trace), hop=texts.hop_for(trace), probe=engine), trace)

        if path.is_file():
            d = run(path)
            if json_out:
                typer.echo(json_text(d.to_dict()))
            else:
                print_diagnosis(d, Trace.load(path))
            return
        rows: list[tuple[Path, Diagnosis]] = []
        skipped: list[str] = []
        reports: list[Path] = []
        for file in trace_files(path):
            try:
                inside(file, [path], str(path))  # a link in the folder that points out of it is not followed
                rows.append((file, run(file)))
            except SavedFileError as exc:
                if file.resolve().is_relative_to(path.resolve()) and is_report(file):  # said once, below
                    reports.append(file)
                    continue
                skipped.append(str(exc))
                console.print(f"[yellow]skipped:[/yellow] {esc_term(str(exc))}", highlight=False, soft_wrap=True)
        if reports:
            skipped.append(reports_note(path, reports))
            console.print(f"[yellow]skipped:[/yellow] {esc_term(reports_note(path, reports))}", highlight=False)
        if not rows:
            raise TraceError(f"{path}: no trace found in this folder")
        summary = summarise(d for _, d in rows)
        if json_out:
            data: dict[str, Any] = {"diagnoses": [{"file": str(f), **d.to_dict()} for f, d in rows],
                                    "summary": summary.to_dict(), "skipped": skipped}
            typer.echo(json_text(data))
        else:
            print_folder(path, rows, summary)


def labelled(d: Diagnosis, trace: Trace) -> Diagnosis:
    """The diagnosis with its run named as evaluations name runs — the retriever and the method (gear.methods), then
    the variant the diagnosis tells apart ("Hybrid GeAR (paper)") — so that a folder's summary counts BM25's and
    Hybrid's runs of one method apart."""
    from dataclasses import replace

    from gear import methods
    from gear.events import RunStarted

    start = trace.first(RunStarted)
    retriever = str((start.settings or {}).get("retriever") or "") if start is not None else ""
    variant = d.run[len(d.method):].strip() if d.run.startswith(d.method) else ""
    return replace(d, run=" ".join(part for part in (methods.run_label(d.method, retriever), variant) if part))


def reports_note(folder: Path, reports: list[Path]) -> str:
    n = len(reports)
    return (f"{n} evaluation report{'s' if n != 1 else ''} in {folder} (" + ", ".join(p.name for p in reports[:2])
            + (", …" if n > 2 else "") + f"): {'they are' if n != 1 else 'it is'} not a trace; the traces of each are "
            "in the folder of its name, read here")


def qa_questions(qa: Path) -> list[Question]:
    """A QA file's questions, or an index folder's own (gear.data.qa_set)."""
    from gear.data.qa_set import load_own_qa, require_index
    from gear.data.questions import load_qa

    if qa.is_dir():
        return [q.as_question() for q in load_own_qa(require_index(qa))]
    return load_qa(qa)[0]


def open_index(index: Path) -> Engine:
    """The index the runs were made on, as an engine: its backend names passages, and it is the diagnosis's probe."""
    from gear.agent.engine import Engine
    from gear.cli.app import settings_from
    from gear.data.qa_set import require_index

    return Engine.open(require_index(index), settings_from())


def marked(trace: Trace, gold: str, backend: SearchBackend | None) -> tuple[list[int], dict[int, tuple[str, str]]]:
    """The ids a person marked on a saved run and their (title, text): from the index when given, else from the
    passages the run showed (one line for an id it did not show)."""
    from gear.diagnosis.gold_marks import MarkError, parse_ids, passages_of, run_passages

    ids = parse_ids(gold)
    if backend is not None:
        return ids, passages_of(backend, ids)
    shown = {p.id: (p.title, p.text) for p in run_passages(trace)}
    missing = [i for i in ids if i not in shown]
    if missing:
        raise MarkError(f"passage {missing[0]} is in no list of this run: give --index INDEX (the index it was made "
                        "on) to name it")
    return ids, {i: shown[i] for i in ids}


# -- tables -----------------------------------------------------------------------------------------------------------
def print_diagnosis(d: Diagnosis, trace: Trace | None = None) -> None:
    """The stage table, the proposed category with its evidence, the answer check; for a run that does not know its
    gold passages, how to name them and (given its trace) the passages it showed, to pick from."""
    from gear.diagnosis import cell, stage_label

    if not d.passages and (d.answer is None or not d.answer.gold):
        out.print(f"{esc_term(d.question)}\nNothing to diagnose: this run does not know its gold passages. Mark them: "
                  "gear diagnose TRACE --gold ID[,ID] [--answer A] (--index INDEX for passages the run did not "
                  "show; gear qa suggest INDEX finds them), or --qa QA_FILE_OR_INDEX when the question is in a QA "
                  "set.", highlight=False)
        if trace is not None:
            from gear.diagnosis.gold_marks import run_passages

            table = Table(title="the passages this run showed (the final ranking first)")
            for name in ("id", "title", "text"):
                table.add_column(name)
            for view in run_passages(trace)[:15]:
                flat = " ".join(view.text.split())
                table.add_row(str(view.id), esc_term(view.title), esc_term(flat[:90] + ("…" if len(flat) > 90 else "")))
            out.print(table)
        return
    table = Table(title=esc_term(f"{d.question_id or 'question'} · {d.run} ({d.family})"),
                  caption=esc_term(d.question), caption_justify="left")
    table.add_column("stage")
    for p in d.passages:  # a column per gold passage: a question has 2-4, a method up to 10 stages
        table.add_column(esc_term(p.title), justify="center")
    for stage in d.stages:
        table.add_row(stage_label(stage, d.k), *(cell(p, stage) for p in d.passages))
    table.add_section()
    table.add_row("lost at", *(_stage(p.lost_at, d.k) if p.status != "found" else "found" for p in d.passages))
    table.add_row("dropped at", *(_stage(p.dropped_at, d.k) if p.status != "found" else "" for p in d.passages))
    table.add_row("hop", *(esc_term(str(p.hop)) if p.hop is not None else "?" for p in d.passages))
    table.add_row("responsible", *(esc_term(p.responsible or "") for p in d.passages))
    out.print(table)
    out.print(category_words(d), highlight=False)
    for line, refs in d.lines():
        steps = step_words(refs)
        out.print(f"  • {esc_term(line)}" + (f" [dim]→ {esc_term(steps)}[/dim]" if steps else ""), highlight=False)
    for p in d.passages:
        if p.status != "found":
            missed = next((e for e in p.evidence if e.startswith(stage_label(p.dropped_at or p.lost_at or "", d.k)
                                                                  + ":")), "")
            out.print(f"  {esc_term(p.title)}: {esc_term(missed)}", highlight=False)
    a = d.answer
    if a is not None:
        em = "—" if a.em is None else f"{a.em:.0f}"
        f1 = "—" if a.f1 is None else f"{a.f1:.2f}"
        parts = [f"answer {a.answer!r} (gold {' / '.join(map(repr, a.gold)) or '—'}): EM {em}, F1 {f1}",
                 f"gold answer in the QA passages: {_yes(a.in_qa_passages)}",
                 f"in a gold passage: {_yes(a.in_gold_passages)}"]
        if a.answerable_wrong:
            parts.append(f"'answerable' but wrong at iteration {', '.join(map(str, a.answerable_wrong))}")
        if a.rejected:
            parts.append(f"verdict rejected as ungrounded at iteration {', '.join(map(str, a.rejected))}")
        out.print(esc_term("; ".join(parts + a.notes)), highlight=False)
    for note in d.notes:
        out.print(f"[yellow]note:[/yellow] {esc_term(note)}", highlight=False)


def category_words(d: Diagnosis) -> str:
    """The proposal in one line, Rich markup, its words escaped: "category: ranking — final ranking (second: reader
    hallucination) · confidence high", or "undetermined between graph and extraction"."""
    from gear.diagnosis import CATEGORY_LABELS

    if d.category is None:
        return "category: [bold]undetermined[/bold]"
    if d.undetermined:
        first, other = d.undetermined[0], d.undetermined[-1]
        head = f"undetermined between {first} ({CATEGORY_LABELS.get(first, first)}) and {other} " \
               f"({CATEGORY_LABELS.get(other, other)})"
        return f"category: [bold]{esc_term(head)}[/bold] · confidence {esc_term(d.confidence)}"
    second = f" (second: {CATEGORY_LABELS.get(d.second, d.second)})" if d.second else ""
    form = " · the answer is right in substance" if d.answer_form_only else ""
    return (f"category: [bold]{esc_term(d.category)}[/bold] — {esc_term(CATEGORY_LABELS.get(d.category, ''))}"
            f"{esc_term(second)} · confidence {esc_term(d.confidence)}{esc_term(form)}")


def step_words(refs: Sequence[Ref]) -> str:
    """Where an evidence line points: its steps, in the run's order ("base list (iteration 2), final ranking")."""
    from gear.diagnosis import RUN_LEVEL
    from gear.diagnosis.claims import where

    ordered = sorted(refs, key=lambda r: (r.iteration == RUN_LEVEL, r.iteration))
    return ", ".join(dict.fromkeys(where(r) for r in ordered))


def print_folder(folder: Path, rows: list[tuple[Path, Diagnosis]], summary: Summary) -> None:
    from gear.diagnosis import CATEGORIES, stage_label

    names = short_names(folder, [file for file, _ in rows])
    table = Table(title=esc_term(f"{folder}: {len(rows)} traces"), caption_justify="left",
                  caption="trace: its path in the folder, without what every trace's path shares; category: the "
                          "proposed one (the second dimmed)")
    # at 80 columns every cell stays whole: names wrap (folded where they have no space), categories keep one line
    table.add_column("trace", overflow="fold")
    for name in ("run", "hop", "found", "lost at"):
        table.add_column(name, max_width=12 if out.width < 100 else None)
    table.add_column("category", no_wrap=True, min_width=max(map(len, CATEGORIES)))
    for name, (_, d) in zip(names, rows, strict=True):
        lost = ", ".join(dict.fromkeys(_stage(p.lost_at, d.k) for p in d.passages
                                       if p.status != "found" and p.lost_at))
        category = esc_term(d.category or "undetermined") + (f"\n[dim]{esc_term(d.second)}[/dim]" if d.second else "")
        table.add_row(esc_term(name.replace("/", "/\n")), esc_term(d.run), esc_term(d.hop),
                      f"{d.found}/{len(d.passages)}", lost or "—", category)
    out.print(table)
    for run in summary.runs.values():
        out.print(esc_term(f"{run.run}: {_count(run.questions, 'question')}, {_count(run.gold, 'gold passage')}, "
                         f"{run.found} found within {run.k}"), highlight=False)
        stages = Table()
        for name in ("stage", "reached", "lost at", "dropped at"):
            stages.add_column(name, justify="right" if name != "stage" else "left")
        for stage in run.stages:
            stages.add_row(stage_label(stage, run.k), str(run.funnel.get(stage, 0)), str(run.lost_at.get(stage, 0)),
                           str(run.dropped_at.get(stage, 0)))
        out.print(stages)
        out.print("categories: " + ", ".join(f"{c} {n}" for c, n in run.categories.items()) +
                  ("; second: " + ", ".join(f"{c} {n}" for c, n in run.second.items()) if run.second else ""),
                  highlight=False)
        for hop, counts in run.by_hop.items():
            out.print(esc_term(hop_line(hop, asdict(counts), run.k)), highlight=False)
        if run.answers:
            out.print("answers: " + ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in run.answers.items()),
                      highlight=False)
        if run.cut_short:
            out.print(f"[yellow]{run.cut_short} run(s) cut short[/yellow]: diagnosed as far as they went")


def hop_line(hop: str, counts: Mapping[str, Any], k: int) -> str:
    """One hop type's line of a diagnosis summary (`gear diagnose`, `gear eval`): questions, gold passages found,
    where the others were lost and the proposed categories — where a comparison question loses its second entity.
    Plain text: the hop type is the QA set's, so the printer escapes it."""
    from gear.diagnosis import stage_label

    lost = ", ".join(f"{stage_label(s, k)} {n}" for s, n in counts["lost_at"].items()) or "—"
    categories = ", ".join(f"{c} {n}" for c, n in counts["categories"].items())
    return f"  {hop}: {_count(counts['questions'], 'question')}, {counts['found']}/{counts['gold']} found; " \
           f"lost at {lost}; {categories}"


def _stage(stage: str | None, k: int) -> str:
    from gear.diagnosis import stage_label

    return stage_label(stage, k) if stage else "—"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"
