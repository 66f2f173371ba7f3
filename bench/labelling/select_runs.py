"""Which runs the blind labellers label (bench/labelling/PROTOCOL.md): failing runs only, chosen by a fixed rule from
the recorded Table 1 reports (docs/evals), never by hand; bench/labelling/replay_runs.sh then replays exactly these.

Per dataset (MuSiQue's 20-question subset, HotpotQA, 2Wiki) and method: GeAR 12 runs, hybrid + SyncGE 6 and HippoRAG
w/ IRCoT 6; half that missed a gold passage in the final top 5, half that found every one and answered wrong (EM 0),
filled from the other half where one is short. Within a group the order is sha256 of "dataset/method/question id",
and the run ids R001… follow the same hash over all chosen runs, so datasets and methods interleave. A run "missed" a
gold passage when its final ranking holds one only past 5: for GeAR and IRCoT (one run per question) the report's R@5;
for SyncGE, whose report keeps the k = 15 run's trace and answer (the paper's per-cut-off protocol), that run's final
ranks from its diagnosis's stage marks — the run that is replayed and labelled.

    python bench/labelling/select_runs.py OUT.json
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = {"musique": "dev50_every2_n20", "hotpotqa": "hotpotqa_every1_n100", "2wiki": "twowiki_every1_n82"}
QUOTA = {"gear_paper": 12, "sync": 6, "ircot_ppr": 6}
K = "5"


def key(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def missed_gold(question: dict, method: str) -> bool:
    if method != "sync":
        return question["recall"][K] < 1.0
    ranks = [next((m["rank"] for m in p["marks"] if m["stage"] == "final" and m["reached"]), None)
             for p in question["diagnosis"]["passages"]]
    return any(r is None or r > int(K) for r in ranks)


def chosen(report: dict, dataset: str, method: str, n: int) -> list[dict]:
    missed, wrong = [], []
    for q in report["per_question"]:
        if missed_gold(q, method):
            missed.append(q)
        elif q.get("em") == 0.0:
            wrong.append(q)
    for group in (missed, wrong):
        group.sort(key=lambda q: key(dataset, method, q["id"]))
    half = n // 2
    take_missed = min(len(missed), max(half, n - len(wrong)))
    picked = missed[:take_missed] + wrong[: n - take_missed]
    return [{"dataset": dataset, "method": method, "question_id": q["id"], "missed_gold": missed_gold(q, method)}
            for q in picked]


def main(out: str) -> None:
    runs = []
    for dataset, prefix in REPORTS.items():
        for method, n in QUOTA.items():
            path = ROOT / "docs" / "evals" / f"{prefix}_{method}.json"
            runs += chosen(json.loads(path.read_text(encoding="utf-8")), dataset, method, n)
    runs.sort(key=lambda r: key(r["dataset"], r["method"], r["question_id"]))
    for n, run in enumerate(runs, 1):
        run["run"] = f"R{n:03d}"
    Path(out).write_text(json.dumps([{"run": r.pop("run"), **r} for r in runs], indent=1) + "\n", encoding="utf-8")
    print(f"{len(runs)} runs → {out}")


if __name__ == "__main__":
    main(sys.argv[1])
