"""`gear qa`: the index's own QA set (gear.data.qa_set) — add a question with the passages that answer it, list,
remove, and find the passages that may hold an answer. `gear eval INDEX` without a QA file evaluates on it and
`gear diagnose --qa INDEX` reads its gold passages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from gear.cli.app import app, console, friendly_errors, out, settings_from
from gear.cli.terminal import esc_term

if TYPE_CHECKING:
    from gear.store.base import SearchBackend

qa_app = typer.Typer(no_args_is_help=True, help="The index's own QA set: questions with the passages that answer "
                                                "them (own_qa.json in the index folder).")
app.add_typer(qa_app, name="qa")

IndexArg = Annotated[Path, typer.Argument(help="index directory")]
AnswerOpt = Annotated[list[str] | None, typer.Option("--answer", "-a", help="the right answer; repeat for aliases")]


def open_backend(index: Path) -> SearchBackend:
    """The index's passages and search (the embedder loads only when a dense search needs it)."""
    from gear.agent.engine import Engine
    from gear.data.qa_set import require_index

    return Engine.open(require_index(index), settings_from()).backend


def snippet(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@qa_app.command("add")
def add(
    index: IndexArg,
    question: Annotated[str, typer.Argument(help="the question")],
    gold: Annotated[str, typer.Option("--gold", "-g", help="ids of the passages that answer it: ID[,ID]")],
    answer: AnswerOpt = None,
) -> None:
    """Add a question with its gold passages (ids from `gear qa suggest`, `gear retrieve` or the app); saving the
    same question again updates it."""
    with friendly_errors():
        from gear.data.qa_set import GoldRef, new_question, save_question
        from gear.diagnosis.gold_marks import parse_ids, passages_of

        ids = parse_ids(gold)
        texts = passages_of(open_backend(index), ids)
        q = new_question(question, [GoldRef(*texts[i], i) for i in ids], answer or [], source="cli")
        stored, created = save_question(index, q)
        out.print(f"{'added' if created else 'updated'} {stored.id}: {esc_term(stored.question)}", highlight=False)
        for ref in stored.gold:
            out.print(f"  gold #{ref.passage_id} {esc_term(ref.title)}", highlight=False)
        if stored.answers:
            out.print(f"  answer {esc_term(' / '.join(stored.answers))}", highlight=False)


@qa_app.command("list")
def list_(index: IndexArg) -> None:
    """The questions of the index's own QA set, with their gold passages as the index holds them now."""
    with friendly_errors():
        from gear.data.qa_set import load_own_qa, qa_path, require_index

        questions = load_own_qa(require_index(index))
        if not questions:
            out.print(f"{esc_term(str(qa_path(index)))}: no questions yet (gear qa add, or “Save as a test question” "
                      "on the Ask page)", highlight=False)
            return
        backend = open_backend(index)
        table = Table(title=esc_term(f"{qa_path(index)}: {len(questions)} question(s)"))
        for name in ("id", "question", "answer", "gold passages (id now)"):
            table.add_column(name)
        missing = 0
        for q in questions:
            golds = []
            for ref in q.gold:
                pid = backend.find_passage(ref.title, ref.text)
                missing += pid is None
                golds.append(f"{ref.title} #{pid}" if pid is not None else f"{ref.title} (not in the index)")
            table.add_row(esc_term(q.id), esc_term(q.question), esc_term(" / ".join(q.answers) or "—"),
                          esc_term("; ".join(golds)))
        out.print(table)
        if missing:
            console.print(f"[yellow]warning:[/yellow] {missing} gold passage(s) are no longer in the index (rebuilt "
                          "or updated since): their questions' recall counts only the others", highlight=False)


@qa_app.command("remove")
def remove(
    index: IndexArg,
    question: Annotated[str, typer.Argument(help="the question's id (own__…) or its words")],
) -> None:
    """Remove one question from the index's own QA set."""
    with friendly_errors():
        from gear.data.qa_set import remove_question

        removed = remove_question(index, question)
        out.print(f"removed {removed.id}: {esc_term(removed.question)}", highlight=False)


@qa_app.command("suggest")
def suggest(
    index: IndexArg,
    question: Annotated[str, typer.Argument(help="the question")],
    answer: AnswerOpt = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="a saved run of the question: also the passages its "
                                                                "QA step and gist reader drew from")] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="search results and suggestions to show")] = 10,
) -> None:
    """The passages the question finds (BM25 and dense over title and text, fused) and those that may hold the
    answer: to confirm with `gear qa add INDEX "question" --gold ID[,ID]` (nothing is marked on its own)."""
    with friendly_errors():
        from gear.diagnosis.gold_marks import search, suggest
        from gear.trace import Trace

        backend = open_backend(index)
        run = Trace.load(trace) if trace is not None else None
        hits = search(backend, question, k)
        table = Table(title=esc_term(f"the index's passages for: {question}"))
        for name in ("rank", "id", "title", "text"):
            table.add_column(name)
        for n, p in enumerate(hits, 1):
            table.add_row(str(n), str(p.id), esc_term(p.title), esc_term(snippet(p.text)))
        out.print(table)
        found = suggest(backend, question, answer or [], run, limit=k)
        if not answer and run is None:
            out.print("Give --answer (and --trace) for suggestions of the passages that hold it.", highlight=False)
            return
        if not found:
            out.print("No passage holds that answer" + (" and the run drew on none" if run else "") + ".",
                      highlight=False)
            return
        table = Table(title="suggested gold passages (confirm with gear qa add … --gold ID[,ID])")
        for name in ("id", "title", "why"):
            table.add_column(name)
        for s in found:
            table.add_row(str(s.id), esc_term(s.title), esc_term("; ".join(s.reasons)))
        out.print(table)
