"""Where a 2Wiki question's second-hop passage is lost, and whether the graph could have reached it,
for docs/results.md: 2Wiki names each hop in `evidences` (e.g. ["Custodio de señoras", "director", "Hugo Sofovich"]),
so for every gold passage the question does not name, the bridge entity is known: the evidence's object. The triple
graph joins the first passage to the second only if the extracted triples of both name that entity with the same
string (the paper links triples by exact entity names; HippoRAG-style PPR adds synonym edges).

    .venv/bin/python scripts/twowiki_bridges.py docs/evals/twowiki_hybrid_naive.json docs/evals/twowiki_ppr.json …

For each report: per type, the unnamed gold passages found and lost (in the run its diagnosis kept), each by whether
the bridge entity is in both passages' triples, only in the first's, only in the second's, or in neither. Reads the
reports, the QA file and the OpenIE file only (nothing re-run).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# the one rule for "the question names this passage" (scripts/ is on the path when a script runs)
from by_type_tables import bare, named_in

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "2wikimultihopqa"
QA = ASSETS / "2wikimultihopqa_dev82.json"
OPENIE = ASSETS / "openie_2wikimultihopqa_qwen2.5-coder-1.5b_1294.json"
LINKS = ("in both", "first only", "second only", "neither", "no evidence names it")


def entities(triples: list[list[str]]) -> set[str]:
    return {t[i].casefold().strip() for t in triples if len(t) == 3 for i in (0, 2)}


def bridge_link(evidences: list[list[str]], title: str, triples: dict[str, set[str]]) -> str:
    """Whether the entity that leads to the passage `title` (the object of the evidence whose object names it) is an
    entity of both passages' triples: the first's (the evidence's subject) and the passage's own."""
    evidence = next((e for e in evidences if len(e) == 3 and bare(e[2]) and bare(e[2]) in bare(title)), None)
    if evidence is None:
        return "no evidence names it"
    first, bridge = triples.get(evidence[0], set()), evidence[2].casefold().strip()
    second = triples.get(title, set())
    return {(True, True): "in both", (True, False): "first only", (False, True): "second only",
            (False, False): "neither"}[(bridge in first, bridge in second)]


def bridges(report: dict[str, Any], qa: dict[str, dict[str, Any]],
            triples: dict[str, set[str]]) -> dict[str, Counter[tuple[str, str]]]:
    """Per type: (found or lost, bridge link) → unnamed gold passages."""
    out: dict[str, Counter[tuple[str, str]]] = {}
    for q in report["per_question"]:
        diagnosis, record = q.get("diagnosis"), qa.get(q["id"])
        if not diagnosis or record is None:
            continue
        for passage in diagnosis["passages"]:
            if named_in(q["question"], passage["title"]):
                continue
            where = "found" if passage["status"] == "found" else "lost"
            link = bridge_link(record.get("evidences") or [], passage["title"], triples)
            out.setdefault(record.get("type") or "all", Counter())[(where, link)] += 1
    return out


def table(name: str, counts: dict[str, Counter[tuple[str, str]]]) -> list[str]:
    lines = [f"{name} — gold passages the question does not name, by whether both passages' triples name the bridge "
             "entity", "", "| type | found | lost | lost: " + " | lost: ".join(LINKS) + " |",
             "| --- | --- | --- |" + " --- |" * len(LINKS)]
    for kind, c in counts.items():
        found = sum(n for (w, _), n in c.items() if w == "found")
        lost = sum(n for (w, _), n in c.items() if w == "lost")
        lines.append(f"| {kind} | {found} | {lost} | " + " | ".join(str(c[("lost", link)]) for link in LINKS) + " |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--qa", type=Path, default=QA)
    parser.add_argument("--openie", type=Path, default=OPENIE)
    args = parser.parse_args(argv)
    try:
        qa = {r["_id"]: r for r in json.loads(args.qa.read_text(encoding="utf-8"))}
        triples = {d["title"]: entities(d.get("extracted_triples") or [])
                   for d in json.loads(args.openie.read_text(encoding="utf-8"))["docs"]}
        reports = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in args.reports}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"not readable: {exc}", file=sys.stderr)
        return 1
    for name, report in reports.items():
        print("\n".join(table(name, bridges(report, qa, triples))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
