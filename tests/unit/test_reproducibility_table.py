"""docs/results.md's reproducibility table is the journal's: the numbers a person reads there are what
bench/llm_reproducibility.py --report finds in docs/evals/reproducibility/asks.jsonl (and its summary.json)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llm_reproducibility", ROOT / "bench" / "llm_reproducibility.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def test_the_docs_reproducibility_numbers_are_the_journals() -> None:
    b = bench()
    summary = b.summarise(b.read_journal())
    assert json.loads(b.SUMMARY.read_text(encoding="utf-8")) == json.loads(json.dumps(summary))  # summary.json current
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    section = text[text.index("**Asked again: "):text.index("## Table 1 on 2Wiki")]
    assert f"**Asked again: {summary['requests']} recorded requests" in section
    assert f"of {summary['questions']} real GeAR" in section.replace("\n", " ")
    names = ("warm vs recorded", "cold vs recorded", "cold vs warm", "cold again vs cold",
             "warm twice: the second vs the first", "warm twice: the second vs cold", "4 slots")
    for name, row in zip(names, summary["table"], strict=True):
        t, p = row["text_ci_pct"], row["parse_ci_pct"]
        cells = (f"| {row['requests']} | {row['differ_text']} ({t[0]}–{t[1]} %) "
                 f"| {row['differ_parse']} ({p[0]}–{p[1]} %) |")
        line = next(line for line in section.splitlines() if line.lstrip("| *").startswith(name))
        assert line.replace("**", "").endswith(cells), (line, cells)
    assert f"×{summary['seconds']['exact_cost']:.2f}" in section
    quartiles = " / ".join(f"{q:.2f}" for q in summary["seconds"]["per_question"])
    assert quartiles in section
    for row, name in zip(summary["runs"], ("cache on (warm)", "exact mode"), strict=True):
        line = next(line for line in section.splitlines() if line.startswith(f"| {name} |"))
        assert line.startswith(f"| {name} | {row['questions']} | {row['same_answer']} | {row['same_recall']} |"), line
