"""Plain-text narration of trace events, for `gear ask` and logs: one event in, a few readable lines out."""

from __future__ import annotations

from collections.abc import Iterable

from rich.markup import escape

from gear import trace as t
from gear.trace import events as ev


def _spo(triple: Iterable[str]) -> str:
    return "(" + ", ".join(escape(x) for x in triple) + ")"


def _passages(views: list[t.PassageView], limit: int = 5) -> list[str]:
    lines = [f"    {n}. {'★ ' if p.gold else ''}{escape(p.title)}  [{p.score:.3f}]" for n, p in
             enumerate(views[:limit], 1)]
    if len(views) > limit:
        lines.append(f"    … {len(views) - limit} more")
    return lines


def narrate(event: ev.Event) -> list[str]:
    """Lines describing one event (rich markup; passage text and LLM output are escaped)."""
    n = event.iteration
    match event:
        case ev.RunStarted():
            return [f"[bold]Question:[/bold] {escape(event.question)}",
                    f"method {event.method}, retriever {event.retriever}"]
        case ev.IterationStarted():
            return ["", f"[bold cyan]── Iteration {n} ──[/bold cyan]  q({n}) = {escape(event.query)}"]
        case ev.BaseRetrieved():
            return [f"  base passages C′q (k={event.k}):", *_passages(event.passages)]
        case ev.ProximalTriples():
            head = "proximal triples T′q" if event.role == "sync" else "gist triples T^G"
            return [f"  {head} — {escape(event.source)}:", *(f"    {_spo(x)}" for x in event.triples)]
        case ev.TriplesLinked():
            return ["  tripleLink:", *(f"    {_spo(link.proximal)} → "
                                       f"{_spo(link.linked.spo) if link.linked else '—'}  (cos {link.similarity:.2f})"
                                       for link in event.links)]
        case ev.InitialNodes():
            return [f"  initial nodes ({event.source}): {len(event.triples)} triples"]
        case ev.BeamsSearched():
            by_id = {x.id: x for x in event.triples}
            lines = [f"  beam search: b={event.width}, l={event.length}, γ={event.gamma:g}, "
                     f"diversity {'on' if event.diversity else 'off'}, {event.candidates_scored} candidates scored"]
            for i, beam in enumerate(event.steps[-1][:5] if event.steps else [], 1):
                chain = " → ".join(_spo(by_id[x].spo) for x in beam.triple_ids if x in by_id)
                lines.append(f"    beam {i} [{beam.score:.3f}]: {chain}")
            return lines
        case ev.PassagesFused():
            return ["  fused passages Cq(n) = RRF(C̃q, C′q):", *_passages(event.passages)]
        case ev.GistUpdated():
            return [f"  gist memory G({n}): {len(event.memory)} triples"]
        case ev.Reasoned():
            if event.rejected:
                return [f"  reasoner: answerable — {escape(event.answer)} (cites {event.cited}); "
                        f"[red]{escape(event.rejected)}[/red]"]
            verdict = "[green]answerable[/green]" if event.answerable else "[yellow]not answerable[/yellow]"
            detail = event.answer if event.answerable else event.reason
            return [f"  reasoner: {verdict} — {escape(detail)}"]
        case ev.QueryRewritten():
            note = " (asked again: the first rewrite repeated an earlier query)" if event.retried else ""
            note += " [yellow](repeats an earlier query)[/yellow]" if event.repeated else ""
            return [f"  next query q({n + 1}): {escape(event.query)}{note}"]
        case ev.LLMCalled():
            origin = {"memo": "memo: identical call earlier, no model work now",
                      "record": "recorded answer, as it cost when recorded"}.get(event.source, "model")
            return [f"    [dim]LLM {escape(event.step)}: {event.prompt_tokens:,} + {event.completion_tokens:,} tokens, "
                    f"{event.seconds:.1f} s ({origin})[/dim]"]
        case ev.PassagesLinked():
            return ["", f"[bold]passageLink[/bold] for {len(event.links)} gist triples"]
        case ev.PPRSeeded():
            kept = sum(f.kept for f in event.facts)
            note = f", {kept} kept by the filter" if event.filtered else ""
            lines = [f"  PPR seeds: {len(event.facts)} triples matched{note}:",
                     *(f"    {_spo(f.triple.spo)} [{f.score:.2f}]" if f.kept else
                       f"    [dim]✗ {_spo(f.triple.spo)} [{f.score:.2f}][/dim]" for f in event.facts),
                     "    entities: " + ", ".join(f"{escape(e.name)} ({e.seed:.3f})" for e in event.entities)
                     + f"; every passage × {event.passage_weight:g} of its dense score"]
            if event.fallback:
                lines.append("  [yellow]no triple seeds the graph: the dense ranking stands[/yellow]")
            return lines
        case ev.PPRRanked():
            g = event.graph
            size = (f" over {g.get('entities', 0):,} entities + {g.get('passages', 0):,} passages "
                    f"({g.get('relation_edges', 0):,} relation, {g.get('context_edges', 0):,} context, "
                    f"{g.get('synonym_edges', 0):,} synonym edges)") if g else ""
            best = sorted(event.entities, key=lambda e: -e.score)[:8]
            top = ", ".join(f"{escape(e.name)} [{e.score:.4f}]" for e in best)
            return [f"  Personalized PageRank, d={event.damping:g}, {event.iterations} iterations{size}",
                    f"    top entities: {top}", "  passages by PPR score:", *_passages(event.passages)]
        case ev.PassagesAdded():
            return [f"  retrieval added {len(event.passages)} new passages ({len(event.collected)} collected):",
                    *_passages(event.passages)]
        case ev.ThoughtWritten():
            mark = "[green]final[/green] " if event.final else ""
            return [f"  {mark}thought: {escape(event.thought) or '—'}"]
        case ev.FinalRanking():
            return ["", "[bold]Final ranking:[/bold]", *_passages(event.passages, 10)]
        case ev.Answered():
            score = f"  (EM {event.em:.0f}, F1 {event.f1:.2f})" if event.em is not None else ""
            return [f"[bold]Answer:[/bold] {escape(event.answer)}{score}"]
        case ev.Warned():
            return [f"  [yellow]warning:[/yellow] {escape(event.message)}"]
        case ev.RunFinished():
            recall = "  ".join(f"R@{k} {100 * v:.0f}" for k, v in event.recall.items())
            return [f"done in {event.total_ms / 1000:.1f} s over {event.iterations} iteration(s)  {recall}"]
    return []
