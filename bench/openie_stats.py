"""How dense and how grounded the bundled triples are, dataset by dataset (docs/results.md, "Table 1 on 2Wiki":
why the graph rows differ from the paper's). For each OpenIE file: passages, triples, triples a passage (mean and
the share of passages with none), and the share of triples whose subject and object both occur in their passage's
title or text (case and spacing aside) — a triple whose ends are nowhere in the passage links it to entities it
does not name.

    .venv/bin/python bench/openie_stats.py [OPENIE.json …]   (default: every bundled OpenIE file)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gear.data.openie import load_openie  # noqa: E402

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def stats(path: Path) -> dict[str, float]:
    docs, _ = load_openie(path)
    triples = grounded = empty = 0
    for d in docs:
        passage = _norm(f"{d.title} {d.text}")
        triples += len(d.triples)
        empty += not d.triples
        grounded += sum(_norm(s) in passage and _norm(o) in passage for s, _, o in d.triples)
    return {"passages": len(docs), "triples": triples, "per_passage": triples / max(1, len(docs)),
            "no_triples_pct": 100 * empty / max(1, len(docs)), "grounded_pct": 100 * grounded / max(1, triples)}


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "assets").glob("*/openie_*.json"))
    print("| OpenIE file | passages | triples | a passage | passages without | both ends in the passage |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in paths:
        s = stats(path)
        print(f"| `{path.name}` | {s['passages']:,} | {s['triples']:,} | {s['per_passage']:.1f} | "
              f"{s['no_triples_pct']:.1f} % | {s['grounded_pct']:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
