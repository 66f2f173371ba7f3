"""What is reproducible when the embedded model is asked again? Recorded requests of real runs, asked anew.

The requests: the recorded GeAR runs of two sources, collected question by question in run order by replaying each
run from assets/llm_cache through the engine (the replay must give the recorded report's answer, which proves they are
the recorded requests; a question that does not replay on this CPU is left out and named):
- musique: the 20-question dev50 subset (`scripts/eval_subset.sh`; docs/evals/dev50_every2_n20_gear_paper)
- hotpotqa: the 100 HotpotQA questions (`scripts/hotpotqa_table1.sh gear`; docs/evals/hotpotqa_every1_n100_gear_paper)

Each request is asked of llama-server (the embedded model, gear's own client, streamed as the agent streams) in these
ways, and each answer's text is compared with the recording and between the ways:
- warm: a question's requests in run order, prompt cache on, 1 slot — what a live run (or "Ask the model again") sees:
  each request finds the previous ones' heads in the server's cache;
- cold: the same requests each read whole (`cache_prompt: false`), 1 slot — gear's exact mode (GEAR_LLM_EXACT). Warm
  and cold alternate question by question on the same server, so the load of the machine weighs on both alike and the
  cost of exact mode is a ratio measured in one run;
- cold again (the first M requests): read whole once more — does exact mode give the same text twice?
- warm repeat (the first M): each asked twice in a row with the cache on — the second reads all but the prompt's last
  token from the cache;
- 4 slots (the first M): a server with 4 slots, read whole, 4 requests at a time — other requests in the same batch.

Where texts differ, whether what the agent parses from them (triples, verdict, next query, answer) differs too. With
--runs K, the first K MuSiQue questions are also run whole, asked afresh (as "Ask the model again" does), with the cache
on and in exact mode, their answers and recall compared with the recorded report's.

A few hundred requests take hours on a 2-core CPU, more than one working session, so every finished unit (a question's
warm and cold answers; a group of the repeat ways; a whole run) is one line of a journal kept in the repository
(docs/evals/reproducibility/asks.jsonl); a killed run, or the next session's, goes on from there. `--until HH:MM` stops
before a unit that would start after that time; `--report` only reads the journal and writes the table
(docs/evals/reproducibility/summary.json).

    .venv/bin/python bench/llm_reproducibility.py [--questions 120] [--repeat 48] [--runs 0] [--until 13:05]
    .venv/bin/python bench/llm_reproducibility.py --report
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.llm_replay_diff import CACHE, Collector, parsed  # noqa: E402

JOURNAL = ROOT / "docs" / "evals" / "reproducibility" / "asks.jsonl"
SUMMARY = JOURNAL.with_name("summary.json")
GROUP = 4  # the repeat ways go 4 requests at a time: one journal line, one batch of the 4-slot server
#: the settings of a recorded report a replay must take over (the rest are gear's defaults, as when recorded)
REPLAYED_SETTINGS = ("retriever", "max_iterations", "agent_k", "beam_width", "beam_length", "gamma", "diversity",
                     "gist_read", "gist_read_k", "read_order", "qa_top_k", "passage_link_k", "answer")


@dataclass(frozen=True)
class Source:
    """A recorded GeAR run whose requests are asked again."""

    name: str
    index: str
    qa: str
    report: str
    every: int
    limit: int


SOURCES = (
    Source("musique", "data/indexes/musique", "assets/musique/musique_dev50.json",
           "docs/evals/dev50_every2_n20_gear_paper.json", 2, 20),
    Source("hotpotqa", "data/indexes/hotpotqa", "assets/hotpotqa/hotpotqa_train100.json",
           "docs/evals/hotpotqa_every1_n100_gear_paper.json", 1, 100),
)


def request_key(request: dict[str, Any]) -> str:
    """A request's identity: its messages, schema and token limit (what the model is asked)."""
    body = json.dumps([request["messages"], request["schema"], request["max_tokens"]], sort_keys=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def recorded_runs(source: Source) -> Iterator[tuple[str, list[dict[str, Any]], list[str]]]:
    """Question by question: its id, the requests its recorded run sent to the model in run order (the memo answers
    repeats) and each one's step; or its id and no requests when it does not replay on this CPU (a near-tie of two
    passages' scores can rank them the other way on another CPU, and then a prompt differs from the recorded one)."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from gear.events import LLMCalled
    from gear.llm import LLMError, MemoLLM
    from gear.llm.model_files import DEFAULT_MODEL
    from gear.llm.replay import CachedLLM

    report = json.loads((ROOT / source.report).read_text(encoding="utf-8"))
    recorded = {q["id"]: q for q in report["per_question"]}
    taken = {name: report["settings"][name] for name in REPLAYED_SETTINGS if name in report["settings"]}
    settings = Settings(_env_file=None).with_(method="gear", prompts="paper", llm="replay", llm_cache_dir=CACHE,
                                              **taken)
    engine = Engine.open(ROOT / source.index, settings)
    for q in [q for q in load_qa(ROOT / source.qa)[0][:: source.every][: source.limit] if q.id in recorded]:
        collector = Collector(CachedLLM.replay_only(CACHE, model=DEFAULT_MODEL.name))
        engine.set_llm(settings, MemoLLM(collector))  # type: ignore[arg-type]
        try:
            run = engine.retrieve(q.question, k=settings.agent_k, settings=settings, answers=q.answers)
        except LLMError:
            yield q.id, [], []
            continue
        if run.answer != recorded[q.id]["answer"]:
            yield q.id, [], []
            continue
        yield q.id, collector.requests, [c.step for c in run.trace.of(LLMCalled) if c.source != "memo"]


def ask(llm: Any, request: dict[str, Any]) -> dict[str, Any]:
    """One request's answer: text, tokens, seconds, prompt tokens taken from the server's cache."""
    result = llm.complete(request["messages"], json_schema=request["schema"], max_tokens=request["max_tokens"],
                          on_text=lambda piece: None)
    return {"text": result.text, "completion_tokens": result.completion_tokens, "seconds": round(result.seconds, 3),
            "cached": result.cached_prompt_tokens or 0, "prompt_tokens": result.prompt_tokens}


def ask_together(llm: Any, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(lambda r: ask(llm, r), requests))


def read_journal() -> list[dict[str, Any]]:
    if not JOURNAL.exists():
        return []
    return [json.loads(line) for line in JOURNAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_line(line: dict[str, Any]) -> None:
    JOURNAL.parent.mkdir(parents=True, exist_ok=True)
    with JOURNAL.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


class Clock:
    """Stops before a unit that would begin after --until (a unit is not cut in half: its line would be lost)."""

    def __init__(self, until: str | None) -> None:
        self.until = None
        if until:
            hour, minute = (int(x) for x in until.split(":"))
            now = dt.datetime.now()
            self.until = now.replace(hour=hour, minute=minute, second=0, microsecond=0)

    def up(self) -> bool:
        return self.until is not None and dt.datetime.now() >= self.until


def ask_pairs(clock: Clock, questions: int) -> None:
    """Each replaying question's requests asked warm (run order, cache on), then cold (read whole), one line each."""
    from gear.llm.embedded import EmbeddedLLM

    done = {(line["source"], line["id"]) for line in read_journal() if line["kind"] in ("pair", "unreplayed")}
    warm, cold = EmbeddedLLM(parallel=1), EmbeddedLLM(parallel=1, exact=True)
    seen = len(done)
    for source in SOURCES:
        if seen >= questions:
            return
        for qid, requests, steps in recorded_runs(source):
            if (source.name, qid) in done:
                continue
            if seen >= questions or clock.up():
                return
            seen += 1
            if not requests:
                write_line({"kind": "unreplayed", "source": source.name, "id": qid})
                print(f"  {source.name} {qid}: does not replay on this CPU", flush=True)
                continue
            assert len(requests) == len(steps), (qid, len(requests), len(steps))
            warm_answers = [ask(warm, r) for r in requests]
            cold_answers = [ask(cold, r) for r in requests]
            write_line({"kind": "pair", "source": source.name, "id": qid, "requests": [
                {"key": request_key(r), "step": s, "prompt_tokens": r["prompt_tokens"], "recorded": r["text"],
                 "warm": w, "cold": c}
                for r, s, w, c in zip(requests, steps, warm_answers, cold_answers, strict=True)]})
            differ = sum(w["text"] != c["text"] for w, c in zip(warm_answers, cold_answers, strict=True))
            print(f"  {source.name} {qid}: {len(requests)} requests, warm "
                  f"{sum(a['seconds'] for a in warm_answers):.0f} s, cold {sum(a['seconds'] for a in cold_answers):.0f}"
                  f" s, {differ} differ warm/cold ({dt.datetime.now():%H:%M})", flush=True)


def repeat_requests(m: int) -> list[tuple[str, dict[str, Any]]]:
    """The first m requests of the journal's pairs, with their messages (collected again by replay)."""
    wanted: list[tuple[str, str, str]] = []
    for line in read_journal():
        if line["kind"] == "pair":
            wanted.extend((line["source"], line["id"], r["key"]) for r in line["requests"])
    wanted = wanted[:m]
    found: dict[str, dict[str, Any]] = {}
    for source in SOURCES:
        ids = {qid for name, qid, _ in wanted if name == source.name}
        if not ids:
            continue
        for qid, requests, _ in recorded_runs(source):
            if qid in ids:
                found.update((request_key(r), r) for r in requests)
                ids.discard(qid)
            if not ids:
                break
    return [(key, found[key]) for _, _, key in wanted]


def pending(groups: list[list[tuple[str, dict[str, Any]]]], kind: str, done: set[tuple[str, tuple[str, ...]]],
            clock: Clock) -> Iterator[tuple[tuple[str, ...], list[dict[str, Any]]]]:
    """The groups with no journal line of this kind yet, each as its keys and requests, until the clock is up."""
    for group in groups:
        keys = tuple(k for k, _ in group)
        if (kind, keys) in done:
            continue
        if clock.up():
            return
        yield keys, [r for _, r in group]


def ask_repeats(clock: Clock, m: int) -> None:
    """The repeat ways on the first m requests, GROUP at a time: cold again and warm twice on the 1-slot server, then
    the 4-slot server (read whole, GROUP at once)."""
    from gear.llm.embedded import EmbeddedLLM

    todo = repeat_requests(m)
    done = {(line["kind"], tuple(line["keys"])) for line in read_journal() if "keys" in line}
    groups = [todo[i: i + GROUP] for i in range(0, len(todo) - len(todo) % GROUP, GROUP)]
    warm, cold = EmbeddedLLM(parallel=1), EmbeddedLLM(parallel=1, exact=True)
    for keys, requests in pending(groups, "repeat", done, clock):
        again = [ask(cold, r) for r in requests]
        firsts, seconds = [], []
        for r in requests:
            firsts.append(ask(warm, r))
            seconds.append(ask(warm, r))
        write_line({"kind": "repeat", "keys": list(keys), "cold_again": again, "warm_first": firsts,
                    "warm_second": seconds})
        print(f"  repeat: {len(keys)} requests ({dt.datetime.now():%H:%M})", flush=True)
    if clock.up():
        return
    warm.server.stop()
    four = EmbeddedLLM(parallel=GROUP, exact=True)
    for keys, requests in pending(groups, "four_slots", done, clock):
        write_line({"kind": "four_slots", "keys": list(keys), "answers": ask_together(four, requests)})
        print(f"  4 slots: {len(keys)} requests ({dt.datetime.now():%H:%M})", flush=True)
    four.server.stop()


def ask_runs(clock: Clock, k: int, index: Path) -> None:
    """The first k MuSiQue subset questions run whole, asked afresh with the cache on and in exact mode."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from gear.llm import fresh_llm
    from gear.measures import recall_at

    source = SOURCES[0]
    recorded = {q["id"]: q for q in json.loads((ROOT / source.report).read_text(encoding="utf-8"))["per_question"]}
    done = {(line["id"], line["exact"]) for line in read_journal() if line["kind"] == "run"}
    questions = [q for q in load_qa(ROOT / source.qa)[0][:: source.every][: source.limit] if q.id in recorded][:k]
    for exact in (False, True):
        settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", prompts="paper", llm="local",
                                                  llm_exact=exact)
        engine = Engine.open(index, settings)
        for q in questions:
            if (q.id, exact) in done:
                continue
            if clock.up():
                return
            gold = engine.gold_ids(q.gold)
            started = time.perf_counter()
            run = engine.retrieve(q.question, k=settings.agent_k, settings=settings, gold=gold, question_id=q.id,
                                  answers=q.answers, llm=fresh_llm(engine.llm(settings)))
            mine = {str(c): recall_at(run.ids, gold, c) for c in (5, 10, 15)}
            theirs = recorded[q.id]
            write_line({"kind": "run", "id": q.id, "exact": exact, "answer": [theirs["answer"], run.answer],
                        "recall": [theirs["recall"], mine], "seconds": round(time.perf_counter() - started, 1)})
            print(f"  run {q.id} ({'exact' if exact else 'cache on'}): answer "
                  f"{'same' if run.answer == theirs['answer'] else 'DIFFERS'}", flush=True)


def compare(name: str, pairs: list[tuple[str, str, str]]) -> dict[str, Any]:
    """(step, text, reference text) triples: how many differ in text, and in what the agent parses from them, each
    with the 95 % confidence interval of its share (Clopper-Pearson: with 0 of n, the share it rules out)."""
    from scipy.stats import binomtest

    text = sum(a != r for _, a, r in pairs)
    parse = sum(a != r and parsed(s, a) != parsed(s, r) for s, a, r in pairs)

    def interval(count: int) -> list[float] | None:
        if not pairs:
            return None
        ci = binomtest(count, len(pairs)).proportion_ci(confidence_level=0.95)
        return [round(100 * ci.low, 1), round(100 * ci.high, 1)]

    return {"name": name, "requests": len(pairs), "differ_text": text, "differ_parse": parse,
            "text_ci_pct": interval(text), "parse_ci_pct": interval(parse)}


def exact_cost(journal: list[dict[str, Any]]) -> dict[str, Any]:
    """What exact mode costs: cold over warm seconds, over all requests and question by question (the median and
    quartiles of the per-question ratios: one question slowed by another process weighs little)."""
    import numpy as np

    lines = [line for line in journal if line["kind"] == "pair"]
    warm = np.array([sum(r["warm"]["seconds"] for r in line["requests"]) for line in lines])
    cold = np.array([sum(r["cold"]["seconds"] for r in line["requests"]) for line in lines])
    if not len(lines):
        return {"warm": 0.0, "cold": 0.0, "exact_cost": None}
    ratios = cold / warm
    return {"warm": round(float(warm.sum()), 1), "cold": round(float(cold.sum()), 1),
            "exact_cost": round(float(cold.sum() / warm.sum()), 3),
            "per_question": [round(float(q), 3) for q in np.percentile(ratios, [25, 50, 75])]}


def summarise(journal: list[dict[str, Any]]) -> dict[str, Any]:
    """The table of docs/results.md, "Reproducibility", from the journal."""
    pairs = [r | {"source": line["source"]} for line in journal if line["kind"] == "pair" for r in line["requests"]]
    by_key = {r["key"]: r for r in pairs}
    repeats = [(k, i, line) for line in journal if line["kind"] == "repeat" for i, k in enumerate(line["keys"])]
    fours = [(k, i, line) for line in journal if line["kind"] == "four_slots" for i, k in enumerate(line["keys"])]
    table = [
        compare("warm (run order, cache on, 1 slot) vs recorded",
                [(r["step"], r["warm"]["text"], r["recorded"]) for r in pairs]),
        compare("cold (read whole) vs recorded", [(r["step"], r["cold"]["text"], r["recorded"]) for r in pairs]),
        compare("cold vs warm", [(r["step"], r["cold"]["text"], r["warm"]["text"]) for r in pairs]),
        compare("cold again vs cold", [(by_key[k]["step"], line["cold_again"][i]["text"], by_key[k]["cold"]["text"])
                                       for k, i, line in repeats]),
        compare("warm repeat: the second ask vs the first",
                [(by_key[k]["step"], line["warm_second"][i]["text"], line["warm_first"][i]["text"])
                 for k, i, line in repeats]),
        compare("warm repeat: the second ask vs cold",
                [(by_key[k]["step"], line["warm_second"][i]["text"], by_key[k]["cold"]["text"])
                 for k, i, line in repeats]),
        compare("4 slots (read whole, 4 at a time) vs cold (1 slot)",
                [(by_key[k]["step"], line["answers"][i]["text"], by_key[k]["cold"]["text"]) for k, i, line in fours]),
    ]
    runs = [line for line in journal if line["kind"] == "run"]
    return {
        "questions": len({(line["source"], line["id"]) for line in journal if line["kind"] == "pair"}),
        "unreplayed": [f"{line['source']}:{line['id']}" for line in journal if line["kind"] == "unreplayed"],
        "requests": len(pairs), "by_source": dict(Counter(r["source"] for r in pairs)),
        "steps": dict(Counter(r["step"] for r in pairs)), "table": table,
        "seconds": exact_cost(journal),
        "prompt_tokens": sum(r["warm"]["prompt_tokens"] for r in pairs),
        "cached_when_warm": sum(r["warm"]["cached"] for r in pairs),
        "runs": [{"exact": exact, "questions": len(rows), "same_answer": sum(r["answer"][0] == r["answer"][1]
                                                                               for r in rows),
                  "same_recall": sum(all(abs(r["recall"][1][c] - r["recall"][0][c]) < 1e-9 for c in r["recall"][1])
                                     for r in rows)}
                 for exact in (False, True) if (rows := [r for r in runs if r["exact"] is exact])],
    }


def report() -> dict[str, Any]:
    summary = summarise(read_journal())
    print(f"{summary['requests']} requests of {summary['questions']} questions ({summary['by_source']}; "
          f"{summary['steps']}); not replaying here: {len(summary['unreplayed'])}")
    for row in summary["table"]:
        print(f"{row['name']:<52} {row['differ_text']:>4} of {row['requests']:<4} differ in text "
              f"(95 % CI {row['text_ci_pct']} %), {row['differ_parse']:>4} in what the agent parses "
              f"({row['parse_ci_pct']} %)")
    s = summary["seconds"]
    print(f"time: warm {s['warm']:.0f} s, cold {s['cold']:.0f} s for the same requests (exact mode ×{s['exact_cost']};"
          f" per question, quartiles {s.get('per_question')}); prompt tokens from the cache when warm: "
          f"{summary['cached_when_warm']} of {summary['prompt_tokens']}")
    for row in summary["runs"]:
        print(f"runs asked afresh ({'exact' if row['exact'] else 'cache on'}): {row['same_answer']} of "
              f"{row['questions']} answers and {row['same_recall']} recalls as recorded")
    SUMMARY.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=120, help="questions whose requests are asked warm and cold")
    parser.add_argument("--repeat", type=int, default=48, help="requests asked cold again, twice warm, on 4 slots (M)")
    parser.add_argument("--runs", type=int, default=0, help="MuSiQue questions also run whole, warm and exact (K)")
    parser.add_argument("--until", help="HH:MM: start no unit after this time")
    parser.add_argument("--report", action="store_true", help="only summarise the journal")
    args = parser.parse_args()
    if not args.report:
        os.environ["GEAR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gear-bench-repro-")  # our own servers
        clock = Clock(args.until)
        print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        ask_pairs(clock, args.questions)
        if args.repeat and not clock.up():
            ask_repeats(clock, args.repeat)
        if args.runs and not clock.up():
            ask_runs(clock, args.runs, ROOT / SOURCES[0].index)
        print(f"load average after: {os.getloadavg()[0]:.2f}", flush=True)
    report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
