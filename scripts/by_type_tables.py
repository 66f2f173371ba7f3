"""Markdown tables by question type from saved `gear eval` reports, for docs/results.md (2Wiki's comparison,
bridge_comparison, compositional and inference; MuSiQue's hop types): recall per type, and each report's diagnosis
per type — gold passages found, where the others were lost, the proposed categories — and the same per type for the
gold passages the question names against those it does not (a comparison's two entities against a bridge comparison's
directors or fathers, reached only through the first passage).

    .venv/bin/python scripts/by_type_tables.py docs/evals/twowiki_hybrid.json docs/evals/twowiki_hybrid_naive.json …

Reads the reports only (nothing re-run); a report saved before its diagnosis counted questions under their QA
record's type has a single group "all" and says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def _cells(values: dict[str, float], ks: list[str]) -> str:
    return " / ".join(f"{values[k]:.1f}".removesuffix(".0") if values[k] == 100 else f"{values[k]:.1f}"
                      for k in ks if k in values)


def recall_table(reports: dict[str, dict[str, Any]]) -> list[str]:
    ks = sorted({k for r in reports.values() for k in r["recall"]}, key=int)
    types = list(dict.fromkeys(t for r in reports.values() for t in r["by_hop"]))
    counts = {t: next(r["by_hop"][t]["n"] for r in reports.values() if t in r["by_hop"]) for t in types}
    lines = [f"R@{' / R@'.join(ks)} by type", "",
             "| type | n | " + " | ".join(reports) + " |", "| --- | --- |" + " --- |" * len(reports)]
    for t in types:
        lines.append(f"| {t} | {counts[t]} | " + " | ".join(
            _cells(r["by_hop"][t]["recall"], ks) if t in r["by_hop"] else "—" for r in reports.values()) + " |")
    return lines


def diagnosis_table(name: str, report: dict[str, Any]) -> list[str]:
    lines = []
    for run, summary in (report.get("diagnosis") or {}).items():
        hops = summary["by_hop"]
        lines += [f"{name} — diagnosis of run {run!r} at k = {summary['k']}"
                  + (" (one group: saved before the diagnosis counted questions by type)" if set(hops) == {"all"}
                     else ""), "",
                  "| type | questions | gold found | lost at | proposed categories |",
                  "| --- | --- | --- | --- | --- |"]
        for hop, h in hops.items():
            lost = ", ".join(f"{s} {n}" for s, n in h["lost_at"].items()) or "—"
            categories = ", ".join(f"{c} {n}" for c, n in h["categories"].items())
            lines.append(f"| {hop} | {h['questions']} | {h['found']} / {h['gold']} | {lost} | {categories} |")
        lines.append("")
    return lines


def bare(title: str) -> str:
    """A title without its "(film)"-style qualifier, case aside: how a question or a triple names the passage."""
    return title.split(" (")[0].casefold().strip()


def named_in(question: str, title: str) -> bool:
    """Whether the question names the passage's title."""
    return bare(title) in question.casefold()


def where_at(passage: dict[str, Any], diagnosed_k: int, k: int | None) -> str:
    """"found", or the stage a gold passage was lost at, at cut-off k. A multi-step run (GeAR, IRCoT) is one run
    diagnosed at its report's smallest cut-off, so at a larger k a passage its final list ranks within k is found; a
    single-step report's diagnosis is of its k = 15 run and stands as it is (its other cut-offs are other runs)."""
    if passage["status"] == "found":
        return "found"
    if k is not None and k > diagnosed_k:
        final = next((m["rank"] for m in passage.get("marks", []) if m["stage"] == "final" and m["reached"]), None)
        if final is not None and final <= k:
            return "found"
    return passage["lost_at"] or passage["status"]


def named_table(name: str, report: dict[str, Any], k: int | None = None) -> list[str]:
    """Gold passages the question names against the others, per type: found, and where the others were lost, in the
    run the diagnosis kept (at cut-off k where it is a multi-step run's: `where_at`)."""
    groups: dict[tuple[str, bool], Counter[str]] = {}
    at = None
    for q in report["per_question"]:
        d = q.get("diagnosis")
        if not d:
            continue
        at = max(d["k"], k or 0)
        for p in d["passages"]:
            where = where_at(p, d["k"], k)
            groups.setdefault((q.get("hop") or "all", named_in(q["question"], p["title"])), Counter())[where] += 1
    if not groups:
        return []
    lines = [f"{name} — gold passages the question names and the others, at k = {at}", "",
             "| type | named: found / all | named: lost at | not named: found / all | not named: lost at |",
             "| --- | --- | --- | --- | --- |"]
    for hop in dict.fromkeys(h for h, _ in groups):
        cells = []
        for named in (True, False):
            c = groups.get((hop, named), Counter())
            lost = ", ".join(f"{s} {n}" for s, n in c.most_common() if s != "found") or "—"
            cells += [f"{c['found']} / {c.total()}", lost]
        lines.append(f"| {hop} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--k", type=int, default=None,
                        help="the cut-off of the named / not named tables of multi-step runs, which are diagnosed at "
                             "their smallest cut-off (default: as diagnosed)")
    args = parser.parse_args(argv)
    reports: dict[str, dict[str, Any]] = {}
    for path in args.reports:
        try:
            reports[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{path}: not a readable report ({exc})", file=sys.stderr)
            return 1
    print("\n".join(recall_table(reports)), end="\n\n")
    for name, report in reports.items():
        print("\n".join(diagnosis_table(name, report) + named_table(name, report, args.k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
