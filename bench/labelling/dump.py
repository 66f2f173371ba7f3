"""Neutral dumps of runs for blind labelling (bench/labelling/PROTOCOL.md): each run as Markdown — the question, its
gold answers and gold passages (text and the index's own triples), the dataset's decomposition where it has one, and
every step as it happened — with no diagnosis in it (no stage table, no "lost at", no category).

    python bench/labelling/dump.py RUNS.json TRACES_DIR OUT_DIR

RUNS.json lists the runs (`run`, `dataset`, `method`, `question_id`, `trace`: a path under TRACES_DIR); the index of
each dataset is the demo index the runs were made on (data/indexes/<dataset>).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from gear.agent.engine import Engine
from gear.events import (
    Answered,
    BaseRetrieved,
    BeamsSearched,
    Event,
    FinalRanking,
    GistUpdated,
    InitialNodes,
    IterationStarted,
    PassagesAdded,
    PassagesExpanded,
    PassagesFused,
    PassagesLinked,
    PPRRanked,
    PPRSeeded,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    RunStarted,
    ThoughtWritten,
    TriplesLinked,
    Warned,
)
from gear.trace import PassageView, Trace, TripleView

ROOT = Path(__file__).resolve().parents[2]
INDEXES = {"musique": "musique", "hotpotqa": "hotpotqa", "2wiki": "2wiki"}
QA_FILES = {"musique": ROOT / "assets/musique/musique_dev50.json",
            "hotpotqa": ROOT / "assets/hotpotqa/hotpotqa_train100.json",
            "2wiki": ROOT / "assets/2wikimultihopqa/2wikimultihopqa_dev82.json"}
METHOD_NAMES = {"gear_paper": "GeAR (paper prompts, hybrid base retriever)",
                "sync": "hybrid + SyncGE (single step: base → read → tripleLink → beam search → fusion; QA over the "
                        "top 5)",
                "ircot_ppr": "HippoRAG w/ IRCoT (retrievals over PPR, interleaved with chain-of-thought sentences)"}
LIST_SHOWN = 10
FINAL_SHOWN = 15


def raw_records(dataset: str) -> dict[str, dict]:
    data = json.loads(QA_FILES[dataset].read_text(encoding="utf-8"))
    return {str(r.get("id") or r.get("_id")): r for r in data}


def decomposition(dataset: str, record: dict) -> list[str]:
    """What the dataset says about the question's hops (MuSiQue's decomposition, 2Wiki's evidence triples, HotpotQA's
    supporting sentences' titles and type)."""
    if dataset == "musique":
        return [f"{n}. {step['question']} → {step['answer']}"
                for n, step in enumerate(record.get("question_decomposition", []), 1)]
    if dataset == "2wiki":
        return [f"type: {record.get('type')}"] + [f"evidence: ⟨{', '.join(e)}⟩" for e in record.get("evidences", [])]
    return [f"type: {record.get('type')}; supporting titles: "
            + ", ".join(dict.fromkeys(t for t, _ in record.get("supporting_facts", [])))]


