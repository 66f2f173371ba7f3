#!/usr/bin/env bash
# The runs of the blind-labelled set (bench/labelling/runs.json, chosen by select_runs.py), replayed from the bundled
# recordings with every trace kept: GeAR (paper prompts), hybrid + SyncGE and HippoRAG w/ IRCoT, each with the
# settings of its Table 1 report. No model is asked (GEAR_LLM=replay: a prompt that was not recorded is an error).
# SyncGE is single-step: its labelled run is the k = 15 run of the paper's protocol, the one its report keeps.
# Usage: bench/labelling/replay_runs.sh [OUT] [RUNS.json]   (default runs/labelling; OUT/<dataset>/<method>/<id>.json)
source "$(dirname "$0")/../../scripts/eval_common.sh"
OUT="${1:-runs/labelling}"
RUNS="${2:-bench/labelling/runs.json}"
declare -A QA=([musique]=assets/musique/musique_dev50.json [hotpotqa]=assets/hotpotqa/hotpotqa_train100.json
               [2wiki]=assets/2wikimultihopqa/2wikimultihopqa_dev82.json)
declare -A ITERATIONS=([musique]=4 [hotpotqa]=2 [2wiki]=2)
subset() {  # subset DATASET METHOD: the QA file's records of the chosen runs, in the file's order
  .venv/bin/python - "$RUNS" "${QA[$1]}" "$1" "$2" "$OUT/$1/$2.qa.json" <<'PY'
import json, sys
runs, qa, dataset, method, out = sys.argv[1:]
wanted = {r["question_id"] for r in json.load(open(runs)) if r["dataset"] == dataset and r["method"] == method}
records = [r for r in json.load(open(qa)) if str(r.get("id") or r.get("_id")) in wanted]
json.dump(records, open(out, "w"))
PY
}
replay() {  # replay DATASET METHOD [VAR=value ...] -- gear eval options
  local dataset=$1 method=$2; shift 2
  local vars=()
  while [[ $1 != "--" ]]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$OUT/$dataset/$method"
  subset "$dataset" "$method"
  env GEAR_LLM=replay GEAR_LLM_CACHE_DIR=assets/llm_cache "${vars[@]}" $GEAR eval "data/indexes/$dataset" \
    "$OUT/$dataset/$method.qa.json" "$@" --traces "$OUT/$dataset/$method" \
    --json "$OUT/$dataset/$method.report.json" >/dev/null
  echo "$dataset/$method: $(ls "$OUT/$dataset/$method" | wc -l) traces"
}
for dataset in musique hotpotqa 2wiki; do
  demo_index "$dataset"
  n=${ITERATIONS[$dataset]}
  replay "$dataset" gear_paper -- -r hybrid -m gear --prompts paper --max-iterations "$n" --k 5,10,15
  replay "$dataset" sync -- -r hybrid -m sync --prompts paper --k 15
  replay "$dataset" ircot_ppr GEAR_IRCOT_RETRIEVER=ppr GEAR_IRCOT_MAX_STEPS="$n" -- -r hybrid -m ircot \
    --prompts paper --k 5,10,15
done
