#!/usr/bin/env bash
# The runs of the blind-labelled set (bench/labelling/README.md), replayed from the bundled recordings with every
# question's trace kept: GeAR (paper prompts), hybrid + SyncGE and HippoRAG w/ IRCoT on MuSiQue's 20-question recorded
# subset, HotpotQA's 100 and 2Wiki's 82 questions, each with the settings of its Table 1 report. No model is asked
# (GEAR_LLM=replay: a prompt that was not recorded is an error). SyncGE is single-step: its one kept run per question
# is the k = 15 run of the paper's protocol (its answer is the QA step over that run's top 5).
# Usage: bench/labelling/replay_runs.sh [OUT]      (default runs/labelling; then OUT/<dataset>/<method>/<id>.json)
source "$(dirname "$0")/../../scripts/eval_common.sh"
OUT="${1:-runs/labelling}"
replay() {  # replay DATASET INDEX QA NAME [VAR=value ...] -- gear eval options
  local dataset=$1 index=$2 qa=$3 name=$4; shift 4
  local vars=()
  while [[ $1 != "--" ]]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$OUT/$dataset/$name"
  env GEAR_LLM=replay GEAR_LLM_CACHE_DIR=assets/llm_cache "${vars[@]}" $GEAR eval "$index" "$qa" "$@" \
    --traces "$OUT/$dataset/$name" --json "$OUT/$dataset/$name.report.json" >/dev/null
  echo "$dataset/$name: $(ls "$OUT/$dataset/$name" | wc -l) traces"
}
demo_index musique; demo_index hotpotqa; demo_index 2wiki
M=(musique data/indexes/musique assets/musique/musique_dev50.json)
H=(hotpotqa data/indexes/hotpotqa assets/hotpotqa/hotpotqa_train100.json)
W=(2wiki data/indexes/2wiki assets/2wikimultihopqa/2wikimultihopqa_dev82.json)
replay "${M[@]}" gear_paper -- -r hybrid -m gear --prompts paper --every 2 --limit 20 --k 5,10,15
replay "${M[@]}" sync -- -r hybrid -m sync --prompts paper --every 2 --limit 20 --k 15
replay "${M[@]}" ircot_ppr GEAR_IRCOT_RETRIEVER=ppr -- -r hybrid -m ircot --prompts paper --every 2 --limit 20 --k 5,10,15
for d in H W; do
  declare -n set=$d
  replay "${set[@]}" gear_paper -- -r hybrid -m gear --prompts paper --max-iterations 2 --k 2,5,10,15
  replay "${set[@]}" sync -- -r hybrid -m sync --prompts paper --k 15
  replay "${set[@]}" ircot_ppr GEAR_IRCOT_RETRIEVER=ppr GEAR_IRCOT_MAX_STEPS=2 -- -r hybrid -m ircot --prompts paper \
    --k 2,5,10,15
done