class Dumper:
    def __init__(self, engine: Engine, trace: Trace, dataset: str, record: dict) -> None:
        self.engine, self.trace, self.dataset, self.record = engine, trace, dataset, record
        start = trace.first(RunStarted)
        assert start is not None
        self.start = start
        self.gold = {pid: f"G{n}" for n, pid in enumerate(start.gold_passage_ids, 1)}
        self.shown: dict[int, tuple[str, str]] = {}  # passages a reader or the QA step read: id → (title, text)
        self.lines: list[str] = []

    # -- small formats ---------------------------------------------------------------------------------------------
    def mark(self, pid: int) -> str:
        return f" ★{self.gold[pid]}" if pid in self.gold else ""

    def passage(self, view: PassageView) -> str:
        return f"[#{view.id}]{self.mark(view.id)} {view.title}"

    def triple(self, view: TripleView) -> str:
        return f"⟨{view.subject} | {view.predicate} | {view.object}⟩ (triple #{view.id} of [#{view.passage_id}]" \
               f"{self.mark(view.passage_id)} {view.passage_title})"

    @staticmethod
    def spo(triple: Iterable[str]) -> str:
        return "⟨" + " | ".join(triple) + "⟩"

    def ranked(self, passages: list[PassageView], shown: int = LIST_SHOWN) -> None:
        for n, p in enumerate(passages[:shown], 1):
            self.lines.append(f"   {n}. {self.passage(p)}")
        if len(passages) > shown:
            rest = [f"{n}{self.mark(p.id)}" for n, p in enumerate(passages, 1) if n > shown and p.id in self.gold]
            self.lines.append(f"   … {len(passages) - shown} more" + (f" (gold among them at rank {', '.join(rest)})"
                                                                      if rest else ""))

    def read_passages(self, ids: Iterable[int]) -> None:
        ids = list(ids)
        missing = [i for i in ids if i not in self.shown]
        for p in self.engine.backend.passages(missing):
            self.shown[p.id] = (p.title, p.text)

    # -- the dump -------------------------------------------------------------------------------------------------
    def dump(self, run_id: str, method: str) -> str:
        s, rec = self.start, self.record
        self.lines += [f"# Run {run_id} — {self.dataset} · {METHOD_NAMES.get(method, method)}", "",
                       f"**Question:** {s.question}", "",
                       "**Gold answers:** " + " | ".join(f'"{a}"' for a in s.answers), ""]
        steps = decomposition(self.dataset, rec)
        if steps:
            self.lines += ["**The dataset's decomposition:**", *[f"- {x}" for x in steps], ""]
        settings = s.settings
        parts = [f"base retriever {s.retriever}"]
        if method != "ircot_ppr":
            parts.append(f"beam width {settings.get('beam_width')}, length {settings.get('beam_length')}")
        if method == "gear_paper":
            parts.append(f"at most {settings.get('max_iterations')} iterations")
        if method == "ircot_ppr":
            parts.append(f"at most {settings.get('ircot_max_steps')} retrieval steps")
        parts.append(f"QA over the top {settings.get('qa_top_k')} of the final ranking")
        self.lines += ["Settings: " + "; ".join(parts) + ".", ""]
        self.gold_section()
        self.lines += ["## The run, step by step", ""]
        for event in self.trace.events:
            self.event(event)
        self.texts_section()
        return "\n".join(self.lines) + "\n"

    def gold_section(self) -> None:
        self.lines += ["## Gold passages", ""]
        backend = self.engine.backend
        for pid, tag in self.gold.items():
            p = backend.passages([pid])[0]
            self.lines += [f"### {tag} — [#{pid}] {p.title}", "", p.text, ""]
            triples = backend.triples(backend.triples_of(pid))
            self.lines.append(f"Index triples of this passage ({len(triples)}):")
            self.lines += [f"- ⟨{t.subject} | {t.predicate} | {t.object}⟩ (#{t.id})" for t in triples] or ["- (none)"]
            self.lines.append("")

    def event(self, e: Event) -> None:  # one branch per event kind, in the order a run emits them
        L = self.lines
        if isinstance(e, IterationStarted):
            L += [f"### Iteration {e.iteration}", "", f"Query q({e.iteration}): {e.query}", ""]
        elif isinstance(e, BaseRetrieved):
            L.append(f"**Base retrieval** (query: \"{e.query}\", top {e.k}):")
            self.ranked(e.passages)
            L.append("")
        elif isinstance(e, ProximalTriples):
            who = {"sync": "Reader (over the base passages)", "gist": "Gist reader"}.get(e.role, f"Reader ({e.role})")
            self.read_passages(e.passage_ids)
            L.append(f"**{who}** read passages {', '.join(f'[#{i}]{self.mark(i)}' for i in e.passage_ids)} "
                     f"and wrote {len(e.triples)} triple(s):")
            L += [f"   - {self.spo(t)}" for t in e.triples] or ["   - (none)"]
            if e.raw and not e.triples:
                L.append(f"   raw output: {e.raw[:400]!r}")
            L.append("")
        elif isinstance(e, TriplesLinked):
            L.append("**tripleLink** (each reader triple → the most similar index triple):")
            for link in e.links:
                target = self.triple(link.linked) if link.linked else "(nothing)"
                L.append(f"   - {self.spo(link.proximal)} → {target}, similarity {link.similarity:.2f}")
            L.append("")
        elif isinstance(e, InitialNodes):
            if e.source == "naive":
                L += [f"**Initial nodes**: all {len(e.triples)} triples of the base passages.", ""]
        elif isinstance(e, BeamsSearched):
            views = {t.id: t for t in e.triples}
            kept = e.steps[-1] if e.steps else []
            diversity = "on" if e.diversity else "off"
            L.append(f"**Beam search** (width {e.width}, length {e.length}, diversity {diversity}): {len(kept)} kept "
                     "beam(s):")
            for n, beam in enumerate(kept, 1):
                chain = " → ".join(self.triple(views[t]) if t in views else f"#{t}" for t in beam.triple_ids)
                L.append(f"   {n}. {chain} (score {beam.score:.2f})")
            L.append("")
        elif isinstance(e, PassagesExpanded):
            L.append("**Passages of the beams** (C̃q, in order):")
            self.ranked(e.passages)
            L.append("")
        elif isinstance(e, PassagesFused):
            L.append("**Fused list** Cq = RRF(passages of the beams, base list):")
            self.ranked(e.passages)
            L.append("")
        elif isinstance(e, GistUpdated):
            L.append("**Gist memory** now:")
            L += [f"   - {self.spo(t)}" for t in e.memory] or ["   - (empty)"]
            L.append("")
        elif isinstance(e, Reasoned):
            verdict = "answerable" if e.answerable else "not answerable"
            L += [f"**Reasoner:** {verdict}" + (f", answer \"{e.answer}\"" if e.answer else "")
                  + f". Why: {e.reason}" + (f" (rejected: {e.rejected})" if e.rejected else ""), ""]
        elif isinstance(e, QueryRewritten):
            L += [f"**Rewriter:** next query \"{e.query}\"" + (" (repeats an earlier query)" if e.repeated else ""),
                  ""]
        elif isinstance(e, Warned):
            L += [f"_warning: {e.message}_", ""]
        elif isinstance(e, PassagesLinked):
            L.append("**passageLink** (for each gist triple, the passages its text retrieves):")
            for link in e.links:
                L.append(f"   - {self.spo(link.triple)} → "
                         + ", ".join(self.passage(p) for p in link.passages[:5]))
            L.append("")
        elif isinstance(e, PPRSeeded):
            facts = [f for f in e.facts if f.kept]
            L.append(f"**PPR seeds** for \"{e.query}\": {len(facts)} fact(s) kept:")
            L += [f"   - {self.triple(f.triple)}" for f in facts]
            L.append("")
        elif isinstance(e, PPRRanked):
            L.append("**PPR ranking** (personalised PageRank over the entity graph):")
            self.ranked(e.passages)
            L.append("")
        elif isinstance(e, PassagesAdded):
            self.read_passages(e.collected)
            L.append(f"**Retrieval** with \"{e.query}\" added {len(e.passages)} new passage(s):")
            self.ranked(e.passages)
            L.append("")
        elif isinstance(e, ThoughtWritten):
            L += [f"**Thought{' (final)' if e.final else ''}:** {e.thought}", ""]
        elif isinstance(e, FinalRanking):
            L += [f"## End of the run ({e.iteration} iteration(s))", "", "**Final ranking:**"]
            self.ranked(e.passages, FINAL_SHOWN)
            found = [self.gold[p.id] for p in e.passages[:5] if p.id in self.gold]
            L += ["", f"Gold passages in the final top 5: {', '.join(found) or 'none'} (of {len(self.gold)}).", ""]
        elif isinstance(e, Answered):
            self.read_passages(e.passage_ids)
            L += [f"**QA step** read {', '.join(f'[#{i}]{self.mark(i)}' for i in e.passage_ids)} and answered "
                  f"\"{e.answer}\" (EM {e.em:.0f}, F1 {e.f1:.2f})." if e.em is not None else
                  f"**QA step** answered \"{e.answer}\".", ""]

    def texts_section(self) -> None:
        self.lines += ["## Texts of the passages the readers and the QA step read", ""]
        for pid, (title, text) in sorted(self.shown.items()):
            self.lines.append(f"- [#{pid}]{self.mark(pid)} **{title}**: {text}")
        self.lines.append("")


def main(runs_path: str, traces: str, out: str) -> None:
    runs = json.loads(Path(runs_path).read_text(encoding="utf-8"))
    Path(out).mkdir(parents=True, exist_ok=True)
    engines: dict[str, Engine] = {}
    records: dict[str, dict[str, dict]] = {}
    for run in runs:
        dataset = run["dataset"]
        if dataset not in engines:
            engines[dataset] = Engine.open(ROOT / "data" / "indexes" / INDEXES[dataset])
            records[dataset] = raw_records(dataset)
        trace = Trace.load(Path(traces) / run["trace"])
        text = Dumper(engines[dataset], trace, dataset, records[dataset][run["question_id"]]).dump(run["run"],
                                                                                                    run["method"])
        (Path(out) / f"{run['run']}.md").write_text(text, encoding="utf-8")
    print(f"{len(runs)} dumps in {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
